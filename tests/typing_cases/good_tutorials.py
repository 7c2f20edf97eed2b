# mypy: disallow-any-expr
"""Correct kernels written as Triton's tutorials and the teenygrad Rust book write them.

Checked under ``mypy --strict`` (no ``Any`` anywhere, through the line above) by
tests/test_typing.py, which also runs each of them on the NumPy reference backend against a
float64 NumPy computation.
"""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import Float, Pointer, Tensor, Tensor0, constexpr, f16, f32, i32

W = TypeVar("W", bound=tl.Width)
R = TypeVar("R", bound=tl.Rank)


# ---------------------------------------------------------------- Triton tutorial 01: vector add, generic


@tl.kernel
def add_generic(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], output_ptr: Pointer[Float[W]], n_elements: int,
                BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


# ---------------------------------------------------------------- tutorial 02: fused softmax, persistent rows


@tl.kernel
def softmax_persistent(output_ptr: Pointer[f32], input_ptr: Pointer[f32], input_row_stride: int,
                       output_row_stride: int, n_rows: int, n_cols: int, BLOCK_SIZE: constexpr,
                       num_stages: constexpr) -> None:
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


# ---------------------------------------------------------------- tutorial 03: grouped matmul, fused activation


@tl.func
def leaky_relu(x: Tensor[f32, tl.R2]) -> Tensor[f32, tl.R2]:
    return tl.where(x >= 0, x, 0.01 * x)


@tl.kernel
def matmul_grouped(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], M: int, N: int, K: int,
                   stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
                   BLOCK_SIZE_M: constexpr, BLOCK_SIZE_N: constexpr, BLOCK_SIZE_K: constexpr,
                   GROUP_SIZE_M: constexpr, ACTIVATION: constexpr) -> None:
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# ---------------------------------------------------------------- tutorial 04: low-memory dropout


@tl.kernel
def seeded_dropout(x_ptr: Pointer[f32], output_ptr: Pointer[f32], n_elements: int, p: float, seed: int,
                   BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


@tl.kernel
def dropout_with_keep_mask(x_ptr: Pointer[f32], x_keep_ptr: Pointer[i32], output_ptr: Pointer[f32],
                           n_elements: int, p: float, BLOCK_SIZE: constexpr) -> None:
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x_keep = tl.load(x_keep_ptr + offsets, mask=mask, other=0) != 0
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


# ---------------------------------------------------------------- tutorial 05: layer norm backward (dw, db)


@tl.kernel
def layer_norm_bwd_dwdb(DW: Pointer[f32], DB: Pointer[f32], FINAL_DW: Pointer[f32], FINAL_DB: Pointer[f32],
                        M: int, N: int, BLOCK_SIZE_M: constexpr, BLOCK_SIZE_N: constexpr) -> None:
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


# ---------------------------------------------------------------- tutorial 06: attention, one block of keys


@tl.kernel
def attn_fwd_single_block(Q: Pointer[f16], K: Pointer[f16], V: Pointer[f16], Out: Pointer[f32], sm_scale: float,
                          BLOCK_M: constexpr, BLOCK_N: constexpr, HEAD_DIM: constexpr) -> None:
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    k = tl.load(K + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
    v = tl.load(V + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
    qk = tl.dot(q, tl.trans(k)) * sm_scale
    m = tl.max(qk, 1)
    p = tl.exp(qk - m[:, None])
    l_i = tl.sum(p, 1)
    acc = tl.dot(p.to(tl.float16), v)
    tl.store(Out + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc / l_i[:, None])


# ---------------------------------------------------------------- tutorial 07: libdevice-style math


@tl.kernel
def math_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], n_elements: int, BLOCK_SIZE: constexpr) -> None:
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.5)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    y = gelu + tl.atan(x) + tl.sqrt(tl.abs(x)) * tl.sin(x) + tl.exp2(-x * x) + tl.log(1.0 + x * x)
    tl.store(y_ptr + offsets, y, mask=mask)


# ---------------------------------------------------------------- tutorial 09: persistent matmul


@tl.kernel
def matmul_persistent(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], M: int, N: int, K: int,
                      BLOCK_SIZE_M: constexpr, BLOCK_SIZE_N: constexpr, BLOCK_SIZE_K: constexpr,
                      NUM_SMS: constexpr) -> None:
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_tiles = num_pid_m * num_pid_n
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            offs = ki * BLOCK_SIZE_K + offs_k
            a = tl.load(a_ptr + offs_am[:, None] * K + offs[None, :],
                        mask=(offs_am[:, None] < M) & (offs[None, :] < K), other=0.0)
            b = tl.load(b_ptr + offs[:, None] * N + offs_bn[None, :],
                        mask=(offs[:, None] < K) & (offs_bn[None, :] < N), other=0.0)
            accumulator = tl.dot(a, b, accumulator)
        c_mask = (offs_am[:, None] < M) & (offs_bn[None, :] < N)
        tl.store(c_ptr + offs_am[:, None] * N + offs_bn[None, :], accumulator, mask=c_mask)


# ---------------------------------------------------------------- Rust book spelling: trait names, generic D


@tl.kernel
def relu_rust(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n_elements: int, BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE) + pid * BLOCK_SIZE
    mask = offs.lt(n_elements)
    x = tl.load(x_ptr.add_offsets(offs), mask)
    out_ptr.add_offsets(offs).store(tl.maximum(x, 0.0), mask)


@tl.kernel
def saxpy_rust(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], alpha: float, n_elements: int,
               BLOCK_SIZE: constexpr) -> None:
    offs = tl.arange(0, BLOCK_SIZE) + tl.program_id(0) * BLOCK_SIZE
    mask = tl.lt_scalar(offs, n_elements)
    x = tl.load(x_ptr.add_offsets(offs), mask)
    y = tl.load(y_ptr.add_offsets(offs), mask)
    out_ptr.add_offsets(offs).store(tl.fma(x, alpha, y), mask)


@tl.kernel
def row_argmax_rust(x_ptr: Pointer[f32], max_ptr: Pointer[f32], idx_ptr: Pointer[i32], n_cols: int,
                    BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols.lt(n_cols)
    x = tl.load(x_ptr.add_offsets(cols + row * n_cols), mask, -float("inf"))
    best, where_best = tl.max_with_indices(x, 0)
    tl.store(max_ptr + row, best)
    tl.store(idx_ptr + row, where_best)


@tl.kernel
def rms_norm_rust(x_ptr: Pointer[f32], w_ptr: Pointer[f32], out_ptr: Pointer[f32], n_cols: int, eps: float,
                  BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = tl.lt_scalar(cols, n_cols)
    x = tl.load(x_ptr.add_offsets(cols + row * n_cols), mask, 0.0)
    w = tl.load(w_ptr.add_offsets(cols), mask, 0.0)
    mean_sq = tl.sum(x * x, 0) / n_cols
    y = x * tl.rsqrt(mean_sq + eps) * w
    out_ptr.add_offsets(cols + row * n_cols).store(y, mask)


@tl.kernel
def clamp_where_rust(x_ptr: Pointer[f32], out_ptr: Pointer[f32], lo: float, hi: float, n_elements: int,
                     BLOCK_SIZE: constexpr) -> None:
    offs = tl.arange(0, BLOCK_SIZE) + tl.program_id(0) * BLOCK_SIZE
    mask = offs.lt(n_elements)
    x = tl.load(x_ptr.add_offsets(offs), mask, 0.0)
    low = tl.where_(tl.lt_scalar(x, lo), lo, x)
    out_ptr.add_offsets(offs).store(tl.where_(tl.gt_scalar(low, hi), hi, low), mask)


@tl.kernel
def sum_rows_rust(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_rows: int, n_cols: int,
                  BLOCK_ROWS: constexpr, BLOCK_COLS: constexpr) -> None:
    rows = tl.arange(0, BLOCK_ROWS) + tl.program_id(0) * BLOCK_ROWS
    cols = tl.arange(0, BLOCK_COLS)
    mask = rows[:, None].lt(n_rows) & cols[None, :].lt(n_cols)
    x = tl.load(x_ptr.add_offsets(rows[:, None] * n_cols + cols[None, :]), mask, 0.0)
    out_ptr.add_offsets(rows).store(tl.sum(x, 1), rows.lt(n_rows))


@tl.func
def mul_combine(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a * b


@tl.kernel
def prod_scan_rust(x_ptr: Pointer[f32], out_ptr: Pointer[f32], total_ptr: Pointer[f32], BLOCK_SIZE: constexpr) -> None:
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr.add_offsets(offs))
    out_ptr.add_offsets(offs).store(tl.associative_scan(x, 0, mul_combine))
    tl.store(total_ptr, tl.reduce(x, 0, mul_combine))


@tl.kernel
def transpose_blocked(x_ptr: Pointer[f32], out_ptr: Pointer[f32], M: int, N: int, BLOCK_M: constexpr,
                      BLOCK_N: constexpr) -> None:
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile), mask=tl.trans(mask))


@tl.kernel
def cross_entropy_fwd(logits_ptr: Pointer[f32], labels_ptr: Pointer[i32], loss_ptr: Pointer[f32], n_cols: int,
                      BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    logits = tl.load(logits_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    label = tl.load(labels_ptr + row)
    m = tl.max(logits, 0)
    lse = m + tl.log(tl.sum(tl.exp(logits - m), 0))
    target = tl.sum(tl.where(cols == label, logits, 0.0), 0)
    tl.store(loss_ptr + row, lse - target)


@tl.kernel
def swiglu_fwd(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], n_elements: int,
               BLOCK_SIZE: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    silu = a * tl.sigmoid(a)
    c = silu.to(tl.float16) * b
    tl.store(c_ptr + offs, c, mask=mask)


@tl.kernel
def cumsum_rows(x_ptr: Pointer[i32], out_ptr: Pointer[i32], n_cols: int, BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=mask)


# ---------------------------------------------------------------- string constexprs, as tutorial 03 declares them


@tl.kernel
def activation_as_str_constexpr(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK_SIZE: constexpr,
                                ACTIVATION: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACTIVATION == "leaky_relu":
        x = tl.where(x >= 0, x, 0.01 * x)
    elif ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    elif ACTIVATION == "gelu":
        x = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, x, mask=offs < n)


@tl.kernel
def exp2_through_tl_math(x_ptr: Pointer[f32], BLOCK_SIZE: constexpr) -> None:
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.math.exp2(x))
