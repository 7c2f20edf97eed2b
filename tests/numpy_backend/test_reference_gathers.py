"""Gathers, scatters and in-place updates through affine pointers whose programs' bases no
strided view serves (a 1-D grid split with ``%`` and ``//``, a row chosen by a scalar if/elif):
the reference copies whole rows, checks bounds per program and lane by lane only where a row
leaves memory, and skips the race check's records where a store provably meets only its own
programs' loads. Every variant must give the plain answer, the same errors and the same races."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32


@tl.kernel
def mirror_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], H: int, W: int, OH: int, OW: int, PAD: constexpr,
                BLOCK: constexpr) -> None:
    """Reflection pad by PAD, one program per tile of an output row: the row mirrored by a
    scalar if/elif, the columns by masked loads (centre, left reversed, right reversed)."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK)
    tile, rest = pid % tiles, pid // tiles
    oh, plane = rest % OH, rest // OH
    ow = tile * BLOCK + tl.arange(0, BLOCK)
    ih = oh - PAD
    if ih < 0:
        ih = -ih
    elif ih >= H:
        ih = 2 * (H - 1) - ih
    base = plane * H * W + ih * W
    iw = ow - PAD
    live = ow < OW
    left, right = iw < 0, iw >= W
    centre = tl.load(x_ptr + base + iw, mask=live & (iw >= 0) & (iw < W), other=0.0)
    low = tl.load(x_ptr + base - iw, mask=live & left, other=0.0)
    high = tl.load(x_ptr + base + 2 * (W - 1) - iw, mask=live & right, other=0.0)
    tl.store(y_ptr + (plane * OH + oh) * OW + ow, tl.where(left, low, tl.where(right, high, centre)), mask=live)


@pytest.mark.parametrize(("planes", "h", "w", "block"), [(1, 5, 7, 4), (3, 9, 20, 8), (4, 33, 61, 16)])
def test_mirrored_rows_match_numpy(tile_backend: str, planes: int, h: int, w: int, block: int) -> None:
    pad = 3
    rng = np.random.default_rng(h * w + block)
    x = rng.standard_normal((planes, h, w)).astype(np.float32)
    y = tl.to_device(np.full((planes, h + 2 * pad, w + 2 * pad), np.nan, np.float32), tl.f32)
    oh, ow = h + 2 * pad, w + 2 * pad
    for _ in range(2):  # the second launch starts with the group size the first one learnt
        mirror_rows[(planes * oh * tl.cdiv(ow, block),)](tl.to_device(x, tl.f32), y, h, w, oh, ow, PAD=pad,
                                                         BLOCK=block)
        np.testing.assert_array_equal(y.numpy(), np.pad(x, ((0, 0), (pad, pad), (pad, pad)), mode="reflect"))


@tl.kernel
def shifted_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], W: int, OW: int, SHIFT: constexpr,
                 BLOCK: constexpr) -> None:
    """Row r of y from row (r * 7) % rows of x, its columns shifted by SHIFT: with SHIFT 1 the
    mask keeps one lane too many, which leaves x in the last row."""
    pid = tl.program_id(0)
    rows = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    src = (pid * 7) % rows
    v = tl.load(x_ptr + src * W + cols + SHIFT, mask=cols < W)
    tl.store(y_ptr + pid * OW + cols, v, mask=cols < OW)


def test_a_live_lane_outside_memory_names_its_program_lane_and_line() -> None:
    rows, w = 100, 16
    x = tl.to_device(np.arange(rows * w, dtype=np.float32).reshape(rows, w), tl.f32)
    y = tl.to_device(np.full((rows, w), np.nan, np.float32), tl.f32)
    last = next(p for p in range(rows) if (p * 7) % rows == rows - 1)
    line = next(k for k, text in enumerate(open(__file__), 1) if "v = tl.load(x_ptr + src" in text)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=re.escape(
            f"out-of-bounds load through x_ptr: program ({last},), lane 15, offset {rows * w}, but x_ptr has "
            f"{rows * w} elements")) as info:
        shifted_rows[(rows,)](x, y, w, w, SHIFT=1, BLOCK=w)
    assert info.value.lineno == line
    assert np.isnan(y.numpy()).all()  # nothing ran


@tl.kernel
def scattered_rows(y_ptr: Pointer[f32], OW: int, STEP: constexpr, BLOCK: constexpr) -> None:
    """Program p writes p into the live lanes of row (p * 7) % rows, starting at column
    STEP * (p % 2): with STEP 2 an odd program's last live lane reaches the next row."""
    pid = tl.program_id(0)
    rows = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    start = STEP * (pid % 2)
    tl.store(y_ptr + ((pid * 7) % rows) * OW + start + cols, tl.full((BLOCK,), 1.0, tl.f32) * pid,
             mask=cols < OW - 1)


def test_scattered_rows_whose_lanes_stray_past_the_end_match_numpy(tile_backend: str) -> None:
    rows, w = 90, 12
    y = tl.to_device(np.full((rows, w), np.nan, np.float32), tl.f32)
    scattered_rows[(rows,)](y, w, STEP=0, BLOCK=16)  # lanes 11..15 of the last row lie past the end, masked
    expected = np.full((rows, w), np.nan, np.float32)
    for p in range(rows):
        expected[(p * 7) % rows, : w - 1] = p
    np.testing.assert_array_equal(y.numpy(), expected)


def test_scattered_rows_that_meet_are_a_race() -> None:
    rows, w = 90, 16
    y = tl.to_device(np.full((rows, w), np.nan, np.float32), tl.f32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=r"data race on y_ptr\[\d+\]: program \(\d+,\) "
                                            r"stores it .* and program \(\d+,\) stores it"):
        scattered_rows[(rows,)](y, w, STEP=2, BLOCK=w)
    assert np.isnan(y.numpy()).all()


@tl.kernel
def scale_in_place(p_ptr: Pointer[f32], m_ptr: Pointer[f32], n: int, SHIFT: constexpr, BLOCK: constexpr) -> None:
    """An optimizer-like step in place on two buffers; with SHIFT, program p writes p's new
    values one block on, over what program p + 1 loaded."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    p = tl.load(p_ptr + offs, mask=live)
    m = 0.9 * tl.load(m_ptr + offs, mask=live) + 0.1 * p
    tl.store(m_ptr + offs, m, mask=live)
    tl.store(p_ptr + offs + SHIFT * BLOCK, p - 0.5 * m, mask=live & (offs + SHIFT * BLOCK < n))


@pytest.mark.parametrize("programs", [8, 200])
def test_an_in_place_step_matches_numpy(tile_backend: str, programs: int) -> None:
    block = 32
    n = programs * block - 5
    rng = np.random.default_rng(programs)
    p0, m0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    p, m = tl.to_device(p0, tl.f32), tl.to_device(m0, tl.f32)
    scale_in_place[(programs,)](p, m, n, SHIFT=0, BLOCK=block)
    # float64 references; the CUDA backend may contract a * b + c into one rounding (an FMA), as Triton does
    m1 = 0.9 * m0.astype(np.float64) + 0.1 * p0.astype(np.float64)
    np.testing.assert_allclose(m.numpy(), m1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(p.numpy(), p0 - 0.5 * m1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("programs", [8, 200])
def test_an_in_place_step_writing_a_neighbours_block_is_a_race(programs: int) -> None:
    block = 32
    n = programs * block
    p0 = np.random.default_rng(programs).standard_normal(n).astype(np.float32)
    p, m = tl.to_device(p0, tl.f32), tl.to_device(np.zeros(n, np.float32), tl.f32)
    with tl.backend("numpy"):
        for _ in range(2):  # also once the launch has learnt its group size
            with pytest.raises(tl.KernelError, match=r"data race on p_ptr\[\d+\]: program \(\d+,\) stores it .* and "
                               r"program \(\d+,\) loads it"):
                scale_in_place[(programs,)](p, m, n, SHIFT=1, BLOCK=block)
            np.testing.assert_array_equal(p.numpy(), p0)


@tl.kernel
def windowed_copy(x_ptr: Pointer[f32], y_ptr: Pointer[f32], n: int, lo: int, hi: int, STRIDE: constexpr,
                  BLOCK: constexpr) -> None:
    """Lanes kept by bounds on both sides, written as each comparison form, and by a per-program
    flag: every program's live lanes are one range (a lazy mask of the reference)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK * STRIDE + tl.arange(0, BLOCK) * STRIDE
    keep = (offs >= lo) & (hi > offs) & (offs < n) & (pid % 3 != 1)
    keep_too = (lo <= offs) & (offs <= hi - 1) & (n > offs) & (pid % 3 != 1)
    v = tl.load(x_ptr + offs, mask=keep, other=-1.0)
    tl.store(y_ptr + offs, v + tl.where(keep_too, 0.0, 100.0), mask=offs < n)


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize(("lo", "hi"), [(0, 1000), (5, 77), (-9, 13), (40, 30)])
def test_two_sided_masks_match_numpy(tile_backend: str, stride: int, lo: int, hi: int) -> None:
    block, programs = 16, 7
    n = programs * block * stride - 3
    rng = np.random.default_rng(abs(lo) * 31 + hi + stride)
    x = rng.standard_normal(n).astype(np.float32)
    y = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
    windowed_copy[(programs,)](tl.to_device(x, tl.f32), y, n, lo, hi, STRIDE=stride, BLOCK=block)
    offs = np.arange(n)
    keep = (offs >= lo) & (offs < hi) & (offs // (block * stride) % 3 != 1)
    expected = np.full(n, np.nan, np.float32)
    on_lane = offs % stride == 0
    expected[on_lane] = np.where(keep, x.astype(np.float64), -1.0 + 100.0)[on_lane]
    np.testing.assert_array_equal(y.numpy(), expected)


@tl.kernel
def c_division(out_ptr: Pointer[tl.i32], a: int, K: constexpr) -> None:
    """``a // K`` and ``a % K`` of a scalar every program shares (a loop index, say) and of one
    that differs per program: C's truncated quotient and remainder both ways."""
    pid = tl.program_id(0)
    mine = a + pid * 0  # per program, equal to a
    tl.store(out_ptr + pid * 4 + tl.arange(0, 4), tl.where(tl.arange(0, 4) == 0, a // K, tl.where(
        tl.arange(0, 4) == 1, a % K, tl.where(tl.arange(0, 4) == 2, mine // K, mine % K))))


@pytest.mark.parametrize("k", [3, -3, 1])
def test_scalar_division_truncates_as_c_does(tile_backend: str, k: int) -> None:
    for a in (-7, -6, -1, 0, 5, 2**31 - 1, -(2**31)):
        out = tl.to_device(np.full((3, 4), -99, np.int32), tl.i32)
        c_division[(3,)](out, a, K=k)
        quotient = int(np.trunc(a / k)) if abs(a) < 2**30 else -(-a // k) if (a < 0) != (k < 0) else a // k
        expected = np.array([quotient, a - k * quotient] * 2, np.int64)
        np.testing.assert_array_equal(out.numpy(), np.broadcast_to(expected, (3, 4)))


@tl.kernel
def sparse_rows(y_ptr: Pointer[f32], OW: int, BLOCK: constexpr) -> None:
    """Program p writes p into the lanes of row (p * 7) % rows that a mask with holes keeps."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + ((pid * 7) % tl.num_programs(0)) * OW + cols, tl.full((BLOCK,), 1.0, tl.f32) * pid,
             mask=(cols % 3 != 1) & (cols < OW))


def test_rows_stored_through_a_mask_with_holes_match_numpy(tile_backend: str) -> None:
    rows, w = 90, 13
    y = tl.to_device(np.full((rows, w), np.nan, np.float32), tl.f32)
    sparse_rows[(rows,)](y, w, BLOCK=16)
    expected = np.full((rows, w), np.nan, np.float32)
    for p in range(rows):
        expected[(p * 7) % rows, np.arange(w) % 3 != 1] = p
    np.testing.assert_array_equal(y.numpy(), expected)


@tl.kernel
def edge_lanes(x_ptr: Pointer[f32], y_ptr: Pointer[f32], W: int, SHIFT: int, LO: constexpr, HI: constexpr,
               BLOCK: constexpr) -> None:
    """Lanes LO..HI-1 of a reversed row of x (row (p * 7) % rows, from column SHIFT down), the
    others ``other``, a value per lane: only a few lanes of every program are live."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row = (pid * 7) % tl.num_programs(0)
    v = tl.load(x_ptr + row * W + SHIFT - cols, mask=(cols >= LO) & (cols < HI), other=cols.to(tl.f32) - 50.0)
    tl.store(y_ptr + pid * BLOCK + cols, v)


@pytest.mark.parametrize(("lo", "hi"), [(0, 3), (5, 7), (9, 9), (2, 16)])
def test_a_few_live_lanes_of_each_program_match_numpy(tile_backend: str, lo: int, hi: int) -> None:
    rows, w, block, shift = 90, 20, 16, 17
    x = np.random.default_rng(lo * 16 + hi).standard_normal((rows, w)).astype(np.float32)
    y = tl.to_device(np.full((rows, block), np.nan, np.float32), tl.f32)
    edge_lanes[(rows,)](tl.to_device(x, tl.f32), y, w, shift, LO=lo, HI=hi, BLOCK=block)
    cols = np.arange(block)
    expected = np.broadcast_to(cols - 50.0, (rows, block)).copy()
    for p in range(rows):
        live = (cols >= lo) & (cols < hi)
        expected[p, live] = x[(p * 7) % rows, shift - cols[live]]
    np.testing.assert_array_equal(y.numpy(), expected)


def test_a_few_live_lanes_outside_memory_name_their_lane() -> None:
    rows, w, block = 90, 20, 16
    x = tl.to_device(np.zeros((rows, w), np.float32), tl.f32)
    y = tl.to_device(np.full((rows, block), np.nan, np.float32), tl.f32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=re.escape(
            "out-of-bounds load through x_ptr: program (0,), lane 5, offset -3, but x_ptr has 1800 elements")):
        edge_lanes[(rows,)](x, y, w, 2, LO=5, HI=7, BLOCK=block)  # row 0 of program 0, columns 2 - lane
    assert np.isnan(y.numpy()).all()
