"""Typed construction of IR nodes: promotion, broadcasting and conversions.

The front end hands Python values (nodes or compile-time constants) to these methods; every
rule (which operands an operator takes, promotion, result dtypes) comes from
:mod:`tile_lang.semantics`, shared with the NumPy reference, and is checked before a method
is called: the asserts here are the compiler's own invariants (a failure is a CompilerBug).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Union

import tile_lang.dtypes as dtypes
from tile_lang.compiler.ir import (
    NO_ATTR, Attr, AxisAttr, BinaryAttr, BinaryFn, CastAttr, ConstAttr, Loc, Node, Op, RangeAttr, Region, Type,
    UnaryAttr, UnaryFn,
)
from tile_lang.dtypes import DType
from tile_lang.operators import OPERATORS, BinaryOp, UnaryOp
from tile_lang.ops import forms
from tile_lang.ops.forms import Operand, Typed
from tile_lang.semantics import base, elementwise, operators
from tile_lang.semantics.dispatch import apply

Scalar = Union[bool, int, float]
Value = Union[Node, Scalar]

_UNARY = {UnaryOp.NEG: UnaryFn.NEG, UnaryOp.INVERT: UnaryFn.INVERT}


def is_scalar_value(value: object) -> bool:
    return isinstance(value, (bool, int, float))


def operand(value: Value) -> Operand:
    """What the operator rules see of a value: a node's dtype, or the Python number."""
    return value.ty.dtype if isinstance(value, Node) else value


def common_dtype(a: Value, b: Value) -> DType:
    """Triton's promotion of two operands (:func:`tile_lang.semantics.operators.promote`)."""
    return operators.promote(operand(a), operand(b))


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Triton's broadcasting of two block shapes (the form ``forms.broadcast``)."""
    return apply(forms.broadcast, a, b)


class Builder:
    """Appends typed nodes to the region being built; ``loc`` is the current source line."""

    def __init__(self) -> None:
        self.bodies: list[list[Node]] = [[]]
        self.loc: Loc | None = None

    # ---------------------------------------------------------------- regions

    @contextlib.contextmanager
    def region(self, body: list[Node]) -> Iterator[list[Node]]:
        """Build into ``body`` (a fresh list the caller keeps) inside the ``with`` block."""
        self.bodies.append(body)
        try:
            yield body
        finally:
            self.bodies.pop()

    def emit(self, op: Op, type: Type | None, args: tuple[Node, ...] = (), attr: Attr = NO_ATTR,
             regions: tuple[Region, ...] = ()) -> Node:
        node = Node(op, type, args, attr, regions, self.loc)
        self.bodies[-1].append(node)
        return node

    # ---------------------------------------------------------------- values

    def const(self, value: Scalar, dtype: DType) -> Node:
        if dtype.is_float:
            value = float(value)
        elif dtype.is_bool:
            value = bool(value)
        else:
            value = int(value)
            apply(forms.constant_fits, value, dtype)
        return self.emit(Op.CONST, Type(dtype), attr=ConstAttr(value))

    def to_node(self, value: Value, dtype: DType | None = None) -> Node:
        """A node for ``value``; a Python scalar becomes a constant of ``dtype`` (or its own type)."""
        if isinstance(value, Node):
            return value if dtype is None or value.ty.dtype == dtype else self.cast(value, dtype)
        if not is_scalar_value(value):
            raise apply(forms.not_an_operand, value)
        return self.const(value, dtype or dtypes.scalar_dtype(value))

    def splat(self, node: Node, shape: tuple[int, ...]) -> Node:
        if node.ty.shape == shape:
            return node
        if node.ty.is_scalar:
            return self.emit(Op.SPLAT, node.ty.with_shape(shape), (node,)) if shape else node
        return self.broadcast_to(node, shape)

    def broadcast_to(self, node: Node, shape: tuple[int, ...]) -> Node:
        src = node.ty.shape
        if src == shape:
            return node
        if not src:
            return self.splat(node, shape)
        if len(src) < len(shape):
            node = self.reshape(node, (1,) * (len(shape) - len(src)) + src)
        assert broadcast_shapes(node.ty.shape, shape) == shape, f"cannot broadcast block shape {list(src)} to {list(shape)}"
        return self.emit(Op.BROADCAST, node.ty.with_shape(shape), (node,))

    def reshape(self, node: Node, shape: tuple[int, ...]) -> Node:
        if node.ty.shape == shape:
            return node
        assert node.ty.numel == _prod(shape), f"cannot reshape block {list(node.ty.shape)} to {list(shape)}"
        return self.emit(Op.RESHAPE, node.ty.with_shape(shape), (node,))

    def expand_dims(self, node: Node, axis: int) -> Node:
        shape = list(node.ty.shape)
        axis = axis + len(shape) + 1 if axis < 0 else axis
        shape.insert(axis, 1)
        return self.reshape(node, tuple(shape)) if node.ty.shape else self.splat(node, (1,))

    def cast(self, node: Node, dtype: DType, bitcast: bool = False, round_to_zero: bool = False) -> Node:
        if node.ty.dtype == dtype:
            return node
        elementwise.pointer_cast(node.ty.dtype, dtype)  # an address reinterpreted (also a stored pointer's)
        assert not bitcast or node.ty.dtype.bits == dtype.bits, f"bitcast of {node.ty.dtype!r} to {dtype!r}"
        return self.emit(Op.CAST, Type(dtype, node.ty.shape), (node,), CastAttr(bitcast, round_to_zero))

    def arange(self, start: int, end: int) -> Node:
        n = end - start
        assert n > 0 and not n & (n - 1), f"arange({start}, {end}): the length must be a positive power of two"
        return self.emit(Op.ARANGE, Type(dtypes.I32, (n,)), attr=RangeAttr(start, end))

    def program_id(self, op: Op, axis: int) -> Node:
        assert axis in (0, 1, 2), axis  # semantics.creation.program_axis
        return self.emit(op, Type(dtypes.I32), attr=AxisAttr(axis))

    # ---------------------------------------------------------------- arithmetic

    def binary_op(self, op: BinaryOp, a: Value, b: Value) -> Value:
        """A Python operator in kernel source: constants fold, otherwise the operator's rule."""
        if not isinstance(a, Node) and not isinstance(b, Node):
            return _fold(op, a, b)
        x, y = operand(a), operand(b)
        fn = BinaryFn(OPERATORS[op].fn)
        if any(isinstance(v, DType) and v.is_pointer for v in (x, y)):
            if apply(forms.pointer_binary, op, x, y):
                return self._emit_binary(fn, a, b, Typed(operators.operand_dtype(x), dtypes.BOOL))
            return self.pointer_arith(op, a, b)
        if op.is_comparison:
            a, b = self._compared(a, b)
            x, y = operand(a), operand(b)
        return self._emit_binary(fn, a, b, apply(forms.binary, op, x, y))

    def _compared(self, a: Value, b: Value) -> tuple[Value, Value]:
        """A comparison's Python number as a constant of its own dtype, as Triton makes it a tensor
        first, where that compares otherwise than the number adapting (``forms.compared_number``)."""
        for number, block in ((b, a), (a, b)):
            if isinstance(block, Node) and not isinstance(number, Node) and is_scalar_value(number):
                own = apply(forms.compared_number, block.ty.dtype, number)
                if own is not None:
                    made = self.const(number, own)
                    return (a, made) if number is b else (made, b)
        return a, b

    def binary(self, fn: BinaryFn, a: Value, b: Value, true_div: bool = False, dtype: DType | None = None) -> Node:
        """A binary function of a builtin (maximum, div_rn...) on promoted operands (in ``dtype``
        where its rule gave one)."""
        dtype = dtype or self._result_dtype(a, b, true_div or fn is BinaryFn.DIV_RN)
        return self._emit_binary(fn, a, b, Typed(dtype, dtypes.BOOL if fn.is_comparison else dtype))

    def _emit_binary(self, fn: BinaryFn, a: Value, b: Value, typed: Typed) -> Node:
        signed_shift = fn is BinaryFn.SHR and apply(forms.arithmetic_shift, operand(a), operand(b))
        x, y = self._operands(a, b, typed.operands)
        if fn is BinaryFn.SHR and signed_shift != typed.operands.is_signed:
            return self._shift_as(x, y, signed_shift)
        return self.emit(Op.BINARY, Type(typed.result, x.ty.shape), (x, y), BinaryAttr(fn))

    def _shift_as(self, x: Node, y: Node, signed: bool) -> Node:
        """``>>`` decides arithmetic vs logical by the left operand's original signedness."""
        kind = dtypes.Kind.INT if signed else dtypes.Kind.UINT
        alt = next(d for d in dtypes.ALL if d.kind is kind and d.bits == x.ty.dtype.bits)
        shifted = self.emit(Op.BINARY, Type(alt, x.ty.shape), (self.cast(x, alt, bitcast=True),
                                                               self.cast(y, alt, bitcast=True)),
                            BinaryAttr(BinaryFn.SHR))
        return self.cast(shifted, x.ty.dtype, bitcast=True)

    def _result_dtype(self, a: Value, b: Value, true_div: bool) -> DType:
        dtype = common_dtype(a, b)
        return dtypes.truediv_dtype(dtype, dtype) if true_div else dtype

    def _operands(self, a: Value, b: Value, dtype: DType) -> tuple[Node, Node]:
        x, y = self.to_node(a, dtype), self.to_node(b, dtype)
        shape = broadcast_shapes(x.ty.shape, y.ty.shape)
        return self.broadcast_to(x, shape), self.broadcast_to(y, shape)

    def pointer_arith(self, op: BinaryOp, a: Value, b: Value) -> Node:
        """``ptr + offsets``, ``offsets + ptr`` or ``ptr - offsets`` (checked by the rule)."""
        ptr, offset = (a, self.to_node(b)) if isinstance(a, Node) and a.ty.dtype.is_pointer else (b, self.to_node(a))
        assert isinstance(ptr, Node)
        if op is BinaryOp.SUB:
            offset = self.unary(UnaryFn.NEG, offset)
        shape = broadcast_shapes(ptr.ty.shape, offset.ty.shape)
        ptrs, off = self.broadcast_to(ptr, shape), self.broadcast_to(offset, shape)
        return self.emit(Op.BINARY, Type(ptr.ty.dtype, shape), (ptrs, off), BinaryAttr(BinaryFn.ADD))

    def unary_op(self, op: UnaryOp, x: Node) -> Node:
        """A Python unary operator in kernel source, after the operator's rule."""
        apply(forms.unary, op, x.ty.dtype)
        return x if op is UnaryOp.POS else self.unary(_UNARY[op], x)

    def unary(self, fn: UnaryFn, x: Node) -> Node:
        dtype = x.ty.dtype
        if fn is UnaryFn.NOT:
            x = self.truth(x)
            dtype = dtypes.BOOL
        return self.emit(Op.UNARY, Type(dtype, x.ty.shape), (x,), UnaryAttr(fn))

    def math(self, fn: UnaryFn, x: Value) -> Node:
        """A float function (exp, sqrt...): integers are not accepted, as in Triton."""
        node = self.to_node(x)
        assert node.ty.dtype.is_float, f"{fn.value} needs a float operand, got {node.ty.dtype!r}"
        return self.emit(Op.UNARY, node.ty, (node,), UnaryAttr(fn))

    def truth(self, x: Node) -> Node:
        return x if x.ty.dtype.is_bool else self.binary(BinaryFn.NE, x, 0)

    def where(self, cond: Value, x: Value, y: Value) -> Node:
        c = self.truth(self.to_node(cond))
        dtype = common_dtype(x, y)
        xs, ys = self.to_node(x, dtype), self.to_node(y, dtype)
        shape = broadcast_shapes(broadcast_shapes(c.ty.shape, xs.ty.shape), ys.ty.shape)
        args = (self.broadcast_to(c, shape), self.broadcast_to(xs, shape), self.broadcast_to(ys, shape))
        return self.emit(Op.WHERE, Type(dtype, shape), args)

    def elementwise(self, op: Op, values: tuple[Value, ...], dtype: DType, attr: Attr = NO_ATTR,
                    operands: tuple[DType, ...] | None = None) -> Node:
        """An op on operands converted to ``dtype`` (or each to its dtype of ``operands``) and
        broadcast together (fma, maximum, a libdevice function...), its result of ``dtype``."""
        nodes = [self.to_node(v, dtype if operands is None else operands[i]) for i, v in enumerate(values)]
        shape: tuple[int, ...] = ()
        for n in nodes:
            shape = broadcast_shapes(shape, n.ty.shape)
        return self.emit(op, Type(dtype, shape), tuple(self.broadcast_to(n, shape) for n in nodes), attr)


def _prod(shape: tuple[int, ...]) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _fold(op: BinaryOp, a: Scalar, b: Scalar) -> Scalar:
    """Constant arithmetic is Python's, as for Triton constexprs (its errors the kernel's)."""
    import operator

    table = {
        BinaryOp.ADD: operator.add, BinaryOp.SUB: operator.sub, BinaryOp.MUL: operator.mul,
        BinaryOp.TRUEDIV: operator.truediv, BinaryOp.FLOORDIV: operator.floordiv, BinaryOp.MOD: operator.mod,
        BinaryOp.AND: operator.and_, BinaryOp.OR: operator.or_, BinaryOp.XOR: operator.xor,
        BinaryOp.LSHIFT: operator.lshift, BinaryOp.RSHIFT: operator.rshift, BinaryOp.LT: operator.lt,
        BinaryOp.LE: operator.le, BinaryOp.GT: operator.gt, BinaryOp.GE: operator.ge, BinaryOp.EQ: operator.eq,
        BinaryOp.NE: operator.ne,
    }
    result: Scalar = base.python(table[op], a, b)
    return result
