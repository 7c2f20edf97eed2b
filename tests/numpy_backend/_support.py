"""Shared helpers for the op tests: dtype tables, seeded inputs, poisoned outputs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import dtypes

FLOATS: list[Any] = [tl.f16, tl.bf16, tl.f32, tl.f64]
SIGNED: list[Any] = [tl.i8, tl.i16, tl.i32, tl.i64]
UNSIGNED: list[Any] = [tl.u8, tl.u16, tl.u32, tl.u64]
INTS: list[Any] = SIGNED + UNSIGNED
NUMERIC: list[Any] = FLOATS + INTS
EVERY: list[Any] = NUMERIC + [tl.bool_]


def np_type(dtype: Any) -> np.dtype[Any]:
    """The NumPy (or ml_dtypes) dtype holding ``dtype``'s elements."""
    return dtypes.dtype_of(dtype).numpy


def name(dtype: Any) -> str:
    """A test id for ``dtype``."""
    return dtypes.dtype_of(dtype).name


def sentinel(dtype: Any) -> Any:
    """What an output holds before a launch: NaN, the bytes 0x5A repeated, or True."""
    np_dtype = np_type(dtype)
    if dtypes.dtype_of(dtype).is_float:
        return np.nan
    if np_dtype == np.bool_:
        return True
    return int.from_bytes(b"\x5a" * np_dtype.itemsize, "little")


def poisoned(shape: int | tuple[int, ...], dtype: Any) -> tl.Buffer[Any]:
    """An output buffer filled with :func:`sentinel`, so unwritten elements show up."""
    return tl.to_device(np.full(shape, sentinel(dtype)).astype(np_type(dtype)))


def sample(gen: np.random.Generator, shape: tuple[int, ...], dtype: Any, low: int = -40, high: int = 40) -> Any:
    """Random values of ``dtype``: integers in [low, high] clipped to the type's range, or
    multiples of 1/8 in [low/8, high/8] for floats (exact in every float type, many ties)."""
    np_dtype = np_type(dtype)
    if dtypes.dtype_of(dtype).is_float:
        return (gen.integers(low, high + 1, shape) / 8).astype(np_dtype)
    if np_dtype == np.bool_:
        return gen.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(np_dtype)
    return gen.integers(max(low, int(info.min)), min(high, int(info.max)) + 1, shape).astype(np_dtype)


def lowest(dtype: Any) -> float:
    """The identity of max for ``dtype``: -inf, or the smallest integer."""
    np_dtype = np_type(dtype)
    return float("-inf") if dtypes.dtype_of(dtype).is_float else int(np.iinfo(np_dtype).min)


def highest(dtype: Any) -> float:
    """The identity of min for ``dtype``: +inf, or the largest integer."""
    np_dtype = np_type(dtype)
    return float("inf") if dtypes.dtype_of(dtype).is_float else int(np.iinfo(np_dtype).max)


def wide(a: Any) -> Any:
    """Exact host values for references: float64 for floats, Python-int-like int64/uint64 otherwise."""
    arr = np.asarray(a)
    if arr.dtype.kind in "iub":
        return arr.astype(np.uint64 if arr.dtype.kind == "u" else np.int64)
    return arr.astype(np.float64)


@contextlib.contextmanager
def benign_races() -> Iterator[None]:
    """Run with the reference's race check off: for launches whose programs all store the same
    values to the same elements, kept to exercise the program axis (a race, but a harmless one)."""
    saved = os.environ.get("TILE_LANG_RACE_CHECK")
    os.environ["TILE_LANG_RACE_CHECK"] = "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TILE_LANG_RACE_CHECK"]
        else:
            os.environ["TILE_LANG_RACE_CHECK"] = saved
