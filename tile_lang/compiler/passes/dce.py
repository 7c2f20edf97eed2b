"""Dead-code elimination: drop pure nodes whose values nothing live reads."""

from __future__ import annotations

from tile_lang.compiler.ir import Function, Node, Op, walk
from tile_lang.compiler.passes.rebuild import rebuild


def live_nodes(fn: Function) -> set[Node]:
    """Nodes with effects, and everything they (transitively) read or yield."""
    live: set[Node] = set()
    work = [n for n in walk(fn.body) if not n.op.info.pure]
    while work:
        node = work.pop()
        if node in live:
            continue
        live.add(node)
        work.extend(node.args)
        for region in node.regions:
            work.extend(region.results)
    return live


def dce(fn: Function) -> Function:
    live = live_nodes(fn)
    return rebuild(fn, lambda node, body: node, keep=lambda node: node in live or node.op is Op.PARAM)
