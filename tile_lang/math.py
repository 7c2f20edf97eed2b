"""Triton's ``tl.math`` namespace: ``tl.math.exp2`` is ``tl.exp2``, and
``from tile_lang.math import tanh`` imports the one builtin (ported from ``triton.language.math``)."""

from __future__ import annotations

from tile_lang.ops.math import (
    abs, acos, acosh, asin, asinh, atan, atanh, cdiv, ceil, clamp, cos, cosh, div_rn, erf, erfc, exp, exp2,
    expm1, fdiv, floor, fma, log, log1p, log2, log10, maximum, minimum, rint, rsqrt, sigmoid, sin, sinh, sqrt,
    sqrt_rn, tan, tanh, trunc, umulhi,
)
from tile_lang.ops.libdevice import (
    add_rn, add_rz, add_rd, add_ru, sub_rn, sub_rz, sub_rd, sub_ru, mul_rn, mul_rz, mul_rd, mul_ru,
    atan2, brev, byte_perm, cbrt, clz, copysign, cospi, div_rd, div_ru, div_rz, erfcinv, erfinv, exp10,
    fast_cosf, fast_dividef, fast_exp10f, fast_expf, fast_log2f, fast_log10f, fast_logf, fast_powf,
    fast_sinf, fast_tanf, norm4d, rnorm3d, rnorm4d, int_as_float, float_as_int, uint_as_float, float_as_uint, longlong_as_double, double_as_longlong, fdim, ffs, finitef, isfinited, rcp_rd, rcp_ru, rcp_rz, scalbn, float2int_rn, fmax, fmin, fmod, hypot, ilogb, isfinite, isinf,
    isnan, j0, j1, ldexp, lgamma, logb, mulhi, nearbyint, nextafter, norm3d, popc, pow, rcbrt, rcp_rn, remainder,
    rhypot, round, saturatef, signbit, sinpi, sqrt_rd, sqrt_ru, sqrt_rz, tgamma, y0, y1,
)
from tile_lang.unsupported import missing

__all__ = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cdiv", "ceil", "clamp", "cos", "cosh", "div_rn",
    "erf", "erfc", "exp", "exp2", "expm1", "fdiv", "floor", "fma", "log", "log1p", "log2", "log10", "maximum",
    "minimum", "rint", "rsqrt", "sigmoid", "sin", "sinh", "sqrt", "sqrt_rn", "tan", "tanh", "trunc", "umulhi",
    "add_rn", "add_rz", "add_rd", "add_ru", "sub_rn", "sub_rz", "sub_rd", "sub_ru", "mul_rn", "mul_rz", "mul_rd", "mul_ru",
    "atan2", "brev", "byte_perm", "cbrt", "clz", "copysign", "cospi", "div_rd", "div_ru", "div_rz", "erfcinv",
    "erfinv", "exp10", "fast_cosf", "fast_dividef", "fast_exp10f", "fast_expf", "fast_log2f", "fast_log10f",
    "fast_logf", "fast_powf", "fast_sinf", "fast_tanf", "norm4d", "rnorm3d", "rnorm4d", "int_as_float", "float_as_int", "uint_as_float", "float_as_uint", "longlong_as_double", "double_as_longlong", "fdim", "ffs", "finitef", "isfinited", "rcp_rd", "rcp_ru", "rcp_rz", "scalbn", "float2int_rn", "fmax", "fmin",
    "fmod", "hypot", "ilogb", "isfinite", "isinf", "isnan", "j0", "j1", "ldexp", "lgamma", "logb", "mulhi",
    "nearbyint", "nextafter", "norm3d", "popc", "pow", "rcbrt", "rcp_rn", "remainder", "rhypot", "round",
    "saturatef", "signbit", "sinpi", "sqrt_rd", "sqrt_ru", "sqrt_rz", "tgamma", "y0", "y1",
]

# Triton's libdevice functions (triton.language.extra.cuda.libdevice) that tile_lang does not define yet:
# fma's roundings, the rounding conversions, and a few more
_ROUNDED = ("fma",)
_CONVERSIONS = ("double2float", "double2int", "double2uint", "float2int", "float2uint", "int2float", "uint2float",
                "float2ll", "float2ull", "double2ll", "double2ull", "ll2float", "ull2float", "ll2double", "ull2double")
LIBDEVICE = frozenset({
    *(f"{op}_{mode}" for op in _ROUNDED for mode in ("rn", "rz", "rd", "ru")),
    *(f"{conv}_{mode}" for conv in _CONVERSIONS for mode in ("rn", "rz", "rd", "ru")),
    "rsqrt_rn", "int2double_rn", "uint2double_rn", "hiloint2double", "double2loint",
    "double2hiint", "mul24", "sad", "hadd", "rhadd", "rcp64h", "llrint", "llround",
    "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1", "erfcx", "normcdf", "normcdfinv",
} - {"float2int_rn"})


def __getattr__(name: str) -> object:
    raise missing("tl.math", name, LIBDEVICE)
