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
    AssertAttr, AsmAttr, BinaryFn, LibAttr, LibFn, Node, Op, PrintAttr, RandAttr, RandFn, Type, UnaryFn,
)
from tile_lang.ops import creation as tlcreation, debug, libdevice as ld, math as tlmath, random as tlrandom
from tile_lang.ops.conversions import CONVERSIONS
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
# function's IR function.
LIBDEVICE: dict[Callable[..., Any], LibFn] = {
    ld.pow: LibFn.POW, ld.ldexp: LibFn.LDEXP, ld.norm3d: LibFn.NORM3D, ld.isinf: LibFn.ISINF, ld.isnan: LibFn.ISNAN,
    ld.isfinite: LibFn.ISFINITE, ld.signbit: LibFn.SIGNBIT, ld.ilogb: LibFn.ILOGB, ld.saturatef: LibFn.SATURATEF,
    ld.fast_expf: LibFn.FAST_EXPF, ld.fast_logf: LibFn.FAST_LOGF, ld.fast_dividef: LibFn.FAST_DIVIDEF,
    ld.float2int_rn: LibFn.FLOAT2INT_RN, ld.popc: LibFn.POPC, ld.clz: LibFn.CLZ, ld.ffs: LibFn.FFS, ld.brev:
    LibFn.BREV, ld.mulhi: LibFn.MULHI, ld.byte_perm: LibFn.BYTE_PERM, ld.cbrt: LibFn.CBRT, ld.rcbrt: LibFn.RCBRT,
    ld.exp10: LibFn.EXP10, ld.lgamma: LibFn.LGAMMA, ld.tgamma: LibFn.TGAMMA, ld.erfinv: LibFn.ERFINV, ld.erfcinv:
    LibFn.ERFCINV, ld.j0: LibFn.J0, ld.j1: LibFn.J1, ld.y0: LibFn.Y0, ld.y1: LibFn.Y1, ld.logb: LibFn.LOGB,
    ld.nearbyint: LibFn.NEARBYINT, ld.round: LibFn.ROUND, ld.cospi: LibFn.COSPI, ld.sinpi: LibFn.SINPI, ld.rcp_rn:
    LibFn.RCP_RN, ld.rcp_rd: LibFn.RCP_RD, ld.rcp_ru: LibFn.RCP_RU, ld.rcp_rz: LibFn.RCP_RZ, ld.scalbn: LibFn.SCALBN,
    ld.finitef: LibFn.FINITEF, ld.isfinited: LibFn.ISFINITED, ld.rnorm3d: LibFn.RNORM3D, ld.norm4d: LibFn.NORM4D,
    ld.rnorm4d: LibFn.RNORM4D, ld.fast_sinf: LibFn.FAST_SINF, ld.fast_cosf: LibFn.FAST_COSF,
    ld.fast_tanf: LibFn.FAST_TANF, ld.fast_log2f: LibFn.FAST_LOG2F, ld.fast_log10f: LibFn.FAST_LOG10F,
    ld.fast_exp10f: LibFn.FAST_EXP10F, ld.fast_powf: LibFn.FAST_POWF, ld.int_as_float: LibFn.INT_AS_FLOAT,
    ld.float_as_int: LibFn.FLOAT_AS_INT, ld.uint_as_float: LibFn.UINT_AS_FLOAT, ld.float_as_uint: LibFn.FLOAT_AS_UINT,
    ld.longlong_as_double: LibFn.LONGLONG_AS_DOUBLE, ld.double_as_longlong: LibFn.DOUBLE_AS_LONGLONG,
    ld.add_rn: LibFn.ADD_RN, ld.add_rz: LibFn.ADD_RZ, ld.add_rd: LibFn.ADD_RD, ld.add_ru: LibFn.ADD_RU,
    ld.sub_rn: LibFn.SUB_RN, ld.sub_rz: LibFn.SUB_RZ, ld.sub_rd: LibFn.SUB_RD, ld.sub_ru: LibFn.SUB_RU,
    ld.mul_rn: LibFn.MUL_RN, ld.mul_rz: LibFn.MUL_RZ, ld.mul_rd: LibFn.MUL_RD, ld.mul_ru: LibFn.MUL_RU, ld.sqrt_rd: LibFn.SQRT_RD, ld.sqrt_ru: LibFn.SQRT_RU, ld.sqrt_rz: LibFn.SQRT_RZ, ld.atan2:
    LibFn.ATAN2, ld.hypot: LibFn.HYPOT, ld.fmod: LibFn.FMOD, ld.remainder: LibFn.REMAINDER, ld.copysign:
    LibFn.COPYSIGN, ld.nextafter: LibFn.NEXTAFTER, ld.fdim: LibFn.FDIM, ld.fmax: LibFn.FMAX, ld.fmin: LibFn.FMIN,
    ld.rhypot: LibFn.RHYPOT, ld.div_rd: LibFn.DIV_RD, ld.div_ru: LibFn.DIV_RU, ld.div_rz: LibFn.DIV_RZ,
    ld.fma_rn: LibFn.FMA_RN, ld.fma_rz: LibFn.FMA_RZ, ld.fma_rd: LibFn.FMA_RD, ld.fma_ru: LibFn.FMA_RU,
    ld.rsqrt_rn: LibFn.RSQRT_RN, ld.rcp64h: LibFn.RCP64H, ld.hiloint2double: LibFn.HILOINT2DOUBLE,
    ld.double2loint: LibFn.DOUBLE2LOINT, ld.double2hiint: LibFn.DOUBLE2HIINT, ld.mul24: LibFn.MUL24, ld.sad: LibFn.SAD,
    ld.hadd: LibFn.HADD, ld.rhadd: LibFn.RHADD, ld.llrint: LibFn.LLRINT, ld.llround: LibFn.LLROUND, ld.jn: LibFn.JN,
    ld.yn: LibFn.YN, ld.cyl_bessel_i0: LibFn.CYL_BESSEL_I0, ld.cyl_bessel_i1: LibFn.CYL_BESSEL_I1,
    ld.erfcx: LibFn.ERFCX, ld.normcdf: LibFn.NORMCDF, ld.normcdfinv: LibFn.NORMCDFINV,
    **{fn: LibFn(fn.__name__) for fn in CONVERSIONS},  # each conversion's member is named as it
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
    return c.b.binary(nan_fn if a["propagate_nan"] else fn, a["x"], a["y"])


@lowers(tlmath.maximum)
def _maximum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MAX, BinaryFn.MAX_NAN)


@lowers(tlmath.minimum)
def _minimum(c: Context, a: Args) -> Node:
    return _minmax(c, a, BinaryFn.MIN, BinaryFn.MIN_NAN)


@lowers(tlmath.clamp)
def _clamp(c: Context, a: Args) -> Node:
    nan = a["propagate_nan"]
    low = c.b.binary(BinaryFn.MAX_NAN if nan else BinaryFn.MAX, a["x"], a["min"])
    return c.b.binary(BinaryFn.MIN_NAN if nan else BinaryFn.MIN, low, a["max"])


@lowers(tlmath.fma)
def _fma(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["x"])
    return c.b.elementwise(Op.FMA, (x, a["y"], a["z"]), x.ty.dtype)


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
    shape = shapes.expanded(x.ty.shape, a["axis"])
    return c.b.reshape(x, shape) if x.ty.shape else c.b.splat(x, shape)


def _reshaped(c: Context, x: Node, shape: tuple[int, ...]) -> Node:
    return c.b.reshape(x, shape) if x.ty.shape else c.b.splat(x, shape)


@lowers(tlshape.reshape)
def _reshape(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return _reshaped(c, x, a["shape"])


@lowers(tlshape.view)
def _view(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return _reshaped(c, x, a["shape"])


@lowers(tlshape.ravel)
def _ravel(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["x"])
    return _reshaped(c, x, a["shape"])


@lowers(tlshape.permute)
def _permute(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return permute(c, x, a["dims"])


@lowers(tlshape.trans)
def _trans(c: Context, a: Args) -> Node:
    x = node_arg(c.b, a["input"])
    return permute(c, x, a["dims"])


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


@lowers(debug.multiple_of, debug.max_contiguous, debug.max_constancy)
def _hint(c: Context, a: Args) -> Any:
    """The input unchanged: the rule checked the hint, and the compiler trusts its promise."""
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


def print_prefix(prefix: str, has_args: bool) -> str:
    """Triton's normalisation: a prefix with arguments ends in ": ", a long one starts with " "."""
    if has_args and not prefix.endswith(" "):
        prefix += " "
    if has_args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    return " " + prefix if len(prefix) > 2 and not prefix.startswith(" ") else prefix


@lowers(debug.device_print)
def _device_print(c: Context, a: Args) -> None:
    """One line per element (per program for scalars), as Triton prints on the GPU; compile-time
    values are printed as text."""
    values = tuple(a["args"])
    nodes = [v for v in values if isinstance(v, Node)]
    shape: tuple[int, ...] = ()
    for n in nodes:
        shape = broadcast_shapes(shape, n.ty.shape)
    items = tuple(None if isinstance(v, Node) else str(v) for v in values)
    operands = tuple(c.b.broadcast_to(n, shape) for n in nodes)
    c.b.emit(Op.PRINT, None, operands, PrintAttr(print_prefix(str(a["prefix"]), bool(values)), items, bool(a["hex"])))


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

