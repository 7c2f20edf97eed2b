"""Dtype-specialised kernels (book: patterns/specialisation.md, fast/numerics.md;
examples/numerics.rs ``add_typed``).

In Rust the element type is a type parameter ``D: Float`` and ``#[kernel]`` monomorphises one
kernel per dtype (f32 and f64; f16/bf16 cannot be). Here the parameter is the width ``W`` of
``Pointer[Float[W]]``: one source, specialised per launch from the buffers' dtypes, and mypy
checks that all the ``Float[W]`` pointers of one launch agree (passing an f32 and an f64 buffer
to ``add_typed`` is a type error at the launch site, and a LaunchError at run time).
f16 works here too.

``row_sum_f32`` shows the book's precision advice: load any float width, accumulate in f32
(``.to(tl.f32)``, Rust: T::cast::<D, f32>(x, None, false)).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr

from examples._common import host, next_pow2, poisoned, rng

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def add_typed(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], alpha: float,
              n_elements: int, BLOCK_SIZE: constexpr) -> None:
    """out = alpha * x + y in the buffers' own precision."""
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@tl.kernel
def row_sum_f32(x_ptr: Pointer[Float[W]], out_ptr: Pointer[tl.f32], n_cols: int, BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x.to(tl.f32), axis=0))


def _check(dtype: type[Float[W]], np_dtype: type[np.floating[Any]], rtol: float, atol: float, seed: int) -> None:
    gen = rng(seed)
    n, block, alpha = 1000, 256, 0.75
    x = gen.uniform(-1.0, 1.0, n).astype(np_dtype)
    y = gen.uniform(-1.0, 1.0, n).astype(np_dtype)
    out = poisoned(n, dtype)
    add_typed[(tl.cdiv(n, block),)](tl.to_device(x, dtype), tl.to_device(y, dtype), out, alpha, n, BLOCK_SIZE=block)
    assert out.numpy().dtype == np_dtype
    np.testing.assert_allclose(host(out), alpha * x.astype(np.float64) + y, rtol=rtol, atol=atol,
                               err_msg=f"add_typed {np.dtype(np_dtype)}")

    rows, cols = 13, 90
    xs = gen.uniform(-1.0, 1.0, (rows, cols)).astype(np_dtype)
    sums = poisoned(rows, tl.f32)
    row_sum_f32[(rows,)](tl.to_device(xs, dtype), sums, cols, BLOCK=next_pow2(cols))
    # f32 accumulation: the error is f32 rounding whatever the input width
    np.testing.assert_allclose(host(sums), xs.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5,
                               err_msg=f"row_sum_f32 {np.dtype(np_dtype)}")


def run(seed: int = 0) -> None:
    # One kernel source, three specialisations; tolerances follow each width's epsilon.
    _check(tl.f16, np.float16, 2e-3, 2e-3, seed)
    _check(tl.f32, np.float32, 1e-6, 1e-6, seed)
    _check(tl.f64, np.float64, 1e-13, 1e-13, seed)


if __name__ == "__main__":
    run()
