"""Python operators on tensors as data: the enums both backends map ``+``, ``<``, ``~`` ... to,
and :data:`OPERATORS`, the binary-operator table: each row says which operands the operator
takes (its rule, :mod:`tile_lang.semantics.operators`, reads that), the IR function the
compiler lowers it to (``BinaryFn(row.fn)``, whose CUDA spelling the code generator holds) and
the NumPy function the reference evaluates it with."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tile_lang.builtin import builtin

Array = np.ndarray[Any, Any]


class BinaryOp(enum.Enum):
    """A binary Python operator; the value is its spelling in kernel source."""

    ADD = "+"
    SUB = "-"
    MUL = "*"
    TRUEDIV = "/"
    FLOORDIV = "//"
    MOD = "%"
    AND = "&"
    OR = "|"
    XOR = "^"
    LSHIFT = "<<"
    RSHIFT = ">>"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EQ = "=="
    NE = "!="

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS


_COMPARISONS = frozenset({BinaryOp.LT, BinaryOp.LE, BinaryOp.GT, BinaryOp.GE, BinaryOp.EQ, BinaryOp.NE})


class UnaryOp(enum.Enum):
    """A unary Python operator."""

    NEG = "-"
    POS = "+"
    INVERT = "~"


class Takes(enum.Enum):
    """Which element kinds an operator accepts (after promotion)."""

    ANY = "any"                    # numbers and bools
    NUMBERS = "numbers"            # not bools: - and %
    INTEGERS = "integers"          # //, << and >>
    INTEGERS_OR_BOOLS = "bits"     # & | ^


@dataclass(frozen=True)
class Operator:
    """One binary operator: its operands, its IR function's name, and its NumPy evaluation
    (None: the reference's own C-style integer division)."""

    op: BinaryOp
    takes: Takes
    fn: str
    reference: Callable[[Array, Array], Array] | None


OPERATORS: dict[BinaryOp, Operator] = {row.op: row for row in (
    Operator(BinaryOp.ADD, Takes.ANY, "add", np.add),
    Operator(BinaryOp.SUB, Takes.NUMBERS, "sub", np.subtract),
    Operator(BinaryOp.MUL, Takes.ANY, "mul", np.multiply),
    Operator(BinaryOp.TRUEDIV, Takes.ANY, "div", np.true_divide),
    Operator(BinaryOp.FLOORDIV, Takes.INTEGERS, "div", None),
    Operator(BinaryOp.MOD, Takes.NUMBERS, "mod", None),
    Operator(BinaryOp.AND, Takes.INTEGERS_OR_BOOLS, "and", np.bitwise_and),
    Operator(BinaryOp.OR, Takes.INTEGERS_OR_BOOLS, "or", np.bitwise_or),
    Operator(BinaryOp.XOR, Takes.INTEGERS_OR_BOOLS, "xor", np.bitwise_xor),
    Operator(BinaryOp.LSHIFT, Takes.INTEGERS, "shl", np.left_shift),
    Operator(BinaryOp.RSHIFT, Takes.INTEGERS, "shr", np.right_shift),
    Operator(BinaryOp.LT, Takes.ANY, "lt", np.less),
    Operator(BinaryOp.LE, Takes.ANY, "le", np.less_equal),
    Operator(BinaryOp.GT, Takes.ANY, "gt", np.greater),
    Operator(BinaryOp.GE, Takes.ANY, "ge", np.greater_equal),
    Operator(BinaryOp.EQ, Takes.ANY, "eq", np.equal),
    Operator(BinaryOp.NE, Takes.ANY, "ne", np.not_equal),
)}


@builtin
def binary(op: BinaryOp, x: Any, y: Any) -> Any:
    """``x <op> y`` with Triton's promotion and C semantics for integer ``//`` and ``%``."""


@builtin
def unary(op: UnaryOp, x: Any) -> Any:
    """``<op> x``."""


@builtin
def truth(x: Any) -> bool:
    """Python truth of a scalar (``if``/``while`` conditions); the engine decides uniformity."""


@builtin
def index(x: Any) -> int:
    """A scalar used as a Python int (``range`` bounds)."""


@builtin
def subscript(x: Any, key: Any) -> Any:
    """``x[:, None]``-style indexing: inserts unit axes, keeps full slices."""
