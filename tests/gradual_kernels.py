"""Triton-tutorial-shaped kernels without annotations on their runtime parameters (typed at each
launch by their arguments), for tests/test_gradual_typing.py; mypy checks them with the
parameters as Any (pyproject.toml allows untyped definitions in this module)."""

from __future__ import annotations

import tile_lang as tl


@tl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tl.kernel
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@tl.kernel
def scale_kernel(x_ptr, out_ptr, n, alpha, negate, BLOCK: tl.constexpr):
    """Generic in the buffers' dtype: ``alpha`` a float, ``negate`` a bool."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32) * alpha
    if negate:
        x = -x
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


@tl.kernel
def linear_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr, out_dtype=tl.float32):
    """out[r, :] = x[r, :] * w (+ bias): an optional bias passed as None, the output's dtype a constexpr."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.zeros((BLOCK,), dtype=out_dtype)
    acc += (tl.load(x_ptr + row * stride_row + cols, mask=mask) * tl.load(w_ptr + cols, mask=mask)).to(out_dtype)
    if bias_ptr is not None:
        acc += tl.load(bias_ptr + cols, mask=mask).to(out_dtype)
    tl.store(out_ptr + row * stride_row + cols, acc, mask=mask)


@tl.kernel
def offset_kernel(out_ptr, base, n, BLOCK: tl.constexpr):
    """out[i] = i + base in the output's dtype: ``base``'s width comes from its value (i32, i64, u64)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (offs + base).to(out_ptr.dtype.element_ty), mask=offs < n)
