"""Row reductions: sum, mean, max (+argmax), logsumexp (book: patterns/reductions.md;
nn/tensor/reduction.rs).

The input is viewed as [n_outer, n_inner]; one program per row, with BLOCK_INNER >= n_inner
rounded up to a power of two, so every row has padding lanes. Each load fills them with the
identity of its reduction: 0 for sum/mean, -inf for max and logsumexp.

The Rust log-sum-exp kernel reloads the row with ``other = 0`` for the exp-sum, so every
padding lane adds exp(0 - max) to the sum (its test never has padding). This port loads once
with ``other=-inf``: exp(-inf - max) = 0.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr

from examples._common import host, next_pow2, poisoned, rng

W = TypeVar("W", bound=tl.Width)
# The Rust `D: Num` bound: any float or integer element type.
Num = TypeVar("Num", bound=tl.Float[Any] | tl.Int[Any] | tl.UInt[Any])


@tl.kernel
def row_sum(x_ptr: Pointer[Num], y_ptr: Pointer[Num], n_inner: int, n_outer: int,
            BLOCK_INNER: constexpr) -> None:
    """Book-style: keep_dims=True gives a [1] block, stored through a 1-lane pointer block."""
    row = tl.program_id(0)
    if row >= n_outer:                                  # Rust: if row >= n_outer { return; }
        return
    cols = tl.arange(0, BLOCK_INNER)
    x = tl.load(x_ptr + row * n_inner + cols, mask=cols < n_inner, other=0)
    total = tl.sum(x, axis=0, keep_dims=True)           # Rust: T::sum(x, Some(0), true)
    tl.store(y_ptr + row + tl.arange(0, 1), total)


@tl.kernel
def row_mean(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_inner: int, n_outer: int,
             BLOCK_INNER: constexpr) -> None:
    """Triton-style: the rank-0 result is stored through the scalar pointer ``y_ptr + row``."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    x = tl.load(x_ptr + row * n_inner + cols, mask=cols < n_inner, other=0.0)
    tl.store(y_ptr + row, tl.sum(x, axis=0) / n_inner)


@tl.kernel
def row_max(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], idx_ptr: Pointer[tl.i32], n_inner: int,
            n_outer: int, BLOCK_INNER: constexpr) -> None:
    """Max and argmax together (Rust: T::max_with_indices(x, 0, true, false))."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    x = tl.load(x_ptr + row * n_inner + cols, mask=cols < n_inner, other=float("-inf"))
    best, arg = tl.max_with_indices(x, 0)             # Triton: tl.max(x, 0, return_indices=True)
    tl.store(y_ptr + row, best)
    tl.store(idx_ptr + row, arg)


@tl.kernel
def row_logsumexp(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_inner: int, n_outer: int,
                  BLOCK_INNER: constexpr) -> None:
    """log(sum(exp(x))) = m + log(sum(exp(x - m))), m = max(x): no overflow for large x."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    x = tl.load(x_ptr + row * n_inner + cols, mask=cols < n_inner, other=float("-inf"))
    m = tl.max(x, axis=0)
    tl.store(y_ptr + row, m + tl.log(tl.sum(tl.exp(x - m), axis=0)))


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n_outer, n_inner = 37, 100
    block = next_pow2(n_inner)
    grid = (n_outer,)

    # sum, on f32 and i32 (the kernel is generic over the Rust `Num` bound)
    xf = gen.uniform(-3.0, 3.0, (n_outer, n_inner)).astype(np.float32)
    xi = gen.integers(-1000, 1000, (n_outer, n_inner)).astype(np.int32)
    xf_dev = tl.to_device(xf, tl.f32)
    yf = poisoned(n_outer, tl.f32)
    row_sum[grid](xf_dev, yf, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_allclose(host(yf), xf.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)
    yi = poisoned(n_outer, tl.i32)
    row_sum[grid](tl.to_device(xi, tl.i32), yi, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_array_equal(yi.numpy(), xi.sum(axis=1))

    # a grid with spare programs: the early return keeps them from writing past the end
    ys = poisoned(n_outer + 3, tl.f32)
    row_sum[(n_outer + 3,)](xf_dev, ys, n_inner, n_outer, BLOCK_INNER=block)
    assert np.isnan(host(ys)[n_outer:]).all(), "row_sum wrote past n_outer"

    y = poisoned(n_outer, tl.f32)
    row_mean[grid](xf_dev, y, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_allclose(host(y), xf.astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-6)

    y = poisoned(n_outer, tl.f32)
    idx = poisoned(n_outer, tl.i32)
    row_max[grid](xf_dev, y, idx, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_array_equal(host(y), xf.max(axis=1))
    np.testing.assert_array_equal(idx.numpy(), xf.argmax(axis=1))

    # all-negative rows: a padding lane filled with 0 instead of -inf would win the max
    xneg = gen.uniform(-5.0, -1.0, (n_outer, n_inner)).astype(np.float32)
    y = poisoned(n_outer, tl.f32)
    row_max[grid](tl.to_device(xneg, tl.f32), y, idx, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_array_equal(host(y), xneg.max(axis=1))

    # logsumexp on moderate values (28 padding lanes filled with 0 would add 28 * exp(-max) to
    # the sum: the Rust kernel's bug) and on large ones (a naive exp would overflow in f32)
    for scale in (1.0, 40.0):
        xl = (xf * scale).astype(np.float32)
        y = poisoned(n_outer, tl.f32)
        row_logsumexp[grid](tl.to_device(xl, tl.f32), y, n_inner, n_outer, BLOCK_INNER=block)
        x64 = xl.astype(np.float64)
        m = x64.max(axis=1, keepdims=True)
        expected = (m + np.log(np.exp(x64 - m).sum(axis=1, keepdims=True)))[:, 0]
        np.testing.assert_allclose(host(y), expected, rtol=1e-6, atol=1e-5, err_msg=f"scale {scale}")


if __name__ == "__main__":
    run()
