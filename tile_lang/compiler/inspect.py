"""``kernel.inspect(...)``, ``kernel.cuda_source(...)``, ``kernel.compile(...)`` and ``tile-lang inspect``:
the compiler's output for given constexprs, without a GPU (pointers assumed 16-byte aligned; int
parameters named as ``divisible`` assumed multiples of 16 and those named as ``ones`` equal to 1, as a launch
with such values specialises them).

``kernel.compile`` returns a :class:`~tile_lang.compiled.Compiled` (the toolkit's outputs made from it on
first use). :mod:`tile_lang.kernel` reaches this module by name, as a :class:`~tile_lang.compiled.Compiler`.
A backend that generates source (``kernel.cuda_source``) is a :class:`SourceGenerator`."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Protocol, runtime_checkable

import tile_lang.registry as registry
from tile_lang.compiled import Compiled
from tile_lang.compiler.frontend import build
from tile_lang.compiler.ir import Function
from tile_lang.compiler.passes import run_passes
from tile_lang.compiler.printer import print_function
from tile_lang.compiler.spec import static_spec
from tile_lang.dtypes import DType
from tile_lang.errors import BackendError, KernelError, SourceUnavailable
from tile_lang.registry import GeneratedSource

CUDA_BACKEND = "cupy"  # the registered backend whose generated source ``cuda_source`` shows


@runtime_checkable
class SourceGenerator(Protocol):
    """An optional backend capability: the source code it generates for a kernel's optimized IR
    (``kernel.cuda_source``, ``kernel.compile``). It needs only the backend's code, not its device or libraries."""

    def generate_source(self, fn: Function) -> GeneratedSource:
        """The complete source of ``fn``, as the backend would compile it."""


def source_generator(name: str) -> SourceGenerator:
    """Backend ``name``'s source generator, usable even where the backend cannot run (no GPU, no
    CuPy); a BackendError if it cannot be loaded or generates no source."""
    backend = registry.load(name)
    if not isinstance(backend, SourceGenerator):
        raise BackendError(f"tile_lang backend {name!r} does not generate source code")
    return backend


def ir_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, num_stages: int = 3, arch: int = 80,
            pointees: Mapping[str, DType] | None = None, divisible: Collection[str] = (), ones: Collection[str] = (),
            optimized: bool = True) -> str:
    fn = _build(kernel, constexprs, num_warps, num_stages, arch, pointees, divisible, ones)
    return print_function(run_passes(fn) if optimized else fn)


def cuda_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, num_stages: int = 3,
              arch: int = 80, pointees: Mapping[str, DType] | None = None, divisible: Collection[str] = (),
              ones: Collection[str] = ()) -> str:
    return compile_kernel(kernel, constexprs, num_warps, num_stages, arch, pointees, divisible, ones).asm["cuda"]


def compile_kernel(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, num_stages: int = 3,
                   arch: int = 80, pointees: Mapping[str, DType] | None = None,
                   divisible: Collection[str] = (), ones: Collection[str] = ()) -> Compiled:
    """The optimized IR and generated CUDA of one specialisation; the toolkit's outputs come later, on use."""
    fn = run_passes(_build(kernel, constexprs, num_warps, num_stages, arch, pointees, divisible, ones))
    ir = print_function(fn)
    return Compiled(fn.name, arch, num_warps, ir, source_generator(CUDA_BACKEND).generate_source(fn))


def _build(kernel: Any, constexprs: Mapping[str, Any], num_warps: int, num_stages: int, arch: int,
           pointees: Mapping[str, DType] | None, divisible: Collection[str], ones: Collection[str]) -> Function:
    """The kernel's IR; a KernelError if the kernel's Python source cannot be read (the compiler
    reads it; a helper without source is reported by the front end at the line calling it)."""
    try:
        return build(kernel, static_spec(kernel, constexprs, num_warps, num_stages=num_stages, arch=arch,
                                         pointees=pointees, divisible=divisible, ones=ones))
    except SourceUnavailable as exc:
        raise KernelError(f"its source is unavailable ({exc})", kernel.filename, kernel.lineno,
                          kernel=kernel.name) from None
