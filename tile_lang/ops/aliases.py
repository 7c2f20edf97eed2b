"""Rust-book spellings, so kernels from the teenygrad book port line by line.

Idiomatic tile_lang is Triton's spelling (``x < y``, ``tl.where``, ``tl.max(x, 0,
return_indices=True)``); these read the same as the Rust trait's methods.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from tile_lang.dtypes import Bool, Float, Int, W32
from tile_lang.func import helper
from tile_lang.ops.math import NumT, where
from tile_lang.ops.reduction import max
from tile_lang.operators import BinaryOp, binary
from tile_lang.tensor import R0, R1, R2, D, R, Tensor


@helper
def lt(x: Tensor[NumT, R], y: Tensor[NumT, R]) -> Tensor[Bool, R]:
    """``x < y``."""
    return binary(BinaryOp.LT, x, y)  # type: ignore[no-any-return]


@helper
def le(x: Tensor[NumT, R], y: Tensor[NumT, R]) -> Tensor[Bool, R]:
    """``x <= y``."""
    return binary(BinaryOp.LE, x, y)  # type: ignore[no-any-return]


@helper
def gt(x: Tensor[NumT, R], y: Tensor[NumT, R]) -> Tensor[Bool, R]:
    """``x > y``."""
    return binary(BinaryOp.GT, x, y)  # type: ignore[no-any-return]


@helper
def ge(x: Tensor[NumT, R], y: Tensor[NumT, R]) -> Tensor[Bool, R]:
    """``x >= y``."""
    return binary(BinaryOp.GE, x, y)  # type: ignore[no-any-return]


@helper
def eq(x: Tensor[D, R], y: Tensor[D, R]) -> Tensor[Bool, R]:
    """``x == y``."""
    return binary(BinaryOp.EQ, x, y)  # type: ignore[no-any-return]


@helper
def ne(x: Tensor[D, R], y: Tensor[D, R]) -> Tensor[Bool, R]:
    """``x != y``."""
    return binary(BinaryOp.NE, x, y)  # type: ignore[no-any-return]


@helper
def lt_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x < y`` for a scalar ``y``."""
    return binary(BinaryOp.LT, x, y)  # type: ignore[no-any-return]


@helper
def le_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x <= y`` for a scalar ``y``."""
    return binary(BinaryOp.LE, x, y)  # type: ignore[no-any-return]


@helper
def gt_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x > y`` for a scalar ``y``."""
    return binary(BinaryOp.GT, x, y)  # type: ignore[no-any-return]


@helper
def ge_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x >= y`` for a scalar ``y``."""
    return binary(BinaryOp.GE, x, y)  # type: ignore[no-any-return]


@helper
def eq_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x == y`` for a scalar ``y``."""
    return binary(BinaryOp.EQ, x, y)  # type: ignore[no-any-return]


@helper
def ne_scalar(x: Tensor[NumT, R], y: float) -> Tensor[Bool, R]:
    """``x != y`` for a scalar ``y``."""
    return binary(BinaryOp.NE, x, y)  # type: ignore[no-any-return]


@overload
def where_(condition: Tensor[Bool, R], x: Tensor[D, R], y: Tensor[D, R] | Tensor[D, R0] | float) -> Tensor[D, R]: ...
@overload
def where_(condition: Tensor[Bool, R], x: Tensor[D, R0] | float, y: Tensor[D, R]) -> Tensor[D, R]: ...
@overload
def where_(condition: Tensor[Bool, R], x: int, y: int) -> Tensor[Int[W32], R]: ...
@overload
def where_(condition: Tensor[Bool, R], x: float, y: float) -> Tensor[Float[W32], R]: ...
@helper
def where_(condition: Any, x: Any, y: Any) -> Any:
    """``tl.where`` under the Rust trait's name."""
    return where(condition, x, y)


@overload
def max_with_indices(input: Tensor[NumT, R1], axis: Literal[0, -1]) -> tuple[Tensor[NumT, R0], Tensor[Int[W32], R0]]: ...
@overload
def max_with_indices(input: Tensor[NumT, R2], axis: Literal[0, 1, -1]) -> tuple[Tensor[NumT, R1], Tensor[Int[W32], R1]]: ...
@helper
def max_with_indices(input: Any, axis: Any) -> Any:
    """``tl.max(input, axis, return_indices=True)``: the maximum and its (leftmost) index."""
    return max(input, axis, return_indices=True)
