"""The CUDA generated for every example kernel (as the examples launch them) and every
compiler test kernel compiles with nvcc to machine code for sm_90 and sm_80 (so ptxas checks the
inline PTX too), and with NVRTC, as the cupy backend compiles it, where libnvrtc is installed
(the nvidia-cuda-nvrtc wheel). Needs either compiler, not CuPy or a GPU.

Marked ``slow`` (about 40 s of nvcc): left out of a plain ``pytest``, run by ``pytest -m slow``
(.ci/run runs both)."""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from examples import EXAMPLES
from tile_lang.autotune import Autotuner
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.spec import Spec
from tile_lang_cupy.codegen import generate

from tests.compiler.conftest import ARCHS, NVCC, NVRTC, launch_spec, nvcc_cubin, nvrtc_compile, record_example
from tests.compiler.kernels import KERNELS

pytestmark = pytest.mark.slow


def _check(kernel: Any, spec: Spec, tmp_path: Path) -> None:
    source = generate(compile_ir(kernel, spec, verify_each=True)).source
    if NVRTC is not None:
        ok, log = nvrtc_compile(source, kernel.name, ARCHS[0])
        assert ok, f"NVRTC on {kernel.name}:\n{log}\n{source}"
    for arch in ARCHS if NVCC is not None else ():
        result = nvcc_cubin(source, arch, tmp_path)
        assert result.returncode == 0, f"{kernel.name} for {arch}:\n{result.stderr}\n{source}"


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_compiler_kernels_compile(name: str, tmp_path: Path, need_cuda_compiler: None) -> None:
    kernel, constexprs = KERNELS[name]
    _check(kernel, static_spec(kernel, constexprs), tmp_path)


def _tuned_names(example: str) -> dict[Any, frozenset[str]]:
    """The example's autotuned kernels, each with the constexprs its configs set."""
    module = importlib.import_module(f"examples.{example}")
    return {v.kernel: frozenset(v.supplies) for v in vars(module).values() if isinstance(v, Autotuner)}


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_kernels_compile(example: str, tmp_path: Path, need_cuda_compiler: None) -> None:
    """Every specialisation an example launches; of an autotuned kernel (which launches every
    config on the reference), one per combination of the constexprs its configs do not set:
    the last config recorded, the smallest tiles by convention (nvcc takes minutes per big tile)."""
    tuned = _tuned_names(example)
    specs: dict[tuple[Any, str], tuple[Any, Spec]] = {}
    for launch in record_example(example):
        spec = launch_spec(launch)
        if launch.kernel in tuned:
            rest = tuple(sorted((k, v) for k, v in launch.constexprs.items() if k not in tuned[launch.kernel]))
            specs[(launch.kernel, repr(rest))] = (launch.kernel, spec)
        else:
            specs[(launch.kernel, spec.key())] = (launch.kernel, spec)
    assert specs, f"example {example} launched nothing"
    for kernel, spec in specs.values():
        _check(kernel, spec, tmp_path)


def _assert_ptx_matches_inspect(fn: Any, target: str, tmp_path: Path) -> None:
    """The PTX of ``fn`` for ``target`` holds ``mma.sync`` or ``wgmma.mma_async`` exactly where
    ``inspect`` says a dot runs on tensor cores with that instruction."""
    from tile_lang.compiler.ir import Op, walk
    from tile_lang.compiler.printer import dot_unit
    from tile_lang_cupy.headers import INCLUDE_DIR

    assert NVCC is not None
    units = {dot_unit(n) for n in walk(fn.body) if n.op is Op.DOT}
    src = tmp_path / "k.cu"
    src.write_text(generate(fn).source)
    done = subprocess.run([NVCC, "--ptx", f"-gencode=arch={target},code={target}", "-std=c++17", f"-I{INCLUDE_DIR}",
                           str(src), "-o", str(tmp_path / "k.ptx")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    key = f"{fn.name} {target} {sorted(units)}"
    assert ("wgmma.mma_async" in ptx) == any("wgmma" in u for u in units), key
    assert ("mma.sync" in ptx) == any("mma.sync" in u for u in units), key


_TARGETS = ((80, "compute_80"), (90, "compute_90a"))


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e in ("matmul", "matmul_autotune", "linear")])
def test_example_dots_use_the_instructions_inspect_names(example: str, tmp_path: Path) -> None:
    """Every dot an example launches, compiled for sm_80 and for sm_90a: the PTX holds
    ``mma.sync`` or ``wgmma.mma_async`` exactly where ``inspect`` says the dot runs on tensor
    cores with that instruction (and neither for a dot it says stays on CUDA cores)."""
    from dataclasses import replace

    from tile_lang.compiler.ir import Op, walk
    from tile_lang.compiler.printer import dot_unit

    if NVCC is None:
        pytest.skip("nvcc is not installed: no PTX to check")

    seen: set[str] = set()
    for launch in record_example(example):
        for arch, target in _TARGETS:
            fn = compile_ir(launch.kernel, replace(launch_spec(launch), arch=arch))
            units = {dot_unit(n) for n in walk(fn.body) if n.op is Op.DOT}
            key = f"{launch.kernel.name} {arch} {sorted(units)}"
            if not units or key in seen:
                continue
            seen.add(key)
            _assert_ptx_matches_inspect(fn, target, tmp_path)
    assert seen, f"example {example} launched no dot"


@pytest.mark.parametrize("one", ["stride_bn", "stride_bk"])
def test_int8_dots_use_the_instructions_inspect_names(one: str, tmp_path: Path) -> None:
    """The benchmark's i8 matmul (B row-major or K-major, copied asynchronously) on tensor cores,
    and with 8-row blocks on CUDA cores (M below the m16n8k32 instruction's), for sm_80 and
    sm_90a: ``mma.sync`` in the PTX exactly where ``inspect`` says so."""
    from dataclasses import replace

    from benchmarks.dot_kernels import matmul_i8
    from tile_lang import dtypes
    from tile_lang.compiler.ir import Op, walk
    from tile_lang.compiler.printer import dot_unit

    from tests.compiler.test_tensor_cores import _aligned_spec

    if NVCC is None:
        pytest.skip("nvcc is not installed: no PTX to check")
    for bm, unit in ((64, "tensor cores: mma.sync"), (8, "CUDA cores")):
        spec = _aligned_spec(matmul_i8, 4096, 4, 3, dtypes.I8, (one,), BLOCK_M=bm, BLOCK_N=64, BLOCK_K=64, GROUP_M=8)
        for arch, target in _TARGETS:
            fn = compile_ir(matmul_i8, replace(spec, arch=arch))
            (dot,) = [n for n in walk(fn.body) if n.op is Op.DOT]
            assert dot_unit(dot).startswith(unit), dot_unit(dot)
            _assert_ptx_matches_inspect(fn, target, tmp_path)
