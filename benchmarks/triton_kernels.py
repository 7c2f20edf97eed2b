# mypy: ignore-errors
"""The benchmark kernels written in Triton, line for line the same as tests/compiler/kernels.py
(Triton rejects non-constexpr globals in annotations, so these carry none; mypy skips the file)."""

import triton
import triton.language as ttl


@triton.jit
def tt_add(x_ptr, y_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=mask) + ttl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def tt_softmax(out_ptr, in_ptr, row_stride, n_cols, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    x = ttl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - ttl.max(x, axis=0)
    num = ttl.exp(z)
    ttl.store(out_ptr + row * row_stride + cols, num / ttl.sum(num, axis=0), mask=mask)


@triton.jit
def tt_layernorm(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps,
                 BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    x_row = x_ptr + row * stride
    acc = ttl.zeros((BLOCK,), ttl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        acc += ttl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = ttl.sum(acc, axis=0) / n_cols
    var_acc = ttl.zeros((BLOCK,), ttl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        x = ttl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        d = ttl.where(cols < n_cols, x - mean, 0.0)
        var_acc += d * d
    rstd = 1.0 / ttl.sqrt(ttl.sum(var_acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        mask = cols < n_cols
        x = ttl.load(x_row + cols, mask=mask, other=0.0)
        w = ttl.load(w_ptr + cols, mask=mask)
        b = ttl.load(b_ptr + cols, mask=mask)
        ttl.store(y_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def tt_sum(x_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    x = ttl.load(x_ptr + offs, mask=offs < n, other=0.0)
    ttl.atomic_add(out_ptr, ttl.sum(x, axis=0))
