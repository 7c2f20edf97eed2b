"""Reduction and scan rules: which blocks they take and the dtypes they produce."""

from __future__ import annotations

from tile_lang import dtypes
from tile_lang.dtypes import DType
from tile_lang.semantics.base import SemanticError


def values(dtype: DType, what: str) -> DType:
    """A reduction, scan or sort reads values, not pointers."""
    if dtype.is_pointer:
        raise SemanticError(f"{what} needs a block of values, got a block of {dtype!r}")
    return dtype


def sum_dtype(dtype: DType) -> DType:
    """Sums (and cumsum) widen narrow signed ints to i32, narrow unsigned ints and bool to u32."""
    if dtype.bits < 32 and (dtype.is_bool or dtype.kind is dtypes.Kind.UINT):
        return dtypes.U32
    if dtype.bits < 32 and dtype.is_signed:
        return dtypes.I32
    return dtype


def max_dtype(dtype: DType) -> DType:
    """max/min without indices upcast integers (and bool) narrower than 32 bits to i32."""
    return dtypes.I32 if not dtype.is_float and dtype.bits < 32 else dtype


def integer_block(dtype: DType, what: str) -> DType:
    """xor_sum, histogram and gather indices take integers (xor_sum also bools)."""
    if not (dtype.is_int or (dtype.is_bool and what == "tl.xor_sum")):
        raise SemanticError(f"{what} needs an integer block, got {dtype!r}")
    return dtype


def sort_axis(rank: int, axis: int, dim: object) -> None:
    """tl.sort sorts along the last axis only."""
    if axis != rank - 1:
        raise SemanticError(f"tl.sort sorts along the last axis only (dim={rank - 1} or None), got dim={dim}")
