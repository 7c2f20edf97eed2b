"""Stores from tensor-core fragments go through shared memory where that makes them wider.

A thread holds two adjacent columns of each accumulator row it owns, so a store straight from
the fragments writes 4 or 8 bytes at a time and a warp half-fills the 32-byte sectors it
touches (a matmul epilogue then moves each sector through L2 twice). Where the pointers allow
wider vectors (axis info), the value is staged in shared memory and stored from the default
blocked layout, 16 bytes a thread, as Triton converts an mma layout before a store. Only stores
at the kernel's top level or in a loop whose own body holds no ``dot`` (a persistent kernel's
epilogue, after its K loop): in a dot's loop the store could run while the loop's rings hold
shared memory.
"""

from __future__ import annotations

from dataclasses import replace

from tile_lang.compiler.ir import Function, MemAttr, Mma, Node, Op, Shared, held_in, walk
from tile_lang.compiler.passes.axis_info import AxisInfo, analyze
from tile_lang.compiler.passes.layouts import registers
from tile_lang.compiler.passes.rebuild import rewrite
from tile_lang.compiler.passes.vectorize import widest

ROW_PAD = 8
"""Elements a staged row is padded by: a warp writes 8 rows of 4 lanes x 2 columns at once, and
the padding shifts each row by those 8 elements' banks, so the 8 rows hit different banks."""


def stage_fragment_stores(fn: Function) -> Function:
    info = analyze(fn)
    outside = _outside_rings(fn)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        if original in outside and _widens(original, info, fn):
            value = node.args[1]
            staged = Node(Op.CONVERT, value.ty, (value,), loc=value.loc, layout=Shared(row_pad=ROW_PAD))
            body.append(staged)
            return replace(node, args=(node.args[0], staged, *node.args[2:]))
        return node

    return rewrite(fn, rule)


def _outside_rings(fn: Function) -> set[Node]:
    """The stores no pipelined ring can be live around: the top level's and those of loop bodies
    holding no ``dot`` (a nested loop's rings are released after it)."""
    regions = [fn.body, *(n.regions[0] for n in walk(fn.body)
                          if n.op is Op.FOR and not any(m.op is Op.DOT for m in n.regions[0].body))]
    return {n for region in regions for n in region.body if n.op is Op.STORE}


def _widens(node: Node, info: dict[Node, AxisInfo], fn: Function) -> bool:
    """Whether ``node`` stores a 2-D block of fragments through pointers that take wider vectors
    walked as they are held (the default blocked layout) than from the fragments' column pairs."""
    if node.op is not Op.STORE or not isinstance(node.attr, MemAttr) or node.args[0].ty.is_scalar:
        return False
    value = node.args[1]
    if not isinstance(value.layout, Mma) or len(value.ty.shape) != 2:
        return False
    if node.attr.has_mask and registers(node.args[2]) is not None:
        return False  # a mask on the fragments (``keep[:, None]`` of a row maximum) is not read where the pointers walk
    return widest(node, info, held_in(node.args[0], fn).vector) > widest(node, info, value.layout.vector)
