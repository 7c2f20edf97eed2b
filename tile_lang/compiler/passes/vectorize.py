"""Vector width of each load and store: as wide as layout, contiguity, alignment and mask allow
(at most 16 bytes), e.g. 128-bit accesses for ``pid * BLOCK + tl.arange(0, BLOCK)`` offsets."""

from __future__ import annotations

import math
from dataclasses import replace

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, Function, MemAttr, Node, Op, held_in, stored_walk
from tile_lang.compiler.passes.axis_info import AxisInfo, analyze
from tile_lang.compiler.passes.rebuild import rewrite


def vectorize(fn: Function) -> Function:
    """Widths from the original nodes' axis info: an access whose address depends on a rewritten
    one (a block table's entry, a gathered index) is itself a new node."""
    info = analyze(fn)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        if node.op is Op.ATOMIC and isinstance(node.attr, AtomicAttr) and _vector_atomic(node, fn):
            return replace(node, attr=replace(node.attr, vector=_width(original, info, fn)))
        if node.op not in (Op.LOAD, Op.STORE) or not isinstance(node.attr, MemAttr) or node.attr.volatile:
            return node  # a volatile load reads each element through its own volatile access
        return replace(node, attr=replace(node.attr, vector=_width(original, info, fn)))

    return rewrite(fn, rule)


def _vector_atomic(node: Node, fn: Function) -> bool:
    """Whether ``node`` may update several elements with one ``atom``: an add of f32, f16 or bf16
    blocks on sm_90 (Hopper's ``atom.add.v2/v4/v8``; Triton uses them too)."""
    assert isinstance(node.attr, AtomicAttr)
    return (fn.arch >= 90 and node.attr.fn is AtomicFn.ADD and not node.args[0].ty.is_scalar
            and node.ty.dtype in (dtypes.F32, dtypes.F16, dtypes.BF16))


def _width(node: Node, info: dict[Node, AxisInfo], fn: Function) -> int:
    return widest(node, info, held_in(stored_walk(node) if node.op is Op.STORE else node, fn).vector)


def widest(node: Node, info: dict[Node, AxisInfo], runs: int) -> int:
    """The widest vector an access of ``node`` may use when each thread holds runs of ``runs``
    elements: what the pointers' contiguity and alignment and the mask's constancy allow."""
    ptr = node.args[0]
    element = ptr.ty.dtype.element
    if ptr.ty.is_scalar or element is None:
        return 1
    facts = info.get(ptr)
    if facts is None:
        return 1
    width = math.gcd(runs, facts.contiguity[-1], max(1, 16 // element.itemsize),
                     max(1, facts.divisibility[-1] // element.itemsize))
    mask = _mask(node)
    if mask is not None:  # a mask the analysis did not see is taken as varying element by element
        width = math.gcd(width, info[mask].constancy[-1] if mask in info else 1)
    return width


def _mask(node: Node) -> Node | None:
    assert isinstance(node.attr, (MemAttr, AtomicAttr))
    if not node.attr.has_mask:
        return None
    return node.args[1] if node.op is Op.LOAD else node.args[2]  # a store's or an add's third operand
