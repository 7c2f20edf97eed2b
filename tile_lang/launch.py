"""What a backend is handed: a checked :class:`Launch` of a kernel, with its :class:`Options`.

Part of the backend contract (with :mod:`tile_lang.registry`'s ``Backend`` and
:mod:`tile_lang.buffer`), below :mod:`tile_lang.kernel`, which makes launches: a launch sees its
kernel through :class:`LaunchedKernel`.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from tile_lang.errors import LaunchError
from tile_lang.signature import Param


MAX_WARPS = 32
"""The most warps a program may have: 32 warps of 32 threads is CUDA's limit of 1024 threads per block."""


@dataclass(frozen=True)
class Options:
    """Launch options, Triton's spelling: ``kernel[grid, tl.Options(num_warps=8)](...)``.

    The same names are accepted as extra keywords at run time (``kernel[grid](..., num_warps=8)``),
    which mypy rejects because they are not kernel parameters; this spelling type-checks.
    ``num_warps`` is a power of two from 1 to 32, ``num_stages`` at least 1, ``num_ctas`` (programs
    per thread-block cluster) 1, as Triton's default (a launch refuses more), ``launch_cooperative_grid``
    False (Triton's option for grids whose programs wait on each other; a launch refuses True), and ``stream`` where
    the CUDA backend launches: None (CuPy's current stream at each launch), a ``cupy.cuda.Stream``
    or ``ExternalStream``, a ``torch.cuda.Stream``, or a raw ``cudaStream_t`` handle as an int.
    Each is checked here, so a bad option fails where it is written.
    """

    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    launch_cooperative_grid: int = False  # a bool (or 0 / 1): int lets a launch's ``**dict[str, int]`` type-check
    stream: Any = None
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        warps = _count(self.num_warps)
        if warps is None or warps > MAX_WARPS or warps & (warps - 1):
            raise LaunchError(f"num_warps must be an int power of two from 1 to {MAX_WARPS} ({MAX_WARPS} warps are "
                              f"1024 threads, CUDA's most per block), got {_show(self.num_warps)}")
        stages = _count(self.num_stages)
        if stages is None:
            raise LaunchError(f"num_stages must be an int >= 1, got {_show(self.num_stages)}")
        ctas = _count(self.num_ctas)
        if ctas is None:
            raise LaunchError(f"num_ctas must be an int >= 1, got {_show(self.num_ctas)}")
        cooperative = self.launch_cooperative_grid
        if not isinstance(cooperative, (bool, np.bool_, numbers.Integral)) or cooperative not in (0, 1):
            raise LaunchError(f"launch_cooperative_grid must be a bool, got {_show(cooperative)}")
        if not _is_stream(self.stream):
            raise LaunchError("stream must be None, a cupy.cuda.Stream or ExternalStream, a torch.cuda.Stream, or a "
                              f"cudaStream_t handle as an int >= 0, got {_show(self.stream)}")
        object.__setattr__(self, "num_warps", warps)
        object.__setattr__(self, "num_stages", stages)
        object.__setattr__(self, "num_ctas", ctas)
        object.__setattr__(self, "launch_cooperative_grid", bool(self.launch_cooperative_grid))
        # hashed on every launch (it is part of the fast path's key), so hashed once here
        object.__setattr__(self, "_hash", hash((warps, stages, ctas, self.launch_cooperative_grid, self.stream)))

    def __hash__(self) -> int:
        return self._hash


def _count(value: Any) -> int | None:
    """``value`` as an int >= 1, or None if it is not one (a bool is not)."""
    if type(value) is int:  # the usual case, without the slower checks below
        return value if value >= 1 else None
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and int(value) >= 1:
        return int(value)
    return None


def _is_stream(stream: Any) -> bool:
    if stream is None:
        return True
    if isinstance(stream, int) and not isinstance(stream, bool):
        return 0 <= stream < 1 << 64
    return isinstance(stream, _stream_classes())


def _stream_classes() -> tuple[type, ...]:
    """The stream classes of CuPy and torch, if they are loaded (an object of a class that
    is not loaded cannot be passed, so neither is imported here)."""
    found: list[type] = []
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        found += [cupy.cuda.Stream, cupy.cuda.ExternalStream]
    torch = sys.modules.get("torch")
    if torch is not None:
        found.append(torch.cuda.Stream)
    return tuple(found)


def _show(value: Any) -> str:
    """A value as an error message shows it: ``True (bool)``, ``'4' (str)``."""
    return f"{value!r} ({type(value).__name__})"


OPTION_NAMES = frozenset(f.name for f in fields(Options) if f.init)
DEFAULT_OPTIONS = Options()


class LaunchedKernel(Protocol):
    """What a backend reads of the kernel a launch runs (a :class:`~tile_lang.kernel.Kernel`)."""

    @property
    def fn(self) -> Callable[..., None]: ...
    @property
    def name(self) -> str: ...
    @property
    def filename(self) -> str: ...
    @property
    def lineno(self) -> int: ...
    @property
    def params(self) -> tuple[Param, ...]: ...
    @property
    def runtime_params(self) -> tuple[Param, ...]: ...
    @property
    def constexpr_params(self) -> tuple[Param, ...]: ...
    @property
    def descriptors(self) -> tuple[Param, ...]: ...
    @property
    def tuples(self) -> tuple[Param, ...]: ...
    def __hash__(self) -> int: ...  # caches of compiled specialisations are keyed by the kernel


@dataclass(frozen=True)
class Launch:
    """A checked launch as a backend receives it."""

    kernel: LaunchedKernel
    grid: tuple[int, int, int]
    args: tuple[Any, ...]  # one per runtime parameter: Buffer, int, float or bool
    constexprs: Mapping[str, Any] = field(default_factory=dict)
    options: Options = DEFAULT_OPTIONS
