"""Loop-carried pointer blocks advanced by a uniform step become one scalar offset.

``a_ptrs += BLOCK_K`` in a ``for`` loop carries a whole block of 64-bit pointers in registers
from one iteration to the next. When every iteration adds the same amount to every element
(a splat), the block is its initial value plus a running scalar: the loop carries that i64
offset instead, and the pointers become ``init + offset`` again where they are read, cheap to
recompute from coordinates (``#computed``) and with the alignment axis info can see.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import (
    BinaryAttr, BinaryFn, CastAttr, ConstAttr, Function, IndexAttr, Node, Op, ParamAttr, Region, Type,
)

_OFFSET = Type(dtypes.I64)


@dataclass(frozen=True)
class _Plan:
    """Which carried values of one loop become offsets (indices into its carried values), and
    the pointer blocks they start from (outside the loop)."""

    scalarized: tuple[int, ...]
    inits: tuple[Node, ...] = ()


def carry_offsets(fn: Function) -> Function:
    mapping: dict[Node, Node] = {}
    return replace(fn, body=_region(fn.body, mapping))


def _step(loop: Node, i: int) -> Node | None:
    """The scalar carried value ``i`` of ``loop`` advances by, if it is a pointer block
    yielded as ``param + splat(step)``."""
    body = loop.regions[0]
    param, out = body.params[1 + i], body.results[i]
    if param.ty.is_scalar or not param.ty.dtype.is_pointer:
        return None
    if out.op is not Op.BINARY or not isinstance(out.attr, BinaryAttr) or out.attr.fn is not BinaryFn.ADD:
        return None
    base, step = out.args
    if base is not param or step.op is not Op.SPLAT or not step.args[0].ty.dtype.is_int:
        return None
    return step.args[0]


def _region(region: Region, mapping: dict[Node, Node]) -> Region:
    body: list[Node] = []
    loops: dict[Node, tuple[Node, _Plan]] = {}  # original loop -> (new loop, plan with inits)
    for node in region.body:
        if node.op is Op.RESULT and node.args[0] in loops:
            mapping[node] = _result(node, *loops[node.args[0]], mapping, body)
            continue
        args = tuple(mapping.get(a, a) for a in node.args)
        if node.op is Op.FOR:
            plan = _Plan(tuple(i for i in range(len(node.args) - 3) if _step(node, i) is not None), args[3:])
            if plan.scalarized:
                new = _loop(node, args, plan, mapping, body)
                body.append(new)
                loops[node] = (new, plan)
                mapping[node] = new
                continue
        regions = tuple(_region(r, mapping) for r in node.regions)
        new = replace(node, args=args, regions=regions) if (args != node.args or regions != node.regions) else node
        body.append(new)
        mapping[node] = new
    return Region(region.params, tuple(body), tuple(mapping.get(r, r) for r in region.results))


def _loop(loop: Node, args: tuple[Node, ...], plan: _Plan, mapping: dict[Node, Node], outer: list[Node]) -> Node:
    """The loop with each planned pointer block replaced by an i64 offset carried from 0 (the
    zeros go to ``outer``, before the loop)."""
    lower, upper, step, *inits = args
    old = loop.regions[0]
    iv, *params = old.params
    prologue: list[Node] = []
    new_params: list[Node] = []
    new_inits: list[Node] = []
    offsets: dict[int, Node] = {}
    for i, (param, init) in enumerate(zip(params, inits)):
        if i not in plan.scalarized:
            new_params.append(param)
            new_inits.append(init)
            continue
        offset = Node(Op.PARAM, _OFFSET, attr=ParamAttr(len(new_params) + 1, f"{_name(param)}_offset"), loc=param.loc)
        offsets[i] = offset
        new_params.append(offset)
        zero = Node(Op.CONST, _OFFSET, attr=ConstAttr(0), loc=loop.loc)
        outer.append(zero)
        new_inits.append(zero)
        splat = Node(Op.SPLAT, Type(_OFFSET.dtype, param.ty.shape), (offset,), loc=param.loc)
        pointers = Node(Op.BINARY, param.ty, (init, splat), BinaryAttr(BinaryFn.ADD), loc=param.loc)
        prologue += [splat, pointers]
        mapping[param] = pointers
    inner = _region(Region((), old.body, old.results), mapping)
    yields: list[Node] = []
    epilogue: list[Node] = []
    for i, result in enumerate(old.results):
        if i not in plan.scalarized:
            yields.append(mapping.get(result, result))
            continue
        amount = _step(loop, i)
        assert amount is not None
        amount = mapping.get(amount, amount)
        if amount.ty.dtype != _OFFSET.dtype:
            amount = Node(Op.CAST, _OFFSET, (amount,), CastAttr(), loc=amount.loc)
            epilogue.append(amount)
        advanced = Node(Op.BINARY, _OFFSET, (offsets[i], amount), BinaryAttr(BinaryFn.ADD), loc=result.loc)
        epilogue.append(advanced)
        yields.append(advanced)
    body = Region((iv, *new_params), (*prologue, *inner.body, *epilogue), tuple(yields))
    return replace(loop, args=(lower, upper, step, *new_inits), regions=(body,))


def _result(node: Node, loop: Node, plan: _Plan, mapping: dict[Node, Node], body: list[Node]) -> Node:
    """A result of a rewritten loop: renumbered, or for an offset the pointers ``init + offset``."""
    assert isinstance(node.attr, IndexAttr)
    i = node.attr.index
    new = Node(Op.RESULT, _OFFSET if i in plan.scalarized else node.type, (loop,), IndexAttr(i), loc=node.loc)
    body.append(new)
    if i not in plan.scalarized:
        return new
    init = plan.inits[i]
    splat = Node(Op.SPLAT, Type(_OFFSET.dtype, node.ty.shape), (new,), loc=node.loc)
    pointers = Node(Op.BINARY, node.ty, (init, splat), BinaryAttr(BinaryFn.ADD), loc=node.loc)
    body += [splat, pointers]
    return pointers


def _name(param: Node) -> str:
    return param.attr.name if isinstance(param.attr, ParamAttr) else "carried"
