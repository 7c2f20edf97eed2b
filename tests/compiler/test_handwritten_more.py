"""More hand-written kernels in the idioms of real Triton code where the CUDA backend gave silent
wrong results the fuzzer could not reach: each runs on the NumPy reference and on the generated
CUDA under the CPU emulator (sm_80, and sm_90 where its fragments differ), outputs poisoned
first, against NumPy in float64. Each test is one such result, kept reduced."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


# ---------------------------------------------------------------- a scalar read, then its row overwritten

@tl.kernel
def divide_by_first(x_ptr: Pointer[f32], stride: int, n: int, B: constexpr) -> None:
    """In place, each row divided by its first element: every thread reads ``x[row, 0]``, then the
    block store overwrites it (lane 0 writes 1.0 there)."""
    row = tl.program_id(0)
    offs = tl.arange(0, B)
    first = tl.load(x_ptr + row * stride)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n, other=1.0)
    tl.store(x_ptr + row * stride + offs, x / first, mask=offs < n)


@pytest.mark.parametrize("n, block, warps", [(1000, 1024, 8), (300, 512, 4)])
def test_a_scalar_load_reads_before_a_block_store_overwrites_it(target: str, n: int, block: int, warps: int) -> None:
    """Thread 0 stored lane 0 before the other threads had read ``x[row, 0]``: they divided by
    the new value, 1.0 (1020 of 1024 elements a row wrong, 8 warps on the emulator)."""
    rows = 6
    x = np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32) + 3.0
    want = x.astype(np.float64) / x[:, :1]
    with tl.backend(target):
        buffer = tl.to_device(x)
        divide_by_first[(rows,), tl.Options(num_warps=warps)](buffer, n, n, B=block)
        np.testing.assert_allclose(buffer.numpy(), want, rtol=1e-6)


# ---------------------------------------------------------------- a dot result stored, then read back by rows

@tl.kernel
def stored_logits_normalised(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], o_ptr: Pointer[f32],
                             m_ptr: Pointer[f32], M: constexpr, N: constexpr, K: constexpr) -> None:
    """``C = A @ B`` stored (from the dot's fragments), then read back and shifted by each row's
    maximum (in the default layout, other threads than those that stored each element), and the
    row maxima stored from the fragments' rows and read back the same way."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    pid = tl.program_id(0)
    a = tl.load(a_ptr + pid * M * K + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.dot(a, b)
    row_max = tl.max(acc, axis=1)
    c_ptrs = c_ptr + pid * M * N + rm[:, None] * N + rn[None, :]
    tl.store(c_ptrs, acc)
    tl.store(m_ptr + pid * M + rm, row_max)
    c = tl.load(c_ptrs)
    tl.store(o_ptr + pid * M * N + rm[:, None] * N + rn[None, :], c - tl.load(m_ptr + pid * M + rm)[:, None])


@pytest.mark.parametrize("m, n, k, warps", [(32, 32, 16, 4), (64, 128, 32, 8), (16, 64, 16, 2)])
def test_a_stored_dot_result_reads_back_by_rows(target: str, m: int, n: int, k: int, warps: int) -> None:
    """A block stored from mma fragments and loaded in the default layout had no barrier between:
    420-520 of 1024 elements (32x32) read the poison the store had not yet overwritten."""
    programs = 3
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((programs, m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = a.astype(np.float64) @ b.astype(np.float64)
    with tl.backend(target):
        stored, shifted = (tl.to_device(np.full((programs, m, n), np.nan, np.float32)) for _ in range(2))
        maxima = tl.to_device(np.full((programs, m), np.nan, np.float32))
        stored_logits_normalised[(programs,), tl.Options(num_warps=warps)](
            tl.to_device(a), tl.to_device(b), stored, shifted, maxima, M=m, N=n, K=k)
        np.testing.assert_allclose(stored.numpy(), c, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(maxima.numpy(), c.max(axis=2), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(shifted.numpy(), c - c.max(axis=2, keepdims=True), rtol=1e-3, atol=1e-3)
