"""Loop iterators: ``tl.range`` (a runtime loop with pipelining hints) and ``tl.static_range``."""

from __future__ import annotations

import builtins
from collections.abc import Iterator


class range:
    """Like Python's ``range`` in a kernel, with Triton's software-pipelining hints."""

    def __init__(
        self,
        arg1: int,
        arg2: int | None = None,
        step: int | None = None,
        num_stages: int | None = None,
        loop_unroll_factor: int | None = None,
        disallow_acc_multi_buffer: bool = False,
        flatten: bool = False,
        warp_specialize: bool = False,
    ) -> None:
        self.start, self.end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.step = 1 if step is None else step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor

    def __iter__(self) -> Iterator[int]:
        return iter(builtins.range(self.start, self.end, self.step))


class static_range(range):
    """A loop the compiler unrolls; its bounds must be constexprs."""
