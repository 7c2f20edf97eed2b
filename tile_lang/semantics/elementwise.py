"""Elementwise rules: float-only operands (the UNARY_MATH family's rule: ``tl.exp``,
``tl.exp2``... declared ``@unary_math`` in ``tile_lang/ops/math.py``), casts, scalars that must
fit a dtype."""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.builtin import Family
from tile_lang.ops import creation as tlcreation, math as tlmath
from tile_lang.ops import forms
from tile_lang.semantics.base import Args, SemanticError, applies, family_rule, operand, rule
from tile_lang.semantics.operators import promote
from tile_lang.tensor import pointee

ROUNDINGS = ("rtne", "rtz")


def float_operand(dtype: DType, name: str) -> DType:
    """``dtype`` when ``tl.<name>`` may take it: floats only, as in Triton."""
    if not dtype.is_float:
        raise SemanticError(f"tl.{name} needs a floating-point block, got {dtype!r}")
    return dtype


def integer_operands(dtype: DType, name: str) -> DType:
    """``dtype`` when ``tl.<name>`` may take it: integers only."""
    if not dtype.is_int:
        raise SemanticError(f"tl.{name} needs integer blocks, got {dtype!r}")
    return dtype


def cast_rounding(rounding: object) -> bool:
    """Whether ``fp_downcast_rounding`` asks to round toward zero (None and "rtne": to nearest even)."""
    if rounding not in (None, *ROUNDINGS):
        raise SemanticError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
    return rounding == "rtz"


def cast_target(marker: object) -> DType:
    """The dtype ``x.to(marker)`` converts to: an element dtype (``tl.f16``), or a pointer type
    (``tl.pointer_type(tl.f16)``, ``tl.pi32_t``, a pointer's ``.dtype``)."""
    element = pointee(marker)
    return dtypes.dtype_of(marker) if element is None else dtypes.dtype_of(element).pointer_to()


def pointer_cast(src: DType, dst: DType) -> None:
    """Casts with a pointer on a side, as Triton makes them (the address reinterpreted, nothing
    converted): a 64-bit integer to a pointer, a pointer to a 64-bit integer (its address, also
    what storing a pointer into int64 elements writes), a pointer to another pointer type."""
    if not (src.is_pointer or dst.is_pointer):
        return
    other = dst if src.is_pointer else src
    if not (other.is_pointer or (other.is_int and other.bits == 64)):
        raise SemanticError(f"cannot cast {src!r} to {dst!r}: a pointer converts to and from 64-bit integers "
                            "(tl.int64, tl.uint64) and other pointer types")


def bitcast(src: DType, dst: DType) -> None:
    """A bitcast keeps the bits, so both types have one width."""
    if src.bits != dst.bits:
        raise SemanticError(f"bitcast between types of different widths: {src!r} -> {dst!r}")


@applies(forms.constant_fits)
def constant_fits(value: int, dtype: DType) -> None:
    """A Python int constant must fit the integer dtype it becomes (Triton's rule:
    ``u32_block > -1``, ``i32_block + 2**40`` and ``tl.full(shape, 2**40, tl.i32)`` are errors,
    not wraps or promotions; Triton's words, "out of range", are in the message)."""
    low, high = dtypes.int_limits(dtype)
    if not low <= value <= high:
        raise SemanticError(f"constant {value} does not fit in {dtype!r}: it is out of range for that type")


@applies(forms.constant_dtype)
def constant_dtype(value: bool | int | float) -> DType:
    """The dtype of a Python number bound in a kernel, as Triton types it there (``value = 1``
    then ``value.dtype`` is ``tl.int32``): a bool is int1; an int i32, u32, i64 or u64, the first
    whose range holds it (one outside all four is an error); a float f32, or f64 when its magnitude
    is outside f32's normal range (inf, nan and 0 are f32)."""
    if isinstance(value, bool):
        return dtypes.BOOL
    if isinstance(value, int):
        for dtype in (dtypes.I32, dtypes.U32, dtypes.I64, dtypes.U64):
            low, high = dtypes.int_limits(dtype)
            if low <= value <= high:
                return dtype
        raise SemanticError(f"the integer {value} is out of range for every integer type (64 bits at most)")
    magnitude = abs(value)
    in_f32 = magnitude in (0.0, math.inf) or value != value or _F32_MIN <= magnitude <= _F32_MAX
    return dtypes.F32 if in_f32 else dtypes.F64


@applies(forms.compared_number)
def compared_number(block: DType, value: bool | int | float) -> DType | None:
    """Triton compares a block with a Python number as with a tensor of the number's own dtype
    (:func:`constant_dtype`; ``tensor.__lt__`` calls ``to_tensor`` first), promoted with the block
    as two blocks are: ``h < 0.1`` of f16 compares in f32, ``i8_block < 300`` in i32 and
    ``u32_block > -1`` with the u32 0xFFFFFFFF (false everywhere, no error), ``f64_block < 0.1``
    with 0.1 rounded to f32. Returns that dtype where the result can differ from the number
    adapting to the block (the other operators' rule), else None (the common case, kept cheap)."""
    own = constant_dtype(value)
    adapted = promote(block, value)
    if dtypes.promote(block, own) != adapted:
        return own
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if not adapted.is_int:
            return None  # converted to the float block's dtype either way
        low, high = dtypes.int_limits(adapted)
        return None if low <= value <= high else own
    exact = own == adapted or value != value or float(np.float32(value)) == value
    return None if exact else own


_F32_MIN, _F32_MAX = 2.0**-126, (2 - 2.0**-23) * 2.0**127  # f32's smallest and largest normal magnitudes


def scalar_fits(value: object, dtype: DType, what: str) -> None:
    """A Python number given where ``dtype`` elements go (``other=``, a stored constant) is first a
    tensor of its own dtype (:func:`constant_dtype`: an int beyond 64 bits is the one error), then
    converted as Triton casts it: an int into integer elements wraps (:func:`wrapped_int`:
    ``other=300`` on i8 reads 44, ``-1`` on u8 255), a float toward zero, saturating, NaN to 0
    (``other=float("-inf")`` on i32 elements reads their smallest value). ``what`` is unused
    but for the message of the error."""
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_int:
        try:
            constant_dtype(value)
        except SemanticError as exc:
            raise SemanticError(f"{what}={value!r}: {exc}") from None


def wrapped_int(value: int, dtype: DType) -> int:
    """``value`` in integer ``dtype`` as Triton's cast of its constant gives it: modulo 2**bits,
    in the signed range for a signed dtype."""
    v = value % (1 << dtype.bits)
    return v - (1 << dtype.bits) if dtype.is_signed and v >> (dtype.bits - 1) else v


# Python's min, max and abs on runtime scalars are these builtins, as in Triton.
PYTHON_BUILTINS: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.min: tlmath.minimum, builtins.max: tlmath.maximum, builtins.abs: tlmath.abs,
}


@applies(forms.python_builtin)
def python_builtin(fn: Callable[..., Any], shapes: tuple[tuple[int, ...], ...], kwargs: bool) -> Callable[..., Any]:
    """The ``tl.*`` builtin that Python's ``min``/``max``/``abs`` stands for on runtime values of
    ``shapes``: ``min``/``max`` are ``tl.minimum``/``tl.maximum`` on scalars and blocks alike, as
    Triton's code generator maps them, of two or more values folded from the left (the callers
    apply the op pairwise, as Triton's ``builtin_min``); ``abs`` takes scalars (Triton has no
    ``abs`` builtin)."""
    name = fn.__name__
    if fn is builtins.abs:
        if kwargs or len(shapes) != 1:
            raise SemanticError(f"{name}() on runtime values takes 1 positional argument")
    elif kwargs or len(shapes) < 2:
        raise SemanticError(f"{name}() on runtime values takes 2 or more positional arguments")
    if fn is builtins.abs and any(shapes):
        raise SemanticError("Python's abs() on a block: use tl.abs")
    return PYTHON_BUILTINS[fn]


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


@family_rule(Family.UNARY_MATH)
def _unary_math(what: str, a: Args) -> dict[str, Any]:
    float_operand(operand(a["x"]).dtype, what.removeprefix("tl."))
    return {}


def _float_x(name: str) -> Callable[[Args], dict[str, Any]]:
    """The rule of an op whose ``x`` must be a float block (the other operands adapt to it)."""
    def check(a: Args) -> dict[str, Any]:
        float_operand(operand(a["x"]).dtype, name)
        return {}
    return check


def tensor_dtypes(*given: object) -> list[DType]:
    """The operands' dtypes as Triton's ``tl.maximum``, ``tl.minimum``, ``tl.clamp`` and ``tl.fma``
    promote them: each Python number is first a tensor of its own dtype (``to_tensor``: f32 for a
    float, i32 for an int...), so it takes part (``tl.maximum(f16 block, 0.0)`` is f32,
    ``tl.minimum(i8 block, 1)`` i32), where an operator's number adapts to the block."""
    return [constant_dtype(v) if isinstance(v, (bool, int, float)) else operand(v).dtype for v in given]


def extremum_dtype(*given: object) -> DType:
    """The dtype ``tl.maximum``, ``tl.minimum`` and ``tl.clamp`` compare in and return, in Triton
    3.6's order: :func:`tensor_dtypes` promoted once each bf16 is f32 (Triton converts it first,
    ``_promote_bfloat16_to_float32``: no bf16 max or min in hardware)."""
    return functools.reduce(promote, [dtypes.F32 if d is dtypes.BF16 else d for d in tensor_dtypes(*given)])


@rule(tlmath.maximum, tlmath.minimum)
def _extremum(a: Args) -> dict[str, Any]:
    return {"dtype": extremum_dtype(a["x"], a["y"])}


@rule(tlmath.clamp)
def _clamp(a: Args) -> dict[str, Any]:
    """Triton promotes ``min`` with ``max``, then ``x`` with both."""
    float_operand(operand(a["x"]).dtype, "clamp")
    return {"dtype": extremum_dtype(a["min"], a["max"], a["x"])}


@rule(tlmath.fma)
def _fma(a: Args) -> dict[str, Any]:
    """``tl.fma(x, y, z)`` on a float block ``x``, computed in the dtype the three promote to, as
    Triton legalises each pair (an f16 ``x`` with f32 ``y`` and ``z`` is an f32 fma), a Python
    number as the tensor Triton makes of it (:func:`tensor_dtypes`: ``tl.fma(h, 2.0, 1.0)`` of
    f16 is f32). Returns that ``dtype``."""
    float_operand(operand(a["x"]).dtype, "fma")
    return {"dtype": functools.reduce(promote, tensor_dtypes(a["x"], a["y"], a["z"]))}


rule(tlmath.fdiv, tlmath.div_rn)(_float_x("fdiv"))


def _dtype_or_number(value: object) -> DType | bool | int | float:
    """An operand as promotion sees it: a block's dtype, or a Python number."""
    if isinstance(value, (bool, int, float)):
        return value
    return operand(value).dtype


@rule(tlmath.umulhi)
def _umulhi(a: Args) -> dict[str, Any]:
    """32- or 64-bit integers: Triton calls ``__nv_umulhi`` or ``__nv_umul64hi``, and has no
    narrower form (its lowering picks the 64-bit function for any other width)."""
    dtype = integer_operands(promote(_dtype_or_number(a["x"]), _dtype_or_number(a["y"])), "umulhi")
    if dtype.bits not in (32, 64):
        raise SemanticError(f"tl.umulhi takes 32- or 64-bit integers, got {dtype!r}")
    return {}


@rule(tlcreation.cast)
def _cast(a: Args) -> dict[str, Any]:
    """``dtype``: the target (an element or pointer type); ``to_zero``: a float downcast rounds
    toward zero. A cast with a pointer on a side reinterprets the address, whatever ``bitcast``."""
    x = operand(a["input"])
    dst = cast_target(a["dtype"])
    to_zero = cast_rounding(a["fp_downcast_rounding"])
    if x.dtype.is_pointer or dst.is_pointer:
        pointer_cast(x.dtype, dst)
    elif a["bitcast"]:
        bitcast(x.dtype, dst)
    return {"dtype": dst, "to_zero": to_zero}
