"""Pointer patterns the reference keeps lazy (affine offsets, box masks): every variant must
give the same answer as the plain arithmetic, including reversed, overlapping and ragged ones."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32


@tl.kernel
def tile_copy(src: Pointer[f32], dst: Pointer[f32], M: int, N: int, stride: int, REVERSE: constexpr,
              BM: constexpr, BN: constexpr) -> None:
    """Copy an M x N tile grid; with REVERSE, columns are read right to left (a negative stride)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    cols = (N - 1 - rn) if REVERSE else rn
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(src + rm[:, None] * stride + cols[None, :], mask=mask, other=-1.0)
    tl.store(dst + rm[:, None] * N + rn[None, :], v * 2.0, mask=mask)


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize(("m", "n"), [(64, 64), (37, 45), (1, 5)])
def test_tile_copy_matches_numpy(tile_backend: str, reverse: int, m: int, n: int) -> None:
    rng = np.random.default_rng(m * n + reverse)
    stride = n + 3
    src = rng.standard_normal((m, stride)).astype(np.float32)
    dst = tl.to_device(np.full((m, n), np.nan, np.float32), tl.f32)
    tile_copy[(tl.cdiv(m, 16), tl.cdiv(n, 32))](tl.to_device(src, tl.f32), dst, m, n, stride, REVERSE=reverse,
                                                 BM=16, BN=32)
    body = src[:, :n][:, ::-1] if reverse else src[:, :n]
    np.testing.assert_array_equal(dst.numpy(), body.astype(np.float64) * 2.0)


@tl.kernel
def overlapping_rows(dst: Pointer[i32], BLOCK: constexpr) -> None:
    """Program p writes p into BLOCK lanes starting at p * 2: neighbours overlap."""
    pid = tl.program_id(0)
    offs = pid * 2 + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.full((BLOCK,), 0, tl.i32) + pid)


def test_overlapping_stores_are_a_race_on_reference() -> None:
    with tl.backend("numpy"):
        dst = tl.to_device(np.full(2 * 9 + 8, -1, np.int32), tl.i32)
        with pytest.raises(tl.KernelError, match=r"data race on dst\[2\]: program \(1,\) stores it \(lane 0, line \d+ of "
                           r"test_affine_paths.py\) and program \(0,\) stores it"):
            overlapping_rows[(10,)](dst, BLOCK=8)
        assert (dst.numpy() == -1).all()


def test_overlapping_stores_keep_the_last_program_without_the_race_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILE_LANG_RACE_CHECK", "0")
    with tl.backend("numpy"):
        dst = tl.to_device(np.full(2 * 9 + 8, -1, np.int32), tl.i32)
        overlapping_rows[(10,)](dst, BLOCK=8)
        expected = np.full(26, -1)
        for pid in range(10):
            expected[pid * 2: pid * 2 + 8] = pid
        np.testing.assert_array_equal(dst.numpy(), expected)


@tl.kernel
def unsigned_compare(out: Pointer[i32], limit: Pointer[tl.u32], BLOCK: constexpr) -> None:
    """Offsets from -4: as u32 the negative lanes compare huge (Triton's promotion)."""
    offs = tl.arange(0, BLOCK) - 4
    bound = tl.load(limit)
    inside = offs.to(tl.u32) < bound
    tl.store(out + tl.arange(0, BLOCK), tl.where(inside, 1, 0))


def test_unsigned_comparison_of_offsets(tile_backend: str) -> None:
    out = tl.to_device(np.full(16, -1, np.int32), tl.i32)
    unsigned_compare[(1,)](out, tl.to_device(np.array([6], np.uint32), tl.u32), BLOCK=16)
    lanes = (np.arange(16) - 4).astype(np.uint32)
    np.testing.assert_array_equal(out.numpy(), (lanes < 6).astype(np.int32))


@tl.kernel
def ragged_rows(src: Pointer[f32], dst: Pointer[f32], n_rows: int, n_cols: int, BLOCK: constexpr) -> None:
    """One row per program, the mask built from both a row and a column bound."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = (cols < n_cols) & (cols < n_rows + row)
    v = tl.load(src + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(dst + row * n_cols + cols, v + 1.0, mask=mask)


def test_box_masks_with_per_program_limits(tile_backend: str) -> None:
    rng = np.random.default_rng(5)
    rows, cols = 6, 20
    src = rng.standard_normal((rows, cols)).astype(np.float32)
    dst = tl.to_device(np.full((rows, cols), np.nan, np.float32), tl.f32)
    ragged_rows[(rows,)](tl.to_device(src, tl.f32), dst, 3, cols, BLOCK=32)
    got = dst.numpy()
    for r in range(rows):
        live = min(cols, 3 + r)
        np.testing.assert_array_equal(got[r, :live], src[r, :live] + np.float32(1.0))
        assert np.isnan(got[r, live:]).all()
