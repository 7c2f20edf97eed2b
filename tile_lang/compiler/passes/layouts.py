"""Layout assignment: where each block lives, and conversions through shared memory.

Registers (:class:`Blocked`) hold loaded and computed blocks; values that are cheap functions
of their coordinates (aranges, splats, index arithmetic) are :class:`Computed` wherever they
are used; an operand read at other threads' positions (broadcast of a loaded value,
transpose, dot operands, axis reductions, scans) goes through a ``CONVERT`` to :class:`Shared`.
A tensor-core layout later becomes one more member of ``Layout`` chosen here for dot results.
"""

from __future__ import annotations

from dataclasses import replace

from tile_lang.compiler.ir import Blocked, Computed, Function, Node, Op, Shared, UnaryAttr, UnaryFn
from tile_lang.compiler.rewrite import rewrite

MAX_VECTOR = 4
_CHEAP_UNARY = frozenset({UnaryFn.NEG, UnaryFn.INVERT, UnaryFn.NOT, UnaryFn.ABS})
_COMPUTABLE = frozenset({Op.ARANGE, Op.SPLAT, Op.BINARY, Op.CAST, Op.WHERE, Op.UNARY, Op.BROADCAST, Op.RESHAPE,
                         Op.PERMUTE})


def blocked(numel: int, threads: int) -> Blocked:
    """The register layout of a block of ``numel`` elements over ``threads`` threads."""
    used = min(threads, numel)
    vector = min(MAX_VECTOR, numel // used)
    return Blocked(used, vector, numel // (used * vector))


def random_access(node: Node) -> bool:
    """Whether any thread can read any element of ``node`` without a conversion."""
    return node.ty.is_scalar or node.ty.numel == 1 or isinstance(node.layout, (Shared, Computed))


def _computable(node: Node) -> bool:
    if node.op not in _COMPUTABLE:
        return False
    if node.op is Op.UNARY and isinstance(node.attr, UnaryAttr) and node.attr.fn not in _CHEAP_UNARY:
        return False
    if node.op is Op.RESHAPE and not random_access(node.args[0]):
        return False  # a reshape of registers keeps the same register layout
    return all(random_access(a) for a in node.args)


def _reads_anywhere(node: Node) -> tuple[int, ...]:
    """Operands this node reads at arbitrary coordinates."""
    if node.op in (Op.BROADCAST, Op.PERMUTE):
        return (0,)
    if node.op is Op.DOT:
        return (0, 1)
    if node.op in (Op.SCAN,):
        return (0,)
    if node.op is Op.REDUCE and node.type is not None and node.ty.numel > 1:
        return (0,)
    return ()


def assign_layouts(fn: Function) -> Function:
    threads = fn.threads

    def rule(node: Node, body: list[Node]) -> Node:
        if node.type is None or node.ty.is_scalar:
            return node
        args = list(node.args)
        for i in _reads_anywhere(node):
            if not random_access(args[i]):
                conv = Node(Op.CONVERT, args[i].ty, (args[i],), loc=args[i].loc, layout=Shared())
                body.append(conv)
                args[i] = conv
        node = replace(node, args=tuple(args)) if tuple(args) != node.args else node
        if node.op is Op.CONVERT:
            return replace(node, layout=Shared())
        layout = Computed() if _computable(node) else blocked(node.ty.numel, threads)
        return replace(node, layout=layout)

    return rewrite(fn, rule)

