"""Triton's ``tl.float8e4b15``, which NumPy (and ml_dtypes) has no type for: its arrays hold the
8-bit codes, and these convert them. The format is Triton's: a sign, 4 exponent bits of bias 15
and 3 mantissa bits, subnormals below 2**-14, no infinity, NaN at 0x7F and 0xFF, so the largest
finite value is 1.75 (0x7E)."""

from __future__ import annotations

from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

MAX_E4B15 = 1.75
NAN_E4B15 = 0x7F


def _magnitudes() -> Array:
    """The value of each code 0..0x7F with the sign bit clear, from its fields (0x7F: NaN)."""
    codes = np.arange(128)
    exponent, mantissa = codes >> 3, codes & 7
    normal = np.ldexp(1.0 + mantissa / 8.0, exponent - 15)
    subnormal = np.ldexp(mantissa / 8.0, -14)
    out = np.where(exponent == 0, subnormal, normal)
    out[NAN_E4B15] = np.nan
    return out


_POSITIVE = _magnitudes()
_FINITE = _POSITIVE[:NAN_E4B15]  # increasing: 0, the subnormals, ..., 1.75
_TABLE = np.concatenate([_POSITIVE, -_POSITIVE]).astype(np.float32)  # code -> value; 0x80 is -0.0
_TABLE.flags.writeable = False


def decode_e4b15(codes: Array) -> Array:
    """The float32 values of e4b15 codes (any unsigned 8-bit array; exact: each value fits f32)."""
    out: Array = _TABLE[np.asarray(codes, dtype=np.uint8)]
    return out


def encode_e4b15(values: Array, to_zero: bool = False) -> Array:
    """The e4b15 codes of float values: rounded to nearest, ties to the even code (toward zero
    with ``to_zero``), saturating beyond 1.75 (infinities too) as fp8 conversions do; NaN stays
    NaN (0x7F, its sign kept)."""
    x = np.asarray(values).astype(np.float64)  # every float dtype converts exactly
    magnitude = np.minimum(np.abs(x), MAX_E4B15)
    hi = np.minimum(np.searchsorted(_FINITE, magnitude), len(_FINITE) - 1)  # the first value >= it
    lo = np.maximum(hi - 1, 0)
    below, above = magnitude - _FINITE[lo], _FINITE[hi] - magnitude  # exact (Sterbenz: neighbours)
    if to_zero:
        up = above == 0
    else:
        up = (above < below) | ((above == below) & (hi % 2 == 0))
    code = np.where(up, hi, lo)
    code = np.where(np.isnan(x), NAN_E4B15, code)
    out: Array = (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)
    return out
