"""Builtins to IR: one function per ``tl.*`` builtin, registered with ``@lowers(tl.x)``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import tile_lang as tl
from tile_lang import dtypes, operators
from tile_lang.builtin import Builtin, builtin_of
from tile_lang.compiler.builder import Builder, Value
from tile_lang.compiler.ir import (
    AtomicAttr, AtomicFn, BinaryFn, DotAttr, MemAttr, Node, Op, Precision, RandAttr, RandFn, ReduceAttr, ReduceFn,
    ScanAttr, Scope, Sem, Type, UnaryFn,
)
from tile_lang.dtypes import DType
from tile_lang.ops import debug, math as tlmath, random as tlrandom


class Context(Protocol):
    b: Builder

    def error(self, message: str) -> Exception: ...


Args = Mapping[str, Any]
Lowering = Callable[[Context, Args], Any]
LOWERINGS: dict[Builtin, Lowering] = {}


def lowers(*functions: Callable[..., Any]) -> Callable[[Lowering], Lowering]:
    def register(impl: Lowering) -> Lowering:
        for fn in functions:
            LOWERINGS[_builtin(fn)] = impl
        return impl
    return register


def _builtin(fn: object) -> Builtin:
    op = builtin_of(fn)
    assert op is not None, fn
    return op


def _dtype(marker: Any) -> DType:
    return dtypes.dtype_of(marker)


def _node(b: Builder, value: Value) -> Node:
    return b.to_node(value)


# ---------------------------------------------------------------- creation


@lowers(tl.program_id)
def _program_id(c: Context, a: Args) -> Node:
    return c.b.program_id(Op.PROGRAM_ID, a["axis"])


@lowers(tl.num_programs)
def _num_programs(c: Context, a: Args) -> Node:
    return c.b.program_id(Op.NUM_PROGRAMS, a["axis"])


@lowers(tl.arange)
def _arange(c: Context, a: Args) -> Node:
    if isinstance(a["start"], Node) or isinstance(a["end"], Node):
        raise c.error("tl.arange needs compile-time bounds")
    return c.b.arange(a["start"], a["end"])


def _full(b: Builder, shape: tuple[int, ...], value: Value, dtype: DType) -> Node:
    return b.splat(b.to_node(value, dtype), tuple(shape))


@lowers(tl.zeros)
def _zeros(c: Context, a: Args) -> Node:
    return _full(c.b, a["shape"], 0, _dtype(a["dtype"]))


@lowers(tl.full)
def _full_builtin(c: Context, a: Args) -> Node:
    return _full(c.b, a["shape"], a["value"], _dtype(a["dtype"]))


@lowers(tl.full_like)
def _full_like(c: Context, a: Args) -> Node:
    like: Node = a["input"]
    return _full(c.b, like.ty.shape, a["value"], like.ty.dtype)


@lowers(tl.cast)
def _cast(c: Context, a: Args) -> Node:
    rounding = a["fp_downcast_rounding"]
    if rounding not in (None, "rtne", "rtz"):
        raise c.error(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
    return c.b.cast(_node(c.b, a["input"]), _dtype(a["dtype"]), a["bitcast"], rounding == "rtz")


# ---------------------------------------------------------------- operators (used by library helpers)


@lowers(operators.binary)
def _binary(c: Context, a: Args) -> Value:
    return c.b.binary_op(a["op"], a["x"], a["y"])


@lowers(operators.unary)
def _unary(c: Context, a: Args) -> Value:
    fns = {operators.UnaryOp.NEG: UnaryFn.NEG, operators.UnaryOp.INVERT: UnaryFn.INVERT}
    x: Value = a["x"]
    if a["op"] is operators.UnaryOp.POS:
        return x
    return c.b.unary(fns[a["op"]], _node(c.b, x))


# ---------------------------------------------------------------- math

_MATH = {tl.exp: UnaryFn.EXP, tl.exp2: UnaryFn.EXP2, tl.log: UnaryFn.LOG, tl.log2: UnaryFn.LOG2, tl.sin: UnaryFn.SIN,
         tl.cos: UnaryFn.COS, tl.sqrt: UnaryFn.SQRT, tl.sqrt_rn: UnaryFn.SQRT_RN, tl.rsqrt: UnaryFn.RSQRT,
         tl.erf: UnaryFn.ERF, tl.atan: UnaryFn.ATAN, tl.ceil: UnaryFn.CEIL, tl.floor: UnaryFn.FLOOR}


def _math_lowering(fn: UnaryFn) -> Lowering:
    return lambda c, a: c.b.math(fn, a["x"])


for _fn, _unary_fn in _MATH.items():
    lowers(_fn)(_math_lowering(_unary_fn))


@lowers(tl.abs)
def _abs(c: Context, a: Args) -> Node:
    return c.b.unary(UnaryFn.ABS, _node(c.b, a["x"]))


def _minmax(c: Context, a: Args, fn: BinaryFn, nan_fn: BinaryFn) -> Node:
    return c.b.binary(nan_fn if a["propagate_nan"] else fn, a["x"], a["y"])


@lowers(tl.maximum)
def _maximum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MAX, BinaryFn.MAX_NAN)


@lowers(tl.minimum)
def _minimum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MIN, BinaryFn.MIN_NAN)


@lowers(tl.clamp)
def _clamp(c: Context, a: Args) -> Node:
    nan = a["propagate_nan"]
    low = c.b.binary(BinaryFn.MAX_NAN if nan else BinaryFn.MAX, a["x"], a["min"])
    return c.b.binary(BinaryFn.MIN_NAN if nan else BinaryFn.MIN, low, a["max"])


@lowers(tl.fma)
def _fma(c: Context, a: Args) -> Node:
    x = _node(c.b, a["x"])
    return c.b.elementwise(Op.FMA, (x, a["y"], a["z"]), x.ty.dtype)


@lowers(tl.fdiv)
def _fdiv(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.DIV_RN if a["ieee_rounding"] else BinaryFn.DIV, a["x"], a["y"], true_div=True)


@lowers(tl.div_rn)
def _div_rn(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.DIV_RN, a["x"], a["y"], true_div=True)


@lowers(tl.umulhi)
def _umulhi(c: Context, a: Args) -> Node:
    return c.b.binary(BinaryFn.UMULHI, a["x"], a["y"])


@lowers(tl.where)
def _where(c: Context, a: Args) -> Node:
    return c.b.where(a["condition"], a["x"], a["y"])


@lowers(tlmath._min_int)
def _min_int(c: Context, a: Args) -> Value:
    x: Value = a["a"]
    y: Value = a["b"]
    if not isinstance(x, Node) and not isinstance(y, Node):
        return min(x, y)
    return c.b.binary(BinaryFn.MIN, x, y)


# ---------------------------------------------------------------- memory


def _mask(b: Builder, mask: Value | None, shape: tuple[int, ...]) -> Node | None:
    if mask is None:
        return None
    return b.broadcast_to(b.truth(b.to_node(mask)), shape)


def _pointer(c: Context, pointer: Any, mask: Any) -> Node:
    if not isinstance(pointer, Node) or not pointer.ty.dtype.is_pointer:
        raise c.error(f"expected a pointer or a block of pointers, got {pointer!r}")
    if isinstance(mask, Node) and len(mask.ty.shape) > len(pointer.ty.shape):
        return c.b.broadcast_to(pointer, mask.ty.shape)
    return pointer


@lowers(tl.load)
def _load(c: Context, a: Args) -> Node:
    ptr = _pointer(c, a["pointer"], a["mask"])
    element = ptr.ty.dtype.element
    assert element is not None
    mask = _mask(c.b, a["mask"], ptr.ty.shape)
    other = None
    if a["other"] is not None:
        other = c.b.broadcast_to(c.b.to_node(a["other"], element), ptr.ty.shape)
        if mask is None:
            other = None
    args = tuple(x for x in (ptr, mask, other) if x is not None)
    attr = MemAttr(mask is not None, other is not None, volatile=bool(a["volatile"]))
    return c.b.emit(Op.LOAD, Type(element, ptr.ty.shape), args, attr)


@lowers(tl.store)
def _store(c: Context, a: Args) -> None:
    ptr = _pointer(c, a["pointer"], a["mask"])
    element = ptr.ty.dtype.element
    assert element is not None
    value = c.b.broadcast_to(c.b.to_node(a["value"], element), ptr.ty.shape)
    mask = _mask(c.b, a["mask"], ptr.ty.shape)
    args = (ptr, value) if mask is None else (ptr, value, mask)
    c.b.emit(Op.STORE, None, args, MemAttr(mask is not None))


def _atomic_lowering(fn: AtomicFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        ptr = _pointer(c, a["pointer"], a.get("mask"))
        element = ptr.ty.dtype.element
        assert element is not None
        operands = [c.b.broadcast_to(c.b.to_node(a[k], element), ptr.ty.shape)
                    for k in (("cmp", "val") if fn is AtomicFn.CAS else ("val",))]
        mask = _mask(c.b, a.get("mask"), ptr.ty.shape)
        sem, scope = Sem(a["sem"] or "acq_rel"), Scope(a["scope"] or "gpu")
        args = (ptr, *operands) + ((mask,) if mask is not None else ())
        return c.b.emit(Op.ATOMIC, Type(element, ptr.ty.shape), args, AtomicAttr(fn, sem, scope, mask is not None))
    return lower


_ATOMICS: dict[object, AtomicFn] = {tl.atomic_add: AtomicFn.ADD, tl.atomic_max: AtomicFn.MAX, tl.atomic_min: AtomicFn.MIN,
                        tl.atomic_and: AtomicFn.AND, tl.atomic_or: AtomicFn.OR, tl.atomic_xor: AtomicFn.XOR,
                        tl.atomic_xchg: AtomicFn.XCHG, tl.atomic_cas: AtomicFn.CAS}
for _atomic, _atomic_fn in _ATOMICS.items():
    LOWERINGS[_builtin(_atomic)] = _atomic_lowering(_atomic_fn)


# ---------------------------------------------------------------- shapes


@lowers(tl.broadcast_to)
def _broadcast_to(c: Context, a: Args) -> Node:
    return c.b.broadcast_to(_node(c.b, a["input"]), tuple(a["shape"]))


@lowers(tl.broadcast)
def _broadcast(c: Context, a: Args) -> tuple[Node, Node]:
    from tile_lang.compiler.builder import broadcast_shapes
    x, y = _node(c.b, a["input"]), _node(c.b, a["other"])
    shape = broadcast_shapes(x.ty.shape, y.ty.shape)
    return c.b.broadcast_to(x, shape), c.b.broadcast_to(y, shape)


@lowers(tl.expand_dims)
def _expand_dims(c: Context, a: Args) -> Node:
    return c.b.expand_dims(_node(c.b, a["input"]), a["axis"])


@lowers(tl.reshape, tl.view)
def _reshape(c: Context, a: Args) -> Node:
    return c.b.reshape(_node(c.b, a["input"]), tuple(a["shape"]))


@lowers(tl.ravel)
def _ravel(c: Context, a: Args) -> Node:
    x = _node(c.b, a["x"])
    return c.b.reshape(x, (x.ty.numel,))


def _permute(c: Context, x: Node, dims: tuple[int, ...]) -> Node:
    from tile_lang.compiler.ir import PermuteAttr
    if sorted(dims) != list(range(len(x.ty.shape))):
        raise c.error(f"permutation {list(dims)} does not match a block of rank {len(x.ty.shape)}")
    if dims == tuple(range(len(dims))):
        return x
    shape = tuple(x.ty.shape[d] for d in dims)
    return c.b.emit(Op.PERMUTE, x.ty.with_shape(shape), (x,), PermuteAttr(dims))


@lowers(tl.permute)
def _permute_builtin(c: Context, a: Args) -> Node:
    return _permute(c, _node(c.b, a["input"]), tuple(a["dims"]))


@lowers(tl.trans)
def _trans(c: Context, a: Args) -> Node:
    x = _node(c.b, a["input"])
    dims = tuple(a["dims"]) or tuple(reversed(range(len(x.ty.shape))))
    return _permute(c, x, dims)


# ---------------------------------------------------------------- reductions and scans


def _axis(c: Context, x: Node, axis: int | None) -> int | None:
    if axis is None:
        return None
    rank = len(x.ty.shape)
    if not -rank <= axis < rank:
        raise c.error(f"axis {axis} is out of range for a block of rank {rank}")
    return axis % rank


def _reduce(c: Context, x: Node, fn: ReduceFn, axis: int | None, keep_dims: bool, dtype: DType,
            tie_break_left: bool = True) -> Node:
    if x.ty.is_scalar:
        return x if fn not in (ReduceFn.ARGMAX, ReduceFn.ARGMIN) else c.b.const(0, dtypes.I32)
    ax = _axis(c, x, axis)
    shape = () if ax is None else x.ty.shape[:ax] + x.ty.shape[ax + 1:]
    out = c.b.emit(Op.REDUCE, Type(dtype, shape), (x,), ReduceAttr(fn, ax, tie_break_left))
    if keep_dims:
        kept = tuple(1 if ax is None or i == ax else s for i, s in enumerate(x.ty.shape))
        return c.b.splat(out, kept) if ax is None else c.b.reshape(out, kept)
    return out


def _sum_dtype(dtype: DType) -> DType:
    if dtype.is_bool or (dtype.is_int and dtype.bits < 32):
        return dtypes.I32 if dtype.is_signed or dtype.is_bool else dtypes.U32
    return dtype


@lowers(tl.sum)
def _sum(c: Context, a: Args) -> Node:
    x = _node(c.b, a["input"])
    dtype = _dtype(a["dtype"]) if a["dtype"] is not None else _sum_dtype(x.ty.dtype)
    return _reduce(c, c.b.cast(x, dtype), ReduceFn.SUM, a["axis"], a["keep_dims"], dtype)


@lowers(tl.xor_sum)
def _xor_sum(c: Context, a: Args) -> Node:
    x = _node(c.b, a["input"])
    return _reduce(c, x, ReduceFn.XOR, a["axis"], a["keep_dims"], x.ty.dtype)


def _extreme(fn: ReduceFn, arg_fn: ReduceFn) -> Lowering:
    def lower(c: Context, a: Args) -> Any:
        x = _node(c.b, a["input"])
        value = _reduce(c, x, fn, a["axis"], a["keep_dims"], x.ty.dtype)
        if not a["return_indices"]:
            return value
        index = _reduce(c, x, arg_fn, a["axis"], a["keep_dims"], dtypes.I32, a["return_indices_tie_break_left"])
        return value, index
    return lower


LOWERINGS[_builtin(tl.max)] = _extreme(ReduceFn.MAX, ReduceFn.ARGMAX)
LOWERINGS[_builtin(tl.min)] = _extreme(ReduceFn.MIN, ReduceFn.ARGMIN)


def _arg(fn: ReduceFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        x = _node(c.b, a["input"])
        return _reduce(c, x, fn, a["axis"], a["keep_dims"], dtypes.I32, a["tie_break_left"])
    return lower


lowers(tl.argmax)(_arg(ReduceFn.ARGMAX))
lowers(tl.argmin)(_arg(ReduceFn.ARGMIN))


def _scan(fn: ReduceFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        x = _node(c.b, a["input"])
        dtype = _sum_dtype(x.ty.dtype)
        axis = _axis(c, x, a["axis"])
        assert axis is not None
        return c.b.emit(Op.SCAN, Type(dtype, x.ty.shape), (c.b.cast(x, dtype),), ScanAttr(fn, axis, a["reverse"]))
    return lower


lowers(tl.cumsum)(_scan(ReduceFn.SUM))
lowers(tl.cumprod)(_scan(ReduceFn.PROD))


# ---------------------------------------------------------------- dot


@lowers(tl.dot)
def _dot(c: Context, a: Args) -> Node:
    x, y = _node(c.b, a["input"]), _node(c.b, a["other"])
    if len(x.ty.shape) not in (2, 3) or len(y.ty.shape) != len(x.ty.shape) or x.ty.shape[-1] != y.ty.shape[-2]:
        raise c.error(f"tl.dot of blocks {list(x.ty.shape)} and {list(y.ty.shape)}")
    shape = x.ty.shape[:-1] + y.ty.shape[-1:]
    out = dtypes.I32 if x.ty.dtype.is_int else _dtype(a["out_dtype"])
    acc = a["acc"]
    acc_node = c.b.to_node(acc, out) if acc is not None else c.b.splat(c.b.const(0, out), shape)
    precision = a["input_precision"] or ("ieee" if a["allow_tf32"] is False else "tf32")
    if not x.ty.dtype == dtypes.F32:
        precision = "ieee"
    return c.b.emit(Op.DOT, Type(out, shape), (x, y, acc_node), DotAttr(Precision(precision)))


# ---------------------------------------------------------------- random numbers


def _rand(fn: RandFn) -> Lowering:
    def lower(c: Context, a: Args) -> Node:
        offset = _node(c.b, a["offset"])
        seed = c.b.cast(c.b.to_node(a["seed"]), dtypes.U64)
        out = dtypes.U32 if fn is RandFn.RANDINT else dtypes.F32
        seed = c.b.splat(seed, offset.ty.shape)
        return c.b.emit(Op.RAND, Type(out, offset.ty.shape), (seed, offset), RandAttr(fn, a["n_rounds"]))
    return lower


lowers(tlrandom.randint)(_rand(RandFn.RANDINT))
lowers(tlrandom.rand)(_rand(RandFn.RAND))
lowers(tlrandom.randn)(_rand(RandFn.RANDN))


# ---------------------------------------------------------------- hints and debugging


@lowers(debug.multiple_of, debug.max_contiguous, debug.max_constancy)
def _hint(c: Context, a: Args) -> Any:
    return a["input"]


@lowers(debug.assume)
def _assume(c: Context, a: Args) -> None:
    return None


@lowers(debug.debug_barrier)
def _barrier(c: Context, a: Args) -> None:
    c.b.emit(Op.BARRIER, None)


@lowers(debug.static_assert)
def _static_assert(c: Context, a: Args) -> None:
    if isinstance(a["cond"], Node):
        raise c.error("tl.static_assert needs a compile-time condition")
    if not a["cond"]:
        raise c.error(f"static_assert failed: {a['msg']}")


@lowers(debug.static_print)
def _static_print(c: Context, a: Args) -> None:
    print(*a["values"])
