"""Shared helpers for compiler tests: recording the launches the examples make."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tile_lang import registry
from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, int_spec
from tile_lang.kernel import Launch

NVCC = shutil.which("nvcc")
ARCHS = ("sm_90", "sm_80")


def launch_spec(launch: Launch) -> Spec:
    """The specialisation a real launch of these arguments would compile (pointers aligned)."""
    args = []
    for value in launch.args:
        if isinstance(value, Buffer):
            args.append(ArgSpec(value.type.pointer_to(), True))
        elif isinstance(value, bool):
            args.append(ArgSpec(__import__("tile_lang").dtypes.BOOL))
        elif isinstance(value, int):
            args.append(int_spec(value))
        else:
            args.append(ArgSpec(__import__("tile_lang").dtypes.F32))
    return Spec(tuple(args), tuple(sorted(launch.constexprs.items())), launch.options.num_warps)


def record_example(name: str) -> list[Launch]:
    """Run example ``name`` on the NumPy reference, recording every launch it makes."""
    from examples import load

    backend = registry.get("numpy")
    seen: list[Launch] = []
    original = backend.launch

    def recording(launch: Launch) -> None:
        seen.append(launch)
        original(launch)

    setattr(backend, "launch", recording)
    try:
        with registry.backend("numpy"):
            load(name)(0)
    finally:
        delattr(backend, "launch")
    return seen


def nvcc_cubin(source: str, arch: str, workdir: Any) -> subprocess.CompletedProcess[str]:
    """Compile generated CUDA down to machine code for ``arch``: ptxas checks the PTX too (inline
    atomics, asm), as NVRTC does when a kernel is loaded."""
    from tile_lang_cupy.codegen import INCLUDE_DIR

    path = workdir / f"k_{arch}.cu"
    path.write_text(source)
    assert NVCC is not None
    return subprocess.run([NVCC, "-cubin", f"-arch={arch}", "-std=c++17", f"-I{INCLUDE_DIR}", str(path),
                           "-o", str(path.with_suffix(".cubin"))], capture_output=True, text=True, check=False)


@pytest.fixture
def need_nvcc() -> Iterator[None]:
    if NVCC is None:
        pytest.skip("nvcc is not on PATH: the generated CUDA cannot be compile-checked here")
    yield
