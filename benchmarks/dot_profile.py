"""Run one tensor-core benchmark kernel a few times, tile_lang's or Triton's, for a profiler
(``scripts/dot_profile.sh`` runs it under ncu), and save Triton's intermediate code for it.

    python -m benchmarks.dot_profile {matmul,attention64,attention128}[c][t] {tile_lang,triton} [--dump DIR]

(``c``: causal attention; ``t``: written with tensor descriptors, TMA).
"""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable
from typing import Any

import torch
import triton

import tile_lang as tl
from benchmarks import dot_kernels as D
from benchmarks.triton_kernels import tt_attention, tt_attention_tma, tt_matmul


def matmul(side: str, n: int = 4096) -> Callable[[], Any]:
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(n, 128) * triton.cdiv(n, 256),)
    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
    if side == "triton":
        return lambda: tt_matmul[grid](a, b, c, n, n, n, n, n, 1, n, num_warps=8, num_stages=3, **consts)
    return lambda: D.matmul[grid, tl.Options(num_warps=8, num_stages=3)](a, b, c, n, n, n, n, n, 1, n, **consts)


def attention(side: str, head: int, causal: bool, descriptors: bool) -> Callable[[], Any]:
    seq, bh = 4096, 128
    ours, twin = (D.attention_tma, tt_attention_tma) if descriptors else (D.attention, tt_attention)
    if descriptors:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    bn, warps = (64, 4) if head == 64 else (32, 8)
    q, k, v = (torch.randn(bh, seq, head, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    grid = (seq // 128, bh)
    consts = dict(BLOCK_M=128, BLOCK_N=bn, HEAD=head, CAUSAL=causal)
    if side == "triton":
        return lambda: twin[grid](q, k, v, o, seq, head ** -0.5, num_warps=warps, num_stages=3, **consts)
    return lambda: ours[grid, tl.Options(num_warps=warps, num_stages=3)](q, k, v, o, seq, head ** -0.5, **consts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel", choices=["matmul"] + [f"attention{d}{c}{t}" for d in (64, 128) for c in ("", "c")
                                                        for t in ("", "t")])
    parser.add_argument("side", choices=["tile_lang", "triton"])
    parser.add_argument("--dump", type=pathlib.Path, help="write Triton's ttgir, ptx and cubin here")
    args = parser.parse_args()
    with tl.backend("cupy"):
        kernel = args.kernel
        fn = (matmul(args.side) if kernel == "matmul"
              else attention(args.side, int(kernel[9:].rstrip("ct")), "c" in kernel[9:], kernel.endswith("t")))
        for _ in range(3):
            compiled = fn()
        torch.cuda.synchronize()
    if args.dump and args.side == "triton":
        args.dump.mkdir(parents=True, exist_ok=True)
        for kind in ("ttgir", "ptx", "cubin"):
            data = compiled.asm[kind]
            path = args.dump / f"triton_{args.kernel}.{kind}"
            path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data)


if __name__ == "__main__":
    main()
