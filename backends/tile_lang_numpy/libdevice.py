"""The LIBDEVICE family (``libdevice.pow``, ``libdevice.j0``, ``libdevice.popc``...): each
function's NumPy evaluation on operands of the dtypes the shared rule chose, the result rounded
once to the rule's result dtype. Float functions are computed in float64 and rounded (correctly
rounded but for rare double roundings), or exactly in the operands' dtype where an exact answer is
cheap (fmod, remainder, nextafter, round...); the directed roundings are the nearest result moved
one step where the exact residual says it lies on the wrong side (:mod:`rounding` has fma, the
rounding conversions and the integer helpers)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from tile_lang.dtypes import I32, I64, DType
from tile_lang.ops import libdevice as ld
from tile_lang.ops.conversions import CONVERSIONS
from tile_lang.tensor import Tensor

from tile_lang_numpy import rounding, special, values
from tile_lang_numpy.rounding import directed
from tile_lang_numpy.elementwise import convert, gpu_extremum, high_product
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array

_F64 = np.float64


def _wide(fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn`` of the operands in float64 (the caller rounds the result once)."""
    return lambda *xs: fn(*(x.astype(_F64) for x in xs))


def _remainder(x: Array, y: Array) -> Array:
    """IEEE remainder, exactly: ``x mod 2y`` (exact, the quotient's parity kept), then at most two
    exact subtractions of ``|y|`` (Sterbenz) bring it to [-|y|/2, |y|/2], a tie to an even quotient."""
    r = np.fmod(x, 2 * y)  # 2y overflowing to inf leaves x, already below 2|y|
    a, b = np.abs(r), np.abs(y)
    odd = a >= b
    a = np.where(odd, a - b, a)
    half = np.where(b > 1, a > b * 0.5, 2 * a > b)  # no overflow, no lost bit
    tie = np.where(b > 1, a == b * 0.5, 2 * a == b)
    a = np.where(half | (tie & odd), a - b, a)
    out: Array = np.where(np.signbit(r), -a, a)
    return out


def _fdim(x: Array, y: Array) -> Array:
    out: Array = np.where(x > y, x - y, np.zeros_like(x))
    return np.where(np.isnan(x) | np.isnan(y), np.nan, out).astype(x.dtype)


def _round(x: Array) -> Array:
    """Half away from zero: the truncation, plus one where the (exact) fraction is at least a half."""
    t = np.trunc(x)
    out: Array = np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(x), x), t)
    return out


def _ilogb(x: Array) -> Array:
    """The binary exponent (frexp's less one); INT_MIN at 0 and NaN, INT_MAX at inf (CUDA's and C's)."""
    _, e = np.frexp(x)
    out = np.where(x == 0, np.iinfo(np.int32).min, e.astype(np.int64) - 1)
    out = np.where(np.isnan(x), np.iinfo(np.int32).min, np.where(np.isinf(x), np.iinfo(np.int32).max, out))
    return out.astype(np.int32)


def _logb(x: Array) -> Array:
    out = np.where(x == 0, -np.inf, _ilogb(x).astype(_F64))
    return np.where(np.isnan(x) | np.isinf(x), np.abs(x.astype(_F64)), out)


def _pi_turns(x: Array, cosine: bool) -> Array:
    """sin(pi x) or cos(pi x): ``x mod 2`` exactly, less the nearest quarter turn ``k/2`` (exact),
    so the angle given to float64's sin and cos is at most pi/4; exact zeros carry C's signs
    (sinpi(n) is ±0 with n's sign, cospi(n + 1/2) is +0)."""
    x = x.astype(_F64)
    r = np.fmod(x, 2.0)
    k = np.rint(2 * r)
    f = np.pi * (r - k / 2)
    quarter = (k.astype(np.int64) + (1 if cosine else 0)) % 4  # cos(t) = sin(t + pi/2)
    out = np.select([quarter == 0, quarter == 1, quarter == 2], [np.sin(f), np.cos(f), -np.sin(f)], -np.cos(f))
    zero = out == 0
    return np.where(zero, 0.0 if cosine else np.copysign(0.0, x), out)


def _excess(product: Array, a: Array, b: Array, c: Array) -> Array:
    """The sign of ``a*b - c`` computed exactly (``product`` is ``a*b`` rounded): float64 holds an
    f32 product exactly; f64 operands take Python fractions."""
    if a.dtype == np.float32:
        exact = a.astype(_F64) * b.astype(_F64) - c.astype(_F64)
        return np.sign(exact)
    sign = np.frompyfunc(lambda p, q, r: (Fraction(p) * Fraction(q) > Fraction(r)) - (Fraction(p) * Fraction(q) < Fraction(r)), 3, 1)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    safe = [np.where(finite, v, 0.0) for v in (a, b, c)]
    signs = np.asarray(sign(*safe), dtype=_F64)
    out: Array = np.where(finite, signs, np.sign(product - c))
    return out


def _divide(mode: int) -> Callable[[Array, Array], Array]:
    def divide(x: Array, y: Array) -> Array:
        with np.errstate(all="ignore"):
            q = x / y
            exact = np.isfinite(x) & np.isfinite(y) & (y != 0) & ~np.isnan(q)
            qs = np.where(np.isfinite(q), q, 0)
            excess = np.where(np.isinf(q), np.sign(q), _excess(qs * y, qs, y, x) * np.sign(y))
        return directed(q, np.where(exact, excess, 0), mode)
    return divide


def _arith(op: Any, mode: int) -> Callable[[Array, Array], Array]:
    """``x op y`` (add, subtract or multiply) rounded in the direction ``mode``: the nearest result,
    its exact error from TwoSum (a sum's) or from the exact product, then :func:`_directed`. An
    exact zero sum is -0 when rounding down, unless both operands are +0 (IEEE 754)."""
    def rounded(x: Array, y: Array) -> Array:
        with np.errstate(all="ignore"):
            q = op(x, y)
            exact = np.isfinite(x) & np.isfinite(y) & np.isfinite(q)
            qs = np.where(exact, q, 0)
            if op is np.multiply:
                excess = -_excess(qs, x, y, qs)
            else:
                other = y if op is np.add else -y
                back = qs - x
                excess = -np.sign((x - (qs - back)) + (other - back))  # the sum less q, exactly (TwoSum)
            excess = np.where(np.isinf(q) & np.isfinite(x) & np.isfinite(y), np.sign(q), excess)
            out = directed(q, np.where(exact | np.isinf(q), excess, 0), mode)
        if op is np.multiply or mode >= 0:
            return out
        other = y if op is np.add else -y
        both_positive_zeros = (x == 0) & (other == 0) & ~np.signbit(x) & ~np.signbit(other)
        return np.where((out == 0) & ~both_positive_zeros, -np.zeros_like(out), out)
    return rounded


def _fast_divide(x: Array, y: Array) -> Array:
    """``__fdividef``: ``x / y``, but 0 (NaN for an infinite ``x``) for ``2**126 < |y| < 2**128``,
    as the CUDA Math API documents: div.approx multiplies by a reciprocal that flushes to zero there."""
    out: Array = np.where(np.abs(y) > 2.0**126, x * np.copysign(np.float32(0), y), x / y)
    return out


def _reciprocal(mode: int) -> Callable[[Array], Array]:
    """``1 / x`` rounded in the direction ``mode``, as :func:`_divide`."""
    divide = _divide(mode)
    return lambda x: divide(np.ones_like(x), x)


def _square_root(mode: int) -> Callable[[Array], Array]:
    def square_root(x: Array) -> Array:
        with np.errstate(all="ignore"):
            q = np.sqrt(x)
            exact = np.isfinite(q) & (q != 0)
            qs = np.where(exact, q, 0)
            excess = _excess(qs * qs, qs, qs, np.where(exact, x, 0))
        return directed(q, np.where(exact, excess, 0), mode)
    return square_root


def _bits_as(dtype: Any) -> Callable[[Array], Array]:
    """The operand's bits seen as ``dtype`` (of its width)."""
    return lambda x: np.ascontiguousarray(x).view(dtype)


def _unsigned(x: Array) -> Array:
    return x.view(np.uint64 if x.dtype.itemsize == 8 else np.uint32)


def _bit_length(u: Array) -> Array:
    """The number of bits below and including the highest set one, by halving (exact for 64 bits)."""
    n = np.zeros(u.shape, np.int32)
    for shift in (32, 16, 8, 4, 2, 1):
        if shift < 8 * u.dtype.itemsize:
            big = u >= (u.dtype.type(1) << u.dtype.type(shift))
            u = np.where(big, u >> u.dtype.type(shift), u)
            n = n + np.where(big, shift, 0).astype(np.int32)
    length: Array = n + (u != 0)
    return length


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def _popc(x: Array) -> Array:
    """Set bits per element, by a table of the 256 bytes' counts (``np.bitwise_count`` is NumPy 2's)."""
    u = np.ascontiguousarray(_unsigned(x))
    counts: Array = _BYTE_BITS[u.reshape(-1).view(np.uint8)].reshape(*u.shape, u.dtype.itemsize).sum(-1, dtype=np.uint8)
    return counts


def _clz(x: Array) -> Array:
    zeros: Array = (8 * x.dtype.itemsize - _bit_length(_unsigned(x))).astype(np.int32)
    return zeros


def _ffs(x: Array) -> Array:
    u = _unsigned(x)
    return np.where(u == 0, 0, _bit_length(u & (~u + u.dtype.type(1)))).astype(np.int32)


_REVERSED = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _brev(x: Array) -> Array:
    """Each byte's bits reversed, the bytes in reverse order (little-endian views)."""
    b = np.ascontiguousarray(x).view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))
    return np.ascontiguousarray(_REVERSED[b][..., ::-1]).view(x.dtype).reshape(x.shape)


def _byte_perm(x: Array, y: Array, s: Array) -> Array:
    both = _unsigned(x).astype(np.uint64) | (_unsigned(y).astype(np.uint64) << np.uint64(32))
    sel = _unsigned(s).astype(np.uint64)
    out = np.zeros(np.broadcast_shapes(x.shape, y.shape, s.shape), np.uint64)
    for i in range(4):
        byte = (both >> (np.uint64(8) * ((sel >> np.uint64(4 * i)) & np.uint64(7)))) & np.uint64(0xFF)
        out |= byte << np.uint64(8 * i)
    return out.astype(np.uint32).view(np.int32)


# The LIBDEVICE family: each function's evaluation (operands in the rule's dtypes, in parameter order).
LIBDEVICE: dict[Callable[..., Any], Callable[..., Array]] = {
    ld.pow: _wide(np.power), ld.ldexp: np.ldexp, ld.norm3d: _wide(lambda x, y, z: np.hypot(np.hypot(x, y), z)),
    ld.isinf: np.isinf, ld.isnan: np.isnan, ld.isfinite: np.isfinite, ld.signbit: np.signbit, ld.ilogb: _ilogb,
    ld.saturatef: lambda x: np.where(x > 0, np.minimum(x, 1), 0), ld.fast_expf: _wide(np.exp),
    ld.fast_logf: _wide(np.log), ld.fast_dividef: _fast_divide, ld.float2int_rn: rounding.nearest_int(np.rint, I32),
    ld.popc: _popc, ld.clz: _clz, ld.ffs: _ffs, ld.brev: _brev,
    ld.mulhi: high_product, ld.byte_perm: _byte_perm,
    ld.cbrt: _wide(np.cbrt),
    ld.rcbrt: _wide(lambda x: 1 / np.cbrt(x.astype(np.longdouble))),  # in f64 its two roundings passed 1 ulp
    ld.exp10: _wide(lambda x: np.power(10.0, x)),
    ld.lgamma: special.lgamma, ld.tgamma: special.tgamma, ld.erfinv: _wide(special.erfinv),
    ld.erfcinv: _wide(special.erfcinv), ld.j0: _wide(lambda x: special.bessel(x, 0, False)),
    ld.j1: _wide(lambda x: special.bessel(x, 1, False)), ld.y0: _wide(lambda x: special.bessel(x, 0, True)),
    ld.y1: _wide(lambda x: special.bessel(x, 1, True)), ld.logb: _logb, ld.nearbyint: np.rint, ld.round: _round,
    ld.cospi: lambda x: _pi_turns(x, True), ld.sinpi: lambda x: _pi_turns(x, False),
    ld.rcp_rn: np.reciprocal, ld.rcp_rd: _reciprocal(-1), ld.rcp_ru: _reciprocal(1), ld.rcp_rz: _reciprocal(0),
    ld.scalbn: np.ldexp, ld.finitef: np.isfinite, ld.isfinited: np.isfinite,
    ld.rnorm3d: _wide(lambda x, y, z: 1 / np.hypot(np.hypot(x, y), z)),
    ld.norm4d: _wide(lambda x, y, z, t: np.hypot(np.hypot(np.hypot(x, y), z), t)),
    ld.rnorm4d: _wide(lambda x, y, z, t: 1 / np.hypot(np.hypot(np.hypot(x, y), z), t)),
    ld.fast_sinf: _wide(np.sin), ld.fast_cosf: _wide(np.cos), ld.fast_tanf: _wide(np.tan),
    ld.fast_log2f: _wide(np.log2), ld.fast_log10f: _wide(np.log10), ld.fast_exp10f: _wide(lambda x: np.power(10.0, x)),
    ld.fast_powf: _wide(np.power), ld.int_as_float: _bits_as(np.float32), ld.float_as_int: _bits_as(np.int32),
    ld.uint_as_float: _bits_as(np.float32), ld.float_as_uint: _bits_as(np.int32),
    ld.longlong_as_double: _bits_as(np.float64), ld.double_as_longlong: _bits_as(np.int64), ld.sqrt_rd: _square_root(-1), ld.sqrt_ru: _square_root(1),
    ld.sqrt_rz: _square_root(0), ld.atan2: _wide(np.arctan2), ld.hypot: _wide(np.hypot), ld.fmod: np.fmod,
    ld.remainder: _remainder, ld.copysign: np.copysign, ld.nextafter: np.nextafter, ld.fdim: _fdim,
    ld.fmax: lambda x, y: gpu_extremum(x, y, True), ld.fmin: lambda x, y: gpu_extremum(x, y, False),
    ld.rhypot: _wide(lambda x, y: 1 / np.hypot(x, y)), ld.div_rd: _divide(-1), ld.div_ru: _divide(1),
    ld.div_rz: _divide(0), ld.add_rn: np.add, ld.add_rz: _arith(np.add, 0), ld.add_rd: _arith(np.add, -1),
    ld.add_ru: _arith(np.add, 1), ld.sub_rn: np.subtract, ld.sub_rz: _arith(np.subtract, 0),
    ld.sub_rd: _arith(np.subtract, -1), ld.sub_ru: _arith(np.subtract, 1), ld.mul_rn: np.multiply,
    ld.mul_rz: _arith(np.multiply, 0), ld.mul_rd: _arith(np.multiply, -1), ld.mul_ru: _arith(np.multiply, 1),
    ld.fma_rn: rounding.fma("rn"), ld.fma_rz: rounding.fma("rz"), ld.fma_rd: rounding.fma("rd"),
    ld.fma_ru: rounding.fma("ru"), ld.rsqrt_rn: rounding.rsqrt_rn, ld.rcp64h: rounding.rcp64h,
    ld.hiloint2double: rounding.hiloint2double, ld.double2loint: rounding.double_word(False),
    ld.double2hiint: rounding.double_word(True), ld.mul24: rounding.mul24, ld.sad: rounding.sad,
    ld.hadd: rounding.halving(False), ld.rhadd: rounding.halving(True),
    ld.llrint: rounding.nearest_int(np.rint, I64), ld.llround: rounding.nearest_int(_round, I64),
    ld.jn: _wide(special.bessel_jn), ld.yn: _wide(special.bessel_yn),
    ld.cyl_bessel_i0: _wide(lambda x: special.bessel_i(x, 0)), ld.cyl_bessel_i1: _wide(lambda x: special.bessel_i(x, 1)),
    ld.erfcx: _wide(special.erfcx),
    ld.normcdf: _wide(special.normcdf), ld.normcdfinv: _wide(special.normcdfinv),
    **{fn: (rounding.to_int(conversion) if conversion.result.is_int else rounding.to_float(conversion))
       for fn, conversion in CONVERSIONS.items()},
}


def libdevice(evaluate: Callable[..., Array], params: tuple[str, ...]) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    """The implementation of a row of :data:`LIBDEVICE` whose operands are the parameters ``params``."""
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        lifted = [values.lift(a[p]) for p in params]
        shape = values.block_broadcast(*(t.block_shape for t in lifted))
        arrays = [values.align(convert(values.array(t), t.type, dtype), t.ndim, len(shape))
                  for t, dtype in zip(lifted, a["dtypes"])]
        engine.note_block(math.prod(shape))
        result: DType = a["dtype"]
        with np.errstate(all="ignore"):
            out = np.asarray(evaluate(*arrays)).astype(result.numpy)
        full = np.broadcast_shapes(*(x.shape for x in arrays))
        return values.make(np.broadcast_to(out, full) if out.shape != full else out, result)
    return impl


for _fn, _evaluate in LIBDEVICE.items():
    implements(_fn)(libdevice(_evaluate, tuple(inspect.signature(_fn).parameters)))
