"""Triton's libdevice functions (``tile_lang.extra.libdevice``, the LIBDEVICE family): each on
random inputs and edge values (±0, ±inf, NaN, subnormals, huge and negative arguments), on the
NumPy reference and on the generated CUDA under the CPU emulator, outputs poisoned, against
references computed another way in float64 or exactly (Python's ``math``, fractions, numerical
integration of Bessel's integrals, bisection for erfinv); and the dtypes each takes, rejected
alike by both backends with one message."""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
import tile_lang.extra.libdevice as libdevice
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.kernel import Kernel

from tests.compiler.emulator import EMULATOR
from tests.fuzz.runner import load
from tests.test_semantics import _compiler_error, _line, _reference_error

_EMU = EMULATOR
B = 128  # lanes per function: random values after the edge values
RNG = np.random.default_rng(2026)
Arr = np.ndarray[Any, Any]

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, 1e-40, -1e-40, 1.4e-45, 1e-30,
         -1e30, 3e38, 1e10, -7.0]


def _fill(edges: list[float], random: Arr) -> Arr:
    return np.concatenate([np.asarray(edges, np.float64), random])[:B]


def anywhere() -> Arr:
    return _fill(EDGES, RNG.normal(0, 1, B) * 10.0 ** RNG.integers(-6, 7, B))


def uniform(low: float, high: float, edges: list[float] = []) -> Callable[[], Arr]:  # noqa: B006 (never mutated)
    return lambda: _fill(edges, RNG.uniform(low, high, B))


# ---------------------------------------------------------------- references (float64 or exact)


def each(fn: Callable[..., float]) -> Callable[..., Arr]:
    """``fn`` on each element, NaN where math raises (a domain error)."""
    def safe(*xs: float) -> float:
        try:
            return fn(*xs)
        except (ValueError, ZeroDivisionError):
            return math.nan
        except OverflowError:
            return math.inf
    return np.vectorize(safe, otypes=[np.float64])


def _bessel_first(n: int, x: float) -> float:
    """J_n(x) = (1/pi) int_0^pi cos(n t - x sin t) dt by the trapezoidal rule, spectrally
    accurate on this periodic integrand."""
    if not math.isfinite(x):
        return 0.0 if math.isinf(x) else math.nan
    t = np.linspace(0, np.pi, 2 * int(abs(x)) + 200)
    f = np.cos(n * t - x * np.sin(t))
    return float((f.sum() - (f[0] + f[-1]) / 2) * (t[1] - t[0]) / np.pi)


def _gauss(low: float, high: float, panels: int) -> tuple[Arr, Arr]:
    """Nodes and weights of composite 16-point Gauss-Legendre quadrature on [low, high]."""
    t, w = np.polynomial.legendre.leggauss(16)
    edges = np.linspace(low, high, panels + 1)
    half = (edges[1:] - edges[:-1])[:, None] / 2
    mid = (edges[1:] + edges[:-1])[:, None] / 2
    return (mid + half * t).ravel(), (half * w).ravel()


def _bessel_second(n: int, x: float) -> float:
    """Y_n(x) = (1/pi) int_0^pi sin(x sin t - n t) dt - (1/pi) int_0^inf (e^(nt) + (-1)^n e^(-nt))
    e^(-x sinh t) dt, both by composite Gauss-Legendre quadrature."""
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if math.isinf(x):
        return 0.0
    tau, w = _gauss(0, math.pi, int(x / 2) + 8)
    first = float(np.sum(w * np.sin(x * np.sin(tau) - n * tau)))
    u, v = _gauss(0, math.asinh(60 / x) + 1, 64)
    second = float(np.sum(v * (np.exp(n * u) + (-1) ** n * np.exp(-n * u)) * np.exp(-x * np.sinh(u))))
    return (first - second) / np.pi


def _invert(fn: Callable[[float], float], target: float, low: float, high: float, rising: bool) -> float:
    """The root of ``fn(x) = target`` on [low, high] by bisection to the last bit."""
    for _ in range(2000):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if (fn(mid) < target) == rising:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _erfinv(y: float) -> float:
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if y == 0:
        return y
    if abs(y) > 0.5:  # through erfc, exact there
        return math.copysign(_invert(math.erfc, 1 - abs(y), 0, 30, False), y)
    return math.copysign(_invert(math.erf, abs(y), 0, 1, True), y)


def _erfcinv(z: float) -> float:
    if math.isnan(z) or not 0 <= z <= 2:
        return math.nan
    if z in (0, 2):
        return math.inf if z == 0 else -math.inf
    if 0.5 < z < 1.5:  # erf's inverse at 1 - z (exact), better conditioned than erfc's near 1
        return _erfinv(1 - z)
    return _invert(math.erfc, z, 0, 30, False) if z < 1 else -_invert(math.erfc, 2 - z, 0, 30, False)


def _pi_times(fn: Callable[[float], float], x: float, zero_sign: bool) -> float:
    """sin or cos of pi x, reduced mod 2 exactly; exact zeros as C gives them."""
    if not math.isfinite(x):
        return math.nan
    r = float(Fraction(x) % 2)
    out = fn(math.pi * r)
    exact = Fraction(x) * 2 == int(Fraction(x) * 2)  # half-integer multiples are exact
    if exact:
        out = float(round(out))
        if out == 0:
            return math.copysign(0.0, x) if zero_sign else 0.0
    return out


def _cbrt(x: float) -> float:
    """math.cbrt (within 2 ulps of f64) refined by one Newton step in exact arithmetic."""
    c = math.cbrt(x)
    if c == 0 or not math.isfinite(c):
        return c
    exact = Fraction(c) - (Fraction(c) ** 3 - Fraction(x)) / (3 * Fraction(c) ** 2)
    return float(exact)


def _pow(x: float, y: float) -> float:
    """C's pow, where Python's raises: a zero to a negative power, and overflow, are infinite
    (negative for a negative base to an odd power)."""
    odd = math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2) != 0
    try:
        if x == 0 and y < 0:
            raise OverflowError
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if odd and math.copysign(1, x) < 0 else math.inf


def _round_half_away(x: float) -> float:
    if not math.isfinite(x):
        return x
    return math.copysign(float(math.floor(abs(Fraction(x)) + Fraction(1, 2))), x)


def _nearest_even(x: float) -> float:
    return x if not math.isfinite(x) else math.copysign(float(round(x)), x)


def _inverse(v: float) -> float:
    return 1 / v if v else math.inf


def _ilogb(x: float) -> float:
    if x == 0 or math.isnan(x):
        return -(2**31)
    if math.isinf(x):
        return 2**31 - 1
    return float(math.frexp(x)[1] - 1)


def _logb(x: float) -> float:
    if x == 0:
        return -math.inf
    if not math.isfinite(x):
        return abs(x)
    return float(math.frexp(x)[1] - 1)


def _step(x: Arr, y: Arr, dtype: Any) -> Arr:
    """nextafter by the bits: one unit of the integer view toward ``y``."""
    x, y = x.astype(dtype), y.astype(dtype)
    ints = np.int32 if dtype == np.float32 else np.int64
    bits = x.view(ints).astype(np.int64)
    away = (y > x) == (x >= 0)  # toward y is away from zero
    stepped = np.where(x == 0, 1, np.where(away, bits + 1, bits - 1)).astype(ints).view(dtype)
    stepped = np.where(x == 0, np.copysign(stepped, y - x), stepped)
    out = np.where(x == y, y, stepped)
    return np.where(np.isnan(x) | np.isnan(y), np.nan, out).astype(np.float64)


def _directed(exact: Fraction | None, big: bool, dtype: Any, mode: int) -> float:
    """The float of ``dtype`` nearest ``exact`` in the direction ``mode`` (-1 down, 1 up, 0 toward
    zero); ``big``: beyond the largest finite value."""
    info = np.finfo(dtype)
    assert exact is not None
    if mode == 0:
        mode = -1 if exact >= 0 else 1
    if big:
        return float(info.max) * (1 if exact > 0 else -1) if (mode < 0) == (exact > 0) else math.copysign(math.inf, exact)
    c = dtype(float(exact))
    while not math.isinf(c) and (Fraction(float(c)) > exact if mode < 0 else Fraction(float(c)) < exact):
        c = np.nextafter(c, dtype(-np.inf if mode < 0 else np.inf))
    if math.isinf(c):
        return float(c)
    beyond = np.nextafter(c, dtype(np.inf if mode < 0 else -np.inf))
    while math.isfinite(beyond) and (Fraction(float(beyond)) <= exact if mode < 0 else Fraction(float(beyond)) >= exact):
        c, beyond = beyond, np.nextafter(beyond, dtype(np.inf if mode < 0 else -np.inf))
    return float(c)


def _div_directed(mode: int, dtype: Any) -> Callable[[Arr, Arr], Arr]:
    def ref(x: Arr, y: Arr) -> Arr:
        out = []
        for a, b in zip(x.tolist(), y.tolist()):
            if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
                out.append(np.float64(dtype(a) / dtype(b)) if b != 0 or math.isnan(a) or a == 0 else
                           math.copysign(math.inf, a) * math.copysign(1, b))
                continue
            exact = Fraction(a) / Fraction(b)
            if exact == 0:
                out.append(math.copysign(0.0, a) * math.copysign(1, b))
                continue
            out.append(_directed(exact, abs(exact) > Fraction(float(np.finfo(dtype).max)), dtype, mode))
        return np.asarray(out)
    return ref


def _arith_directed(name: str, dtype: Any) -> Callable[[Arr, Arr], Arr]:
    """``add_rd`` and friends, exactly: the exact sum, difference or product rounded in the mode
    the name says; an exact zero sum is -0 rounding down, +0 otherwise, unless both operands are
    zeros of one sign (IEEE 754)."""
    op, mode = name.split("_")
    fn: Callable[[Any, Any], Any] = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}[op]

    def ref(x: Arr, y: Arr) -> Arr:
        out = []
        for a, b in zip(x.tolist(), y.tolist()):
            if not (math.isfinite(a) and math.isfinite(b)):
                out.append(float(fn(dtype(a), dtype(b))))
                continue
            exact = fn(Fraction(a), Fraction(b))
            if exact == 0:
                if op == "mul":
                    out.append(math.copysign(0.0, a) * math.copysign(1.0, b))
                    continue
                other = b if op == "add" else -b
                same = math.copysign(1, a) == math.copysign(1, other)
                out.append(a if same else (-0.0 if mode == "rd" else 0.0))
                continue
            largest = Fraction(float(np.finfo(dtype).max))
            if mode != "rn":
                out.append(_directed(exact, abs(exact) > largest, dtype, MODES[mode]))
            else:  # beyond twice the largest float (float() would raise) it is infinite anyway
                out.append(math.copysign(math.inf, exact) if abs(exact) >= 2 * largest else float(dtype(float(exact))))
        return np.asarray(out)
    return ref


def _reciprocal_directed(mode: int, dtype: Any) -> Callable[[Arr], Arr]:
    """``1 / x`` rounded in the direction ``mode``, exactly."""
    divide = _div_directed(mode, dtype)
    return lambda x: divide(np.ones_like(x), x)


def _sqrt_directed(mode: int, dtype: Any) -> Callable[[Arr], Arr]:
    def ref(x: Arr) -> Arr:
        out = []
        for a in x.tolist():
            if not math.isfinite(a) or a <= 0:
                out.append(math.sqrt(a) if a >= 0 and not math.isinf(a) else (a if a == math.inf else (a if a == 0 else math.nan)))
                continue
            c = dtype(math.sqrt(a))  # then fixed against the exact square
            if mode <= 0:
                while Fraction(float(c)) ** 2 > Fraction(a):
                    c = np.nextafter(c, dtype(0))
                while Fraction(float(np.nextafter(c, dtype(np.inf)))) ** 2 <= Fraction(a):
                    c = np.nextafter(c, dtype(np.inf))
            else:
                while Fraction(float(c)) ** 2 < Fraction(a):
                    c = np.nextafter(c, dtype(np.inf))
                while Fraction(float(np.nextafter(c, dtype(0)))) ** 2 >= Fraction(a):
                    c = np.nextafter(c, dtype(0))
            out.append(float(c))
        return np.asarray(out)
    return ref


def _extremum(largest: bool) -> Callable[[Arr, Arr], Arr]:
    """C's fmax/fmin as the GPU computes them: a NaN gives the other operand; -0 < +0."""
    def ref(x: Arr, y: Arr) -> Arr:
        out = []
        for a, b in zip(x.tolist(), y.tolist()):
            if math.isnan(a) or math.isnan(b):
                out.append(b if math.isnan(a) else a)
            else:
                key = (a, math.copysign(1, a))
                other = (b, math.copysign(1, b))
                out.append(a if (key > other) == largest else b)
        return np.asarray(out)
    return ref


def _bits(fn: Callable[..., int], width: int) -> Callable[..., Arr]:
    """An integer function of each element's bits (``width`` of them), as Python ints."""
    def ref(*xs: Arr) -> Arr:
        return np.asarray([fn(width, *(int(v) % (1 << width) for v in vals)) for vals in zip(*(x.tolist() for x in xs))])
    return ref


def _signed(value: int, width: int = 32) -> int:
    """``value`` modulo ``2**width`` read as a signed integer of that width."""
    value %= 1 << width
    return value - (1 << width) if value >= 1 << (width - 1) else value


def _byte_perm(width: int, x: int, y: int, s: int) -> int:
    both = x | (y << 32)
    return _signed(sum(((both >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4)), 32)


def _mulhi(signed: bool) -> Callable[[int, int, int], int]:
    def hi(width: int, x: int, y: int) -> int:
        a, b = (_signed(x, width), _signed(y, width)) if signed else (x, y)
        high = (a * b) >> width
        return high if signed else high % (1 << width)
    return hi


def _float2int(x: float) -> float:
    if math.isnan(x):
        return 0.0
    if math.isinf(x):
        return float(2**31 - 1 if x > 0 else -(2**31))
    return float(min(max(round(x), -(2**31)), 2**31 - 1))


# ---------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One function: its inputs, its float64 reference, the tolerance: ``ulps`` of the result
    (0: exact, signed zeros too) plus ``atol`` (functions whose error bound is absolute). The
    tolerances are the CUDA Math API's documented bounds (the larger of the f32 and f64 ones), so
    the tests hold on a GPU; the reference and the emulator (glibc) are mostly within an ulp."""

    fn: str
    inputs: tuple[Callable[[], Arr], ...]
    ref: Callable[..., Arr]
    ulps: float = 0
    atol: float = 0.0


def _exponents() -> Arr:
    """Integer-valued and fractional exponents, and those C's pow special-cases."""
    return _fill([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, np.inf, -np.inf, np.nan, 2.0, 1.0, 3.0, -2.0, 1e10, 7.0,
                  0.0, 5.0, -0.5], RNG.choice([-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 1.7, -2.3], B))


def _bases() -> Arr:
    return _fill([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, np.nan, 2.0, -2.0, 1e-40, -8.0, 0.5, -0.5, 3e38,
                  -0.0, 10.0, 1.0, -1.0, 0.0], RNG.uniform(-4, 4, B))


def _positive() -> Arr:
    return _fill([0.0, -0.0, np.inf, np.nan, 1e-45, 1e-40, 2.0, 3.0, 4.0, 1e30, -1.0, 0.25, 1e-30, 3e38, 5.0, 7.0,
                  -np.inf, 1.0, 9.0, 1e-20], np.abs(RNG.normal(0, 1, B)) * 10.0 ** RNG.integers(-8, 8, B))


UNARY = [
    Case("cbrt", (anywhere,), each(_cbrt), 4),  # 1 on the GPU; glibc lists its f64 cbrt (the emulator's) at 4
    Case("rcbrt", (anywhere,), each(lambda x: float(1 / Fraction(_cbrt(x))) if x != 0 and math.isfinite(x) else
                                     (math.copysign(math.inf, x) if x == 0 else 0.0 * x if math.isnan(x) else math.copysign(0.0, x))), 1),
    Case("exp10", (uniform(-40, 38, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, 39.0, -46.0]),),
         each(lambda x: 10.0**x), 2),
    Case("lgamma", (uniform(-2.2, 35, [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -0.5, -1.5, np.inf, -np.inf, np.nan,
                                       1e-30, -1e-30, 1e30, 3.0]),),
         each(lambda x: math.inf if math.isinf(x) or (x <= 0 and x == math.floor(x)) else math.lgamma(x)), 6, 1e-6),
    Case("tgamma", (uniform(-9.9, 34, [0.0, -0.0, -1.0, -2.0, 1.0, 0.5, -0.5, -1.5, np.inf, -np.inf, np.nan, 1e-30,
                                       40.0, -40.5, 5.0, 10.0]),),
         each(lambda x: math.copysign(math.inf, x) if x == 0 else (math.inf if x == math.inf else math.gamma(x))), 10),
    Case("erfinv", (uniform(-1, 1, [0.0, -0.0, 1.0, -1.0, 1.5, np.nan, 1 - 2.0**-24, -1 + 2.0**-24, 1e-40, 0.5,
                                    -0.5, 0.9, 0.999]),), each(_erfinv), 5),
    Case("erfcinv", (uniform(0, 2, [0.0, 2.0, 1.0, 1e-30, 1e-40, 1.4e-45, 2 - 2.0**-23, np.nan, -1.0, 3.0, 0.5,
                                    1.5, 1e-6]),), each(_erfcinv), 6),
    Case("j0", (uniform(-60, 60, [0.0, -0.0, np.inf, -np.inf, np.nan, 2.404825557695773, 1e-20, 8.0, 12.0, 1e4]),),
         each(lambda x: _bessel_first(0, x)), 9, 3e-6),
    Case("j1", (uniform(-60, 60, [0.0, -0.0, np.inf, -np.inf, np.nan, 3.8317059702075125, 1e-20, 8.0, 12.0, -1e4]),),
         each(lambda x: _bessel_first(1, x)), 9, 3e-6),
    Case("y0", (uniform(0, 60, [0.0, -0.0, -1.0, np.inf, np.nan, 0.8935769662791675, 1e-20, 8.0, 12.0, 1e4]),),
         each(lambda x: _bessel_second(0, x)), 9, 3e-6),
    Case("y1", (uniform(0, 60, [0.0, -0.0, -1.0, np.inf, np.nan, 2.197141326031017, 1e-3, 8.0, 12.0, 1e4]),),
         each(lambda x: _bessel_second(1, x)), 9, 3e-6),
    Case("logb", (anywhere,), each(_logb)),
    Case("nearbyint", (anywhere,), each(_nearest_even)),
    Case("round", (anywhere,), each(_round_half_away)),
    Case("cospi", (uniform(-100, 100, EDGES + [0.25, 1e7 + 0.5, 2.0**30]),),
         each(lambda x: _pi_times(math.cos, x, False)), 2, 1e-12),
    Case("sinpi", (uniform(-100, 100, EDGES + [0.25, 1e7 + 0.5, 2.0**30]),),
         each(lambda x: _pi_times(math.sin, x, True)), 2, 1e-12),
    Case("rcp_rn", (anywhere,), each(lambda x: float(1 / Fraction(x)) if x != 0 and math.isfinite(x) else
                                     (math.copysign(math.inf, x) if x == 0 else (0.0 * x if math.isnan(x) else math.copysign(0.0, x))))),
]
# the directed roundings: exact references per dtype, so built below
DIRECTED_UNARY = ["sqrt_rd", "sqrt_ru", "sqrt_rz"]
DIRECTED_BINARY = ["div_rd", "div_ru", "div_rz"]
RECIPROCALS = ["rcp_rd", "rcp_ru", "rcp_rz"]
ROUNDINGS = ("rn", "rz", "rd", "ru")
ARITHMETIC = [f"{op}_{mode}" for op in ("add", "sub", "mul") for mode in ROUNDINGS]
MODES = {"rd": -1, "ru": 1, "rz": 0}

BINARY = [
    Case("pow", (_bases, _exponents), each(_pow), 4),
    Case("atan2", (anywhere, anywhere), each(math.atan2), 3),
    Case("hypot", (anywhere, anywhere), each(math.hypot), 3),
    Case("fmod", (anywhere, anywhere), each(lambda x, y: math.nan if math.isinf(x) or y == 0 else math.fmod(x, y))),
    Case("remainder", (anywhere, anywhere),
         each(lambda x, y: x if math.isinf(y) and math.isfinite(x) else math.remainder(x, y))),
    Case("copysign", (anywhere, anywhere), each(math.copysign)),
    Case("fdim", (anywhere, anywhere), each(lambda x, y: math.nan if math.isnan(x) or math.isnan(y) else
                                             (x - y if x > y else 0.0))),
    Case("fmax", (anywhere, anywhere), _extremum(True)),
    Case("fmin", (anywhere, anywhere), _extremum(False)),
    Case("rhypot", (anywhere, anywhere), each(lambda x, y: _inverse(math.hypot(x, y))), 2),
]
THREE = [Case("norm3d", (anywhere, anywhere, anywhere), each(lambda x, y, z: math.hypot(x, y, z)), 3),
         Case("rnorm3d", (anywhere, anywhere, anywhere), each(lambda x, y, z: _inverse(math.hypot(x, y, z))), 2)]
FOUR = [Case("norm4d", (anywhere,) * 4, each(lambda x, y, z, t: math.hypot(x, y, z, t)), 3),
        Case("rnorm4d", (anywhere,) * 4, each(lambda x, y, z, t: _inverse(math.hypot(x, y, z, t))), 2)]
WITH_INT = [*(Case(fn, (anywhere, lambda: _fill([0, 1, -1, 200, -200, 300, -300, 2**31 - 1, -(2**31), 5],
                                                RNG.integers(-160, 160, B).astype(np.float64))),
                   each(lambda x, n: float(np.ldexp(np.float64(x), int(n))) if math.isfinite(x) else x))
              for fn in ("ldexp", "scalbn")),
            Case("pow", (_bases, lambda: _fill([0, 1, -1, 2, -2, 3, -3, 31, -31, 2**31 - 1, -(2**31), 0, 5, 7],
                                               RNG.integers(-12, 12, B).astype(np.float64))),
                 each(_pow), 4)]
TESTS = [Case("isinf", (anywhere,), each(lambda x: float(math.isinf(x)))),
         Case("isnan", (anywhere,), each(lambda x: float(math.isnan(x)))),
         Case("isfinite", (anywhere,), each(lambda x: float(math.isfinite(x))))]
TO_INT = [Case("signbit", (anywhere,), each(lambda x: float(math.copysign(1, x) < 0))),
          Case("ilogb", (anywhere,), each(_ilogb))]
F32_ONLY = [Case("saturatef", (anywhere,), each(lambda x: min(x, 1.0) if x > 0 else 0.0)),
            Case("fast_expf", (uniform(-80, 80, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]),), each(math.exp), 2 + 1.2 * 80),
            Case("fast_logf", (lambda: np.abs(anywhere()),), each(lambda x: -math.inf if x == 0 else math.log(x)), 3, 2.0**-21),
            Case("fast_sinf", (uniform(-math.pi, math.pi, [0.0, -0.0, np.nan, 1.0]),), each(math.sin), 0, 2.0**-21.41),
            Case("fast_cosf", (uniform(-math.pi, math.pi, [0.0, -0.0, np.nan, 1.0]),), each(math.cos), 0, 2.0**-21.41),
            Case("fast_tanf", (uniform(-0.78, 0.78, [0.0, -0.0, np.nan, 0.5]),), each(math.tan), 8, 2.0**-21),
            Case("fast_log2f", (lambda: np.abs(anywhere()),), each(lambda x: -math.inf if x == 0 else math.log2(x)), 2,
                 2.0**-22),
            Case("fast_log10f", (lambda: np.abs(anywhere()),), each(lambda x: -math.inf if x == 0 else math.log10(x)), 3,
                 2.0**-21),
            Case("fast_exp10f", (uniform(-30, 30, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]),), each(lambda x: 10.0**x),
                 2 + 2.97 * 30)]
F32_BINARY = [Case("fast_dividef", (anywhere, uniform(-1e6, 1e6, [1.0, -1.0, 3.0, 0.5])), each(lambda x, y: x / y), 2),
              Case("fast_powf", (uniform(0.1, 10, [1.0, 2.0, 0.5]), uniform(-5, 5, [0.0, 1.0, 2.0])), each(math.pow), 64)]
FLOAT_TO_INT = [Case("float2int_rn", (lambda: _fill(EDGES + [2.5, 3.5, -2.5, 2.0**31, -(2.0**31), 2.0**40],
                                                     RNG.uniform(-1e3, 1e3, B)),), each(_float2int))]


def _ints(width: int) -> Callable[[], Arr]:
    edges = [0, 1, -1, 2, 3, -(2 ** (width - 1)), 2 ** (width - 1) - 1, 0x0F0F, 1 << (width - 2), 0x7F, 255, 256]
    info = np.iinfo(np.int32 if width == 32 else np.int64)
    return lambda: np.concatenate([np.asarray(edges, np.int64), RNG.integers(info.min, info.max, B, endpoint=True)])[:B]


BITS = {"popc": lambda w, x: bin(x).count("1"), "clz": lambda w, x: w - x.bit_length(),
        "ffs": lambda w, x: (x & -x).bit_length(), "brev": lambda w, x: _signed(int(f"{x:0{w}b}"[::-1], 2), w)}


# ---------------------------------------------------------------- running them


_TYPES = {np.float32: "tl.f32", np.float64: "tl.f64", np.int32: "tl.i32", np.int64: "tl.i64", np.uint32: "tl.u32",
          np.uint64: "tl.u64", np.bool_: "tl.int1"}


def kernel_for(fns: list[str], operands: tuple[Any, ...], result: Any) -> Any:
    """One kernel applying each of ``fns`` (as Triton code calls them) to its own rows of
    operands of ``operands`` dtypes, storing row k of the result: one build for the emulator."""
    name = "ld_" + "_".join(fns)[:60] + "_" + "_".join(np.dtype(d).name for d in operands)
    params = ", ".join(f"a{i}: Pointer[{_TYPES[d]}]" for i, d in enumerate(operands))
    body = []
    for k, fn in enumerate(fns):
        args = ", ".join(f"tl.load(a{i} + {k * B} + offs)" for i in range(len(operands)))
        body.append(f"    tl.store(o + {k * B} + offs, libdevice.{fn}({args}))")
    source = f"""import tile_lang as tl
import tile_lang.extra.cuda.libdevice as libdevice
from tile_lang import Pointer, constexpr


@tl.kernel
def {name}({params}, o: Pointer[{_TYPES[result]}], B: constexpr) -> None:
    offs = tl.arange(0, B)
""" + "\n".join(body) + "\n"
    return load(name, source)


def run(backend: str, fns: list[str], inputs: list[tuple[Arr, ...]], operands: tuple[Any, ...], result: Any) -> Arr:
    """The kernel's outputs (rows ``fns``), its output buffer poisoned (NaN, or a sentinel)."""
    kernel = kernel_for(fns, operands, result)
    columns = [np.concatenate([row[i] for row in inputs]).astype(d) for i, d in enumerate(operands)]
    poison = np.full(len(fns) * B, np.nan if np.dtype(result).kind == "f" else (1 if result is np.bool_ else 0x5A5A5A5A), result)
    with tl.backend(backend):
        args = [tl.to_device(c) for c in columns]
        out = tl.to_device(poison)
        kernel[(1,)](*args, out, B=B)
        return out.numpy().reshape(len(fns), B)


def assert_close(fn: str, got: Arr, want: Arr, dtype: Any, ulps: float, atol: float, inputs: tuple[Arr, ...]) -> None:
    """``got`` within ``ulps`` units in the last place of ``want`` (rounded to ``dtype``) plus
    ``atol``; NaN where ``want`` is NaN, infinities and (for exact cases) signed zeros equal."""
    with np.errstate(all="ignore"):
        rounded = want.astype(dtype)
        nan = np.isnan(rounded)
        ok = nan == np.isnan(got)
        same = got.astype(np.float64) == rounded.astype(np.float64)
        if ulps == 0 and atol == 0:
            same &= np.signbit(got) == np.signbit(rounded)
            ok &= same | nan
        else:
            finite = np.isfinite(rounded) & np.isfinite(got)
            err = np.abs(got.astype(np.float64) - want)
            bound = ulps * np.spacing(np.abs(rounded)).astype(np.float64) + atol
            ok &= nan | same | (finite & (err <= bound))
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, f"{fn}: at {[tuple(float(a[i]) for a in inputs) for i in bad[:5]]} got {got[bad[:5]]}, want {want[bad[:5]]}"


def _check(backend: str, cases: list[Case], operands: tuple[Any, ...], result: Any) -> None:
    inputs = [tuple(make() for make in case.inputs) for case in cases]
    rounded = [tuple(x.astype(d).astype(np.float64) if np.dtype(d).kind == "f" else x.astype(d) for x, d in zip(row, operands))
               for row in inputs]
    out = run(backend, [c.fn for c in cases], rounded, operands, result)
    for k, (case, row) in enumerate(zip(cases, rounded)):
        with np.errstate(all="ignore"):
            want = case.ref(*row)
        assert_close(case.fn, out[k], want, result if np.dtype(result).kind == "f" else np.float64, case.ulps,
                     case.atol, row)


FLOATS = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float_functions(backend: str, dtype: Any) -> None:
    cases = UNARY + [Case(fn, (anywhere,), _sqrt_directed(MODES[fn[-2:]], dtype)) for fn in DIRECTED_UNARY]
    cases += [Case(fn, (anywhere,), _reciprocal_directed(MODES[fn[-2:]], dtype)) for fn in RECIPROCALS]
    _check(backend, cases, (dtype,), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_float_functions(backend: str, dtype: Any) -> None:
    cases = BINARY + [Case(fn, (anywhere, anywhere), _div_directed(MODES[fn[-2:]], dtype)) for fn in DIRECTED_BINARY]
    cases.append(Case("nextafter", (anywhere, anywhere), lambda x, y: _step(x, y, dtype)))
    cases += [Case(fn, (anywhere, anywhere), _arith_directed(fn, dtype)) for fn in ARITHMETIC]
    _check(backend, cases, (dtype, dtype), dtype)
    _check(backend, THREE, (dtype, dtype, dtype), dtype)
    _check(backend, FOUR, (dtype,) * 4, dtype)
    _check(backend, WITH_INT, (dtype, np.int32), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_classification_functions(backend: str, dtype: Any) -> None:
    _check(backend, TESTS, (dtype,), np.bool_)
    finite = Case("finitef" if dtype is np.float32 else "isfinited", (anywhere,), each(lambda x: float(math.isfinite(x))))
    _check(backend, TO_INT + [finite], (dtype,), np.int32)


def test_f32_only_functions(backend: str) -> None:
    _check(backend, F32_ONLY, (np.float32,), np.float32)
    _check(backend, F32_BINARY, (np.float32, np.float32), np.float32)
    _check(backend, FLOAT_TO_INT, (np.float32,), np.int32)


BITCASTS = [("int_as_float", np.int32, np.float32, "<i"), ("uint_as_float", np.uint32, np.float32, "<I"),
            ("float_as_int", np.float32, np.int32, "<f"), ("float_as_uint", np.float32, np.int32, "<f"),
            ("longlong_as_double", np.int64, np.float64, "<q"), ("double_as_longlong", np.float64, np.int64, "<d")]


@pytest.mark.parametrize("fn, src, dst, code", BITCASTS, ids=[case[0] for case in BITCASTS])
def test_bitcasts(backend: str, fn: str, src: Any, dst: Any, code: str) -> None:
    """The bits kept (NaN payloads and signed zeros too): each input packed by struct and read
    back as an unsigned integer of its width is the output's bits."""
    width = 8 * np.dtype(src).itemsize
    inputs = _ints(width) if np.dtype(src).kind in "iu" else anywhere
    row = (inputs().astype(src),)
    got = run(backend, [fn], [row], (src,), dst)[0]
    unsigned = "<I" if width == 32 else "<Q"
    bits = [struct.unpack(unsigned, struct.pack(code, v))[0] for v in row[0].tolist()]
    assert got.view(np.uint32 if width == 32 else np.uint64).tolist() == bits


@pytest.mark.parametrize("width", [32, 64])
def test_bit_functions(backend: str, width: int) -> None:
    dtype = np.int32 if width == 32 else np.int64
    counts = [Case(fn, (_ints(width),), _bits(BITS[fn], width)) for fn in ("popc", "clz", "ffs")]
    _check(backend, counts, (dtype,), np.int32)
    _check(backend, [Case("brev", (_ints(width),), _bits(BITS["brev"], width))], (dtype,), dtype)
    _check(backend, [Case("mulhi", (_ints(width), _ints(width)), _bits(_mulhi(True), width))], (dtype, dtype), dtype)
    unsigned = np.uint32 if width == 32 else np.uint64
    _check(backend, [Case("mulhi", (_ints(width), _ints(width)), _bits(_mulhi(False), width))], (unsigned, unsigned),
           unsigned)
    if width == 32:
        _check(backend, [Case("byte_perm", (_ints(32), _ints(32), _ints(32)), _bits(_byte_perm, 32))],
               (np.int32, np.int32, np.int32), np.int32)


# ---------------------------------------------------------------- the dtypes each takes


@tl.kernel
def j0_of_ints(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, libdevice.j0(tl.load(x + offs)))  # type: ignore[type-var]


@tl.kernel
def popc_of_floats(x: Pointer[f32], y: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, libdevice.popc(tl.load(x + offs)))  # type: ignore[type-var]


@tl.kernel
def fast_expf_of_doubles(x: Pointer[tl.f64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, libdevice.fast_expf(tl.load(x + offs)))  # type: ignore[arg-type]


@tl.kernel
def pow_of_ints(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, libdevice.pow(offs, offs))  # type: ignore[type-var]


@tl.kernel
def atan2_of_a_half(x: Pointer[tl.f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, libdevice.atan2(v, v))  # type: ignore[type-var]


Refusal = tuple[Kernel[Any], str, list[Any]]  # a kernel, the message both backends refuse it with, its buffers' dtypes

WRONG_DTYPES: list[Refusal] = [
    (j0_of_ints, "libdevice.j0 takes (tl.f32) or (tl.f64), got (tl.i32)", [np.int32]),
    (popc_of_floats, "libdevice.popc takes (tl.i32) or (tl.i64), got (tl.f32)", [np.float32, np.int32]),
    (fast_expf_of_doubles, "libdevice.fast_expf takes (tl.f32), got (tl.f64)", [np.float64]),
    (pow_of_ints, "libdevice.pow takes (tl.f32, tl.f32) or (tl.f64, tl.f64) or (tl.f32, tl.i32) or (tl.f64, tl.i32), "
     "got (tl.i32, tl.i32)", [np.int32]),
    (atan2_of_a_half, "libdevice.atan2 takes (tl.f32, tl.f32) or (tl.f64, tl.f64), got (tl.f16, tl.f16)", [np.float16]),
]


def refusals(cases: list[Refusal]) -> pytest.MarkDecorator:
    """A test parametrised by ``(kernel, message, buffers)`` cases, each named by its function."""
    return pytest.mark.parametrize("kernel, message, buffers", cases,
                                   ids=[message.split()[0] for _, message, _ in cases])


@refusals(WRONG_DTYPES)
def test_wrong_dtypes_are_rejected_alike_by_both_backends(kernel: Kernel[Any], message: str, buffers: list[Any]) -> None:
    """Triton's tables: no f16, no integers for float functions, f32 only for the fast ones."""
    assert_refused_alike(kernel, message, buffers)


def assert_refused_alike(kernel: Kernel[Any], message: str, buffers: list[Any]) -> None:
    """Both backends refuse ``kernel`` (launched on zeroed ``buffers`` of these dtypes, BLOCK=8)
    with ``message``, at the line of its libdevice call."""
    args = [tl.to_device(np.zeros(8, dtype)) for dtype in buffers]
    ref = _reference_error(kernel, *args, BLOCK=8)
    comp = _compiler_error(kernel, BLOCK=8)
    line = _line(kernel, "libdevice.")
    assert (ref.lineno, comp.lineno) == (line, line)
    assert ref.message == comp.message == message


@tl.kernel
def promoted_operands(x: Pointer[f32], n: Pointer[i32], o: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    k = tl.load(n + offs)
    tl.store(o + offs, libdevice.pow(v, k) + libdevice.pow(v, 2) + libdevice.atan2(v, 1) + libdevice.ldexp(v, 3)
             + libdevice.hypot(v, 2.0) + libdevice.isnan(v).to(tl.f32) + libdevice.signbit(v).to(tl.f32))


def test_python_numbers_and_mixed_operands_pick_tritons_overload(backend: str) -> None:
    """``pow(f32, i32 block)`` is powi, ``pow(x, 2)`` too (2 is an i32), ``atan2(x, 1)`` promotes
    the i32 to f32, ``ldexp(x, 3)`` takes it as the exponent; all against float64."""
    x = RNG.uniform(-3, 3, 64).astype(np.float32)
    n = RNG.integers(-5, 6, 64).astype(np.int32)
    wide = x.astype(np.float64)
    want = (wide ** n + wide**2 + np.arctan2(wide, 1) + np.ldexp(wide, 3) + np.hypot(wide, 2) + np.signbit(wide))
    with tl.backend(backend):
        out = tl.to_device(np.full(64, np.nan, np.float32))
        promoted_operands[(1,)](tl.to_device(x), tl.to_device(n), out, BLOCK=64)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_the_typed_flaggems_style_kernel_runs(backend: str) -> None:
    """tests/typing_cases/good_kernels.py's libdevice kernel (mypy checks it clean) against float64."""
    from tests.typing_cases.good_kernels import libdevice_calls

    x = _fill([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0], RNG.uniform(-1.9, 1.9, 64))[:64].astype(np.float32)
    n = RNG.integers(-4, 5, 64).astype(np.int32)
    wide = np.where(np.isfinite(x), x, 0).astype(np.float64)
    with np.errstate(all="ignore"):
        special = (each(lambda v: _bessel_first(0, v))(wide) + each(_erfinv)(wide * 0.5)
                   + each(lambda v: math.inf if v <= 0 and v == math.floor(v) else math.lgamma(v))(wide)
                   + each(_round_half_away)(wide))
        stepped = _step(np.fmod(wide, 1.5), np.zeros(64), np.float32) + np.ldexp(wide, n)
        want = wide**2 + wide**n.astype(np.float64) + wide**3 + special + stepped
    with tl.backend(backend):
        out, signs = tl.to_device(np.full(64, np.nan, np.float32)), tl.to_device(np.full(64, -7, np.int32))
        libdevice_calls[(1,)](tl.to_device(x), tl.to_device(n), out, signs, BLOCK=64)
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=2e-5)
        np.testing.assert_array_equal(signs.numpy(), np.signbit(x) + [bin(v).count("1") for v in n.view(np.uint32).tolist()])


def _all_kernels() -> list[Any]:
    """Every kernel the tests above build (one per group of functions and dtypes)."""
    kernels = []
    for dtype in FLOATS:
        kernels += [kernel_for([c.fn for c in UNARY] + DIRECTED_UNARY + RECIPROCALS, (dtype,), dtype),
                    kernel_for([c.fn for c in BINARY] + DIRECTED_BINARY + ["nextafter"] + ARITHMETIC, (dtype, dtype), dtype),
                    kernel_for([c.fn for c in THREE], (dtype,) * 3, dtype), kernel_for([c.fn for c in FOUR], (dtype,) * 4, dtype),
                    kernel_for([c.fn for c in WITH_INT], (dtype, np.int32), dtype),
                    kernel_for([c.fn for c in TESTS], (dtype,), np.bool_),
                    kernel_for([c.fn for c in TO_INT] + ["finitef" if dtype is np.float32 else "isfinited"], (dtype,),
                               np.int32)]
    for width, (signed, unsigned) in ((32, (np.int32, np.uint32)), (64, (np.int64, np.uint64))):
        kernels += [kernel_for(["popc", "clz", "ffs"], (signed,), np.int32), kernel_for(["brev"], (signed,), signed),
                    kernel_for(["mulhi"], (signed, signed), signed), kernel_for(["mulhi"], (unsigned, unsigned), unsigned)]
    return kernels + [kernel_for([c.fn for c in F32_ONLY], (np.float32,), np.float32),
                      kernel_for([c.fn for c in F32_BINARY], (np.float32,) * 2, np.float32),
                      kernel_for(["float2int_rn"], (np.float32,), np.int32),
                      kernel_for(["byte_perm"], (np.int32,) * 3, np.int32), promoted_operands,
                      *(kernel_for([fn], (src,), dst) for fn, src, dst, _ in BITCASTS)]


@pytest.mark.slow
def test_the_generated_cuda_compiles_with_nvcc(tmp_path: Any) -> None:
    """Every spelling is a CUDA device function nvcc knows, for sm_90 and sm_80 (and NVRTC where installed)."""
    assert_compiles([(k, {"BLOCK": 64} if k is promoted_operands else {"B": B}) for k in _all_kernels()], tmp_path)


def assert_compiles(kernels: list[tuple[Any, dict[str, Any]]], tmp_path: Any) -> None:
    """Each kernel's CUDA for its constexprs compiles with nvcc for sm_90 and sm_80 and with NVRTC,
    whichever are installed (skipped where neither is)."""
    from tile_lang.compiler import static_spec

    from tests.compiler.conftest import NVCC, NVRTC
    from tests.compiler.test_nvcc import _check

    if NVCC is None and NVRTC is None:
        pytest.skip("neither nvcc nor libnvrtc is here: the generated CUDA cannot be compile-checked")
    for kernel, constexprs in kernels:
        _check(kernel, static_spec(kernel, constexprs), tmp_path)
