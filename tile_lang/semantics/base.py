"""What every op family's rules share: the error they raise and compile-time arguments."""

from __future__ import annotations

import numpy as np

from tile_lang.errors import TileLangError


class SemanticError(TileLangError):
    """A kernel breaks an op's rule. It carries only the message: the backend that called the
    rule re-raises it as a KernelError at the user's line."""


def constexpr_int(value: object, what: str) -> int:
    """A compile-time integer argument (a Python or NumPy int, not a runtime scalar), or an error naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SemanticError(f"{what}: expected a constexpr integer, got {value!r}")
    return int(value)


def block_axis(rank: int, axis: object, what: str) -> int:
    """``axis`` (a constexpr, negative from the end) as an axis of a block of ``rank``."""
    index = constexpr_int(axis, what)
    if not -rank <= index < rank:
        raise SemanticError(f"{what}: axis {index} is out of range for a block of rank {rank}")
    return index % rank


def pow2_shape(shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    """``shape`` when every dimension is a positive power of two."""
    if any(not isinstance(d, int) or d <= 0 or d & (d - 1) for d in shape):
        raise SemanticError(f"{what}: block dimensions must be powers of two, got shape {list(shape)}")
    return shape
