"""Operator rules: Python's ``+ - * / // % & | ^ << >>``, comparisons and unary ``- ~ not`` on
blocks, and Python's control flow on runtime values (conditions, ``range`` bounds, ``assert``).
Which operands each operator takes is its row of :data:`tile_lang.operators.OPERATORS`.
Promotion (Triton's, a Python number adapting to the block it meets) is :func:`promote`. Each
rule is registered as the rule of its :mod:`tile_lang.ops.forms` entry, which the backends apply
through :func:`tile_lang.semantics.dispatch.apply`."""

from __future__ import annotations

import functools
import math

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.operators import OPERATORS, BinaryOp, Takes, UnaryOp
from tile_lang.ops import forms
from tile_lang.ops.forms import Operand, Typed
from tile_lang.semantics.base import SemanticError, applies, shown
from tile_lang.semantics.coded import computes_on



@applies(forms.arithmetic_shift)
def arithmetic_shift(x: Operand, y: Operand) -> bool:
    """Whether ``x >> y`` shifts in the sign bit: Triton decides by the left operand's own dtype
    (a Python number on the left takes the right's), not by the dtype both are promoted to, so
    ``int8 >> uint8`` shifts arithmetically in uint8."""
    left = x if isinstance(x, DType) else y
    return isinstance(left, DType) and left.is_signed


def operand_dtype(x: Operand) -> DType:
    """A block's dtype, or the dtype Triton gives a Python number standing alone."""
    return x if isinstance(x, DType) else dtypes.scalar_dtype(x)


def promote(x: Operand, y: Operand) -> DType:
    """Triton's promotion of two operands; a Python number adapts to a block's dtype, and two
    Python numbers (``tl.minimum(-0.5, 8.0)``) promote as standalone scalars."""
    if isinstance(x, DType):
        return dtypes.promote(x, y) if isinstance(y, DType) else dtypes.promote_scalar(x, y)
    if isinstance(y, DType):
        return dtypes.promote_scalar(y, x)
    return dtypes.promote(dtypes.scalar_dtype(x), dtypes.scalar_dtype(y))


@applies(forms.binary)
def binary(op: BinaryOp, x: Operand, y: Operand) -> Typed:
    """``x <op> y`` on values (pointer operands: :func:`pointer_binary`): the operator's rule
    on the promoted dtype; ``/`` divides in a float type, comparisons give bools."""
    if op in _DIVISIONS and isinstance(x, DType) and isinstance(y, DType) and x.is_int and y.is_int \
            and x.is_signed != y.is_signed:
        raise SemanticError(f"Cannot use {op.value} with {x!r} and {y!r} because they have different signedness "
                            "(Triton's rule); convert one with .to() so both are signed or both unsigned")
    common = promote(x, y)
    return _typed(op, division_dtype(x, y, common) if op in _HALF_DIVISIONS else common)


# Triton rejects these between a signed and an unsigned integer block (a Python int adapts)
_DIVISIONS = frozenset((BinaryOp.TRUEDIV, BinaryOp.FLOORDIV, BinaryOp.MOD))
_HALF_DIVISIONS = frozenset((BinaryOp.TRUEDIV, BinaryOp.MOD))


def division_dtype(x: Operand, y: Operand, common: DType) -> DType:
    """The dtype ``/`` and ``%`` compute in and return, from the operands' promoted ``common``:
    f32 where that is f16 or bf16, as in Triton (PTX has no 16-bit division, so Triton's
    ``computation_type_impl`` divides them in f32 and keeps the f32), except between two fp8
    blocks, which meet in f16 and divide there (Triton's fp8 rule does not look at the operator)."""
    if common not in (dtypes.F16, dtypes.BF16):
        return common
    fp8s = all(isinstance(v, DType) and v.is_fp8 for v in (x, y))
    return common if fp8s else dtypes.F32


@functools.cache  # the reference's hot path
def _typed(op: BinaryOp, common: DType) -> Typed:
    takes = OPERATORS[op].takes
    computes_on(common, f"operator {op.value}")
    if op is BinaryOp.FLOORDIV and common.is_float:
        raise SemanticError("// needs integer operands; use / and tl.floor for floats")
    if common.is_bool and takes is not Takes.ANY and takes is not Takes.INTEGERS_OR_BOOLS:
        hint = "; use ^ for bools, or convert with .to()" if op is BinaryOp.SUB else ""
        raise SemanticError(f"operator {op.value} is not defined on bools{hint}")
    if common.is_float and takes in (Takes.INTEGERS, Takes.INTEGERS_OR_BOOLS):
        raise SemanticError(f"invalid operands of type {common!r} for operator {op.value}, which needs integer "
                            f"{'or bool ' if takes is Takes.INTEGERS_OR_BOOLS else ''}operands")
    if op is BinaryOp.TRUEDIV:
        return Typed(dtypes.truediv_dtype(common, common), dtypes.truediv_dtype(common, common))
    return Typed(common, dtypes.BOOL if op.is_comparison else common)


@applies(forms.pointer_binary)
def pointer_binary(op: BinaryOp, x: Operand, y: Operand) -> bool:
    """An operator with a pointer operand: ``ptr + ints``, ``ints + ptr``, ``ptr - ints`` (the
    offsets integers or bools), or ``==``/``!=`` between pointers of one type. Returns whether
    it is a comparison."""
    x_ptr, y_ptr = (isinstance(v, DType) and v.is_pointer for v in (x, y))
    if x_ptr and y_ptr:
        if op not in (BinaryOp.EQ, BinaryOp.NE):
            raise SemanticError(f"operator {op.value} is not defined between pointers")
        if x != y:
            raise SemanticError(f"operator {op.value} between pointers of different types, {x!r} and {y!r}")
        return True
    if op is not BinaryOp.ADD and not (op is BinaryOp.SUB and x_ptr):
        raise SemanticError(f"operator {op.value} is not defined on pointers")
    offset = operand_dtype(y if x_ptr else x)
    if not (offset.is_int or offset.is_bool):
        raise SemanticError(f"pointer offsets must be integers, got {offset!r}")
    return False


@applies(forms.unary)
def unary(op: UnaryOp, x: DType) -> DType:
    """``-x`` on numbers, ``~x`` on integers and bools; ``+x`` on anything."""
    if op is UnaryOp.NEG and (x.is_bool or x.is_pointer):
        raise SemanticError(f"unary - is not defined on {'bools' if x.is_bool else 'pointers'}")
    if op is UnaryOp.INVERT and not (x.is_int or x.is_bool):
        raise SemanticError(f"operator ~ needs integer or bool operands, got {x!r}")
    if op is UnaryOp.NEG:
        computes_on(x, "unary -")
    return x


@applies(forms.condition)
def condition(shape: tuple[int, ...]) -> bool:
    """Python's truth (``if``, ``while``, ``x if c else y``, ``not``, ``and``/``or``) is for
    scalars, and, as Triton allows, for a block of one element, read as its scalar (returns
    whether ``shape`` is such a block, which the backends reshape to rank 0 first)."""
    if math.prod(shape) != 1:
        _not_a_block(shape, "a condition")
    return bool(shape)


@applies(forms.logical)
def logical(shape: tuple[int, ...], combine: bool, negation: bool = False) -> bool:
    """``and``, ``or`` and ``not`` on a block work element by element, as Triton runs them (which
    it deprecates in favour of ``& | ~``; Liger-Kernel's and Triton's own tests write
    ``mask = mask and (x % k != 0)``, FlagGems' ``triu`` ``m_mask and n_mask`` with ``m_mask`` of
    shape [1, 1] and ``n_mask`` of [1, 2048]). Each operand becomes its truth (non-zero), the blocks
    broadcast, and every operand is evaluated. Only a compile-time operand that decides the result
    ends the expression. A block of one element is a block (its result one too, which
    :func:`condition` reads as a scalar where it is a condition), for ``not`` as well: Triton's
    ``tensor.__not__`` keeps the shape, so ``(not v).to(tl.int32)`` works on a ``[1]`` block.
    In a combine function's body,
    which runs once per pair of elements with no branch, they are element by element on its
    rank-0 values too (FlagGems' ``return a and b`` reducing bools: Triton's ``logical_and``).
    Elsewhere on a scalar they are Python's (:func:`condition`): what follows a runtime scalar
    runs only where it does not decide."""
    return combine or bool(shape)


def _not_a_block(shape: tuple[int, ...], what: str) -> None:
    raise SemanticError(f"a block of shape {list(shape)} used as {what}; "
                        "Python control flow needs a scalar (reduce it first, or use tl.where)")


@applies(forms.index)
def index(shape: tuple[int, ...], dtype: DType) -> None:
    """A runtime value used as a Python int (a ``range`` bound): an integer or bool scalar."""
    if shape:
        _not_a_block(shape, "an integer")
    if not (dtype.is_int or dtype.is_bool):
        raise SemanticError(f"a {dtype!r} scalar used as an integer (range bound or index)")


@applies(forms.constant_index)
def constant_index(value: object) -> int:
    """A compile-time value used as a Python int (a ``range`` or ``tl.static_range`` bound): an
    int or bool; a float fails as a float scalar does in :func:`index`."""
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    if isinstance(value, float):
        index((), dtypes.scalar_dtype(value))
    raise SemanticError(f"a range bound must be an integer, got {shown(value)}")


@applies(forms.decides)
def decides(value: object, conjunction: bool) -> bool:
    """Whether a compile-time operand of ``and`` (``conjunction``) or ``or`` decides the result
    alone (a false one for ``and``, a true one for ``or``): the operators stop there, as in
    Triton, without evaluating what follows. A runtime operand (under :func:`condition`) is
    followed by a branch: the rest runs where it does not decide, and its rules apply even
    where no program runs it."""
    return bool(value) != conjunction


@applies(forms.assertion_message)
def assertion_message(msg: object, source: str) -> str:
    """What a failing ``assert test, msg`` says: ``msg``, or the test's source when there is none.
    On a compile-time test it fails at compile time; on a runtime scalar or block it is a device
    assertion (``tl.device_assert``: every element must be true), as Triton lowers it."""
    return source if msg is None else str(msg)


@applies(forms.asserted)
def asserted(dtype: DType) -> None:
    """``assert`` tests a runtime value's truth (non-zero); a pointer has none to test."""
    if dtype.is_pointer:
        raise SemanticError(f"assert on a {dtype!r} value: a pointer has no truth value (test its offsets)")
