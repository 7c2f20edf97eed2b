"""A ninth set of hand-written kernels, aimed at the newest compiler paths: promises of
``tl.multiple_of``/``tl.max_contiguous``/``tl.max_constancy`` (``Op.HINT``) on clamped, wrapped and
2-D offsets, fragment stores staged inside loop bodies without a dot (stores read back in the same
and the next iteration, loops of zero and one trip), and persistent tile loops whose grid is smaller
or larger than the tile count. Each runs on the NumPy reference and the generated CUDA under the CPU
emulator (sm_80 and sm_90), outputs poisoned first, against NumPy in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, i32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
Arr = np.ndarray[Any, Any]


# ---------------------------------------------------------------- promises on clamped, wrapped and 2-D offsets

@tl.kernel
def promised_tiles(src: Pointer[f32], dst: Pointer[f32], M: int, N: int, BM: constexpr, BN: constexpr) -> None:
    """A 2-D tile whose rows are clamped to row 0 past M (tutorial 09's promise on them) and whose
    columns wrap ``% N`` under a promise of contiguity of 12 (a non-power of two), masked by
    ``cols < N`` promised constant in groups of BN."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    rows = tl.max_contiguous(tl.multiple_of(tl.where(rows < M, rows, 0), BM), BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    keep = cols < 2 * N
    quads = tl.max_constancy((cols % N) // 4 * 4, 4)
    wrapped = tl.max_contiguous(quads + cols % 4, 12)
    vals = tl.load(src + rows[:, None] * N + wrapped[None, :], mask=keep[None, :], other=-1.0)
    tl.store(dst + tl.program_id(0) * BM * 2 * N + tl.arange(0, BM)[:, None] * 2 * N + cols[None, :], vals,
             mask=keep[None, :])


@pytest.mark.parametrize("m, n", [(64, 96), (32, 192), (64, 48)])
def test_promised_two_d_offsets(target: str, m: int, n: int) -> None:
    """The row clamp holds its promise where M is a multiple of BM; the wrap where N is a multiple
    of 12 and the columns start at multiples of 12 (BN 16 does not: the promise is of 4)."""
    bm, bn = 16, 16
    rng = np.random.default_rng(m + n)
    src = rng.standard_normal((m, n)).astype(np.float32)
    gm, gn = m // bm, (2 * n) // bn
    with tl.backend(target):
        d = tl.to_device(np.full((gm * bm, 2 * n), np.nan, np.float32))
        promised_tiles[(gm, gn)](tl.to_device(src), d, m, n, BM=bm, BN=bn)
        got = d.numpy()
    cols = np.arange(2 * n)
    want = src[:, cols % n]
    np.testing.assert_array_equal(got, want)


@tl.kernel
def promised_windows(src: Pointer[f32], dst: Pointer[f32], start: int, n: int, R: constexpr, C: constexpr) -> None:
    """Row r reads ``src[w[r]:w[r] + C]`` for clamped window starts ``w`` promised multiples of 16:
    the reference holds the promise where each run of consecutive starts begins at one, so
    ``16, 17, ..., 31`` keeps it, though most rows start off a 16-element boundary."""
    w = start + tl.arange(0, R)
    w = tl.multiple_of(tl.where(w < n, w, 0), 16)
    rows = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(dst + rows, tl.load(src + w[:, None] + tl.arange(0, C)[None, :]))


@pytest.mark.parametrize("start, n", [(16, 100), (32, 40), (0, 8)])
def test_a_promised_multiple_without_runs_aligns_no_row(target: str, start: int, n: int) -> None:
    """The promise was taken for every element of the where's result (its runs unknown), so each
    row got 16-byte loads: the emulator aborted on the misaligned row 17 (on a GPU, a misaligned
    address); a multiple now counts only over runs the analysis knows (after max_contiguous)."""
    r, c = 16, 16
    rng = np.random.default_rng(start + n)
    src = rng.standard_normal(start + r + c).astype(np.float32)
    w = start + np.arange(r)
    w = np.where(w < n, w, 0)
    with tl.backend(target):
        d = tl.to_device(np.full((r, c), np.nan, np.float32))
        promised_windows[(1,)](tl.to_device(src), d, start, n, R=r, C=c)
        got = d.numpy()
    np.testing.assert_array_equal(got, src[w[:, None] + np.arange(c)[None, :]])


# ---------------------------------------------------------------- staged fragment stores in loops

@tl.kernel
def staged_in_loop(a_ptr: Pointer[f16], b_ptr: Pointer[f16], o_ptr: Pointer[f32], r_ptr: Pointer[f32], n: int,
                   M: constexpr, N: constexpr, K: constexpr) -> None:
    """A dot's result stored in a dot-free loop, read back in the same iteration (through the
    staged store) and again in the next one before its overwrite, twice to overlapping rows."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.dot(a, b)
    tile = rm[:, None] * N + rn[None, :]
    for i in range(n):
        prev = tl.load(o_ptr + tile)
        tl.store(o_ptr + tile, acc)
        tl.debug_barrier()  # the next store overlaps this one's rows 1.. on other lanes
        tl.store(o_ptr + N + tile, acc * 2.0, mask=(rm[:, None] < M - 1) & (rn[None, :] >= 0))
        tl.debug_barrier()  # lanes reread what others stored
        back = tl.load(o_ptr + tile)
        acc = acc + back * 0.5 + prev
    tl.store(r_ptr + tile, acc)


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_staged_stores_read_back_in_a_loop(target: str, trips: int) -> None:
    rng = np.random.default_rng(90 + trips)
    m, n, k = 32, 32, 16
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    o0 = rng.integers(-3, 4, m * n + n).astype(np.float32)
    with tl.backend(target):
        o = tl.to_device(o0.copy())
        r = tl.to_device(np.full((m, n), np.nan, np.float32))
        staged_in_loop[(1,)](tl.to_device(a), tl.to_device(b), o, r, trips, M=m, N=n, K=k)
        got_o, got_r = o.numpy(), r.numpy()
    acc = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)  # exact: small integers
    mem = o0.copy()
    for _ in range(trips):
        prev = mem[:m * n].reshape(m, n).copy()
        mem[:m * n] = acc.ravel()
        flat = mem[n:n + m * n].reshape(m, n)
        flat[:m - 1] = (acc * 2)[:m - 1]
        back = mem[:m * n].reshape(m, n).copy()
        acc = acc + back * np.float32(0.5) + prev  # f32 as the kernel rounds, in its order
    np.testing.assert_array_equal(got_o, mem)
    np.testing.assert_array_equal(got_r, acc)


# ---------------------------------------------------------------- persistent tile loops

@tl.kernel
def persistent_tiles(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], M: int, N: int, K: int,
                     BM: constexpr, BN: constexpr, BK: constexpr, HINTED: constexpr) -> None:
    """Tutorial 09's persistent form: each program walks tiles ``pid, pid + grid, ...``; the K loop
    masked, the epilogue's store masked on the last partial tiles; the clamped offsets promised
    contiguous (HINTED) where no tile is partial, as the promise holds only there."""
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile_id in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        rm = (tile_id // num_n) * BM + tl.arange(0, BM)
        rn = (tile_id % num_n) * BN + tl.arange(0, BN)
        am, bn = tl.where(rm < M, rm, 0), tl.where(rn < N, rn, 0)
        if HINTED:
            am = tl.max_contiguous(tl.multiple_of(am, BM), BM)
            bn = tl.max_contiguous(tl.multiple_of(bn, BN), BN)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + am[:, None] * K + rk[None, :], mask=rk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + bn[None, :], mask=rk[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc + 1.0, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("m, n, k, grid", [(64, 64, 48, 3), (48, 80, 32, 20), (32, 32, 16, 1)])
def test_persistent_tiles_with_partial_last_tiles(target: str, m: int, n: int, k: int, grid: int) -> None:
    rng = np.random.default_rng(m * n + grid)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    with tl.backend(target):
        c = tl.to_device(np.full((m, n), np.nan, np.float32))
        persistent_tiles[(grid,)](tl.to_device(a), tl.to_device(b), c, m, n, k, BM=32, BN=32, BK=16,
                                  HINTED=m % 32 == 0 and n % 32 == 0)
        got = c.numpy()
    np.testing.assert_array_equal(got, (a.astype(np.float64) @ b.astype(np.float64) + 1).astype(np.float32))


@tl.kernel
def stored_in_inner_loop(a_ptr: Pointer[f16], b_ptr: Pointer[f16], o_ptr: Pointer[f32], K: int,
                         M: constexpr, N: constexpr, BK: constexpr) -> None:
    """A K loop's running product stored each step from a dot-free loop nested in it: the inner
    loop holds no dot, but the outer loop's rings are live around it."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, BK)
    acc = tl.zeros((M, N), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
        for _ in range(0, 1):
            tl.store(o_ptr + (k // BK) * M * N + rm[:, None] * N + rn[None, :], acc)


def test_stores_in_a_loop_nested_in_a_dots_loop(target: str) -> None:
    rng = np.random.default_rng(93)
    m, n, bk, k = 32, 32, 16, 128
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    with tl.backend(target):
        o = tl.to_device(np.full((k // bk, m, n), np.nan, np.float32))
        stored_in_inner_loop[(1,)](tl.to_device(a), tl.to_device(b), o, k, M=m, N=n, BK=bk)
        got = o.numpy()
    want = np.stack([a[:, :s + bk].astype(np.float64) @ b[:s + bk].astype(np.float64) for s in range(0, k, bk)])
    np.testing.assert_array_equal(got, want.astype(np.float32))


# ---------------------------------------------------------------- descriptor rows far out of range

@tl.kernel
def gathered_in_loop(x_ptr: Pointer[f16], idx_ptr: Pointer[i32], o_ptr: Pointer[f16], s_ptr: Pointer[f16], col: int,
                     n: int, X: constexpr, Y: constexpr, R: constexpr, C: constexpr) -> None:
    """Per iteration, rows gathered at a column moving from before the left edge, then scattered
    plus one (zero padding; rows -1, X, 2**30, -2**31 and 2**31 - 1 among them)."""
    src = tl.make_tensor_descriptor(x_ptr, [X, Y], [Y, 1], [1, C])
    dst = tl.make_tensor_descriptor(s_ptr, [X, Y], [Y, 1], [1, C])
    for i in range(n):
        rows = tl.load(idx_ptr + i * R + tl.arange(0, R))
        got = src.gather(rows, col + i * 8)
        tl.store(o_ptr + i * R * C + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], got)
        dst.scatter(got + 1.0, rows, col + i * 8)


def test_gathers_with_extreme_rows_and_a_negative_column(target: str) -> None:
    x_rows, y_cols, r, c, n, col = 24, 40, 8, 16, 3, -8
    rng = np.random.default_rng(94)
    x = rng.integers(-8, 8, (x_rows, y_cols)).astype(np.float16)
    idx = np.stack([rng.permutation(x_rows)[:r] for _ in range(n)]).astype(np.int32)
    idx[0, :3], idx[1, :2] = [-1, x_rows, 2**30], [-2**31, 2**31 - 1]
    with tl.backend(target):
        o = tl.to_device(np.full((n, r, c), np.nan, np.float16))
        s = tl.to_device(np.full((x_rows, y_cols), -7.0, np.float16))
        gathered_in_loop[(1,)](tl.to_device(x), tl.to_device(idx), o, s, col, n, X=x_rows, Y=y_cols, R=r, C=c)
        got, stored = o.numpy().astype(np.float64), s.numpy().astype(np.float64)
    want, want_stored = np.zeros((n, r, c)), np.full((x_rows, y_cols), -7.0)
    for i in range(n):
        cols = col + i * 8 + np.arange(c)
        inside = (cols >= 0) & (cols < y_cols)
        for j, row in enumerate(idx[i].tolist()):
            if 0 <= row < x_rows:
                want[i, j, inside] = x[row, cols[inside]]
                want_stored[row, cols[inside]] = want[i, j, inside] + 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(stored, want_stored)


# ---------------------------------------------------------------- tuple arguments relaunched with other contents

@tl.kernel
def packed_copy(pack, out, B: constexpr):  # type: ignore[no-untyped-def]
    """A tuple argument of a buffer and a nested tuple of ints: a masked, scaled copy."""
    src, (n, shift) = pack
    offs = tl.arange(0, B)
    x = tl.load(src + offs, mask=offs < n, other=0)
    tl.store(out + offs, x.to(tl.float32) * 2 + shift)


def test_a_tuple_relaunched_with_other_dtypes_and_ints(target: str) -> None:
    """One kernel launched five times, the tuple's buffer of another dtype or its ints changed (a
    16 and a 1 specialise): each launch must use its own contents, not the last kernel built."""
    rng, b = np.random.default_rng(95), 16
    with tl.backend(target):
        for dtype, n, shift in [(np.float32, 16, 1), (np.float16, 5, 2), (np.int64, 9, 3), (np.float32, 16, 17),
                                (np.int8, 1, -4)]:
            x = (rng.standard_normal(b) * 10).astype(dtype)
            o = tl.to_device(np.full(b, np.nan, np.float32))
            packed_copy[(1,)]((tl.to_device(x), (n, shift)), o, B=b)
            want = np.where(np.arange(b) < n, x.astype(np.float64), 0) * 2 + shift
            np.testing.assert_array_equal(o.numpy(), want.astype(np.float32), err_msg=f"{dtype.__name__} {n} {shift}")
