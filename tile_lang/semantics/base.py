"""What every op family's rules share: the error they raise and compile-time arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.builtin import Builtin, Family, builtin_of
from tile_lang.dtypes import DType
from tile_lang.errors import SemanticError as SemanticError  # the rules' error, defined with the others
from tile_lang.errors import python as python  # Python's work on compile-time values, the kernel's error
from tile_lang.ops import forms
from tile_lang.ops.forms import Form
from tile_lang.seen import Block as Block, Seen as Seen, Shape as Shape, Tiled as Tiled  # what rules see

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


def applies(form: Form[P, R]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Register the decorated function as the rule of ``form`` (one rule a form), which the
    dispatcher (:func:`tile_lang.semantics.dispatch.apply`) applies for both backends."""

    def register(fn: Callable[P, R]) -> Callable[P, R]:
        assert form.rule is None, f"{form!r} has a rule already"
        form.rule = fn
        return fn

    return register


@applies(forms.not_an_operand)
def not_an_operand(value: object) -> SemanticError:
    """The error for a kernel operand that is neither a tensor nor a number (a str, a list), as
    both backends report it."""
    return SemanticError(f"expected a tensor or a scalar, got {type(value).__name__}")


def constexpr_int(value: object, what: str, arg: str) -> int:
    """A compile-time integer argument ``arg`` of the builtin ``what`` (a Python or NumPy int,
    not a bool, a float or str constexpr, or a runtime scalar), or an error naming both."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SemanticError(f"{what}: {arg} must be a compile-time int, got {shown(value)}")
    return int(value)


_PYTHON_VALUES = (bool, int, float, complex, str, bytes, np.generic, type(None))


def shown(value: object) -> str:
    """An argument as a message shows it: a Python value with its kind (``64.0 (a float)``, how
    a ``BLOCK=64.0`` constexpr arrives), anything else a runtime value (each backend's own
    tensor, so it is not printed)."""
    if isinstance(value, _PYTHON_VALUES):
        return f"{value!r} (a {type(value).__name__})"
    if isinstance(value, (DType, tuple, list)):
        return repr(value)
    return "a runtime value"


def block_axis(rank: int, axis: object, what: str) -> int:
    """``axis`` (a constexpr, negative from the end) as an axis of a block of ``rank``."""
    index = constexpr_int(axis, what, "axis")
    if not -rank <= index < rank:
        raise SemanticError(f"{what}: invalid axis {index}: out of range for a block of rank {rank}")
    return index % rank


# The most elements one block may have: Triton's TRITON_MAX_TENSOR_NUMEL. Both backends index a
# block's elements with 32-bit ints, which this keeps far from overflowing.
MAX_BLOCK_NUMEL = 2**20


def pow2_shape(shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    """``shape`` when every dimension is a positive power of two, within :data:`MAX_BLOCK_NUMEL`."""
    if any(not isinstance(d, int) or d <= 0 or d & (d - 1) for d in shape):
        raise SemanticError(f"{what}: block dimensions must be powers of two, got shape {list(shape)}")
    return block_numel(shape, what)


def block_numel(shape: tuple[int, ...], what: str | None) -> tuple[int, ...]:
    """``shape`` when its block has at most :data:`MAX_BLOCK_NUMEL` elements."""
    numel = 1
    for d in shape:
        numel *= d
    if numel > MAX_BLOCK_NUMEL:
        raise SemanticError(f"{what + ': ' if what else ''}a block of shape {list(shape)} has {numel} elements, "
                            f"more than the {MAX_BLOCK_NUMEL} (2**20) a block may have (Triton's "
                            "TRITON_MAX_TENSOR_NUMEL)")
    return shape


def int_tuple(dims: object, what: str, arg: str) -> Shape:
    """Constexpr integers given as a tuple, a list or one integer (``arg`` of ``what``)."""
    items = dims if isinstance(dims, (tuple, list)) else (dims,)
    return tuple(constexpr_int(d, what, arg) for d in items)


@applies(forms.broadcast)
def broadcast(a: Shape, b: Shape, what: str | None = None) -> Shape:
    """Triton's broadcast of two block shapes (ranks aligned on the right, size-1 axes expand);
    ``what`` names the builtin in the message (operators give none)."""
    rank = max(len(a), len(b))
    pa, pb = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(pa, pb)):
        raise SemanticError(f"{what + ': ' if what else ''}cannot broadcast block shapes {list(a)} and {list(b)}")
    return block_numel(tuple(max(x, y) for x, y in zip(pa, pb)), what)


Args = Mapping[str, Any]
# An op's rule: its bound arguments as the rules see them (each runtime value a Block, a tuple of
# them a tuple of Blocks, anything else as given) -> the checked, normalised arguments (a new
# value for a parameter, or a derived one such as a result dtype) the implementations then read.
Rule = Callable[[Args], dict[str, Any]]
RULES: dict[Builtin, Rule] = {}
FamilyRule = Callable[[str, Args], dict[str, Any]]  # a family's rule, told the op's name ("tl.sum")
FAMILY_RULES: dict[Family, FamilyRule] = {}


def rule(*functions: Callable[..., Any]) -> Callable[[Rule], Rule]:
    """Register the decorated function as the rule of these builtins (``tl.*`` functions)."""

    def register(fn: Rule) -> Rule:
        for builtin in functions:
            op = builtin_of(builtin)
            assert op is not None, builtin
            RULES[op] = fn
        return fn

    return register


def family_rule(family: Family) -> Callable[[FamilyRule], FamilyRule]:
    """Register the decorated function as the rule of every member of ``family`` without its own."""

    def register(fn: FamilyRule) -> FamilyRule:
        FAMILY_RULES[family] = fn
        return fn

    return register


def dtype_arg(marker: object, what: str) -> DType:
    """The dtype a marker argument of ``what`` names (``tl.f32``), or an error naming ``what``."""
    try:
        return dtypes.dtype_of(marker)
    except TypeError as exc:
        raise SemanticError(f"{what}: {exc}") from None


def operand(value: object, like: Block | None = None) -> Block:
    """A block argument: a runtime value's Block, or a Python number as the block it becomes
    (typed as Triton types it next to ``like``); anything else is :func:`not_an_operand`."""
    if isinstance(value, Block):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        py = value.item() if isinstance(value, np.generic) else value
        return Block(dtypes.scalar_dtype(py) if like is None else dtypes.promote_scalar(like.dtype, py), ())
    raise not_an_operand(value)
