"""libdevice's correctly rounded functions beyond the four operations (``libdevice.py`` has those):
fma in each rounding mode, the rounding conversions between floats and integers, ``rsqrt_rn``,
and the integer and bit helpers (``mul24``, ``sad``, ``hadd``, ``hiloint2double``...). Each result
is the nearest one, moved a step by :func:`directed` where the exact residual's sign says it lies
on the wrong side; exactness comes from float64 (f32 products, integer comparisons) or Python
fractions (f64 fma)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
import numpy as np

from tile_lang.dtypes import U32, U64, DType
from tile_lang.ops.conversions import Conversion

from tile_lang_numpy.elementwise import saturated
from tile_lang_numpy.values import Array

_F32, _F64 = np.float32, np.float64
MODE = {"rn": None, "rz": 0, "rd": -1, "ru": 1}  # a rounding suffix as :func:`directed`'s mode (None: nearest)
WHOLE: dict[str, Callable[[Array], Array]] = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def directed(q: Array, excess: Array, mode: int) -> Array:
    """``q`` (the nearest result) moved one step down (``mode`` -1), up (+1) or toward zero (0)
    when ``excess`` (the sign of ``q`` less the exact value) says it lies past the exact value."""
    down = np.where(excess > 0, np.nextafter(q, -np.inf), q)
    up = np.where(excess < 0, np.nextafter(q, np.inf), q)
    if mode:
        return down if mode < 0 else up
    return np.where(q > 0, down, np.where(q < 0, up, q))


def _sign(a: Array) -> Array:
    out: Array = (a > 0).astype(np.int8) - (a < 0).astype(np.int8)
    return out


# ---------------------------------------------------------------- conversions


def to_float(conversion: Conversion) -> Callable[[Array], Array]:
    """An integer or f64 converted to the float ``conversion.result``: NumPy's conversion (one
    rounding, to nearest), then moved per the mode, the exact comparison made in float64 (an f64
    source) or among integers (a float result at or past 2**63 / 2**64 is above any source)."""
    target, mode = conversion.result.numpy.type, MODE[conversion.mode]

    def convert(x: Array) -> Array:
        q = x.astype(target)
        if mode is None:
            return q
        if x.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                return directed(q, _sign(q.astype(_F64) - x), mode)
        wide = np.uint64 if x.dtype.kind == "u" else np.int64
        big = q.astype(_F64) >= (2.0**64 if x.dtype.kind == "u" else 2.0**63)
        whole = np.where(big, 0, q).astype(wide)  # q is a whole number: x is one, and q is x rounded
        exact = x.astype(wide)
        above = (whole > exact).astype(np.int8) - (whole < exact).astype(np.int8)
        return directed(q, np.where(big, 1, above), mode)
    return convert


def to_int(conversion: Conversion) -> Callable[[Array], Array]:
    """A float rounded to a whole number per the mode (exact in its own dtype), then saturated to
    the integer range (unsigned: [0, 2**bits - 1]) as the GPU's ``cvt`` does; an unsigned value is
    returned as Triton's signed result of its width (its bits). NaN gives what the H100 gives: 0
    from f32 to 32 bits, else the sign bit alone (``__double2int_rz``, ``__float2ll_rn``: INT_MIN)."""
    result = conversion.result
    unsigned = {32: U32, 64: U64}[result.bits] if conversion.unsigned else result
    nan_bits = 0 if conversion.source.bits == 32 and result.bits == 32 else np.iinfo(result.numpy).min

    def convert(x: Array) -> Array:
        out: Array = saturated(WHOLE[conversion.mode](x), unsigned).view(result.numpy)
        return np.where(np.isnan(x), result.numpy.type(nan_bits), out) if nan_bits else out
    return convert


def nearest_int(rounding: Callable[[Array], Array], result: DType) -> Callable[[Array], Array]:
    """``llrint``, ``llround`` and ``float2int_rn``: ``rounding`` to a whole number, saturated to
    ``result`` as libdevice's ``cvt.rni`` (and llroundf's own range tests) do; NaN as :func:`to_int`
    has it (0 from f32 to 32 bits, else the sign bit alone: llroundf tests for NaN and returns
    INT64_MIN)."""
    def convert(x: Array) -> Array:
        out = saturated(rounding(x), result)
        if x.dtype.itemsize == 4 and result.bits == 32:
            return out
        return np.where(np.isnan(x), result.numpy.type(np.iinfo(result.numpy).min), out)
    return convert


# ---------------------------------------------------------------- fma


def fma(mode: str) -> Callable[[Array, Array, Array], Array]:
    """``x * y + z`` rounded once in ``mode``: for f32 the product is exact in float64 and the
    sum's error exact by TwoSum; for f64 the exact value is a Python fraction. An exact zero is
    -0 rounding down unless the product and ``z`` are both +0, +0 otherwise unless both are -0."""
    direction = MODE[mode]

    def rounded(x: Array, y: Array, z: Array) -> Array:
        with np.errstate(all="ignore"):
            if x.dtype == _F32:
                q, excess, product = _fma32(x, y, z)
            else:
                q, excess, product = _fma64(x, y, z)
        out = q if direction is None else directed(q, excess, direction)
        zero = (out == 0) & np.isfinite(product) & (excess == 0)
        positive = (product == 0) & ~np.signbit(product) & (z == 0) & ~np.signbit(z)
        negative = (product == 0) & np.signbit(product) & (z == 0) & np.signbit(z)
        signed = np.where(negative | (~positive & (mode == "rd")), -0.0, 0.0).astype(out.dtype)
        return np.where(zero, signed, out)
    return rounded


_F32_MAX = float(np.finfo(_F32).max)
_F32_OVERFLOW = _F32_MAX + 2.0**103  # halfway from the largest f32 to 2**128


def _fma32(x: Array, y: Array, z: Array) -> tuple[Array, Array, Array]:
    """The nearest f32 of ``x * y + z``, the sign of it less the exact value, and the product (f64)."""
    p = x.astype(_F64) * y.astype(_F64)  # exact: 24 + 24 bits
    w = z.astype(_F64)
    s = p + w
    back = s - p
    err = (p - (s - back)) + (w - back)  # p + w - s, exactly (TwoSum)
    finite = np.isfinite(s) & np.isfinite(err)
    err = np.where(finite, err, 0.0)
    q = s.astype(_F32)
    # s halfway between two f32s with a nonzero error: the nearest is the neighbour on its side
    toward = np.nextafter(q, np.where(err > 0, np.inf, -np.inf).astype(_F32))
    halfway = (q.astype(_F64) + toward.astype(_F64)) / 2 == s
    q = np.where(halfway & (err != 0), toward, q)
    q = np.where((np.abs(s) == _F32_OVERFLOW) & (err * s < 0), np.copysign(_F32_MAX, s), q).astype(_F32)
    excess = np.where(finite, _sign((q.astype(_F64) - s) - err), 0)  # q - s exact (Sterbenz), or 0
    return q, excess, p


def _fma64_each(a: float, b: float, c: float) -> tuple[float, int]:
    """The nearest f64 of ``a * b + c`` (finite operands) and the sign of it less the exact value."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        q = float(exact)  # correctly rounded: Python's integer division
    except OverflowError:
        q = float("inf") if exact > 0 else float("-inf")
    if q in (float("inf"), float("-inf")):
        return q, 1 if q > 0 else -1
    difference = Fraction(q) - exact
    return q, (difference > 0) - (difference < 0)


_FMA64: Callable[[Array, Array, Array], tuple[Array, Array]] = np.frompyfunc(_fma64_each, 3, 2)


def _fma64(x: Array, y: Array, z: Array) -> tuple[Array, Array, Array]:
    shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    x, y, z = np.broadcast_to(x, shape), np.broadcast_to(y, shape), np.broadcast_to(z, shape)
    finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    plain = x * y + z  # the IEEE result where an operand is infinite or NaN
    nearest, excess = _FMA64(np.where(finite, x, 0.0), np.where(finite, y, 0.0), np.where(finite, z, 0.0))
    q = np.where(finite, np.asarray(nearest, _F64), plain)
    return q, np.where(finite, np.asarray(excess, np.int8), 0), x * y


# ---------------------------------------------------------------- the rest


def rsqrt_rn(x: Array) -> Array:
    """``1 / sqrt(x)`` of an f32 rounded to nearest: float64's, rounded; where it lies within a few
    f64 ulps of a halfway point between f32s, the side is settled exactly (``m*m*x < 1``)."""
    with np.errstate(all="ignore"):
        r = 1.0 / np.sqrt(x.astype(_F64))
        q = r.astype(_F32)
        up, down = np.nextafter(q, np.float32(np.inf)), np.nextafter(q, np.float32(0))
        mids = [(q.astype(_F64) + n.astype(_F64)) / 2 for n in (up, down)]
        close = np.isfinite(r) & (r > 0) & np.any([np.abs(r - m) <= 8 * np.spacing(r) for m in mids], axis=0)
    out = q.copy()
    for i in np.flatnonzero(close):
        value, hi, lo = Fraction(float(x.flat[i])), Fraction(float(mids[0].flat[i])), Fraction(float(mids[1].flat[i]))
        if hi * hi * value < 1:  # the exact value lies above the upper midpoint
            out.flat[i] = up.flat[i]
        elif lo * lo * value > 1:
            out.flat[i] = down.flat[i]
    return out


def rcp64h(x: Array) -> Array:
    """``rcp.approx.ftz.f64``'s reciprocal: of ``x`` with its low 32 bits cleared, the result's low
    32 bits cleared (here by truncating the rounded reciprocal: within 2**-20 of the GPU's
    approximation), subnormal inputs and results flushed to zero of their sign."""
    high = np.uint64(0xFFFFFFFF00000000)
    exponent = np.uint64(0x7FF0000000000000)
    bits = x.astype(_F64).view(np.uint64) & high
    sign = np.uint64(1 << 63)
    bits = np.where((bits & exponent) == 0, bits & sign, bits)
    with np.errstate(all="ignore"):
        r = (1.0 / bits.view(_F64)).view(np.uint64) & high
    r = np.where(((r & exponent) == 0) & ((r & ~sign) != 0), r & sign, r)
    out: Array = r.view(_F64)
    return out


def hiloint2double(hi: Array, lo: Array) -> Array:
    bits = (hi.view(np.uint32).astype(np.uint64) << np.uint64(32)) | lo.view(np.uint32).astype(np.uint64)
    out: Array = bits.view(_F64)
    return out


def double_word(high: bool) -> Callable[[Array], Array]:
    """The high or low 32 bits of an f64, as an i32."""
    shift = np.uint64(32 if high else 0)
    return lambda x: ((x.view(np.uint64) >> shift) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)


def _low24(x: Array) -> Array:
    """The low 24 bits of ``x``, as a signed 24-bit value for i32 (from bit 23), unsigned for u32."""
    low = x.view(np.uint32).astype(np.int64) & 0xFFFFFF
    return (low ^ 0x800000) - 0x800000 if x.dtype.kind == "i" else low


def _wrapped(value: Array, like: Array) -> Array:
    """An int64 value's low 32 bits, as ``like``'s dtype (i32 or u32)."""
    return (value & 0xFFFFFFFF).astype(np.uint32).view(like.dtype)


def mul24(x: Array, y: Array) -> Array:
    return _wrapped(_low24(x) * _low24(y), x)


def sad(x: Array, y: Array, z: Array) -> Array:
    return _wrapped(np.abs(x.astype(np.int64) - y.astype(np.int64)) + z.astype(np.int64), x)


def halving(rounded_up: bool) -> Callable[[Array, Array], Array]:
    """``hadd`` (``(x + y) >> 1``) or ``rhadd`` (``(x + y + 1) >> 1``), the sum in 64 bits."""
    return lambda x, y: _wrapped((x.astype(np.int64) + y.astype(np.int64) + int(rounded_up)) >> 1, x)

