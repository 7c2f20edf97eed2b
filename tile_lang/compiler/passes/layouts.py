"""Layout assignment: where each block lives, and conversions through shared memory.

Registers hold loaded and computed blocks: :class:`Blocked` in general, :class:`Mma` for the
results of ``dot`` on tensor cores and the elementwise values computed from them (so an
epilogue runs on the accumulator fragments where they are). Values that are cheap functions of
their coordinates (aranges, splats, index arithmetic) are :class:`Computed` wherever they are
used. An operand read at other threads' positions (broadcast of a loaded value, transpose, dot
operands, axis reductions, scans), or held in another register layout than its reader's, goes
through a ``CONVERT`` to :class:`Shared`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Union

from tile_lang import dtypes
from tile_lang.compiler.ir import (
    REGISTER_LAYOUTS, Blocked, Category, Computed, DotAttr, Function, IndexAttr, Layout, Mma, MmaRows, Node, Op,
    Precision, ReduceAttr, ReduceFn, Registers, Shared, UnaryAttr, UnaryFn, walk,
)
from tile_lang.compiler.rewrite import rewrite

MAX_VECTOR = 4
_CHEAP_UNARY = frozenset({UnaryFn.NEG, UnaryFn.INVERT, UnaryFn.NOT, UnaryFn.ABS})
_COMPUTABLE = frozenset({Op.ARANGE, Op.SPLAT, Op.BINARY, Op.CAST, Op.WHERE, Op.UNARY, Op.BROADCAST, Op.RESHAPE,
                         Op.PERMUTE})
_MMA_K = {dtypes.F16: 16, dtypes.BF16: 16, dtypes.F32: 8, dtypes.I8: 32}  # K of one mma.sync per operand dtype
_MMA_ACC = {dtypes.I8: dtypes.I32}  # the accumulator of mma.sync per operand dtype, f32 where not named


def blocked(numel: int, threads: int) -> Blocked:
    """The register layout of a block of ``numel`` elements over ``threads`` threads."""
    used = min(threads, numel)
    vector = min(MAX_VECTOR, numel // used)
    return Blocked(used, vector, numel // (used * vector))


@dataclass(frozen=True)
class Wgmma:
    """How a ``dot`` runs as Hopper's wgmma: A from registers (its fragments, as the result's
    rows hold them: attention's ``p``) or from swizzled shared memory, and B's shared layout."""

    a_in_registers: bool
    b: Shared


def wgmma_operands(node: Node, num_warps: int, arch: int, a_layout: Layout | None = None) -> Wgmma | None:
    """Whether a tensor-core ``dot`` runs as wgmma (sm_90a), and with which operand layouts:
    f16/bf16 or fp8 (e4m3, e5m2) operands, M a multiple of 16 rows per warp (each warpgroup of
    4 warps issues one m64 instruction per 64 rows), N a multiple of 8 up to 256. A comes from
    registers when it already sits in the matching fragments (16-bit), else K-major from shared
    memory in 128-byte swizzle panels (K a multiple of a panel: 64 16-bit or 128 fp8 elements).
    B is N-major in panels of 64 columns (16-bit, N a multiple of 64), or K-major like A (fp8
    operands are K-major only)."""
    if arch < 90 or node.op is not Op.DOT or len(node.ty.shape) != 2 or num_warps % 4:
        return None
    a, b = node.args[:2]
    (m, k), n = a.ty.shape, node.ty.shape[1]
    wide = a.ty.dtype in (dtypes.F16, dtypes.BF16)
    if not (wide or a.ty.dtype.is_fp8 and b.ty.dtype.is_fp8) or node.ty.dtype != dtypes.F32:
        return None
    panel = 128 // a.ty.dtype.itemsize
    if m % (16 * num_warps) or n % 8 or n > 256 or k % (32 // a.ty.dtype.itemsize):
        return None
    tiles = m // (16 * num_warps)
    in_registers = wide and a_layout == Mma(num_warps, 1, tiles, k // 8, interleaved=tiles > 1)
    if not in_registers and k % panel:
        return None
    if wide and n % 64 == 0:
        return Wgmma(in_registers, Shared(swizzle=True))
    return Wgmma(in_registers, Shared(swizzle=True, transposed=True)) if k % panel == 0 else None


def mma_layout(node: Node, num_warps: int, rowwise: bool = False, arch: int = 80,
               a_layout: Layout | None = None) -> Mma | None:
    """The tensor-core layout of a ``dot`` result, or None when the dot stays on CUDA cores: 2-D,
    f16/bf16 operands or f32 ones in tf32 with f32 accumulation, or i8 ones with i32 (mma.sync on
    sm_90 too), M and N multiples of 16 and 8 and K of the instruction's K. Warps split the block to keep each warp's tile square, or with
    ``rowwise`` (kernels that reduce dot results along rows, as attention's softmax does) along
    the rows first, so that every row lives in one warp and its reduction is a shuffle."""
    if node.op is not Op.DOT or not isinstance(node.attr, DotAttr):
        return None
    a = node.args[0]
    operand = a.ty.dtype
    if wgmma_operands(node, num_warps, arch, a_layout) is not None:  # fp8 runs on nothing else
        tiles = a.ty.shape[0] // (16 * num_warps)  # wgmma's accumulator: 16 rows a warp and m64 tile
        return Mma(num_warps, 1, tiles, node.ty.shape[1] // 8, interleaved=tiles > 1)
    if len(node.ty.shape) != 2 or operand not in _MMA_K or node.ty.dtype != _MMA_ACC.get(operand, dtypes.F32):
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


def _reads_anywhere(node: Node) -> tuple[int, ...]:
    """Operands this node reads at arbitrary coordinates."""
    if node.op in (Op.BROADCAST, Op.PERMUTE):
        return (0,)
    if node.op is Op.DOT:
        return (0, 1)
    if node.op in (Op.SCAN,):
        return (0,)
    if node.op is Op.REDUCE and node.type is not None and node.ty.numel > 1:
        return (0,)
    return ()


def _follows_fragments(node: Node) -> bool:
    """Ops computed element by element at their own coordinates, which can run on fragments."""
    return node.op.info.category is Category.ELEMENTWISE and node.op is not Op.ASM


Fragment = Union[Mma, MmaRows]
_ROW_REDUCTIONS = frozenset({ReduceFn.SUM, ReduceFn.MAX, ReduceFn.MIN})


def fragment(node: Node, operands: list[Layout | None], num_warps: int, rowwise: bool = False,
             arch: int = 80) -> Fragment | None:
    """The tensor-core layout ``node`` takes given its operands' layouts, or None: dots on tensor
    cores; row reductions of fragments (``tl.max(qk, 1)``) and their ``[:, None]`` views; the
    broadcast of such a row back over its block; elementwise ops on fragments."""
    if node.type is None or node.ty.is_scalar:
        return None
    if node.op is Op.DOT:
        return mma_layout(node, num_warps, rowwise, arch, operands[0] if operands else None)
    source = operands[0] if operands else None
    if node.op is Op.REDUCE and isinstance(node.attr, ReduceAttr) and isinstance(source, Mma):
        by_row = node.attr.axis == 1 and node.attr.fn in _ROW_REDUCTIONS and source.warps_n == 1
        return MmaRows.of(source) if by_row and node.ty.shape == (source.shape[0],) else None
    if node.op is Op.RESHAPE and isinstance(source, MmaRows):
        return source if node.ty.shape in ((source.rows,), (source.rows, 1)) else None
    if node.op is Op.BROADCAST and isinstance(source, MmaRows) and len(node.ty.shape) == 2:
        height, cols = node.ty.shape
        if height != source.rows or cols % (8 * source.warps_n):
            return None
        return Mma(source.warps_m, source.warps_n, source.tiles_m, cols // (8 * source.warps_n), source.interleaved)
    if _follows_fragments(node):
        found = [lay for lay in operands if isinstance(lay, (Mma, MmaRows))]
        return found[0] if found else None
    return None


def reduces_rows(fn: Function) -> bool:
    """Whether ``fn`` reduces the rows of a dot result (a softmax over ``q @ k.T``)."""
    memo: dict[Node, Fragment | None] = {}
    return any(n.op is Op.REDUCE and isinstance(n.attr, ReduceAttr) and n.attr.axis == 1
               and isinstance(_fragment_of(n.args[0], fn.num_warps, {}, memo, False), Mma) for n in walk(fn.body))


def _carried_fragments(fn: Function, rowwise: bool) -> dict[Node, Fragment]:
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
            layout = _fragment_of(value, fn.num_warps, found, memo, rowwise, fn.arch)
            if layout is not None:
                found[param] = layout
        if seen == found:
            break
    return found


def _fragment_of(node: Node, num_warps: int, params: dict[Node, Fragment],
                 memo: dict[Node, Fragment | None], rowwise: bool, arch: int = 80) -> Fragment | None:
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
            None if a.ty.is_scalar else _fragment_of(a, num_warps, params, memo, rowwise, arch) for a in node.args]
        layout = fragment(node, operands, num_warps, rowwise, arch)
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
    threads = fn.threads
    rowwise = reduces_rows(fn)
    carried = _carried_fragments(fn, rowwise)

    def convert(value: Node, body: list[Node], layout: Shared = Shared()) -> Node:
        conv = Node(Op.CONVERT, value.ty, (value,), loc=value.loc, layout=layout)
        body.append(conv)
        return conv

    def rule(node: Node, body: list[Node]) -> Node:
        if node.op is Op.PARAM and node.type is not None and not node.ty.is_scalar:
            return replace(node, layout=carried.get(node) or blocked(node.ty.numel, threads))
        if node.op is Op.RESULT and node.type is not None and not node.ty.is_scalar:
            return replace(node, layout=_result_layout(node) or blocked(node.ty.numel, threads))
        if node.type is not None and node.ty.is_scalar and node.op is not Op.STORE:
            return node
        args = list(node.args)
        own_fragment = fragment(node, [None if a.ty.is_scalar else a.layout for a in args], fn.num_warps, rowwise,
                                fn.arch)
        mma = own_fragment if node.op is Op.DOT else None
        gathered: tuple[int, ...] = (0, 1) if mma is not None else (
            () if own_fragment is not None else _reads_anywhere(node))
        wgmma = wgmma_operands(node, fn.num_warps, fn.arch, args[0].layout) if mma is not None else None
        for i in gathered:
            if wgmma is not None:
                if i == 1 or not wgmma.a_in_registers:
                    args[i] = convert(args[i], body, wgmma.b if i == 1 else Shared(swizzle=True))
            elif isinstance(mma, Mma):
                args[i] = convert(args[i], body, Shared(operand_pad(args[i].ty.dtype, args[i].ty.shape[-1], i)))
            elif not random_access(args[i]):
                args[i] = convert(args[i], body)
        node = replace(node, args=tuple(args)) if tuple(args) != node.args else node
        layout = _layout(node, own_fragment, threads)
        walked = _iteration(node, layout, threads)
        if walked is not None and _reads_own(node):
            for i, arg in enumerate(args):
                mine = registers(arg)
                if i not in gathered and mine is not None and mine != walked:
                    args[i] = convert(arg, body)  # held in another register layout than the reader's
            node = replace(node, args=tuple(args)) if tuple(args) != node.args else node
            if layout is not None and not isinstance(layout, Shared) and node.op is not Op.CONVERT:
                layout = _layout(node, own_fragment, threads)  # a converted operand may make it computable
        return node if layout is None else replace(node, layout=layout)

    return rewrite(fn, rule)


def _layout(node: Node, own_fragment: Fragment | None, threads: int) -> Layout | None:
    if node.type is None or node.ty.is_scalar:
        return None
    if node.op is Op.CONVERT:
        return node.layout if isinstance(node.layout, Shared) else Shared()
    if _computable(node):
        return Computed()
    if own_fragment is not None:
        return own_fragment
    return blocked(node.ty.numel, threads)


def _reads_own(node: Node) -> bool:
    """Ops that read their (non-gathered) operands at their own elements' coordinates."""
    return (node.op.info.category is Category.ELEMENTWISE or node.op.info.category is Category.MEMORY
            or node.op in (Op.RESHAPE, Op.DOT))


def _iteration(node: Node, layout: Layout | None, threads: int) -> Registers | None:
    """The register layout whose elements the node's code walks: its own, or for a store the
    stored value's (else the pointers' default blocked layout)."""
    if isinstance(layout, REGISTER_LAYOUTS):
        return layout
    if node.op is Op.STORE and not node.args[0].ty.is_scalar:
        return registers(node.args[1]) or blocked(node.args[0].ty.numel, threads)
    return None
