"""Compiler hints (checked by the reference backend), assertions, printing and inline asm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from tile_lang.builtin import builtin
from tile_lang.dtypes import Bool, Dtype
from tile_lang.tensor import D, R, Tensor

HintValues = int | tuple[int, ...] | list[int]  # one per axis; Triton's tutorials write a list, ``[16, 16]``


@overload
def multiple_of(input: Tensor[D, R], values: HintValues) -> Tensor[D, R]: ...
@overload
def multiple_of(input: int, values: int) -> int: ...
@builtin
def multiple_of(input: Any, values: HintValues) -> Any:
    """Promise that every element (per axis, for a tuple) is a multiple of ``values``."""


@builtin
def max_contiguous(input: Tensor[D, R], values: HintValues) -> Tensor[D, R]:
    """Promise that runs of ``values`` consecutive elements are contiguous (x, x+1, ...)."""


@builtin
def max_constancy(input: Tensor[D, R], values: HintValues) -> Tensor[D, R]:
    """Promise that runs of ``values`` consecutive elements are equal."""


@builtin
def assume(cond: Tensor[Bool, Any] | bool) -> None:
    """Promise that ``cond`` holds (the reference backend checks it)."""


@builtin
def debug_barrier() -> None:
    """Synchronise all threads of the program."""


@builtin
def gdc_wait() -> None:
    """Wait for the grid this launch depends on (Triton's ``tl.extra.cuda.gdc_wait``, Hopper's
    programmatic dependent launch). Launches are never made dependent here (``launch_pdl`` launches
    as usual, after the previous one has finished), so there is nothing to wait for: a no-op."""


@builtin
def gdc_launch_dependents() -> None:
    """Let the grid that depends on this one start early (``tl.extra.cuda.gdc_launch_dependents``):
    a no-op, as launches are never made dependent here (see :func:`gdc_wait`)."""


@builtin
def device_assert(cond: Tensor[Bool, Any] | bool, msg: str = "", mask: Tensor[Bool, Any] | None = None) -> None:
    """Fail the launch with ``msg`` where ``cond`` is false."""


@builtin
def device_print(prefix: str, *args: Any, hex: bool = False) -> None:
    """Print values from the device, prefixed by ``prefix``."""


@builtin
def static_assert(cond: bool, msg: str = "") -> None:
    """Check a compile-time condition."""


@builtin
def static_print(*values: Any) -> None:
    """Print at compile time."""


@overload
def inline_asm_elementwise(
    asm: str, constraints: str, args: Sequence[Tensor[Any, R]], dtype: type[D], is_pure: bool, pack: int
) -> Tensor[D, R]: ...
@overload
def inline_asm_elementwise(
    asm: str, constraints: str, args: Sequence[Tensor[Any, R]], dtype: tuple[type[Dtype], ...], is_pure: bool,
    pack: int,
) -> tuple[Tensor[Any, R], ...]: ...
@builtin
def inline_asm_elementwise(
    asm: str, constraints: str, args: Sequence[Tensor[Any, Any]], dtype: Any, is_pure: bool, pack: int
) -> Any:
    """Run PTX ``asm`` elementwise (CUDA backend only)."""
