"""Creation rules: ``tl.arange`` bounds, the shapes of ``tl.zeros``/``tl.full`` and their fill value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.ops import creation as tlcreation
from tile_lang.semantics.base import (
    Args, Block, SemanticError, block_numel, constexpr_int, operand, pow2_shape, rule, shown,
)
from tile_lang.semantics.elementwise import constant_fits

ARANGE_LIMIT = 2**31  # tl.arange's values are i32: 0 <= start < end <= 2**31


def arange(start: object, end: object) -> tuple[int, int]:
    """The bounds of ``tl.arange``: compile-time ints (a block's size is fixed when the kernel is
    compiled), spanning a positive power of two of i32 values (``end <= 2**31``: Triton's
    "arange must fit in int32", whose i32 values would wrap past it), at most a block's limit."""
    first, last = _bound(start, "start"), _bound(end, "end")
    n = last - first
    if n <= 0 or n & (n - 1):
        raise SemanticError(f"tl.arange({first}, {last}): the extent {n} must be a positive power of two")
    block_numel((n,), f"tl.arange({first}, {last})")
    if first < 0 or last > ARANGE_LIMIT:
        raise SemanticError(f"tl.arange({first}, {last}): the values are i32, so the bounds must lie in "
                            f"[0, 2**31] (0 <= start < end <= {ARANGE_LIMIT})")
    return first, last




def program_axis(axis: object, what: str) -> int:
    """The grid axis of ``tl.program_id``/``tl.num_programs``: a compile-time 0, 1 or 2."""
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and 0 <= axis <= 2:
        return int(axis)
    raise SemanticError(f"{what} axis must be 0, 1, or 2 but got {shown(axis)}")


def _bound(value: object, arg: str) -> int:
    """A bound of ``tl.arange``; a runtime one is most often a kernel parameter left without ``: tl.constexpr``."""
    if shown(value) == "a runtime value":
        raise SemanticError(f"tl.arange: {arg} must be a compile-time int, got a runtime value (if it is a kernel "
                            f"parameter, annotate it `NAME: tl.constexpr` to make it compile-time)")
    return constexpr_int(value, "tl.arange", arg)


def block_shape(shape: object, what: str) -> tuple[int, ...]:
    """A block shape (an int, or a tuple or list of them) of powers of two."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    return pow2_shape(tuple(constexpr_int(d, what, "shape") for d in dims), what)


def fill(value: object, dtype: DType, what: str) -> bool | int | float | None:
    """The fill value of ``tl.full``/``tl.full_like`` (``what``) for a block of ``dtype``: a Python
    number as the constant the block holds (an int dtype's in its range), or None for a runtime
    scalar (given as its Block), which is cast to ``dtype`` when the kernel runs. A block, or
    anything but a number, is an error."""
    if isinstance(value, Block):
        if value.shape:
            raise SemanticError(f"{what}: the fill value must be a scalar, got {value}")
        return None
    if not isinstance(value, (bool, int, float)):
        raise SemanticError(f"{what}: the fill value must be a number or a runtime scalar, got {shown(value)}")
    if dtype.is_float:
        return float(value)
    if dtype.is_bool:
        return bool(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise SemanticError(f"{what}: {value} is not a value of {dtype!r}")
    constant = int(value)
    constant_fits(constant, dtype)
    return constant


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


rule(tlcreation.program_id)(lambda a: {"axis": program_axis(a["axis"], "tl.program_id")})
rule(tlcreation.num_programs)(lambda a: {"axis": program_axis(a["axis"], "tl.num_programs")})


@rule(tlcreation.arange)
def _arange(a: Args) -> dict[str, Any]:
    start, end = arange(a["start"], a["end"])
    return {"start": start, "end": end}


@rule(tlcreation.zeros)
def _zeros(a: Args) -> dict[str, Any]:
    dtype = dtypes.dtype_of(a["dtype"])
    return {"shape": block_shape(a["shape"], "tl.zeros"), "dtype": dtype, "constant": fill(0, dtype, "tl.zeros")}


@rule(tlcreation.full)
def _full(a: Args) -> dict[str, Any]:
    """``value``: the constant the block holds, or None for a runtime scalar (cast to ``dtype``)."""
    shape = block_shape(a["shape"], "tl.full") if a["shape"] != () else ()
    dtype = dtypes.dtype_of(a["dtype"])
    return {"shape": shape, "dtype": dtype, "constant": fill(a["value"], dtype, "tl.full")}


@rule(tlcreation.full_like)
def _full_like(a: Args) -> dict[str, Any]:
    like = operand(a["input"])
    return {"shape": like.shape, "dtype": like.dtype, "constant": fill(a["value"], like.dtype, "tl.full_like")}
