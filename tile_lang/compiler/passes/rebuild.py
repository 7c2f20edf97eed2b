"""Rebuilding a function node by node: the one traversal every IR -> IR pass uses (the NumPy
backend's ``rewrite`` module, which rewrites a kernel's Python source, is unrelated)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tile_lang.compiler.ir import Function, Node, Region

Rule = Callable[[Node, list[Node]], Node | None]
"""Given a node (operands already rewritten) and the body built so far (to insert nodes
before it), return its replacement, or None to drop it (only valid for unused nodes)."""


Rewrite = Callable[[Node, Node, list[Node]], Node | None]
"""A rule also given the original node first: an analysis of the original function (axis info,
users) is keyed by the original nodes, and a node downstream of any rewrite is a new object."""


Keep = Callable[[Node], bool]
"""Given an original node (before any rewriting), whether it stays; dropped nodes never reach the rule."""


def rebuild(fn: Function, rule: Rule, keep: Keep | None = None) -> Function:
    """Rebuild ``fn`` bottom-up with ``rule``; ``keep`` prunes nodes by their original identity
    (a node whose operands or regions were rewritten is a new object, so analyses over the
    original function, such as liveness, must decide before the rebuild, or use :func:`rewrite`)."""
    return rewrite(fn, lambda _original, node, body: rule(node, body), keep)


def rewrite(fn: Function, rule: Rewrite, keep: Keep | None = None) -> Function:
    """:func:`rebuild` with a rule that looks its analyses up by the original node."""
    mapping: dict[Node, Node] = {}
    params = tuple(_one(p, rule, mapping, []) for p in fn.params)
    return replace(fn, params=params, body=_region(fn.body, rule, mapping, keep))


def _one(node: Node, rule: Rewrite, mapping: dict[Node, Node], body: list[Node]) -> Node:
    out = rule(node, node, body)
    assert out is not None, "parameters cannot be dropped"
    mapping[node] = out
    return out


def _region(region: Region, rule: Rewrite, mapping: dict[Node, Node], keep: Keep | None) -> Region:
    params = tuple(_one(p, rule, mapping, []) for p in region.params)
    body: list[Node] = []
    for node in region.body:
        if keep is not None and not keep(node):
            continue
        args = tuple(mapping.get(a, a) for a in node.args)  # a dropped operand: this node is dropped too
        regions = tuple(_region(r, rule, mapping, keep) for r in node.regions)
        changed = args != node.args or regions != node.regions
        out = rule(node, replace(node, args=args, regions=regions) if changed else node, body)
        if out is not None:
            body.append(out)
            mapping[node] = out
    return Region(params, tuple(body), tuple(mapping[r] for r in region.results))
