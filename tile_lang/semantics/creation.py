"""Creation rules: ``tl.arange`` bounds and the shapes of ``tl.zeros``/``tl.full``."""

from __future__ import annotations

from tile_lang.semantics.base import SemanticError, block_numel, constexpr_int, pow2_shape

ARANGE_LIMIT = 2**31  # tl.arange's values are i32: 0 <= start < end <= 2**31


def arange(start: object, end: object) -> tuple[int, int]:
    """The bounds of ``tl.arange``: compile-time ints (a block's size is fixed when the kernel is
    compiled), spanning a positive power of two of i32 values (``end <= 2**31``: Triton's
    "arange must fit in int32", whose i32 values would wrap past it), at most a block's limit."""
    first, last = constexpr_int(start, "tl.arange", "start"), constexpr_int(end, "tl.arange", "end")
    n = last - first
    if n <= 0 or n & (n - 1):
        raise SemanticError(f"tl.arange({first}, {last}): the extent {n} must be a positive power of two")
    block_numel((n,), f"tl.arange({first}, {last})")
    if first < 0 or last > ARANGE_LIMIT:
        raise SemanticError(f"tl.arange({first}, {last}): the values are i32, so the bounds must lie in "
                            f"[0, 2**31] (0 <= start < end <= {ARANGE_LIMIT})")
    return first, last


def block_shape(shape: object, what: str) -> tuple[int, ...]:
    """A block shape (an int, or a tuple or list of them) of powers of two."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    return pow2_shape(tuple(constexpr_int(d, what, "shape") for d in dims), what)
