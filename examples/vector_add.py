"""Vector add (book: first-kernel/vector-add.md, examples/vector_add.rs) and its backward
(nn/tensor/elemwise_add.rs).

One program per BLOCK_SIZE slice; the last slice is ragged, so loads and stores are masked.
This example spells pointer arithmetic and the mask the Rust-book way (``ptr.add_offsets(offs)``,
``offs.lt(n)``) next to the Triton way (``ptr + offs``, ``offs < n``); both type-check the same.
"""

from __future__ import annotations

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr

from examples._common import host, poisoned, rng


@tl.kernel
def vector_add(a_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n_elements: int,
               BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(0)                                # Rust: T::program_id(Axis::X)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs.lt(n_elements)                            # Rust: offs.lt(n_elements); Triton: offs < n_elements
    a = tl.load(a_ptr.add_offsets(offs), mask=mask)       # Rust: T::load(a_ptr.add_offsets(offs), Some(mask), None, ...)
    b = tl.load(b_ptr + offs, mask=mask)                  # Triton spelling of the same load
    tl.store(out_ptr + offs, a + b, mask=mask)


@tl.kernel
def elemwise_add_backward(dy_ptr: Pointer[tl.f32], grad_a_ptr: Pointer[tl.f32], grad_b_ptr: Pointer[tl.f32],
                          n_elements: int, BLOCK_SIZE: constexpr) -> None:
    """d(a + b)/da = d(a + b)/db = 1: both gradients are the incoming gradient."""
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    tl.store(grad_a_ptr + offs, dy, mask=mask)
    tl.store(grad_b_ptr + offs, dy, mask=mask)


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n, block = 1000, 128  # ragged, as the book's example: 8 programs, the last one 104 lanes wide
    a = gen.uniform(-10.0, 10.0, n).astype(np.float32)
    b = gen.uniform(-10.0, 10.0, n).astype(np.float32)
    out = poisoned(n, tl.f32)
    grid = (tl.cdiv(n, block),)
    vector_add[grid](tl.to_device(a, tl.f32), tl.to_device(b, tl.f32), out, n, BLOCK_SIZE=block)
    np.testing.assert_allclose(host(out), a.astype(np.float64) + b, rtol=1e-6, atol=1e-6)

    dy = gen.standard_normal(n).astype(np.float32)
    grad_a, grad_b = poisoned(n, tl.f32), poisoned(n, tl.f32)
    elemwise_add_backward[grid](tl.to_device(dy, tl.f32), grad_a, grad_b, n, BLOCK_SIZE=block)
    np.testing.assert_array_equal(host(grad_a), dy)
    np.testing.assert_array_equal(host(grad_b), dy)


if __name__ == "__main__":
    run()
