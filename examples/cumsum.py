"""Prefix scans along rows: cumsum, cumprod, a reverse cumsum, and the same cumsum written as
``tl.associative_scan`` with a ``@tl.func`` combine function (book: nn/tensor/reduction.rs).

One program per row, BLOCK_INNER >= n_inner. Padding lanes sit after the valid prefix and the
store is masked, so their fill only matters for the *reverse* scan, where they come first: there
the fill must be the identity (0 for a sum). The Rust cumprod fills with 0, harmless for a forward
scan; this port uses 1, the identity of the product, so the kernel is also right reversed.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

import tile_lang as tl
from tile_lang import Constexpr, Float, Pointer, R0, Tensor, constexpr

from examples._common import host, next_pow2, poisoned, rng

W = TypeVar("W", bound=tl.Width)


@tl.func
def add_f32(a: Tensor[tl.f32, R0], b: Tensor[tl.f32, R0]) -> Tensor[tl.f32, R0]:
    """The combine function of a sum scan (Rust: a `fn` item, not a closure)."""
    return a + b


@tl.kernel
def cum_sum(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_inner: int, n_outer: int,
            BLOCK_INNER: constexpr, REVERSE: Constexpr[bool]) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    mask = cols < n_inner
    offs = row * n_inner + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0, reverse=REVERSE), mask=mask)


@tl.kernel
def cum_prod(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_inner: int, n_outer: int,
             BLOCK_INNER: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    mask = cols < n_inner
    offs = row * n_inner + cols
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(y_ptr + offs, tl.cumprod(x, axis=0), mask=mask)


@tl.kernel
def cum_sum_scan(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], n_inner: int, n_outer: int,
                 BLOCK_INNER: constexpr) -> None:
    """cumsum as a generic scan (Rust: T::associative_scan(x, 0, add_f32, false))."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_INNER)
    mask = cols < n_inner
    offs = row * n_inner + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.associative_scan(x, 0, add_f32), mask=mask)


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n_outer, n_inner = 29, 75
    block = next_pow2(n_inner)
    grid = (n_outer,)
    x = gen.uniform(-2.0, 2.0, (n_outer, n_inner)).astype(np.float32)
    x64 = x.astype(np.float64)
    x_dev = tl.to_device(x, tl.f32)

    y = poisoned((n_outer, n_inner), tl.f32)
    cum_sum[grid](x_dev, y, n_inner, n_outer, BLOCK_INNER=block, REVERSE=False)
    np.testing.assert_allclose(host(y), np.cumsum(x64, axis=1), rtol=1e-5, atol=1e-5)

    y = poisoned((n_outer, n_inner), tl.f32)
    cum_sum[grid](x_dev, y, n_inner, n_outer, BLOCK_INNER=block, REVERSE=True)
    np.testing.assert_allclose(host(y), np.cumsum(x64[:, ::-1], axis=1)[:, ::-1], rtol=1e-5, atol=1e-5)

    y = poisoned((n_outer, n_inner), tl.f32)
    cum_sum_scan[grid](x_dev, y, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_allclose(host(y), np.cumsum(x64, axis=1), rtol=1e-5, atol=1e-5)

    # cumprod on values near 1 so the running product stays in a comparable range
    xp = gen.uniform(0.8, 1.25, (n_outer, n_inner)).astype(np.float32)
    y = poisoned((n_outer, n_inner), tl.f32)
    cum_prod[grid](tl.to_device(xp, tl.f32), y, n_inner, n_outer, BLOCK_INNER=block)
    np.testing.assert_allclose(host(y), np.cumprod(xp.astype(np.float64), axis=1), rtol=1e-5, atol=0)


if __name__ == "__main__":
    run()
