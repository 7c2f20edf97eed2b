"""GPU benchmark, in one process: tile_lang's CUDA backend vs Triton (the same kernels) vs torch.

Medians from ``triton.testing.do_bench``; every result is checked against torch before timing.
Prints a table of GB/s and the ratio to Triton, then launch overhead and compile latencies.

do_bench clears the L2 before each call (about 70 us of GPU work), so a launch whose host side
takes longer than that measures the host, not the kernel. The "back-to-back" column times ten
launches in a row, where the host side overlaps the previous kernel: it is the kernel's own speed
whenever the host side is shorter than the kernel.
"""

from __future__ import annotations

import os
import re
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
from tile_lang import registry
from tile_lang.launch_cache import FastBackend
from tests.compiler import kernels as K


def bench(fn: Callable[[], Any]) -> float:
    """Median milliseconds."""
    ms: float = triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")
    return ms


BACK_TO_BACK = 10


def row(name: str, nbytes: float, fns: dict[str, Callable[[], Any]]) -> str:
    ours = fns["tile_lang"]

    def repeated() -> None:
        for _ in range(BACK_TO_BACK):
            ours()

    times = {k: bench(f) for k, f in fns.items()}
    times["back-to-back"] = bench(repeated) / BACK_TO_BACK
    gbs = {k: nbytes / (t * 1e-3) / 1e9 for k, t in times.items()}
    ratio = gbs["tile_lang"] / gbs["triton"]
    return (f"| {name} | {gbs['tile_lang']:.0f} | {gbs['triton']:.0f} | {gbs.get('torch', float('nan')):.0f} | "
            f"{ratio:.3f} | {gbs['back-to-back']:.0f} |")


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
    return row(f"softmax f32 {m}x{n} ({warps} warps)", 2 * 4 * m * n, {
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
    return row(f"layernorm fwd f32 {m}x{n} ({warps} warps)", 2 * 4 * m * n, {
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


VARIANTS: dict[str, Callable[[str, int], str]] = {
    "as generated": lambda source, threads: source,
    "2 blocks/SM": lambda source, threads: source.replace(f"__launch_bounds__({threads})",
                                                          f"__launch_bounds__({threads}, 2)"),
    "fast exp/div": lambda source, threads: re.sub(r"\((\w+\[k\]) / (\w+)\)", r"__fdividef(\1, \2)",
                                                   source.replace("expf(", "__expf(")),
}


def variants(title: str, launcher: tl.Launcher[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             out: torch.Tensor, ref: torch.Tensor, nbytes: float) -> str:
    """Kernel speed of edits of the CUDA generated for one launch, each launched straight through
    CuPy (no host overhead to speak of) and checked against ``ref``: what a codegen change would buy."""
    import cupy

    from tile_lang.compiler import compile_ir
    from tile_lang_cupy import nvrtc
    from tile_lang_cupy.codegen import generate
    from tile_lang_cupy.launch import launch_spec, make_packer
    from tile_lang_cupy.memory import address

    launch = launcher.prepare(args, kwargs)
    spec = launch_spec(launch)
    cuda = generate(compile_ir(launch.kernel, spec))
    pack = make_packer([None if a.dtype.is_pointer else a.dtype.numpy.str for a in spec.args])
    packed = pack(tuple(address(a) if isinstance(a, tl.Buffer) else a for a in launch.args))
    arch = str(cupy.cuda.Device().compute_capability)
    cells = []
    with tempfile.TemporaryDirectory() as folder:
        for i, (name, edit) in enumerate(VARIANTS.items()):
            path = os.path.join(folder, f"{i}.cubin")
            with open(path, "wb") as f:
                f.write(nvrtc.compile_cubin(edit(cuda.source, cuda.threads), cuda.name, arch))
            kernel = cupy.RawModule(path=path).get_function(cuda.name)
            function = kernel.kernel

            def run(function: Any = function) -> None:
                function(launch.grid, (cuda.threads, 1, 1), packed, cuda.smem_bytes)

            out.fill_(float("nan"))
            run()
            torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
            gbs = nbytes / (bench(run) * 1e-3) / 1e9
            cells.append(f"{name} {gbs:.0f} ({kernel.attributes['num_regs']} regs)")
    return f"{title}: " + "; ".join(cells)


def experiments() -> list[str]:
    """GB/s of codegen variants of the kernels that trailed Triton."""
    lines = []
    for m, n, warps in [(16384, 1024, 4), (4096, 16384, 16)]:
        x = torch.randn(m, n, device="cuda")
        out = torch.empty_like(x)
        launcher = K.softmax_kernel[(m,), tl.Options(num_warps=warps)]
        lines.append(variants(f"softmax {m}x{n} ({warps} warps)", launcher, (out, x, n, n), {"BLOCK": n}, out,
                              torch.softmax(x, dim=1), 2 * 4 * m * n))
    m, n = 8192, 4096
    x, w, b = torch.randn(m, n, device="cuda"), torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    lines.append(variants(f"layernorm {m}x{n} (8 warps)", K.layernorm_kernel[(m,), tl.Options(num_warps=8)], (x, y, w, b, n, n, 1e-5), {"BLOCK": n}, y,
                          torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5), 2 * 4 * m * n))
    return lines


def launch_overhead(count: int = 1000) -> str:
    """Host time per launch of a cached kernel: tile_lang, its runner alone (argument packing and
    CuPy's launch call), and Triton; then the Python side alone, on the no-op backend."""
    n = 4096
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    backend = registry.current()
    assert isinstance(backend, FastBackend)
    runner = backend.runner(K.add_kernel[grid].prepare((x, y, out, n), {"BLOCK": 1024}))
    raw = (x.data_ptr(), y.data_ptr(), out.data_ptr(), n)
    fns: dict[str, Callable[[], Any]] = {"tile_lang": lambda: K.add_kernel[grid](x, y, out, n, BLOCK=1024),
                                         "runner": lambda: runner((grid[0], 1, 1), raw),
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
    done = subprocess.run([sys.executable, "-m", "timeit", "-s", "from benchmarks.noop_backend import add_launch; "
                           "f = add_launch()", "f()"], capture_output=True, text=True)
    timeit = done.stdout.strip() or done.stderr.strip()[-300:]
    return (f"launch overhead ({count} launches of a cached 4096-element add): tile_lang {per['tile_lang']:.1f} us "
            f"(its runner alone: {per['runner']:.1f} us), triton {per['triton']:.1f} us; "
            f"Python side on the no-op backend: {timeit}")


_WARM = """
import sys, time, torch
from tests.compiler.kernels import add_kernel
x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); o = torch.empty_like(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
import cupy, tile_lang_cupy
t1 = time.perf_counter()
add_kernel[(4,)](x, y, o, 4096, BLOCK=1024)
torch.cuda.synchronize()
print(t1 - t0, time.perf_counter() - t1, int("tile_lang.compiler" in sys.modules))
"""


def compile_latency() -> str:
    """The first launch of a new specialisation in this process (front end, passes, codegen,
    NVRTC), then the first launch in a new process whose disk cache holds the kernel."""
    previous = os.environ.get("TILE_LANG_CACHE_DIR")
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
        done = subprocess.run([sys.executable, "-c", _WARM], env=env, check=True, capture_output=True, text=True)
        imports, warm, compiler = (float(v) for v in done.stdout.split())
    if previous is None:
        del os.environ["TILE_LANG_CACHE_DIR"]
    else:
        os.environ["TILE_LANG_CACHE_DIR"] = previous
    return (f"first launch, empty cache: {cold:.3f} s; first launch in a new process, warm disk cache: {warm:.3f} s "
            f"(after importing cupy, which took {imports:.3f} s; compiler imported: {bool(compiler)})")


def main() -> None:
    """Print each line as soon as it is measured (a run cut short keeps what it had)."""
    import cupy

    torch.manual_seed(0)
    np.random.seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}  triton {triton.__version__}  torch {torch.__version__}  "
          f"cupy {getattr(cupy, '__version__', '?')}")
    with tl.backend("cupy"):
        print("| kernel | tile_lang GB/s | Triton GB/s | torch GB/s | tile_lang / Triton | tile_lang back-to-back |")
        print("|---|---|---|---|---|---|")
        measures: list[Callable[[], str]] = [
            vector_add, lambda: softmax(16384, 1024, 4), lambda: softmax(8192, 4096, 8),
            lambda: softmax(4096, 16384, 16), layernorm, atomic_sum]
        for measure in measures:
            print(measure())
        print(launch_overhead())
        print(compile_latency())
        print("Codegen variants, GB/s from do_bench (launched through CuPy directly):")
        for line in experiments():
            print(line)


if __name__ == "__main__":
    main()
