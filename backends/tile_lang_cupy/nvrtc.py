"""Compiling generated CUDA C++ to a cubin with NVRTC, through CuPy."""

from __future__ import annotations

import functools
import importlib
import os
from pathlib import Path

from tile_lang.errors import BackendError

from tile_lang_cupy.artifacts import Toolchain
from tile_lang_cupy.headers import INCLUDE_DIR


def _include_dirs() -> list[str]:
    """Our runtime header, plus a CUDA toolkit include folder when one exists (for cuda_fp16.h
    on NVRTC builds without built-in headers)."""
    import cupy

    dirs = [str(INCLUDE_DIR)]
    cuda_path = cupy.cuda.get_cuda_path()
    candidates = [os.path.join(cuda_path, "include")] if cuda_path else []
    try:
        nvidia = importlib.import_module("nvidia")  # pip's CUDA wheels, when present

        for base in getattr(nvidia, "__path__", []):
            candidates += [str(p) for p in Path(base).glob("*/include")]
    except ImportError:
        pass
    dirs += [c for c in candidates if os.path.exists(os.path.join(c, "cuda_fp16.h"))][:1]
    return dirs


# -minimal leaves out the CUDA runtime API, texture and device-launch declarations NVRTC
# otherwise includes (none of which generated code uses): about 5 ms less C++ front end per
# compile, the same SASS (docs/performance.md, First launch).
FLAGS = ("-std=c++17", "-minimal")


def flags(arch: str) -> tuple[str, ...]:
    """NVRTC's options for ``sm_<arch>`` but the include path (tests compile with these too)."""
    return (*FLAGS, f"-arch=sm_{arch}")


@functools.lru_cache(maxsize=None)
def options(arch: str) -> tuple[str, ...]:
    return (*flags(arch), *(f"-I{d}" for d in _include_dirs()))


@functools.lru_cache(maxsize=None)
def toolchain(arch: str) -> Toolchain:
    """NVRTC for ``sm_<arch>``: its version and options key the cubin cache."""
    from cupy.cuda import nvrtc

    version = ".".join(str(v) for v in nvrtc.getVersion())
    return Toolchain(arch, version, options(arch), functools.partial(compile_cubin, arch=arch))


def compile_cubin(source: str, name: str, arch: str) -> bytes:
    """The cubin of ``source`` for ``sm_<arch>``; raises with NVRTC's log on errors."""
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(source, f"{name}.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(prog, list(options(arch)))
        except Exception as exc:
            log = nvrtc.getProgramLog(prog)
            raise BackendError(f"NVRTC failed to compile kernel {name}:\n{log}") from exc
        return bytes(nvrtc.getCUBIN(prog))
    finally:
        nvrtc.destroyProgram(prog)
