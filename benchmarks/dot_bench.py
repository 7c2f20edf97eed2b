"""Tensor-core benchmark on a GPU, in one process: tile_lang's CUDA backend vs Triton on the
same kernel source and launch config (``benchmarks/dot_kernels.py`` and its Triton twin), with
cuBLAS/SDPA through torch as a third column. Every result is checked against torch first.

    python -m benchmarks.dot_bench [--quick]

Prints a markdown table of TFLOP/s (TOPS for the int8 row) and the ratio to Triton (medians of
do_bench).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import torch
import triton

import tile_lang as tl
from benchmarks import dot_kernels as D
from benchmarks.triton_kernels import (
    tt_attention, tt_attention_tma, tt_matmul, tt_matmul_bias_relu, tt_matmul_i8, tt_matmul_tma,
)


def bench(fn: Callable[[], Any]) -> float:
    """Median milliseconds."""
    ms: float = triton.testing.do_bench(fn, warmup=100, rep=500, return_mode="median")
    return ms


def row(name: str, flops: float, fns: dict[str, Callable[[], Any]]) -> str:
    tflops = {k: flops / (bench(f) * 1e-3) / 1e12 for k, f in fns.items()}
    ratio = tflops["tile_lang"] / tflops["triton"]
    return (f"| {name} | {tflops['tile_lang']:.1f} | {tflops['triton']:.1f} | {tflops.get('torch', math.nan):.1f} "
            f"| {ratio:.3f} |")


def _close(out: torch.Tensor, ref: torch.Tensor, what: str, tol: float) -> None:
    err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
    if not err < tol:
        raise AssertionError(f"{what}: relative error {err:.2e} >= {tol}")


def matmul(n: int, dtype: torch.dtype, bm: int, bn: int, bk: int, warps: int, stages: int) -> str:
    """C = A @ B; fp8 (e4m3) as Triton's tutorial runs it: B stored K-major (its transpose
    row-major), C in f16, cuBLAS through ``torch._scaled_mm`` as the third column."""
    fp8 = dtype == torch.float8_e4m3fn
    a = torch.randn(n, n, device="cuda").to(dtype)
    b = torch.randn(n, n, device="cuda").to(dtype)  # fp8: B's transpose, [N, K]
    strides = (1, n) if fp8 else (n, 1)  # stride_bk, stride_bn
    c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16 if fp8 else dtype)
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
    opts = tl.Options(num_warps=warps, num_stages=stages)

    def ours() -> None:
        D.matmul[grid, opts](a, b, c, n, n, n, n, *strides, n, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)

    start = time.perf_counter()
    ours()
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    torch.backends.cuda.matmul.allow_tf32 = True  # Triton's and tile_lang's f32 dots are tf32
    _close(c, a.float() @ (b.float().T if fp8 else b.float()), f"matmul {dtype}", 2e-2)
    one = torch.ones((), device="cuda")
    name = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32 (tf32)", torch.float8_e4m3fn: "fp8 e4m3"}
    return row(f"matmul {name[dtype]} {n}^3 ({bm}x{bn}x{bk}, {warps} warps, {stages} stages; first launch {first:.2f} s)",
               2.0 * n**3, {"tile_lang": ours,
                            "triton": lambda: tt_matmul[grid](a, b, c, n, n, n, n, *strides, n, num_warps=warps,
                                                              num_stages=stages, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                              GROUP_M=8),
                            "torch": (lambda: torch._scaled_mm(a, b.T, one, one, out_dtype=torch.float16)) if fp8
                            else (lambda: torch.matmul(a, b, out=c))})


def matmul_tma(n: int, dtype: torch.dtype, bm: int, bn: int, bk: int, warps: int, stages: int) -> str:
    """C = A @ B through tensor descriptors on both sides (TMA); Triton builds its descriptors on
    the device too, in memory from the allocator set here."""
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    a, b = (torch.randn(n, n, device="cuda").to(dtype) for _ in range(2))
    c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)

    def ours() -> None:
        D.matmul_tma[grid, tl.Options(num_warps=warps, num_stages=stages)](a, b, c, n, n, n, **consts)

    ours()
    _close(c, a.float() @ b.float(), f"matmul_tma {dtype}", 2e-2)
    name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    return row(f"matmul {name} {n}^3 through tensor descriptors (TMA; {bm}x{bn}x{bk}, {warps} warps, {stages} stages)",
               2.0 * n**3, {"tile_lang": ours,
                            "triton": lambda: tt_matmul_tma[grid](a, b, c, n, n, n, num_warps=warps, num_stages=stages,
                                                                  **consts),
                            "torch": lambda: torch.matmul(a, b, out=c)})


def matmul_i8(n: int, bm: int, bn: int, bk: int, warps: int, stages: int) -> str:
    """C = A @ B on int8 operands over their whole range, exact i32 accumulation, B row-major;
    tile_lang's and Triton's results must equal cuBLAS's (``torch._int_mm``) bit for bit."""
    a, b = (torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8) for _ in range(2))
    want = torch._int_mm(a, b)
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
    opts = tl.Options(num_warps=warps, num_stages=stages)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
    c = torch.full((n, n), -2**31, device="cuda", dtype=torch.int32)  # poison: no product reaches it

    def ours() -> None:
        D.matmul_i8[grid, opts](a, b, c, n, n, n, n, n, 1, n, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)

    def theirs() -> None:
        tt_matmul_i8[grid](a, b, c, n, n, n, n, n, 1, n, num_warps=warps, num_stages=stages, **consts)

    start = time.perf_counter()
    ours()
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    for who, run in (("tile_lang", ours), ("triton", theirs)):
        c.fill_(-2**31)
        run()
        if not torch.equal(c, want):
            wrong = (c != want).sum().item()
            raise AssertionError(f"matmul i8 ({who}): {wrong} of {n * n} elements differ from torch._int_mm")
    return row(f"matmul i8 (TOPS) {n}^3 ({bm}x{bn}x{bk}, {warps} warps, {stages} stages; first launch {first:.2f} s)",
               2.0 * n**3, {"tile_lang": ours, "triton": theirs, "torch": lambda: torch._int_mm(a, b)})


def matmul_bias_relu(n: int = 4000, bm: int = 128, bn: int = 256, bk: int = 64, warps: int = 8, stages: int = 3) -> str:
    a, b = torch.randn(n, n, device="cuda", dtype=torch.float16), torch.randn(n, n, device="cuda", dtype=torch.float16)
    bias = torch.randn(n, device="cuda")
    c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(n, bm), triton.cdiv(n, bn))
    args = (a, b, bias, c, n, n, n, n, n, n)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)

    def ours() -> None:
        D.matmul_bias_relu[grid, tl.Options(num_warps=warps, num_stages=stages)](
            a, b, bias, c, n, n, n, n, n, n, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)

    ours()
    _close(c, torch.relu(a.float() @ b.float() + bias), "matmul+bias+relu", 1e-2)
    return row(f"matmul+bias+relu f16 {n}^3, masked edges ({bm}x{bn}x{bk})", 2.0 * n**3, {
        "tile_lang": ours,
        "triton": lambda: tt_matmul_bias_relu[grid](*args, num_warps=warps, num_stages=stages, **consts),
        "torch": lambda: torch.relu(torch.addmm(bias.half(), a, b))})


def attention(head: int, causal: bool, batch: int = 4, heads: int = 32, seq: int = 4096, bm: int = 128,
              bn: int = 64, warps: int = 4, stages: int = 3, descriptors: bool = False) -> str:
    """Flash attention forward; with ``descriptors`` both sides read and write through tensor
    descriptors (Triton's Hopper tutorial form, ``k_desc.load(...).T``; TMA)."""
    kernel, twin = (D.attention_tma, tt_attention_tma) if descriptors else (D.attention, tt_attention)
    if descriptors:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    shape = (batch * heads, seq, head)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.full(shape, float("nan"), device="cuda", dtype=torch.float16)
    scale = head ** -0.5
    grid = (seq // bm, batch * heads)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, HEAD=head, CAUSAL=causal)

    def ours() -> None:
        kernel[grid, tl.Options(num_warps=warps, num_stages=stages)](
            q, k, v, o, seq, scale, BLOCK_M=bm, BLOCK_N=bn, HEAD=head, CAUSAL=causal)

    ours()
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    _close(o, ref, "attention", 1e-2)
    flops = 4.0 * batch * heads * seq * seq * head * (0.5 if causal else 1.0)
    how = ", tensor descriptors (TMA)" if descriptors else ""
    return row(f"attention fwd f16 {batch}x{heads}x{seq}, d={head}{' causal' if causal else ''} ({bm}x{bn}{how})", flops, {
        "tile_lang": ours,
        "triton": lambda: twin[grid](q, k, v, o, seq, scale, num_warps=warps, num_stages=stages, **consts),
        "torch": lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the 4096 f16 matmul and one attention only")
    quick = parser.parse_args().quick
    rows = ["| kernel | tile_lang TFLOP/s | Triton | torch | ratio to Triton |", "|---|---|---|---|---|"]
    with tl.backend("cupy"):
        rows.append(matmul(4096, torch.float16, 128, 256, 64, 8, 3))
        rows.append(matmul_tma(4096, torch.float16, 128, 256, 64, 8, 3))
        if not quick:
            rows.append(matmul_tma(8192, torch.float16, 128, 256, 64, 8, 3))
            rows.append(matmul_tma(4096, torch.bfloat16, 128, 256, 64, 8, 3))
            rows.append(matmul(4096, torch.bfloat16, 128, 256, 64, 8, 3))
            rows.append(matmul(8192, torch.float16, 128, 256, 64, 8, 3))
            rows.append(matmul(8192, torch.bfloat16, 128, 256, 64, 8, 3))
            rows.append(matmul(4096, torch.float32, 128, 128, 32, 8, 3))
            rows.append(matmul(4096, torch.float8_e4m3fn, 128, 256, 128, 8, 3))
            rows.append(matmul(8192, torch.float8_e4m3fn, 128, 256, 128, 8, 3))
            rows.append(matmul_i8(4096, 128, 256, 128, 8, 3))
            rows.append(matmul_bias_relu())
        rows.append(attention(64, False))
        if not quick:
            rows.append(attention(64, True))
            rows.append(attention(128, False, bn=32, warps=8))
            rows.append(attention(128, True, bn=32, warps=8))
            rows.append(attention(64, False, descriptors=True))
            rows.append(attention(64, True, descriptors=True))
            rows.append(attention(128, False, bn=32, warps=8, descriptors=True))
            rows.append(attention(128, True, bn=32, warps=8, descriptors=True))
    print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
