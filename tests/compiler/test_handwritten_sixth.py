"""A sixth set of hand-written kernels in the idioms of real Triton code (its tutorials and
test_core, Liger-Kernel, FlagGems, Unsloth), probing loop-carried state, while loops, early
returns, chains of dots, scans along axis 0, shape round trips, integer edge semantics and mixed
precision: each runs on the NumPy reference and on the generated CUDA under the CPU emulator
(sm_80 and sm_90), outputs poisoned first, against NumPy in float64 or exact integers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, i8, i32, i64, u8, u32, u64

from tests.compiler.emulator import EMULATOR
from tests.compiler.test_handwritten import _from_source

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


# ---------------------------------------------------------------- loops and control flow

@tl.kernel
def carried(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, B: constexpr, S: constexpr, U: constexpr) -> None:
    """Three values carried through a pipelined, unrolled loop whose loads walk the input by a
    quadratic and a reversed index: a running sum, a running max and a shift register."""
    offs = tl.arange(0, B)
    s = tl.zeros((B,), tl.float32)
    m = tl.full((B,), float("-inf"), tl.float32)
    prev = tl.zeros((B,), tl.float32)
    for k in tl.range(1, n, 2, num_stages=S, loop_unroll_factor=U):
        a = tl.load(x_ptr + ((k * k) % n) * B + offs)
        b = tl.load(x_ptr + (n - 1 - k) * B + offs, mask=offs < k * 3, other=-1.0)
        s = s + a * b - prev
        m = tl.maximum(m, a - b)
        prev = b
    tl.store(o_ptr + offs, s)
    tl.store(o_ptr + B + offs, m)
    tl.store(o_ptr + 2 * B + offs, prev)


@pytest.mark.parametrize("stages, unroll, n", [(3, 1, 11), (2, 4, 12), (4, 3, 2), (1, 2, 1)])
def test_several_values_carried_through_a_pipelined_loop(target: str, stages: int, unroll: int, n: int) -> None:
    b = 32
    x = np.random.default_rng(n).standard_normal((max(n, 1), b)).astype(np.float32)
    s, m, prev = np.zeros(b), np.full(b, -np.inf), np.zeros(b)
    lanes = np.arange(b)
    for k in range(1, n, 2):
        a = x[(k * k) % n].astype(np.float64)
        bb = np.where(lanes < k * 3, x[n - 1 - k], -1.0)
        s, m, prev = s + a * bb - prev, np.maximum(m, a - bb), bb
    with tl.backend(target):
        o = tl.to_device(np.full(3 * b, np.nan, np.float32))
        carried[(1,)](tl.to_device(x), o, n, B=b, S=stages, U=unroll)
        got = o.numpy()
    np.testing.assert_allclose(got[:b], s, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[b:2 * b], m.astype(np.float32))
    np.testing.assert_array_equal(got[2 * b:], prev.astype(np.float32))


@tl.kernel
def newton(x_ptr: Pointer[f32], o_ptr: Pointer[f32], c_ptr: Pointer[i32], B: constexpr) -> None:
    """Newton's square root: a while loop carrying a block and a counter until every lane has
    converged (a data-dependent trip count per program), then an early exit for odd programs."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    y = x + 1.0
    it = 0
    err = tl.max(tl.abs(y * y - x), 0)
    while err > 1e-4 * tl.max(x, 0):
        y = 0.5 * (y + x / y)
        err = tl.max(tl.abs(y * y - x), 0)
        it += 1
    tl.store(c_ptr + pid, it)
    if pid % 2 == 1:
        tl.store(o_ptr + offs, -y)
        return
    tl.store(o_ptr + offs, y)


def test_a_while_loop_carries_a_block_to_convergence(target: str) -> None:
    rng, b, p = np.random.default_rng(3), 64, 4
    x = (1.0 + rng.random(b * p) * np.repeat([1.0, 100.0, 1e4, 3.0], b)).astype(np.float32)
    with tl.backend(target):
        o, c = tl.to_device(np.full(b * p, np.nan, np.float32)), tl.to_device(np.full(p, -1, np.int32))
        newton[(p,)](tl.to_device(x), o, c, B=b)
        got, its = o.numpy(), c.numpy()
    signs = np.repeat([1.0, -1.0, 1.0, -1.0], b)
    np.testing.assert_allclose(got, signs * np.sqrt(x.astype(np.float64)), rtol=1e-3)
    assert (its > 0).all() and its[2] > its[0]
    y = x.reshape(p, b).astype(np.float32) + np.float32(1)  # the counts, from a float32 model
    want = []
    for row, xs in zip(y, x.reshape(p, b)):
        k = 0
        while np.abs(row * row - xs).max() > np.float32(1e-4) * xs.max():
            row = np.float32(0.5) * (row + xs / row)
            k += 1
        want.append(k)
    np.testing.assert_array_equal(its, want)


# ---------------------------------------------------------------- chains of dots

@tl.kernel
def attention(q_ptr: Pointer[f16], k_ptr: Pointer[f16], v_ptr: Pointer[f16], o_ptr: Pointer[f32], l_ptr: Pointer[f32],
              n_q: int, n_ctx: int, scale: float, BM: constexpr, BN: constexpr, D: constexpr, S: constexpr) -> None:
    """Flash attention's forward loop: keys read transposed through ``tl.trans``, a ragged last key
    block masked to -inf, the online softmax rescaling ``acc`` and the second dot taking it as
    ``acc=``; queries past ``n_q`` masked, the row sums stored beside."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :], mask=rm[:, None] < n_q, other=0.0)
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in tl.range(0, n_ctx, BN, num_stages=S):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n_ctx, other=0.0)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n_ctx, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(rn[None, :] < n_ctx, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc / l_i[:, None], mask=rm[:, None] < n_q)
    tl.store(l_ptr + rm, m_i + tl.log(l_i), mask=rm < n_q)


@pytest.mark.parametrize("n_q, n_ctx, bm, bn, d, stages", [(37, 45, 16, 16, 16, 2), (20, 70, 32, 32, 32, 3),
                                                            (16, 5, 16, 32, 16, 1)])
def test_attention_forward_with_ragged_keys(target: str, n_q: int, n_ctx: int, bm: int, bn: int, d: int,
                                            stages: int) -> None:
    rng = np.random.default_rng(n_ctx)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float16) for n in (n_q, n_ctx, n_ctx))
    scale = 0.3
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    lse = np.log(np.exp(s - s.max(1, keepdims=True)).sum(1)) + s.max(1)
    want = np.exp(s - lse[:, None]) @ v.astype(np.float64)
    with tl.backend(target):
        o, lo = tl.to_device(np.full((n_q, d), np.nan, np.float32)), tl.to_device(np.full(n_q, np.nan, np.float32))
        attention[(tl.cdiv(n_q, bm),)](tl.to_device(q), tl.to_device(k), tl.to_device(v), o, lo, n_q, n_ctx, scale,
                                       BM=bm, BN=bn, D=d, S=stages)
        np.testing.assert_allclose(o.numpy(), want, atol=2e-2, rtol=2e-2)
        np.testing.assert_allclose(lo.numpy(), lse, atol=1e-3, rtol=1e-3)


@tl.kernel
def dot_forms(a_ptr: Pointer[f16], b_ptr: Pointer[f16], i_ptr: Pointer[i8], j_ptr: Pointer[i8], c_ptr: Pointer[i32],
              o_ptr: Pointer[f32], h_ptr: Pointer[f16], k_len: int, M: constexpr, N: constexpr, K: constexpr) -> None:
    """Dots in the forms real kernels use: int8 to int32 onto a loaded int32 ``acc``; an f16
    ``out_dtype``; an operand transposed by ``permute``; K masked ragged; reductions and a scan
    along axis 0 of a dot's result, and a dot of a dot."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rk[None, :] < k_len, other=0.0)
    bt = tl.load(b_ptr + rn[:, None] * K + rk[None, :])
    b = tl.permute(bt, (1, 0))
    ia = tl.load(i_ptr + rm[:, None] * K + rk[None, :])
    ib = tl.load(j_ptr + rk[:, None] * N + rn[None, :])
    c0 = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + M * N + rm[:, None] * N + rn[None, :], tl.dot(ia, ib, acc=c0, out_dtype=tl.int32))
    d = tl.dot(a, b)
    tl.store(h_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))
    tl.store(o_ptr + rn, tl.sum(d, 0))
    tl.store(o_ptr + N + rn, tl.max(d, 0))
    tl.store(o_ptr + 2 * N + rm[:, None] * N + rn[None, :], tl.cumsum(d, 0, reverse=True))
    e = tl.dot(d.to(tl.float16), tl.trans(d.to(tl.float16)))
    tl.store(o_ptr + 2 * N + M * N + rm[:, None] * M + tl.arange(0, M)[None, :], e)
    tl.store(o_ptr + 2 * N + M * N + M * M + rm, tl.argmin(e, 0).to(tl.float32))


@pytest.mark.parametrize("m, n, k, k_len", [(16, 32, 32, 27), (32, 16, 64, 64), (64, 64, 32, 1)])
def test_dot_forms_and_reductions_of_their_results(target: str, m: int, n: int, k: int, k_len: int) -> None:
    rng = np.random.default_rng(m + n + k)
    a = (rng.integers(-4, 5, (m, k)) / 4).astype(np.float16)
    bt = (rng.integers(-4, 5, (n, k)) / 4).astype(np.float16)
    ia, ib = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n)).astype(np.int8)
    c0 = rng.integers(-2**20, 2**20, (m, n)).astype(np.int32)
    am = np.where(np.arange(k) < k_len, a.astype(np.float64), 0.0)
    d = am @ bt.astype(np.float64).T  # exact: quarters, sums below 2**11
    dh = d.astype(np.float16).astype(np.float64)
    e = dh @ dh.T
    with tl.backend(target):
        c = tl.to_device(np.concatenate([c0.ravel(), np.full(m * n, 7, np.int32)]))
        o = tl.to_device(np.full(2 * n + m * n + m * m + m, np.nan, np.float32))
        h = tl.to_device(np.full((m, n), np.nan, np.float16))
        dot_forms[(1,)](tl.to_device(a), tl.to_device(bt), tl.to_device(ia), tl.to_device(ib), c, o, h, k_len,
                        M=m, N=n, K=k)
        np.testing.assert_array_equal(c.numpy()[m * n:].reshape(m, n),
                                      c0 + ia.astype(np.int64) @ ib.astype(np.int64))
        got = o.numpy()
        np.testing.assert_array_equal(h.numpy(), d.astype(np.float16))
        np.testing.assert_array_equal(got[:n], d.sum(0))
        np.testing.assert_array_equal(got[n:2 * n], d.max(0))
        np.testing.assert_array_equal(got[2 * n:2 * n + m * n].reshape(m, n), np.cumsum(d[::-1], 0)[::-1])
        np.testing.assert_allclose(got[2 * n + m * n:2 * n + m * n + m * m].reshape(m, m), e, rtol=1e-6)
        np.testing.assert_array_equal(got[2 * n + m * n + m * m:], e.argmin(0))


# ---------------------------------------------------------------- scans, sorts and shape round trips

@tl.kernel
def column_scans(x_ptr: Pointer[f32], i_ptr: Pointer[i32], o_ptr: Pointer[f32], oi_ptr: Pointer[i32], carry_ptr: Pointer[f32],
                 n_chunks: int, M: constexpr, N: constexpr) -> None:
    """Scans along axis 0 of 2-D blocks, both directions: a chunked cumsum carrying each column's
    running total across chunks (FlagGems' and fla's chunked scans), cumprod, wrapping int cumsum,
    int cumprod, gather along axis 0, and sort/topk of the transpose (both sort the last axis only)."""
    rm, rn = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    total = tl.zeros((N,), tl.float32)
    for c in range(n_chunks):
        x = tl.load(x_ptr + (c * M + rm) * N + rn)
        tl.store(o_ptr + (c * M + rm) * N + rn, tl.cumsum(x, 0) + total[None, :])
        total += tl.sum(x, 0)
    tl.store(carry_ptr + tl.arange(0, N), total)
    x = tl.load(x_ptr + rm * N + rn)
    i = tl.load(i_ptr + rm * N + rn)
    base = n_chunks * M * N
    tl.store(o_ptr + base + rm * N + rn, tl.cumprod(x, 0, reverse=True))
    tl.store(o_ptr + base + M * N + rm * N + rn, tl.trans(tl.sort(tl.trans(x), descending=True)))
    tl.store(o_ptr + base + 2 * M * N + rm * N + rn, tl.gather(x, (i & 0x7fffffff) % M, 0))
    tl.store(oi_ptr + rm * N + rn, tl.cumsum(i, 0))
    tl.store(oi_ptr + M * N + rm * N + rn, tl.cumprod(i | 1, 0, reverse=True))
    tl.store(oi_ptr + 2 * M * N + rm * N + rn, tl.trans(tl.sort(tl.trans(i))))
    tl.store(oi_ptr + 3 * M * N + tl.arange(0, 2)[:, None] * N + rn, tl.trans(tl.topk(tl.trans(i), 2)))


@pytest.mark.parametrize("m, n, warps", [(16, 8, 4), (8, 32, 2), (32, 4, 1)])
def test_scans_and_sorts_along_axis_0(target: str, m: int, n: int, warps: int) -> None:
    rng, chunks = np.random.default_rng(m * n), 3
    x = rng.standard_normal((chunks * m, n)).astype(np.float32)
    x[:m] = (1 + rng.integers(-3, 4, (m, n)) / 8).astype(np.float32)  # products exact in f32
    i = rng.integers(-2**31, 2**31, (m, n)).astype(np.int32)
    i[0, 0], i[1, 0] = 2**31 - 1, 5  # a sum past the maximum wraps
    mn = m * n
    with tl.backend(target):
        o = tl.to_device(np.full(chunks * mn + 3 * mn, np.nan, np.float32))
        oi = tl.to_device(np.full(3 * mn + 2 * n, 7, np.int32))
        carry = tl.to_device(np.full(n, np.nan, np.float32))
        column_scans[(1,), tl.Options(num_warps=warps)](tl.to_device(x), tl.to_device(i), o, oi, carry, chunks, M=m, N=n)
        got, goti = o.numpy(), oi.numpy()
        np.testing.assert_allclose(got[:chunks * mn].reshape(-1, n), np.cumsum(x.astype(np.float64), 0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(carry.numpy(), x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    head, b = x[:m].astype(np.float64), chunks * mn
    np.testing.assert_allclose(got[b:b + mn].reshape(m, n), np.cumprod(head[::-1], 0)[::-1], rtol=1e-6)
    np.testing.assert_array_equal(got[b + mn:b + 2 * mn].reshape(m, n), -np.sort(-head, 0))
    np.testing.assert_array_equal(got[b + 2 * mn:].reshape(m, n), np.take_along_axis(head, (i & 0x7fffffff) % m, 0))
    wide = i.astype(np.int64)
    np.testing.assert_array_equal(goti[:mn].reshape(m, n), (np.cumsum(wide, 0) + 2**31) % 2**32 - 2**31)
    prods = np.ones((m, n), object)
    acc = np.ones(n, object)
    for r in range(m - 1, -1, -1):
        acc = acc * (wide[r] | 1).astype(object)
        prods[r] = [(int(v) + 2**31) % 2**32 - 2**31 for v in acc]
    np.testing.assert_array_equal(goti[mn:2 * mn].reshape(m, n), prods.astype(np.int64))
    np.testing.assert_array_equal(goti[2 * mn:3 * mn].reshape(m, n), np.sort(i, 0))
    np.testing.assert_array_equal(goti[3 * mn:].reshape(2, n), -np.sort(-wide, 0)[:2])


@tl.kernel
def round_trips(x_ptr: Pointer[f32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    """Rotary-style halves: a row split into (even, odd) lanes by reshape and split, rotated,
    interleaved back and stored; join then reshape storing pairs; cat; a 3-D reshape summed
    along its middle axis; trans of a join."""
    rm, rn = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    ev, od = tl.split(tl.reshape(x, (M, N // 2, 2)))
    cos = tl.load(x_ptr + M * N + rm * (N // 2) + tl.arange(0, N // 2)[None, :])
    tl.store(o_ptr + rm * N + rn, tl.interleave(ev * cos - od, od * cos + ev))
    pairs = tl.reshape(tl.join(ev, od * 2.0), (M, N))
    tl.store(o_ptr + M * N + rm * N + rn, pairs)
    flat = tl.reshape(x, (M * N,))
    tl.store(o_ptr + 2 * M * N + tl.arange(0, 2 * M * N), tl.cat(flat, flat * -1.0, can_reorder=False))
    mid = tl.sum(tl.reshape(x, (M, 2, N // 2)), 1)
    tl.store(o_ptr + 4 * M * N + rm * (N // 2) + tl.arange(0, N // 2)[None, :], mid)
    t = tl.trans(tl.join(ev, od), (2, 1, 0))
    tl.store(o_ptr + 5 * M * N + tl.arange(0, 2)[:, None, None] * (N // 2) * M
             + tl.arange(0, N // 2)[None, :, None] * M + tl.arange(0, M)[None, None, :], t)


@pytest.mark.parametrize("m, n, warps", [(4, 16, 1), (16, 32, 4), (8, 8, 8)])
def test_split_interleave_join_reshape_round_trips(target: str, m: int, n: int, warps: int) -> None:
    rng = np.random.default_rng(m * 31 + n)
    x = rng.standard_normal(m * n + m * n // 2).astype(np.float32)
    xx, cos = x[:m * n].reshape(m, n), x[m * n:].reshape(m, n // 2)
    ev, od = xx[:, 0::2], xx[:, 1::2]
    with tl.backend(target):
        o = tl.to_device(np.full(6 * m * n, np.nan, np.float32))
        round_trips[(1,), tl.Options(num_warps=warps)](tl.to_device(x), o, M=m, N=n)
        got = o.numpy()
    mn = m * n
    # the GPU may fuse each product with its sum into one FMA (as Triton does): within an ulp of f32
    rotated = np.stack([ev * cos - od, od * cos + ev], -1).reshape(m, n)
    np.testing.assert_allclose(got[:mn].reshape(m, n), rotated, rtol=2**-23, atol=2**-24 * np.abs(rotated).max())
    np.testing.assert_array_equal(got[mn:2 * mn].reshape(m, n), np.stack([ev, od * 2], -1).reshape(m, n))
    np.testing.assert_array_equal(got[2 * mn:4 * mn], np.concatenate([xx.ravel(), -xx.ravel()]))
    np.testing.assert_array_equal(got[4 * mn:4 * mn + mn // 2].reshape(m, n // 2), xx.reshape(m, 2, n // 2).sum(1))
    np.testing.assert_array_equal(got[5 * mn:].reshape(2, n // 2, m), np.stack([ev, od], -1).transpose(2, 1, 0))


# ---------------------------------------------------------------- integer semantics

narrow_ints = _from_source("hw6_narrow_ints", '''
    def hw6_narrow_ints(a_ptr, b_ptr, u_ptr, w_ptr, l_ptr, q_ptr, o_ptr, B: constexpr):
        """C's truncating // and % at every width (i8, i16, i64 with negative operands; u8, u16, u64),
        the mixed-sign promotions (i8 with u8 is u8, u8 with i16 is i16, i8 with u16 is u16, u32 with
        i64 is i64), comparisons across them, literals wrapping in an unsigned block, and right shifts
        of each sign."""
        offs = tl.arange(0, B)
        a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
        u, w = tl.load(u_ptr + offs), tl.load(w_ptr + offs)
        ll, q = tl.load(l_ptr + offs), tl.load(q_ptr + offs)
        ad = tl.where(a == 0, 3, a).to(tl.int8)
        tl.store(o_ptr + offs, (b // ad).to(tl.int64))
        tl.store(o_ptr + B + offs, (b % ad).to(tl.int64))
        tl.store(o_ptr + 2 * B + offs, ll // (b.to(tl.int64) | 1))
        tl.store(o_ptr + 3 * B + offs, ll % (b.to(tl.int64) | 1))
        tl.store(o_ptr + 4 * B + offs, (w // (u | 1)).to(tl.int64))
        tl.store(o_ptr + 5 * B + offs, (q % (w.to(tl.uint64) | 1)).to(tl.int64))
        tl.store(o_ptr + 6 * B + offs, (a + u).to(tl.int64))
        tl.store(o_ptr + 7 * B + offs, (u - (b >> 2)).to(tl.int64))
        tl.store(o_ptr + 8 * B + offs, (a * w).to(tl.int64))
        tl.store(o_ptr + 9 * B + offs, (a < u).to(tl.int64) + (a < w).to(tl.int64) * 2 + (u > b).to(tl.int64) * 4
                 + (w.to(tl.uint32) < ll).to(tl.int64) * 8)
        tl.store(o_ptr + 10 * B + offs, (u + 200).to(tl.int64) + (w * 3).to(tl.int64) * 1000)
        tl.store(o_ptr + 11 * B + offs, (q >> 60).to(tl.int64) + ((ll >> 62) * 100) + (a >> 7).to(tl.int64) * 10000)
''')


def test_narrow_and_mixed_sign_integer_rules(target: str) -> None:
    rng, b = np.random.default_rng(21), 64
    a = rng.integers(-128, 128, b).astype(np.int8)
    bb = rng.integers(-2**15, 2**15, b).astype(np.int16)
    u = rng.integers(0, 256, b).astype(np.uint8)
    w = rng.integers(0, 2**16, b).astype(np.uint16)
    ll = rng.integers(-2**63, 2**63 - 1, b, dtype=np.int64)
    q = rng.integers(0, 2**64 - 1, b, dtype=np.uint64)
    a[:3], bb[:3] = [-128, -1, 127], [-2**15, 2**15 - 1, -7]

    def trunc_div(x: list[int], y: list[int]) -> list[int]:
        return [abs(p) // abs(r) * (1 if (p < 0) == (r < 0) else -1) for p, r in zip(x, y)]

    def wrap(values: list[int], bits: int, signed: bool) -> list[int]:
        return [(v + 2**(bits - 1)) % 2**bits - 2**(bits - 1) if signed else v % 2**bits for v in values]

    A, BB, U, W, L, Q = ([int(v) for v in z] for z in (a, bb, u, w, ll, q))
    ad = [3 if v == 0 else v for v in A]
    bd = [v | 1 for v in BB]
    quot16 = wrap(trunc_div(BB, ad), 16, True)
    want = [quot16, [p - r * t for p, r, t in zip(BB, ad, trunc_div(BB, ad))],
            trunc_div(L, bd), [p - r * t for p, r, t in zip(L, bd, trunc_div(L, bd))],
            [p // (r | 1) for p, r in zip(W, U)], [p % (r | 1) for p, r in zip(Q, W)],
            wrap([p + r for p, r in zip(A, U)], 8, False), [p - (r >> 2) for p, r in zip(U, BB)],
            wrap([p * r for p, r in zip(A, W)], 16, False),
            [int(p % 256 < r) + 2 * int(p % 65536 < s) + 4 * int(r > t) + 8 * int(s < v)
             for p, r, s, t, v in zip(A, U, W, BB, L)],
            [(r + 200) % 256 + (s * 3) % 2**16 * 1000 for r, s in zip(U, W)],
            [(z >> 60) + (v >> 62) * 100 + (p >> 7) * 10000 for z, v, p in zip(Q, L, A)]]
    with tl.backend(target):
        o = tl.to_device(np.full(12 * b, -99, np.int64))
        narrow_ints[(1,)](*(tl.to_device(z) for z in (a, bb, u, w, ll, q)), o, B=b)
        got = o.numpy().reshape(12, b)
    for row, (g, wv) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g.astype(object), np.array(wrap(wv, 64, True), dtype=object), err_msg=str(row))


@tl.kernel
def far_offsets(x_ptr: Pointer[f32], o_ptr: Pointer[f32], stride: int, big: int, B: constexpr) -> None:
    """Offsets past 2**31 that cancel: a program id times a 64-bit stride, a pointer moved forward
    by a 64-bit amount and back, and a rank-0 loaded value broadcast over a 2-D block."""
    pid = tl.program_id(0)
    offs = tl.arange(0, B)
    far = pid * stride - pid * (stride - B)
    x = tl.load(x_ptr + big + far + offs - big)
    s = tl.load(x_ptr + pid)
    tile = s + tl.zeros((4, B), tl.float32) * x[None, :]
    tl.store(o_ptr + far + offs, x * 2.0)
    tl.store(o_ptr + 4 * B + pid * 4 * B + tl.arange(0, 4)[:, None] * B + offs[None, :], tile + x[None, :])


def test_offsets_past_two_to_the_31_cancel(target: str) -> None:
    rng, b, p = np.random.default_rng(22), 32, 4
    x = rng.standard_normal(p * b).astype(np.float32)
    with tl.backend(target):
        o = tl.to_device(np.full(p * b + 4 * p * b, np.nan, np.float32))
        far_offsets[(p,)](tl.to_device(x), o, 2**31 + 5 * b, 3 * 2**32 + 7, B=b)
        got = o.numpy()
    np.testing.assert_array_equal(got[:p * b], x * 2)
    want = x[:p, None, None] + np.broadcast_to(x.reshape(p, 1, b), (p, 4, b))
    np.testing.assert_array_equal(got[p * b:].reshape(p, 4, b), want)


# ---------------------------------------------------------------- floating point and mixed precision

@tl.kernel
def float_ops(x_ptr: Pointer[f32], y_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """clamp (NaN bounds and NaN inputs, both NaN modes, scalar and block bounds), fma, div_rn and
    fdiv with specials, as Liger's and FlagGems' clamps and normalisations write them."""
    offs = tl.arange(0, B)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    lo = tl.minimum(x, y) - 0.5
    tl.store(o_ptr + offs, tl.clamp(x, -0.5, 0.75))
    tl.store(o_ptr + B + offs, tl.clamp(x, -0.5, 0.75, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 2 * B + offs, tl.clamp(y, lo, lo + 1.0))
    tl.store(o_ptr + 3 * B + offs, tl.fma(x, y, -x * y))
    tl.store(o_ptr + 4 * B + offs, tl.div_rn(x, y))
    tl.store(o_ptr + 5 * B + offs, tl.fdiv(x, y, ieee_rounding=True))


def test_clamp_fma_and_divisions_with_specials(target: str) -> None:
    rng, b = np.random.default_rng(31), 64
    x, y = rng.standard_normal((2, b)).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, 0.75, -0.5, -0.0]
    y[:10] = [1.0, np.nan, 0.0, -0.0, np.inf, 3.0, np.nan, 1e-38, 3e38, -1e-45]
    x[6:10] = [1.0, 3e38, 1e-38, 7.0]
    with tl.backend(target):
        o = tl.to_device(np.full(6 * b, 12345.0, np.float32))
        float_ops[(1,)](tl.to_device(x), tl.to_device(y), o, B=b)
        got = o.numpy().reshape(6, b)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    lo = np.fmin(x, y) - np.float32(0.5)  # tl.minimum takes the number over a NaN by default

    def clamp(v: np.ndarray, low: np.ndarray | np.float32, high: np.ndarray | np.float32, nan: bool) -> np.ndarray:
        out = np.fmin(np.fmax(v, low), high)
        return np.where(np.isnan(v), np.nan, out) if nan else out

    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], clamp(x, np.float32(-0.5), np.float32(0.75), False))
        np.testing.assert_array_equal(got[1], clamp(x, np.float32(-0.5), np.float32(0.75), True))
        np.testing.assert_array_equal(got[2], clamp(y, lo, lo + np.float32(1), False))
        fma = (xd * yd - (x * y).astype(np.float64))
        np.testing.assert_array_equal(got[3], fma.astype(np.float32))
        np.testing.assert_array_equal(got[4], (xd / yd).astype(np.float32))
        np.testing.assert_array_equal(got[5], (xd / yd).astype(np.float32))


mixed_precision = _from_source("hw6_mixed_precision", '''
    def hw6_mixed_precision(h_ptr, g_ptr, x_ptr, i_ptr, o_ptr, oh_ptr, og_ptr, B: constexpr):
        """Promotions real kernels lean on, Triton 3.6's: f16 with bf16 is f16 (the bf16 converted
        to f16), f16 with f32 is f32, an int block with f16 is f16, f16 times a Python float stays
        f16, bf16 with an i64 is f32; stored through a narrower pointer the value is converted once."""
        offs = tl.arange(0, B)
        h, g, x, i = tl.load(h_ptr + offs), tl.load(g_ptr + offs), tl.load(x_ptr + offs), tl.load(i_ptr + offs)
        tl.store(o_ptr + offs, h + g)
        tl.store(o_ptr + B + offs, h * x)
        tl.store(oh_ptr + offs, i + h)
        tl.store(oh_ptr + B + offs, h * 1.1)
        tl.store(og_ptr + offs, g * i.to(tl.int64))
        tl.store(oh_ptr + 2 * B + offs, h * g)
        tl.store(og_ptr + B + offs, x - h)
''')


def test_mixed_precision_promotions(target: str) -> None:
    rng, b = np.random.default_rng(32), 64
    h = (rng.standard_normal(b) * 100).astype(np.float16)
    g = (rng.standard_normal(b) * 100).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal(b).astype(np.float32)
    i = rng.integers(-3000, 3000, b).astype(np.int32)
    hd, gd, xd = h.astype(np.float64), g.astype(np.float64), x.astype(np.float64)
    bf = ml_dtypes.bfloat16
    with tl.backend(target):
        o = tl.to_device(np.full(2 * b, np.nan, np.float32))
        oh, og = tl.to_device(np.full(3 * b, np.nan, np.float16)), tl.to_device(np.full(2 * b, np.nan, bf))
        mixed_precision[(1,)](tl.to_device(h), tl.to_device(g), tl.to_device(x), tl.to_device(i), o, oh, og, B=b)
        got, goth, gotg = o.numpy(), oh.numpy(), og.numpy()
    g16 = g.astype(np.float16).astype(np.float64)  # bf16 meets f16 in f16
    np.testing.assert_array_equal(got[:b], (hd + g16).astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(got[b:], (hd * xd).astype(np.float32))
    np.testing.assert_array_equal(goth[:b], (i.astype(np.float16).astype(np.float64) + hd).astype(np.float16))
    np.testing.assert_array_equal(goth[b:2 * b], (hd * np.float16(1.1).astype(np.float64)).astype(np.float16))
    product = (gd * i.astype(np.float32).astype(np.float64)).astype(np.float32)  # bf16 meets an int block in f32
    np.testing.assert_array_equal(gotg[:b].astype(np.float64), product.astype(bf).astype(np.float64))
    np.testing.assert_array_equal(goth[2 * b:], (hd * g16).astype(np.float16))
    np.testing.assert_array_equal(gotg[b:].astype(np.float64), (xd - hd).astype(np.float32).astype(bf).astype(np.float64))


# ---------------------------------------------------------------- memory idioms

@tl.kernel
def odd_fills(x_ptr: Pointer[f16], u_ptr: Pointer[u8], i_ptr: Pointer[i32], d_ptr: Pointer[i32], o_ptr: Pointer[f32],
              oi_ptr: Pointer[i32], n: int, B: constexpr) -> None:
    """``other=`` of another type than the pointee (converted to it: an int fill and one past f16's
    range for f16; a float fill for an int pointer is refused), fills at u8's and i32's edges,
    stores whose block holds duplicated
    addresses of one value, and a gather-by-pointer store with a hinted stride."""
    offs = tl.arange(0, B)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m, other=3).to(tl.float32))
    tl.store(o_ptr + B + offs, tl.load(x_ptr + offs, mask=m, other=70000.0).to(tl.float32))
    tl.store(oi_ptr + offs, tl.load(u_ptr + offs, mask=m, other=200).to(tl.int32))
    tl.store(oi_ptr + B + offs, tl.load(i_ptr + offs, mask=m, other=2**31 - 1))
    pairs = offs // 2
    v = tl.load(i_ptr + pairs)
    tl.store(oi_ptr + 2 * B + pairs, v * 3)
    d = tl.load(d_ptr + offs)
    tl.store(oi_ptr + 3 * B + d, d * 7 + 1)
    s = tl.multiple_of(n * 0 + 4, 4)
    tl.store(oi_ptr + 4 * B + tl.max_contiguous(tl.multiple_of((offs // 4) * 8 + offs % 4, 4), 4) + s, v)


def test_fills_of_another_type_and_duplicated_store_addresses(target: str) -> None:
    rng, b, n = np.random.default_rng(41), 64, 45
    x = rng.standard_normal(b).astype(np.float16)
    u = rng.integers(0, 256, b).astype(np.uint8)
    i = rng.integers(-2**31, 2**31, b).astype(np.int32) // 3
    d = rng.integers(0, 8, b).astype(np.int32)  # eight addresses, each stored by many lanes the same value
    lanes = np.arange(b)
    with tl.backend(target):
        o = tl.to_device(np.full(2 * b, np.nan, np.float32))
        oi = tl.to_device(np.full(6 * b, -7, np.int32))
        odd_fills[(1,)](tl.to_device(x), tl.to_device(u), tl.to_device(i), tl.to_device(d), o, oi, n, B=b)
        got, goti = o.numpy(), oi.numpy()
    np.testing.assert_array_equal(got[:b], np.where(lanes < n, x, np.float16(3)).astype(np.float32))
    np.testing.assert_array_equal(got[b:], np.where(lanes < n, x.astype(np.float32), np.float32(np.inf)))
    np.testing.assert_array_equal(goti[:b], np.where(lanes < n, u, 200))
    np.testing.assert_array_equal(goti[b:2 * b], np.where(lanes < n, i, 2**31 - 1))
    pairs = np.full(b, -7, np.int32)
    pairs[:b // 2] = i[:b // 2] * 3
    np.testing.assert_array_equal(goti[2 * b:3 * b], pairs)
    stored = np.full(b, -7, np.int32)
    stored[np.unique(d)] = np.unique(d) * 7 + 1
    np.testing.assert_array_equal(goti[3 * b:4 * b], stored)
    spread = np.full(2 * b, -7, np.int32)
    spread[(lanes // 4) * 8 + lanes % 4 + 4] = i[lanes // 2]
    np.testing.assert_array_equal(goti[4 * b:], spread)


@tl.kernel
def grouped_tiles(a_ptr: Pointer[f32], o_ptr: Pointer[f32], m: int, n: int, BM: constexpr, BN: constexpr,
                  G: constexpr) -> None:
    """The matmul tutorial's grouped ordering (``tl.swizzle2d`` beside it written out by hand), a
    causal-style inner loop whose trip count follows the outer index, and a pointer block walked
    by ``+=`` in a loop with unrolling."""
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(m, BM), tl.cdiv(n, BN)
    width = G * grid_n
    group = pid // width
    first = group * G
    size = tl.minimum(grid_m - first, G)
    pm, pn = first + (pid % width) % size, (pid % width) // size
    sm, sn = tl.swizzle2d(pid // grid_n, pid % grid_n, grid_m, grid_n, G)
    rm, rn = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < m) & (rn[None, :] < n)
    acc = tl.zeros((BM, BN), tl.float32)
    ptrs = a_ptr + rm[:, None] * n + rn[None, :]
    for j in tl.range(0, pm + 1, loop_unroll_factor=2):
        for k in tl.range(j, pm + 1, num_stages=2):
            acc += tl.load(ptrs, mask=mask, other=0.0) * (k - j + 1).to(tl.float32)
    tl.store(o_ptr + rm[:, None] * n + rn[None, :], acc, mask=mask)
    tl.store(o_ptr + m * n + pid * 4 + tl.arange(0, 4), tl.where(tl.arange(0, 4) < 2, pm * 1000 + pn, sm * 1000 + sn).to(tl.float32))
    walk, at = a_ptr + tl.arange(0, BN), tl.arange(0, BN)
    tot = tl.zeros((BN,), tl.float32)
    for _ in tl.range(0, pn + 1, loop_unroll_factor=3):
        tot += tl.load(walk, mask=at < m * n, other=0.0)
        walk += BN
        at += BN
    tl.store(o_ptr + m * n + 4 * grid_m * grid_n + pid * BN + tl.arange(0, BN), tot)


@pytest.mark.parametrize("m, n, group", [(100, 70, 3), (64, 48, 8), (17, 200, 1)])
def test_grouped_ordering_and_triangular_loops(target: str, m: int, n: int, group: int) -> None:
    bm, bn = 16, 16
    a = np.random.default_rng(m).standard_normal((m, n)).astype(np.float32)
    gm, gn = -(-m // bm), -(-n // bn)
    want = np.zeros((m, n))
    ids, walks = np.zeros((gm * gn, 4)), np.zeros((gm * gn, bn))
    flat = np.concatenate([a.ravel(), np.zeros(bn * gn)]).astype(np.float64)
    for pid in range(gm * gn):
        g, width = pid // (group * gn), group * gn
        size = min(gm - g * group, group)
        pm, pn = g * group + (pid % width) % size, (pid % width) // size
        i, j = pid // gn, pid % gn  # swizzle2d of the row-major (i, j)
        ij = i * gn + j
        size_gj = gn * group
        off_i = (ij // size_gj) * group
        size_g = min(gm - off_i, group)
        sm, sn = off_i + (ij % size_gj) % size_g, (ij % size_gj) // size_g
        ids[pid] = [pm * 1000 + pn] * 2 + [sm * 1000 + sn] * 2
        weight = sum(k - jj + 1 for jj in range(pm + 1) for k in range(jj, pm + 1))
        want[pm * bm:(pm + 1) * bm, pn * bn:(pn + 1) * bn] = a[pm * bm:(pm + 1) * bm, pn * bn:(pn + 1) * bn] * weight
        walks[pid] = sum(flat[t * bn:(t + 1) * bn] for t in range(pn + 1))
    with tl.backend(target):
        o = tl.to_device(np.full(m * n + 4 * gm * gn + bn * gm * gn, np.nan, np.float32))
        grouped_tiles[(gm * gn,)](tl.to_device(a), o, m, n, BM=bm, BN=bn, G=group)
        got = o.numpy()
    np.testing.assert_allclose(got[:m * n].reshape(m, n), want, rtol=1e-5)
    np.testing.assert_array_equal(got[m * n:m * n + 4 * gm * gn].reshape(-1, 4), ids)
    np.testing.assert_allclose(got[m * n + 4 * gm * gn:].reshape(-1, bn), walks, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- sorts move bits

@tl.kernel
def sorted_rows(x_ptr: Pointer[f32], h_ptr: Pointer[f16], g_ptr: Pointer[tl.bfloat16], o_ptr: Pointer[f32],
                oh_ptr: Pointer[f16], og_ptr: Pointer[tl.bfloat16], M: constexpr, N: constexpr) -> None:
    """Rows sorted both ways, each holding one NaN (quiet or signalling, either sign, a payload)."""
    r, c = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    x, h, g = tl.load(x_ptr + r * N + c), tl.load(h_ptr + r * N + c), tl.load(g_ptr + r * N + c)
    tl.store(o_ptr + r * N + c, tl.sort(x))
    tl.store(o_ptr + M * N + r * N + c, tl.sort(x, descending=True))
    tl.store(oh_ptr + r * N + c, tl.sort(h, descending=True))
    tl.store(og_ptr + r * N + c, tl.sort(g))


def test_a_sort_moves_each_nan_bit_for_bit(target: str) -> None:
    """Triton's sort is a network of swaps, so each output is one of the row's elements, bit for
    bit. The reference sorted with ``np.sort``, which rewrites NaNs: every f16 NaN came out as
    0x7c01 and every f32 one as 0x7fc00000 (11 of the 512 elements here, every f32 and f16 NaN
    not already of that form; bf16 kept its bits; silent). The CUDA network was right."""
    rng, m, n = np.random.default_rng(51), 4, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    h, g = x.astype(np.float16), x.astype(ml_dtypes.bfloat16)
    cols = rng.integers(0, n, m)
    x.view(np.uint32)[np.arange(m), cols] = [0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF]
    h.view(np.uint16)[np.arange(m), cols] = [0x7E00, 0xFE00, 0x7C01, 0x7E55]
    g.view(np.uint16)[np.arange(m), cols] = [0x7FC0, 0xFFC1, 0x7F81, 0xFFC0]

    def bits(a: np.ndarray, descending: bool) -> np.ndarray:
        """The row's elements in NumPy's order (NaN last), as unsigned bits."""
        order = np.argsort(a.astype(np.float32), axis=-1, kind="stable")
        moved = np.take_along_axis(a, order[:, ::-1] if descending else order, axis=-1)
        return moved.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16)

    with tl.backend(target):
        o = tl.to_device(np.zeros((2, m, n), np.float32))
        oh, og = tl.to_device(np.zeros((m, n), np.float16)), tl.to_device(np.zeros((m, n), ml_dtypes.bfloat16))
        sorted_rows[(1,)](tl.to_device(x), tl.to_device(h), tl.to_device(g), o, oh, og, M=m, N=n)
        got = o.numpy()
        np.testing.assert_array_equal(got[0].view(np.uint32), bits(x, False))
        np.testing.assert_array_equal(got[1].view(np.uint32), bits(x, True))
        np.testing.assert_array_equal(oh.numpy().view(np.uint16), bits(h, True))
        np.testing.assert_array_equal(og.numpy().view(np.uint16), bits(g, False))


# ---------------------------------------------------------------- dots sharing operands and results

@tl.kernel
def lagged(a_ptr: Pointer[f16], b_ptr: Pointer[f16], o_ptr: Pointer[f32], n: int, M: constexpr, N: constexpr,
           K: constexpr, FORM: constexpr) -> None:
    """An accumulator carried beside its previous value (``acc, prev = tl.dot(a, b, acc), acc``):
    a dot accumulating in the carried registers in place must not clobber what ``prev`` takes."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), tl.float32) + 1.0
    prev = tl.zeros((M, N), tl.float32)
    for i in range(n):
        a = tl.load(a_ptr + i * M * K + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        if FORM == 0:
            acc, prev = tl.dot(a, b, acc), acc
        elif FORM == 1:
            acc, prev = acc + tl.dot(a, b), acc
        else:
            prev, acc = acc, acc * 0.5 + tl.dot(a, b)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc)
    tl.store(o_ptr + M * N + rm[:, None] * N + rn[None, :], prev)


@pytest.mark.parametrize("form", [0, 1, 2])
def test_an_accumulator_carried_beside_its_previous_value(target: str, form: int) -> None:
    rng, m, n = np.random.default_rng(61), 32, 3
    a, b = (rng.integers(-4, 5, (n, m, m)) / 4).astype(np.float16), (rng.integers(-4, 5, (m, m)) / 4).astype(np.float16)
    acc, prev = np.ones((m, m)), np.zeros((m, m))
    for i in range(n):
        d = a[i].astype(np.float64) @ b.astype(np.float64)
        acc, prev = (acc * 0.5 + d, acc) if form == 2 else (acc + d, acc)
    with tl.backend(target):
        o = tl.to_device(np.full((2, m, m), np.nan, np.float32))
        lagged[(1,)](tl.to_device(a), tl.to_device(b), o, n, M=m, N=m, K=m, FORM=form)
        np.testing.assert_array_equal(o.numpy(), np.stack([acc, prev]))


@tl.kernel
def operand_roles(a_ptr: Pointer[f16], o_ptr: Pointer[f32], n: int, M: constexpr) -> None:
    """One tile as both operands of a dot, transposed on either side, and a power iteration
    ``x = dot(x, a)`` whose result is the next A."""
    r, c = tl.arange(0, M)[:, None], tl.arange(0, M)[None, :]
    a = tl.load(a_ptr + r * M + c)
    x = a
    for _ in range(n):
        x = tl.dot(x, a).to(tl.float16)
    tl.store(o_ptr + r * M + c, tl.dot(a, a))
    tl.store(o_ptr + M * M + r * M + c, tl.dot(a, tl.trans(a)))
    tl.store(o_ptr + 2 * M * M + r * M + c, tl.dot(tl.trans(a), a))
    tl.store(o_ptr + 3 * M * M + r * M + c, x.to(tl.float32))
    tl.store(o_ptr + 4 * M * M + r * M + c, tl.dot(tl.trans(x), tl.trans(a)))


@pytest.mark.parametrize("m, warps", [(16, 4), (64, 8), (128, 8)])
def test_one_tile_in_every_operand_role(target: str, m: int, warps: int) -> None:
    a = (np.random.default_rng(m).integers(-2, 3, (m, m)) / 4).astype(np.float16)
    aa = a.astype(np.float64)
    x = aa
    for _ in range(2):
        x = (x @ aa).astype(np.float16).astype(np.float64)
    with tl.backend(target):
        o = tl.to_device(np.full((5, m, m), np.nan, np.float32))
        operand_roles[(1,), tl.Options(num_warps=warps)](tl.to_device(a), o, 2, M=m)
        np.testing.assert_array_equal(o.numpy(), np.stack([aa @ aa, aa @ aa.T, aa.T @ aa, x, x.T @ aa.T]))


@tl.kernel
def fragment_uses(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], o_ptr: Pointer[f32], i_ptr: Pointer[i32],
                  M: constexpr, N: constexpr, K: constexpr, N2: constexpr) -> None:
    """Two dots of different widths sharing rows: one's row maximum (with its index) shifting the
    other, scans, flips, interleaves, a 3-D reshape summed and a 2-D mask on a dot's result."""
    rm, rn, rk, rn2 = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, N2)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    s1 = tl.dot(a, tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    s2 = tl.dot(a, tl.load(c_ptr + rk[:, None] * N2 + rn2[None, :]))
    mx, am = tl.max(s1, 1, return_indices=True)
    tl.store(o_ptr + rm[:, None] * N2 + rn2[None, :], s2 - mx[:, None])
    tl.store(i_ptr + rm, am)
    tl.store(i_ptr + M + rm, tl.argmin(s2, 1))
    at = M * N2
    tl.store(o_ptr + at + rm[:, None] * N + rn[None, :], tl.cumsum(s1, 1))
    tl.store(o_ptr + at + M * N + rm[:, None] * N + rn[None, :], tl.flip(s1, 1))
    tl.store(o_ptr + at + 2 * M * N + rm[:, None] * 2 * N + tl.arange(0, 2 * N)[None, :], tl.interleave(s1, s1 * 2.0))
    at += 4 * M * N
    tl.store(o_ptr + at + rm[:, None] * (N // 2) + tl.arange(0, N // 2)[None, :], tl.sum(tl.reshape(s1, (M, N // 2, 2)), 2))
    w = tl.where((rn[None, :] % 3 == 0) & (rm[:, None] > 2), s1, -s1)
    tl.store(o_ptr + at + M * (N // 2) + rm[:, None] * N + rn[None, :], w)
    tl.store(o_ptr + at + M * (N // 2) + M * N + rm, tl.sum(w * w, 1) + tl.min(s2, 1))


@pytest.mark.parametrize("m, n, k, n2, warps", [(16, 32, 16, 16, 8), (64, 16, 32, 64, 4), (128, 32, 16, 16, 8)])
def test_dots_of_two_widths_sharing_rows(target: str, m: int, n: int, k: int, n2: int, warps: int) -> None:
    rng = np.random.default_rng(m + n)
    a, b, c = ((rng.integers(-4, 5, shape) / 4).astype(np.float16) for shape in ((m, k), (k, n), (k, n2)))
    s1, s2 = a.astype(np.float64) @ b.astype(np.float64), a.astype(np.float64) @ c.astype(np.float64)
    w = np.where((np.arange(n)[None, :] % 3 == 0) & (np.arange(m)[:, None] > 2), s1, -s1)
    want = np.concatenate([(s2 - s1.max(1)[:, None]).ravel(), np.cumsum(s1, 1).ravel(), s1[:, ::-1].ravel(),
                           np.stack([s1, 2 * s1], -1).ravel(), s1.reshape(m, n // 2, 2).sum(2).ravel(), w.ravel(),
                           (w * w).sum(1) + s2.min(1)])
    with tl.backend(target):
        o, i = tl.to_device(np.full(want.size, np.nan, np.float32)), tl.to_device(np.full(2 * m, -9, np.int32))
        fragment_uses[(1,), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), tl.to_device(c), o, i,
                                                        M=m, N=n, K=k, N2=n2)
        np.testing.assert_array_equal(o.numpy(), want)
        np.testing.assert_array_equal(i.numpy(), np.concatenate([s1.argmax(1), s2.argmin(1)]))


@tl.kernel
def scattered_rows(a_ptr: Pointer[f16], b_ptr: Pointer[f16], idx_ptr: Pointer[i32], o_ptr: Pointer[f32], s_ptr: Pointer[f32],
                   c_ptr: Pointer[f16], n: int, M: constexpr, N: constexpr, K: constexpr) -> None:
    """A dot's rows stored to rows a loaded permutation names (MoE's scatter), its transpose to
    columns so named, row sums of squares added atomically to shared slots (Liger's dS), and
    an atomic add of every other column onto five rows."""
    rm = tl.program_id(0) * M + tl.arange(0, M)
    rn, rk = tl.arange(0, N), tl.arange(0, K)
    live = rm < n
    d = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=live[:, None], other=0.0),
               tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    dest = tl.load(idx_ptr + rm, mask=live, other=0)
    tl.store(o_ptr + dest[:, None] * N + rn[None, :], d, mask=live[:, None])
    tl.atomic_add(s_ptr + dest % 7, tl.sum(d * d, 1), mask=live)
    tl.store(c_ptr + rn[:, None] * n + dest[None, :], tl.trans(d).to(tl.float16), mask=live[None, :])
    tl.atomic_add(o_ptr + n * N + (dest[:, None] % 5) * N + rn[None, :], d, mask=live[:, None] & (rn[None, :] % 2 == 0))


@pytest.mark.parametrize("n, m, nn, k, warps", [(50, 16, 32, 16, 4), (100, 32, 64, 32, 4), (64, 64, 16, 32, 8)])
def test_dot_rows_scattered_by_a_permutation(target: str, n: int, m: int, nn: int, k: int, warps: int) -> None:
    rng = np.random.default_rng(n + k)
    a, b = (rng.integers(-4, 5, (n, k)) / 4).astype(np.float16), (rng.integers(-4, 5, (k, nn)) / 4).astype(np.float16)
    idx = rng.permutation(n).astype(np.int32)
    d = a.astype(np.float64) @ b.astype(np.float64)
    want_o, want_s = np.zeros((n + 5, nn)), np.zeros(7)
    want_o[idx] = d
    for r in range(n):
        want_o[n + idx[r] % 5, ::2] += d[r, ::2]
        want_s[idx[r] % 7] += (d[r] ** 2).sum()
    with tl.backend(target):
        o = tl.to_device(np.concatenate([np.full((n, nn), np.nan, np.float32), np.zeros((5, nn), np.float32)]))
        s, c = tl.to_device(np.zeros(7, np.float32)), tl.to_device(np.full((nn, n), np.nan, np.float16))
        scattered_rows[(-(-n // m),), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), tl.to_device(idx), o, s, c,
                                                                  n, M=m, N=nn, K=k)
        np.testing.assert_array_equal(o.numpy(), want_o)  # quarters: every sum exact in any order
        np.testing.assert_array_equal(s.numpy(), want_s)
        np.testing.assert_array_equal(c.numpy()[:, idx], d.T.astype(np.float16))


@tl.kernel
def batched(a_ptr: Pointer[f16], b_ptr: Pointer[f16], o_ptr: Pointer[f32], Z: constexpr, M: constexpr, N: constexpr,
            K: constexpr) -> None:
    """A 3-D (batched) dot and its maximum along M."""
    rz = tl.arange(0, Z)[:, None, None]
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    c = tl.dot(tl.load(a_ptr + rz * M * K + rm[None, :, None] * K + rk[None, None, :]),
               tl.load(b_ptr + rz * K * N + rk[None, :, None] * N + rn[None, None, :]))
    tl.store(o_ptr + rz * M * N + rm[None, :, None] * N + rn[None, None, :], c)
    tl.store(o_ptr + Z * M * N + tl.arange(0, Z)[:, None] * N + rn[None, :], tl.max(c, 1))


@pytest.mark.parametrize("z, m, n, k, warps", [(2, 16, 16, 16, 4), (4, 32, 16, 32, 4), (2, 64, 32, 16, 8)])
def test_a_batched_dot(target: str, z: int, m: int, n: int, k: int, warps: int) -> None:
    rng = np.random.default_rng(z * m)
    a, b = (rng.integers(-4, 5, (z, m, k)) / 4).astype(np.float16), (rng.integers(-4, 5, (z, k, n)) / 4).astype(np.float16)
    e = a.astype(np.float64) @ b.astype(np.float64)
    with tl.backend(target):
        o = tl.to_device(np.full(z * m * n + z * n, np.nan, np.float32))
        batched[(1,), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), o, Z=z, M=m, N=n, K=k)
        np.testing.assert_array_equal(o.numpy(), np.concatenate([e.ravel(), e.max(1).ravel()]))


# ---------------------------------------------------------------- programs that disagree

@tl.kernel
def divergent(x_ptr: Pointer[f32], o_ptr: Pointer[f32], c_ptr: Pointer[i32], B: constexpr) -> None:
    """Programs of a 3-D grid taking different branches (on each axis), while loops and ranges
    of their own lengths, a conditional expression, an early return and a short-circuit ``or``
    reading memory: the reference runs them masked, in lockstep."""
    p0, p1, p2 = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    lin = (p2 * tl.num_programs(1) + p1) * tl.num_programs(0) + p0
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + lin * B + offs)
    if p1 % 2 == 0:
        y, z = x * 2.0, p0 * 1.0
    elif p0 > p2:
        y, z = x + p0, -1.0
    else:
        y, z = x - p2, p1 * 0.5
    k = 0
    acc = tl.zeros((B,), tl.float32)
    while k < p0 + p1 and tl.max(acc, 0) < 5.0:
        acc += tl.abs(x) * (k + 1)
        k += 1
    t = 0
    for i in range(p2, p0 + p1 + p2):
        if i % 3 == 1:
            t += i
        else:
            t -= 1
    w = (p0 if p1 > p2 else p2) * 10 + t
    if p0 == 1 and p1 == 2:
        tl.store(c_ptr + lin, -5)
        return
    if (p0 > 0) or (tl.load(x_ptr + lin * B) > 0):
        flag = 1
    else:
        flag = 0
    tl.store(o_ptr + lin * B + offs, y + z + acc)
    tl.store(c_ptr + lin, k * 100000 + w * 10 + flag)


@pytest.mark.parametrize("grid", [(5, 7, 3), (64, 3, 2), (1, 1, 9)])
def test_programs_that_disagree_on_every_construct(target: str, grid: tuple[int, int, int]) -> None:
    b, programs = 16, int(np.prod(grid))
    x = np.random.default_rng(programs).standard_normal((programs, b)).astype(np.float32)
    want_o, want_c = np.full((programs, b), np.nan, np.float32), np.full(programs, -7, np.int64)
    for p2, p1, p0 in np.ndindex(grid[2], grid[1], grid[0]):
        lin, xx = (p2 * grid[1] + p1) * grid[0] + p0, x[(p2 * grid[1] + p1) * grid[0] + p0]
        if p1 % 2 == 0:
            y, z = xx * np.float32(2), np.float32(p0)
        elif p0 > p2:
            y, z = xx + np.float32(p0), np.float32(-1)
        else:
            y, z = xx - np.float32(p2), np.float32(p1 * 0.5)
        k, acc = 0, np.zeros(b, np.float32)
        while k < p0 + p1 and acc.max() < 5.0:
            acc, k = acc + np.abs(xx) * np.float32(k + 1), k + 1
        t = sum(i if i % 3 == 1 else -1 for i in range(p2, p0 + p1 + p2))
        if p0 == 1 and p1 == 2:
            want_c[lin] = -5
            continue
        want_o[lin] = y + z + acc
        want_c[lin] = k * 100000 + ((p0 if p1 > p2 else p2) * 10 + t) * 10 + int(p0 > 0 or xx[0] > 0)
    with tl.backend(target):
        o, c = tl.to_device(np.full((programs, b), np.nan, np.float32)), tl.to_device(np.full(programs, -7, np.int32))
        divergent[grid](tl.to_device(x), o, c, B=b)
        np.testing.assert_allclose(o.numpy(), want_o, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(c.numpy(), want_c)


@tl.kernel
def strided_views(x_ptr: Pointer[f32], s_ptr: Pointer[i32], o_ptr: Pointer[f32], n: int, R: constexpr, C: constexpr) -> None:
    """Offsets the reference keeps lazy and affine, per program: a loaded stride, a reversed
    block, a column-major read, a pointer walked by a loaded step for a per-program trip count,
    and a block small enough to be gathered."""
    pid = tl.program_id(0)
    st = tl.load(s_ptr + pid)
    r, c = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
    base = (pid * 37) % (n - R * C * 4)
    out = o_ptr + pid * (3 * R * C + C + 4)
    tl.store(out + r * C + c, tl.load(x_ptr + base + r * st * C + c * st))
    tl.store(out + R * C + r * C + c, tl.load(x_ptr + base + (R * C - 1 - (r * C + c))))
    tl.store(out + 2 * R * C + r * C + c, tl.load(x_ptr + base + c * R + r))
    p = x_ptr + base + tl.arange(0, C)
    acc = tl.zeros((C,), tl.float32)
    for _ in range(pid % 5):
        acc += tl.load(p)
        p += st * 3
    tl.store(out + 3 * R * C + tl.arange(0, C), acc)
    tl.store(out + 3 * R * C + C + tl.arange(0, 4), tl.load(x_ptr + base + tl.arange(0, 4) * 2))


@pytest.mark.parametrize("programs, r, c", [(200, 4, 8), (9, 8, 16)])
def test_per_program_strided_views(target: str, programs: int, r: int, c: int) -> None:
    rng, n = np.random.default_rng(programs), 5000
    x, s = rng.standard_normal(n).astype(np.float32), rng.integers(1, 5, programs).astype(np.int32)
    size, rr, cc = 3 * r * c + c + 4, np.arange(r)[:, None], np.arange(c)[None, :]
    want = np.zeros((programs, size), np.float32)
    for pid in range(programs):
        st, base = s[pid], (pid * 37) % (n - r * c * 4)
        acc = np.zeros(c, np.float32)
        for k in range(pid % 5):
            acc += x[base + np.arange(c) + k * st * 3]
        want[pid] = np.concatenate([x[base + rr * st * c + cc * st].ravel(), x[base + (r * c - 1 - (rr * c + cc))].ravel(),
                                    x[base + cc * r + rr].ravel(), acc, x[base + np.arange(4) * 2]])
    with tl.backend(target):
        o = tl.to_device(np.full((programs, size), np.nan, np.float32))
        strided_views[(programs,)](tl.to_device(x), tl.to_device(s), o, n, R=r, C=c)
        np.testing.assert_array_equal(o.numpy(), want)


@tl.kernel
def by_constants(a_ptr: Pointer[i32], l_ptr: Pointer[i64], c_ptr: Pointer[i8], u_ptr: Pointer[u32], o_ptr: Pointer[i64],
                 B: constexpr, D: constexpr) -> None:
    """``//`` and ``%`` by a constexpr power of two (and its negation) of negative values, at
    each width: truncating, where a shift or a mask would floor."""
    offs = tl.arange(0, B)
    a, ll, c, u = tl.load(a_ptr + offs), tl.load(l_ptr + offs), tl.load(c_ptr + offs), tl.load(u_ptr + offs)
    tl.store(o_ptr + offs, (a // D).to(tl.int64))
    tl.store(o_ptr + B + offs, (a % D).to(tl.int64))
    tl.store(o_ptr + 2 * B + offs, ll // D)
    tl.store(o_ptr + 3 * B + offs, ll % D)
    tl.store(o_ptr + 4 * B + offs, (c // D).to(tl.int64) * 1000 + (c % D).to(tl.int64))
    tl.store(o_ptr + 5 * B + offs, (u // D).to(tl.int64) * 1000 + (u % D).to(tl.int64))
    tl.store(o_ptr + 6 * B + offs, (a // -D).to(tl.int64) * 1000 + (a % -D).to(tl.int64))


@pytest.mark.parametrize("d", [1, 2, 16, 64])
def test_division_by_a_constant_power_of_two_truncates(target: str, d: int) -> None:
    rng, b = np.random.default_rng(d), 64
    a, ll = rng.integers(-1000, 1000, b).astype(np.int32), rng.integers(-2**62, 2**62, b)
    c, u = rng.integers(-128, 128, b).astype(np.int8), rng.integers(0, 2**32, b, dtype=np.uint64).astype(np.uint32)

    def qr(x: np.ndarray, y: int) -> tuple[list[int], list[int]]:
        q = [abs(int(v)) // abs(y) * (1 if (v < 0) == (y < 0) else -1) for v in x]
        return q, [int(v) - y * t for v, t in zip(x, q)]

    (qa, ra), (ql, rl), (qc, rc), (qn, rn) = qr(a, d), qr(ll, d), qr(c, d), qr(a, -d)
    want = [qa, ra, ql, rl, [p * 1000 + r for p, r in zip(qc, rc)],
            [int(v) // d * 1000 + int(v) % d for v in u], [p * 1000 + r for p, r in zip(qn, rn)]]
    with tl.backend(target):
        o = tl.to_device(np.full(7 * b, -99, np.int64))
        by_constants[(1,)](tl.to_device(a), tl.to_device(ll), tl.to_device(c), tl.to_device(u), o, B=b, D=d)
        np.testing.assert_array_equal(o.numpy().reshape(7, b).astype(object), np.array(want, dtype=object))


# ---------------------------------------------------------------- umulhi reads bits as unsigned

@tl.kernel
def high_words(a_ptr: Pointer[i32], l_ptr: Pointer[i64], q_ptr: Pointer[u64], o_ptr: Pointer[i64], oq_ptr: Pointer[u64],
               B: constexpr) -> None:
    """``tl.umulhi`` of signed blocks (hash mixing and Philox-style counters on i32/i64), of a
    negative literal, and of u64; libdevice's ``mulhi`` beside it, signed."""
    offs = tl.arange(0, B)
    a, ll, q = tl.load(a_ptr + offs), tl.load(l_ptr + offs), tl.load(q_ptr + offs)
    tl.store(o_ptr + offs, tl.umulhi(a, a ^ 0x1234).to(tl.int64))
    tl.store(o_ptr + B + offs, tl.umulhi(ll, ll ^ 0x5555))
    tl.store(o_ptr + 2 * B + offs, tl.umulhi(a, -7).to(tl.int64))
    tl.store(o_ptr + 3 * B + offs, tl.extra.cuda.libdevice.mulhi(a, a ^ 0x1234).to(tl.int64))
    tl.store(o_ptr + 4 * B + offs, tl.extra.cuda.libdevice.mulhi(ll, ll ^ 0x5555))
    tl.store(oq_ptr + offs, tl.umulhi(q, q + 12345))


def test_umulhi_reads_signed_operands_as_unsigned(target: str) -> None:
    """Triton lowers ``tl.umulhi`` to ``__nv_umulhi``/``__nv_umul64hi`` whatever the operands'
    signedness; both backends took the signed high half of i32 and i64 products (``__mulhi``),
    wrong wherever an operand was negative (61 of the 96 signed elements here; silent). (Triton's
    interpreter sign-extends and agrees with the old result; the compiled code decides.)"""
    rng, b = np.random.default_rng(71), 32
    a = rng.integers(-2**31, 2**31, b).astype(np.int32)
    ll = rng.integers(-2**63, 2**63 - 1, b, dtype=np.int64)
    q = rng.integers(0, 2**64 - 1, b, dtype=np.uint64)

    def high(x: int, y: int, bits: int, signed: bool) -> int:
        """The high ``bits`` of the product of ``x`` and ``y`` (as unsigned unless ``signed``),
        wrapped to a signed value of that width."""
        size = 1 << bits
        if not signed:
            x, y = x % size, y % size
        word = ((x * y) >> bits) % size
        return word - size if word >= size >> 1 else word

    A, L = [int(v) for v in a], [int(v) for v in ll]
    want = [[high(x, x ^ 0x1234, 32, False) for x in A], [high(x, x ^ 0x5555, 64, False) for x in L],
            [high(x, -7, 32, False) for x in A], [high(x, x ^ 0x1234, 32, True) for x in A],
            [high(x, x ^ 0x5555, 64, True) for x in L]]
    with tl.backend(target):
        o, oq = tl.to_device(np.full(5 * b, -9, np.int64)), tl.to_device(np.zeros(b, np.uint64))
        high_words[(1,)](tl.to_device(a), tl.to_device(ll), tl.to_device(q), o, oq, B=b)
        np.testing.assert_array_equal(o.numpy().reshape(5, b).astype(object), np.array(want, dtype=object))
        np.testing.assert_array_equal(oq.numpy().astype(object),
                                      np.array([(int(v) * ((int(v) + 12345) % 2**64)) >> 64 for v in q], dtype=object))


@tl.kernel
def narrow_high(a_ptr: Pointer[i8], o_ptr: Pointer[i8], B: constexpr) -> None:
    """``tl.umulhi`` of an 8-bit block."""
    offs = tl.arange(0, B)
    a = tl.load(a_ptr + offs)
    tl.store(o_ptr + offs, tl.umulhi(a, a))


def test_umulhi_of_a_narrow_block_is_refused(target: str) -> None:
    """Triton has no 8- or 16-bit umulhi; the reference gave the 8-bit high half and the CUDA the
    high half of the 32-bit product of the promoted values (0 or -1): now both refuse it."""
    with tl.backend(target), pytest.raises(tl.KernelError, match="32- or 64-bit"):
        narrow_high[(1,)](tl.to_device(np.arange(16, dtype=np.int8)), tl.to_device(np.zeros(16, np.int8)), B=16)
