"""A load read only through a permutation loads permuted addresses instead.

``tl.trans(tl.load(p, mask, other))`` and ``tl.load(tl.trans(p), tl.trans(mask), tl.trans(other))``
read the same elements into the same places, where no write to memory may run between the load and the
permutation: the load moves down to the permutation (past a store to its addresses it would read
the stored values). The second form is what the layouts and pipelining
passes recognise: ``B`` stored as [N, K] (a linear layer's weight) is then copied as it lies in
memory, into the K-major panels wgmma reads, instead of loaded into registers and transposed
through shared memory every iteration.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from tile_lang.compiler.ir import (
    Function, MemAttr, Node, Op, PermuteAttr, load_operands_at, unwritten_between, walk, write_epochs,
)
from tile_lang.compiler.passes.rebuild import rewrite


def permute_loads(fn: Function) -> Function:
    uses = Counter(arg for node in walk(fn.body) for arg in node.args)
    uses.update(result for node in walk(fn.body) for region in node.regions for result in region.results)
    uses.update(fn.body.results)
    epochs = write_epochs(fn)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        load = node.args[0] if node.op is Op.PERMUTE and node.args else None
        first = original.args[0] if load is not None else None  # the analyses know the original nodes
        if (load is None or first is None or load.op is not Op.LOAD or uses[first] != 1
                or not isinstance(load.attr, MemAttr) or load.attr.box or load.attr.volatile
                or not isinstance(node.attr, PermuteAttr) or not unwritten_between(epochs, first, original)):
            return node
        dims = node.attr.dims

        def permuted(operand: Node) -> Node:
            out = Node(Op.PERMUTE, operand.ty.with_shape(node.ty.shape), (operand,), PermuteAttr(dims), loc=node.loc)
            body.append(out)
            return out

        return replace(load, type=node.type, args=load_operands_at(load, node.ty.shape, permuted, body), loc=node.loc)

    return rewrite(fn, rule)
