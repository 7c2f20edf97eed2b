"""Where the first launch of a matmul goes, on the GPU: the f16 matmul of ``benchmarks/dot_kernels.py``
(128x256x64, 8 warps, 3 stages, 4096^3, B row-major) launched in a fresh process with an empty
``TILE_LANG_CACHE_DIR``, then the bf16 one in the same process (a steady-state compile).

Each phase is timed by wrapping the function the launch calls, so nothing runs ahead of the
launch: loading the backend, generating the CUDA (the compiler's imports, from ``-X importtime``,
then front end, passes and codegen), NVRTC (setup, then the compile to a cubin) and loading the
module. The child process runs twice: with the tree as found (``.pyc`` files present or not) and
after ``compileall`` (what an installed package has), so a source tree that may not write
bytecode shows both. Each result is checked against torch's matmul after the timing. tile_lang_cupy's
launch modules are imported before the timing, to be wrapped (about 3 ms).

    python benchmarks/compile_time.py
"""

from __future__ import annotations

import compileall
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
N = 4096
TILE = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}
COMPILER_MODULES = ("tile_lang.compiler", "tile_lang_cupy.codegen")
PHASES = (  # (wrapped function, what it covers)
    ("_try_load", "backend load (registry, import tile_lang_cupy)"),
    ("compute_capability", "device's compute capability"),
    ("_shared_limit", "device's shared-memory limit (getDeviceProperties)"),
    ("toolchain", "NVRTC setup (import, version, include path)"),
    ("generated", "CUDA generation (compiler imports, front end, passes, codegen)"),
    ("compile_cubin", "NVRTC compile to cubin (C++ front end, NVVM, ptxas)"),
    ("module_load", "module load (cuModuleLoad, cuModuleGetFunction)"),
)


def _timed(owner: Any, name: str, into: dict[str, float], keep: list[Any] | None = None) -> None:
    """Replace ``owner.name`` by a wrapper adding each call's seconds to ``into[name]`` (and
    appending its results to ``keep``)."""
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            result = inner(*args, **kwargs)
        finally:
            into[name] = into.get(name, 0.0) + time.perf_counter() - start
        if keep is not None:
            keep.append(result)
        return result

    setattr(owner, name, wrapper)


def child() -> None:
    """In a fresh process: the phases of the f16 then the bf16 matmul's first launch, as JSON."""
    import torch

    import tile_lang as tl
    from benchmarks import dot_kernels as D
    from tile_lang import registry
    from tile_lang_cupy import artifacts, launch, nvrtc

    phases: dict[str, float] = {}
    sources: list[artifacts.Generated] = []
    for owner, name in ((registry, "_try_load"), (launch, "compute_capability"), (launch, "_shared_limit"),
                        (nvrtc, "toolchain"), (nvrtc, "compile_cubin"), (launch, "_function")):
        _timed(owner, name, phases)
    _timed(artifacts, "generated", phases, sources)
    rows: dict[str, dict[str, float]] = {}
    opts = tl.Options(num_warps=8, num_stages=3)
    grid = ((N // 128) * (N // 256),)
    with tl.backend("cupy"):
        for dtype in (torch.float16, torch.bfloat16):
            a = torch.randn(N, N, device="cuda").to(dtype)
            b = torch.randn(N, N, device="cuda").to(dtype)
            c = torch.full((N, N), float("nan"), device="cuda", dtype=dtype)
            torch.cuda.synchronize()
            phases.clear()
            start = time.perf_counter()
            D.matmul[grid, opts](a, b, c, N, N, N, N, N, 1, N, **TILE)
            torch.cuda.synchronize()
            total = time.perf_counter() - start
            ref = a.float() @ b.float()
            err = ((c.float() - ref).norm() / ref.norm()).item()
            assert err < 2e-2, f"matmul {dtype}: relative error {err:.2e}"
            module_load = phases.pop("_function", 0.0) - phases.get("compile_cubin", 0.0)
            rows[str(dtype).removeprefix("torch.")] = {**phases, "module_load": module_load, "total": total}
    print(json.dumps({"rows": rows, "ptx_only": _ptx_only(sources[-1].source, nvrtc.options("90a")),
                      "dont_write_bytecode": sys.flags.dont_write_bytecode}))


def _ptx_only(source: str, options: tuple[str, ...]) -> float:
    """Seconds NVRTC takes on ``source`` stopping at PTX (C++ front end and NVVM, no ptxas), warm:
    the rest of a cubin compile is ptxas."""
    from cupy.cuda import nvrtc

    ptx_options = [o.replace("-arch=sm_", "-arch=compute_") for o in options]
    prog = nvrtc.createProgram(source, "k.cu", (), ())
    try:
        start = time.perf_counter()
        nvrtc.compileProgram(prog, ptx_options)
        return time.perf_counter() - start
    finally:
        nvrtc.destroyProgram(prog)


def _import_ms(stderr: str) -> float:
    """Milliseconds ``-X importtime`` gives the compiler's top modules (imported at the first compile)."""
    total = 0
    for line in stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] in COMPILER_MODULES:
            total += int(parts[1])
    return total / 1e3


def run_child(label: str) -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TILE_LANG_CACHE_DIR=cache, TILE_LANG_BACKEND="cupy",
                   PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "backends"), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-X", "importtime", __file__, "--child"], env=env, cwd=ROOT,
                              capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    imports = _import_ms(done.stderr)
    print(f"\n{label} (dont_write_bytecode={result['dont_write_bytecode']}):")
    print("| phase | f16, first compile of the process (ms) | bf16, next compile (ms) |\n|---|---:|---:|")
    rows = result["rows"]
    for name, what in PHASES:
        print(f"| {what} | {1e3 * rows['float16'].get(name, 0.0):.0f} | {1e3 * rows['bfloat16'].get(name, 0.0):.0f} |")
        if name == "generated":
            print(f"|   of which the compiler's imports | {imports:.0f} | 0 |")
    for dtype in rows:
        rows[dtype]["rest"] = rows[dtype]["total"] - sum(rows[dtype].get(n, 0.0) for n, _ in PHASES)
    print(f"| the rest (launch checks, cache lookups and writes, the launch) | {1e3 * rows['float16']['rest']:.0f} "
          f"| {1e3 * rows['bfloat16']['rest']:.0f} |")
    print(f"| **first launch, end to end** | **{1e3 * rows['float16']['total']:.0f}** "
          f"| **{1e3 * rows['bfloat16']['total']:.0f}** |")
    print(f"NVRTC to PTX only (C++ front end + NVVM), bf16 source, warm: {1e3 * result['ptx_only']:.0f} ms; "
          "the rest of its cubin compile is ptxas")


def main() -> None:
    run_child("as found")
    for folder in (ROOT / "tile_lang", ROOT / "backends"):
        compileall.compile_dir(str(folder), quiet=1)
    run_child("after compileall (bytecode present, as in an installed package)")


if __name__ == "__main__":
    child() if "--child" in sys.argv else main()
