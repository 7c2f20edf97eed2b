"""Builtins to IR: one function per ``tl.*`` builtin, registered with ``@lowers(tl.x)``.

This module holds the elementwise, shape, random and debugging builtins;
:mod:`lowering_memory` (loads, stores, atomics, block pointers, descriptors) and
:mod:`lowering_collective` (reductions, scans, sort, histogram, dot) register the rest, and
importing this module imports them, so its :data:`LOWERINGS` is complete but for what
:data:`CAPABILITIES` declares. The registry and the helpers the three share live below them in
:mod:`lowering_base`.
Each lowering checks its arguments as the NumPy reference does, so misuse is a KernelError at
the user's line.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import tile_lang.compiler.lowering_collective  # noqa: F401 (registers its lowerings)
import tile_lang.compiler.lowering_memory  # noqa: F401 (registers its lowerings)
import tile_lang.dtypes as dtypes
import tile_lang.operators as operators
from tile_lang.builtin import Family, builtin_of
from tile_lang.compiler.builder import Value, broadcast_shapes
from tile_lang.compiler.lowering_base import (
    LOWERINGS as LOWERINGS, Args, Context, Lowering, constant, dtype_arg, gather, lowers, node_arg,
    permute,
)
from tile_lang.compiler.ir import (
    AssertAttr, AsmAttr, BinaryFn, HintAttr, LibAttr, LibFn, Node, Op, PrintAttr, RandAttr, RandFn, Type, UnaryFn,
)
from tile_lang.ops import (
    conversions, creation as tlcreation, debug, libdevice as ld, math as tlmath, random as tlrandom,
)
from tile_lang.ops import reduction as tlreduction
from tile_lang.ops import shape as tlshape
from tile_lang.semantics import shape as shapes
from tile_lang.semantics.dispatch import lacking

SYNTAX = "Python syntax the front end compiles itself"
NUMPY = "run the kernel on the numpy backend"
CAPABILITIES = lacking("the CUDA backend", {
    operators.truth: f"{SYNTAX} (write `if x:`)",
    operators.index: f"{SYNTAX} (use the scalar as a range bound)",
    operators.subscript: f"{SYNTAX} (write `x[:, None]`)",
}, {
    dtypes.F8E4B15: f"Triton refuses tl.float8e4b15 from compute capability 9.0 (Hopper, an H200) on; {NUMPY}",
    dtypes.F8E4B8: f"tl.float8e4b8 is an AMD format, which Triton compiles for HIP only; {NUMPY}",
    dtypes.F8E5B16: f"tl.float8e5b16 is an AMD format, which Triton compiles for HIP only; {NUMPY}",
})
"""The builtins the compiler does not lower (every other builtin has a lowering) and the dtypes
it has no CUDA type for (Triton's choices on an H200)."""


# ---------------------------------------------------------------- creation


@lowers(tlcreation.program_id)
def _program_id(c: Context, a: Args) -> Node:
    return c.b.program_id(Op.PROGRAM_ID, a["axis"])


@lowers(tlcreation.num_programs)
def _num_programs(c: Context, a: Args) -> Node:
    return c.b.program_id(Op.NUM_PROGRAMS, a["axis"])


@lowers(tlcreation.arange)
def _arange(c: Context, a: Args) -> Node:
    return c.b.arange(a["start"], a["end"])


@lowers(tlcreation.zeros, tlcreation.full, tlcreation.full_like)
def _full(c: Context, a: Args) -> Node:
    """A block of the rule's ``shape`` and ``dtype`` holding its ``constant``, or the runtime
    scalar ``value`` cast to ``dtype``."""
    dtype, constant = a["dtype"], a["constant"]
    return c.b.splat(c.b.to_node(a["value"], dtype) if constant is None else c.b.const(constant, dtype), tuple(a["shape"]))


@lowers(tlcreation.cast)
def _cast(c: Context, a: Args) -> Node:
    return c.b.cast(node_arg(c.b, a["input"]), a["dtype"], a["bitcast"], a["to_zero"])


# ---------------------------------------------------------------- operators (used by library helpers)


@lowers(operators.binary)
def _binary(c: Context, a: Args) -> Value:
    return c.b.binary_op(a["op"], a["x"], a["y"])


@lowers(operators.unary)
def _unary(c: Context, a: Args) -> Value:
    return c.b.unary_op(a["op"], node_arg(c.b, a["x"]))


# ---------------------------------------------------------------- math

# The UNARY_MATH family (semantics checks the operand is a float block): each builtin's IR function,
# the UnaryFn of its name (``tl.tanh``: UnaryFn.TANH), so a new function's row is its UnaryFn member.
MATH: dict[Callable[..., Any], UnaryFn] = {
    fn: UnaryFn(op.name) for fn in vars(tlmath).values()
    if (op := builtin_of(fn)) is not None and op.family is Family.UNARY_MATH
}


def unary_math(fn: UnaryFn) -> Lowering:
    """The lowering of a row of :data:`MATH`."""
    return lambda c, a: c.b.math(fn, node_arg(c.b, a["x"]))


for _math_fn, _ir_fn in MATH.items():
    lowers(_math_fn)(unary_math(_ir_fn))


# The LIBDEVICE family (semantics picks the overload: the operands' dtypes and the result's): each
# function's IR function, the LibFn of its name (``libdevice.pow``: LibFn.POW; ``double2float_rn``:
# LibFn.DOUBLE2FLOAT_RN), so a new function's row is its LibFn member.
LIBDEVICE: dict[Callable[..., Any], LibFn] = {
    fn: LibFn(op.name) for module in (ld, conversions) for fn in vars(module).values()
    if (op := builtin_of(fn)) is not None and op.family is Family.LIBDEVICE
}


def libdevice(fn: LibFn, params: tuple[str, ...]) -> Lowering:
    """The lowering of a row of :data:`LIBDEVICE` whose operands are the parameters ``params``."""
    def lower(c: Context, a: Args) -> Node:
        return c.b.elementwise(Op.LIBDEVICE, tuple(a[p] for p in params), a["dtype"], LibAttr(fn), a["dtypes"])
    return lower


for _lib_fn, _lib_ir in LIBDEVICE.items():
    lowers(_lib_fn)(libdevice(_lib_ir, tuple(inspect.signature(_lib_fn).parameters)))


@lowers(tlmath.abs)
def _abs(c: Context, a: Args) -> Node:
    return c.b.unary(UnaryFn.ABS, node_arg(c.b, a["x"]))


def _minmax(c: Context, a: Args, fn: BinaryFn, nan_fn: BinaryFn) -> Node:
    return c.b.binary(nan_fn if a["propagate_nan"] else fn, a["x"], a["y"], dtype=a["dtype"])


@lowers(tlmath.maximum)
def _maximum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MAX, BinaryFn.MAX_NAN)


@lowers(tlmath.minimum)
def _minimum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MIN, BinaryFn.MIN_NAN)


@lowers(tlmath.clamp)
def _clamp(c: Context, a: Args) -> Node:
    nan, dtype = a["propagate_nan"], a["dtype"]
    low = c.b.binary(BinaryFn.MAX_NAN if nan else BinaryFn.MAX, a["x"], a["min"], dtype=dtype)
    return c.b.binary(BinaryFn.MIN_NAN if nan else BinaryFn.MIN, low, a["max"], dtype=dtype)


@lowers(tlmath.fma)
def _fma(c: Context, a: Args) -> Node:
    return c.b.elementwise(Op.FMA, (a["x"], a["y"], a["z"]), a["dtype"])


@lowers(tlmath.fdiv)
def _fdiv(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.DIV_RN if a["ieee_rounding"] else BinaryFn.DIV, a["x"], a["y"], true_div=True)


@lowers(tlmath.div_rn)
def _div_rn(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.DIV_RN, a["x"], a["y"], true_div=True)


@lowers(tlmath.umulhi)
def _umulhi(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.UMULHI, a["x"], a["y"])


@lowers(tlmath.where)
def _where(c: Context, a: Args) -> Node:
    return c.b.where(a["condition"], a["x"], a["y"])


@lowers(tlmath._min_int)
def _min_int(c: Context, a: Args) -> Value:
    x: Value = a["a"]
    y: Value = a["b"]
    if not isinstance(x, Node) and not isinstance(y, Node):
        return min(x, y)
    return c.b.binary(BinaryFn.MIN, x, y)


# ---------------------------------------------------------------- shapes


@lowers(tlshape.broadcast_to)
def _broadcast_to(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return c.b.broadcast_to(x, a["shape"])


@lowers(tlshape.broadcast)
def _broadcast(c: Context, a: Args) -> tuple[Node, Node]:
    x = node_arg(c.b, a["input"])
    y = c.b.to_node(a["other"], None if isinstance(a["other"], Node) else x.ty.dtype)
    return c.b.broadcast_to(x, a["shape"]), c.b.broadcast_to(y, a["shape"])


@lowers(tlshape.expand_dims)
def _expand_dims(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return _reshaped(c, x, shapes.expanded(x.ty.shape, a["axis"]))


def _reshaped(c: Context, x: Node, shape: tuple[int, ...]) -> Node:
    return c.b.reshape(x, shape) if x.ty.shape else c.b.splat(x, shape)


@lowers(tlshape.reshape, tlshape.view)
def _reshape(c: Context, a: Args) -> Node:
    return _reshaped(c, node_arg(c.b, a["input"]), a["shape"])


@lowers(tlshape.ravel)
def _ravel(c: Context, a: Args) -> Node:
    return _reshaped(c, node_arg(c.b, a["x"]), a["shape"])


@lowers(tlshape.permute, tlshape.trans)
def _permute(c: Context, a: Args) -> Node:
    return permute(c, node_arg(c.b, a["input"]), a["dims"])


def _positions(c: Context, shape: tuple[int, ...], axis: int, value: Callable[[Node], Value]) -> Node:
    """A computed i32 block of ``shape`` holding ``value(arange)`` along ``axis``."""
    along = c.b.to_node(value(c.b.arange(0, shape[axis])), dtypes.I32)
    dims = tuple(shape[axis] if d == axis else 1 for d in range(len(shape)))
    return c.b.broadcast_to(c.b.reshape(along, dims), shape)


@lowers(tlreduction.flip)
def _flip(c: Context, a: Args) -> Node:
    x, axis = node_arg(c.b, a["x"]), a["dim"]
    last = x.ty.shape[axis] - 1
    return gather(c, x, _positions(c, x.ty.shape, axis, lambda i: c.b.binary_op(operators.BinaryOp.SUB, last, i)), axis)


def _pair(c: Context, a: Args) -> tuple[Node, Node]:
    """``a`` and ``b`` of join/interleave: one dtype, broadcast together."""
    x = node_arg(c.b, a["a"])
    y = c.b.to_node(a["b"], None if isinstance(a["b"], Node) else x.ty.dtype)
    return c.b.broadcast_to(x, a["shape"]), c.b.broadcast_to(y, a["shape"])


def join(c: Context, x: Node, y: Node) -> Node:
    """Two blocks of one shape stacked along a new last axis of size 2."""
    shape = x.ty.shape + (2,)
    parts = [c.b.broadcast_to(c.b.expand_dims(v, len(x.ty.shape)), shape) for v in (x, y)]
    first = _positions(c, shape, len(shape) - 1, lambda i: c.b.binary(BinaryFn.EQ, i, 0))
    return c.b.emit(Op.WHERE, Type(x.ty.dtype, shape), (c.b.truth(first), parts[0], parts[1]))


@lowers(tlshape.join)
def _join(c: Context, a: Args) -> Node:
    return join(c, *_pair(c, a))


@lowers(tlshape.interleave)
def _interleave(c: Context, a: Args) -> Node:
    joined = join(c, *_pair(c, a))
    if len(joined.ty.shape) == 1:
        return joined
    return c.b.reshape(joined, joined.ty.shape[:-2] + (2 * joined.ty.shape[-2],))


@lowers(tlshape.split)
def _split(c: Context, a: Args) -> tuple[Node, Node]:
    x = node_arg(c.b, a["a"])
    axis = len(x.ty.shape) - 1
    pick = x.ty.shape[:-1] + (1,)

    def half(j: int) -> Node:
        index = c.b.splat(c.b.const(j, dtypes.I32), pick)
        return c.b.reshape(gather(c, x, index, axis), x.ty.shape[:-1])

    return half(0), half(1)


@lowers(tlshape.cat)
def _cat(c: Context, a: Args) -> Node:
    """Concatenation along the first axis: join, move the new axis first, merge it in."""
    x = node_arg(c.b, a["input"])
    y = c.b.to_node(a["other"], None if isinstance(a["other"], Node) else x.ty.dtype)
    shape = a["shape"]
    joined = join(c, x, y)
    rank = len(joined.ty.shape)
    moved = permute(c, joined, (rank - 1, *range(rank - 1)))
    return c.b.reshape(moved, shape)


# ---------------------------------------------------------------- random numbers


def _random_operands(c: Context, a: Args) -> tuple[Node, Node, int]:
    """The seed (u64, sign-extended, splat to the offsets' shape), the offsets and the rounds."""
    seed, offset, shape = c.b.to_node(a["seed"]), node_arg(c.b, a["offset"]), a["shape"]
    seed = c.b.broadcast_to(c.b.cast(seed, dtypes.U64), shape)
    return seed, c.b.broadcast_to(offset, shape), a["n_rounds"]


def _rand(fn: RandFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        seed, offset, rounds = _random_operands(c, a)
        out = dtypes.U32 if fn is RandFn.RANDINT else dtypes.F32
        return c.b.emit(Op.RAND, Type(out, offset.ty.shape), (seed, offset), RandAttr(fn, rounds))
    return lower


lowers(tlrandom.randint)(_rand(RandFn.RANDINT))
lowers(tlrandom.rand)(_rand(RandFn.RAND))
lowers(tlrandom.randn)(_rand(RandFn.RANDN))


@lowers(tlrandom.randint4x)
def _randint4x(c: Context, a: Args) -> tuple[Node, ...]:
    seed, offset, rounds = _random_operands(c, a)
    return tuple(c.b.emit(Op.RAND, Type(dtypes.U32, offset.ty.shape), (seed, offset),
                          RandAttr(RandFn.RANDINT, rounds, lane)) for lane in range(4))


# ---------------------------------------------------------------- hints and debugging


def _hint(kind: str) -> Lowering:
    """The input with the promise the rule checked attached (``Op.HINT``), which axis info adds to
    what it derives, as Triton's does: vector widths and copies then rely on it (the reference
    checks every promise; a Python int input promises nothing the compiler uses)."""
    def lower(c: Context, a: Args) -> Any:
        x = a["input"]
        if not isinstance(x, Node):
            return x
        return c.b.emit(Op.HINT, x.ty, (x,), HintAttr(kind, tuple(a["per_axis"])))
    return lower


lowers(debug.multiple_of)(_hint("multiple_of"))
lowers(debug.max_contiguous)(_hint("max_contiguous"))
lowers(debug.max_constancy)(_hint("max_constancy"))


@lowers(debug.assume, debug.gdc_wait, debug.gdc_launch_dependents)
def _nothing(c: Context, a: Args) -> None:
    """No code: an assumption the compiler does not use, or a grid dependence no launch makes."""
    return None


@lowers(debug.debug_barrier)
def _barrier(c: Context, a: Args) -> None:
    c.b.emit(Op.BARRIER, None)


@lowers(debug.static_assert)
def _static_assert(c: Context, a: Args) -> None:
    if isinstance(a["cond"], Node):
        raise c.error("tl.static_assert needs a compile-time condition")
    if not a["cond"]:
        raise c.error(f"static_assert failed{': ' + a['msg'] if a['msg'] else ''}")


@lowers(debug.static_print)
def _static_print(c: Context, a: Args) -> None:
    print(*a["values"])


def _bool_block(c: Context, value: Any, what: str) -> Node:
    node = c.b.to_node(value)
    if not node.ty.dtype.is_bool:
        raise c.error(f"tl.{what} needs a bool condition (a comparison), got {node.ty}")
    return node


@lowers(debug.device_assert)
def _device_assert(c: Context, a: Args) -> None:
    """Checked on every element; with a mask, only where the mask is true."""
    ok = _bool_block(c, a["cond"], "device_assert")
    if a["mask"] is not None:
        live = _bool_block(c, a["mask"], "device_assert")
        ok = c.b.binary(BinaryFn.OR, ok, c.b.unary(UnaryFn.NOT, live))
    c.b.emit(Op.ASSERT, None, (ok,), AssertAttr(str(a["msg"] or "")))


@lowers(debug.device_print)
def _device_print(c: Context, a: Args) -> None:
    """One line per element (per program for scalars), as Triton prints on the GPU; compile-time
    values are printed as text (the prefix as the rule normalised it)."""
    values = tuple(a["args"])
    nodes = [v for v in values if isinstance(v, Node)]
    shape: tuple[int, ...] = ()
    for n in nodes:
        shape = broadcast_shapes(shape, n.ty.shape)
    items = tuple(None if isinstance(v, Node) else str(v) for v in values)
    operands = tuple(c.b.broadcast_to(n, shape) for n in nodes)
    c.b.emit(Op.PRINT, None, operands, PrintAttr(a["prefix"], items, bool(a["hex"])))


@lowers(debug.inline_asm_elementwise)
def _inline_asm(c: Context, a: Args) -> Any:
    """PTX applied elementwise to the broadcast arguments; a tuple ``dtype`` gives a tuple."""
    args = [node_arg(c.b, v) for v in a["args"]]
    shape: tuple[int, ...] = ()
    for n in args:
        shape = broadcast_shapes(shape, n.ty.shape)
    operands = tuple(c.b.broadcast_to(n, shape) for n in args)
    many = isinstance(a["dtype"], (tuple, list))
    outs = [dtype_arg(d) for d in (a["dtype"] if many else (a["dtype"],))]
    pack = constant(c, a["pack"], "tl.inline_asm_elementwise", "pack")
    if pack < 1 or (shape and shape[-1] % pack):
        raise c.error(f"tl.inline_asm_elementwise: pack={pack} must divide the last block dimension {list(shape)}")
    attr = AsmAttr(str(a["asm"]), str(a["constraints"]), pack, bool(a["is_pure"]), tuple(outs))
    results = tuple(c.b.emit(Op.ASM, Type(d, shape), operands, replace(attr, output=i))
                    for i, d in enumerate(outs))
    return results if many else results[0]

