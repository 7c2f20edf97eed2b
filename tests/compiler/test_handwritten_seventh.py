"""A seventh set of hand-written kernels, one per class of gap an audit of the CPU emulator found
between how it modelled an instruction and how the GPU computes it (the PTX ISA, the CUDA Math
API, and the SASS ptxas makes for sm_90): f32 atomic adds flush subnormals, libdevice's llrint and
llround saturate and give NaN the sign bit, the approximate divisions and exponentials stay within
their documented errors (and __fdividef's range where the reciprocal flushes), and Triton's f32
exp2 flushes subnormal results. Each runs on the NumPy reference, the emulator (sm_80 and sm_90)
and the GPU when selected, outputs poisoned first, against NumPy in float64 or exact integers."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
import tile_lang.extra.libdevice as libdevice
from tile_lang import Pointer, constexpr, f32, f64, i64

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
F = TypeVar("F", f32, f64)
Arr = np.ndarray[Any, Any]


# ---------------------------------------------------------------- atomic adds of subnormals

@tl.kernel
def two_adds(x_ptr: Pointer[F], v_ptr: Pointer[F], w_ptr: Pointer[F], o_ptr: Pointer[F], B: constexpr) -> None:
    """Two atomic adds on each lane's own address: the first's old value kept (``atom``), the
    second's dropped (``red``, or Hopper's vector ``red`` where the lanes are contiguous)."""
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.atomic_add(x_ptr + offs, tl.load(v_ptr + offs)))
    tl.atomic_add(x_ptr + offs, tl.load(w_ptr + offs), sem="relaxed")


def _flushed(a: Arr) -> Arr:
    """Subnormals as zeros of their sign."""
    out: Arr = np.where(np.abs(a) < np.finfo(a.dtype).tiny, np.copysign(a.dtype.type(0), a), a).astype(a.dtype)
    return out


def _near_subnormals(rng: np.random.Generator, host: type, b: int) -> Arr:
    """Operands about the smallest normal: subnormals, signed zeros, normals that cancel to a
    subnormal, and ordinary values."""
    tiny = float(np.finfo(host).tiny)
    edges = [0.0, -0.0, tiny / 3, -tiny / 7, tiny * 2.0**-23, tiny, -tiny, 1.5 * tiny, -1.5 * tiny, 1.0, -2.0]
    scale = np.where(rng.random(b) < 0.7, tiny, 1.0)
    return np.concatenate([np.asarray(edges), rng.uniform(-3, 3, b) * scale])[:b].astype(host)


@pytest.mark.parametrize("host", [np.float32, np.float64])
def test_f32_atomic_adds_flush_subnormals(target: str, host: type) -> None:
    """``atom.add.f32`` flushes subnormal operands and sums to zeros of their sign (SASS
    ``ATOMG.E.ADD.F32.FTZ.RN``; the PTX ISA says so; an NVIDIA forum report saw 1e-40 vanish), as
    Triton's f32 atomic_add, the same instruction, does; f64 adds keep subnormals. The emulator's
    compare-and-swap loop added exactly and the reference did too (silent: 1e-40 stayed 1e-40)."""
    rng, b = np.random.default_rng(71), 64
    x0, v, w = (_near_subnormals(rng, host, b) for _ in range(3))
    x0[:4], v[:4], w[:4] = [1.5 * np.finfo(host).tiny, 1e-40, -0.0, 0.0], [-np.finfo(host).tiny, 0.0, -1e-45, 1e-40], 0
    with tl.backend(target):
        x, o = tl.to_device(x0.copy()), tl.to_device(np.full(b, 12345.0, host))
        two_adds[(1,)](x, tl.to_device(v), tl.to_device(w), o, B=b)
        got_x, got_o = x.numpy(), o.numpy()
    flush = _flushed if host is np.float32 else (lambda a: a)
    want = flush(flush(flush(flush(x0) + flush(v))) + flush(w))
    bits = np.uint32 if host is np.float32 else np.uint64
    np.testing.assert_array_equal(got_o.view(bits), x0.view(bits))
    np.testing.assert_array_equal(got_x.view(bits), want.view(bits))
    if host is np.float64:  # subnormals survive: the test would not tell a flushing f64 add apart otherwise
        assert (np.abs(want[want != 0]) < np.finfo(host).tiny).any()


# ---------------------------------------------------------------- llrint and llround at the edges

@tl.kernel
def nearest_i64(x_ptr: Pointer[F], o_ptr: Pointer[i64], B: constexpr) -> None:
    """libdevice's rounding conversions to i64, of floats beyond its range and NaN."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, libdevice.llrint(x))
    tl.store(o_ptr + B + offs, libdevice.llround(x))


def _saturated(value: int) -> int:
    return max(-(2**63), min(2**63 - 1, value))


@pytest.mark.parametrize("host", [np.float32, np.float64])
def test_llrint_and_llround_saturate_and_give_nan_the_sign_bit(target: str, host: type) -> None:
    """llrint is ``cvt.rni.s64`` and llround tests its range itself (llroundf: NaN and x <= -2**63
    give INT64_MIN, x >= 2**63 INT64_MAX): beyond the range both saturate, and NaN is the sign bit
    alone, as the H100 converts NaN to 64 bits. The emulator took the host's, whose x86
    conversion gave INT64_MIN past 2**63 (2**63 rounded to the most negative value); the
    reference gave NaN 0."""
    rng, b = np.random.default_rng(72), 64
    edges = [np.nan, -np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0**63, -(2.0**63), 2.0**64, 9.2e18, -9.2e18,
             2.0**62 + 2.0**40, 2.5, -2.5, 0.5, -0.5, 3.5, 1e19, -1e19, 3e38]
    x: Arr = np.concatenate([np.asarray(edges), rng.standard_normal(b) * 10.0 ** rng.integers(0, 25, b)])[:b].astype(host)
    with tl.backend(target):
        o = tl.to_device(np.full(2 * b, 12345, np.int64))
        nearest_i64[(1,)](tl.to_device(x), o, B=b)
        got = o.numpy().reshape(2, b)
    rint, away = [], []
    for value in x.tolist():
        if math.isnan(value):
            rint.append(-(2**63))
            away.append(-(2**63))
        elif math.isinf(value):
            rint.append(_saturated(2**64 if value > 0 else -(2**64)))
            away.append(rint[-1])
        else:
            exact = Fraction(value)
            rint.append(_saturated(round(exact)))
            away.append(_saturated(int(math.copysign(math.floor(abs(exact) + Fraction(1, 2)), value))))
    np.testing.assert_array_equal(got[0], np.asarray(rint, np.int64))
    np.testing.assert_array_equal(got[1], np.asarray(away, np.int64))


# ---------------------------------------------------------------- approximate divisions

@tl.kernel
def divisions(x_ptr: Pointer[f32], y_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """f32 ``/`` (Triton's div.full) and ``__fdividef`` (div.approx) on the same operands."""
    offs = tl.arange(0, B)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, x / y)
    tl.store(o_ptr + B + offs, libdevice.fast_dividef(x, y))


def _within(got: Arr, want: Arr, ulps: float | Arr, where: Arr) -> None:
    """``got`` within ``ulps`` units in the last place of ``want`` (float64) rounded to f32, at ``where``."""
    with np.errstate(all="ignore"):  # lanes outside ``where`` may overflow f32 or be NaN
        rounded = want.astype(np.float32)
        err = np.abs(got.astype(np.float64) - want)
        bound = ulps * np.spacing(np.abs(rounded)).astype(np.float64)
    bad = np.flatnonzero(where & ~(err <= bound))
    assert bad.size == 0, f"at {bad[:5]}: got {got[bad[:5]]}, want {want[bad[:5]]}"


def _random_floats(rng: np.random.Generator, b: int) -> Arr:
    """Finite f32 values with uniformly drawn bit patterns: every exponent, subnormals included."""
    bits = rng.integers(0, 0x7F800000, b, dtype=np.uint32) | (rng.integers(0, 2, b, dtype=np.uint32) << np.uint32(31))
    return bits.view(np.float32)


def test_approximate_divisions_over_the_full_range(target: str) -> None:
    """div.full.f32 is within 2 ulp everywhere (it quarters both operands for |y| > 2**126 and
    scales a subnormal y by 2**24: SASS); __fdividef is within 2 ulp for 2**-126 <= |y| <=
    2**126, and beyond 2**126 gives 0, or NaN for an infinite x (the CUDA Math API: its
    reciprocal flushes). The emulator divided exactly, so an exact comparison passed there and
    not on the GPU (now, as there, a quarter of the quotients are not the nearest float); the
    reference's fast_dividef gave x / y past 2**126."""
    rng, b = np.random.default_rng(73), 512
    x, y = _random_floats(rng, b), _random_floats(rng, b)
    x[:12] = [np.inf, -np.inf, 1.0, -3.0, np.nan, 0.0, 7.5, -1e-30, np.inf, 2.0, 1e-40, 5.0]
    y[:12] = [1e38, -2.0**127, 2.0**126 * 1.5, -3e38, 1.0, 1e38, np.inf, 1e-40, 3.0, 0.0, -1.4e-45, 2.0**-126]
    with tl.backend(target):
        o = tl.to_device(np.full(2 * b, 12345.0, np.float32))
        divisions[(1,)](tl.to_device(x), tl.to_device(y), o, B=b)
        full, fast = o.numpy().reshape(2, b)
    with np.errstate(all="ignore"):
        want = x.astype(np.float64) / y.astype(np.float64)
    nan = np.isnan(want)
    normal = (np.abs(want) >= 2.0**-126) & (np.abs(want) < 2.0**127)
    np.testing.assert_array_equal(np.isnan(full), nan)
    _within(full, want, 2, normal)
    exact = np.isinf(want) | (want == 0)  # infinite or zero operands
    np.testing.assert_array_equal(full[exact], want[exact].astype(np.float32))
    far = (np.abs(y) > 2.0**126) & ~np.isnan(y)
    in_range = (np.abs(y) >= 2.0**-126) & (np.abs(y) <= 2.0**126)
    _within(fast, want, 2, normal & in_range)
    np.testing.assert_array_equal(np.isnan(fast[far]), np.isinf(x[far]) | np.isnan(x[far]))
    assert (fast[far & np.isfinite(x)] == 0).all()
    assert far.sum() >= 5 and (normal & in_range).sum() >= b // 3
    if target != "numpy":  # x times a reciprocal: about a quarter of the quotients are not the nearest
        assert (full[normal] != want[normal].astype(np.float32)).mean() > 0.05


# ---------------------------------------------------------------- exponentials near underflow

@tl.kernel
def exponentials(x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """f32 exp2 (Triton's ex2.approx.ftz) and exp (ex2.approx of x * log2 e, subnormals kept)."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.exp2(x))
    tl.store(o_ptr + B + offs, tl.exp(x * 0.6931471805599453))


def test_exp2_flushes_subnormal_results_and_exp_keeps_them(target: str) -> None:
    """Triton compiles f32 ``tl.exp2`` to ``ex2.approx.ftz.f32``: a result below 2**-126 is 0 (the
    reference's np.exp2 kept 2**-140). ``tl.exp`` uses ``ex2.approx.f32``, which ptxas builds as
    the square of ex2(x / 2) below -126, so its subnormal results stay; both within their
    documented errors (2 ulp; __expf's 2 + 1.2|x|), exact at the specials."""
    rng, b = np.random.default_rng(74), 256
    x = np.concatenate([[-np.inf, np.inf, np.nan, 0.0, -0.0, -126.0, -127.0, -149.0, -150.0, 1.0, 20.0, -140.5],
                        rng.uniform(-155, -100, b // 2), rng.uniform(-30, 30, b)])[:b].astype(np.float32)
    with tl.backend(target):
        o = tl.to_device(np.full(2 * b, 12345.0, np.float32))
        exponentials[(1,)](tl.to_device(x), o, B=b)
        got2, got_e = o.numpy().reshape(2, b)
    t = (x * np.float32(0.6931471805599453)).astype(np.float64)  # the kernel's product, in f32
    with np.errstate(all="ignore"):
        want2, want_e = np.exp2(x.astype(np.float64)), np.exp(t)
    finite = np.isfinite(x)
    normal2 = finite & (want2 >= 2.0**-126)
    _within(got2, want2, 2, normal2)
    assert (got2[finite & (want2 < 2.0**-126)] == 0).all()
    e = np.isfinite(t) & (want_e < 2.0**127)
    _within(got_e, want_e, 2 + 1.2 * np.abs(t), e)
    assert (got_e[e & (want_e < 2.0**-126) & (want_e > 2.0**-140)] > 0).all()
    for got in (got2, got_e):
        np.testing.assert_array_equal(got[:3], [0.0, np.inf, np.nan])
        np.testing.assert_array_equal(got[3:5], [1.0, 1.0])
