"""The rules of loops, written once for the compiler and the reference: the type of a runtime
loop's index, and which values a loop can carry from one iteration to the next."""

from __future__ import annotations

from collections.abc import Iterable

from tile_lang.dtypes import I32, DType, promote
from tile_lang.semantics.base import SemanticError

BlockType = tuple[DType, tuple[int, ...]]
"""A value's element dtype and block shape (``()`` for a scalar)."""


def index_dtype(bounds: Iterable[DType]) -> DType:
    """The index of a runtime loop (``range``, ``tl.range``) with bounds of these dtypes: an
    i32 scalar, or the wider integer type of a bound, as in Triton (``tl.static_range``'s is a
    Python int: that loop is unrolled)."""
    dtype = I32
    for bound in bounds:
        dtype = promote(dtype, bound)
    return dtype


def type_text(value: BlockType) -> str:
    """``f32`` for a scalar, ``f32[32,16]`` for a block, as messages show types."""
    dtype, shape = value
    name = repr(dtype).removeprefix("tl.")
    return name if not shape else f"{name}[{','.join(map(str, shape))}]"


def loop_carried(name: str, before: BlockType | None, inside: BlockType) -> SemanticError | None:
    """Whether a runtime loop can carry ``name``, bound to a value of type ``before`` before
    the loop (None: a Python number, which takes the loop's type) and rebound to one of type
    ``inside`` in its body: None when it can (a carried value keeps its shape; its dtype widens
    to both), else the error that reading ``name`` raises where its shape depends on the
    iteration (in the body before the rebinding, or after the loop)."""
    if before is None or before[1] == inside[1]:
        return None
    return SemanticError(f"{name!r} is {type_text(before)} before the loop and {type_text(inside)} inside it, so "
                         "its value here depends on the iteration; keep its shape in the loop or use another name")
