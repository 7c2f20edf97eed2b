"""Loop-invariant conversions leave the loop: a block defined before a ``for`` and converted to
shared memory inside it (``q`` of attention, read by a dot every iteration) is converted once,
before the loop, instead of once per iteration with two barriers each time."""

from __future__ import annotations

from dataclasses import replace

from tile_lang.compiler.ir import Function, Node, Op, Region
from tile_lang.compiler.passes.rebuild import rebuild


def hoist_conversions(fn: Function) -> Function:
    def rule(node: Node, body: list[Node]) -> Node:
        if node.op is not Op.FOR:
            return node
        region = node.regions[0]
        inside = set(region.params) | set(region.body)
        moved = [n for n in region.body if n.op is Op.CONVERT and n.args[0] not in inside]
        if not moved:
            return node
        body.extend(moved)  # before the loop, in the enclosing region
        kept = tuple(n for n in region.body if n not in moved)
        return replace(node, regions=(Region(region.params, kept, region.results),))

    return rebuild(fn, rule)
