"""Loop iterators: ``tl.range`` (a runtime loop with pipelining hints) and ``tl.static_range``."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any, Generic, TypeVar, overload

from tile_lang.dtypes import Int
from tile_lang.tensor import R0, Tensor, W

Index = TypeVar("Index")
Bound = Tensor[Int[Any], R0] | int


class range(Generic[Index]):
    """Like Python's ``range`` in a kernel, with Triton's software-pipelining hints. The index is
    an ``int`` when the bounds are ints, and a rank-0 int block when a bound is one (a loaded
    ``row_start``), so the loop body stays checked. The flags take a constexpr (an int to mypy), as Triton's
    ``tl.range(k_tiles, warp_specialize=WARP_SPECIALIZE)`` passes."""

    @overload
    def __init__(
        self: range[int],
        arg1: int,
        arg2: int | None = None,
        step: int | None = None,
        num_stages: int | None = None,
        loop_unroll_factor: int | None = None,
        disallow_acc_multi_buffer: bool | int = False,
        flatten: bool | int = False,
        warp_specialize: bool | int = False,
    ) -> None: ...
    @overload
    def __init__(
        self: range[Tensor[Int[W], R0]],
        arg1: Tensor[Int[W], R0] | int,
        arg2: Tensor[Int[W], R0] | int | None = None,
        step: Tensor[Int[W], R0] | int | None = None,
        num_stages: int | None = None,
        loop_unroll_factor: int | None = None,
        disallow_acc_multi_buffer: bool | int = False,
        flatten: bool | int = False,
        warp_specialize: bool | int = False,
    ) -> None: ...
    def __init__(
        self,
        arg1: Any,
        arg2: Any = None,
        step: Any = None,
        num_stages: int | None = None,
        loop_unroll_factor: int | None = None,
        disallow_acc_multi_buffer: bool | int = False,
        flatten: bool | int = False,
        warp_specialize: bool | int = False,
    ) -> None:
        bounds: tuple[Bound, Bound] = (0, arg1) if arg2 is None else (arg1, arg2)
        self.start, self.end = bounds
        self.step: Bound = 1 if step is None else step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor

    def __iter__(self) -> Iterator[Index]:
        return iter(builtins.range(self.start, self.end, self.step))  # type: ignore[arg-type]  # an int index when it runs in Python


class static_range(range[int]):
    """A loop the compiler unrolls; its bounds must be constexprs."""
