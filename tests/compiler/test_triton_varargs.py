"""Two of Triton 3.6's call forms, on the NumPy reference and on the generated CUDA (CPU
emulator): Python's ``min``/``max`` of three or more kernel values (Triton's ``builtin_min`` folds
``tl.minimum`` from the left, each step promoting as ``tl.minimum`` does), and
``tl.broadcast_to`` with the shape as separate ints (Triton's ``*shape``). Poisoned outputs,
float64 NumPy references, seeded inputs."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 32


@tl.kernel
def extrema(x_ptr: Pointer[f32], y_ptr: Pointer[f32], h_ptr: Pointer[f16], o_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    x, y, h = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(h_ptr + offs)
    tl.store(o_ptr + offs, max(x, y, -x, 0.5))
    low = min(h, 0.25, h * 2.0)
    tl.static_assert(low.dtype == tl.float32)  # min(h, 0.25) is f32 (the float a tensor first), then f32
    tl.store(o_ptr + B + offs, low)
    tl.store(o_ptr + 2 * B + offs, min(x, y, -x, y * 0.5))


def test_builtin_min_max_of_three_or_more_values_fold_left(target: str) -> None:
    rng = np.random.default_rng(31)
    x, y = (rng.standard_normal(B).astype(np.float32) for _ in range(2))
    h = rng.standard_normal(B).astype(np.float16)
    with tl.backend(target):
        out = tl.to_device(np.full(3 * B, np.nan, np.float32))
        extrema[(1,)](tl.to_device(x), tl.to_device(y), tl.to_device(h), out, B=B)
        got = out.numpy().astype(np.float64).reshape(3, B)
    xd, yd, hd = (a.astype(np.float64) for a in (x, y, h))
    np.testing.assert_array_equal(got[0], np.maximum.reduce([xd, yd, -xd, np.full(B, 0.5)]))
    np.testing.assert_array_equal(got[1], np.minimum.reduce([hd, np.full(B, 0.25), hd * 2]))
    np.testing.assert_array_equal(got[2], np.minimum.reduce([xd, yd, -xd, yd * 0.5]))


@tl.kernel
def spread(x_ptr: Pointer[f32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    row = tl.load(x_ptr + tl.arange(0, N))
    wide = tl.broadcast_to(row[None, :], M, N)
    tl.static_assert(wide.shape == (M, N))
    ones = tl.broadcast_to(tl.load(x_ptr + N), M, N)  # a scalar splats
    tl.store(o_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], wide * tl.arange(0, M)[:, None].to(tl.float32) + ones)


def test_broadcast_to_takes_the_shape_as_separate_ints(target: str) -> None:
    M, N = 4, 16
    x = np.random.default_rng(32).standard_normal(N + 1).astype(np.float32)
    with tl.backend(target):
        out = tl.to_device(np.full(M * N, np.nan, np.float32))
        spread[(1,)](tl.to_device(x), out, M=M, N=N)
        got = out.numpy().astype(np.float64).reshape(M, N)
    want = x[None, :N].astype(np.float64) * np.arange(M)[:, None] + np.float64(x[N])
    np.testing.assert_allclose(got, want, rtol=1e-7)
