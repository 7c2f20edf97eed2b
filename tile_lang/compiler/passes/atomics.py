"""Atomics whose old values nothing reads become reductions without a return (``red`` on the
GPU): an ``atom`` returning values that are never read measured 0.64-0.72 of Triton on split-K's
epilogue, the same updates as ``red`` 0.99-1.01 (H200, f16 split 4 and 2).

``red`` takes no acquire, and an acquire orders only the program's later memory accesses: so an
atomic with ``sem="acq_rel"`` (Triton's default) or ``"acquire"`` is discarded only when nothing
after it in the program touches memory (split-K's final ``tl.atomic_add``), where its acquire
half orders nothing; relaxed and release atomics whenever their values are unused."""

from __future__ import annotations

from dataclasses import replace

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, Category, Function, Node, Op, Region, Sem, use_counts
from tile_lang.compiler.passes.rebuild import rewrite

# What ``red`` updates: its operations and, for each, the element types it takes
_REDUCIBLE = {
    AtomicFn.ADD: {dtypes.I32, dtypes.U32, dtypes.I64, dtypes.U64, dtypes.F32, dtypes.F64, dtypes.F16},
    **{fn: {dtypes.I32, dtypes.U32, dtypes.I64, dtypes.U64}
       for fn in (AtomicFn.AND, AtomicFn.OR, AtomicFn.XOR, AtomicFn.MAX, AtomicFn.MIN)},
}


def discard_atomic_results(fn: Function) -> Function:
    read = use_counts(fn)
    last = _last_accesses(fn.body, True)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        attr = node.attr
        if (node.op is Op.ATOMIC and isinstance(attr, AtomicAttr) and original not in read
                and node.ty.dtype in _REDUCIBLE.get(attr.fn, ())
                and (attr.sem in (Sem.RELAXED, Sem.RELEASE) or original in last)):
            return replace(node, attr=replace(attr, discard=True))
        return node

    return rewrite(fn, rule)


def _last_accesses(region: Region, clean_after: bool) -> set[Node]:
    """The atomics of ``region`` after which the program touches no memory (``clean_after``:
    nothing after the region does), looking into ``if`` branches; none inside a loop, whose next
    iteration runs again what precedes them."""
    found: set[Node] = set()
    clean = clean_after
    for node in reversed(region.body):
        if node.op is Op.ATOMIC and clean:
            found.add(node)
        elif node.op is Op.IF:
            for branch in node.regions:
                found |= _last_accesses(branch, clean)
        if _touches_memory(node):
            clean = False
    return found


def _touches_memory(node: Node) -> bool:
    """Whether ``node`` (or anything inside it) reads or writes memory, waits at a barrier or
    runs inline assembly."""
    if node.op.info.category is Category.MEMORY or node.op in (Op.BARRIER, Op.ASM, Op.PRINT):
        return True
    return any(_touches_memory(inner) for region in node.regions for inner in region.body)
