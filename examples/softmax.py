"""Row softmax forward and backward (book: patterns/softmax.md; nn/activation/softmax.rs).

The Rust kernels require BLOCK_SIZE == n_cols and load without a mask; these ports round the
block up to a power of two and mask, filling the padding lanes with -inf before the max (the
mistake the book lists as "still silent" in Rust: forgetting ``other=`` before a max).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr

from examples._common import host, next_pow2, poisoned, rng

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def softmax_forward(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_rows: int, n_cols: int,
                    BLOCK_SIZE: constexpr) -> None:
    """y[row] = exp(x - max(x)) / sum(exp(x - max(x))), spelled out (Rust: `D: Float` bound)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    offs = row * n_cols + cols
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))   # -inf: the identity of max
    z = x - tl.max(x, axis=0)                                      # padding lanes stay -inf ...
    num = tl.exp(z)                                                # ... and exp(-inf) = 0 drops them
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + offs, num / den, mask=mask)


@tl.kernel
def softmax_forward_builtin(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_rows: int, n_cols: int,
                            BLOCK_SIZE: constexpr) -> None:
    """The same with the library op (Rust: T::softmax(x, None, false, false))."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    tl.store(y_ptr + row * n_cols + cols, tl.softmax(x), mask=mask)


@tl.kernel
def softmax_backward(dy_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], dx_ptr: Pointer[Float[W]],
                     n_rows: int, n_cols: int, BLOCK_SIZE: constexpr) -> None:
    """dx_i = y_i * (dy_i - sum_j y_j dy_j); padding lanes load 0 so they add nothing to the dot."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    offs = row * n_cols + cols
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    dot = tl.sum(y * dy, axis=0)                     # rank 0 (Rust keep_dims=false), broadcasts below
    tl.store(dx_ptr + offs, y * (dy - dot), mask=mask)


def _softmax_ref(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True), dtype=np.float64)


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n_rows, n_cols = 37, 100          # 100 columns in a 128-lane block: 28 padding lanes per row
    block = next_pow2(n_cols)
    x = gen.uniform(-5.0, 5.0, (n_rows, n_cols)).astype(np.float32)
    expected = _softmax_ref(x.astype(np.float64))
    x_dev = tl.to_device(x, tl.f32)
    for kern in (softmax_forward, softmax_forward_builtin):
        y = poisoned((n_rows, n_cols), tl.f32)
        kern[(n_rows,)](x_dev, y, n_rows, n_cols, BLOCK_SIZE=block)
        got = host(y)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=kern.name)
        np.testing.assert_allclose(got.sum(axis=-1), 1.0, atol=1e-5, err_msg=kern.name)

    y_in = _softmax_ref(gen.uniform(-3.0, 3.0, (n_rows, n_cols))).astype(np.float32)
    dy = gen.uniform(-1.0, 1.0, (n_rows, n_cols)).astype(np.float32)
    y64, dy64 = y_in.astype(np.float64), dy.astype(np.float64)
    dx_expected = y64 * (dy64 - (y64 * dy64).sum(axis=-1, keepdims=True))
    dx = poisoned((n_rows, n_cols), tl.f32)
    softmax_backward[(n_rows,)](tl.to_device(dy, tl.f32), tl.to_device(y_in, tl.f32), dx, n_rows, n_cols,
                                BLOCK_SIZE=block)
    np.testing.assert_allclose(host(dx), dx_expected, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    run()
