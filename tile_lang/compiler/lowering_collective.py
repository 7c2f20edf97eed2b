"""Lowerings of builtins that read many elements: reductions and scans (builtin and with a
``@tl.func`` combine function), sort, histogram, gather, ``dot`` and ``dot_scaled``.

Result dtypes follow the NumPy reference (backends/tile_lang_numpy/reduction.py, linalg.py).
"""

from __future__ import annotations

from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.compiler.builder import Value
from tile_lang.compiler.ir import (
    BinaryFn, Category, CombineAttr, DotAttr, HistogramAttr, Node, Op, ParamAttr, Precision, ReduceAttr, ReduceFn, Region,
    ScanAttr, SortAttr, Type, UnaryFn,
)
from tile_lang.compiler.lowering_base import (
    Args, Context, Lowering, block, gather, lowers, node_arg, permute,
)
from tile_lang.dtypes import DType
from tile_lang.ops import forms, linalg as tllinalg, reduction as tlreduction
from tile_lang.semantics.dispatch import apply

# ---------------------------------------------------------------- reductions and scans


def _kept(c: Context, out: Node, x: Node, axis: int | None, keep_dims: bool) -> Node:
    """A reduction result with the reduced axes kept as size 1 when ``keep_dims``."""
    if not keep_dims:
        return out
    kept = tuple(1 if axis is None or i == axis else s for i, s in enumerate(x.ty.shape))
    return c.b.splat(out, kept) if axis is None else c.b.reshape(out, kept)


def _reduce(c: Context, x: Node, fn: ReduceFn, axis: int | None, keep_dims: bool, dtype: DType,
            tie_break_left: bool = True) -> Node:
    """``fn`` along ``axis``, as the rule checked it (so a scalar's is None)."""
    arg = fn in (ReduceFn.ARGMAX, ReduceFn.ARGMIN)
    if x.ty.is_scalar:
        return c.b.const(0, dtypes.I32) if arg else c.b.cast(x, dtype)
    shape = () if axis is None else x.ty.shape[:axis] + x.ty.shape[axis + 1:]
    operand = x if arg else c.b.cast(x, dtype)
    out = c.b.emit(Op.REDUCE, Type(dtype, shape), (operand,), ReduceAttr(fn, axis, tie_break_left))
    return _kept(c, out, x, axis, keep_dims)


# The REDUCTION family and tl.sum (semantics checks the axis and gives the result dtype): each
# builtin's IR function.
REDUCTIONS: dict[Any, ReduceFn] = {tlreduction.sum: ReduceFn.SUM, tlreduction.xor_sum: ReduceFn.XOR}


def reduction_lowering(fn: ReduceFn) -> Lowering:
    """The lowering of a row of :data:`REDUCTIONS`."""
    def lower(c: Context, a: Args) -> Node:
        return _reduce(c, node_arg(c.b, a["input"]), fn, a["axis"], a["keep_dims"], a["dtype"])
    return lower


for _reduced, _reduce_fn in REDUCTIONS.items():
    lowers(_reduced)(reduction_lowering(_reduce_fn))


def _extreme(fn: ReduceFn, arg_fn: ReduceFn) -> Lowering:
    def lower(c: Context, a: Args) -> Any:
        x, axis = node_arg(c.b, a["input"]), a["axis"]
        if not a["return_indices"]:
            return _reduce(c, x, fn, axis, a["keep_dims"], a["dtype"])
        value = _reduce(c, x, fn, axis, a["keep_dims"], a["dtype"])
        index = _reduce(c, x, arg_fn, axis, a["keep_dims"], dtypes.I32, a["return_indices_tie_break_left"])
        return value, index
    return lower


lowers(tlreduction.max)(_extreme(ReduceFn.MAX, ReduceFn.ARGMAX))
lowers(tlreduction.min)(_extreme(ReduceFn.MIN, ReduceFn.ARGMIN))


def _arg(fn: ReduceFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        return _reduce(c, node_arg(c.b, a["input"]), fn, a["axis"], a["keep_dims"], dtypes.I32, a["tie_break_left"])
    return lower


lowers(tlreduction.argmax)(_arg(ReduceFn.ARGMAX))
lowers(tlreduction.argmin)(_arg(ReduceFn.ARGMIN))


def _scan(fn: ReduceFn) -> Lowering:
    """A scan whose rule gave its ``axis`` and result ``dtype``."""
    def lower(c: Context, a: Args) -> Node:
        x, dtype = node_arg(c.b, a["input"]), a["dtype"]
        return c.b.emit(Op.SCAN, Type(dtype, x.ty.shape), (c.b.cast(x, dtype),), ScanAttr(fn, a["axis"], a["reverse"]))
    return lower


lowers(tlreduction.cumsum)(_scan(ReduceFn.SUM))
lowers(tlreduction.cumprod)(_scan(ReduceFn.PROD))


def _combine_inputs(c: Context, given: Any, what: str) -> tuple[tuple[Node, ...], bool]:
    """The input of ``tl.reduce``/``tl.associative_scan``: its blocks (as the rule checked
    them), and whether it came as a tuple (the result then does too)."""
    items = given if isinstance(given, tuple) else (given,)
    xs = tuple(node_arg(c.b, x) for x in items)
    return xs, isinstance(given, tuple)


def _combine_region(c: Context, fn: Any, kinds: tuple[DType, ...], what: str) -> Region:
    """The combine function inlined on scalar parameters, the N left values then the N right
    values: ``(lhs..., rhs...) -> (result...)``."""
    n = len(kinds)
    params = tuple(Node(Op.PARAM, Type(d), attr=ParamAttr(i, f"{'rhs' if i >= n else 'lhs'}{i % n}"))
                   for i, d in enumerate(kinds * 2))
    body: list[Node] = []
    with c.b.region(body):
        out = c.inline(fn.fn, params, {}, combine=fn)
        outs = out if isinstance(out, tuple) else (out,)
        apply(forms.combine_count, fn, len(outs), len(kinds), what)
        results = [c.b.to_node(o, d) if isinstance(o, (bool, int, float)) else o for o, d in zip(outs, kinds)]
    if any(n.op.info.category is Category.CONTROL for n in body):
        raise apply(forms.combine_branches, fn)
    got = [block(r) if isinstance(r, Node) else type(r).__name__ for r in results]
    apply(forms.combine_results, fn, got, kinds, what)
    return Region(params, tuple(body), tuple(results))


def _combined(outs: list[Node], as_tuple: bool) -> Any:
    """One node per input block, a tuple when the input was one."""
    return tuple(outs) if as_tuple else outs[0]


@lowers(tlreduction.reduce)
def _reduce_with(c: Context, a: Args) -> Any:
    """A tree of in-order combines, ``(x0 . x1) . (x2 . x3)``..., as the reference. A tuple input
    gives one node per block, each running the whole combine and keeping its own result."""
    xs, as_tuple = _combine_inputs(c, a["input"], "tl.reduce")
    region = _combine_region(c, a["combine_fn"], tuple(x.ty.dtype for x in xs), "tl.reduce")
    axis = a["axis"]
    if xs[0].ty.is_scalar:
        return _combined(list(xs), as_tuple)
    shape = () if axis is None else xs[0].ty.shape[:axis] + xs[0].ty.shape[axis + 1:]
    outs = [c.b.emit(Op.COMBINE_REDUCE, Type(x.ty.dtype, shape), xs, CombineAttr(axis, index=i), (region,))
            for i, x in enumerate(xs)]
    return _combined([_kept(c, out, xs[0], axis, a["keep_dims"]) for out in outs], as_tuple)


@lowers(tlreduction.associative_scan)
def _scan_with(c: Context, a: Args) -> Any:
    """Hillis-Steele along the axis (the earlier element on the left), as the reference; a tuple
    input as :func:`_reduce_with`'s."""
    xs, as_tuple = _combine_inputs(c, a["input"], "tl.associative_scan")
    region = _combine_region(c, a["combine_fn"], tuple(x.ty.dtype for x in xs), "tl.associative_scan")
    axis = a["axis"]
    return _combined([c.b.emit(Op.COMBINE_SCAN, x.ty, xs, CombineAttr(axis, bool(a["reverse"]), i), (region,))
                      for i, x in enumerate(xs)], as_tuple)


# ---------------------------------------------------------------- sort, histogram, gather


@lowers(tlreduction.sort)
def _sort(c: Context, a: Args) -> Node:
    """Along the last axis only; NaN sorts last (first when descending)."""
    x = node_arg(c.b, a["x"])
    return c.b.emit(Op.SORT, x.ty, (x,), SortAttr(bool(a["descending"])))


@lowers(tlreduction.histogram)
def _histogram(c: Context, a: Args) -> Node:
    """Counts per value in [0, num_bins); other values and masked-off lanes are ignored."""
    x = node_arg(c.b, a["input"])
    mask = None if a["mask"] is None else c.b.to_node(a["mask"])
    bins = a["num_bins"]
    args: tuple[Node, ...] = (x,)
    if mask is not None:
        args = (x, c.b.broadcast_to(mask, x.ty.shape))
    return c.b.emit(Op.HISTOGRAM, Type(dtypes.I32, (bins,)), args, HistogramAttr(bins, len(args) == 2))


@lowers(tlreduction.gather)
def _gather(c: Context, a: Args) -> Node:
    """``out[..i..] = src[..index[..i..]..]`` along ``axis``; an index outside the axis is undefined."""
    src, index = node_arg(c.b, a["src"]), node_arg(c.b, a["index"])
    return gather(c, src, index, a["axis"])


# ---------------------------------------------------------------- dot

def _zeros(c: Context, dtype: DType, shape: tuple[int, ...]) -> Node:
    return c.b.splat(c.b.const(0, dtype), shape)


def dot(c: Context, x: Node, y: Node, acc: Node, precision: Precision, imprecise: int | None = None) -> Node:
    return c.b.emit(Op.DOT, acc.ty, (x, y, acc), DotAttr(precision, imprecise))


def _tf32x3(c: Context, x: Node, y: Node, shape: tuple[int, ...]) -> Node:
    """Triton's F32DotTC split of an f32 dot into three tf32 dots: ``big = rna(x)``,
    ``small = x - big``; ``small_x @ big_y``, ``+ big_x @ small_y``, NaNs zeroed (so infinite
    inputs do not give inf - inf), ``+ big_x @ big_y``."""
    def split(v: Node) -> tuple[Node, Node]:
        big = c.b.math(UnaryFn.ROUND_TF32, v)
        return big, c.b.binary(BinaryFn.SUB, v, big)

    (x_big, x_small), (y_big, y_small) = split(x), split(y)
    partial = dot(c, x_small, y_big, _zeros(c, dtypes.F32, shape), Precision.TF32)
    partial = dot(c, x_big, y_small, partial, Precision.TF32)
    partial = c.b.where(c.b.binary(BinaryFn.NE, partial, partial), 0.0, partial)
    return dot(c, x_big, y_big, partial, Precision.TF32)


@lowers(tllinalg.dot)
def _dot(c: Context, a: Args) -> Node:
    """``x @ y + acc``; for f32 operands ``input_precision`` says what the tensor cores see."""
    x, y, shape = node_arg(c.b, a["input"]), node_arg(c.b, a["other"]), a["shape"]
    out, precision = a["out_dtype"], Precision(a["input_precision"])
    acc = None if a["acc"] is None else node_arg(c.b, a["acc"])
    if x.ty.dtype == dtypes.F32 and precision is Precision.TF32X3:
        total = _tf32x3(c, x, y, shape)
        if acc is not None:
            total = c.b.binary(BinaryFn.ADD, total, c.b.cast(acc, dtypes.F32))
        return c.b.cast(total, out)
    used = precision if x.ty.dtype == dtypes.F32 else Precision.IEEE
    return dot(c, x, y, acc if acc is not None else _zeros(c, out, shape), used, a["max_num_imprecise_acc"])


# ---------------------------------------------------------------- dot_scaled

def _scale_factors(c: Context, scale: Any, rows: int, k: int) -> Node:
    """e8m0 scales ``2**(s - 127)`` (0 is 2**-127, 255 is NaN) as f32 ``[rows, k]``, each
    repeated over its 32 K-elements."""
    s = node_arg(c.b, scale)
    bits = c.b.binary(BinaryFn.SHL, c.b.cast(s, dtypes.U32), 23)
    factor = c.b.cast(bits, dtypes.F32, bitcast=True)
    factor = c.b.where(c.b.binary(BinaryFn.EQ, s, 0), 2.0 ** -127, factor)
    factor = c.b.where(c.b.binary(BinaryFn.EQ, s, 255), float("nan"), factor)
    groups = k // tllinalg.SCALE_GROUP
    spread = c.b.broadcast_to(c.b.reshape(factor, (rows, groups, 1)), (rows, groups, tllinalg.SCALE_GROUP))
    return c.b.reshape(spread, (rows, k))


def _scaled_operand(c: Context, x: Any, scale: Any, dtype: DType, side: str) -> Node:
    """One microscaled operand (of the format's ``dtype``) as f64 with its scales applied along K
    (lhs [M, K], rhs [K, N]; scales [M|N, K/32]). An fp8 format may come as its fp8 dtype or as raw u8 bits."""
    t = node_arg(c.b, x)
    decoded = c.b.cast(c.b.cast(t, dtype, bitcast=True) if t.ty.dtype == dtypes.U8 else t, dtypes.F32)
    if scale is not None:
        oriented = decoded if side == "lhs" else permute(c, decoded, (1, 0))
        rows, k = oriented.ty.shape
        oriented = c.b.binary(BinaryFn.MUL, oriented, _scale_factors(c, scale, rows, k))
        decoded = oriented if side == "lhs" else permute(c, oriented, (1, 0))
    return c.b.cast(decoded, dtypes.F64)


@lowers(tllinalg.dot_scaled)
def _dot_scaled(c: Context, a: Args) -> Node:
    """``(lhs * 2**(lhs_scale-127)) @ (rhs * 2**(rhs_scale-127)) + acc``: products exact and summed
    in f64, rounded once to f32 (as the reference)."""
    lhs = _scaled_operand(c, a["lhs"], a["lhs_scale"], a["lhs_dtype"], "lhs")
    rhs = _scaled_operand(c, a["rhs"], a["rhs_scale"], a["rhs_dtype"], "rhs")
    shape = a["shape"]
    acc: Value = 0.0 if a["acc"] is None else node_arg(c.b, a["acc"])
    total = dot(c, lhs, rhs, c.b.broadcast_to(c.b.to_node(acc, dtypes.F64), shape), Precision.IEEE)
    return c.b.cast(total, dtypes.F32)

