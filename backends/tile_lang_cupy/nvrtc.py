"""Compiling generated CUDA C++ to a cubin with NVRTC, through CuPy."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from tile_lang_cupy.codegen import INCLUDE_DIR


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


def options(arch: str) -> tuple[str, ...]:
    return ("-std=c++17", f"-arch=sm_{arch}", *(f"-I{d}" for d in _include_dirs()))


def compile_cubin(source: str, name: str, arch: str) -> bytes:
    """The cubin of ``source`` for ``sm_<arch>``; raises with NVRTC's log on errors."""
    from cupy_backends.cuda.libs import nvrtc  # type: ignore[import-not-found]

    prog = nvrtc.createProgram(source, f"{name}.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(prog, list(options(arch)))
        except Exception as exc:
            log = nvrtc.getProgramLog(prog)
            raise RuntimeError(f"NVRTC failed to compile kernel {name}:\n{log}") from exc
        cubin: Any = nvrtc.getCUBIN(prog)
        return bytes(cubin)
    finally:
        nvrtc.destroyProgram(prog)
