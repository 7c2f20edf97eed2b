"""Creation rules: ``tl.arange`` bounds and the shapes of ``tl.zeros``/``tl.full``."""

from __future__ import annotations

from tile_lang.semantics.base import SemanticError, constexpr_int, pow2_shape


def arange(start: object, end: object) -> tuple[int, int]:
    """The bounds of ``tl.arange``: compile-time ints (a block's size is fixed when the kernel is
    compiled), spanning a positive power of two."""
    first, last = constexpr_int(start, "tl.arange", "start"), constexpr_int(end, "tl.arange", "end")
    n = last - first
    if n <= 0 or n & (n - 1):
        raise SemanticError(f"tl.arange({first}, {last}): the extent {n} must be a positive power of two")
    return first, last


def block_shape(shape: object, what: str) -> tuple[int, ...]:
    """A block shape (an int, or a tuple or list of them) of powers of two."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    return pow2_shape(tuple(constexpr_int(d, what, "shape") for d in dims), what)
