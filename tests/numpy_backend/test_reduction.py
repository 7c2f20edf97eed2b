"""Reductions, scans, sort/flip, histogram and gather on ragged random tiles, every dtype each op
takes, against NumPy references (exact where the op is exact, float64 references otherwise)."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Dtype, Float, Int, Pointer, R0, Tensor, UInt, constexpr, f32, i32, u32

from tests.numpy_backend._support import (
    FLOATS, INTS, NUMERIC, SIGNED, highest, lowest, name, np_type, poisoned, sample, wide,
)

Num = TypeVar("Num", bound=Float[Any] | Int[Any] | UInt[Any])
IntN = TypeVar("IntN", bound=Int[Any] | UInt[Any])
W = TypeVar("W", bound=tl.Width)
D = TypeVar("D", bound=Dtype)
S = TypeVar("S", bound=Dtype)
M = TypeVar("M", bound=Dtype)

ROWS, COLS = 37, 45  # ragged against the 16 x 64 tiles below
BR, BC = 16, 64
GRID = (tl.cdiv(ROWS, BR),)
TOL = {"f16": 2e-3, "bf16": 1e-2, "f32": 2e-6, "f64": 1e-12}


def expected_sum_type(dtype: Any) -> Any:
    """Sums widen narrow signed ints to i32, narrow unsigned ints (and bool) to u32."""
    return {tl.i8: tl.i32, tl.i16: tl.i32, tl.u8: tl.u32, tl.u16: tl.u32}.get(dtype, dtype)


def expected_max_type(dtype: Any) -> Any:
    """max/min without indices upcast narrow ints to i32 (Triton 3.6); floats keep their type."""
    return tl.i32 if dtype in (tl.i8, tl.i16, tl.u8, tl.u16) else dtype


def rounded(ref: Any, dtype: Any) -> Any:
    """An exact reference converted to ``dtype`` (integers wrap)."""
    return np.asarray(ref).astype(np_type(dtype))


# ------------------------------------------------------------------------------ sum, max, min, arg*


@tl.kernel
def row_reductions(x_ptr: Pointer[Num], sums: Pointer[S], maxs: Pointer[M], mins: Pointer[M], best: Pointer[Num],
                   best_at: Pointer[i32], argmaxs: Pointer[i32], argmins: Pointer[i32], rightmost: Pointer[i32],
                   n_rows: int, n_cols: int, LOW: Constexpr[float], HIGH: Constexpr[float],
                   BR: constexpr, BC: constexpr) -> None:
    """Axis-1 reductions of a ragged tile; padding lanes hold each reduction's identity."""
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0)
    hi = tl.where(mask, x, LOW)
    lo = tl.where(mask, x, HIGH)
    live = rows < n_rows
    total: Any = tl.sum(x, axis=1)
    top: Any = tl.max(hi, axis=1)
    bottom: Any = tl.min(lo, axis=-1)
    tl.store(sums + rows, total, mask=live)
    tl.store(maxs + rows, top, mask=live)
    tl.store(mins + rows, bottom, mask=live)
    value, index = tl.max(hi, axis=1, return_indices=True)
    tl.store(best + rows, value, mask=live)
    tl.store(best_at + rows, index, mask=live)
    tl.store(argmaxs + rows, tl.argmax(hi, axis=1), mask=live)
    tl.store(argmins + rows, tl.argmin(lo, axis=1), mask=live)
    tl.store(rightmost + rows, tl.argmax(hi, axis=1, tie_break_left=False), mask=live)


@pytest.mark.parametrize("dtype", NUMERIC, ids=name)
def test_row_reductions_every_numeric_dtype(tile_backend: str, dtype: Any) -> None:
    gen = np.random.default_rng(10)
    x = sample(gen, (ROWS, COLS), dtype)  # few distinct values: ties everywhere
    outs = [poisoned(ROWS, expected_sum_type(dtype)), poisoned(ROWS, expected_max_type(dtype)),
            poisoned(ROWS, expected_max_type(dtype)), poisoned(ROWS, dtype)] + [poisoned(ROWS, tl.i32) for _ in range(4)]
    row_reductions[GRID](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], outs[7],
                         ROWS, COLS, LOW=lowest(dtype), HIGH=highest(dtype), BR=BR, BC=BC)
    sums, maxs, mins, best, best_at, argmaxs, argmins, rightmost = (o.numpy() for o in outs)
    assert sums.dtype == np_type(expected_sum_type(dtype)) and maxs.dtype == np_type(expected_max_type(dtype))
    np.testing.assert_array_equal(sums, rounded(wide(x).sum(axis=1), expected_sum_type(dtype)))
    np.testing.assert_array_equal(maxs, rounded(x.max(axis=1), expected_max_type(dtype)))
    np.testing.assert_array_equal(mins, rounded(x.min(axis=1), expected_max_type(dtype)))
    np.testing.assert_array_equal(best, x.max(axis=1))
    np.testing.assert_array_equal(best_at, x.argmax(axis=1))
    np.testing.assert_array_equal(argmaxs, x.argmax(axis=1))
    np.testing.assert_array_equal(argmins, x.argmin(axis=1))
    np.testing.assert_array_equal(rightmost, COLS - 1 - x[:, ::-1].argmax(axis=1))


@tl.kernel
def reduce_axes(x_ptr: Pointer[Num], col_sum: Pointer[S], row_keep: Pointer[S], top: Pointer[M], s3: Pointer[S],
                m3: Pointer[M], n_rows: int, n_cols: int, LOW: Constexpr[float], HIGH: Constexpr[float],
                BR: constexpr, BC: constexpr) -> None:
    """One tile, reduced along axis 0, along axis 1 with keep_dims, over everything, and as 3-D."""
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0)
    c: Any = tl.sum(x, axis=0)
    tl.store(col_sum + cols, c)
    k: Any = tl.sum(x, axis=1, keep_dims=True)
    tl.store(row_keep + rows[:, None], k)
    t: Any = tl.max(tl.where(mask, x, LOW), axis=None)
    tl.store(top, t)
    half = tl.arange(0, 2)
    x3 = tl.reshape(x, (2, BR // 2, BC))
    r3: Any = tl.sum(x3, axis=1)
    tl.store(s3 + half[:, None] * BC + cols[None, :], r3)
    low3 = tl.reshape(tl.where(mask, x, HIGH), (2, BR // 2, BC))
    q3: Any = tl.min(low3, axis=-1)
    tl.store(m3 + half[:, None] * (BR // 2) + tl.arange(0, BR // 2)[None, :], q3)


@pytest.mark.parametrize("dtype", [tl.f32, tl.bf16, tl.i8, tl.u64], ids=name)
def test_reduction_axes_and_keep_dims(tile_backend: str, dtype: Any) -> None:
    rows, cols, br, bc = 13, 29, 16, 32
    x = sample(np.random.default_rng(11), (rows, cols), dtype)
    s_type, m_type = expected_sum_type(dtype), expected_max_type(dtype)
    outs = [poisoned(bc, s_type), poisoned(br, s_type), poisoned(1, m_type), poisoned((2, bc), s_type),
            poisoned((2, br // 2), m_type)]
    reduce_axes[(1,)](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], outs[4], rows, cols,
                      LOW=lowest(dtype), HIGH=highest(dtype), BR=br, BC=bc)
    padded = np.zeros((br, bc), wide(x).dtype)
    padded[:rows, :cols] = wide(x)
    high = np.full((br, bc), highest(dtype), padded.dtype)
    high[:rows, :cols] = wide(x)
    col_sum, row_keep, top, s3, m3 = (o.numpy() for o in outs)
    np.testing.assert_array_equal(col_sum, rounded(padded.sum(axis=0), s_type))
    np.testing.assert_array_equal(row_keep, rounded(padded.sum(axis=1), s_type))
    np.testing.assert_array_equal(top, rounded([x.max()], m_type))
    np.testing.assert_array_equal(s3, rounded(padded.reshape(2, br // 2, bc).sum(axis=1), s_type))
    np.testing.assert_array_equal(m3, rounded(high.reshape(2, br // 2, bc).min(axis=-1), m_type))


@tl.kernel
def nan_max(x_ptr: Pointer[f32], out: Pointer[f32], at: Pointer[i32], BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    tl.store(out + row, tl.max(x, axis=0))
    tl.store(out + 4 + row, tl.min(x, axis=0))
    tl.store(at + row, tl.argmax(x, axis=0))


def test_max_and_min_ignore_nan_unless_all_nan(tile_backend: str) -> None:
    x = np.array([[1, np.nan, 3, -2], [np.nan] * 4, [np.nan, -1, np.nan, -1], [0, 0, 5, 5]], np.float32)
    out, at = poisoned(8, tl.f32), poisoned(4, tl.i32)
    nan_max[(4,)](tl.to_device(x), out, at, BLOCK=4)
    np.testing.assert_array_equal(out.numpy(), [3, np.nan, -1, 5, -2, np.nan, -1, 0])
    np.testing.assert_array_equal(at.numpy()[[0, 2, 3]], [2, 1, 2])


@tl.kernel
def row_xor(x_ptr: Pointer[IntN], out: Pointer[IntN], n_rows: int, n_cols: int, BR: constexpr, BC: constexpr) -> None:
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0)
    tl.store(out + rows, tl.xor_sum(x, axis=1), mask=rows < n_rows)


@pytest.mark.parametrize("dtype", INTS, ids=name)
def test_xor_sum_every_integer_dtype(tile_backend: str, dtype: Any) -> None:
    info = np.iinfo(np_type(dtype))
    x = np.random.default_rng(12).integers(int(info.min), int(info.max), (ROWS, COLS), dtype=np_type(dtype),
                                           endpoint=True)
    out = poisoned(ROWS, dtype)
    row_xor[GRID](tl.to_device(x), out, ROWS, COLS, BR=BR, BC=BC)
    np.testing.assert_array_equal(out.numpy(), np.bitwise_xor.reduce(x, axis=1))


@tl.kernel
def shared_reductions(out: Pointer[i32], BLOCK: constexpr) -> None:
    """Reductions of a block every program shares (tl.arange) plus a per-program one."""
    pid = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    tl.store(out + pid, tl.sum(r, axis=0) + tl.max(r + pid, axis=0) * 1000)


def test_shared_and_per_program_blocks_reduce_per_program(tile_backend: str) -> None:
    out = poisoned(5, tl.i32)
    shared_reductions[(5,)](out, BLOCK=16)
    np.testing.assert_array_equal(out.numpy(), 120 + (15 + np.arange(5)) * 1000)


@tl.kernel
def sum_as(x_ptr: Pointer[tl.i8], h_ptr: Pointer[tl.f16], out16: Pointer[tl.i16], out32: Pointer[f32],
           BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x: Any = tl.load(x_ptr + offs)
    h: Any = tl.load(h_ptr + offs)
    wider: Any = (tl.i16, tl.f32)  # untyped: the signature has no overload taking a dtype yet
    tl.store(out16, tl.sum(x, axis=0, dtype=wider[0]))
    tl.store(out32, tl.sum(h, axis=0, dtype=wider[1]))


def test_sum_with_dtype_converts_first_and_returns_that_dtype(tile_backend: str) -> None:
    x = np.full(64, 100, np.int8)  # 6400 overflows i8 but not i16
    h = np.full(64, 2049, np.float32).astype(np.float16)  # 2048 in f16
    out16, out32 = poisoned(1, tl.i16), poisoned(1, tl.f32)
    sum_as[(1,)](tl.to_device(x), tl.to_device(h), out16, out32, BLOCK=64)
    assert out16.numpy()[0] == 6400 and out32.numpy()[0] == 64 * 2048


# ------------------------------------------------------------------------------ reduce / associative_scan


@tl.func
def compose(p: Tensor[u32, R0], q: Tensor[u32, R0]) -> Tensor[u32, R0]:
    """Affine maps x -> a*x + b (mod 2**16) packed as (a << 16) | b, composed: p first, then q.
    Associative but not commutative, so the combine order shows."""
    a1, b1 = p >> 16, p & 0xFFFF
    a2, b2 = q >> 16, q & 0xFFFF
    return (((a1 * a2) & 0xFFFF) << 16) | ((a2 * b1 + b2) & 0xFFFF)


@tl.func
def add_f32(a: Tensor[f32, R0], b: Tensor[f32, R0]) -> Tensor[f32, R0]:
    return a + b


IDENTITY = 1 << 16  # the map x -> x


@tl.kernel
def combine_rows(x_ptr: Pointer[u32], folded: Pointer[u32], scan: Pointer[u32], rscan: Pointer[u32], n: int,
                 BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    offs = row * n + cols
    x = tl.load(x_ptr + offs, mask=cols < n, other=IDENTITY)
    tl.store(folded + row, tl.reduce(x, 0, compose))
    tl.store(scan + offs, tl.associative_scan(x, 0, compose), mask=cols < n)
    tl.store(rscan + offs, tl.associative_scan(x, 0, compose, reverse=True), mask=cols < n)


def _compose(p: int, q: int) -> int:
    a1, b1, a2, b2 = p >> 16, p & 0xFFFF, q >> 16, q & 0xFFFF
    return (((a1 * a2) & 0xFFFF) << 16) | ((a2 * b1 + b2) & 0xFFFF)


def test_reduce_and_scan_keep_operand_order(tile_backend: str) -> None:
    rows, n = 5, 27
    x = np.random.default_rng(13).integers(0, 2**32, (rows, n), dtype=np.uint32)
    folded, scan, rscan = poisoned(rows, tl.u32), poisoned((rows, n), tl.u32), poisoned((rows, n), tl.u32)
    combine_rows[(rows,)](tl.to_device(x), folded, scan, rscan, n, BLOCK=32)
    want_fold, want_scan, want_rscan = np.zeros(rows, np.uint32), np.zeros_like(x), np.zeros_like(x)
    for r in range(rows):
        acc = int(x[r, 0])
        want_scan[r, 0] = acc
        for c in range(1, n):
            acc = _compose(acc, int(x[r, c]))
            want_scan[r, c] = acc
        want_fold[r] = acc
        acc = int(x[r, n - 1])
        want_rscan[r, n - 1] = acc
        for c in range(n - 2, -1, -1):  # reverse: x[n-1] . x[n-2] . ... . x[c]
            acc = _compose(acc, int(x[r, c]))
            want_rscan[r, c] = acc
    np.testing.assert_array_equal(folded.numpy(), want_fold)
    np.testing.assert_array_equal(scan.numpy(), want_scan)
    np.testing.assert_array_equal(rscan.numpy(), want_rscan)


@tl.kernel
def combine_tile(x_ptr: Pointer[f32], by_col: Pointer[f32], keep: Pointer[f32], everything: Pointer[f32],
                 scan0: Pointer[f32], BR: constexpr, BC: constexpr) -> None:
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    offs = rows[:, None] * BC + cols[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(by_col + cols, tl.reduce(x, 0, add_f32))
    tl.store(keep + rows[:, None], tl.reduce(x, 1, add_f32, keep_dims=True))
    tl.store(everything, tl.reduce(x, None, add_f32))
    tl.store(scan0 + offs, tl.associative_scan(x, 0, add_f32))


def test_reduce_along_each_axis_matches_sum(tile_backend: str) -> None:
    x = sample(np.random.default_rng(14), (8, 16), tl.f32)
    outs = [poisoned(16, tl.f32), poisoned(8, tl.f32), poisoned(1, tl.f32), poisoned((8, 16), tl.f32)]
    combine_tile[(1,)](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], BR=8, BC=16)
    by_col, keep, everything, scan0 = (o.numpy() for o in outs)
    np.testing.assert_array_equal(by_col, x.sum(axis=0))
    np.testing.assert_array_equal(keep, x.sum(axis=1))
    np.testing.assert_array_equal(everything, [x.sum()])
    np.testing.assert_array_equal(scan0, np.cumsum(x, axis=0))


# ------------------------------------------------------------------------------ cumsum, cumprod


@tl.kernel
def scans(x_ptr: Pointer[Num], y_ptr: Pointer[Num], fwd: Pointer[S], back: Pointer[S], prod: Pointer[Num],
          flags: Pointer[u32], n_rows: int, n_cols: int, BR: constexpr, BC: constexpr) -> None:
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    f: Any = tl.cumsum(x, axis=1)
    b: Any = tl.cumsum(x, axis=0, reverse=True)
    unknown: Any = x  # the comparison is not typed for a TypeVar with a union bound
    positive = unknown > 0
    tl.store(fwd + offs, f, mask=mask)
    tl.store(back + offs, b, mask=mask)
    tl.store(prod + offs, tl.cumprod(y, axis=1), mask=mask)
    tl.store(flags + offs, tl.cumsum(positive, axis=1), mask=mask)


@pytest.mark.parametrize("dtype", NUMERIC, ids=name)
def test_cumsum_and_cumprod_every_numeric_dtype(tile_backend: str, dtype: Any) -> None:
    rows, cols = 13, 29
    gen = np.random.default_rng(15)
    x = sample(gen, (rows, cols), dtype)
    if dtype in FLOATS:  # factors near +-1 keep the running products in range
        y = (gen.integers(6, 11, (rows, cols)) / 8 * gen.choice([-1, 1], (rows, cols))).astype(np_type(dtype))
    else:
        y = sample(gen, (rows, cols), dtype, -3, 3)
    s_type = expected_sum_type(dtype)
    outs = [poisoned((rows, cols), s_type), poisoned((rows, cols), s_type), poisoned((rows, cols), dtype),
            poisoned((rows, cols), tl.u32)]
    scans[(1,)](tl.to_device(x), tl.to_device(y), outs[0], outs[1], outs[2], outs[3], rows, cols, BR=16, BC=32)
    fwd, back, prod, flags = (o.numpy() for o in outs)
    np.testing.assert_array_equal(fwd, rounded(np.cumsum(wide(x), axis=1), s_type))
    np.testing.assert_array_equal(back, rounded(np.cumsum(wide(x)[::-1], axis=0)[::-1], s_type))
    np.testing.assert_array_equal(flags, np.cumsum(x > 0, axis=1))
    products = np.multiply.accumulate(wide(y), axis=1)  # integers wrap modulo 2**64, so modulo 2**bits too
    if dtype in FLOATS:
        np.testing.assert_allclose(prod.astype(np.float64), products, rtol=TOL[name(dtype)])
    else:
        np.testing.assert_array_equal(prod, rounded(products, dtype))


def test_integer_sums_wrap_in_their_accumulator(tile_backend: str) -> None:
    x = np.full((1, 8), 2**30, np.int32)
    x[0, 0] = 5
    outs = [poisoned(8, tl.i32), poisoned(8, tl.i32), poisoned(1, tl.i32), poisoned((2, 8), tl.i32),
            poisoned((2, 4), tl.i32)]
    reduce_axes[(1,)](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], outs[4], 1, 8,
                      LOW=lowest(tl.i32), HIGH=highest(tl.i32), BR=8, BC=8)
    assert outs[1].numpy()[0] == np.int64(5 + 7 * 2**30).astype(np.int32)


# ------------------------------------------------------------------------------ sort, flip


@tl.kernel
def sort_flip(x_ptr: Pointer[Num], up: Pointer[Num], down: Pointer[Num], flipped: Pointer[Num],
              flipped0: Pointer[Num], n_rows: int, n_cols: int, LOW: Constexpr[float], HIGH: Constexpr[float],
              BR: constexpr, BC: constexpr) -> None:
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.where(mask, tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask), HIGH)
    out = rows[:, None] * n_cols + cols[None, :]
    tl.store(up + out, tl.sort(x), mask=mask)
    tl.store(down + out, tl.sort(tl.where(mask, x, LOW), descending=True), mask=mask)
    tile = rows[:, None] * BC + cols[None, :]
    tl.store(flipped + tile, tl.flip(x))
    tl.store(flipped0 + tile, tl.flip(x, 0))


@pytest.mark.parametrize("dtype", NUMERIC, ids=name)
def test_sort_and_flip_every_numeric_dtype(tile_backend: str, dtype: Any) -> None:
    rows, cols, br, bc = 5, 13, 8, 16
    x = sample(np.random.default_rng(16), (rows, cols), dtype, -100, 100)
    outs = [poisoned((rows, cols), dtype), poisoned((rows, cols), dtype), poisoned((br, bc), dtype),
            poisoned((br, bc), dtype)]
    sort_flip[(1,)](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], rows, cols,
                    LOW=lowest(dtype), HIGH=highest(dtype), BR=br, BC=bc)
    up, down, flipped, flipped0 = (o.numpy() for o in outs)
    padded = np.full((br, bc), highest(dtype)).astype(np_type(dtype))
    padded[:rows, :cols] = x
    np.testing.assert_array_equal(up, np.sort(x, axis=1))
    np.testing.assert_array_equal(down, np.sort(x, axis=1)[:, ::-1])
    np.testing.assert_array_equal(flipped, padded[:, ::-1])
    np.testing.assert_array_equal(flipped0, padded[::-1])


# ------------------------------------------------------------------------------ histogram, gather


@tl.kernel
def histogram_kernel(x_ptr: Pointer[Int[W]], out: Pointer[i32], n: int, BLOCK: constexpr, BINS: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out + pid * BINS + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


@pytest.mark.parametrize("dtype", SIGNED, ids=name)
def test_histogram_ignores_masked_and_out_of_range_values(tile_backend: str, dtype: Any) -> None:
    n, block, bins = 300, 128, 32
    x = np.random.default_rng(17).integers(-5, 40, n).astype(np_type(dtype))
    out = poisoned((3, bins), tl.i32)
    histogram_kernel[(3,)](tl.to_device(x), out, n, BLOCK=block, BINS=bins)
    padded = np.full(3 * block, -1, np.int64)
    padded[:n] = x
    for p, chunk in enumerate(padded.reshape(3, block)):
        kept = chunk[(chunk >= 0) & (chunk < bins)]
        np.testing.assert_array_equal(out.numpy()[p], np.bincount(kept, minlength=bins))


@tl.kernel
def gather_kernel(src_ptr: Pointer[D], cols_ptr: Pointer[i32], rows_ptr: Pointer[Int[W]], by_col: Pointer[D],
                  by_row: Pointer[D], R: constexpr, C: constexpr) -> None:
    base = tl.program_id(0) * R * C
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    wide_cols = tl.arange(0, 2 * C)
    src = tl.load(src_ptr + base + rows[:, None] * C + cols[None, :])
    pick_cols = tl.load(cols_ptr + base * 2 + rows[:, None] * (2 * C) + wide_cols[None, :])
    pick_rows = tl.load(rows_ptr + base + rows[:, None] * C + cols[None, :])
    tl.store(by_col + base * 2 + rows[:, None] * (2 * C) + wide_cols[None, :], tl.gather(src, pick_cols, 1))
    tl.store(by_row + base + rows[:, None] * C + cols[None, :], tl.gather(src, pick_rows, 0))


@pytest.mark.parametrize("dtype", [tl.f16, tl.bf16, tl.f32, tl.i8, tl.u64, tl.bool_], ids=name)
def test_gather_along_each_axis(tile_backend: str, dtype: Any) -> None:
    programs, r, c = 3, 8, 16
    gen = np.random.default_rng(18)
    src = sample(gen, (programs, r, c), dtype)
    pick_cols = gen.integers(0, c, (programs, r, 2 * c)).astype(np.int32)
    pick_rows = gen.integers(0, r, (programs, r, c)).astype(np.int64)
    by_col, by_row = poisoned((programs, r, 2 * c), dtype), poisoned((programs, r, c), dtype)
    gather_kernel[(programs,)](tl.to_device(src), tl.to_device(pick_cols), tl.to_device(pick_rows), by_col, by_row,
                               R=r, C=c)
    np.testing.assert_array_equal(by_col.numpy(), np.take_along_axis(src, pick_cols, axis=2))
    np.testing.assert_array_equal(by_row.numpy(), np.take_along_axis(src, pick_rows, axis=1))


# ------------------------------------------------------------------------------ errors (reference only)


@tl.func
def branchy_max(a: Tensor[f32, R0], b: Tensor[f32, R0]) -> Tensor[f32, R0]:
    """A combine function with a runtime branch, which both backends refuse in a reduction (here, so
    the compiler's error names this file, as the misuse cases' errors do)."""
    if a > b:
        return a
    return b


@tl.kernel
def misuse(x_ptr: Pointer[f32], out: Pointer[f32], CASE: Constexpr[str]) -> None:
    offs = tl.arange(0, 16)
    x: Any = tl.load(x_ptr + offs)
    tile: Any = tl.reshape(x, (4, 4))
    r: Any = x
    if CASE == "axis":
        r = tl.sum(tile, axis=2)
    elif CASE == "sort_dim":
        r = tl.sort(tile, dim=0)
    elif CASE == "xor_float":
        r = tl.xor_sum(x, axis=0)
    elif CASE == "branch":
        r = tl.reduce(x, 0, branchy_max)
    elif CASE == "gather_range":
        r = tl.gather(x, offs + 1, 0)
    elif CASE == "bins":
        r = tl.histogram(offs, 12)
    tl.store(out + tl.arange(0, 1), tl.reshape(tl.sum(tl.ravel(r), axis=0), (1,)))


@pytest.mark.parametrize(("case", "message"), [
    ("axis", "invalid axis 2: out of range for a block of rank 2"),
    ("sort_dim", "sorts along the last axis only"),
    ("xor_float", "needs an integer block"),
    ("branch", "must be branch-free"),
    ("gather_range", r"index 16 is outside \[0, 16\)"),
    ("bins", "powers of two"),
])
def test_misuse_is_a_kernel_error_at_the_line(case: str, message: str) -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.random.default_rng(19).standard_normal(16).astype(np.float32))
        with pytest.raises(tl.KernelError, match=message) as info:
            misuse[(2,)](x, tl.empty(1, tl.f32), CASE=case)
        assert info.value.filename == __file__
