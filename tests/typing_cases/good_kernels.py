"""Correct kernels and launches that must check cleanly under ``mypy --strict``.

No casts, ``Any`` or ignores in kernel bodies. Checked by tests/test_typing.py; never run.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

import tile_lang as tl
from tile_lang import R0, R1, R2, Constexpr, Float, Pointer, Tensor, Tensor0, constexpr, f16, f32, i32

W = TypeVar("W", bound=tl.Width)


# ---------------------------------------------------------------- vector add


@tl.kernel
def add_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr.add_offsets(offs), mask=mask, other=0.0)
    out: Tensor[f32, R1] = x + y
    tl.store(out_ptr + offs, out, mask=mask)
    (out_ptr + offs).store(out, mask=mask)


# ---------------------------------------------------------------- softmax, reduce, scan


@tl.func
def add_combine(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a + b


@tl.func
def max_combine(a: Tensor[f32, R0], b: Tensor[f32, R0]) -> Tensor[f32, R0]:
    return tl.maximum(a, b)


@tl.kernel
def softmax_kernel(out_ptr: Pointer[f32], in_ptr: Pointer[f32], row_stride: int, n_cols: int,
                   BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * row_stride + cols, y, mask=mask)
    total: Tensor0[f32] = tl.reduce(x, 0, add_combine)
    running = tl.associative_scan(x, 0, max_combine)
    tl.store(out_ptr + cols, tl.where(mask, running / total, 0.0), mask=mask)
    tl.store(out_ptr + cols, tl.softmax(x), mask=mask)


# ---------------------------------------------------------------- tiled matmul with fused epilogue


@tl.kernel
def matmul_kernel(
    a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], bias_ptr: Pointer[f32],
    M: int, N: int, K: int,
    stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
    BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, ALPHA: Constexpr[float],
) -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc * ALPHA + bias[None, :]
    acc = tl.where(acc > 0.0, acc, 0.0)
    c = acc.to(tl.f16)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def matmul_acc_kernel(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], K: int,
                      BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a_ptrs = a_ptr + offs[:, None] * K + offs[None, :]
    b_ptrs = b_ptr.add_offsets(offs[:, None] * BLOCK + offs[None, :])
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    for _ in tl.range(0, K, BLOCK, num_stages=3):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs = a_ptrs.add_offsets(BLOCK)
        b_ptrs += BLOCK * BLOCK
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


# ---------------------------------------------------------------- dtype-generic kernel


@tl.kernel
def softplus_kernel(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, beta: float,
                    BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.log(tl.exp(x * beta) + 1.0) / beta
    tl.store(out_ptr + offs, y, mask=mask)
    (out_ptr + offs).store(tl.sigmoid(y), mask=mask)


# ---------------------------------------------------------------- block pointers, descriptors


@tl.kernel
def block_ptr_kernel(a_ptr: Pointer[f16], out_ptr: Pointer[f16], M: int, K: int, stride_m: int,
                     BLOCK_M: constexpr, BLOCK_K: constexpr) -> None:
    pid = tl.program_id(0)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_m, 1), offsets=(pid * BLOCK_M, 0),
                                block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    o_block = tl.make_block_ptr(out_ptr, (M, K), (stride_m, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_K), tl.f32)
    for _ in range(0, K, BLOCK_K):
        tile = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        acc += tile.to(tl.f32)
        tl.store(o_block, tile, boundary_check=(0, 1))
        a_block = tl.advance(a_block, (0, BLOCK_K))
        o_block = tl.advance(o_block, (0, BLOCK_K))
    row = tl.make_block_ptr(out_ptr, (K,), (1,), (0,), (BLOCK_K,), (0,))
    tl.store(row, tl.sum(acc, axis=0).to(tl.f16), boundary_check=(0,))


@tl.kernel
def descriptor_kernel(a_ptr: Pointer[f16], out_ptr: Pointer[f16], M: int, N: int,
                      BLOCK_M: constexpr, BLOCK_N: constexpr) -> None:
    pid = tl.program_id(0)
    src = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(out_ptr, shape=(M, N), strides=(N, 1), block_shape=(BLOCK_M, BLOCK_N))
    tile = src.load([pid * BLOCK_M, 0])
    dst.store([pid * BLOCK_M, 0], tile)
    tile2: Tensor[f16, R2] = dst.load((pid * BLOCK_M, 0))
    dst.store((pid * BLOCK_M, 0), tile2 * 2.0)


# ---------------------------------------------------------------- atomics, random numbers


@tl.kernel
def atomic_kernel(x_ptr: Pointer[f32], sum_ptr: Pointer[f32], count_ptr: Pointer[i32], lock_ptr: Pointer[i32],
                  n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    old: Tensor[f32, R1] = tl.atomic_add(sum_ptr + offs % 4, x, mask=mask)
    tl.atomic_max(sum_ptr + offs % 4, old, mask=mask, sem="relaxed")
    tl.atomic_add(count_ptr, 1)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.atomic_xchg(lock_ptr, 0)
    tl.atomic_or(count_ptr + offs * 0, offs, mask=mask)


@tl.kernel
def dropout_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, p: float, seed: int,
                   BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    noise = tl.randn(seed, offs)
    tl.store(out_ptr + offs, tl.where(keep, x / (1.0 - p), 0.0) + noise * 0.01, mask=mask)


# ---------------------------------------------------------------- Rust-book aliases, loops


@tl.kernel
def aliases_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], idx_ptr: Pointer[i32],
                   n: int, BLOCK: constexpr, UNROLL: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs.lt(n))
    y = tl.load(y_ptr + offs, mask=tl.lt_scalar(offs, n))
    smaller = x.lt(y)
    best = tl.where_(smaller, x, y)
    best = tl.where_(tl.gt(x, y), best, 0.0)
    top, where_top = tl.max_with_indices(best, 0)
    acc = tl.zeros((BLOCK,), tl.f32)
    for i in tl.static_range(UNROLL):
        acc += best * float(i)
    for j in tl.range(0, n, BLOCK):
        acc = acc + tl.load(x_ptr + j + offs, mask=tl.lt_scalar(offs, n - j), other=0.0)
    tl.store(out_ptr + offs, acc - top)
    tl.store(idx_ptr, where_top)


# ---------------------------------------------------------------- launches


def launch_all(n: int) -> None:
    x = tl.to_device(np.ones(n, dtype=np.float32), tl.f32)
    y = tl.to_device(np.zeros(n, dtype=np.float32), tl.f32)
    out = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    counts = tl.empty(4, tl.i32)

    add_kernel[(tl.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    add_kernel[(tl.cdiv(n, 1024),), tl.Options(num_warps=8)](x, y, out, n, BLOCK=1024)
    add_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=256)
    add_kernel[(1, 1, 1)](x_ptr=x, y_ptr=y, out_ptr=out, n=n, BLOCK=64)

    softmax_kernel[(n,)](out, x, 1, 1, BLOCK=1)
    matmul_kernel[(4, 4)](half, half, half, x, 64, 64, 64, 64, 1, 64, 1, 64, 1,
                          BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, ALPHA=0.5)
    matmul_acc_kernel[(1,)](half, half, out, 64, BLOCK=16)
    softplus_kernel[(tl.cdiv(n, 256),)](x, out, n, 1.0, BLOCK=256)
    softplus_kernel[(tl.cdiv(n, 256),)](half, half, n, 2, BLOCK=256)
    block_ptr_kernel[(4,)](half, half, 64, 64, 64, BLOCK_M=16, BLOCK_K=16)
    descriptor_kernel[(4,)](half, half, 64, 64, BLOCK_M=16, BLOCK_N=16)
    atomic_kernel[(4,)](x, out, counts, counts, n, BLOCK=128)
    dropout_kernel[(4,)](x, out, n, 0.1, 1234, BLOCK=128)
    aliases_kernel[(1,)](x, y, out, counts, n, BLOCK=128, UNROLL=2)
