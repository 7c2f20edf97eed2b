"""A third set of hand-written kernels in the idioms of real Triton code, probing the recent passes
(fragment stores staged through shared memory, rows reloaded onto fragments, views hoisted out of
loops, barriers between accesses): each runs on the NumPy reference and on the generated CUDA under
the CPU emulator (sm_80, and sm_90 where its fragments differ), outputs poisoned first, against
NumPy in float64. Tests named for a wrong result kept it, reduced; the others cover an idea the
passes must keep right."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


# ---------------------------------------------------------------- a block of one element, updated in place

@tl.kernel
def scaled_by_counter(c_ptr: Pointer[f32], x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """A one-element block read, doubled in place, and the read value scaling a block: every
    thread holds its copy of ``c`` and thread 0 stores the new one."""
    one = tl.arange(0, 1)
    offs = tl.arange(0, B)
    c = tl.load(c_ptr + one)
    tl.store(c_ptr + one, c * 2.0)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) * c)


def test_a_one_element_block_reads_before_its_store(target: str) -> None:
    """No barrier ordered the threads' loads of ``c`` before thread 0's store over it (the pass took
    the one-element block for a block walked by thread 0 alone): 1019 of 1024 lanes of ``x * c``
    used the doubled value on the emulator (8 warps)."""
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    with tl.backend(target):
        counter, out = tl.to_device(np.array([3.0], np.float32)), tl.to_device(np.full(1024, np.nan, np.float32))
        scaled_by_counter[(1,), tl.Options(num_warps=8)](counter, tl.to_device(x), out, B=1024)
        np.testing.assert_array_equal(counter.numpy(), [6.0])
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 3.0, rtol=1e-6)


@tl.kernel
def shifted_by_ticket(t_ptr: Pointer[f32], x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """A ticket taken with a one-element atomic (its old value) shifts a block."""
    one = tl.arange(0, 1)
    offs = tl.arange(0, B)
    old = tl.atomic_add(t_ptr + one, tl.full([1], 1.0, tl.float32))
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) + old)


def test_a_one_element_atomic_gives_every_thread_its_old_value(target: str) -> None:
    """Thread 0 alone ran the atomic and every other thread read its own zeroed copy of the old
    value: 254 of 256 lanes shifted by 0 instead of 3 on the emulator."""
    x = np.random.default_rng(6).standard_normal(256).astype(np.float32)
    with tl.backend(target):
        ticket, out = tl.to_device(np.array([3.0], np.float32)), tl.to_device(np.full(256, np.nan, np.float32))
        shifted_by_ticket[(1,), tl.Options(num_warps=4)](ticket, tl.to_device(x), out, B=256)
        np.testing.assert_array_equal(ticket.numpy(), [4.0])
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + 3.0, rtol=1e-6)


# ---------------------------------------------------------------- a fragment store masked by a row's maximum

@tl.kernel
def rows_above(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], M: constexpr, N: constexpr,
               K: constexpr) -> None:
    """``A @ B`` shifted by each row's maximum, stored only for the rows whose maximum passes 1: the
    mask is the maximum's row broadcast, held on the fragments."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    top = tl.max(acc, 1)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc - top[:, None], mask=(top > 1.0)[:, None])


@pytest.mark.parametrize("m, n, k, warps", [(64, 64, 32, 4), (32, 32, 16, 4)])
def test_a_fragment_store_masked_on_the_fragments(target: str, m: int, n: int, k: int, warps: int) -> None:
    """The store was staged through shared memory to go out 16 bytes a thread from the default
    layout while its mask stayed on the fragments: an internal compiler error at 64x64 (rows split
    over the 4 warps)."""
    rng = np.random.default_rng(m)
    a, b = (rng.standard_normal(shape).astype(np.float16) for shape in ((m, k), (k, n)))
    before = rng.standard_normal((m, n)).astype(np.float32)
    c = a.astype(np.float64) @ b.astype(np.float64)
    top = c.max(axis=1, keepdims=True)
    with tl.backend(target):
        out = tl.to_device(before)
        rows_above[(1,), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), out, M=m, N=n, K=k)
        np.testing.assert_allclose(out.numpy(), np.where(top > 1.0, c - top, before), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- ideas the passes must keep right

@tl.kernel
def addmm_relu(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], bias_ptr: Pointer[f32],
               scale_ptr: Pointer[f32], M: int, N: int, K: int, stride_cm: int, stride_cn: int,
               BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """A masked matmul whose epilogue scales rows, adds a bias row and a ReLU on the fragments and
    stores f16 through runtime strides (row- or column-major): the rows reload onto the
    fragments, and a row-major output goes out through shared memory."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    scale = tl.load(scale_ptr + rm, mask=rm < M, other=1.0)
    out = tl.maximum(acc * scale[:, None] + bias[None, :], 0.0).to(tl.float16)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, out, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, column_major", [
    (80, 96, 40, 32, 64, 16, 4, False), (33, 48, 32, 16, 16, 16, 1, False), (64, 64, 32, 32, 32, 16, 2, True)])
def test_a_masked_epilogue_on_fragments(target: str, m: int, n: int, k: int, bm: int, bn: int, bk: int, warps: int,
                                        column_major: bool) -> None:
    rng = np.random.default_rng(m + n)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    bias, scale = rng.standard_normal(n).astype(np.float32), rng.standard_normal(m).astype(np.float32)
    want = np.maximum((a.astype(np.float64) @ b.astype(np.float64)) * scale[:, None] + bias, 0.0)
    strides = (1, m) if column_major else (n, 1)
    with tl.backend(target):
        out = tl.to_device(np.full((n, m) if column_major else (m, n), np.nan, np.float16))
        addmm_relu[(tl.cdiv(m, bm), tl.cdiv(n, bn)), tl.Options(num_warps=warps)](
            tl.to_device(a), tl.to_device(b), out, tl.to_device(bias), tl.to_device(scale), m, n, k, *strides,
            BM=bm, BN=bn, BK=bk)
        got = out.numpy().T if column_major else out.numpy()
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2, atol=1e-2)


@tl.kernel
def shifted_by_old_row(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], row_ptr: Pointer[f32],
                       M: constexpr, N: constexpr, K: constexpr) -> None:
    """A row loaded, doubled in place, then its old value broadcast onto a dot result: the row
    must not be loaded again in the fragments' layout after the store."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    row = tl.load(row_ptr + rn)
    tl.store(row_ptr + rn, row * 2.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc + row[None, :])


def test_a_row_stored_over_is_broadcast_as_loaded(target: str) -> None:
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((32, 16)).astype(np.float16), rng.standard_normal((16, 32)).astype(np.float16)
    row = rng.standard_normal(32).astype(np.float32)
    with tl.backend(target):
        out, row_buffer = tl.to_device(np.full((32, 32), np.nan, np.float32)), tl.to_device(row)
        shifted_by_old_row[(1,)](tl.to_device(a), tl.to_device(b), out, row_buffer, M=32, N=32, K=16)
        np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b.astype(np.float64) + row, rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(row_buffer.numpy(), row * 2.0)


@tl.kernel
def rescaled_rounds(q_ptr: Pointer[f16], k_ptr: Pointer[f16], lse_ptr: Pointer[f32], w_ptr: Pointer[f32],
                    o_ptr: Pointer[f32], n_ctx: int, rounds: int, BM: constexpr, BN: constexpr, D: constexpr) -> None:
    """Attention dq's key loop run ``rounds`` times, the rows ``lse`` and ``w`` changing between
    rounds: their views (``lse[:, None]``, ``w.reshape(BM, 1)``) leave the key loop, not the rounds."""
    rm = tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    lse = tl.load(lse_ptr + rm)
    w = tl.load(w_ptr + rm)
    acc = tl.zeros((BM, D), tl.float32)
    for _ in range(0, rounds):
        for start in range(0, n_ctx, BN):
            rn = start + tl.arange(0, BN)
            k = tl.load(k_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n_ctx, other=0.0)
            p = tl.exp(tl.dot(q, tl.trans(k)) - lse[:, None]) * w.reshape(BM, 1)
            acc += tl.dot(p.to(tl.float16), k)
        lse = lse + 1.0
        w = w * 0.5
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc)


@pytest.mark.parametrize("n_ctx, rounds", [(80, 2), (0, 2), (48, 0)])
def test_views_of_rows_changed_by_an_outer_loop(target: str, n_ctx: int, rounds: int) -> None:
    rng = np.random.default_rng(n_ctx + rounds)
    bm, d = 32, 32
    q = (rng.standard_normal((bm, d)) * 0.3).astype(np.float16)
    k = (rng.standard_normal((max(n_ctx, 1), d)) * 0.3).astype(np.float16)
    lse, w = rng.standard_normal(bm).astype(np.float32), rng.standard_normal(bm).astype(np.float32)
    want, l64, w64 = np.zeros((bm, d)), lse.astype(np.float64), w.astype(np.float64)
    keys = k[:n_ctx].astype(np.float64)
    for _ in range(rounds):
        p = np.exp(q.astype(np.float64) @ keys.T - l64[:, None]) * w64[:, None]
        want += p.astype(np.float16).astype(np.float64) @ keys
        l64, w64 = l64 + 1.0, w64 * 0.5
    with tl.backend(target):
        out = tl.to_device(np.full((bm, d), np.nan, np.float32))
        rescaled_rounds[(1,)](tl.to_device(q), tl.to_device(k), tl.to_device(lse), tl.to_device(w), out, n_ctx, rounds,
                              BM=bm, BN=32, D=d)
        np.testing.assert_allclose(out.numpy(), want, rtol=3e-2, atol=3e-2)
