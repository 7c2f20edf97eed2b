"""Python operators on tensors as data: the enums both backends map ``+``, ``<``, ``~`` ... to."""

from __future__ import annotations

import enum
from typing import Any

from tile_lang.builtin import builtin


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
