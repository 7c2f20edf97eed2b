"""GPU benchmark, in one process: tile_lang's CUDA backend vs Triton (the same kernels) vs torch.

Medians from ``triton.testing.do_bench``; every result is checked against torch before timing.
Prints a table of GB/s and the ratio to Triton, then launch overhead and compile latencies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import triton

import tile_lang as tl
from benchmarks.triton_kernels import tt_add, tt_layernorm, tt_softmax, tt_sum
from tests.compiler import kernels as K


def bench(fn: Callable[[], Any]) -> float:
    """Median milliseconds."""
    ms: float = triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")
    return ms


def row(name: str, nbytes: float, fns: dict[str, Callable[[], Any]]) -> str:
    times = {k: bench(f) for k, f in fns.items()}
    gbs = {k: nbytes / (t * 1e-3) / 1e9 for k, t in times.items()}
    ratio = gbs["tile_lang"] / gbs["triton"]
    return (f"| {name} | {gbs['tile_lang']:.0f} | {gbs['triton']:.0f} | {gbs.get('torch', float('nan')):.0f} | "
            f"{ratio:.3f} |")


def vector_add(n: int = 2**28) -> str:
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out, ref = torch.full_like(x, float("nan")), x + y
    grid = (triton.cdiv(n, 1024),)

    def ours() -> None:
        K.add_kernel[grid](x, y, out, n, BLOCK=1024)

    ours()
    torch.testing.assert_close(out, ref)
    return row(f"vector add f32 2^{n.bit_length() - 1}", 3 * 4 * n, {
        "tile_lang": ours, "triton": lambda: tt_add[grid](x, y, out, n, BLOCK=1024),
        "torch": lambda: torch.add(x, y, out=out)})


def softmax(m: int, n: int, warps: int) -> str:
    x = torch.randn(m, n, device="cuda")
    out, ref = torch.full_like(x, float("nan")), torch.softmax(x, dim=1)
    block = triton.next_power_of_2(n)

    def ours() -> None:
        K.softmax_kernel[(m,), tl.Options(num_warps=warps)](out, x, n, n, BLOCK=block)

    ours()
    torch.testing.assert_close(out, ref)
    return row(f"softmax f32 {m}x{n}", 2 * 4 * m * n, {
        "tile_lang": ours, "triton": lambda: tt_softmax[(m,)](out, x, n, n, BLOCK=block, num_warps=warps),
        "torch": lambda: torch.softmax(x, dim=1)})


def layernorm(m: int = 8192, n: int = 4096, warps: int = 8) -> str:
    x = torch.randn(m, n, device="cuda")
    w, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    y, ref = torch.full_like(x, float("nan")), torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)

    def ours() -> None:
        K.layernorm_kernel[(m,), tl.Options(num_warps=warps)](x, y, w, b, n, n, 1e-5, BLOCK=n)

    ours()
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)
    return row(f"layernorm fwd f32 {m}x{n}", 2 * 4 * m * n, {
        "tile_lang": ours, "triton": lambda: tt_layernorm[(m,)](x, y, w, b, n, n, 1e-5, BLOCK=n, num_warps=warps),
        "torch": lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)})


def atomic_sum(n: int = 2**28, block: int = 4096, warps: int = 8) -> str:
    x = torch.rand(n, device="cuda")
    out = torch.zeros(1, device="cuda")
    grid = (triton.cdiv(n, block),)

    def ours() -> None:
        K.sum_kernel[grid, tl.Options(num_warps=warps)](x, out, n, BLOCK=block)

    ours()
    torch.testing.assert_close(out[0], x.double().sum().float(), rtol=1e-4, atol=1.0)
    return row(f"sum f32 2^{n.bit_length() - 1} (atomics)", 4 * n, {
        "tile_lang": ours, "triton": lambda: tt_sum[grid](x, out, n, BLOCK=block, num_warps=warps),
        "torch": lambda: torch.sum(x)})


def launch_overhead(count: int = 1000) -> str:
    n = 4096
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    fns: dict[str, Callable[[], Any]] = {"tile_lang": lambda: K.add_kernel[grid](x, y, out, n, BLOCK=1024),
           "triton": lambda: tt_add[grid](x, y, out, n, BLOCK=1024)}
    per: dict[str, float] = {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            fn()
        torch.cuda.synchronize()
        per[name] = (time.perf_counter() - start) / count * 1e6
    return (f"launch overhead ({count} launches of a cached 4096-element add): tile_lang {per['tile_lang']:.1f} us, "
            f"triton {per['triton']:.1f} us")


_WARM = """
import time, torch
from tests.compiler.kernels import add_kernel
x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); o = torch.empty_like(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
import cupy, tile_lang_cupy
t1 = time.perf_counter()
add_kernel[(4,)](x, y, o, 4096, BLOCK=1024)
torch.cuda.synchronize()
print(t1 - t0, time.perf_counter() - t1)
"""


def compile_latency() -> str:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TILE_LANG_CACHE_DIR"] = cache
        x = torch.randn(4096, device="cuda")
        out = torch.empty_like(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        K.add_kernel[(4,)](x, x, out, 4096, BLOCK=512)  # a specialisation not compiled before
        torch.cuda.synchronize()
        cold = time.perf_counter() - start
        env = dict(os.environ, TILE_LANG_BACKEND="cupy")
        subprocess.run([sys.executable, "-c", _WARM], env=env, check=True, capture_output=True)  # fills the cache
        out = subprocess.run([sys.executable, "-c", _WARM], env=env, check=True, capture_output=True, text=True)
        imports, warm = (float(v) for v in out.stdout.split())
    return (f"first launch, empty cache: {cold:.3f} s; first launch in a new process, warm disk cache: {warm:.3f} s "
            f"(after importing cupy, which took {imports:.3f} s)")


def main() -> None:
    torch.manual_seed(0)
    np.random.seed(0)
    with tl.backend("cupy"):
        rows = [vector_add(), softmax(16384, 1024, 4), softmax(8192, 4096, 8), softmax(4096, 16384, 16),
                layernorm(), atomic_sum()]
        print(f"GPU: {torch.cuda.get_device_name()}  triton {triton.__version__}  torch {torch.__version__}")
        print("| kernel | tile_lang GB/s | Triton GB/s | torch GB/s | tile_lang / Triton |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(r)
        print(launch_overhead())
        print(compile_latency())


if __name__ == "__main__":
    main()
