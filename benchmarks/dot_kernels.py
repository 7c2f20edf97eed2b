"""The tensor-core benchmark kernels (``benchmarks/dot_bench.py``), written as Triton's tutorials
write them; ``benchmarks/triton_kernels.py`` holds the same kernels in Triton, line for line."""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr

W = TypeVar("W", bound=Width)
WC = TypeVar("WC", bound=Width)


@tl.func
def grouped_tile(M: int, N: int, BLOCK_M: int, BLOCK_N: int, GROUP_M: int) -> tuple[int, int]:
    """This program's (row, column) tile of an M x N output cut in BLOCK_M x BLOCK_N tiles,
    programs grouped GROUP_M tile rows at a time for L2 reuse (Triton's tutorial preamble)."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    return tl.swizzle2d(pid // num_n, pid % num_n, num_m, num_n, GROUP_M)


@tl.kernel
def matmul(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[WC]], M: int, N: int, K: int,
           stride_am: int, stride_bk: int, stride_bn: int, stride_cm: int,
           BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, GROUP_M: constexpr) -> None:
    """C = A @ B for f16, bf16, fp8 or f32 (tf32 dots, Triton's default) buffers, f32
    accumulation; B row-major (stride_bn 1) or K-major (stride_bk 1, as fp8 wants it); programs
    grouped along M for L2 reuse."""
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32")
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptrs.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def matmul_tma(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], M: int, N: int, K: int,
               BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, GROUP_M: constexpr) -> None:
    """C = A @ B through tensor descriptors (A, B row-major): the operands' loads are bulk tensor
    copies (TMA) on sm_90, out-of-bounds elements zero; programs grouped along M."""
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@tl.kernel
def matmul_i8(a_ptr: Pointer[tl.i8], b_ptr: Pointer[tl.i8], c_ptr: Pointer[tl.i32], M: int, N: int, K: int,
              stride_am: int, stride_bk: int, stride_bn: int, stride_cm: int,
              BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, GROUP_M: constexpr) -> None:
    """C = A @ B for i8 buffers, exact i32 accumulation (tensor cores: mma.sync m16n8k32); B
    row-major (stride_bn 1) or K-major (stride_bk 1); programs grouped along M as ``matmul``."""
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.i32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.i32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def matmul_bias_relu(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], bias_ptr: Pointer[tl.f32],
                     c_ptr: Pointer[tl.f16], M: int, N: int, K: int, stride_am: int, stride_bk: int, stride_cm: int,
                     BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr) -> None:
    """relu(A @ B + bias) with masked ragged edges on every side."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], out.to(tl.f16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def attention(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], o_ptr: Pointer[tl.f16],
              seq: int, scale: float, BLOCK_M: constexpr, BLOCK_N: constexpr, HEAD: constexpr,
              CAUSAL: constexpr) -> None:
    """Flash attention forward for one (batch*head, query block): online softmax over key
    blocks; q, k, v, o are [batch*heads, seq, HEAD] contiguous."""
    start_m = tl.program_id(0)
    base = tl.program_id(1) * seq * HEAD
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :])
    m_i = tl.zeros((BLOCK_M,), tl.f32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), tl.f32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BLOCK_M if CAUSAL else seq
    for start_n in range(0, end, BLOCK_N):
        kt = tl.load(k_ptr + base + (start_n + offs_n)[None, :] * HEAD + offs_d[:, None])
        qk = tl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + (start_n + offs_n)[:, None] * HEAD + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.f16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], out.to(tl.f16))


@tl.kernel
def attention_tma(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], o_ptr: Pointer[tl.f16],
                  seq: int, scale: float, BLOCK_M: constexpr, BLOCK_N: constexpr, HEAD: constexpr,
                  CAUSAL: constexpr) -> None:
    """``attention`` as Triton's tutorial writes it for Hopper: q, k, v and o through tensor
    descriptors over the [batch*heads*seq, HEAD] rows, k transposed after its load (TMA for q, k
    and v on sm_90)."""
    start_m = tl.program_id(0)
    rows = tl.num_programs(1) * seq
    row0 = tl.program_id(1) * seq
    q_desc = tl.make_tensor_descriptor(q_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_M, HEAD])
    k_desc = tl.make_tensor_descriptor(k_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_N, HEAD])
    v_desc = tl.make_tensor_descriptor(v_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_N, HEAD])
    o_desc = tl.make_tensor_descriptor(o_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_M, HEAD])
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = q_desc.load([row0 + start_m * BLOCK_M, 0])
    m_i = tl.zeros((BLOCK_M,), tl.f32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), tl.f32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BLOCK_M if CAUSAL else seq
    for start_n in range(0, end, BLOCK_N):
        k = k_desc.load([row0 + start_n, 0]).T
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([row0 + start_n, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.f16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    o_desc.store([row0 + start_m * BLOCK_M, 0], out.to(tl.f16))
