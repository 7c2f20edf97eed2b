"""Triton's row gather and scatter through a tensor descriptor (``desc.gather(rows, col)``,
``desc.scatter(value, rows, col)``) on the NumPy reference and the generated CUDA (CPU emulator):
random rows, repeated and out of bounds (read as the padding, dropped when stored), a column
offset past the edge; and Triton's shape rules, one error on both backends. Poisoned outputs,
float64 NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
X, Y, R, C = 20, 48, 16, 32


@tl.kernel
def gather_scatter(x_ptr: Pointer[f32], idx_ptr: Pointer[i32], o_ptr: Pointer[f32], s_ptr: Pointer[f32], col: int,
                   X: constexpr, Y: constexpr, R: constexpr, C: constexpr) -> None:
    rows = tl.load(idx_ptr + tl.arange(0, R))
    src = tl.make_tensor_descriptor(x_ptr, [X, Y], [Y, 1], [1, C], padding_option="nan")
    got = src.gather(rows, col)
    tl.static_assert(got.shape == (R, C))
    tl.store(o_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], got)
    dst = tl.make_tensor_descriptor(s_ptr, [X, Y], [Y, 1], [1, C])
    dst.scatter(got * 2.0, rows, col)


def test_rows_gathered_and_scattered_as_triton(target: str) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((X, Y)).astype(np.float32)
    rows = rng.permutation(X + 4)[:R].astype(np.int32) - 2  # distinct rows, some out of bounds
    col = 24  # columns 24..55 of 48: the last 8 out of bounds
    with tl.backend(target):
        out = tl.to_device(np.full((R, C), -1.0, np.float32))
        scattered = tl.to_device(np.full((X, Y), -7.0, np.float32))
        gather_scatter[(1,)](tl.to_device(x), tl.to_device(rows), out, scattered, col, X=X, Y=Y, R=R, C=C)
        got, stored = out.numpy().astype(np.float64), scattered.numpy().astype(np.float64)
    want = np.full((R, C), np.nan)
    want_stored = np.full((X, Y), -7.0)
    for i, r in enumerate(rows):
        if 0 <= r < X:
            want[i, :Y - col] = x[r, col:]
            want_stored[r, col:] = 2.0 * x[r, col:].astype(np.float64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(stored, want_stored)


@pytest.mark.parametrize(("block", "rows", "message"), [
    ((2, 32), 8, r"descriptor gather needs a 2-D descriptor with a block of 1 row, got block shape \[2, 32\]"),
    ((1, 32), 4, "descriptor gather must have at least 8 rows, but got 4"),
    ((1, 4), 8, "descriptor gather of tl.f32 must have at least 8 columns, but got 4"),
])
def test_triton_shape_rules_are_one_error(target: str, block: tuple[int, int], rows: int, message: str) -> None:
    @tl.kernel
    def bad(x_ptr: Pointer[f32], o_ptr: Pointer[f32], BR: constexpr, BC: constexpr, N: constexpr) -> None:
        desc = tl.make_tensor_descriptor(x_ptr, [64, 64], [64, 1], [BR, BC])
        tl.store(o_ptr + tl.arange(0, N)[:, None] * BC + tl.arange(0, BC)[None, :], desc.gather(tl.arange(0, N), 0))

    with tl.backend(target), pytest.raises(tl.KernelError, match=message):
        bad[(1,)](tl.to_device(np.zeros((64, 64), np.float32)), tl.to_device(np.zeros(64 * 64, np.float32)),
                  BR=block[0], BC=block[1], N=rows)
