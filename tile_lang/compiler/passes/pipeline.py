"""Software pipelining of loops that feed ``dot``: operands load straight into shared memory
(``ASYNC_COPY``, ``cp.async`` on the GPU), ``num_stages - 1`` iterations ahead.

A load whose only use is the conversion of a ``dot`` operand to shared memory becomes one
``ASYNC_COPY`` (no round trip through registers; masked elements are zero-filled, so an
``other`` must be 0): on sm_90, in a loop to pipeline, a bulk tensor copy (TMA) when the load
reads a descriptor's or block pointer's box that the copy engine can (``_bulk``), else
``cp.async`` runs of 4-16 bytes. A ``for`` loop with a positive constant step whose copies can
be computed for a later iteration (their pointers and masks depend on the induction variable, on
carried scalars advanced by a loop-invariant step, and on values from outside the loop only,
through pure arithmetic) is marked with ``stages`` and the carried scalars that advance by a
loop-invariant step (``steps``); codegen then issues the copies of iteration ``i + stages - 1``
while iteration ``i`` computes. Each ``cp.async`` copy of such a loop that walks its block row by
row may hold its addresses: the pointer blocks from before the loop in registers, each copy adding
the carried offset it advances with, if any.
"""

from __future__ import annotations

import math
from dataclasses import replace

from tile_lang.compiler.ir import (
    BinaryAttr, BinaryFn, Box, Category, Computed, ConstAttr, Function, LoopAttr, MemAttr, Mma, Node, Op,
    PermuteAttr, Region, Shared, box_of, carried_steps, is_zero, unwritten_between, walk, write_epochs,
    writes_memory,
)
from tile_lang.compiler.passes.axis_info import AxisInfo, analyze
from tile_lang.compiler.passes.layouts import panel_swizzle, operand_pad
from tile_lang.compiler.passes.rebuild import rebuild, rewrite

COPY_BYTES = (4, 8, 16)  # the sizes cp.async copies


def pipeline(fn: Function) -> Function:
    info = analyze(fn)
    epochs = write_epochs(fn)
    users: dict[Node, list[Node]] = {}
    loop_of: dict[Node, Node] = {}  # a node directly in a for body -> the loop
    for node in walk(fn.body):
        for arg in node.args:
            users.setdefault(arg, []).append(node)
        if node.op is Op.FOR:
            loop_of.update((n, node) for n in node.regions[0].body)

    def rule(node: Node, body: list[Node]) -> Node:
        if node.op is Op.CONVERT:
            loop = loop_of.get(node) if fn.num_stages > 1 and fn.arch >= 90 else None
            return _async_copy(node, epochs, users, info, loop) or node
        if node.op is Op.FOR and isinstance(node.attr, LoopAttr) and fn.num_stages > 1 and _prefetchable(node):
            steps = _invariant_steps(node.regions[0])
            indices = tuple(i for i, param in enumerate(node.regions[0].params[1:]) if param in steps)
            return replace(node, attr=replace(node.attr, stages=fn.num_stages, steps=indices))
        return node

    return _hold_addresses(rebuild(fn, rule))


def _hold_addresses(fn: Function) -> Function:
    """Mark the ``cp.async`` copies of pipelined loops whose addresses are held (``MemAttr.hold``).
    A pointer block stepped by a carried offset (``a_ptrs += BK``) is held only
    when its addresses cost integer divisions to recompute; otherwise each copy recomputes them
    from coordinates plus the offset, which ptxas schedules better (H200, 4096^3 f16: the tutorial
    matmul 0.92 -> 1.01 of Triton; the grouped matmul's ``% M`` addresses 0.86 -> 0.41). A held
    block is the one from before the loop, never stepped in place: the copy adds the carried offset
    (stepping 12 held 64-bit pointers each iteration: the grouped matmul 0.82 of Triton; adding the
    offset at each copy: 0.96, f16 4096^3)."""
    holds: set[Node] = set()
    for loop in walk(fn.body):
        if loop.op is Op.FOR and isinstance(loop.attr, LoopAttr) and loop.attr.stages > 1:
            for copy in loop.regions[0].body:
                if (copy.op is Op.ASYNC_COPY and box_of(copy) is None and isinstance(copy.layout, Shared)
                        and (not _advancing(copy.args[0], loop) or _divides(copy.args[0]))):
                    holds.add(copy)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        if original in holds and isinstance(node.attr, MemAttr):
            return replace(node, attr=replace(node.attr, hold=True))
        return node

    return rewrite(fn, rule)


def _divides(ptr: Node) -> bool:
    """Whether the computed address block ``ptr`` takes an integer ``//`` or ``%`` anywhere."""
    stack, seen = [ptr], set()
    while stack:
        node = stack.pop()
        if node in seen or not isinstance(node.layout, Computed):
            continue
        seen.add(node)
        if isinstance(node.attr, BinaryAttr) and node.attr.fn in (BinaryFn.DIV, BinaryFn.MOD) and node.ty.dtype.is_int:
            return True
        stack.extend(node.args)
    return False


def _advancing(ptr: Node, loop: Node) -> bool:
    """Whether a copy's pointer block is a block from before the loop plus a carried offset
    (``carry_offsets``' form of ``a_ptrs += BLOCK_K``)."""
    if ptr.op is not Op.BINARY or not isinstance(ptr.attr, BinaryAttr) or ptr.attr.fn is not BinaryFn.ADD:
        return False
    body = loop.regions[0]
    inside = set(body.body) | set(body.params)
    carried = carried_steps(loop)
    return any(base not in inside and isinstance(base.layout, Computed) and moved.op is Op.SPLAT
               and moved.args[0] in carried for base, moved in (ptr.args, ptr.args[::-1]))


def _async_copy(convert: Node, epochs: dict[Node, int], users: dict[Node, list[Node]],
                info: dict[Node, AxisInfo], loop: Node | None) -> Node | None:
    """``convert`` as one ASYNC_COPY, when it moves a dot operand loaded only for it, with no write
    to memory that may run between the load and the conversion (the copy reads where the
    conversion stands: past a store it would read the stored values): on sm_90, in
    the body of a ``loop`` to pipeline, a bulk tensor copy (TMA) of a descriptor's or block
    pointer's box where :func:`_bulk` allows one and the copy can run ahead (its map built once
    before the loop: a copy outside such a loop would build its map for one use)."""
    load = convert.args[0]
    if load.op is Op.PERMUTE and isinstance(load.attr, PermuteAttr) and load.attr.dims == (1, 0):
        return _bulk_transposed(convert, epochs, users, info, loop)
    if (load.op is not Op.LOAD or not isinstance(load.attr, MemAttr) or load.attr.volatile
            or not unwritten_between(epochs, load, convert)):
        return None
    attr = load.attr
    dots = users.get(convert, [])
    if len(users.get(load, [])) != 1 or not dots or not all(u.op is Op.DOT for u in dots):
        return None
    if attr.has_other and not is_zero(load.args[2]):
        return None
    if len(load.ty.shape) != 2 or not isinstance(convert.layout, Shared):
        return None
    mask = load.args[1] if attr.has_mask else None
    layout = convert.layout
    facts = info.get(load.args[0])
    k_major = panel_swizzle(load.ty.shape[0] * load.ty.dtype.itemsize)
    if (facts is not None and facts.contiguity[-1] == 1 and facts.contiguity[0] > 1 and not layout.transposed
            and (not layout.swizzle or k_major)
            and all(isinstance(d.layout, Mma) and d.args[1] is convert and d.args[0] is not convert for d in dots)):
        # a B operand contiguous in memory along K (``k.T``): stored column by column (K-major)
        layout = (Shared(swizzle=k_major, transposed=True) if layout.swizzle
                  else Shared(operand_pad(load.ty.dtype, load.ty.shape[0], 0), transposed=True))
    box = box_of(load)
    if box is not None and loop is not None and _bulk(box, layout, load.ty.shape, info) and _ahead_ok(box, loop):
        return Node(Op.ASYNC_COPY, load.type, (box.base, *box.shape, *box.strides, *box.offsets),
                    MemAttr(False, box=attr.box), loc=load.loc, layout=layout)
    dim = 0 if layout.transposed else 1
    width = _width(load.args[0], mask, load.ty.shape, info, dim)
    if width * load.ty.dtype.itemsize not in COPY_BYTES:
        return None
    return Node(Op.ASYNC_COPY, load.type, (load.args[0], *(() if mask is None else (mask,))),
                MemAttr(attr.has_mask, vector=width), loc=load.loc, layout=layout)


def _bulk_transposed(convert: Node, epochs: dict[Node, int], users: dict[Node, list[Node]],
                     info: dict[Node, AxisInfo], loop: Node | None) -> Node | None:
    """``convert`` of ``box_load.T`` (Triton's attention: ``k_desc.load(...).T`` as the B operand;
    the layouts pass may stage the load in shared memory before the view) as one bulk copy: the
    box's rows land as the K-major panels wgmma reads B from, the layout the pointer path gives
    ``k.T`` (``Shared(swizzle, transposed)``)."""
    permute = convert.args[0]
    load, view = permute.args[0], permute  # the load, and its one user
    if load.op is Op.CONVERT and isinstance(load.layout, Shared) and users.get(load) == [permute]:
        load, view = load.args[0], load
    box = box_of(load)
    dots = users.get(convert, [])
    if (loop is None or box is None or load.op is not Op.LOAD or not isinstance(load.attr, MemAttr) or load.attr.volatile
            or not unwritten_between(epochs, load, convert)
            or users.get(load) != [view] or users.get(permute) != [convert] or not dots
            or (load.attr.has_other and not is_zero(load.args[2]))
            or not (isinstance(convert.layout, Shared) and convert.layout.swizzle)
            or panel_swizzle(convert.ty.shape[0] * convert.ty.dtype.itemsize) != 128  # TMA's panels: 128 bytes
            or not all(d.op is Op.DOT and isinstance(d.layout, Mma) and d.args[1] is convert and d.args[0] is not convert
                       for d in dots)
            or not _bulk(box, Shared(swizzle=128), load.ty.shape, info) or not _ahead_ok(box, loop)):
        return None
    return Node(Op.ASYNC_COPY, convert.type, (box.base, *box.shape, *box.strides, *box.offsets),
                MemAttr(False, box=load.attr.box), loc=load.loc, layout=Shared(swizzle=128, transposed=True))


TMA_BOX = 256  # the most elements a bulk tensor copy's box has along a dim


def _bulk(box: Box, layout: Shared, shape: tuple[int, ...], info: dict[Node, AxisInfo]) -> bool:
    """Whether one bulk tensor copy a 128-byte panel lands ``box`` in ``layout`` (wgmma's
    swizzled operand layout, whose panels are TMA's 128-byte swizzled boxes), with what the
    compiler knows of the box: a 2-D row-major tensor with unit last stride, a 16-byte aligned
    base and row stride (TMA's rules; the launch's specialisation tells), 32-bit shape and
    offsets. Out-of-bounds elements read as zero, as the masked load's."""
    element = box.base.ty.dtype.element
    if len(shape) != 2 or layout.swizzle != 128 or layout.transposed or element is None:
        return False
    rows, cols = shape
    panel = 128 // element.itemsize
    if element.itemsize not in (1, 2, 4) or rows % 8 or rows > TMA_BOX or cols % panel:
        return False
    last = box.strides[-1]
    if last.op is not Op.CONST or not isinstance(last.attr, ConstAttr) or last.attr.value != 1:
        return False
    if any(n.ty.dtype.bits > 32 for n in (*box.shape, *box.offsets)):
        return False

    def divisibility(node: Node) -> int:
        facts = info.get(node)
        return facts.divisibility[0] if facts is not None else 1

    return divisibility(box.base) % 16 == 0 and divisibility(box.strides[0]) * element.itemsize % 16 == 0


def _width(ptr: Node, mask: Node | None, shape: tuple[int, ...], info: dict[Node, AxisInfo], dim: int) -> int:
    """Elements per copy along ``dim``: what contiguity, alignment and the mask allow, at most
    16 bytes."""
    element = ptr.ty.dtype.element
    facts = info.get(ptr)
    if facts is None or element is None:
        return 1
    item = element.itemsize
    width = math.gcd(16 // item, facts.contiguity[dim], max(1, facts.divisibility[dim] // item), shape[dim])
    if mask is not None:
        found = info.get(mask)
        width = math.gcd(width, found.constancy[dim] if found is not None else 1)
    return width


def _invariant_steps(body: Region) -> dict[Node, Node]:
    """Carried scalars of a ``for`` body yielded as ``param + step`` with a loop-invariant step:
    param -> step."""
    inside = set(body.body)
    variant = set(body.params)
    steps: dict[Node, Node] = {}
    for param, out in zip(body.params[1:], body.results):
        if (param.ty.is_scalar and out.op is Op.BINARY and isinstance(out.attr, BinaryAttr)
                and out.attr.fn is BinaryFn.ADD and out.args[0] is param
                and _cone_ok(out.args[1], inside, variant, frozenset())):
            steps[param] = out.args[1]
    return steps


def _cone_ok(root: Node, inside: set[Node], variant: set[Node], allowed: frozenset[Node]) -> bool:
    """Whether ``root`` can be evaluated anywhere in the loop from ``allowed`` loop values and
    values from outside it, through pure arithmetic."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node in seen or node in allowed:
            continue
        seen.add(node)
        if node in variant:
            return False
        if node not in inside:
            continue  # defined before the loop
        pure = node.op.info.pure and not node.regions and node.op is not Op.RESULT
        if not pure or node.op.info.category not in (Category.SOURCE, Category.ELEMENTWISE, Category.VIEW):
            return False
        if node.op in (Op.RAND, Op.ASM) or not (node.ty.is_scalar or isinstance(node.layout, Computed)):
            return False
        stack.extend(node.args)
    return True


def _prefetchable(loop: Node) -> bool:
    """A loop with copies directly in its body that can all be issued stages ahead, and that
    writes no global memory: a copy issued ahead would read what a later iteration's copy must
    see before the store of an earlier one (a block stored, behind a barrier, where the next
    iteration loads its operand)."""
    copies = [n for n in loop.regions[0].body if n.op is Op.ASYNC_COPY]
    return (bool(copies) and all(_ahead_ok(box_of(c) or c.args, loop) for c in copies)
            and not any(writes_memory(n) for n in loop.regions[0].body))


def _ahead_ok(copy: Box | tuple[Node, ...], loop: Node) -> bool:
    """Whether a copy of ``loop``'s body (its box, or its operands) can be issued iterations ahead:
    the loop steps by a positive constant, what the copy reads is pure arithmetic on the induction
    variable, carried scalars advanced by a loop-invariant step and values from before the loop,
    and a box's tensor map (base, shape, strides) is known before the loop, where it is built."""
    step = loop.args[2]
    if step.op is not Op.CONST or not isinstance(step.attr, ConstAttr) or not int(step.attr.value) > 0:
        return False
    body = loop.regions[0]
    steps = _invariant_steps(body)
    allowed = frozenset((body.params[0], *steps))
    inside, variant = set(body.body), set(body.params)
    if isinstance(copy, Box):
        if any((x in inside and x.op is not Op.CONST) or x in variant for x in (copy.base, *copy.shape, *copy.strides)):
            return False
        copy = copy.offsets
    return all(_cone_ok(arg, inside, variant, allowed) for arg in copy)
