"""The tile_lang compiler: kernel source -> typed IR -> passes; backends emit code from the IR.

Imported lazily (``Kernel.inspect`` and the CUDA backend pull it in), so ``import tile_lang``
stays light.
"""

from __future__ import annotations

from typing import Any

from tile_lang.compiler.frontend import build
from tile_lang.compiler.ir import Function
from tile_lang.compiler.passes import run_passes
from tile_lang.compiler.printer import print_function
from tile_lang.compiler.spec import Spec, static_spec


def compile_ir(kernel: Any, spec: Spec, verify_each: bool = False) -> Function:
    """The optimised IR of ``kernel`` under ``spec``."""
    return run_passes(build(kernel, spec), verify_each)


__all__ = ["Function", "Spec", "build", "compile_ir", "print_function", "run_passes", "static_spec"]
