"""The libdevice functions beyond tests/test_libdevice.py's: fma in each rounding mode, the
rounding conversions between floats and integers, rsqrt_rn, rcp64h, the bit and integer helpers
(hiloint2double, mul24, sad, hadd...), llrint and llround, and the special functions jn, yn,
cyl_bessel_i0/i1, erfcx, normcdf and normcdfinv; each on random inputs and edge values, on the
NumPy reference and on the generated CUDA under the CPU emulator, outputs poisoned, against
references computed another way (exact fractions, Python integers, numerical integration, decimal
arithmetic at 60 digits); every one of Triton's libdevice names defined; and the dtypes they take,
refused alike by both backends."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
import tile_lang.extra.cuda.libdevice as cuda_libdevice
import tile_lang.extra.libdevice as libdevice
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.builtin import Family, builtin_of
from tile_lang.ops.conversions import CONVERSIONS

from tests.compiler.emulator import EMULATOR
from tests.test_libdevice import (
    FLOATS, MODES, RNG, ROUNDINGS, B, Arr, Case, Refusal, _bessel_first, _bessel_second, _check, _directed, _erfcinv,
    _fill, _ints, _signed, anywhere, assert_compiles, assert_refused_alike, each, kernel_for, refusals, run, uniform,
)

_EMU = EMULATOR

# Every function of Triton's triton.language.extra.cuda.libdevice (read from its libdevice.py)
TRITON_LIBDEVICE = (
    "clz popc byte_perm mulhi mul24 brev sad abs floor rcp64h rsqrt ceil trunc exp2 saturatef fma_rn fma_rz "
    "fma_rd fma_ru fast_dividef div_rn div_rz div_rd div_ru rcp_rn rcp_rz rcp_rd rcp_ru sqrt_rn sqrt_rz sqrt_rd "
    "sqrt_ru sqrt add_rn add_rz add_rd add_ru mul_rn mul_rz mul_rd mul_ru double2float_rn double2float_rz "
    "double2float_rd double2float_ru double2int_rn double2int_rz double2int_rd double2int_ru double2uint_rn "
    "double2uint_rz double2uint_rd double2uint_ru int2double_rn uint2double_rn float2int_rn float2int_rz "
    "float2int_rd float2int_ru float2uint_rn float2uint_rz float2uint_rd float2uint_ru int2float_rn int2float_rz "
    "int2float_rd int2float_ru uint2float_rn uint2float_rz uint2float_rd uint2float_ru hiloint2double "
    "double2loint double2hiint float2ll_rn float2ll_rz float2ll_rd float2ll_ru float2ull_rn float2ull_rz "
    "float2ull_rd float2ull_ru double2ll_rn double2ll_rz double2ll_rd double2ll_ru double2ull_rn double2ull_rz "
    "double2ull_rd double2ull_ru ll2float_rn ll2float_rz ll2float_rd ll2float_ru ull2float_rn ull2float_rz "
    "ull2float_rd ull2float_ru ll2double_rn ll2double_rz ll2double_rd ll2double_ru ull2double_rn ull2double_rz "
    "ull2double_rd ull2double_ru int_as_float float_as_int uint_as_float float_as_uint longlong_as_double "
    "double_as_longlong fast_sinf fast_cosf fast_log2f fast_logf fast_expf fast_tanf fast_exp10f fast_log10f "
    "fast_powf hadd rhadd sub_rn sub_rz sub_rd sub_ru rsqrt_rn ffs rint llrint nearbyint isnan signbit copysign "
    "finitef isinf nextafter sin cos sinpi cospi tan log2 exp exp10 cosh sinh tanh atan2 atan asin acos log "
    "log10 log1p acosh asinh atanh expm1 hypot rhypot norm3d rnorm3d norm4d rnorm4d cbrt rcbrt j0 j1 y0 y1 yn "
    "jn cyl_bessel_i0 cyl_bessel_i1 erf erfinv erfc erfcx erfcinv normcdfinv normcdf lgamma ldexp scalbn fmod "
    "remainder fma pow tgamma round llround fdim ilogb logb isfinited"
).split()


def test_every_triton_libdevice_name_is_a_builtin_in_both_namespaces() -> None:
    assert len(TRITON_LIBDEVICE) == len(set(TRITON_LIBDEVICE)) == 197
    for name in TRITON_LIBDEVICE:
        fn = getattr(libdevice, name)
        assert getattr(cuda_libdevice, name) is fn and builtin_of(fn) is not None, name
    family = [name for name in TRITON_LIBDEVICE if getattr(builtin_of(getattr(libdevice, name)), "family", None) is Family.LIBDEVICE]
    assert len(family) == 166  # the other 31 are tl.math's (tl.exp, tl.floor, tl.fma...)


# ---------------------------------------------------------------- exact references


def _nearest(exact: Fraction, dtype: Any) -> float:
    """The float of ``dtype`` nearest ``exact`` (ties to the even significand; inf past the largest)."""
    info = np.finfo(dtype)
    top = Fraction(float(info.max))
    if abs(exact) >= top + (top - Fraction(float(np.nextafter(info.max, dtype(0))))) / 2:
        return math.copysign(math.inf, exact)
    c = dtype(float(exact))
    for _ in range(4):
        neighbours = [c, np.nextafter(c, dtype(np.inf)), np.nextafter(c, dtype(-np.inf))]
        finite = [n for n in neighbours if math.isfinite(n)]
        best = min(finite, key=lambda n: (abs(Fraction(float(n)) - exact),
                                          int(np.asarray(n, dtype).view(np.int32 if dtype == np.float32 else np.int64)) & 1))
        if best == c:
            break
        c = best
    return float(c)


def _rounded(exact: Fraction, dtype: Any, mode: str) -> float:
    """``exact`` as a float of ``dtype`` rounded in ``mode``."""
    if mode == "rn":
        return _nearest(exact, dtype)
    return _directed(exact, abs(exact) > Fraction(float(np.finfo(dtype).max)), dtype, MODES[mode])


def _fma(mode: str, dtype: Any) -> Callable[[Arr, Arr, Arr], Arr]:
    """``x * y + z`` exactly, rounded once; an exact zero signed as IEEE 754 says."""
    def ref(x: Arr, y: Arr, z: Arr) -> Arr:
        out = []
        for a, b, c in zip(x.tolist(), y.tolist(), z.tolist()):
            if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
                with np.errstate(invalid="ignore"):  # inf * 0, inf - inf: NaN, as IEEE says
                    out.append(float(np.float64(a) * np.float64(b) + np.float64(c)))
                continue
            exact = Fraction(a) * Fraction(b) + Fraction(c)
            if exact == 0:
                product_negative = math.copysign(1, a) * math.copysign(1, b) < 0
                zeros = (a == 0 or b == 0) and c == 0
                if zeros and product_negative == (math.copysign(1, c) < 0):
                    out.append(c)
                else:
                    out.append(-0.0 if mode == "rd" else 0.0)
                continue
            out.append(_rounded(exact, dtype, mode))
        return np.asarray(out)
    return ref


@pytest.mark.parametrize("dtype", FLOATS)
def test_fma_in_each_rounding_mode(backend: str, dtype: Any) -> None:
    """Random operands, edge values, and ``z`` the negated rounded product on a third of the lanes
    (where a separate multiply and add would be off: the exact residual is the answer)."""
    x, y = anywhere().astype(dtype), anywhere().astype(dtype)
    z = anywhere().astype(dtype)
    z[::3] = -(x[::3].astype(np.float64) * y[::3].astype(np.float64)).astype(dtype)
    z[1::7] = -0.0
    row = (x.astype(np.float64), y.astype(np.float64), z.astype(np.float64))
    got = run(backend, [f"fma_{m}" for m in ROUNDINGS], [row] * 4, (dtype,) * 3, dtype)
    for k, mode in enumerate(ROUNDINGS):
        want = _fma(mode, dtype)(*row)
        _assert_exact(f"fma_{mode}", got[k], want, row)


def _assert_exact(fn: str, got: Arr, want: Arr, inputs: tuple[Arr, ...]) -> None:
    """Equal to the bit: NaN where NaN, signed zeros, and integers compared as integers."""
    if got.dtype.kind in "iu":
        bad = np.flatnonzero(got.astype(object) != np.asarray(want, dtype=object))
    else:
        want = np.asarray(want, np.float64).astype(got.dtype)
        same = (got == want) & (np.signbit(got) == np.signbit(want))
        bad = np.flatnonzero(~(same | (np.isnan(got) & np.isnan(want))))
    assert bad.size == 0, f"{fn}: at {[tuple(a[i] for a in inputs) for i in bad[:4]]} got {got[bad[:4]]}, want {np.asarray(want)[bad[:4]]}"


# ---------------------------------------------------------------- conversions

_INT_TYPES = {32: (np.int32, np.uint32), 64: (np.int64, np.uint64)}


def _float_sources(dtype: Any) -> Arr:
    """Floats around the integer ranges' ends, halves (ties), negatives, NaN, infinities."""
    edges = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, -1.0, 1e10, 3e9, 4294967295.0, 4294967296.0, 5e9,
             2.0**31 - 1, 2.0**31, -(2.0**31), -(2.0**31) - 1, 2.0**63, -(2.0**63), 2.0**64, 1.8e19, 1e20,
             -1e20, np.nan, np.inf, -np.inf, 0.49999997, 1.4e-45, -7.75]
    spread = RNG.normal(0, 1, B) * 10.0 ** RNG.integers(0, 20, B)
    return np.concatenate([np.asarray(edges), spread])[:B].astype(dtype)


def _int_sources(dtype: Any) -> Arr:
    info = np.iinfo(dtype)
    edges = [0, 1, 2, 3, info.max, info.min, info.max - 1, 2**24 + 1, 2**24 + 3, 2**53 + 1, 2**54 + 6, 16777217,
             -16777217, 2**62 + 2**38 + 1]
    edges = [e for e in edges if info.min <= e <= info.max]
    return np.concatenate([np.asarray(edges, dtype), RNG.integers(info.min, info.max, B, dtype, endpoint=True)])[:B]


def _whole(value: Fraction, mode: str) -> int:
    if mode == "rn":
        return round(value)  # ties to even
    return math.trunc(value) if mode == "rz" else (math.floor(value) if mode == "rd" else math.ceil(value))


def _to_int_ref(name: str, bits: int, unsigned: bool) -> Callable[[Arr], Arr]:
    """Rounded per the suffix, saturated, an unsigned value as its signed bits; NaN as the H100
    converts it: 0 from f32 to 32 bits, else the sign bit alone."""
    mode = name.rpartition("_")[2]
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    nan = 0 if name.startswith("float") and bits == 32 else 2 ** (bits - 1) if unsigned else low

    def ref(x: Arr) -> Arr:
        out = []
        for v in x.tolist():
            whole = nan if math.isnan(v) else (high if v > 0 else low) if math.isinf(v) else _whole(Fraction(v), mode)
            value = min(max(whole, low), high)
            out.append(value - 2**bits if unsigned and value >= 2 ** (bits - 1) else value)
        return np.asarray(out, dtype=object)
    return ref


def _to_float_ref(name: str, dtype: Any) -> Callable[[Arr], Arr]:
    mode = name.rpartition("_")[2]
    return lambda x: np.asarray([v if isinstance(v, float) and (v == 0 or not math.isfinite(v)) else
                                 _rounded(Fraction(v), dtype, mode) for v in x.tolist()])


def _groups() -> dict[tuple[Any, Any], list[str]]:
    """The conversions by (operand, result) NumPy dtype, each group one kernel."""
    groups: dict[tuple[Any, Any], list[str]] = {}
    for fn, conversion in CONVERSIONS.items():
        key = (conversion.source.numpy.type, conversion.result.numpy.type)
        groups.setdefault(key, []).append(fn.__name__)
    return groups


@pytest.mark.parametrize("source, result", list(_groups()), ids=lambda d: np.dtype(d).name)
def test_rounding_conversions_are_exact(backend: str, source: Any, result: Any) -> None:
    names = _groups()[(source, result)]
    x = _float_sources(source) if np.dtype(source).kind == "f" else _int_sources(source)
    got = run(backend, names, [(x,)] * len(names), (source,), result)
    for k, name in enumerate(names):
        conversion = next(c for fn, c in CONVERSIONS.items() if fn.__name__ == name)
        if np.dtype(result).kind == "f":
            want = _to_float_ref(name, result)(x)
        else:
            want = _to_int_ref(name, 8 * np.dtype(result).itemsize, conversion.unsigned)(x)
        _assert_exact(name, got[k], want, (x,))


# ---------------------------------------------------------------- bits and integers


def test_double_words(backend: str) -> None:
    x = anywhere()
    hi, lo = run(backend, ["double2hiint", "double2loint"], [(x,)] * 2, (np.float64,), np.int32)
    bits = [struct.unpack("<Q", struct.pack("<d", v))[0] for v in x.tolist()]
    assert hi.view(np.uint32).tolist() == [b >> 32 for b in bits]
    assert lo.view(np.uint32).tolist() == [b & 0xFFFFFFFF for b in bits]
    highs, lows = _ints(32)(), _ints(32)()
    got = run(backend, ["hiloint2double"], [(highs, lows)], (np.int32, np.int32), np.float64)[0]
    want = [struct.unpack("<Q", struct.pack("<II", low % 2**32, high % 2**32))[0]  # little-endian: low word first
            for high, low in zip(highs.tolist(), lows.tolist())]
    assert got.view(np.uint64).tolist() == want


def _low24(v: int, signed: bool) -> int:
    low = v % (1 << 24)
    return low - (1 << 24) if signed and low >= 1 << 23 else low


INTEGER: dict[str, Callable[[bool, int, int], int]] = {  # of ints (signed: the i32 variant), in Python
    "mul24": lambda s, x, y: _low24(x, s) * _low24(y, s), "hadd": lambda s, x, y: (x + y) >> 1,
    "rhadd": lambda s, x, y: (x + y + 1) >> 1,
}


@pytest.mark.parametrize("signed", [True, False], ids=["i32", "u32"])
def test_integer_helpers(backend: str, signed: bool) -> None:
    dtype = np.int32 if signed else np.uint32
    x, y = _ints(32)().astype(dtype), _ints(32)().astype(dtype)
    x[:4], y[:4] = np.array([2**23, 2**24 - 1, 5, 1], np.int64).astype(dtype), np.array([2**23, 3, -7, -1], np.int64).astype(dtype)
    names = list(INTEGER)
    got = run(backend, names, [(x, y)] * len(names), (dtype, dtype), dtype)
    for k, name in enumerate(names):
        values = [INTEGER[name](signed, a, b) for a, b in zip(x.tolist(), y.tolist())]
        want = [_signed(v) if signed else v % 2**32 for v in values]
        assert got[k].tolist() == want, name
    z = _ints(32)().astype(np.uint32)
    sad = run(backend, ["sad"], [(x, y, z)], (dtype, dtype, np.uint32), dtype)[0]
    values = [abs(a - b) + c for a, b, c in zip(x.tolist(), y.tolist(), z.tolist())]
    assert sad.tolist() == [_signed(v) if signed else v % 2**32 for v in values]


# ---------------------------------------------------------------- rsqrt_rn, rcp64h, llrint, llround


def _rsqrt_nearest(v: float) -> float:
    """The f32 nearest 1/sqrt(v), the side of each halfway point settled exactly (m*m*v vs 1)."""
    if math.isnan(v) or v < 0:
        return math.nan
    if v == 0:
        return math.copysign(math.inf, v)
    if math.isinf(v):
        return 0.0
    c = np.float32(1 / math.sqrt(v))
    while True:
        up, down = np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(0))
        hi, lo = (Fraction(float(c)) + Fraction(float(up))) / 2, (Fraction(float(c)) + Fraction(float(down))) / 2
        if hi * hi * Fraction(v) < 1:
            c = up
        elif lo * lo * Fraction(v) > 1:
            c = down
        else:
            return float(c)


def test_rsqrt_rn_is_correctly_rounded(backend: str) -> None:
    x = np.abs(anywhere()).astype(np.float32)
    x[:6] = [0.0, -0.0, -1.0, np.inf, np.nan, 4.0]
    got = run(backend, ["rsqrt_rn"], [(x.astype(np.float64),)], (np.float32,), np.float32)[0]
    _assert_exact("rsqrt_rn", got, np.asarray([_rsqrt_nearest(v) for v in x.tolist()]), (x,))


def test_rcp64h_is_the_high_word_reciprocal(backend: str) -> None:
    """The GPU's approximation: the result's low 32 bits zero, within 2**-19 of ``1/x``; zeros
    and subnormals (flushed) give infinities of their sign, infinities zeros."""
    x = anywhere()
    x[:5] = [0.0, -0.0, 5e-324, -np.inf, np.nan]
    got = run(backend, ["rcp64h"], [(x,)], (np.float64,), np.float64)[0]
    assert (got.view(np.uint64) & np.uint64(0xFFFFFFFF) == 0).all()
    assert (got[0], got[1], got[2]) == (np.inf, -np.inf, np.inf)
    assert got[3] == 0 and np.signbit(got[3]) and np.isnan(got[4])
    with np.errstate(all="ignore"):
        want = 1 / x
    normal = np.isfinite(want) & (np.abs(x) > 2.3e-308) & (np.abs(want) > 2.3e-308)
    np.testing.assert_allclose(got[normal], want[normal], rtol=2.0**-19)


@pytest.mark.parametrize("dtype", FLOATS)
def test_llrint_and_llround(backend: str, dtype: Any) -> None:
    """Within the i64 range (beyond it and at NaN: test_handwritten_seventh): to nearest even,
    and halves away from zero."""
    x = _fill([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 1e15 + 0.5, -7.5, 2.0**62, -(2.0**62), 0.49999997],
              RNG.normal(0, 1, B) * 10.0 ** RNG.integers(0, 17, B)).astype(dtype)
    got = run(backend, ["llrint", "llround"], [(x.astype(np.float64),)] * 2, (dtype,), np.int64)
    _assert_exact("llrint", got[0], np.asarray([round(Fraction(v)) for v in x.tolist()], dtype=object), (x,))
    away = [int(math.copysign(math.floor(abs(Fraction(v)) + Fraction(1, 2)), v)) for v in x.tolist()]
    _assert_exact("llround", got[1], np.asarray(away, dtype=object), (x,))


# ---------------------------------------------------------------- special functions


def _orders() -> Arr:
    return _fill([0, 1, 2, -1, -2, 3, -3, 8, -8, 5], RNG.integers(-8, 9, B).astype(np.float64))


def _bessel_ref(second: bool) -> Callable[[Arr, Arr], Arr]:
    """J_n or Y_n by Bessel's integrals (tests/test_libdevice.py's), negative orders by (-1)^n."""
    def ref(n: Arr, x: Arr) -> Arr:
        out = []
        for k, v in zip(n.astype(int).tolist(), x.tolist()):
            sign = -1.0 if k < 0 and k % 2 else 1.0
            value = _bessel_second(abs(k), v) if second else _bessel_first(abs(k), v)
            out.append(sign * value)
        return np.asarray(out)
    return ref


def _bessel_i_ref(order: int) -> Callable[[Arr], Arr]:
    """I_n(x) by its defining series ``sum (x/2)^(2k+n) / (k! (k+n)!)`` (positive terms) in
    decimal arithmetic at 40 digits."""
    def one(v: float) -> float:
        if math.isnan(v) or math.isinf(v):
            return v if math.isnan(v) or order else math.inf
        with localcontext() as ctx:
            ctx.prec = 40
            half = abs(Decimal(v)) / 2
            term = half if order else Decimal(1)  # (x/2)^n / n! for n in (0, 1)
            total, k = term, 0
            while term > total * Decimal(10) ** -38 or k < 2:
                k += 1
                term = term * half * half / (k * (k + order))
                total += term
            value = float(total) if total < Decimal("1.8e308") else math.inf
        return -value if order and math.copysign(1, v) < 0 else value
    return lambda x: np.asarray([one(v) for v in x.tolist()])


_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _erfc_scaled(d: Decimal) -> Decimal:
    """``exp(d*d) erfc(d)`` at 60 digits: the continued fraction from 3 on, below it erf's series,
    below 0 ``2 exp(d*d)`` less its value at -d."""
    if d < 0:
        return 2 * (d * d).exp() - _erfc_scaled(-d)
    if d >= 3:
        t = d
        for k in range(600, 0, -1):
            t = d + (Decimal(k) / 2) / t
        return 1 / (_PI.sqrt() * t)
    a, total, term, k = d, Decimal(0), d, 0
    while True:
        piece = term / (2 * k + 1)
        total += piece
        if abs(piece) < Decimal(10) ** -58 and k > 5:
            break
        k += 1
        term = -term * a * a / k
    erf = total * 2 / _PI.sqrt()
    return (d * d).exp() * (1 - erf)


def _erfcx_ref(v: float) -> float:
    if math.isnan(v):
        return v
    if math.isinf(v):
        return 0.0 if v > 0 else math.inf
    with localcontext() as ctx:
        ctx.prec = 60
        if v < -26.7:
            return math.inf
        return float(_erfc_scaled(Decimal(v)))


def _normcdf_ref(v: float) -> float:
    if math.isnan(v) or math.isinf(v):
        return v if math.isnan(v) else (1.0 if v > 0 else 0.0)
    with localcontext() as ctx:
        ctx.prec = 60
        z = -Decimal(v) / Decimal(2).sqrt()
        if z < -10:
            return 1.0
        return float(_erfc_scaled(z) * (-z * z).exp() / 2)


SPECIAL = [
    Case("cyl_bessel_i0", (uniform(-80, 80, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-20, 30.0, 30.5, 85.0]),),
         _bessel_i_ref(0), 6, 1e-300),
    Case("cyl_bessel_i1", (uniform(-80, 80, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-20, 30.0, -30.5, 85.0]),),
         _bessel_i_ref(1), 6, 1e-300),
    Case("erfcx", (uniform(-9, 30, [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 26.0, -26.0, -27.0, 1e5, 1e20, -1e-20,
                                    25.99]),), each(_erfcx_ref), 4),
    Case("normcdf", (uniform(-37, 9, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, -5.0, 8.5, -38.0, 39.0]),),
         each(_normcdf_ref), 5),
    Case("normcdfinv", (uniform(0, 1, [0.0, 1.0, 0.5, 1e-30, 1e-40, 1 - 2.0**-24, -0.5, 1.5, np.nan, 0.975]),),
         each(lambda p: -math.sqrt(2) * _erfcinv(2 * p)), 8),
]


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_functions(backend: str, dtype: Any) -> None:
    cases = SPECIAL if dtype is np.float64 else [
        Case(c.fn, (uniform(-85, 85, [0.0, -0.0, np.inf, np.nan, 30.0, 88.0]),), c.ref, c.ulps, c.atol)
        if c.fn.startswith("cyl") else c for c in SPECIAL]
    _check(backend, cases, (dtype,), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bessel_functions_of_integer_order(backend: str, dtype: Any) -> None:
    """jn and yn, orders -8..8 (negative through (-1)^n), against Bessel's integrals; the CUDA
    bounds are absolute for jn (2.2e-6 at n = 128) and grow with n for yn (2 + 2.5n ulps)."""
    jn = Case("jn", (_orders, uniform(-40, 40, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-3, 0.5, 12.0, 1e4, 3.0])),
              _bessel_ref(False), 9, 3e-6)
    yn = Case("yn", (_orders, uniform(0.5, 40, [0.0, -0.0, -1.0, np.inf, np.nan, 1.0, 2.0, 12.0, 1e4, 0.7])),
              _bessel_ref(True), 24, 3e-6)
    _check(backend, [jn, yn], (np.int32, dtype), dtype)


# ---------------------------------------------------------------- dtypes


@tl.kernel
def jn_of_floats(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, libdevice.jn(v, v))  # type: ignore[arg-type]


@tl.kernel
def float2ll_of_doubles(x: Pointer[tl.f64], y: Pointer[tl.i64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, libdevice.float2ll_rn(tl.load(x + offs)))  # type: ignore[arg-type]


@tl.kernel
def mul24_of_longs(x: Pointer[tl.i64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, libdevice.mul24(v, v))  # type: ignore[type-var]


@tl.kernel
def sad_of_signed(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, libdevice.sad(v, v, v))  # type: ignore[arg-type]


WRONG_DTYPES: list[Refusal] = [
    (jn_of_floats, "libdevice.jn takes (tl.i32, tl.f32) or (tl.i32, tl.f64), got (tl.f32, tl.f32)", [np.float32]),
    (float2ll_of_doubles, "libdevice.float2ll_rn takes (tl.f32), got (tl.f64)", [np.float64, np.int64]),
    (mul24_of_longs, "libdevice.mul24 takes (tl.i32, tl.i32) or (tl.u32, tl.u32), got (tl.i64, tl.i64)", [np.int64]),
    (sad_of_signed, "libdevice.sad takes (tl.i32, tl.i32, tl.u32) or (tl.u32, tl.u32, tl.u32), got (tl.i32, tl.i32, "
     "tl.i32)", [np.int32]),
]


@refusals(WRONG_DTYPES)
def test_wrong_dtypes_are_refused_alike_by_both_backends(kernel: Any, message: str, buffers: list[Any]) -> None:
    """Triton's tables: jn's order is an i32, float2ll takes an f32, mul24 32-bit integers, sad's
    third operand unsigned; one message from both backends, at the call's line."""
    assert_refused_alike(kernel, message, buffers)


def _all_kernels() -> list[Any]:
    """Every kernel the tests above build."""
    kernels = [kernel_for([c.fn for c in SPECIAL], (d,), d) for d in FLOATS]
    kernels += [kernel_for([f"fma_{m}" for m in ROUNDINGS], (d,) * 3, d) for d in FLOATS]
    kernels += [kernel_for(["jn", "yn"], (np.int32, d), d) for d in FLOATS]
    kernels += [kernel_for(names, (source,), result) for (source, result), names in _groups().items()]
    kernels += [kernel_for(list(INTEGER), (d, d), d) for d in (np.int32, np.uint32)]
    kernels += [kernel_for(["sad"], (d, d, np.uint32), d) for d in (np.int32, np.uint32)]
    kernels += [kernel_for(["llrint", "llround"], (d,), np.int64) for d in FLOATS]
    return kernels + [kernel_for(["double2hiint", "double2loint"], (np.float64,), np.int32),
                      kernel_for(["hiloint2double"], (np.int32, np.int32), np.float64),
                      kernel_for(["rsqrt_rn"], (np.float32,), np.float32),
                      kernel_for(["rcp64h"], (np.float64,), np.float64)]


@pytest.mark.slow
def test_the_generated_cuda_compiles_with_nvcc(tmp_path: Any) -> None:
    """Every spelling is a CUDA device function nvcc knows (``__nv_rcp64h`` declared by the runtime
    header), for sm_90 and sm_80, and NVRTC where installed."""
    assert_compiles([(kernel, {"B": B}) for kernel in _all_kernels()], tmp_path)
