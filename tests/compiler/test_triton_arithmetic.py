"""Triton 3.6's result dtypes for 16-bit arithmetic, on the NumPy reference and on the generated
CUDA (CPU emulator): ``/`` and ``%`` of f16/bf16 compute in f32 and return f32; ``tl.max``/``tl.min``
of narrow floats return f32 (bf16 also with indices), ``tl.cumsum``/``tl.cumprod`` of bf16 f32;
``tl.maximum``/``tl.minimum``/``tl.clamp`` compare bf16 in f32; f16 meets bf16 in f16 and bf16
meets an integer block in f32. Also four constructs Triton accepts: ``tl.broadcast_to`` of a
scalar, Python's ``min``/``max`` on blocks, a float ``other=`` on integer elements, and
``tl.cumsum(..., dtype=)``. Each kernel asserts its dtypes with ``tl.static_assert`` and stores
into poisoned f32 outputs, compared against float64 NumPy on seeded random inputs; an f16 or
bf16 intermediate (the old types) misses the tolerances by orders of magnitude."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, bf16, constexpr, f16, f32, i8, i32

from tile_lang.compiler import compile_ir
from tile_lang_cupy.codegen import generate

from tests.compiler.conftest import ARCHS, NVCC, NVRTC, launch_spec, nvcc_cubin, nvrtc_compile, recorded_launches
from tests.compiler.emulator import EMULATOR
from tests.fuzz.runner import load

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

BF = ml_dtypes.bfloat16
B = 64


def _poisoned(n: int) -> Any:
    return tl.to_device(np.full(n, np.nan, np.float32))


def _halves(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f16 and two bf16 inputs, the divisors kept away from zero."""
    rng = np.random.default_rng(seed)
    h = (rng.standard_normal(B) * 10).astype(np.float16)
    g = (rng.standard_normal(B) * 10).astype(BF)
    d = (rng.uniform(0.5, 3.0, B) * rng.choice([-1.0, 1.0], B)).astype(BF)
    return h, g, d


@tl.kernel
def half_division(h_ptr: Pointer[f16], g_ptr: Pointer[bf16], d_ptr: Pointer[bf16], o_ptr: Pointer[f32],
                  B: constexpr) -> None:
    offs = tl.arange(0, B)
    h, g, d = tl.load(h_ptr + offs), tl.load(g_ptr + offs), tl.load(d_ptr + offs)
    third = h / 3.0
    tl.static_assert(third.dtype == tl.float32)
    tl.store(o_ptr + offs, third * 3.0 - h.to(tl.float32))  # zero but for f32 rounding
    tl.store(o_ptr + B + offs, h % 1.5)
    tl.store(o_ptr + 2 * B + offs, g / d)
    tl.store(o_ptr + 3 * B + offs, g % d)
    tl.store(o_ptr + 4 * B + offs, 1.0 / h)
    tl.store(o_ptr + 5 * B + offs, h / h * 7.0)


def test_sixteen_bit_division_and_remainder_are_f32(target: str) -> None:
    h, g, d = _halves(11)
    hd, gd, dd = h.astype(np.float64), g.astype(np.float64), d.astype(np.float64)
    with tl.backend(target):
        out = _poisoned(6 * B)
        half_division[(1,)](tl.to_device(h), tl.to_device(g), tl.to_device(d), out, B=B)
        got = out.numpy().astype(np.float64).reshape(6, B)
    # in f16, h / 3.0 * 3.0 - h is off by up to 2**-11 |h|; in f32 by a few 2**-24 |h|
    np.testing.assert_array_less(np.abs(got[0]), 4 * 2.0**-24 * np.abs(hd) + 1e-30)
    np.testing.assert_allclose(got[1], np.fmod(hd, 1.5), rtol=0, atol=0)
    np.testing.assert_allclose(got[2], gd / dd, rtol=3e-7)
    np.testing.assert_allclose(got[3], np.fmod(gd, dd), rtol=0, atol=1e-5)
    np.testing.assert_allclose(got[4], 1.0 / hd, rtol=3e-7)
    np.testing.assert_allclose(got[5], np.full(B, 7.0), rtol=3e-7)


@tl.kernel
def narrow_extrema(h_ptr: Pointer[f16], g_ptr: Pointer[bf16], o_ptr: Pointer[f32], i_ptr: Pointer[i32],
                   M: constexpr, N: constexpr) -> None:
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    h, g = tl.load(h_ptr + offs), tl.load(g_ptr + offs)
    top = tl.max(h, 1)
    tl.static_assert(top.dtype == tl.float32)
    tl.store(o_ptr + rows, top * 1.001)  # scaled in f32, not f16
    tl.store(o_ptr + M + rows, tl.min(g, 1) * 1.001)
    low, where = tl.min(g, 1, return_indices=True)
    tl.static_assert(low.dtype == tl.float32)
    tl.store(o_ptr + 2 * M + rows, low * 1.001)
    tl.store(i_ptr + rows, where)
    high, at = tl.max(h, 1, return_indices=True)
    tl.static_assert(high.dtype == tl.float16)  # f16 keeps its type with indices
    tl.store(o_ptr + 3 * M + rows, high.to(tl.float32))
    tl.store(i_ptr + M + rows, at)
    tl.store(o_ptr + 4 * M + rows, tl.max(g, 1, keep_dims=True).reshape(M) * 1.001)


def test_narrow_float_max_and_min_are_f32(target: str) -> None:
    m, n = 8, 16
    rng = np.random.default_rng(12)
    h = (rng.standard_normal(m * n) * 100).astype(np.float16)
    g = (rng.standard_normal(m * n) * 100).astype(BF)
    hd, gd = h.astype(np.float64).reshape(m, n), g.astype(np.float64).reshape(m, n)
    with tl.backend(target):
        out, idx = _poisoned(5 * m), tl.to_device(np.full(2 * m, -1, np.int32))
        narrow_extrema[(1,)](tl.to_device(h), tl.to_device(g), out, idx, M=m, N=n)
        got, where = out.numpy().astype(np.float64).reshape(5, m), idx.numpy().reshape(2, m)
    np.testing.assert_allclose(got[0], hd.max(1) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[1], gd.min(1) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[2], gd.min(1) * 1.001, rtol=2e-7)
    np.testing.assert_array_equal(where[0], gd.argmin(1))
    np.testing.assert_array_equal(got[3], hd.max(1))
    np.testing.assert_array_equal(where[1], hd.argmax(1))
    np.testing.assert_allclose(got[4], gd.max(1) * 1.001, rtol=2e-7)


@tl.kernel
def scans(g_ptr: Pointer[bf16], p_ptr: Pointer[bf16], h_ptr: Pointer[f16], k_ptr: Pointer[i8], o_ptr: Pointer[f32],
          w_ptr: Pointer[i8], B: constexpr) -> None:
    offs = tl.arange(0, B)
    g, p, h, k = tl.load(g_ptr + offs), tl.load(p_ptr + offs), tl.load(h_ptr + offs), tl.load(k_ptr + offs)
    sums = tl.cumsum(g, 0)
    tl.static_assert(sums.dtype == tl.float32)
    tl.store(o_ptr + offs, sums)
    tl.store(o_ptr + B + offs, tl.cumprod(p, 0))
    tl.store(o_ptr + 2 * B + offs, tl.cumsum(h, 0, dtype=tl.float32))
    tl.store(o_ptr + 3 * B + offs, g.cumsum(0, reverse=True))
    wrapped = tl.cumsum(k, 0, dtype=tl.int8)
    tl.static_assert(wrapped.dtype == tl.int8)
    tl.store(w_ptr + offs, wrapped)


def test_bf16_scans_are_f32_and_cumsum_takes_a_dtype(target: str) -> None:
    rng = np.random.default_rng(13)
    g = (rng.standard_normal(B) * 10).astype(BF)
    p = (1.0 + rng.standard_normal(B) * 0.05).astype(BF)
    h = (rng.standard_normal(B) * 100).astype(np.float16)
    k = rng.integers(-100, 100, B).astype(np.int8)
    gd, pd, hd = (v.astype(np.float64) for v in (g, p, h))
    with tl.backend(target):
        out, wrapped = _poisoned(4 * B), tl.to_device(np.zeros(B, np.int8))
        scans[(1,)](tl.to_device(g), tl.to_device(p), tl.to_device(h), tl.to_device(k), out, wrapped, B=B)
        got = out.numpy().astype(np.float64).reshape(4, B)
        sums8 = wrapped.numpy()
    scale = np.cumsum(np.abs(gd))
    np.testing.assert_array_less(np.abs(got[0] - np.cumsum(gd)), 1e-6 * scale)  # bf16 prefixes: ~4e-3
    np.testing.assert_allclose(got[1], np.cumprod(pd), rtol=1e-6)
    np.testing.assert_array_less(np.abs(got[2] - np.cumsum(hd)), 1e-6 * np.cumsum(np.abs(hd)))
    reverse = np.cumsum(gd[::-1])[::-1]
    np.testing.assert_array_less(np.abs(got[3] - reverse), 1e-6 * np.cumsum(np.abs(gd[::-1]))[::-1])
    np.testing.assert_array_equal(sums8, np.cumsum(k.astype(np.int64)).astype(np.int8))  # i8 wraps


@tl.kernel
def bf16_extremes(g_ptr: Pointer[bf16], d_ptr: Pointer[bf16], o_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    g, d = tl.load(g_ptr + offs), tl.load(d_ptr + offs)
    top = tl.maximum(g, d)
    tl.static_assert(top.dtype == tl.float32)
    tl.store(o_ptr + offs, top * 1.001)
    tl.store(o_ptr + B + offs, tl.minimum(g, 0.5) * 1.001)
    tl.store(o_ptr + 2 * B + offs, tl.clamp(g, -2.0, 2.0) * 1.001)
    tl.store(o_ptr + 3 * B + offs, max(g, d) * 1.001)  # Python's max on blocks: tl.maximum
    tl.store(o_ptr + 4 * B + offs, min(g, 0.5) * 1.001)


def test_bf16_maximum_minimum_clamp_are_f32(target: str) -> None:
    _, g, d = _halves(14)
    gd, dd = g.astype(np.float64), d.astype(np.float64)
    with tl.backend(target):
        out = _poisoned(5 * B)
        bf16_extremes[(1,)](tl.to_device(g), tl.to_device(d), out, B=B)
        got = out.numpy().astype(np.float64).reshape(5, B)
    np.testing.assert_allclose(got[0], np.maximum(gd, dd) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[1], np.minimum(gd, 0.5) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[2], np.clip(gd, -2.0, 2.0) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[3], np.maximum(gd, dd) * 1.001, rtol=2e-7)
    np.testing.assert_allclose(got[4], np.minimum(gd, 0.5) * 1.001, rtol=2e-7)


@tl.kernel
def numbers_as_tensors(h_ptr: Pointer[f16], k_ptr: Pointer[i8], o_ptr: Pointer[f32], w_ptr: Pointer[i32],
                       B: constexpr) -> None:
    offs = tl.arange(0, B)
    h, k = tl.load(h_ptr + offs), tl.load(k_ptr + offs)
    relu = tl.maximum(h, 0.1)  # 0.1 is an f32 tensor first: compared, and kept, in f32
    tl.static_assert(relu.dtype == tl.float32)
    tl.store(o_ptr + offs, relu)
    tl.store(o_ptr + B + offs, tl.fma(h, 0.1, 0.3))
    tl.store(o_ptr + 2 * B + offs, tl.clamp(h, -0.1, 0.1))
    tl.store(o_ptr + 3 * B + offs, min(h, 0.1))
    low = tl.minimum(k, 1000)  # i8 with an i32 tensor: i32, so 1000 is no error
    tl.static_assert(low.dtype == tl.int32)
    tl.store(w_ptr + offs, low * 1000)


def test_python_numbers_of_maximum_fma_clamp_are_tensors(target: str) -> None:
    """Triton's ``tl.maximum``/``tl.minimum``/``tl.clamp``/``tl.fma`` make a Python number an f32 (or
    i32) tensor before promoting, unlike an operator's number: with f16 blocks they compute in f32."""
    rng = np.random.default_rng(19)
    h = (rng.standard_normal(B) * 0.2).astype(np.float16)
    k = rng.integers(-128, 127, B).astype(np.int8)
    hd, tenth = h.astype(np.float64), float(np.float32(0.1))
    with tl.backend(target):
        out, wide = _poisoned(4 * B), tl.to_device(np.zeros(B, np.int32))
        numbers_as_tensors[(1,)](tl.to_device(h), tl.to_device(k), out, wide, B=B)
        got = out.numpy().astype(np.float64).reshape(4, B)
        low = wide.numpy()
    np.testing.assert_array_equal(got[0], np.maximum(hd, tenth))  # f16's 0.1 is 0.0999755859375
    np.testing.assert_allclose(got[1], hd * tenth + float(np.float32(0.3)), rtol=1e-6)
    np.testing.assert_array_equal(got[2], np.clip(hd, -tenth, tenth))
    np.testing.assert_array_equal(got[3], np.minimum(hd, tenth))
    np.testing.assert_array_equal(low, np.minimum(k.astype(np.int64), 1000) * 1000)


@tl.kernel
def accepted_constructs(x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    spread = tl.broadcast_to(tl.load(x_ptr), (B,))  # a scalar splats
    tl.store(o_ptr + offs, spread)
    grid = tl.broadcast_to(tl.sum(x, 0), (2, B))
    tl.store(o_ptr + B + offs, tl.sum(grid, 0))
    tl.store(o_ptr + 2 * B + offs, min(x, 0.25))  # Python's min and max on blocks
    tl.store(o_ptr + 3 * B + offs, max(x, spread))


def test_constructs_triton_accepts(target: str) -> None:
    x = np.random.default_rng(15).standard_normal(B).astype(np.float32)
    xd = x.astype(np.float64)
    with tl.backend(target):
        out = _poisoned(4 * B)
        accepted_constructs[(1,)](tl.to_device(x), out, B=B)
        got = out.numpy().astype(np.float64).reshape(4, B)
    np.testing.assert_array_equal(got[0], np.full(B, xd[0]))
    np.testing.assert_allclose(got[1], np.full(B, 2 * xd.sum()), rtol=1e-5)
    np.testing.assert_array_equal(got[2], np.minimum(xd, 0.25))
    np.testing.assert_array_equal(got[3], np.maximum(xd, xd[0]))


def _kernel(name: str, source: str) -> Any:
    """A kernel mixing dtypes as Triton code does (mypy asks for the conversions), imported from
    a file so that mypy does not see it."""
    header = "import tile_lang as tl\nfrom tile_lang import constexpr\n\n\n@tl.kernel\n"
    return load(name, header + textwrap.dedent(source).lstrip())


float_fills = _kernel("float_fills", """
    def float_fills(k_ptr, o_ptr, w_ptr, n, B: constexpr):
        offs = tl.arange(0, B)
        live = offs < n
        k = tl.load(k_ptr + offs, mask=live, other=-7.9)  # converted as Triton casts: toward zero
        tl.store(o_ptr + offs, k)
        low = tl.load(k_ptr + offs, mask=live, other=float("-inf"))  # saturated: the smallest i32
        tl.store(o_ptr + B + offs, low)
        tl.store(w_ptr + offs, 2.75, mask=live)  # a stored float too
""")


def test_a_float_other_on_integer_elements_is_converted(target: str) -> None:
    """Triton casts a load's ``other`` (and a stored Python float) to the element type: mypy
    still asks for the conversion, as for a store of f32 into f16."""
    k = np.random.default_rng(18).integers(-50, 50, B).astype(np.int32)
    n, live = 40, np.arange(B) < 40
    with tl.backend(target):
        out, wrote = tl.to_device(np.full(2 * B, 12345, np.int32)), tl.to_device(np.full(B, -1, np.int32))
        float_fills[(1,)](tl.to_device(k), out, wrote, n, B=B)
        got, stored = out.numpy().reshape(2, B), wrote.numpy()
    np.testing.assert_array_equal(got[0], np.where(live, k, -7))
    np.testing.assert_array_equal(got[1], np.where(live, k, np.iinfo(np.int32).min))
    np.testing.assert_array_equal(stored, np.where(live, 2, -1))


mixed_halves = _kernel("mixed_halves", """
    def mixed_halves(h_ptr, g_ptr, i_ptr, o_ptr, B: constexpr):
        offs = tl.arange(0, B)
        h, g, i = tl.load(h_ptr + offs), tl.load(g_ptr + offs), tl.load(i_ptr + offs)
        both = h + g
        tl.static_assert(both.dtype == tl.float16)
        tl.store(o_ptr + offs, both * 1.001)
        counted = g * i
        tl.static_assert(counted.dtype == tl.float32)
        tl.store(o_ptr + B + offs, counted * 1.001)
        tl.store(o_ptr + 2 * B + offs, h / g)
        tl.store(o_ptr + 3 * B + offs, g / i)
""")


def test_f16_meets_bf16_in_f16_and_bf16_meets_integers_in_f32(target: str) -> None:
    h, g, _ = _halves(16)
    i = np.random.default_rng(17).integers(1, 300, B).astype(np.int32)
    hd, gd, idd = h.astype(np.float64), g.astype(np.float64), i.astype(np.float64)
    with tl.backend(target):
        out = _poisoned(4 * B)
        mixed_halves[(1,)](tl.to_device(h), tl.to_device(g), tl.to_device(i), out, B=B)
        got = out.numpy().astype(np.float64).reshape(4, B)
    as_f16 = g.astype(np.float16).astype(np.float64)  # Triton converts the bf16 operand to f16
    both = (hd + as_f16).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(got[0], (both * np.float16(1.001).astype(np.float64)).astype(np.float16), rtol=0)
    np.testing.assert_allclose(got[1], gd * idd * 1.001, rtol=3e-7)
    np.testing.assert_allclose(got[2], hd / gd, rtol=3e-7)  # divided in f32: bf16 to f32 directly
    np.testing.assert_allclose(got[3], gd / idd, rtol=3e-7)


@pytest.mark.slow
def test_the_generated_cuda_compiles(tmp_path: Path, need_cuda_compiler: None) -> None:
    """Each specialisation the tests above launch (f32 quotients of 16-bit blocks, f32 extrema and
    scans of bf16, Python numbers as f32 tensors, float fills converted to integers) compiles for
    sm_80 and sm_90, as NVRTC and nvcc take the generated CUDA."""
    with recorded_launches() as seen:
        for test in (test_sixteen_bit_division_and_remainder_are_f32, test_narrow_float_max_and_min_are_f32,
                     test_bf16_scans_are_f32_and_cumsum_takes_a_dtype, test_bf16_maximum_minimum_clamp_are_f32,
                     test_python_numbers_of_maximum_fma_clamp_are_tensors, test_constructs_triton_accepts,
                     test_a_float_other_on_integer_elements_is_converted,
                     test_f16_meets_bf16_in_f16_and_bf16_meets_integers_in_f32):
            test("numpy")
    assert len(seen) == 8
    for launch in seen:
        source = generate(compile_ir(launch.kernel, launch_spec(launch), verify_each=True)).source
        if NVRTC is not None:
            ok, log = nvrtc_compile(source, launch.kernel.name, ARCHS[0])
            assert ok, f"NVRTC on {launch.kernel.name}:\n{log}"
        for arch in ARCHS if NVCC is not None else ():
            result = nvcc_cubin(source, arch, tmp_path)
            assert result.returncode == 0, f"{launch.kernel.name} for {arch}:\n{result.stderr}"
