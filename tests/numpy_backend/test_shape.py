"""Shape ops move elements exactly: each result is stored through offsets computed independently
(row-major over the result's shape) and compared bit for bit with NumPy, for every dtype."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Dtype, Pointer, f32

from tests.numpy_backend._support import EVERY, benign_races, name, poisoned, sample

D = TypeVar("D", bound=Dtype)

N = 50  # valid elements of the 64-element block: the tail is masked (loaded as 0)
# (name, size) of each region of the output, in kernel order
REGIONS = [("trans", 64), ("permute", 64), ("view", 64), ("ravel", 64), ("broadcast_to", 256), ("join", 128),
           ("split_a", 64), ("split_b", 64), ("interleave", 128), ("cat_1d", 128), ("cat_2d", 128),
           ("broadcast_col", 64), ("broadcast_tile", 64), ("expand_dims", 64), ("reshape_3d", 64)]
START = dict(zip([r for r, _ in REGIONS], np.cumsum([0] + [s for _, s in REGIONS]).tolist()))
TOTAL = sum(s for _, s in REGIONS)


@tl.kernel
def shapes(x_ptr: Pointer[D], out: Pointer[D], n: int) -> None:
    i2, i4, i8 = tl.arange(0, 2), tl.arange(0, 4), tl.arange(0, 8)
    i16, i64 = tl.arange(0, 16), tl.arange(0, 64)
    o88 = i8[:, None] * 8 + i8[None, :]
    o816 = i8[:, None] * 16 + i16[None, :]
    x = tl.load(x_ptr + i64, mask=i64 < n, other=0)
    y = tl.load(x_ptr + i8)
    tile = tl.reshape(x, (8, 8))
    flipped = tl.trans(tile)
    tl.store(out + 0 + o88, flipped)
    tl.store(out + 64 + i8[:, None][:, :, None] * 8 + i2[None, :][:, :, None] * 4 + i4[None, :][None, :, :],
             tl.permute(tl.reshape(x, (2, 4, 8)), (2, 0, 1)))
    tl.store(out + 128 + i4[:, None] * 16 + i16[None, :], tl.view(x, (4, 16)))
    tl.store(out + 192 + i64, tl.ravel(flipped))
    tl.store(out + 256 + tl.arange(0, 4)[:, None] * 64 + i64[None, :], tl.broadcast_to(tl.expand_dims(x, 0), (4, 64)))
    pairs = tl.join(tile, flipped)
    tl.store(out + 512 + o88[:, :, None] * 2 + i2[None, :][None, :, :], pairs)
    a, b = tl.split(pairs)
    tl.store(out + 640 + o88, a)
    tl.store(out + 704 + o88, b)
    tl.store(out + 768 + o816, tl.interleave(tile, flipped))
    tl.store(out + 896 + tl.arange(0, 128), tl.cat(x, tl.ravel(flipped), can_reorder=True))
    tl.store(out + 1024 + i16[:, None] * 8 + i8[None, :], tl.cat(tile, flipped))
    col, same = tl.broadcast(tl.expand_dims(y, 1), tile)
    tl.store(out + 1152 + o88, col)
    tl.store(out + 1216 + o88, same)
    tl.store(out + 1280 + o88[:, :, None], tl.expand_dims(tile, -1))
    tl.store(out + 1344 + o88, tl.reshape(tl.reshape(x, (4, 4, 4)), (8, 8)))


def expected_regions(x: Any) -> dict[str, Any]:
    pad = np.zeros(64, x.dtype)
    pad[:N] = x[:N]
    tile = pad.reshape(8, 8)
    pairs = np.stack([tile, tile.T], axis=-1)
    return {
        "trans": tile.T, "permute": pad.reshape(2, 4, 8).transpose(2, 0, 1), "view": pad, "ravel": tile.T,
        "broadcast_to": np.tile(pad, 4), "join": pairs, "split_a": tile, "split_b": tile.T,
        "interleave": pairs.reshape(8, 16), "cat_1d": np.concatenate([pad, tile.T.ravel()]),
        "cat_2d": np.concatenate([tile, tile.T]), "broadcast_col": np.repeat(x[:8, None], 8, axis=1),
        "broadcast_tile": tile, "expand_dims": tile, "reshape_3d": tile,
    }


@pytest.mark.parametrize("dtype", EVERY, ids=name)
def test_shape_ops_every_dtype(tile_backend: str, dtype: Any) -> None:
    assert START["reshape_3d"] == 1344 and TOTAL == 1408  # the kernel's literal offsets
    x = sample(np.random.default_rng(30), (64,), dtype, -100, 100)
    out = poisoned(TOTAL, dtype)
    with benign_races():  # every program stores the same regions
        shapes[(3,)](tl.to_device(x), out, N)
    got = out.numpy()
    for region, want in expected_regions(x).items():
        start = START[region]
        np.testing.assert_array_equal(got[start:start + want.size], want.ravel(), err_msg=region)


@tl.kernel
def pointer_shapes(x_ptr: Pointer[f32], out: Pointer[f32]) -> None:
    """Shape ops on pointer blocks move the pointers: loads and stores follow them."""
    i32_, i64 = tl.arange(0, 32), tl.arange(0, 64)
    src = tl.reshape(x_ptr + i64, (8, 8))
    tl.store(tl.reshape(out + i64, (8, 8)), tl.load(tl.trans(src)))
    moved = tl.permute(tl.reshape(out + 64 + i64, (2, 4, 8)), (2, 0, 1))
    tl.store(moved, tl.permute(tl.reshape(tl.load(x_ptr + i64), (2, 4, 8)), (2, 0, 1)))
    tl.store(out + 128 + i64, tl.load(tl.cat(x_ptr + 32 + i32_, x_ptr + i32_, can_reorder=True)))
    evens, odds = tl.split(tl.reshape(out + 192 + i64, (32, 2)))
    tl.store(tl.interleave(odds, evens), tl.load(x_ptr + i64))
    top, bottom = tl.broadcast(x_ptr + tl.arange(0, 8)[None, :], out + 256 + tl.arange(0, 8)[:, None] * 8)
    tl.store(bottom + tl.arange(0, 8)[None, :], tl.load(top))


def test_shape_ops_on_pointer_blocks(tile_backend: str) -> None:
    x = np.random.default_rng(31).standard_normal(64).astype(np.float32)
    out = poisoned(320, tl.f32)
    with benign_races():  # both programs store the same regions
        pointer_shapes[(2,)](tl.to_device(x), out)
    got = out.numpy()
    np.testing.assert_array_equal(got[:64], x.reshape(8, 8).T.ravel())
    np.testing.assert_array_equal(got[64:128], x)
    np.testing.assert_array_equal(got[128:192], np.concatenate([x[32:], x[:32]]))
    np.testing.assert_array_equal(got[192:256], x.reshape(32, 2)[:, ::-1].ravel())
    np.testing.assert_array_equal(got[256:320], np.tile(x[:8], 8))


# ------------------------------------------------------------------------------ errors (reference only)


@tl.kernel
def misuse(x_ptr: Pointer[f32], out: Pointer[f32], CASE: Constexpr[str]) -> None:
    offs = tl.arange(0, 64)
    x: Any = tl.load(x_ptr + offs)
    tile: Any = tl.reshape(x, (8, 8))
    r: Any = x
    if CASE == "numel":
        r = tl.reshape(x, (4, 8))
    elif CASE == "pow2":
        r = tl.reshape(x, (-8, -8))
    elif CASE == "broadcast_rank":
        r = tl.broadcast_to(x, (2, 64))
    elif CASE == "broadcast_size":
        r = tl.broadcast_to(tile, (8, 16))
    elif CASE == "trans_3d":
        r = tl.trans(tl.reshape(x, (4, 4, 4)))
    elif CASE == "permute":
        r = tl.permute(tile, (0, 0))
    elif CASE == "split":
        r = tl.split(tile)
    elif CASE == "cat":
        r = tl.cat(x, tile)
    elif CASE == "join_dtype":
        r = tl.join(x, x.to(tl.i32))
    elif CASE == "expand_axis":
        r = tl.expand_dims(x, 3)
    elif CASE == "join_pointers":
        tl.store(tl.join(x_ptr + offs, out + offs), tl.join(x, x))
    tl.store(out + offs, tl.ravel(r))


@pytest.mark.parametrize(("case", "message"), [
    ("numel", "cannot reshape a block of shape"),
    ("pow2", "must be powers of two"),
    ("broadcast_rank", "the ranks must match"),
    ("broadcast_size", "cannot broadcast a block of shape"),
    ("trans_3d", "pass dims explicitly"),
    ("permute", "not a permutation"),
    ("split", "last axis has size 2"),
    ("cat", "same shape"),
    ("join_dtype", "same dtype"),
    ("expand_axis", "invalid axis 3: out of range"),
    ("join_pointers", "different arguments"),
])
def test_misuse_is_a_kernel_error_at_the_line(case: str, message: str) -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.zeros(64, np.float32))
        with pytest.raises(tl.KernelError, match=message) as info:
            misuse[(1,)](x, tl.empty(128, tl.f32), CASE=case)
        assert info.value.filename == __file__
