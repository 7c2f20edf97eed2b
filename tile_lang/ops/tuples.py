"""``tl.tuple``: Triton's tuple constructor, which kernels call on values (``tl.tuple((a, b))``)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def make_tuple(values: Iterable[T] = ()) -> builtins.tuple[T, ...]:
    """``tl.tuple(values)``: the values as a Python tuple, which a kernel indexes, unpacks, adds and
    compares as Triton's ``tl.tuple`` (a compile-time structure of its elements, on both backends)."""
    return builtins.tuple(values)
