"""Triton's ``tl.math`` namespace: ``tl.math.exp2`` is ``tl.exp2``, and
``from tile_lang.math import tanh`` imports the one builtin (ported from ``triton.language.math``)."""

from __future__ import annotations

from tile_lang.ops.math import (
    abs, acos, acosh, asin, asinh, atan, atanh, cdiv, ceil, clamp, cos, cosh, div_rn, erf, erfc, exp, exp2,
    expm1, fdiv, floor, fma, log, log1p, log2, log10, maximum, minimum, rint, rsqrt, sigmoid, sin, sinh, sqrt,
    sqrt_rn, tan, tanh, trunc, umulhi,
)
from tile_lang.unsupported import missing

__all__ = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cdiv", "ceil", "clamp", "cos", "cosh", "div_rn",
    "erf", "erfc", "exp", "exp2", "expm1", "fdiv", "floor", "fma", "log", "log1p", "log2", "log10", "maximum",
    "minimum", "rint", "rsqrt", "sigmoid", "sin", "sinh", "sqrt", "sqrt_rn", "tan", "tanh", "trunc", "umulhi",
]

# libdevice functions of Triton's tl.math / tl.extra.libdevice that tile_lang does not define yet
LIBDEVICE = frozenset({
    "pow", "atan2", "fmod", "isnan", "isinf", "isfinite", "signbit", "round", "nearbyint", "exp10", "cbrt",
    "hypot", "copysign", "nextafter", "ldexp", "frexp", "fmin", "fmax", "fdim", "ilogb", "logb", "lgamma",
    "tgamma", "erfinv", "erfcinv", "rcbrt", "saturatef", "fast_expf", "fast_logf", "fast_dividef", "div_rz",
    "div_rd", "div_ru", "rcp_rn", "sqrt_rz", "sqrt_rd", "sqrt_ru", "remainder", "sincos", "sinpi", "cospi",
    "j0", "j1", "y0", "y1", "norm3d", "rhypot", "popc", "clz", "ffs", "brev", "mulhi", "byte_perm", "float2int_rn",
})


def __getattr__(name: str) -> object:
    raise missing("tl.math", name, LIBDEVICE)
