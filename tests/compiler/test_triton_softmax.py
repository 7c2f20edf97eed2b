"""``tl.softmax`` as Triton 3.6 defines it, on the NumPy reference and on the generated CUDA (CPU
emulator): ``dim=None`` normalises along axis 0 (columns of a 2-D block, not rows), ``keep_dims``
is passed to the max and the sum (so ``keep_dims=False`` along axis 1 of a square block
broadcasts them across the other axis, as Triton's does), and f16/bf16 inputs give f32.
Poisoned f32 outputs are compared against float64 NumPy on seeded random inputs."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, bf16, constexpr, f16, f32
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

M, N = 8, 16


def _softmax(x: np.ndarray, axis: int) -> Any:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@tl.kernel
def softmaxes(x_ptr: Pointer[f32], h_ptr: Pointer[f16], g_ptr: Pointer[bf16], o_ptr: Pointer[f32],
              M: constexpr, N: constexpr) -> None:
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x, h, g = tl.load(x_ptr + offs), tl.load(h_ptr + offs), tl.load(g_ptr + offs)
    tl.store(o_ptr + offs, tl.softmax(x))
    tl.store(o_ptr + M * N + offs, tl.softmax(x, 1, keep_dims=True))
    tl.store(o_ptr + 2 * M * N + offs, tl.softmax(x, 0, keep_dims=True))
    sh, sg = tl.softmax(h), tl.softmax(g, dim=1, keep_dims=True)
    tl.static_assert(sh.dtype == tl.float32 and sg.dtype == tl.float32)
    tl.store(o_ptr + 3 * M * N + offs, sh)
    tl.store(o_ptr + 4 * M * N + offs, sg)


def test_softmax_defaults_to_axis_zero_and_narrow_floats_give_f32(target: str) -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    h = (rng.standard_normal((M, N)) * 3).astype(np.float16)
    g = (rng.standard_normal((M, N)) * 3).astype(ml_dtypes.bfloat16)
    with tl.backend(target):
        out = tl.to_device(np.full(5 * M * N, np.nan, np.float32))
        softmaxes[(1,)](tl.to_device(x), tl.to_device(h), tl.to_device(g), out, M=M, N=N)
        got = out.numpy().astype(np.float64).reshape(5, M, N)
    xd, hd, gd = (a.astype(np.float64) for a in (x, h, g))
    want = [_softmax(xd, 0), _softmax(xd, 1), _softmax(xd, 0), _softmax(hd, 0), _softmax(gd, 1)]
    for k, w in enumerate(want):
        # f32 throughout: an f16 or bf16 result would be off by ~1e-3, a row softmax by far more
        np.testing.assert_allclose(got[k], w, rtol=2e-6, atol=1e-7, err_msg=f"softmax {k}")


@tl.kernel
def unkept(x_ptr: Pointer[f32], o_ptr: Pointer[f32], N: constexpr) -> None:
    offs = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(o_ptr + offs, tl.softmax(tl.load(x_ptr + offs), 1))


def test_softmax_along_axis_one_without_keep_dims_broadcasts_as_triton(target: str) -> None:
    """Triton's ``x - max(x, 1)`` aligns the row maxima with the columns: on a square block the
    result is ``exp(x[i, j] - m[j]) / s[j]`` with ``m``, ``s`` the maxima and sums of rows."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, N)).astype(np.float32)
    with tl.backend(target):
        out = tl.to_device(np.full(N * N, np.nan, np.float32))
        unkept[(1,)](tl.to_device(x), out, N=N)
        got = out.numpy().astype(np.float64).reshape(N, N)
    xd = x.astype(np.float64)
    num = np.exp(xd - xd.max(1)[None, :])
    np.testing.assert_allclose(got, num / num.sum(1)[None, :], rtol=2e-6, atol=1e-7)


@tl.kernel
def unkept_wide(x_ptr: Pointer[f32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(o_ptr + offs, tl.softmax(tl.load(x_ptr + offs), 1))


def test_softmax_along_axis_one_without_keep_dims_of_a_wide_block_is_refused() -> None:
    """Triton: "Cannot make_shape_compatible: incompatible dimensions at index 1: 8 and 4"."""
    x = tl.to_device(np.zeros((M, N), np.float32))
    with pytest.raises(KernelError, match="broadcast|shape"):
        unkept_wide[(1,)](x, tl.to_device(np.zeros((M, N), np.float32)), M=M, N=N)


@tl.kernel
def member(h_ptr: Pointer[f16], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    s = tl.load(h_ptr + offs).softmax()
    tl.static_assert(s.dtype == tl.float32)
    tl.store(o_ptr + offs, s)


def test_softmax_is_a_tensor_member(target: str) -> None:
    """``x.softmax()`` is ``tl.softmax(x)``, as Triton's tensor has it."""
    h = (np.random.default_rng(7).standard_normal((M, N)) * 3).astype(np.float16)
    with tl.backend(target):
        out = tl.to_device(np.full(M * N, np.nan, np.float32))
        member[(1,)](tl.to_device(h), out, M=M, N=N)
        got = out.numpy().astype(np.float64).reshape(M, N)
    np.testing.assert_allclose(got, _softmax(h.astype(np.float64), 0), rtol=2e-6, atol=1e-7)
