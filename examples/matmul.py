"""Tiled matmul C = A @ B (book: patterns/matmul.md; math/gemm.rs).

The Rust kernel loads tiles through TMA tensor descriptors (out-of-bounds reads as zero); this
port is the classic Triton formulation: pointer blocks advanced along K each iteration,
explicit masks for the ragged edges, ``acc = tl.dot(a, b, acc)`` accumulating in f32, and a
grouped ("swizzled") program order for L2 reuse. The grouped order is ``tl.swizzle2d``; the
Rust kernel spells the same arithmetic out with ``GROUP_M``.

``TF32`` selects the precision: ``"ieee"`` is exact f32 (Rust: InputPrecision::IEEE, which
the book notes disables tensor cores); ``"tf32"`` rounds the operands to 10-bit mantissas
first (InputPrecision::TF32, the Rust kernel's choice), so it is checked at a looser tolerance.
"""

from __future__ import annotations

import numpy as np

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr

from examples._common import host, poisoned, rng


@tl.kernel
def matmul(a_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
           stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
           BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, GROUP_M: constexpr,
           TF32: Constexpr[bool]) -> None:
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)   # [BLOCK_M, BLOCK_K]
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)   # [BLOCK_K, BLOCK_N]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)        # Rust: T::zeros::<f32>(&[BLOCK_M, BLOCK_N])
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K                              # columns of A / rows of B still in range
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")   # Rust: T::dot(a, b, Some(acc), InputPrecision::TF32, None)
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run(seed: int = 0) -> None:
    gen = rng(seed)
    M, N, K = 70, 45, 53                  # none a multiple of the 32/32/16 tiles
    bm, bn, bk = 32, 32, 16
    a = gen.uniform(-1.0, 1.0, (M, K)).astype(np.float32)
    b = gen.uniform(-1.0, 1.0, (K, N)).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    a_dev, b_dev = tl.to_device(a, tl.f32), tl.to_device(b, tl.f32)
    grid = (tl.cdiv(M, bm) * tl.cdiv(N, bn),)
    # IEEE f32: only summation-order rounding; TF32: ~1e-3 relative per product.
    for tf32, rtol, atol in ((False, 1e-5, 1e-5), (True, 1e-2, 1e-2)):
        c = poisoned((M, N), tl.f32)
        matmul[grid](a_dev, b_dev, c, M, N, K, a_dev.stride(0), a_dev.stride(1), b_dev.stride(0),
                     b_dev.stride(1), c.stride(0), c.stride(1),
                     BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2, TF32=tf32)
        np.testing.assert_allclose(host(c), expected, rtol=rtol, atol=atol, err_msg=f"TF32={tf32}")


if __name__ == "__main__":
    run()
