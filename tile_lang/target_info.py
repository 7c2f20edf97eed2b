"""Triton's ``tl.target_info``: what a kernel is being compiled for, as constexpr functions read it.

The compiler sets the target while it builds a kernel (CUDA at the spec's compute capability); the
NumPy reference has none, as Triton's interpreter has no active driver, so ``is_cuda()`` is False
there and a kernel takes its portable path. Each answer is part of the compiled kernel's cache key
through the capability.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from tile_lang.signature import constexpr_function


@dataclass(frozen=True)
class Target:
    """Triton's ``GPUTarget`` as kernels see it: the backend's name and its architecture."""

    backend: str
    arch: int


_CURRENT: ContextVar[Target | None] = ContextVar("tile_lang_target", default=None)


def current_target() -> Target | None:
    """The target of the kernel being compiled; None on the NumPy reference."""
    return _CURRENT.get()


@contextmanager
def compiling_for(arch: int) -> Iterator[None]:
    """The compiler's build of a kernel for CUDA compute capability ``arch`` (80, 90...)."""
    token = _CURRENT.set(Target("cuda", arch))
    try:
        yield
    finally:
        _CURRENT.reset(token)


@constexpr_function
def is_cuda() -> bool:
    target = current_target()
    return target is not None and target.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the kernel is compiled for CUDA compute capability (major, minor) or newer."""
    target = current_target()
    return target is not None and target.backend == "cuda" and target.arch >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    return False  # tile_lang has no ROCm backend


@constexpr_function
def is_hip_cdna3() -> bool:
    return False


@constexpr_function
def is_hip_cdna4() -> bool:
    return False


__all__ = ["current_target", "cuda_capability_geq", "is_cuda", "is_hip", "is_hip_cdna3", "is_hip_cdna4"]
