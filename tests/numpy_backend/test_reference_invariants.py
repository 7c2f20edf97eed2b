"""The reference's shortcuts for gather-heavy kernels against its general paths: a group keeps
integer arithmetic it meets again (a runtime loop's index math, ``memo``), a store writes a
tile past a row's end as rows of a narrower window, and a load or ``tl.where`` with a lazy mask
makes only the lanes some program has live. Each kernel runs both ways on random inputs: the same verdict
(error or race, word for word) and the same memory afterwards, which NumPy checks too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32

from tile_lang_numpy import affine, engine, memory

Array = np.ndarray[Any, Any]


def both_ways(launch: Callable[..., object], *arrays: Array) -> tuple[str, list[Array]]:
    """``launch`` on copies of ``arrays`` with the shortcuts and with all of them off: its error
    (or '') and the arrays afterwards must be the same both ways; those are returned."""
    results = []
    for general in (False, True):
        copies = [a.copy() for a in arrays]
        with pytest.MonkeyPatch.context() as patch, tl.backend("numpy"):
            if general:
                patch.setattr(engine, "KEPT", frozenset())
                patch.setattr(memory, "_narrow_rows", lambda *_: None)
                patch.setattr(memory, "_lane_box", lambda *_: None)
                patch.setattr(affine.Box, "chosen", lambda *_: None)
            message = ""
            try:
                launch(*(tl.wrap(c) for c in copies))
            except tl.KernelError as exc:
                message = str(exc)
        results.append((message, copies))
    (mine, after), (general_message, general_after) = results
    assert mine == general_message
    for got, want in zip(after, general_after, strict=True):
        np.testing.assert_array_equal(got, want)
    return mine, after


@tl.kernel
def conv1d_taps(x_ptr: Pointer[f32], w_ptr: Pointer[f32], y_ptr: Pointer[f32], C_IN: int, C_OUT: int, L: int,
                K: constexpr, PAD: constexpr, BLOCK: constexpr) -> None:
    """Direct conv1d, one program per tile of an output row of one output channel: a runtime
    loop over input channels and taps whose index math repeats for every channel."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(L, BLOCK)
    tile, rest = pid % tiles, pid // tiles
    c_out, b = rest % C_OUT, rest // C_OUT
    ol = tile * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.f32)
    for idx in range(0, C_IN * K):
        k, c_in = idx % K, idx // K
        il = ol + k - PAD
        live = (ol < L) & (il >= 0) & (il < L)
        x = tl.load(x_ptr + (b * C_IN + c_in) * L + il, mask=live, other=0.0)
        w = tl.load(w_ptr + tl.arange(0, 1) + (c_out * C_IN + c_in) * K + k)
        acc = acc + x * tl.broadcast_to(w, (BLOCK,))
    tl.store(y_ptr + (b * C_OUT + c_out) * L + ol, acc, mask=ol < L)


@pytest.mark.parametrize(("batch", "c_in", "c_out", "length", "block"), [(1, 1, 1, 5, 8), (2, 3, 4, 37, 16),
                                                                         (3, 5, 2, 64, 32)])
def test_a_runtime_loops_index_math_gives_the_general_paths_values(batch: int, c_in: int, c_out: int, length: int,
                                                                   block: int) -> None:
    k, pad = 3, 1
    rng = np.random.default_rng(batch * 1000 + c_in * 100 + length)
    x = rng.standard_normal((batch, c_in, length)).astype(np.float32)
    w = rng.standard_normal((c_out, c_in, k)).astype(np.float32)
    grid = (batch * c_out * tl.cdiv(length, block),)

    def twice(xb: tl.Buffer[f32], wb: tl.Buffer[f32], yb: tl.Buffer[f32]) -> None:
        for _ in range(2):  # the second launch's first group is sized from the first's blocks
            conv1d_taps[grid](xb, wb, yb, c_in, c_out, length, K=k, PAD=pad, BLOCK=block)

    got, (_, _, y) = both_ways(twice, x, w, np.full((batch, c_out, length), np.nan, np.float32))
    assert got == ""
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad)))
    expected = sum(np.einsum("ncl,oc->nol", padded[:, :, j:j + length], w[:, :, j].astype(np.float64))
                   for j in range(k))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@tl.kernel
def growing_offsets(y_ptr: Pointer[i32], n: int, STEPS: constexpr, SCALE: constexpr, BLOCK: constexpr) -> None:
    """The same products again each step; ``row * SCALE * (k % 3)`` outgrows i32 at step 2 for
    a large SCALE, after the group met its operands at steps 0 and 1."""
    pid = tl.program_id(0)
    row = pid % 4
    offs = tl.arange(0, BLOCK)
    for k in range(0, STEPS):
        far = row * SCALE * (k % 3)
        tl.store(y_ptr + pid * BLOCK + offs, far // SCALE + tl.zeros((BLOCK,), tl.i32), mask=pid * BLOCK + offs < n)


@pytest.mark.parametrize("scale", [1 << 20, 1 << 30])
def test_an_overflow_inside_a_loop_is_the_general_paths_error(scale: int) -> None:
    programs, block = 8, 4
    got, (y,) = both_ways(lambda out: growing_offsets[(programs,)](out, programs * block, STEPS=6, SCALE=scale,
                                                                    BLOCK=block),
                          np.full(programs * block, -7, np.int32))
    if scale == 1 << 20:  # fits: the last step's k % 3 is 2
        assert got == ""
        np.testing.assert_array_equal(y, np.repeat(np.arange(programs) % 4 * 2, block).astype(np.int32))
    else:
        assert "overflow" in got and "far = row * SCALE * (k % 3)" in got, got
        assert (y == -7).all()  # rolled back


@tl.kernel
def divide_after_branch(x_ptr: Pointer[i32], d_ptr: Pointer[i32], y_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    """``x // d`` first where ``d != 0`` (programs with a zero divisor masked off), then for every
    program: the second is a division by zero that the first's result must not hide."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid)
    d = tl.load(d_ptr + pid)
    q = x * 0
    if d != 0:
        q = x // d
    tl.store(y_ptr + pid * BLOCK + offs, q + offs * 0)
    tl.store(y_ptr + pid * BLOCK + offs, x // d + offs * 0)


@pytest.mark.parametrize("zero_at", [-1, 0, 5])
def test_a_division_by_zero_after_a_branch_is_still_reported(zero_at: int) -> None:
    programs, block = 8, 4
    rng = np.random.default_rng(zero_at + 7)
    x = rng.integers(-1000, 1000, programs).astype(np.int32)
    d = (rng.integers(1, 9, programs) * rng.choice([-1, 1], programs)).astype(np.int32)
    if zero_at >= 0:
        d[zero_at] = 0
    got, (_, _, y) = both_ways(lambda xb, db, yb: divide_after_branch[(programs,)](xb, db, yb, BLOCK=block), x, d,
                               np.full(programs * block, -7, np.int32))
    if zero_at < 0:
        assert got == ""
        np.testing.assert_array_equal(y, np.repeat(np.trunc(x / d).astype(np.int32), block))
    else:
        assert "integer division by zero" in got and "x // d + offs * 0" in got, got
        assert (y == -7).all()


@tl.kernel
def accumulate_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], W: int, STEPS: int, SHARE: constexpr,
                    BLOCK: constexpr) -> None:
    """Each program sums STEPS rows of x into its row of y, storing its running sum every step;
    with SHARE 2, programs 2p and 2p + 1 store to one row: a race."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row = pid // SHARE
    acc = tl.zeros((BLOCK,), tl.f32)
    for s in range(0, STEPS):
        acc = acc + tl.load(x_ptr + (pid * STEPS + s) * W + cols, mask=cols < W, other=0.0)
        tl.store(y_ptr + row * W + cols, acc, mask=cols < W)


@pytest.mark.parametrize("share", [1, 2])
@pytest.mark.parametrize("programs", [6, 130])
def test_races_through_kept_index_math_are_the_general_paths(share: int, programs: int) -> None:
    w, steps = 13, 5
    x = np.random.default_rng(programs * share).standard_normal((programs * steps, w)).astype(np.float32)
    got, (_, y) = both_ways(lambda xb, yb: accumulate_rows[(programs,)](xb, yb, w, steps, SHARE=share, BLOCK=16), x,
                            np.full((programs // share, w), np.nan, np.float32))
    if share == 1:
        assert got == ""
        np.testing.assert_allclose(y, x.astype(np.float64).reshape(programs, steps, w).sum(axis=1), rtol=1e-5,
                                   atol=1e-5)
    else:
        assert "data race on y_ptr" in got, got
        assert np.isnan(y).all()


@tl.kernel
def tiles_of_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], z_ptr: Pointer[f32], W: int, OW: int, SPILL: int,
                  READ: int, BLOCK: constexpr) -> None:
    """Row r of x copied to row r of y (OW wide) tile by tile: the last tile of a row has only
    ``OW % BLOCK`` live lanes, and with SPILL > 0 SPILL more, the next row's first elements,
    which that row's first tile writes too: a race. Then y read back into z at READ rows on:
    another program's writes unless READ is 0, a race too."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK)
    tile, row = pid % tiles, pid // tiles
    cols = tile * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * W + cols, mask=cols < OW, other=0.0)
    tl.store(y_ptr + row * OW + cols, v, mask=cols < OW + SPILL)
    rows = tl.num_programs(0) // tiles
    back = tl.load(y_ptr + (row + READ) % rows * OW + cols, mask=cols < OW, other=0.0)
    tl.store(z_ptr + row * OW + cols, back, mask=cols < OW)


@pytest.mark.parametrize(("spill", "read"), [(0, 0), (2, 0), (0, 1)])
@pytest.mark.parametrize(("rows", "ow", "block"), [(3, 10, 8), (40, 37, 16), (300, 70, 64)])
def test_a_tile_past_a_rows_end_gives_the_general_paths_values_and_races(spill: int, read: int, rows: int, ow: int,
                                                                         block: int) -> None:
    w = ow + 5
    x = np.random.default_rng(rows + ow).standard_normal((rows, w)).astype(np.float32)
    got, (_, y, z) = both_ways(lambda xb, yb, zb: tiles_of_rows[(rows * tl.cdiv(ow, block),)](
        xb, yb, zb, w, ow, spill, read, BLOCK=block),
                               x, np.full(rows * ow + spill, np.nan, np.float32), np.full(rows * ow, np.nan, np.float32))
    if spill == read == 0:
        assert got == ""
        np.testing.assert_array_equal(y, x[:, :ow].reshape(-1))
        np.testing.assert_array_equal(z, y)
    else:  # a row's last tile meets the next row's first tile, or a program reads another's row
        assert "data race on y_ptr" in got, got
        assert np.isnan(y).all() and np.isnan(z).all()


@tl.kernel
def mirrored_edges(x_ptr: Pointer[f32], y_ptr: Pointer[f32], W: int, OW: int, PAD: int, BLOCK: constexpr) -> None:
    """Reflection pad of each row by PAD: the left edge's mirrored lanes are a few of the first
    tile's, the right edge's a few of the last tile's (lazy masks whose live lanes are narrow)."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK)
    tile, row = pid % tiles, pid // tiles
    ow = tile * BLOCK + tl.arange(0, BLOCK)
    iw = ow - PAD
    live = ow < OW
    left, right = iw < 0, iw >= W
    centre = tl.load(x_ptr + row * W + iw, mask=live & (iw >= 0) & (iw < W), other=0.0)
    low = tl.load(x_ptr + row * W - iw, mask=live & left, other=-1.0)
    high = tl.load(x_ptr + row * W + 2 * (W - 1) - iw, mask=live & right, other=-2.0)
    tl.store(y_ptr + row * OW + ow, tl.where(left, low, tl.where(right, high, centre)), mask=live)


@pytest.mark.parametrize("pad", [1, 3, 20])
@pytest.mark.parametrize(("rows", "w", "block"), [(2, 9, 8), (50, 40, 32), (7, 128, 64)])
def test_narrow_live_lanes_give_the_general_paths_values_and_errors(pad: int, rows: int, w: int, block: int) -> None:
    ow = w + 2 * pad
    x = np.random.default_rng(rows * w + pad).standard_normal((rows, w)).astype(np.float32)
    got, (_, y) = both_ways(lambda xb, yb: mirrored_edges[(rows * tl.cdiv(ow, block),)](xb, yb, w, ow, pad,
                                                                                         BLOCK=block), x,
                            np.full((rows, ow), np.nan, np.float32))
    if pad < w:
        assert got == ""
        np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (pad, pad)), mode="reflect"))
    else:  # mirrored past the row: the last row's left edge reads past x, row 0's right edge before it
        assert "out-of-bounds load through x_ptr: program (" in got, got
        assert np.isnan(y).all()
