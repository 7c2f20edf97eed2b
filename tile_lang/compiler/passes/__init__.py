"""IR -> IR passes, run in the order of :data:`PASSES` (``pipeline`` is the software-pipelining pass)."""

from __future__ import annotations

from collections.abc import Callable

from tile_lang.compiler.ir import Function
from tile_lang.compiler.passes.access_order import order_accesses
from tile_lang.compiler.passes.accumulate import fold_accumulate
from tile_lang.compiler.passes.atomics import discard_atomic_results
from tile_lang.compiler.passes.carried_offsets import carry_offsets
from tile_lang.compiler.passes.dce import dce
from tile_lang.compiler.passes.hoist import hoist_conversions
from tile_lang.compiler.passes.layouts import assign_layouts
from tile_lang.compiler.passes.permute_loads import permute_loads
from tile_lang.compiler.passes.pipeline import pipeline
from tile_lang.compiler.passes.stage_stores import stage_fragment_stores
from tile_lang.compiler.passes.vectorize import vectorize
from tile_lang.errors import internal_errors

Pass = Callable[[Function], Function]

PASSES: tuple[Pass, ...] = (permute_loads, dce, carry_offsets, fold_accumulate, dce, assign_layouts, hoist_conversions,
                            stage_fragment_stores, vectorize, pipeline, dce, discard_atomic_results, order_accesses)


def run_passes(fn: Function, verify_each: bool = False) -> Function:
    """Apply every pass; with ``verify_each`` the verifier runs after each (tests do this)."""
    from tile_lang.compiler.verifier import verify, verify_effects_kept

    if verify_each:
        verify(fn)
    for p in PASSES:
        with internal_errors(f"pass {p.__name__}", fn.name, lambda: fn.source):
            out = p(fn)
        if verify_each:
            verify(out)
            verify_effects_kept(fn, out, p.__name__)
        fn = out
    return fn
