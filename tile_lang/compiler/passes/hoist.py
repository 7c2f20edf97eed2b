"""Loop-invariant conversions leave the loop: a block defined before a ``for`` and converted to
shared memory inside it (``q`` of attention, read by a dot every iteration) is converted once,
before the loop, instead of once per iteration with two barriers each time. So is a view of such
a block made inside the loop (``lse[:, None]`` of a row loaded before it, attention's dq), with
the view."""

from __future__ import annotations

from dataclasses import replace

from tile_lang.compiler.ir import Function, Node, Op, Region
from tile_lang.compiler.passes.rebuild import rebuild

_VIEWS = frozenset({Op.RESHAPE, Op.PERMUTE})


def hoist_conversions(fn: Function) -> Function:
    def rule(node: Node, body: list[Node]) -> Node:
        if node.op is not Op.FOR:
            return node
        region = node.regions[0]
        inside = set(region.params) | set(region.body)
        invariant: set[Node] = set()
        for n in region.body:  # in program order: a view's operand is seen before it
            if (n.op in _VIEWS or n.op is Op.CONVERT) and all(a not in inside or a in invariant for a in n.args):
                invariant.add(n)
        moved = _needed([n for n in region.body if n.op is Op.CONVERT and n in invariant], invariant)
        if not moved:
            return node
        body.extend(n for n in region.body if n in moved)  # before the loop, in the enclosing region
        kept = tuple(n for n in region.body if n not in moved)
        return replace(node, regions=(Region(region.params, kept, region.results),))

    return rebuild(fn, rule)


def _needed(conversions: list[Node], invariant: set[Node]) -> set[Node]:
    """The conversions and the loop-invariant views they convert."""
    needed: set[Node] = set()
    stack = list(conversions)
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(a for a in n.args if a in invariant)
    return needed
