"""Structural and type checks on the IR, run after every pass in tests."""

from __future__ import annotations

from collections import Counter

from tile_lang.compiler.ir import Category, Function, Node, Op, Region, Type, walk


class VerifyError(Exception):
    """The IR broke an invariant; a compiler bug, never a user error."""


def verify(fn: Function) -> None:
    scope: set[Node] = set(fn.params)
    for p in fn.params:
        _check(p.op is Op.PARAM and p.ty.is_scalar, p, "function parameters are scalar PARAMs")
    _region(fn.body, scope)


def verify_effects_kept(before: Function, after: Function, pass_name: str) -> None:
    """A pass may rewrite and reorder, but never lose an effect: stores, atomics, asserts,
    prints, barriers, returns and the control flow around them keep their count per kind."""
    def effects(fn: Function) -> Counter[Op]:
        return Counter(n.op for n in walk(fn.body) if not n.op.info.pure)

    lost = effects(before) - effects(after)
    if lost:
        kinds = ", ".join(f"{count} {op.value}" for op, count in sorted(lost.items(), key=lambda kv: kv[0].value))
        raise VerifyError(f"pass {pass_name} dropped {kinds} of {before.name}")


def _region(region: Region, scope: set[Node]) -> None:
    inner = set(scope) | set(region.params)
    for node in region.body:
        for arg in node.args:
            _check(arg in inner, node, "uses a value not defined before it in scope")
        _node(node)
        for sub in node.regions:
            _region(sub, inner)
        inner.add(node)
    for result in region.results:
        _check(result in inner, result, "region yields a value not in scope")


def _node(node: Node) -> None:
    info = node.op.info
    if node.type is not None:
        n = node.type.numel
        _check(n & (n - 1) == 0, node, f"block of {n} elements is not a power of two")
    if info.category is Category.ELEMENTWISE and node.op is not Op.SPLAT:
        for arg in node.args:
            _check(arg.ty.shape == node.ty.shape, node, f"operand shape {arg.ty.shape} != result {node.ty.shape}")
    if node.op is Op.SPLAT:
        _check(node.args[0].ty.is_scalar, node, "splat of a non-scalar")
    if node.op is Op.BROADCAST:
        src, dst = node.args[0].ty.shape, node.ty.shape
        _check(len(src) == len(dst) and all(s in (1, d) for s, d in zip(src, dst)), node, "bad broadcast")
    if node.op in (Op.RESHAPE, Op.CONVERT, Op.PERMUTE):
        _check(node.args[0].ty.numel == node.ty.numel, node, "element count changes")
    if node.op in (Op.LOAD, Op.STORE, Op.ATOMIC):
        _check(node.args[0].ty.dtype.is_pointer, node, "memory access through a non-pointer")
    if node.op is Op.FOR:
        body = node.regions[0]
        _check(len(body.params) == len(node.args) - 2, node, "for: carried values and inits differ")
        _check(len(body.results) == len(node.args) - 3, node, "for: yields and inits differ")
        for init, res in zip(node.args[3:], body.results):
            _check(init.type == res.type, node, f"for: carried {init.type} yields {res.type}")
    if node.op is Op.GATHER:
        table, index = node.args
        _check(index.ty.shape == node.ty.shape and table.ty.dtype == node.ty.dtype, node,
               "gather: the result is not index-shaped values of src")
    if node.op in (Op.COMBINE_REDUCE, Op.COMBINE_SCAN):
        (combine,) = node.regions
        elements = [Type(x.ty.dtype) for x in node.args]
        _check([p.type for p in combine.params] == elements * 2, node,
               "combine region takes two scalars of each operand's dtype")
        _check([r.type for r in combine.results] == elements, node,
               "combine region yields one scalar of each operand's dtype")
    if node.op is Op.IF:
        then, other = node.regions
        _check(len(then.results) == len(other.results), node, "if: branches yield different counts")
        for a, b in zip(then.results, other.results):
            _check(a.type == b.type, node, f"if: branches yield {a.type} and {b.type}")


def _check(ok: bool, node: Node, message: str) -> None:
    if not ok:
        where = f" (line {node.loc.line})" if node.loc else ""
        raise VerifyError(f"{node.op.value}{where}: {message}")
