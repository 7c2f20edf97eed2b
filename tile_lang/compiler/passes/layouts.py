"""Layout assignment: where each block lives, and conversions through shared memory.

Registers hold loaded and computed blocks: :class:`Blocked` in general, :class:`Mma` for the
results of ``dot`` on tensor cores and the elementwise values computed from them (so an
epilogue runs on the accumulator fragments where they are). Values that are cheap functions of
their coordinates (aranges, splats, index arithmetic) are :class:`Computed` wherever they are
used. An operand read at other threads' positions (broadcast of a loaded value, transpose, dot
operands, axis reductions, scans), or held in another register layout than its reader's, goes
through a ``CONVERT`` to :class:`Shared`.

Each decision is a table of small named rules, the first that applies winning: a node's layout
(:data:`LAYOUT_RULES`), the tensor-core fragments it takes from its operands
(:data:`FRAGMENT_RULES`), and which operands it reads anywhere (:data:`_READS_ANYWHERE`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Union

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import (
    MAX_VECTOR, REGISTER_LAYOUTS, Blocked, Category, Computed, DotAttr, Function, IndexAttr, Layout, Mma, MmaRows, Node,
    MemAttr, Op, Precision, ReduceAttr, ReduceFn, Registers, Shared, UnaryAttr, UnaryFn, blocked, load_operands_at,
    walk, writes_memory,
)
from tile_lang.compiler.passes.rebuild import rebuild

_CHEAP_UNARY = frozenset({UnaryFn.NEG, UnaryFn.INVERT, UnaryFn.NOT, UnaryFn.ABS})
_COMPUTABLE = frozenset({Op.ARANGE, Op.SPLAT, Op.BINARY, Op.CAST, Op.WHERE, Op.HINT, Op.UNARY, Op.BROADCAST, Op.RESHAPE,
                         Op.PERMUTE})
# K of one mma.sync per operand dtype (fp8 from sm_89 on, both operands of one fp8 type)
_MMA_K = {dtypes.F16: 16, dtypes.BF16: 16, dtypes.F32: 8, dtypes.I8: 32, dtypes.F8E4M3: 32, dtypes.F8E5M2: 32}
_MMA_ACC = {dtypes.I8: dtypes.I32}  # the accumulator of mma.sync per operand dtype, f32 where not named


@dataclass(frozen=True)
class Wgmma:
    """How a ``dot`` runs as Hopper's wgmma: A's shared layout, or None from registers (its
    fragments, as the result's rows hold them: attention's ``p``), and B's shared layout."""

    a: Shared | None
    b: Shared


def panel_swizzle(row_bytes: int) -> int:
    """The widest of wgmma's swizzled panels (128, 64 or 32 bytes a row) that an operand's rows of
    ``row_bytes`` (along K, or along N for an N-major B) split into, or 0 for none."""
    return next((width for width in (128, 64, 32) if row_bytes % width == 0), 0)


def wgmma_operands(node: Node, num_warps: int, arch: int, a_layout: Layout | None = None) -> Wgmma | None:
    """Whether a tensor-core ``dot`` runs as wgmma (sm_90a), and with which operand layouts:
    f16/bf16 or fp8 (e4m3, e5m2) operands, M a multiple of 16 rows per warp (each warpgroup of
    4 warps issues one m64 instruction per 64 rows), N a multiple of 8 up to 256. A comes from
    registers when it already sits in the matching fragments (16-bit), else K-major from shared
    memory in swizzled panels, 128 bytes wide where K allows, else 64 or 32 (Triton's choice:
    ``BLOCK_K`` 32 of f16 or 64 of fp8 on wgmma, not mma.sync). B is N-major in panels of N
    chosen alike (16-bit, N a multiple of 16), or K-major like A (fp8 operands are K-major
    only)."""
    if arch < 90 or node.op is not Op.DOT or len(node.ty.shape) != 2 or num_warps % 4:
        return None
    a, b = node.args[:2]
    (m, k), n = a.ty.shape, node.ty.shape[1]
    wide = a.ty.dtype in (dtypes.F16, dtypes.BF16)
    if not (wide or a.ty.dtype.is_fp8 and b.ty.dtype.is_fp8) or node.ty.dtype != dtypes.F32:
        return None
    if m % (16 * num_warps) or n % 8 or n > 256 or k % (32 // a.ty.dtype.itemsize):
        return None
    tiles = m // (16 * num_warps)
    k_major = Shared(swizzle=panel_swizzle(k * a.ty.dtype.itemsize))
    a_smem = None if wide and a_layout == Mma(num_warps, 1, tiles, k // 8, interleaved=tiles > 1) else k_major
    n_major = panel_swizzle(n * a.ty.dtype.itemsize)  # the same panel widths along N
    if wide and n_major:
        return Wgmma(a_smem, Shared(swizzle=n_major))
    return Wgmma(a_smem, replace(k_major, transposed=True))


def mma_layout(node: Node, num_warps: int, rowwise: bool = False, arch: int = 80,
               a_layout: Layout | None = None) -> Mma | None:
    """The tensor-core layout of a ``dot`` result, or None when the dot stays on CUDA cores: 2-D,
    f16/bf16 operands or f32 ones in tf32 with f32 accumulation, i8 ones with i32, or fp8 ones of
    one type with f32 from sm_89 on, where wgmma cannot take them (mma.sync on sm_90 too), M and N multiples of 16 and 8 and K of the instruction's K. Warps split the block to keep each warp's tile square, or with
    ``rowwise`` (kernels that reduce dot results along rows, as attention's softmax does) along
    the rows first, so that every row lives in one warp and its reduction is a shuffle."""
    if node.op is not Op.DOT or not isinstance(node.attr, DotAttr):
        return None
    a = node.args[0]
    operand = a.ty.dtype
    if wgmma_operands(node, num_warps, arch, a_layout) is not None:
        tiles = a.ty.shape[0] // (16 * num_warps)  # wgmma's accumulator: 16 rows a warp and m64 tile
        return Mma(num_warps, 1, tiles, node.ty.shape[1] // 8, interleaved=tiles > 1)
    if len(node.ty.shape) != 2 or operand not in _MMA_K or node.ty.dtype != _MMA_ACC.get(operand, dtypes.F32):
        return None
    if operand.is_fp8 and (arch < 89 or node.args[1].ty.dtype != operand):
        return None
    (m, k), n = a.ty.shape, node.ty.shape[1]
    if operand == dtypes.F32 and node.attr.precision is not Precision.TF32:
        return None
    if m % 16 or n % 8 or k % _MMA_K[operand]:
        return None
    wm = wn = 1
    while rowwise and wm < num_warps and m // (2 * wm) >= 16:
        wm *= 2
    while wm * wn < num_warps:
        if m // (2 * wm) >= 16 and (m // wm >= n // wn or n // (2 * wn) < 8):
            wm *= 2
        elif n // (2 * wn) >= 8:
            wn *= 2
        else:
            break
    return Mma(wm, wn, m // wm // 16, n // wn // 8)


def operand_pad(dtype: dtypes.DType, cols: int, which: int) -> int:
    """Row padding (elements) of a tensor-core operand in shared memory so that the rows one
    fragment load reads fall in distinct banks: an odd number of 16-byte units per row for
    ``ldmatrix`` (16-bit operands, the tf32 A), an odd number of 32-byte units for the tf32 B,
    whose lanes read 4 rows at once."""
    unit = 32 if (dtype == dtypes.F32 and which == 1) else 16
    row = cols * dtype.itemsize
    units = -(-row // unit)
    units += 1 - units % 2
    return (units * unit - row) // dtype.itemsize


def random_access(node: Node) -> bool:
    """Whether any thread can read any element of ``node`` without a conversion."""
    return node.ty.is_scalar or node.ty.numel == 1 or isinstance(node.layout, (Shared, Computed))


def registers(node: Node) -> Registers | None:
    """``node``'s register layout, or None when it is not held in registers."""
    if node.type is None or random_access(node) or not isinstance(node.layout, REGISTER_LAYOUTS):
        return None
    return node.layout


def _computable(node: Node) -> bool:
    if node.op not in _COMPUTABLE:
        return False
    if node.op is Op.UNARY and isinstance(node.attr, UnaryAttr) and node.attr.fn not in _CHEAP_UNARY:
        return False
    if node.op is Op.RESHAPE and not random_access(node.args[0]):
        return False  # a reshape of registers keeps the same register layout
    return all(random_access(a) for a in node.args)


_READS_ANYWHERE: dict[Op, tuple[int, ...]] = {Op.BROADCAST: (0,), Op.PERMUTE: (0,), Op.DOT: (0, 1), Op.SCAN: (0,)}


def _reads_anywhere(node: Node) -> tuple[int, ...]:
    """Operands this node reads at arbitrary coordinates (a reduction's too, unless to a scalar)."""
    if node.op is Op.REDUCE and node.type is not None and node.ty.numel > 1:
        return (0,)
    return _READS_ANYWHERE.get(node.op, ())


def _follows_fragments(node: Node) -> bool:
    """Ops computed element by element at their own coordinates, which can run on fragments."""
    return node.op.info.category is Category.ELEMENTWISE and node.op is not Op.ASM


Fragment = Union[Mma, MmaRows]
_ROW_REDUCTIONS = frozenset({ReduceFn.SUM, ReduceFn.MAX, ReduceFn.MIN})


@dataclass(frozen=True)
class Target:
    """What the layout rules read besides the IR: the warps, the compute capability, and whether
    warps split a dot's rows first (``rowwise``: :func:`reduces_rows`)."""

    num_warps: int
    arch: int = 80
    rowwise: bool = False
    vector: int = MAX_VECTOR  # runs of the default register layout (:func:`default_vector`)

    @property
    def threads(self) -> int:
        return self.num_warps * 32

    def blocked(self, numel: int) -> Blocked:
        return blocked(numel, self.threads, self.vector)


def default_vector(fn: Function) -> int:
    """Elements a thread holds consecutively in the default register layout: 16 bytes of the
    narrowest element the kernel's blocks load or store (Triton's choice: 128-bit accesses), 4 to
    8; one width for the whole kernel, so an f16 load and its f32 conversion share a layout."""
    sizes = [n.args[0].ty.dtype.element.itemsize for n in walk(fn.body)
             if n.op in (Op.LOAD, Op.STORE) and not n.args[0].ty.is_scalar and n.args[0].ty.dtype.element is not None]
    return max(MAX_VECTOR, min(8, 16 // min(sizes))) if sizes else MAX_VECTOR


FragmentRule = Callable[[Node, list[Layout | None], Target], Fragment | None]
"""Given a valued block node, its operands' layouts (None for scalars) and the target: the
tensor-core layout the node takes, or None where the rule does not apply."""


def _dot_fragment(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """A dot on tensor cores: :func:`mma_layout`."""
    if node.op is not Op.DOT:
        return None
    return mma_layout(node, target.num_warps, target.rowwise, target.arch, operands[0] if operands else None)


def _row_reduction(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """A sum, max or min along the rows of fragments split over rows only (``tl.max(qk, 1)``)."""
    source = operands[0] if operands else None
    if node.op is not Op.REDUCE or not isinstance(node.attr, ReduceAttr) or not isinstance(source, Mma):
        return None
    by_row = node.attr.axis == 1 and node.attr.fn in _ROW_REDUCTIONS and source.warps_n == 1
    return MmaRows.of(source) if by_row and node.ty.shape == (source.shape[0],) else None


def _row_view(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """A row of fragments as ``[M]`` or ``[M, 1]`` (``m[:, None]``)."""
    source = operands[0] if operands else None
    if node.op is not Op.RESHAPE or not isinstance(source, MmaRows):
        return None
    return source if node.ty.shape in ((source.rows,), (source.rows, 1)) else None


def _row_broadcast(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """A row of fragments broadcast back over a block whose columns its warps split evenly."""
    source = operands[0] if operands else None
    if node.op is not Op.BROADCAST or not isinstance(source, MmaRows) or len(node.ty.shape) != 2:
        return None
    height, cols = node.ty.shape
    if height != source.rows or cols % (8 * source.warps_n):
        return None
    return Mma(source.warps_m, source.warps_n, source.tiles_m, cols // (8 * source.warps_n), source.interleaved)


def _elementwise_fragment(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """An elementwise op on fragments: its first fragment operand's layout."""
    if not _follows_fragments(node):
        return None
    return next((lay for lay in operands if isinstance(lay, (Mma, MmaRows))), None)


def _atomic_fragment(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """An atomic on a dot's result (split-K's ``tl.atomic_add(c_ptrs, acc)``) runs on its
    fragments, each thread updating the elements it holds, as a store from fragments does,
    instead of moving them through shared memory first."""
    if node.op is not Op.ATOMIC:
        return None
    return next((lay for lay in operands[1:] if isinstance(lay, Mma)), None)


FRAGMENT_RULES: tuple[FragmentRule, ...] = (_dot_fragment, _row_reduction, _row_view, _row_broadcast,
                                            _elementwise_fragment, _atomic_fragment)


def fragment(node: Node, operands: list[Layout | None], target: Target) -> Fragment | None:
    """The tensor-core layout ``node`` takes given its operands' layouts: the first of
    :data:`FRAGMENT_RULES` that applies, else None (no value, a scalar, or no rule)."""
    if node.type is None or node.ty.is_scalar:
        return None
    for rule in FRAGMENT_RULES:
        found = rule(node, operands, target)
        if found is not None:
            return found
    return None


def reduces_rows(fn: Function) -> bool:
    """Whether ``fn`` reduces the rows of a dot result (a softmax over ``q @ k.T``)."""
    memo: dict[Node, Fragment | None] = {}
    return any(n.op is Op.REDUCE and isinstance(n.attr, ReduceAttr) and n.attr.axis == 1
               and isinstance(_fragment_of(n.args[0], Target(fn.num_warps), {}, memo), Mma) for n in walk(fn.body))


def _carried_fragments(fn: Function, target: Target) -> dict[Node, Fragment]:
    """Loop-carried values that hold tensor-core fragments: a region parameter whose yield is
    (computed from) a tensor-core dot takes its layout, decided before the loop body is
    rewritten, so an accumulator (and a running row maximum) never leaves its registers."""
    found: dict[Node, Fragment] = {}
    yields: list[tuple[Node, Node]] = []
    for node in walk(fn.body):
        if node.op is Op.FOR:
            body = node.regions[0]
            yields += list(zip(body.params[1:], body.results))
        elif node.op is Op.WHILE:
            yields += list(zip(node.regions[1].params, node.regions[1].results))
    for _ in range(4):  # nested loops settle from the inside out
        seen = dict(found)
        memo: dict[Node, Fragment | None] = {}
        for param, value in yields:
            layout = _fragment_of(value, target, found, memo)
            if layout is not None:
                found[param] = layout
        if seen == found:
            break
    return found


def _fragment_of(node: Node, target: Target, params: dict[Node, Fragment],
                 memo: dict[Node, Fragment | None]) -> Fragment | None:
    """:func:`fragment` over the original IR, operands first (loop parameters as found so far)."""
    if node in memo:
        return memo[node]
    memo[node] = None
    layout: Fragment | None = None
    if node.op is Op.PARAM:
        layout = params.get(node)
    elif node.op is Op.RESULT and isinstance(node.attr, IndexAttr):
        owner = node.args[0]
        if owner.op is Op.FOR:
            layout = params.get(owner.regions[0].params[1 + node.attr.index])
        elif owner.op is Op.WHILE:
            layout = params.get(owner.regions[1].params[node.attr.index])
    elif node.type is not None and not node.ty.is_scalar:
        operands: list[Layout | None] = [
            None if a.ty.is_scalar else _fragment_of(a, target, params, memo) for a in node.args]
        layout = fragment(node, operands, target)
    memo[node] = layout
    return layout


def _result_layout(node: Node) -> Layout | None:
    """A control-flow result lives where its carried variable does: in registers (an ``if``
    stores a branch's value there, so one recomputed from coordinates, ``#computed``, or held in
    shared memory gets the default registers: None)."""
    if not isinstance(node.attr, IndexAttr):
        return None
    owner, i = node.args[0], node.attr.index
    if owner.op is Op.FOR:
        return owner.regions[0].params[1 + i].layout
    if owner.op is Op.WHILE:
        return owner.regions[1].params[i].layout
    if owner.op is Op.IF:
        layout = owner.regions[0].results[i].layout
        return layout if isinstance(layout, REGISTER_LAYOUTS) else None
    return None


def assign_layouts(fn: Function) -> Function:
    target = Target(fn.num_warps, fn.arch, reduces_rows(fn), default_vector(fn))
    carried = _carried_fragments(fn, target)

    def rule(node: Node, body: list[Node]) -> Node:
        if node.op is Op.PARAM and node.type is not None and not node.ty.is_scalar:
            return replace(node, layout=carried.get(node) or target.blocked(node.ty.numel))
        if node.op is Op.RESULT and node.type is not None and not node.ty.is_scalar:
            return replace(node, layout=_result_layout(node) or target.blocked(node.ty.numel))
        if node.type is not None and node.ty.is_scalar and node.op is not Op.STORE:
            return node
        return _place(node, body, target)

    return replace(rebuild(fn, rule), vector=target.vector)


def _place(node: Node, body: list[Node], target: Target) -> Node:
    """``node`` with its layout, its gathered operands staged in shared memory (:func:`_staging`),
    and operands held in another register layout than the one it walks converted (appended to
    ``body``)."""
    args = list(node.args)
    own = fragment(node, [None if a.ty.is_scalar else a.layout for a in args], target)
    gathered = _gathered(node, own)
    for i in gathered:
        staged = _staging(node, i, own, target)
        if staged is not None:
            args[i] = _convert(args[i], body, staged)
    node = _with_args(node, args)
    layout = _layout(node, own, target)
    walked = _iteration(node, layout, target)
    if walked is not None and _reads_own(node):
        for i, arg in enumerate(args):
            mine = registers(arg)
            if i not in gathered and mine is not None and mine != walked:
                args[i] = _convert(arg, body)  # held in another register layout than the reader's
            elif isinstance(walked, Mma) and walked.per_thread <= RELOADED_REGISTERS:
                args[i] = _reloaded(arg, walked, body) or arg
        node = _with_args(node, args)
        if layout is not None and not isinstance(layout, Shared) and node.op is not Op.CONVERT:
            layout = _layout(node, own, target)  # a converted operand may make it computable
    return node if layout is None else replace(node, layout=layout)


RELOADED_REGISTERS = 32
"""The most registers a thread a row reloaded onto fragments may take (:func:`_reloaded`): its copy
lives beside the fragments, where a staged row is read from shared memory at each use; at
128x256 (128 a thread) ptxas spilled 45 -> 78 registers' worth in a loop accumulating a dot."""


def _reloaded(value: Node, layout: Mma, body: list[Node]) -> Node | None:
    """A broadcast of a block loaded in this region and staged through shared memory to be read
    at fragments' coordinates (``lse[None, :]`` meeting a dot result in attention's backward),
    loaded again in the fragments' layout instead: each thread reads its elements from memory (a
    cached line) where the block went through shared memory behind two barriers. Only where
    nothing writes memory between the load and here, and its operands are computed. Each thread
    loads each of its columns once, its other registers of that column copying it (codegen: a
    load whose rows read alike); loading every register, d=64's dk/dv (two row tiles a warp,
    each column four times a thread) ran 5.5% slower on the H200 than with the staging. The
    load is placed right after the original one, so its latency hides under the work between
    (a dot): placed at its use it waited on memory every iteration."""
    if value.op is not Op.BROADCAST or value.args[0].op is not Op.CONVERT:
        return None
    reshapes, load = [], value.args[0].args[0]
    while load.op is Op.RESHAPE:
        reshapes.append(load)
        load = load.args[0]
    at = next((i for i, n in enumerate(body) if n is load), None)
    if (load.op is not Op.LOAD or not isinstance(load.attr, MemAttr) or load.attr.volatile or load.attr.box
            or at is None or any(writes_memory(n) for n in body[at + 1:])
            or not all(isinstance(a.layout, Computed) for a in load.args)):
        return None
    made: list[Node] = []

    def viewed(operand: Node) -> Node:  # through the same reshapes and broadcast, computed
        for shaping in (*reversed(reshapes), value):
            operand = Node(shaping.op, operand.ty.with_shape(shaping.ty.shape), (operand,), shaping.attr,
                           loc=shaping.loc, layout=Computed())
            made.append(operand)
        return operand

    operands = load_operands_at(load, value.ty.shape, viewed, made)
    reloaded = replace(load, type=value.type, args=operands, loc=value.loc, layout=layout)
    body[at + 1:at + 1] = [*made, reloaded]  # issued where the row was: its latency under what follows
    return reloaded


def _convert(value: Node, body: list[Node], layout: Shared = Shared()) -> Node:
    conv = Node(Op.CONVERT, value.ty, (value,), loc=value.loc, layout=layout)
    body.append(conv)
    return conv


def _with_args(node: Node, args: list[Node]) -> Node:
    return replace(node, args=tuple(args)) if tuple(args) != node.args else node


def _gathered(node: Node, own: Fragment | None) -> tuple[int, ...]:
    """Operands read at other threads' coordinates: both of a tensor-core dot, none of another op
    on fragments, else :func:`_reads_anywhere`'s."""
    if node.op is Op.DOT and own is not None:
        return (0, 1)
    return () if own is not None else _reads_anywhere(node)


def _staging(node: Node, i: int, own: Fragment | None, target: Target) -> Shared | None:
    """The shared layout gathered operand ``i`` is converted to, or None where it is read as it
    is: a wgmma dot's operands as :func:`wgmma_operands` says, an mma.sync dot's padded
    (:func:`operand_pad`), another op's plain unless it is random access already."""
    arg = node.args[i]
    if node.op is Op.DOT and own is not None:
        wgmma = wgmma_operands(node, target.num_warps, target.arch, node.args[0].layout)
        if wgmma is not None:
            return wgmma.b if i == 1 else wgmma.a
        return Shared(operand_pad(arg.ty.dtype, arg.ty.shape[-1], i))
    return None if random_access(arg) else Shared()


LayoutRule = Callable[[Node, Fragment | None, Target], Layout | None]
"""Given a valued block node (operands placed), the tensor-core layout its operands give it and
the target: its layout, or None where the rule does not apply."""


def _converted(node: Node, own: Fragment | None, target: Target) -> Layout | None:
    """A conversion lands in shared memory (in the layout its creator chose)."""
    if node.op is not Op.CONVERT:
        return None
    return node.layout if isinstance(node.layout, Shared) else Shared()


def _computed(node: Node, own: Fragment | None, target: Target) -> Layout | None:
    """A cheap function of its coordinates on random-access operands is recomputed where read."""
    return Computed() if _computable(node) else None


def _on_fragments(node: Node, own: Fragment | None, target: Target) -> Layout | None:
    """A value on tensor-core fragments stays on them."""
    return own


def _default_registers(node: Node, own: Fragment | None, target: Target) -> Layout | None:
    return target.blocked(node.ty.numel)


LAYOUT_RULES: tuple[LayoutRule, ...] = (_converted, _computed, _on_fragments, _default_registers)


def _layout(node: Node, own: Fragment | None, target: Target) -> Layout | None:
    """The first of :data:`LAYOUT_RULES` that applies; None for a scalar or a node without a value."""
    if node.type is None or node.ty.is_scalar:
        return None
    for rule in LAYOUT_RULES:
        found = rule(node, own, target)
        if found is not None:
            return found
    return None


def _reads_own(node: Node) -> bool:
    """Ops that read their (non-gathered) operands at their own elements' coordinates."""
    return (node.op.info.category is Category.ELEMENTWISE or node.op.info.category is Category.MEMORY
            or node.op in (Op.RESHAPE, Op.DOT))


def _iteration(node: Node, layout: Layout | None, target: Target) -> Registers | None:
    """The register layout whose elements the node's code walks: its own, or for a store the
    stored value's (else the pointers' default blocked layout)."""
    if isinstance(layout, REGISTER_LAYOUTS):
        return layout
    if node.op is Op.STORE and not node.args[0].ty.is_scalar:
        return registers(node.args[1]) or target.blocked(node.args[0].ty.numel)
    return None
