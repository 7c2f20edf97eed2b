"""A dot whose result is added to a block folds into that block: ``x + tl.dot(a, b)`` becomes
``tl.dot(a, b, x)``, as Triton folds it. The tensor cores then accumulate onto ``x`` in its
registers, instead of into zeros that another pass over the fragments adds to ``x``, with a
second set of accumulator registers live meanwhile (attention's
``acc = acc * alpha[:, None] + tl.dot(p, v)``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import BinaryAttr, BinaryFn, Function, Node, Op, Region, is_zero, use_counts


def fold_accumulate(fn: Function) -> Function:
    return replace(fn, body=_region(fn.body, use_counts(fn), {}))


def _region(region: Region, uses: Counter[Node], mapping: dict[Node, Node]) -> Region:
    body: list[Node] = []
    for node in region.body:
        args = tuple(mapping.get(a, a) for a in node.args)
        regions = tuple(_region(r, uses, mapping) for r in node.regions)
        new = replace(node, args=args, regions=regions) if (args != node.args or regions != node.regions) else node
        dot = _folded_dot(node, uses)
        if dot is not None and mapping[dot] in body:  # never moves a dot into a loop
            product = mapping[dot]
            body.remove(product)
            new = replace(product, args=(*product.args[:2], args[1 - node.args.index(dot)]), loc=node.loc)
        body.append(new)
        mapping[node] = new
    return Region(region.params, tuple(body), tuple(mapping.get(r, r) for r in region.results))


def _folded_dot(node: Node, uses: Counter[Node]) -> Node | None:
    """The operand of an f32 or i32 add (i8 dots; integer sums are exact in any order) that is a
    dot read only there, with no accumulator of its own."""
    if node.op is not Op.BINARY or not isinstance(node.attr, BinaryAttr) or node.attr.fn is not BinaryFn.ADD:
        return None
    for i, dot in enumerate(node.args):
        if (dot.op is Op.DOT and uses[dot] == 1 and is_zero(dot.args[2]) and node.args[1 - i].type == dot.type
                and dot.ty.dtype in (dtypes.F32, dtypes.I32)):
            return dot
    return None
