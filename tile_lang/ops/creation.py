"""Program identity and block creation: program_id, arange, zeros, full, cast."""

from __future__ import annotations

from typing import Any, Literal, overload

from tile_lang.builtin import builtin
from tile_lang.func import helper
from tile_lang.dtypes import Int, W32
from tile_lang.signature import IntScalar
from tile_lang.tensor import R0, R1, R2, R3, D, E, R, Rounding, Tensor
from tile_lang.tensor import tensor_members


@builtin
def program_id(axis: Literal[0, 1, 2]) -> IntScalar:
    """The index of this program along grid ``axis``."""


@builtin
def num_programs(axis: Literal[0, 1, 2]) -> int:
    """The number of programs along grid ``axis``."""


@builtin
def arange(start: int, end: int) -> Tensor[Int[W32], R1]:
    """``[start, end)`` as an i32 block; ``end - start`` must be a power of two."""


@overload
def zeros(shape: tuple[()], dtype: type[D]) -> Tensor[D, R0]: ...
@overload
def zeros(shape: tuple[int], dtype: type[D]) -> Tensor[D, R1]: ...
@overload
def zeros(shape: tuple[int, int], dtype: type[D]) -> Tensor[D, R2]: ...
@overload
def zeros(shape: tuple[int, int, int], dtype: type[D]) -> Tensor[D, R3]: ...
@overload
def zeros(shape: list[int], dtype: type[D]) -> Tensor[D, Any]: ...
@builtin
def zeros(shape: tuple[int, ...] | list[int], dtype: Any) -> Any:
    """A block of zeros."""


@helper
def zeros_like(input: Tensor[D, R]) -> Tensor[D, R]:
    """A block of zeros with ``input``'s shape and dtype."""
    return full_like(input, 0)


Fill = float | Tensor[Any, R0]
"""What ``tl.full``/``tl.full_like`` fill with: a Python number, or a runtime scalar (a parameter, ``tl.max(x, 0)``)."""


@overload
def full(shape: tuple[()], value: Fill, dtype: type[D]) -> Tensor[D, R0]: ...
@overload
def full(shape: tuple[int], value: Fill, dtype: type[D]) -> Tensor[D, R1]: ...
@overload
def full(shape: tuple[int, int], value: Fill, dtype: type[D]) -> Tensor[D, R2]: ...
@overload
def full(shape: tuple[int, int, int], value: Fill, dtype: type[D]) -> Tensor[D, R3]: ...
@overload
def full(shape: list[int], value: Fill, dtype: type[D]) -> Tensor[D, Any]: ...
@builtin
def full(shape: tuple[int, ...] | list[int], value: Any, dtype: Any) -> Any:
    """A block filled with ``value`` (a number or a runtime scalar, cast to ``dtype``)."""


@builtin
def full_like(input: Tensor[D, R], value: Fill) -> Tensor[D, R]:
    """A block shaped like ``input`` filled with ``value`` (a number or a runtime scalar, cast to its dtype)."""


@overload
def cast(
    input: Tensor[Any, R], dtype: type[E], fp_downcast_rounding: Rounding | None = None, bitcast: bool = False
) -> Tensor[E, R]: ...
@overload
def cast(input: float, dtype: type[E], fp_downcast_rounding: Rounding | None = None,
         bitcast: bool = False) -> Tensor[E, R0]: ...  # a Python scalar (an int parameter): a rank-0 block
@builtin
def cast(
    input: Tensor[Any, R] | float, dtype: type[E], fp_downcast_rounding: Rounding | None = None, bitcast: bool = False
) -> Tensor[E, R] | Tensor[E, R0]:
    """Convert ``input`` to ``dtype`` (round to nearest even; ``bitcast`` reinterprets bits)."""


tensor_members(cast)
