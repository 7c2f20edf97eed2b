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
    fma_rn, fma_rz, fma_rd, fma_ru, rsqrt_rn, rcp64h, hiloint2double, double2loint, double2hiint, mul24, sad,
    hadd, rhadd, llrint, llround, jn, yn, cyl_bessel_i0, cyl_bessel_i1, erfcx, normcdf, normcdfinv,
)
from tile_lang.ops.conversions import (
    double2float_rn, double2float_rz, double2float_rd, double2float_ru, double2int_rn, double2int_rz,
    double2int_rd, double2int_ru, double2uint_rn, double2uint_rz, double2uint_rd, double2uint_ru,
    int2double_rn, uint2double_rn, float2int_rz, float2int_rd, float2int_ru, float2uint_rn, float2uint_rz,
    float2uint_rd, float2uint_ru, int2float_rn, int2float_rz, int2float_rd, int2float_ru, uint2float_rn,
    uint2float_rz, uint2float_rd, uint2float_ru, float2ll_rn, float2ll_rz, float2ll_rd, float2ll_ru,
    float2ull_rn, float2ull_rz, float2ull_rd, float2ull_ru, double2ll_rn, double2ll_rz, double2ll_rd,
    double2ll_ru, double2ull_rn, double2ull_rz, double2ull_rd, double2ull_ru, ll2float_rn, ll2float_rz,
    ll2float_rd, ll2float_ru, ull2float_rn, ull2float_rz, ull2float_rd, ull2float_ru, ll2double_rn,
    ll2double_rz, ll2double_rd, ll2double_ru, ull2double_rn, ull2double_rz, ull2double_rd, ull2double_ru,
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
    "fma_rn", "fma_rz", "fma_rd", "fma_ru", "rsqrt_rn", "rcp64h", "hiloint2double", "double2loint",
    "double2hiint", "mul24", "sad", "hadd", "rhadd", "llrint", "llround", "jn", "yn", "cyl_bessel_i0",
    "cyl_bessel_i1", "erfcx", "normcdf", "normcdfinv", "double2float_rn", "double2float_rz", "double2float_rd",
    "double2float_ru", "double2int_rn", "double2int_rz", "double2int_rd", "double2int_ru", "double2uint_rn",
    "double2uint_rz", "double2uint_rd", "double2uint_ru", "int2double_rn", "uint2double_rn", "float2int_rz",
    "float2int_rd", "float2int_ru", "float2uint_rn", "float2uint_rz", "float2uint_rd", "float2uint_ru",
    "int2float_rn", "int2float_rz", "int2float_rd", "int2float_ru", "uint2float_rn", "uint2float_rz",
    "uint2float_rd", "uint2float_ru", "float2ll_rn", "float2ll_rz", "float2ll_rd", "float2ll_ru",
    "float2ull_rn", "float2ull_rz", "float2ull_rd", "float2ull_ru", "double2ll_rn", "double2ll_rz",
    "double2ll_rd", "double2ll_ru", "double2ull_rn", "double2ull_rz", "double2ull_rd", "double2ull_ru",
    "ll2float_rn", "ll2float_rz", "ll2float_rd", "ll2float_ru", "ull2float_rn", "ull2float_rz", "ull2float_rd",
    "ull2float_ru", "ll2double_rn", "ll2double_rz", "ll2double_rd", "ll2double_ru", "ull2double_rn",
    "ull2double_rz", "ull2double_rd", "ull2double_ru",
]


def __getattr__(name: str) -> object:
    raise missing("tl.math", name, frozenset())  # every libdevice function is defined
