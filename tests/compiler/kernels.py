"""Kernels the compiler tests build: the benchmark shapes (add, softmax, layernorm, atomic sum)
and coverage of control flow, reductions, dot, scans, atomics and random numbers."""

from __future__ import annotations

from typing import Any, Literal

import tile_lang as tl
from tile_lang import Pointer, constexpr

Precision = Literal["ieee", "tf32", "tf32x3"]


@tl.kernel
def add_kernel(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int,
               BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tl.kernel
def softmax_kernel(out_ptr: Pointer[tl.f32], in_ptr: Pointer[tl.f32], row_stride: int, n_cols: int,
                   BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@tl.kernel
def layernorm_kernel(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32],
                     b_ptr: Pointer[tl.f32], stride: int, n_cols: int, eps: float, BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    acc = tl.zeros((BLOCK,), tl.f32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    var_acc = tl.zeros((BLOCK,), tl.f32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        var_acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(var_acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


@tl.kernel
def sum_kernel(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@tl.kernel
def matmul_kernel(a_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
                  stride_am: int, stride_bk: int, stride_cm: int, BLOCK_M: constexpr, BLOCK_N: constexpr,
                  BLOCK_K: constexpr, PRECISION: tl.Constexpr[Precision] = "ieee") -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.func
def _scaled(x: tl.Tensor[tl.f32, tl.R1], factor: float) -> tl.Tensor[tl.f32, tl.R1]:
    return x * factor


@tl.kernel
def control_kernel(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, limit: int, SCALE: constexpr,
                   FLAG: constexpr) -> None:
    pid = tl.program_id(0)
    if pid >= limit:
        return
    offs = pid * 64 + tl.arange(0, 64)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if FLAG:
        x = _scaled(x, SCALE * 0.5)
    total = tl.sum(x, axis=0) * 0.0
    i = 0
    while i < 3:
        total += tl.sum(x, axis=0)
        i += 1
    for j in tl.static_range(2):
        x = x + j
    if total > 0.0:
        y = x * 2.0
    else:
        y = x - 1.0
    tl.store(out_ptr + offs, y + total, mask=offs < n)


@tl.kernel
def reduce2d_kernel(x_ptr: Pointer[tl.f32], sum_ptr: Pointer[tl.f32], arg_ptr: Pointer[tl.i32],
                    cum_ptr: Pointer[tl.f32], ROWS: constexpr, COLS: constexpr) -> None:
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    tl.store(sum_ptr + rows, tl.sum(x, axis=1))
    tl.store(arg_ptr + cols, tl.argmax(x, axis=0))
    tl.store(cum_ptr + rows[:, None] * COLS + cols[None, :], tl.cumsum(x, axis=1))
    t = tl.trans(x)
    tl.store(cum_ptr + ROWS * COLS + cols[:, None] * ROWS + rows[None, :], t - tl.max(x, axis=0)[:, None])


@tl.kernel
def mixed_kernel(x_ptr: Pointer[tl.f16], y_ptr: Pointer[tl.bf16], out_ptr: Pointer[tl.f32], n: int, seed: int,
                 BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    r = tl.rand(seed, offs)
    q = (offs // 3) % 7 - (offs >> 1)
    tl.store(out_ptr + offs, x.to(tl.f32) * y.to(tl.f32) + r + q.to(tl.f32), mask=mask)


KERNELS: dict[str, tuple[tl.Kernel[...], dict[str, Any]]] = {
    "add": (add_kernel, {"BLOCK": 1024}),
    "softmax": (softmax_kernel, {"BLOCK": 1024}),
    "layernorm": (layernorm_kernel, {"BLOCK": 1024}),
    "sum": (sum_kernel, {"BLOCK": 1024}),
    "matmul": (matmul_kernel, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}),
    "matmul_tf32x3": (matmul_kernel, {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": "tf32x3"}),
    "control": (control_kernel, {"SCALE": 3, "FLAG": True}),
    "reduce2d": (reduce2d_kernel, {"ROWS": 16, "COLS": 32}),
    "mixed": (mixed_kernel, {"BLOCK": 256}),
}
