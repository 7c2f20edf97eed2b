"""The rules applied outside a builtin's call, declared as forms: the Python syntax each front end
compiles itself (operators, conditions, subscripts, ``range`` loops, ``assert``, a discarded hint)
and what only running a kernel shows (a combine function's results, a descriptor's run-time
strides, a constant's fit). Each form's rule is registered once, in :mod:`tile_lang.semantics`
(``@applies(forms.condition)``), and both backends apply it through the one dispatcher,
:func:`tile_lang.semantics.dispatch.apply`, never by calling a rule function; a builtin's rule is
applied by :func:`~tile_lang.semantics.dispatch.checked` instead."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar, Union

from tile_lang.dtypes import DType
from tile_lang.errors import SemanticError
from tile_lang.operators import BinaryOp, UnaryOp
from tile_lang.seen import Block, Shape

P = ParamSpec("P")
R = TypeVar("R")

Operand = Union[DType, bool, int, float]  # what an operator's rule sees of an operand: a dtype, or the Python number
BlockType = tuple[DType, Shape]  # a value's element dtype and block shape (``()`` for a scalar)


@dataclass(frozen=True)
class Typed:
    """What an operator's rule gives: the dtype both operands are converted to, and the result's."""

    operands: DType
    result: DType


@dataclass(frozen=True)
class RangeCall:
    """A loop's ``range``, ``tl.range`` or ``tl.static_range`` call with its arguments bound:
    the bounds as given (ints or scalar tensors) and ``tl.range``'s unroll hint."""

    start: object
    stop: object
    step: object
    static: bool
    unroll: int | None = None


class Form(Generic[P, R]):
    """One form: its name, its signature (the declaration's) and its rule, registered once."""

    __slots__ = ("name", "doc", "rule")

    def __init__(self, declaration: Callable[P, R]) -> None:
        self.name = declaration.__name__
        self.doc = (declaration.__doc__ or "").strip()
        self.rule: Callable[P, R] | None = None

    def __repr__(self) -> str:
        return f"forms.{self.name}"


FORMS: list[Form[..., Any]] = []


def form(declaration: Callable[P, R]) -> Form[P, R]:
    """Declare a form from its signature and docstring (the body is never run)."""
    declared = Form(declaration)
    FORMS.append(declared)
    return declared


# ---- operators


@form
def binary(op: BinaryOp, x: Operand, y: Operand) -> Typed:
    """``x <op> y`` on values: what the operands are converted to and the result's dtype."""


@form
def pointer_binary(op: BinaryOp, x: Operand, y: Operand) -> bool:
    """``x <op> y`` with a pointer operand; whether it is a comparison."""


@form
def arithmetic_shift(x: Operand, y: Operand) -> bool:
    """Whether ``x >> y`` shifts in the sign bit."""


@form
def unary(op: UnaryOp, x: DType) -> DType:
    """``<op> x``: the result's dtype."""


@form
def not_an_operand(value: object) -> SemanticError:
    """The error for an operand that is neither a tensor nor a number."""


@form
def broadcast(a: Shape, b: Shape, what: str | None = None) -> Shape:
    """Two block shapes broadcast together (``what`` names the builtin in the message)."""


@form
def python_builtin(fn: Callable[..., Any], shapes: tuple[Shape, ...], kwargs: bool) -> Callable[..., Any]:
    """The ``tl.*`` op Python's ``min``, ``max`` or ``abs`` stands for on runtime values of these
    shapes (given keywords or not); on blocks an error naming the explicit op."""


@form
def constant_fits(value: int, dtype: DType) -> None:
    """A Python int constant fits the integer dtype it becomes."""


@form
def constant_dtype(value: bool | int | float) -> DType:
    """The dtype of a Python number bound in a kernel (``value.dtype``)."""


@form
def compared_number(block: DType, value: bool | int | float) -> DType | None:
    """The dtype a Python number compared with a block of ``block`` is a tensor of first, where
    that compares otherwise than the number adapting to the block; None where it does not."""


# ---- control flow


@form
def condition(shape: Shape) -> bool:
    """A runtime value as Python's truth; whether it is a block of one element."""


@form
def logical(shape: Shape, combine: bool, negation: bool = False) -> bool:
    """Whether ``and``/``or`` (``not``: ``negation``) on a runtime operand of ``shape`` works element
    by element (``combine``: in a combine function's body)."""


@form
def decides(value: object, conjunction: bool) -> bool:
    """Whether a compile-time operand of ``and`` (``conjunction``) or ``or`` decides the result."""


@form
def index(shape: Shape, dtype: DType) -> None:
    """A runtime value used as a Python int (a ``range`` bound)."""


@form
def constant_index(value: object) -> int:
    """A compile-time value used as a Python int (a ``range`` bound)."""


@form
def subscript(key: object, rank: int) -> tuple[object, ...]:
    """The parts of ``x[key]`` on a block of ``rank`` axes, one ``:`` per axis kept and a None
    per unit axis inserted, in order."""


@form
def raised(source: str) -> SemanticError:
    """A ``raise`` statement a run or a compile reaches."""


@form
def asserted(dtype: DType) -> None:
    """``assert`` on a runtime value of ``dtype``."""


@form
def assertion_message(msg: object, source: str) -> str:
    """What a failing ``assert test, msg`` says."""


@form
def discarded_hint(callee: object) -> bool:
    """Whether a call of ``callee`` whose result is discarded is a hint, which then promises nothing."""


# ---- loops


@form
def range_call(callee: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> RangeCall | None:
    """How a loop's iterator call binds (None: ``callee`` is no loop iterator)."""


@form
def range_step(step: int) -> int:
    """A loop's step, known: any int but 0 (a run-time zero step fails alike)."""


@form
def loop_index(bounds: Iterable[DType]) -> DType:
    """The dtype of a runtime loop's index, from its bounds' dtypes."""


@form
def loop_carried(name: str, before: BlockType | None, inside: BlockType) -> SemanticError | None:
    """Whether a runtime loop can carry ``name`` (None), else the error reading it raises."""


@form
def loop_local(name: str, line: int) -> SemanticError:
    """The error for reading ``name`` where only the runtime loop at ``line`` bound it (its body,
    or a ``for``'s index with no earlier binding): after the loop, or in an iteration before the
    body binds it."""


@form
def loop_settles(name: str, carried: DType, inside: DType) -> DType:
    """The dtype a runtime loop carries ``name`` in once its body gives it ``inside`` (the
    carried dtype widened); a body that keeps narrowing it is an error."""


@form
def branch_types(name: str, then: BlockType, orelse: BlockType) -> None:
    """A name a runtime ``if`` leaves bound on both of its sides has one type after it: the
    type each side leaves it (the one before the ``if`` for a side that does not bind it)."""


@form
def branch_own(body: Sequence[ast.stmt], orelse: Sequence[ast.stmt]) -> frozenset[str]:
    """The names a runtime ``if`` with these sides keeps to itself when they are unbound before
    it: unreadable after it, whatever side ran (:func:`branch_local`)."""


@form
def branch_local(name: str, line: int) -> SemanticError:
    """The error for reading ``name`` after the runtime ``if`` at ``line`` that keeps it to itself
    (:func:`branch_own`)."""


# ---- what only running shows


@form
def combine_count(fn: object, got: int, want: int, what: str) -> None:
    """A combine function returns one value per input block."""


@form
def combine_results(fn: object, got: Sequence[Block | str], want: Sequence[DType], what: str) -> None:
    """A combine function's results: rank-0 values of the input blocks' dtypes."""


@form
def combine_branches(fn: object) -> SemanticError:
    """The error for a combine function that branches on its arguments."""


@form
def descriptor_strides(strides: tuple[int | None, ...], element: DType) -> None:
    """A tensor descriptor's strides, as far as they are known."""
