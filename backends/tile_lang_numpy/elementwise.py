"""Elementwise semantics: operators with Triton's promotion, casts, math, where, block creation."""

from __future__ import annotations

import functools
import math
import operator
import os
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import dtypes, fp8, operators
from tile_lang.dtypes import BOOL, F32, F64, I32, DType
from tile_lang.operators import BinaryOp, UnaryOp
from tile_lang.operators import OPERATORS
from tile_lang.ops import forms, math as tl_math
from tile_lang.ops.forms import Operand, Typed
from tile_lang.semantics.dispatch import apply
from tile_lang.tensor import Tensor

from tile_lang_numpy import addresses, affine, tiled, values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array, Lead, Pointers

# ------------------------------------------------------------------------------ operands


def operands(engine: Engine, x: object, y: object, result: Callable[[DType, DType], DType] = dtypes.promote,
             lead: Lead = Lead.PROGRAM) -> tuple[Array, Array, DType, tuple[int, ...]]:
    """Two operands converted to their common dtype and rank, with the broadcast block shape
    (in grid space when ``lead`` is ``Lead.GRID``, see :mod:`tiled`)."""
    if lead is Lead.PROGRAM and (isinstance(x, Tensor) and isinstance(y, Tensor) and x.type is y.type and x.block_shape == y.block_shape
            and type(x.handle) is np.ndarray and type(y.handle) is np.ndarray and not x.type.is_pointer):
        dtype = result(x.type, y.type)
        if dtype is x.type:  # the common case: same dtype, same shape, nothing to convert
            return x.handle, y.handle, dtype, x.block_shape
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = values.lift(x)
    tx = values.lift(x, y.type if isinstance(y, Tensor) and not isinstance(x, Tensor) else None)
    ty = values.lift(y, tx.type if not isinstance(y, Tensor) else None)
    if tx.type.is_pointer or ty.type.is_pointer:
        raise engine.error(f"unsupported operation between {tx!r} and {ty!r}")
    dtype = result(tx.type, ty.type)
    shape = values.block_broadcast(tx.block_shape, ty.block_shape)
    rank = len(shape)
    ax = values.align(convert(_array(engine, tx, lead), tx.type, dtype), tx.ndim, rank, lead)
    ay = values.align(convert(_array(engine, ty, lead), ty.type, dtype), ty.ndim, rank, lead)
    engine.note_block(math.prod(shape))
    return ax, ay, dtype, shape


def _array(engine: Engine, x: Tensor[Any, Any], lead: Lead) -> Array:
    """A value tensor's array, with the program axis or in grid space."""
    return values.array(x) if lead is Lead.PROGRAM else tiled.space(engine, x)


_FP8_MAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0, "f8e4b8": 240.0, "f8e5b16": 57344.0}


def convert(a: Array, src: DType, dst: DType, to_zero: bool = False) -> Array:
    """Value conversion with the GPU's rules: round to nearest even; float to int truncates
    toward zero and saturates (NaN -> 0); fp8 saturates to its largest finite value. A coded
    dtype's codes (``tl.float8e4b15``) are decoded and encoded (:mod:`tile_lang.fp8`);
    ``to_zero`` rounds them toward zero (the other dtypes' ``rtz``: :func:`cast`)."""
    if src == dst:
        return a
    if src.coded:
        return convert(fp8.decode_e4b15(a), F32, dst, to_zero)
    if dst.coded:
        return fp8.encode_e4b15(a, to_zero)
    if dst.is_bool:
        nonzero: Array = a != 0
        return nonzero
    if src.is_float and dst.is_int:
        return saturated(np.trunc(a), dst)
    wide = src.bits == 64 or (src.is_int and src.bits >= 32)  # more bits than f32 holds
    if dst.is_fp8:
        limit = _FP8_MAX[dst.name]
        return np.clip(_odd_f32(a) if wide else a.astype(np.float32), -limit, limit).astype(dst.numpy)
    if src.is_fp8 and dst.is_float:  # a fresh array either way
        return values.widen(a, dst.numpy)
    return (_odd_f32(a) if wide and dst == dtypes.BF16 else a).astype(dst.numpy)


def _odd_f32(a: Array) -> Array:
    """``a`` (f64 or integers, through f64: exact below 2**53) as f32 rounded toward zero with the
    last bit set where that was inexact (round to odd): bf16 or fp8 rounded from it to nearest even
    is rounded once, as from ``a`` itself, since f32 keeps more than two bits beyond theirs.
    ml_dtypes before 0.5 rounded f64 and wide integers to them through f32 to nearest: twice."""
    exact = a.astype(np.float64)
    with np.errstate(over="ignore"):
        near = exact.astype(np.float32)
    back = near.astype(np.float64)
    inexact = (back != exact) & np.isfinite(near)
    near = np.where(inexact & (np.abs(back) > np.abs(exact)), np.nextafter(near, np.float32(0)), near)
    odd: Array = (near.view(np.uint32) | inexact.astype(np.uint32)).view(np.float32)
    return odd


def saturated(whole: Array, dst: DType) -> Array:
    """Whole-number floats as the integer ``dst``, saturating beyond its range and NaN giving 0, as
    the GPU's ``cvt`` does (the range's ends compared exactly: ``2**63 - 1`` has no float)."""
    low, high = dtypes.int_limits(dst)
    wide = whole.astype(np.float64)
    inside = (wide >= float(low)) & (wide < float(high) + 1.0)  # high + 1 is a power of two
    out = np.where(inside, wide, 0.0).astype(dst.numpy)
    out = np.where(wide >= float(high) + 1.0, dst.numpy.type(high), out)
    clamped: Array = np.where(wide < float(low), dst.numpy.type(low), out)
    return clamped


def select(cond: Array, x: Array, y: Array) -> Array:
    """``np.where(cond, x, y)``; from :data:`SELECT_COPY` elements on, as ``y`` copied and then
    ``x`` where ``cond``: about 3x faster than NumPy's where under a mask of runs (bounds masks,
    a padded edge), which large loads and ``tl.where`` mostly have."""
    shape = np.broadcast_shapes(cond.shape, x.shape, y.shape)
    if math.prod(shape) < SELECT_COPY:
        chosen: Array = np.where(cond, x, y)
        return chosen
    out = np.empty(shape, np.result_type(x, y))
    out[...] = y
    np.copyto(out, x, where=cond)
    return out


SELECT_COPY = 1 << 16  # below, np.where's single call costs less than select's three


# ------------------------------------------------------------------------------ operators


def _c_divide(engine: Engine, x: Array, y: Array, dtype: DType, want_quotient: bool, lead: Lead) -> Array:
    """C's (and the GPU's) ``/`` and ``%`` on integers: truncated. A zero divisor is an error, and
    so is ``INT_MIN // -1``, a signed overflow (``INT_MIN % -1`` is 0)."""
    if bool(np.any(engine.only_active(y == 0, lead))):
        raise engine.error("integer division by zero")
    if want_quotient and dtype.is_signed:
        _report_wrapped(engine, (x == dtypes.int_limits(dtype)[0]) & (y == -1), (x, y), "{} // {}", dtype, lead)
    remainder = np.fmod(x, y)
    if not want_quotient:
        return remainder
    with np.errstate(over="ignore"):  # INT_MIN // -1 wraps to INT_MIN when TILE_LANG_OVERFLOW=wrap
        quotient: Array = (x - remainder) // y
    return quotient


def rule_operand(x: object) -> Operand:
    """What the operator rules see of an operand: a tensor's dtype, or the Python number."""
    if isinstance(x, Tensor):
        return x.type
    if isinstance(x, np.generic):
        number: bool | int | float = x.item()
        return number
    if isinstance(x, (bool, int, float)):
        return x
    raise apply(forms.not_an_operand, x)


def _reference(op: BinaryOp) -> Callable[[Array, Array], Array]:
    fn = OPERATORS[op].reference
    assert fn is not None, op
    return fn


def _pointer_arith(engine: Engine, op: BinaryOp, x: object, y: object) -> Tensor[Any, Any]:
    """``ptr + offsets``, ``offsets + ptr`` or ``ptr - offsets`` (checked by the rule)."""
    ptr, offs = (x, y) if isinstance(x, Tensor) and x.type.is_pointer else (y, x)
    assert isinstance(ptr, Tensor) and isinstance(ptr.handle, Pointers)
    if addresses.is_space(ptr.handle.memory):  # a pointer made from an integer: its offsets are bytes
        offs = addresses.scaled(offs, ptr.handle.memory.dtype)
    off = values.lift(offs)
    lanes = off.handle
    if type(lanes) is affine.Affine and op is BinaryOp.ADD and ptr.handle.is_argument \
            and 1 not in lanes.block and lanes.base.dtype is _INDEX:  # an argument pointer plus a block: its lanes
        return values.make(Pointers(ptr.handle.memory, None, lanes.as_offsets()), ptr.type)
    shape = values.block_broadcast(ptr.block_shape, off.block_shape)
    if ptr.ndim == 0 and off.ndim == 0 and off.type.is_int and (tiled.involved(off) or ptr.handle.compact is not None):
        return tiled.moved(engine, ptr, 1 if op is BinaryOp.ADD else -1, off)
    moved = _lazy_pointers(op, ptr, off)
    if moved is not None:
        return moved
    delta = values.align(values.array(off), off.ndim, len(shape))
    if delta.dtype == np.bool_:
        delta = delta.astype(np.int32)
    base = values.align(ptr.handle.offsets, ptr.ndim, len(shape))
    engine.note_block(math.prod(shape))
    if base.size == 1 and int(base.reshape(-1)[0]) == 0:  # an argument pointer: keep the offsets' width
        same = np.broadcast_to(delta, np.broadcast_shapes(base.shape, delta.shape))
        return values.make(Pointers(ptr.handle.memory, same if op is BinaryOp.ADD else -same), ptr.type)
    wide = delta.astype(np.int64)
    return values.make(Pointers(ptr.handle.memory, base + wide if op is BinaryOp.ADD else base - wide), ptr.type)


_INDEX = np.dtype(np.int64)  # pointer offsets


def _lazy_pointers(op: BinaryOp, ptr: Tensor[Any, Any], off: Tensor[Any, Any]) -> Tensor[Any, Any] | None:
    """Pointer arithmetic that keeps offsets affine (see :mod:`affine`)."""
    p = ptr.handle
    assert isinstance(p, Pointers)
    sign = 1 if op is BinaryOp.ADD else -1
    index = _INDEX
    mine = p.affine if p.affine is not None else (
        affine.Affine(p.offsets.astype(np.int64, copy=False), (), (), index) if ptr.ndim == 0 else None)
    if mine is None:
        return None
    if isinstance(off.handle, affine.Affine):
        moved = affine.combine(mine, off.handle, sign, index)
    elif off.ndim == 0 and off.type.is_int:
        amount = values.array(off)
        moved = affine.shift(mine, amount if sign == 1 else -amount.astype(np.int64), index)
    else:
        return None
    return None if moved is None else values.make(Pointers(p.memory, None, moved), ptr.type)


def _uniform_int(t: Tensor[Any, Any]) -> int | None:
    """A scalar shared by all programs, as a Python int (None otherwise)."""
    if t.ndim or not t.type.is_int or isinstance(t.handle, affine.Affine):
        return None
    arr = values.array(t)
    return int(arr[0]) if arr.shape == (1,) else None


def _lazy_binary(op: BinaryOp, x: object, y: object) -> Tensor[Any, Any] | None:
    """Integer arithmetic that keeps :class:`affine.Affine` blocks affine, and ``offs < n`` on a
    one-axis affine block as a lazy :class:`affine.Box` mask."""
    if not ((isinstance(x, Tensor) and isinstance(x.handle, affine.Affine))
            or (isinstance(y, Tensor) and isinstance(y.handle, affine.Affine))):
        return None
    tx, ty = values.lift(x), values.lift(y)
    ax, ay = tx.handle, ty.handle
    if not (tx.type.is_int and ty.type.is_int):
        return None
    both = isinstance(x, Tensor) and isinstance(y, Tensor)
    dtype = dtypes.promote(tx.type, ty.type) if both else (tx.type if isinstance(x, Tensor) else ty.type)
    if isinstance(ax, affine.Affine) and isinstance(ay, affine.Affine):
        if op not in (BinaryOp.ADD, BinaryOp.SUB):
            return None
        result = affine.combine(ax, ay, 1 if op is BinaryOp.ADD else -1, dtype.numpy)
        return None if result is None else values.make(result, dtype)
    flipped = not isinstance(ax, affine.Affine)
    lazy, scalar = (ty, tx) if flipped else (tx, ty)
    assert isinstance(lazy.handle, affine.Affine)
    a = lazy.handle
    if scalar.ndim:
        return None
    if op in (BinaryOp.ADD, BinaryOp.SUB):
        amount = values.array(scalar)
        if op is BinaryOp.SUB and flipped:  # scalar - block: a reversed block
            negated = affine.scale(a, -1, dtype.numpy)
            result = None if negated is None else affine.shift(negated, amount, dtype.numpy)
        else:
            result = affine.shift(a, amount if op is BinaryOp.ADD else -amount.astype(np.int64), dtype.numpy)
        return None if result is None else values.make(result, dtype)
    if op is BinaryOp.MUL:
        factor = _uniform_int(scalar)
        result = None if factor is None else affine.scale(a, factor, dtype.numpy)
        return None if result is None else values.make(result, dtype)
    bounded = _BOUNDS.get(_FLIPPED.get(op, op) if flipped else op)
    if bounded is not None and lazy.type.is_signed and scalar.type.is_signed:  # unsigned compares wrap
        box = affine.compare(a, values.array(scalar).astype(np.int64), *bounded)
        return None if box is None else values.make(box, BOOL)
    return None


# block op bound: whether the bound is above the block, and whether it is inclusive
_BOUNDS = {BinaryOp.LT: (True, False), BinaryOp.LE: (True, True), BinaryOp.GT: (False, False),
           BinaryOp.GE: (False, True)}


def _lazy_and(x: object, y: object) -> Tensor[Any, Any] | None:
    """``box & box``, and a box with a bool scalar (``offs < n`` and ``row < H``), stay a lazy
    :class:`affine.Box` mask."""
    if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
        return None
    if isinstance(x.handle, affine.Box) and isinstance(y.handle, affine.Box):
        box = affine.both(x.handle, y.handle)
        return None if box is None else values.make(box, BOOL)
    lazy, flag = (x, y) if isinstance(x.handle, affine.Box) else (y, x)
    if isinstance(lazy.handle, affine.Box) and flag.type.is_bool and flag.ndim == 0 and lazy.ndim \
            and type(flag.handle) is np.ndarray:
        return values.make(lazy.handle.gated(flag.handle), BOOL)
    return None


@implements(operators.binary)
def binary(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    op: BinaryOp = a["op"]
    x, y = a["x"], a["y"]
    if op.is_comparison:
        x, y = _compared(x, y)
    same = _same_arrays(op, x, y)
    if same is not None:  # the common case: one dtype, one shape, nothing to convert
        (fn, kind, checked), ax, ay = same
        result = fn(ax, ay)
        if checked:
            _check_overflow(engine, op, ax, ay, result, kind, Lead.PROGRAM)
        return values.make(result.astype(kind.numpy, copy=False), kind)
    rx, ry = rule_operand(x), rule_operand(y)
    if isinstance(rx, DType) and rx.is_pointer or isinstance(ry, DType) and ry.is_pointer:
        if _pointer_rule(op, rx, ry) if isinstance(rx, DType) and isinstance(ry, DType) else \
                apply(forms.pointer_binary, op, rx, ry):
            return _pointer_compare(engine, op, x, y)
        return _pointer_arith(engine, op, x, y)
    typed = _rule(op, rx, ry)
    if typed.operands.is_float:
        x, y = _number_in(x, y, typed.operands)
    shared = _shared_int(op, x, y)
    if shared is not None:
        return shared
    lazy = _lazy_and(x, y) if op is BinaryOp.AND else _lazy_binary(op, x, y)
    if lazy is not None:
        return lazy
    lead = tiled.lead_of(x, y)
    ax, ay, dtype, _ = operands(engine, x, y, lambda _x, _y: typed.operands, lead)
    make = _maker(engine, lead)
    if op in (BinaryOp.FLOORDIV, BinaryOp.MOD):
        if dtype.is_float:  # only % takes floats
            return make(np.fmod(ax, ay).astype(dtype.numpy), dtype)
        return make(_c_divide(engine, ax, ay, dtype, op is BinaryOp.FLOORDIV, lead).astype(dtype.numpy), dtype)
    if dtype.is_fp8 and not dtype.coded and not op.is_comparison:
        return make(_fp8_arithmetic(op, ax, ay, dtype), dtype)
    signed_shift = op is BinaryOp.RSHIFT and not dtype.is_signed and apply(forms.arithmetic_shift, rx, ry)
    result = _sign_filling_shift(ax, ay) if signed_shift else _reference(op)(ax, ay)
    if op in _OVERFLOW_CHECKED and dtype.is_signed:
        _check_overflow(engine, op, ax, ay, result, dtype, lead)
    return make(result.astype(typed.result.numpy, copy=False), typed.result)


def _number_in(x: object, y: object, computed: DType) -> tuple[object, object]:
    """A Python number beside a block as the constant of the dtype the operator computes in, as
    Triton's ``scalar_constant(number, ret_sca_ty)``: ``h % 0.7`` of f16 takes 0.7 in f32, not
    rounded to f16 first (that dtype is the block's but for ``/`` and ``%`` of 16-bit floats)."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        return x, values.lift(y, computed)
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        return values.lift(x, computed), y
    return x, y


def _fp8_arithmetic(op: BinaryOp, ax: Array, ay: Array, dtype: DType) -> Array:
    """An fp8 ``op`` as the CUDA computes it: in f32, rounded once to ``dtype`` saturating (the
    cast's ``satfinite``: e5m2 overflows to 57344, e4m3 to 448), where ml_dtypes' own arithmetic
    overflows to inf or NaN (Triton cannot lower fp8 arithmetic; its casts to fp8 saturate)."""
    return convert(_reference(op)(ax.astype(np.float32), ay.astype(np.float32)), F32, dtype)


def _compared(x: object, y: object) -> tuple[object, object]:
    """A comparison's Python number as the rank-0 tensor of its own dtype that Triton makes of it,
    where that compares otherwise than the number adapting to the block (the rule
    ``forms.compared_number``: ``h < 0.1`` of f16 in f32, ``u32_block > -1`` false)."""
    for number, block in ((y, x), (x, y)):
        if isinstance(block, Tensor) and not isinstance(number, Tensor) and not block.type.is_pointer:
            value = rule_operand(number)
            assert not isinstance(value, DType)
            own = _compared_rule(block.type, value)
            if own is not None:
                made = values.scalar(value, own)
                return (x, made) if number is y else (made, y)
    return x, y


@functools.lru_cache(maxsize=1024, typed=True)  # keyed by the number and its type, as _number_rule
def _compared_rule(block: DType, value: bool | int | float) -> DType | None:
    return apply(forms.compared_number, block, value)


def _same_arrays(op: BinaryOp, x: object, y: object
                 ) -> tuple[tuple[Callable[[Array, Array], Array], DType, bool], Array, Array] | None:
    """The :func:`_plain` case's function and arrays: two plain value blocks of one dtype and
    shape, or a plain integer block with a Python int, which takes the block's dtype (Triton's
    rule; its fit is checked as on the general path): ``od + kd - PAD`` runs on the block's array."""
    if type(x) is Tensor and type(y) is Tensor:
        if not (type(x.handle) is np.ndarray and type(y.handle) is np.ndarray and x.type is y.type
                and x.block_shape == y.block_shape):
            return None
        plain = _plain(op, x.type)
        return None if plain is None else (plain, x.handle, y.handle)
    block, number = (x, y) if type(y) is int else (y, x)
    if not (type(number) is int and type(block) is Tensor and type(block.handle) is np.ndarray and block.type.is_int
            and block.handle.shape != (1,)):  # one number for all programs: :func:`_shared_int`'s, in Python
        return None
    plain = _plain(op, block.type)
    if plain is None:
        return None
    values.check_fits(number, block.type)
    constant = np.array([number], block.type.numpy)
    return (plain, block.handle, constant) if block is x else (plain, constant, block.handle)


def _sign_filling_shift(x: Array, y: Array) -> Array:
    """Unsigned ``x >> y`` shifting in ``x``'s top bit (by ``width - 1`` at most: the GPU's
    sign fill for larger amounts)."""
    signed = np.dtype(f"i{x.dtype.itemsize}")
    amount = np.minimum(y, x.dtype.itemsize * 8 - 1).astype(signed)
    shifted: Array = np.right_shift(x.view(signed), amount).view(x.dtype)
    return shifted


def _maker(engine: Engine, lead: Lead) -> Callable[[Array, DType], Tensor[Any, Any]]:
    """How a result array becomes a tensor: with the program axis or from grid space."""
    return values.make if lead is Lead.PROGRAM else functools.partial(tiled.tensor, engine)


def _apply(engine: Engine, x: Tensor[Any, Any], fn: Callable[[Array], Array], dtype: DType) -> Tensor[Any, Any]:
    """An elementwise function of one value tensor, kept compact when ``x`` is (see :mod:`tiled`)."""
    lead = tiled.lead_of(x)
    return _maker(engine, lead)(fn(_array(engine, x, lead)), dtype)


# the shared rules for two tensor dtypes, cached: pure functions of their arguments, and binary
# operators are most of a small launch's calls (a rule that raises is not cached: it raises again)
def _binary_rule(op: BinaryOp, rx: Operand, ry: Operand) -> Typed:
    """The operator's rule, applied by the dispatcher (the form ``forms.binary``)."""
    return apply(forms.binary, op, rx, ry)


@functools.cache
def _pointer_rule(op: BinaryOp, rx: Operand, ry: Operand) -> bool:
    """The rule of an operator with a pointer operand (the form ``forms.pointer_binary``)."""
    return apply(forms.pointer_binary, op, rx, ry)


_typed_rule = functools.cache(_binary_rule)
# a dtype with a Python number (``pid * BLOCK``, ``x * 0.5``), keyed by the number and its type
# (typed: ``1``, ``1.0`` and ``True`` are equal keys otherwise, with different rules)
_number_rule = functools.lru_cache(maxsize=1024, typed=True)(_binary_rule)


def _rule(op: BinaryOp, rx: Operand, ry: Operand) -> Typed:
    """The shared rule for two value operands, cached for two dtypes and for a dtype with a
    Python number."""
    if isinstance(rx, DType):
        return _typed_rule(op, rx, ry) if isinstance(ry, DType) else _number_rule(op, rx, ry)
    if isinstance(ry, DType):
        return _number_rule(op, rx, ry)
    return apply(forms.binary, op, rx, ry)


@functools.cache
def _plain(op: BinaryOp, dtype: DType) -> tuple[Callable[[Array, Array], Array], DType, bool] | None:
    """``op``'s NumPy function and result dtype on two value blocks of ``dtype``, when that is
    all it takes (no conversion, no division by zero to check) but, where the last item says
    so, the signed overflow check."""
    if dtype.is_pointer or dtype.is_fp8 or op in (BinaryOp.FLOORDIV, BinaryOp.MOD):
        return None
    typed = _typed_rule(op, dtype, dtype)
    return (_reference(op), typed.result, op in _OVERFLOW_CHECKED and dtype.is_signed) \
        if typed.operands is dtype else None


def _c_quotient(a: int, b: int) -> int:
    """C's ``a / b`` on integers: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_PYTHON_INT: dict[BinaryOp, Callable[[int, int], int | bool]] = {
    BinaryOp.ADD: operator.add, BinaryOp.SUB: operator.sub, BinaryOp.MUL: operator.mul,
    BinaryOp.FLOORDIV: _c_quotient, BinaryOp.MOD: lambda a, b: a - b * _c_quotient(a, b),
    BinaryOp.LT: operator.lt, BinaryOp.LE: operator.le, BinaryOp.GT: operator.gt, BinaryOp.GE: operator.ge,
    BinaryOp.EQ: operator.eq, BinaryOp.NE: operator.ne,
}

_FLIPPED = {BinaryOp.LT: BinaryOp.GT, BinaryOp.LE: BinaryOp.GE, BinaryOp.GT: BinaryOp.LT, BinaryOp.GE: BinaryOp.LE}


def _shared_int(op: BinaryOp, x: object, y: object) -> Tensor[Any, Any] | None:
    """An integer scalar shared by every program (``tl.program_id(0)`` of a one-program launch,
    ``n - 1``) with a Python int, in Python arithmetic: no NumPy call for what is one number.
    None (the general path) for anything else, and for a result that does not fit, so the
    general path reports the overflow or wraps an unsigned value."""
    if isinstance(x, Tensor) and type(y) is int:
        t, k = x, y
    elif isinstance(y, Tensor) and type(x) is int and op not in (BinaryOp.SUB, BinaryOp.FLOORDIV, BinaryOp.MOD):
        t, k = y, x  # int op tensor: add, multiply and the flipped comparisons
        op = _FLIPPED.get(op, op)
    else:
        return None
    fn = _PYTHON_INT.get(op)
    handle = t.handle
    if fn is None or type(handle) is not np.ndarray or handle.shape != (1,) or not t.type.is_int:
        return None
    dtype = dtypes.promote_scalar(t.type, k)
    if dtype is not t.type:
        return None
    low, high = dtypes.int_limits(dtype)
    if not low <= k <= high or (k == 0 and op in (BinaryOp.FLOORDIV, BinaryOp.MOD)):  # the general path's error
        return None
    result = fn(int(handle[0]), k)
    if type(result) is bool:
        return values.make(np.array([result]), BOOL)
    if not low <= result <= high:
        return None
    return values.make(np.array([result], dtype.numpy), dtype)


_OVERFLOW_CHECKED = {BinaryOp.ADD: "+", BinaryOp.SUB: "-", BinaryOp.MUL: "*"}
OVERFLOW_ENV = "TILE_LANG_OVERFLOW"


def overflow_wraps() -> bool:
    """Whether signed integer overflow wraps around as on the GPU (``TILE_LANG_OVERFLOW=wrap``)
    instead of being an error (the default: it is almost always an i32 offset outgrowing its type)."""
    return os.environ.get(OVERFLOW_ENV, "error").strip().lower() == "wrap"


def _magnitude(a: Array) -> int:
    """The largest absolute value in ``a`` (two reductions, no temporaries; a scalar directly),
    or the bound :func:`_cannot_overflow` proved for it when it made ``a``."""
    if a.size == 1:
        return abs(int(a.item()))
    known = _PROVED.get(id(a))
    if known is not None and known[0]() is a:
        return known[1]
    return max(-int(a.min()), int(a.max())) if a.size else 0


# result arrays of checked arithmetic -> a bound on their magnitude, while they live (values are
# never written in place): ``((b * C + c) * D + d) * H`` reduces only ``b``, not each partial sum
_PROVED: dict[int, tuple[weakref.ref[Array], int]] = {}


def _prove(result: Array, bound: int) -> None:
    """Remember that no element of ``result`` exceeds ``bound`` in magnitude, until it is freed."""
    key = id(result)
    _PROVED[key] = (weakref.ref(result, lambda _: _PROVED.pop(key, None)), bound)


def _cannot_overflow(op: BinaryOp, x: Array, y: Array, result: Array) -> bool:
    """Whether the operands' magnitudes rule out wrapping, so no lane needs checking (then the
    bound they give the result is remembered for the operations it takes part in)."""
    bx, by = _magnitude(x), _magnitude(y)
    bound = bx * by if op is BinaryOp.MUL else bx + by
    if bound > affine.int_range(result.dtype)[1]:
        return False
    if result.size > 1:
        _prove(result, bound)
    return True


def _overflowed(op: BinaryOp, x: Array, y: Array, result: Array) -> Array:
    """Lanes where signed ``x op y`` wrapped around: exact in int64 below 64 bits, by sign
    rules for 64-bit add and subtract, and by an exact recheck of large 64-bit products."""
    if result.dtype.itemsize < 8:
        exact = _reference(op)(x.astype(np.int64), y.astype(np.int64))
        wrapped: Array = exact != result
        return wrapped
    if op is BinaryOp.ADD:
        return ((x ^ result) & (y ^ result)) < 0
    if op is BinaryOp.SUB:
        return ((x ^ y) & (x ^ result)) < 0
    big = np.abs(x.astype(np.float64) * y.astype(np.float64)) >= 2.0**62
    if not bool(big.any()):
        return big
    xb, yb = np.broadcast_arrays(x, y)
    exact_big = [int(a) * int(b) for a, b in zip(xb[big].tolist(), yb[big].tolist())]
    big[big] = [not -(2**63) <= v < 2**63 for v in exact_big]
    return big


def _check_overflow(engine: Engine, op: BinaryOp, x: Array, y: Array, result: Array, dtype: DType, lead: Lead
                    ) -> None:
    """Signed integer overflow is an error: on the GPU it wraps silently, and in a kernel it is
    almost always an offset (``pid * BLOCK``) outgrowing i32 (unless :func:`overflow_wraps`)."""
    if _cannot_overflow(op, x, y, result) or overflow_wraps():
        return
    _report_wrapped(engine, _overflowed(op, x, y, result), (x, y), f"{{}} {_OVERFLOW_CHECKED[op]} {{}}", dtype, lead)


def _report_wrapped(engine: Engine, wrapped: Array, operands: tuple[Array, ...], shown: str, dtype: DType,
                    lead: Lead) -> None:
    """The signed overflow error for the first active lane of ``wrapped``, if any: ``shown``
    with that lane's operands is the expression that does not fit. None when :func:`overflow_wraps`."""
    if overflow_wraps():
        return
    wrapped = engine.only_active(wrapped, lead)
    if not bool(wrapped.any()):
        return
    arrays = [*operands, wrapped]
    if lead is Lead.GRID:  # the message names the program: one value per program
        arrays = [tiled.expand(engine, a) for a in np.broadcast_arrays(*arrays)]
    *values, bad = np.broadcast_arrays(*arrays)
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    lane = int(np.ravel_multi_index(where[1:], bad.shape[1:])) if len(where) > 1 else 0
    raise engine.error(
        f"signed integer overflow: {shown.format(*(int(v[where]) for v in values))} does not fit in "
        f"{dtype.name} (program {engine.program_of(where[0])}, lane {lane}); the GPU would silently wrap around. "
        "Compute it in a wider type (e.g. tl.full((), tl.program_id(0), tl.int64) * BLOCK), or in an unsigned type "
        f"when wrapping is intended ({OVERFLOW_ENV}=wrap wraps every signed overflow, as Triton's tests assume)")


def _negated(engine: Engine, x: Tensor[Any, Any], fn: Callable[[Array], Array], shown: str) -> Tensor[Any, Any]:
    """``-x`` or ``abs(x)``: the most negative signed integer has no positive counterpart, an
    overflow like those of ``+ - *``."""
    lead = tiled.lead_of(x)
    arr = _array(engine, x, lead)
    if x.type.is_signed:
        _report_wrapped(engine, arr == dtypes.int_limits(x.type)[0], (arr,), shown, x.type, lead)
    return _maker(engine, lead)(fn(arr), x.type)


def _pointer_compare(engine: Engine, op: BinaryOp, x: Tensor[Any, Any], y: Tensor[Any, Any]) -> Tensor[Any, Any]:
    px, py = values.pointers(x, "x"), values.pointers(y, "y")
    same = px.memory is py.memory  # else the pointers' addresses (see addresses)
    eq = (px.offsets == py.offsets) if same else addresses.addresses_of(px) == addresses.addresses_of(py)
    return values.make(eq if op is BinaryOp.EQ else ~eq, BOOL)


@implements(operators.unary)
def unary(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    op: UnaryOp = a["op"]
    x = values.lift(a["x"])
    apply(forms.unary, op, x.type)
    if op is UnaryOp.POS:
        return x
    if op is UnaryOp.NEG:
        return _negated(engine, x, np.negative, "-({})")
    return _apply(engine, x, np.logical_not if x.type.is_bool else np.invert, x.type)


# ------------------------------------------------------------------------------ math


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _rsqrt(v: Array) -> Array:
    out: Array = 1.0 / np.sqrt(v)
    return out


def _exp2(v: Array) -> Array:
    """f32 ``tl.exp2`` as Triton compiles it, ``ex2.approx.ftz.f32``: results below 2**-126
    flushed to zero (f64's ``exp2`` keeps its subnormals)."""
    out: Array = np.exp2(v)
    if v.dtype == np.float32:
        out = np.where(out < np.finfo(np.float32).tiny, np.float32(0), out)
    return out


def _erf_of(v: Array) -> Array:
    return np.asarray(_erf(v), dtype=v.dtype)


def _erfc_of(v: Array) -> Array:
    return np.asarray(_erfc(v), dtype=v.dtype)


# The UNARY_MATH family (semantics checks the operand is a float block): each builtin's NumPy
# evaluation, on f32 (f64 for f64 inputs), the result rounded to the input dtype.
MATH: dict[Callable[..., Any], Callable[[Array], Array]] = {
    tl.exp: np.exp, tl.exp2: _exp2, tl.log: np.log, tl.log2: np.log2, tl.sin: np.sin, tl.cos: np.cos,
    tl.sqrt: np.sqrt, tl.sqrt_rn: np.sqrt, tl.rsqrt: _rsqrt, tl.erf: _erf_of, tl.atan: np.arctan, tl.ceil: np.ceil,
    tl.floor: np.floor, tl.tanh: np.tanh, tl.tan: np.tan, tl.asin: np.arcsin, tl.acos: np.arccos, tl.sinh: np.sinh,
    tl.cosh: np.cosh, tl.asinh: np.arcsinh, tl.acosh: np.arccosh, tl.atanh: np.arctanh, tl.erfc: _erfc_of,
    tl.expm1: np.expm1, tl.log1p: np.log1p, tl.log10: np.log10, tl.trunc: np.trunc, tl.rint: np.rint,
}


def unary_math(reference: Callable[[Array], Array]) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    """The implementation of a row of :data:`MATH`."""
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        x = values.lift(a["x"])
        wide = values.array(x).astype(np.float64 if x.type == F64 else np.float32)
        return values.make(reference(wide).astype(x.type.numpy), x.type)
    return impl


for _math_fn, _evaluation in MATH.items():
    implements(_math_fn)(unary_math(_evaluation))


@implements(tl.abs)
def abs_(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = values.lift(a["x"])
    if x.type.kind is dtypes.Kind.UINT or x.type.is_bool:
        return x
    if x.type.coded:  # Triton clears the sign bit of the code
        return _apply(engine, x, lambda codes: codes & np.uint8(0x7F), x.type)
    return _negated(engine, x, np.abs, "abs({})")


def gpu_extremum(a: Array, b: Array, largest: bool, propagate_nan: bool = False) -> Array:
    """``maximum``/``minimum`` as PTX max/min (fmaxf/fminf) compute them: a NaN operand gives the
    other one (NaN with ``propagate_nan``, as max.NaN), and -0.0 < +0.0, whatever the order."""
    if propagate_nan:
        out: Array = np.maximum(a, b) if largest else np.minimum(a, b)
    else:
        out = np.fmax(a, b) if largest else np.fmin(a, b)
    if out.dtype.kind in "iub":
        return out
    zeros = (a == 0) & (b == 0)
    if bool(zeros.any()):  # of two zeros, max is -0.0 only if both are (min: if either is)
        negative = np.signbit(b)
        out = np.where(zeros, np.where(negative, a, b) if largest else np.where(negative, b, a), out)
    return out


def _extremum(largest: bool) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        dtype = a["dtype"]  # the rule's: a Python number is a tensor of its own type first, bf16 is f32
        ax, ay, _, _ = operands(engine, values.lift(a["x"], dtype), values.lift(a["y"], dtype), lambda _x, _y: dtype)
        return values.make(gpu_extremum(ax, ay, largest, bool(a["propagate_nan"])).astype(dtype.numpy), dtype)
    return impl


implements(tl.maximum)(_extremum(True))
implements(tl.minimum)(_extremum(False))


@implements(tl_math._min_int)
def min_int(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    ax, ay, dtype, _ = operands(engine, a["a"], a["b"])
    return values.make(np.minimum(ax, ay), dtype)


@implements(tl.clamp)
def clamp(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = values.lift(a["x"])
    common = a["dtype"]  # the rule's: x, min and max promoted (bf16: f32)
    lo, hi = values.lift(a["min"], common), values.lift(a["max"], common)
    low, _, dtype, _ = operands(engine, lo, x, lambda _x, _y: common)
    high, ax, _, _ = operands(engine, hi, x, lambda _x, _y: common)
    nan = bool(a["propagate_nan"])
    return values.make(gpu_extremum(gpu_extremum(ax, low, True, nan), high, False, nan).astype(dtype.numpy), dtype)


@implements(tl.fma)
def fma(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    dtype = a["dtype"]  # the rule's: what x, y and z promote to
    ax, ay, _, _ = operands(engine, values.lift(a["x"]), values.lift(a["y"], dtype), lambda _x, _y: dtype)
    prod = ax.astype(np.float64) * ay.astype(np.float64)
    az = values.lift(a["z"], dtype)
    total = values.align(values.array(az).astype(np.float64), az.ndim, prod.ndim - 1) + prod
    return values.make(convert(total, F64, dtype), dtype)  # fp8 saturating, as the CUDA's cast


@implements(tl.fdiv, tl.div_rn)
def divide(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = values.lift(a["x"])
    ax, ay, dtype, _ = operands(engine, x, a["y"])
    return values.make(np.true_divide(ax, ay).astype(dtype.numpy), dtype)


@implements(tl.umulhi)
def umulhi(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """The high half of the product of the operands' bits read as unsigned, whatever their
    signedness (Triton's ``__nv_umulhi``/``__nv_umul64hi``), in their type."""
    ax, ay, dtype, _ = operands(engine, a["x"], a["y"])
    unsigned = np.dtype(f"u{ax.dtype.itemsize}")
    return values.make(high_product(ax.view(unsigned), ay.view(unsigned)).view(ax.dtype), dtype)


def high_product(ax: Array, ay: Array) -> Array:
    """The high half of the double-width product of two integer arrays of one dtype (umulhi, and
    libdevice's mulhi)."""
    bits = 8 * ax.dtype.itemsize
    signed = ax.dtype.kind == "i"
    if bits <= 32:
        wide = np.int64 if signed else np.uint64
        high: Array = ((ax.astype(wide) * ay.astype(wide)) >> bits).astype(ax.dtype)
        return high
    big = np.frompyfunc(lambda p, q: (int(p) * int(q)) >> 64, 2, 1)(ax, ay)
    return np.asarray(big.astype(object) % (1 << 64) if not signed else big).astype(ax.dtype)


@implements(tl.where)
def where(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    cond = values.lift(a["condition"])
    if not cond.type.is_bool:
        cond = values.make(values.array(cond) != 0, BOOL)
    x, y = a["x"], a["y"]
    if isinstance(x, Tensor) and x.type.is_pointer:
        px, py = values.pointers(x, "x"), values.pointers(y, "y")
        shape = values.block_broadcast(cond.block_shape, x.block_shape, y.block_shape)
        r = len(shape)
        same = px.memory is py.memory  # else the pointers' addresses (see addresses)
        offs = np.where(values.align(values.array(cond), cond.ndim, r),
                        values.align(px.offsets if same else addresses.addresses_of(px), x.ndim, r),
                        values.align(py.offsets if same else addresses.addresses_of(py), y.ndim, r))
        return values.make(Pointers(px.memory, offs), x.type) if same else addresses.pointers_at(offs, x.type)
    lead = tiled.lead_of(cond, x, y)
    ax, ay, dtype, shape = operands(engine, x, y, lead=lead)
    shape = values.block_broadcast(cond.block_shape, shape)
    r = len(shape)
    box = cond.handle
    if isinstance(box, affine.Box) and lead is Lead.PROGRAM and r == 1 and box.block == shape and not box.all_live:
        narrow = box.chosen(values.align(ax, ax.ndim - 1, 1), values.align(ay, ay.ndim - 1, 1))
        if narrow is not None:  # a mirrored edge's few lanes: copied there only (see affine.Box.chosen)
            return values.make(narrow.astype(dtype.numpy, copy=False), dtype)
    result = select(values.align(_array(engine, cond, lead), cond.ndim, r, lead),
                    values.align(ax, ax.ndim - lead, r, lead), values.align(ay, ay.ndim - lead, r, lead))
    return _maker(engine, lead)(result.astype(dtype.numpy, copy=False), dtype)


# ------------------------------------------------------------------------------ casts and creation


@implements(tl.cast)
def cast(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = values.lift(a["input"])
    dst, to_zero = a["dtype"], a["to_zero"]
    if x.type.is_pointer or dst.is_pointer:
        return addresses.cast(engine, x, dst)
    if a["bitcast"]:
        return _apply(engine, x, lambda arr: np.ascontiguousarray(arr).view(dst.numpy), dst)
    if not (to_zero and x.type.is_float and dst.is_float and dst.bits < x.type.bits) or dst.coded:
        return _apply(engine, x, lambda arr: convert(arr, x.type, dst, to_zero), dst)
    arr = values.array(x)  # a float downcast rounding toward zero
    out = convert(arr, x.type, dst)
    away = np.abs(out.astype(np.float64)) > np.abs(arr.astype(np.float64))
    return values.make(np.where(away, np.nextafter(out, np.zeros_like(out)), out).astype(dst.numpy), dst)


@implements(tl.arange)
def arange(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    start, end = a["start"], a["end"]
    n = end - start
    engine.note_block(n)
    return values.make(affine.Affine(_first_lane(start), (1,), (n,), I32.numpy), I32)


@functools.lru_cache(maxsize=256)
def _first_lane(start: int) -> Array:
    """The base of ``tl.arange(start, ...)`` (read-only, so one array serves every launch)."""
    base = np.full(1, start, dtype=np.int64)
    base.flags.writeable = False
    return base


@implements(tl.zeros, tl.full, tl.full_like)
def full(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """A block of the rule's ``shape`` and ``dtype`` holding its ``constant``, or each program's
    runtime scalar ``value`` cast to ``dtype``."""
    shape, dtype, constant = a["shape"], a["dtype"], a["constant"]
    engine.note_block(math.prod(shape))
    if constant is not None:
        return values.make(np.full((1,) + shape, values.of_dtype(constant, dtype), dtype.numpy), dtype)
    value = a["value"]
    each = convert(values.array(value), value.type, dtype)  # (P,): one per program
    return values.make(np.array(np.broadcast_to(each.reshape((-1,) + (1,) * len(shape)), each.shape[:1] + shape)), dtype)

