"""Special functions NumPy lacks, vectorised in float64 for the libdevice family: the Bessel
functions j0, j1, y0, y1 (absolute error below 1e-10, far below f32's), jn and yn (recurrences
from them), the modified Bessel functions I0 and I1, erfinv and erfcinv (Newton's method on
``math.erf``/``math.erfc`` to float64 accuracy), erfcx, normcdf and its inverse, and C's lgamma
and tgamma (``math``'s, with C's values at the poles and on overflow)."""

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


def _erfc_tail(z: Array) -> Array:
    """x >= 0 with erfc(x) == z, for 0 < z <= 0.5: Newton's method on log(erfc(x)) - log(z),
    whose derivative ``-2 / (sqrt(pi) erfcx(x))`` stays near ``-2x``, from ``sqrt(-log z)``."""
    x: Array = np.sqrt(-np.log(z))
    for _ in range(_NEWTON):
        ratio = erfcx(x)
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


# ---------------------------------------------------------------- erfcx, normcdf, I0/I1, jn, yn


def _two_product(a: Array, b: Array) -> tuple[Array, Array]:
    """``a * b`` and its rounding error, exactly (Dekker's product of Veltkamp's halves; no overflow
    for |a|, |b| below 1e150)."""
    def halves(v: Array) -> tuple[Array, Array]:
        c = 134217729.0 * v  # 2**27 + 1
        high = c - (c - v)
        return high, v - high
    p = a * b
    ah, al = halves(a)
    bh, bl = halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _exp_square(x: Array) -> Array:
    """``exp(x * x)``, the square's rounding error kept (``exp(hi) * (1 + lo)``): a rounded
    square would cost ``x * x`` ulps of the result."""
    hi, lo = _two_product(x, x)
    out: Array = np.exp(hi) * (1.0 + lo)
    return out


_ASYMPTOTIC = 26.0  # erfc(x) underflows past 26.5; from here on, erfcx's asymptotic series


def erfcx(x: Array) -> Array:
    """``exp(x*x) * erfc(x)`` in float64: below 26 the two factors (the square's error kept),
    from there the asymptotic series ``1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k`` (twelve
    terms: 1e-26 at 26); for x < 0, ``2 exp(x*x) - erfcx(-x)`` (inf below -26.6)."""
    a = np.abs(x)
    with np.errstate(all="ignore"):
        small = np.where(a < _ASYMPTOTIC, a, 0.0)
        direct = _erfc(small) * _exp_square(small)
        large = np.where(a >= _ASYMPTOTIC, a, _ASYMPTOTIC)
        t = 1.0 / (2.0 * large * large)
        term, series = np.ones_like(large), np.ones_like(large)
        for k in range(1, 13):
            term = -term * (2 * k - 1) * t
            series = series + term
        positive = np.where(a < _ASYMPTOTIC, direct, series / (large * np.sqrt(np.pi)))
        positive = np.where(np.isinf(a), 0.0, positive)
        negative = 2.0 * _exp_square(np.where(a < 27.0, a, 27.0)) - positive
        negative = np.where(a < 27.0, negative, np.inf)
    out: Array = np.where(np.isnan(x), np.nan, np.where(x < 0, negative, positive))
    return out


_SQRT_HALF = 0.7071067811865476  # 1/sqrt(2) rounded, and its error below
_SQRT_HALF_LOW = -4.833646656726457e-17


def normcdf(x: Array) -> Array:
    """``erfc(-x / sqrt(2)) / 2``: the argument as a double-double (the product's error and
    1/sqrt(2)'s kept), its low part applied to first order through erfc's derivative; 0 and 1
    beyond |x| = 40."""
    clipped = np.clip(np.nan_to_num(x), -40.0, 40.0)
    with np.errstate(all="ignore"):
        hi, lo = _two_product(-clipped, np.full_like(clipped, _SQRT_HALF))
        lo = lo - clipped * _SQRT_HALF_LOW
        value = 0.5 * (_erfc(hi) - lo * (2 / np.sqrt(np.pi)) * np.exp(-hi * hi))
    out: Array = np.where(np.isnan(x), np.nan, np.where(x > 40, 1.0, np.where(x < -40, 0.0, value)))
    return out


def normcdfinv(p: Array) -> Array:
    """The inverse of normcdf: ``-sqrt(2) erfcinv(2 p)`` (2p exact)."""
    out: Array = -np.sqrt(2.0) * erfcinv(2.0 * p)
    return np.where(out == 0, 0.0, out)


def bessel_i(x: Array, n: int) -> Array:
    """The modified Bessel function I_n, n in (0, 1): its power series (positive terms, so
    relative accuracy) up to |x| = 30, then the asymptotic ``e^x / sqrt(2 pi x) sum (-1)^k a_k /
    x^k`` summed until its terms stop shrinking, ``e^x`` taken in halves so the series overflows
    only where I_n does; both in long double (x87's 64 bits where NumPy has them), as their
    roundings add up to several ulps of float64."""
    a = np.abs(x)
    with np.errstate(all="ignore"):
        small = np.where(a <= 30.0, a, 0.0).astype(np.longdouble)
        q = small * small / 4
        term = (small / 2) ** n
        total = term.copy()
        for k in range(1, 120):
            term = term * q / (k * (k + n))
            total = total + term
        large = np.where(a > 30.0, a, 30.0).astype(np.longdouble)
        mu = 4.0 * n * n
        step, series = np.ones_like(large), np.ones_like(large)
        for k in range(1, 60):
            nxt = -step * (mu - (2 * k - 1) ** 2) / (8.0 * k * large)
            if bool(np.all(np.abs(nxt) >= np.abs(step))):
                break
            step = nxt
            series = series + step
        half = np.exp(large / 2)
        asymptotic = half * (half / np.sqrt(2 * np.pi * large)) * series
        value = np.where(a <= 30.0, total, asymptotic).astype(np.float64)
    value = np.where(np.isinf(a), np.inf, value)
    out: Array = np.where(np.isnan(x), np.nan, np.where(np.signbit(x) & (n == 1), -value, value))
    return out


def _orders(n: Array) -> tuple[Array, Array]:
    """|n| and the sign (-1)^n that a negative order gives J_n and Y_n."""
    order = np.abs(n.astype(np.int64))
    flip = np.where((n < 0) & (order % 2 == 1), -1.0, 1.0)
    return order, flip


def bessel_yn(n: Array, x: Array) -> Array:
    """Y_n for integer n by the forward recurrence from Y0 and Y1 (stable for Y), each lane stopped
    at its own order; NaN below 0, -inf at 0, 0 at +inf."""
    order, flip = _orders(n)
    previous, current = bessel(x, 0, True), bessel(x, 1, True)
    out = np.where(order == 0, previous, current)
    safe = np.where(x > 0, x, 1.0)
    with np.errstate(all="ignore"):
        for k in range(1, int(order.max(initial=0))):
            previous, current = current, (2 * k / safe) * current - previous
            out = np.where(order == k + 1, current, out)
    out = np.where(np.isposinf(x), 0.0, np.where(x == 0, -np.inf, out))
    result: Array = np.where((x < 0) | np.isnan(x), np.nan, flip * out)
    return result


def bessel_jn(n: Array, x: Array) -> Array:
    """J_n for integer n: from J0 and J1 upward where |x| >= n (stable there); below, the power
    series under |x| = 1 and otherwise Miller's downward recurrence from an order well above n,
    normalised by ``J0 + 2 (J2 + J4 + ...) = 1`` and rescaled as it grows. J_n(-x) = (-1)^n J_n(x),
    0 at infinity."""
    order, flip = _orders(n)
    a = np.abs(x)
    safe = np.where((a > 0) & np.isfinite(a), a, 1.0)
    top = int(order.max(initial=0))
    with np.errstate(all="ignore"):
        previous, current = bessel(a, 0, False), bessel(a, 1, False)
        upward = np.where(order == 0, previous, current)
        for k in range(1, top):
            previous, current = current, (2 * k / safe) * current - previous
            upward = np.where(order == k + 1, current, upward)
        below = np.where(safe < 1, _jn_series(order, safe), _jn_miller(order, safe, top))
        value = np.where(a >= order, upward, below)
    value = np.where(a == 0, np.where(order == 0, 1.0, 0.0), value)
    value = np.where(np.isinf(a), 0.0, value)
    sign = np.where(np.signbit(x) & (order % 2 == 1), -1.0, 1.0)
    out: Array = np.where(np.isnan(x), np.nan, flip * sign * value)
    return out


_LGAMMA = np.vectorize(math.lgamma, otypes=[np.float64])


def _jn_series(order: Array, x: Array) -> Array:
    """J_n(x) for 0 < x < 1 by its power series, the first term ``(x/2)^n / n!`` through logs."""
    q = -(x / 2) ** 2
    term = np.exp(order * np.log(x / 2) - _LGAMMA(order + 1.0))
    total: Array = term.copy()
    for k in range(1, 30):
        term = term * q / (k * (order + k))
        total = total + term
    return total


def _jn_miller(order: Array, x: Array, top: int) -> Array:
    """J_n(x) for 1 <= x < n by Miller's downward recurrence (J_{k-1} = 2k/x J_k - J_{k+1}) from
    an even order past ``top + sqrt(40 top)``, where J is negligible."""
    start = 2 * ((top + int(np.sqrt(40.0 * max(top, 1))) + 20) // 2)
    above, here = np.zeros_like(x), np.ones_like(x)  # J_{k+1}, J_k (unnormalised)
    total, kept = 2 * here, np.zeros_like(x)  # 2 (J_2 + J_4 + ...) so far (start is even); J_n
    for k in range(start, 0, -1):
        above, here = here, (2 * k / x) * here - above
        kept = np.where(order == k - 1, here, kept)
        if (k - 1) % 2 == 0 and k > 1:
            total = total + 2 * here
        scale = np.where(np.abs(here) > 1e250, 1e-250, 1.0)
        above, here, total, kept = above * scale, here * scale, total * scale, kept * scale
    out: Array = kept / (total + here)  # here is J_0 now
    return out
