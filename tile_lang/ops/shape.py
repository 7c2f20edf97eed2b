"""Shape manipulation: broadcast, reshape, permute, join/split, cat."""

from __future__ import annotations

from typing import Any, overload

from tile_lang.builtin import builtin
from tile_lang.tensor import R0, R1, R2, R3, D, E, R, Tensor
from tile_lang.tensor import tensor_members


@builtin
def broadcast(input: Tensor[D, R], other: Tensor[E, R]) -> tuple[Tensor[D, R], Tensor[E, R]]:
    """Both operands broadcast to their common shape."""


@overload
def broadcast_to(input: Tensor[D, R0], shape: tuple[int], /) -> Tensor[D, R1]: ...  # a scalar splats
@overload
def broadcast_to(input: Tensor[D, R0], shape: tuple[int, int], /) -> Tensor[D, R2]: ...
@overload
def broadcast_to(input: Tensor[D, R0], shape: tuple[int, int, int], /) -> Tensor[D, R3]: ...
@overload
def broadcast_to(input: Tensor[D, R], shape: tuple[int, ...] | list[int], /) -> Tensor[D, R]: ...
@overload
def broadcast_to(input: Tensor[D, R0], s0: int, /) -> Tensor[D, R1]: ...  # the shape as ints, as Triton's *shape
@overload
def broadcast_to(input: Tensor[D, R0], s0: int, s1: int, /) -> Tensor[D, R2]: ...
@overload
def broadcast_to(input: Tensor[D, R0], s0: int, s1: int, s2: int, /) -> Tensor[D, R3]: ...
@overload
def broadcast_to(input: Tensor[D, R], *shape: int) -> Tensor[D, R]: ...
@builtin
def broadcast_to(input: Any, *shape: int | tuple[int, ...] | list[int]) -> Any:
    """``input`` broadcast to ``shape`` (same rank; size-1 axes expand), given as one tuple or as
    ints (``tl.broadcast_to(x, 4, 8)``), as Triton's; a scalar splats to any shape."""


@overload
def expand_dims(input: Tensor[D, R0], axis: int) -> Tensor[D, R1]: ...
@overload
def expand_dims(input: Tensor[D, R1], axis: int) -> Tensor[D, R2]: ...
@overload
def expand_dims(input: Tensor[D, R2], axis: int) -> Tensor[D, R3]: ...
@builtin
def expand_dims(input: Any, axis: int) -> Any:
    """Insert a unit axis at ``axis``."""


@builtin
def permute(input: Tensor[D, R], *dims: int | tuple[int, ...] | list[int]) -> Tensor[D, R]:
    """Reorder the axes: ``tl.permute(x, (1, 0))`` or ``tl.permute(x, 1, 0)``, as in Triton."""


@overload
def trans(input: Tensor[D, R2], *dims: int | tuple[int, ...] | list[int]) -> Tensor[D, R2]: ...
@overload
def trans(input: Tensor[D, R3], *dims: int | tuple[int, ...] | list[int]) -> Tensor[D, R3]: ...
@builtin
def trans(input: Any, *dims: int | tuple[int, ...] | list[int]) -> Any:
    """Transpose (swap the two axes unless ``dims`` is given, as ints or one tuple); a block of
    rank 2 or 3, as in Triton."""


@overload
def reshape(input: Tensor[D, R], shape: tuple[int], can_reorder: bool = False) -> Tensor[D, R1]: ...
@overload
def reshape(input: Tensor[D, R], shape: tuple[int, int], can_reorder: bool = False) -> Tensor[D, R2]: ...
@overload
def reshape(input: Tensor[D, R], shape: tuple[int, int, int], can_reorder: bool = False) -> Tensor[D, R3]: ...
@overload
def reshape(input: Tensor[D, R], shape: tuple[int, ...] | list[int], can_reorder: bool = False) -> Tensor[D, Any]: ...
@builtin
def reshape(input: Any, shape: tuple[int, ...] | list[int], can_reorder: bool = False) -> Any:
    """The same elements in row-major order under a new shape."""


@overload
def view(input: Tensor[D, R], shape: tuple[int]) -> Tensor[D, R1]: ...
@overload
def view(input: Tensor[D, R], shape: tuple[int, int]) -> Tensor[D, R2]: ...
@overload
def view(input: Tensor[D, R], shape: tuple[int, int, int]) -> Tensor[D, R3]: ...
@overload
def view(input: Tensor[D, R], shape: list[int]) -> Tensor[D, Any]: ...  # ranked by the plugin
@builtin
def view(input: Any, shape: tuple[int, ...] | list[int]) -> Any:
    """Like ``reshape`` with ``can_reorder=True`` (element order is not guaranteed in Triton)."""


@builtin
def ravel(x: Tensor[D, R], can_reorder: bool = False) -> Tensor[D, R1]:
    """Flatten to one axis."""


@overload
def join(a: Tensor[D, R0], b: Tensor[D, R0]) -> Tensor[D, R1]: ...
@overload
def join(a: Tensor[D, R1], b: Tensor[D, R1]) -> Tensor[D, R2]: ...
@overload
def join(a: Tensor[D, R2], b: Tensor[D, R2]) -> Tensor[D, R3]: ...
@builtin
def join(a: Any, b: Any) -> Any:
    """Stack two blocks along a new minor axis of size 2."""


@overload
def split(a: Tensor[D, R1]) -> tuple[Tensor[D, R0], Tensor[D, R0]]: ...
@overload
def split(a: Tensor[D, R2]) -> tuple[Tensor[D, R1], Tensor[D, R1]]: ...
@overload
def split(a: Tensor[D, R3]) -> tuple[Tensor[D, R2], Tensor[D, R2]]: ...
@builtin
def split(a: Any) -> Any:
    """The inverse of ``join``: split a minor axis of size 2."""


@builtin
def interleave(a: Tensor[D, R], b: Tensor[D, R]) -> Tensor[D, R]:
    """Interleave the elements of ``a`` and ``b`` along the last axis."""


@builtin
def cat(input: Tensor[D, R], other: Tensor[D, R], can_reorder: bool = False) -> Tensor[D, R]:
    """Concatenate along the first axis."""


tensor_members(permute, trans, reshape, view, broadcast_to, expand_dims, ravel, split)
