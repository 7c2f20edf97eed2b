"""Autotuned f16 matmul C = A @ B with f32 accumulation: ``@tl.autotune`` picks the tile sizes,
warps and stages among nine configs per (M, N, K), and ``@tl.heuristics`` drops the K masks when
K divides into whole tiles.

The tuned constexprs have defaults in the signature only so that mypy accepts the launch
without them; the autotuner always passes the chosen config's values. On the NumPy reference
nothing is timed: all nine configs run and must agree with the first (a config whose masks are
wrong fails there), so ``python -m examples matmul_autotune`` checks every config on the CPU.
On a GPU, ``python -m examples.matmul_autotune --bench 4096`` tunes and reports TFLOP/s.
"""

from __future__ import annotations

import argparse

import numpy as np

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr

from examples._common import host, poisoned, rng

CONFIGS = [
    tl.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in [
        (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
        (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 64, 4, 3), (64, 64, 32, 2, 5), (32, 64, 32, 2, 5),
    ]
]


@tl.autotune(configs=CONFIGS, key=["M", "N", "K"])
@tl.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@tl.kernel
def matmul_tuned(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f16], M: int, N: int, K: int,
                 stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
                 BLOCK_M: constexpr = 64, BLOCK_N: constexpr = 64, BLOCK_K: constexpr = 32, GROUP_M: constexpr = 8,
                 EVEN_K: Constexpr[bool] = False) -> None:
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:  # only the M and N edges need masks
            a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
            b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.f16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a: tl.Buffer[tl.f16], b: tl.Buffer[tl.f16], c: tl.Buffer[tl.f16]) -> None:
    """c = a @ b with the tuned kernel (the grid follows the chosen tile sizes)."""
    (M, K), N = a.shape, b.shape[1]
    matmul_tuned[lambda meta: (tl.cdiv(M, meta["BLOCK_M"]) * tl.cdiv(N, meta["BLOCK_N"]),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def run(seed: int = 0) -> None:
    gen = rng(seed)
    for M, N, K in ((70, 45, 53), (64, 96, 128)):        # ragged K, then K a multiple of every BLOCK_K
        a = gen.uniform(-1.0, 1.0, (M, K)).astype(np.float16)
        b = gen.uniform(-1.0, 1.0, (K, N)).astype(np.float16)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        c = poisoned((M, N), tl.f16)
        matmul(tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), c)
        # f16 operands are exact in the f32 accumulator; the f16 result rounds to ~5e-4 relative
        np.testing.assert_allclose(host(c), expected, rtol=2e-3, atol=2e-3, err_msg=f"M, N, K = {M}, {N}, {K}")


def bench(size: int) -> None:
    """Tune for a size x size x size product on the cupy backend; print the time and TFLOP/s."""
    with tl.backend("cupy"):
        _bench(size)


def _bench(size: int) -> None:
    gen = rng(0)
    a = tl.to_device(gen.standard_normal((size, size)).astype(np.float16), tl.f16)
    b = tl.to_device(gen.standard_normal((size, size)).astype(np.float16), tl.f16)
    c = tl.empty((size, size), tl.f16)
    matmul(a, b, c)  # tunes
    ms = tl.testing.do_bench(lambda: matmul(a, b, c))
    print(f"matmul_autotune {size}^3: {ms:.4f} ms, {2 * size**3 / ms / 1e9:.1f} TFLOP/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=int, metavar="SIZE", help="tune and time a SIZE^3 product")
    options = parser.parse_args()
    cupy = next(b for b in tl.backends() if b.name == "cupy")
    if options.bench and not cupy.available:  # timing the reference would take many minutes and mean nothing
        parser.exit(2, f"--bench times the cupy backend on a GPU, which is not available here: {cupy.reason}\n")
    if options.bench:
        bench(options.bench)
    else:
        run()
