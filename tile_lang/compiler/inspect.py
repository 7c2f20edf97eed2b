"""``kernel.inspect(...)``, ``kernel.cuda_source(...)`` and ``tile-lang inspect``: the compiler's
output for given constexprs, without a GPU (pointers assumed 16-byte aligned; int parameters
named as ``divisible`` assumed multiples of 16, as a launch with such values specialises them)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tile_lang import registry
from tile_lang.compiler.frontend import build
from tile_lang.compiler.ir import Function
from tile_lang.compiler.passes import run_pipeline
from tile_lang.compiler.printer import print_function
from tile_lang.compiler.spec import static_spec
from tile_lang.dtypes import DType
from tile_lang.errors import KernelError

CUDA_BACKEND = "cupy"  # the registered backend whose generated source ``cuda_source`` shows


def ir_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, optimized: bool = True,
            num_stages: int = 3, arch: int = 80, pointees: Mapping[str, DType] | None = None,
            divisible: Collection[str] = ()) -> str:
    fn = _build(kernel, constexprs, num_warps, num_stages, arch, pointees, divisible)
    return print_function(run_pipeline(fn) if optimized else fn)


def cuda_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, num_stages: int = 3,
              arch: int = 80, pointees: Mapping[str, DType] | None = None, divisible: Collection[str] = ()) -> str:
    cuda = registry.source_generator(CUDA_BACKEND)
    return cuda.generate_source(run_pipeline(_build(kernel, constexprs, num_warps, num_stages, arch, pointees,
                                                    divisible)))


def _build(kernel: Any, constexprs: Mapping[str, Any], num_warps: int, num_stages: int, arch: int,
           pointees: Mapping[str, DType] | None, divisible: Collection[str]) -> Function:
    """The kernel's IR; a KernelError if the kernel's Python source cannot be read (the compiler
    reads it; a helper without source is reported by the front end at the line calling it)."""
    try:
        return build(kernel, static_spec(kernel, constexprs, num_warps, num_stages=num_stages, arch=arch,
                                         pointees=pointees, divisible=divisible))
    except OSError as exc:  # what inspect.getsourcelines raises for a function without a source file
        raise KernelError(f"its source is unavailable ({exc}): the compiler reads a kernel's Python source, which "
                          "a kernel defined in an interactive session or by exec does not have; define it in a .py "
                          "module", kernel.filename, kernel.lineno, kernel=kernel.name) from None
