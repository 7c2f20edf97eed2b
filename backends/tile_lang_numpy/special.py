"""Special functions NumPy lacks, vectorised in float64 for the libdevice family: the Bessel
functions j0, j1, y0, y1 (absolute error below 1e-10, far below f32's), erfinv and erfcinv
(Newton's method on ``math.erf``/``math.erfc`` to float64 accuracy), and C's lgamma and tgamma
(``math``'s, with C's values at the poles and on overflow)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tile_lang_numpy.values import Array

_GAMMA = 0.57721566490153286061  # Euler's constant
_SERIES_END = 12.0  # below: the power series; from here on: Hankel's asymptotic expansion
_TERMS = 60


def _series(x: Array, n: int) -> tuple[Array, Array]:
    """J_n(x) and Y_n(x) for n in (0, 1) and 0 < x < 12 by their power series (Abramowitz and
    Stegun 9.1.10-11): the terms peak near 1e4, so the sums keep about 1e-12 absolutely."""
    half = x / 2
    q = -(half * half)
    term = half**n / math.factorial(n)  # (x/2)^n (-x^2/4)^k / (k! (n+k)!)
    psi = -_GAMMA + (-_GAMMA + sum(1.0 / j for j in range(1, n + 1)))  # psi(k+1) + psi(n+k+1) at k = 0
    j_sum = term
    y_sum = psi * term
    for k in range(1, _TERMS):
        term = term * q / (k * (n + k))
        psi = psi + 1.0 / k + 1.0 / (n + k)
        j_sum = j_sum + term
        y_sum = y_sum + psi * term
    y = 2 / np.pi * np.log(half) * j_sum - y_sum / np.pi
    if n == 1:
        y = y - 2 / (np.pi * x)
    return j_sum, y


def _hankel(x: Array, n: int) -> tuple[Array, Array]:
    """J_n(x) and Y_n(x) for x >= 12 by Hankel's expansion (A&S 9.2.5-10), its terms summed until
    they stop shrinking (the smallest is below 1e-10 at x = 12); the phase ``x - (2n+1) pi/4`` is
    taken through ``cos x`` and ``sin x``, so large ``x`` keeps its accuracy."""
    mu = 4.0 * n * n
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 40):
        step = (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        nxt = term * step
        if k > 2 and bool(np.all(np.abs(nxt) >= np.abs(term))):
            break
        term = nxt
        if k % 2:
            q = q + (-1) ** (k // 2) * term
        else:
            p = p + (-1) ** (k // 2) * term
    c, s = np.cos(x), np.sin(x)
    # cos and sin of x - pi/4 (n = 0) or x - 3pi/4 (n = 1)
    cw, sw = ((c + s) / np.sqrt(2), (s - c) / np.sqrt(2)) if n == 0 else ((s - c) / np.sqrt(2), -(c + s) / np.sqrt(2))
    scale = np.sqrt(2 / (np.pi * x))
    return scale * (p * cw - q * sw), scale * (p * sw + q * cw)


def bessel(x: Array, n: int, second: bool) -> Array:
    """J_n (``second`` False) or Y_n of ``x`` (float64), n in (0, 1), with C's special values:
    J is even (J1 odd) and 0 at infinity; Y is NaN below 0, -inf at 0, 0 at +inf."""
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        small = np.where((ax > 0) & (ax < _SERIES_END), ax, 1.0)
        large = np.where(np.isfinite(ax) & (ax >= _SERIES_END), ax, _SERIES_END)
        js, ys = _series(small, n)
        jl, yl = _hankel(large, n)
        value = np.where(ax < _SERIES_END, ys if second else js, yl if second else jl)
    if second:
        value = np.where(ax == 0, -np.inf, value)
        value = np.where(np.isposinf(x), 0.0, value)
        return np.where((x < 0) | np.isnan(x), np.nan, value)
    value = np.where(ax == 0, 1.0 if n == 0 else 0.0, value)
    value = np.where(np.isinf(x), 0.0, value)
    value = np.where(np.isnan(x), np.nan, value)
    return np.where(np.signbit(x), -value, value) if n == 1 else value


_erf_each = np.frompyfunc(math.erf, 1, 1)
_erfc_each = np.frompyfunc(math.erfc, 1, 1)


def _erf(x: Array) -> Array:
    return np.asarray(_erf_each(x), dtype=np.float64)


def _erfc(x: Array) -> Array:
    return np.asarray(_erfc_each(x), dtype=np.float64)
_NEWTON = 8


def _erfcx(x: Array) -> Array:
    """``erfc(x) * exp(x*x)`` for x >= 0: directly below 26, by its asymptotic series beyond."""
    small = np.minimum(x, 26.0)
    direct = _erfc(small) * np.exp(small * small)
    t = 1.0 / (2.0 * x * x)
    series = (1 - t + 3 * t * t - 15 * t**3 + 105 * t**4) / (x * np.sqrt(np.pi))
    out: Array = np.where(x < 26.0, direct, series)
    return out


def _erfc_tail(z: Array) -> Array:
    """x >= 0 with erfc(x) == z, for 0 < z <= 0.5: Newton's method on log(erfc(x)) - log(z),
    whose derivative ``-2 / (sqrt(pi) erfcx(x))`` stays near ``-2x``, from ``sqrt(-log z)``."""
    x: Array = np.sqrt(-np.log(z))
    for _ in range(_NEWTON):
        ratio = _erfcx(x)
        x = x + (np.log(ratio) - x * x - np.log(z)) * ratio * (np.sqrt(np.pi) / 2)
    return x


def _erf_core(y: Array) -> Array:
    """x with erf(x) == y for |y| <= 0.5: Newton's method from ``y sqrt(pi) / 2``, below the
    root, where erf's concavity keeps every step below it too."""
    x: Array = y * (np.sqrt(np.pi) / 2)
    for _ in range(_NEWTON):
        x = x - (_erf(x) - y) * (np.sqrt(np.pi) / 2) * np.exp(x * x)
    return x


def erfinv(y: Array) -> Array:
    """The inverse of erf on [-1, 1] (±inf at ±1, NaN outside), through erfc beyond |y| = 0.5
    (``1 - |y|`` is exact there)."""
    a = np.abs(y)
    with np.errstate(all="ignore"):
        core = _erf_core(np.where(a <= 0.5, y, 0.0))
        tail = np.copysign(_erfc_tail(np.where((a > 0.5) & (a < 1), 1 - a, 0.5)), y)
    out = np.where(a <= 0.5, core, tail)
    out = np.where(a == 1, np.copysign(np.inf, y), out)
    return np.where((a > 1) | np.isnan(y), np.nan, out)


def erfcinv(z: Array) -> Array:
    """The inverse of erfc on [0, 2] (inf at 0, -inf at 2, NaN outside): the tail below 0.5,
    erfinv(1 - z) up to 1.5, and -erfcinv(2 - z) above (both differences exact)."""
    with np.errstate(all="ignore"):
        low = _erfc_tail(np.where((z > 0) & (z <= 0.5), z, 0.5))
        mid = _erf_core(np.where((z > 0.5) & (z < 1.5), 1 - z, 0.0))
        high = -_erfc_tail(np.where((z >= 1.5) & (z < 2), 2 - z, 0.5))
    out = np.where(z <= 0.5, low, np.where(z < 1.5, mid, high))
    out = np.where(z == 0, np.inf, np.where(z == 2, -np.inf, out))
    return np.where((z < 0) | (z > 2) | np.isnan(z), np.nan, out)


def _lgamma(v: float) -> float:
    """C's lgamma: +inf at the poles (0 and the negative integers) and at ±inf."""
    if math.isnan(v):
        return v
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):
        return math.inf


def _tgamma(v: float) -> float:
    """C's tgamma: ±inf at ±0, NaN at the negative integers and -inf, inf on overflow."""
    if v == 0:
        return math.copysign(math.inf, v)
    if math.isnan(v) or v == -math.inf or (v < 0 and v == math.floor(v)):
        return math.nan
    try:
        return math.gamma(v)
    except OverflowError:
        return math.inf


def _elementwise(fn: Callable[[float], float]) -> Callable[[Array], Array]:
    """``fn`` of each element, as float64."""
    each = np.frompyfunc(fn, 1, 1)

    def apply(x: Array) -> Array:
        out: Array = np.asarray(each(x.astype(np.float64)), dtype=np.float64)
        return out
    return apply


lgamma = _elementwise(_lgamma)
tgamma = _elementwise(_tgamma)
