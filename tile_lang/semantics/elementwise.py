"""Elementwise rules: the math op table, float-only operands, casts, scalars that must fit a dtype.

:data:`MATH` is the one list of the unary float functions (``tl.exp``, ``tl.exp2``...): each row
names the builtin and says how the reference evaluates it; the compiler lowers a row to the IR
function of the builtin's name (``UnaryFn("exp2")``), whose CUDA spelling the code generator
holds. Adding such a function is its declaration in ``tile_lang/ops/math.py`` and a row here
(plus an IR function and its spelling when it is a new one).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.ops import math as tlmath
from tile_lang.semantics.base import SemanticError
from tile_lang.tensor import pointee

Array = np.ndarray[Any, Any]

ROUNDINGS = ("rtne", "rtz")


@dataclass(frozen=True)
class MathOp:
    """One unary float function: the ``tl.*`` builtin and its NumPy evaluation (on f32, or f64
    for f64 inputs; the result is rounded to the input dtype)."""

    builtin: Callable[..., Any]
    reference: Callable[[Array], Array]

    @property
    def name(self) -> str:
        return self.builtin.__name__


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _rsqrt(v: Array) -> Array:
    out: Array = 1.0 / np.sqrt(v)
    return out


def _erf_of(v: Array) -> Array:
    return np.asarray(_erf(v), dtype=v.dtype)


def _erfc_of(v: Array) -> Array:
    return np.asarray(_erfc(v), dtype=v.dtype)


MATH: tuple[MathOp, ...] = (
    MathOp(tlmath.exp, np.exp), MathOp(tlmath.exp2, np.exp2), MathOp(tlmath.log, np.log), MathOp(tlmath.log2, np.log2),
    MathOp(tlmath.sin, np.sin), MathOp(tlmath.cos, np.cos), MathOp(tlmath.sqrt, np.sqrt), MathOp(tlmath.sqrt_rn, np.sqrt),
    MathOp(tlmath.rsqrt, _rsqrt), MathOp(tlmath.erf, _erf_of), MathOp(tlmath.atan, np.arctan), MathOp(tlmath.ceil, np.ceil),
    MathOp(tlmath.floor, np.floor), MathOp(tlmath.tanh, np.tanh), MathOp(tlmath.tan, np.tan), MathOp(tlmath.asin, np.arcsin),
    MathOp(tlmath.acos, np.arccos), MathOp(tlmath.sinh, np.sinh), MathOp(tlmath.cosh, np.cosh), MathOp(tlmath.asinh, np.arcsinh),
    MathOp(tlmath.acosh, np.arccosh), MathOp(tlmath.atanh, np.arctanh), MathOp(tlmath.erfc, _erfc_of), MathOp(tlmath.expm1, np.expm1),
    MathOp(tlmath.log1p, np.log1p), MathOp(tlmath.log10, np.log10), MathOp(tlmath.trunc, np.trunc), MathOp(tlmath.rint, np.rint),
)


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


def constant_fits(value: int, dtype: DType) -> None:
    """A Python int constant must fit the integer dtype it becomes (Triton's rule:
    ``u32_block > -1``, ``i32_block + 2**40`` and ``tl.full(shape, 2**40, tl.i32)`` are errors,
    not wraps or promotions; Triton's words, "out of range", are in the message)."""
    low, high = dtypes.int_limits(dtype)
    if not low <= value <= high:
        raise SemanticError(f"constant {value} does not fit in {dtype!r}: it is out of range for that type")


def scalar_fits(value: object, dtype: DType, what: str) -> None:
    """A Python number given where ``dtype`` elements go (``other=``, a stored constant) must be a
    value of that dtype: an integer in range for integer elements (``-inf`` or ``0.5`` is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not dtype.is_int:
        return
    whole = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
    low, high = dtypes.int_limits(dtype)
    if not whole or not low <= int(value) <= high:
        raise SemanticError(f"{what}={value!r} is not a value of the {dtype!r} elements "
                            f"(an integer in [{low}, {high}]); convert it explicitly")


# Python's min, max and abs on runtime scalars are these builtins, as in Triton.
PYTHON_BUILTINS: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.min: tlmath.minimum, builtins.max: tlmath.maximum, builtins.abs: tlmath.abs,
}


def python_builtin(fn: Callable[..., Any], shapes: tuple[tuple[int, ...], ...], kwargs: bool) -> Callable[..., Any]:
    """The ``tl.*`` builtin that Python's ``min``/``max``/``abs`` stands for on runtime scalars of
    ``shapes``; blocks need the explicit op (elementwise or a reduction)."""
    name = fn.__name__
    arity = 1 if fn is builtins.abs else 2
    if kwargs or len(shapes) != arity:
        raise SemanticError(f"{name}() on runtime values takes {arity} positional argument{'s' * (arity > 1)}")
    if any(shapes):
        hint = "tl.abs" if fn is builtins.abs else f"tl.{PYTHON_BUILTINS[fn].__name__} (elementwise) or tl.{name} (a reduction)"
        raise SemanticError(f"Python's {name}() on a block: use {hint}")
    return PYTHON_BUILTINS[fn]
