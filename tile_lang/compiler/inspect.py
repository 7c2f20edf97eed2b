"""``kernel.inspect(...)``, ``kernel.cuda_source(...)`` and ``tile-lang inspect``: the compiler's
output for given constexprs, without a GPU (pointers assumed 16-byte aligned)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tile_lang.compiler.frontend import build
from tile_lang.compiler.passes import run_pipeline
from tile_lang.compiler.printer import print_function
from tile_lang.compiler.spec import static_spec


def ir_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4, optimized: bool = True) -> str:
    fn = build(kernel, static_spec(kernel, constexprs, num_warps))
    return print_function(run_pipeline(fn) if optimized else fn)


def cuda_text(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4) -> str:
    from tile_lang_cupy.codegen import generate

    return generate(run_pipeline(build(kernel, static_spec(kernel, constexprs, num_warps)))).source
