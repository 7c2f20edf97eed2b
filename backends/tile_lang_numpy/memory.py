"""Bounds-checked, masked loads and stores through pointer blocks.

Every lane a load or store touches is checked against the argument its pointer came from;
masked-off lanes never fault. A masked load without ``other`` yields poison: NaN for floats,
the byte pattern 0xA5 repeated for integers (e.g. -1515870811 as i32), True for bools.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import DType
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.elementwise import convert
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array, Pointers

POISON_BYTE = 0xA5


def poison(dtype: DType, shape: tuple[int, ...]) -> Array:
    """The value a masked-off lane reads when a load has no ``other``."""
    if dtype.is_float:
        return np.full(shape, np.nan, dtype=np.float32).astype(dtype.numpy)
    if dtype.is_bool:
        return np.ones(shape, dtype=bool)
    return np.full(shape, int.from_bytes(bytes([POISON_BYTE]) * dtype.itemsize, "little"), dtype=np.uint64) \
        .astype(np.dtype(f"u{dtype.itemsize}")).view(dtype.numpy)


def lanes(engine: Engine, ptr: Tensor[Any, Any], mask: object, what: str,
          extra: tuple[int, ...] = ()) -> tuple[Pointers, Array, Array]:
    """Offsets and mask broadcast together (program axis first), after the bounds check."""
    p = values.pointers(ptr, what)
    m = values.lift(True if mask is None else mask)
    if not m.type.is_bool:
        raise engine.error(f"the mask of {what} must be a bool block (a comparison), got {m!r}")
    try:
        shape = values.block_broadcast(ptr.block_shape, m.block_shape, extra)
    except ValueError as exc:
        raise engine.error(f"{what}: {exc}") from None
    r = len(shape)
    offs, live = np.broadcast_arrays(values.align(p.offsets, ptr.ndim, r), values.align(values.array(m), m.ndim, r))
    lead = max(offs.shape[0], live.shape[0])
    offs = np.broadcast_to(offs, (lead,) + shape)
    live = np.broadcast_to(live, (lead,) + shape)
    engine.note_block(math.prod(shape))
    check_bounds(engine, p, offs, live, what)
    return p, offs, live


def check_bounds(engine: Engine, p: Pointers, offs: Array, live: Array, what: str) -> None:
    outside = offs.view(np.dtype(f"u{offs.dtype.itemsize}")) >= p.memory.size  # negatives wrap to huge
    if not bool(outside.any()):
        return
    bad = live & outside
    if not bool(bad.any()):
        return
    where = np.argwhere(bad)[0]
    row, lane = int(where[0]), tuple(int(i) for i in where[1:])
    flat_lane = int(np.ravel_multi_index(lane, offs.shape[1:])) if lane else 0
    raise engine.error(
        f"out-of-bounds {what} through {p.memory.param}: program {engine.program_of(row)}, lane {flat_lane}"
        f"{' ' + str(lane) if len(lane) > 1 else ''}, offset {int(offs[(row, *lane)])}, but "
        f"{p.memory.param} has {p.memory.size} elements (mask this lane, or fix the offsets)")


def gather(p: Pointers, offs: Array, live: Array, fill: Array | None) -> Array:
    """Read ``offs`` where ``live``; other lanes take ``fill`` (poison when None)."""
    memory = p.memory
    dtype = memory.dtype
    if not memory.size:
        return poison(dtype, offs.shape) if fill is None else np.array(fill)
    if bool(live.all()):
        return memory.flat.take(offs)
    got = memory.flat.take(np.where(live, offs, 0))
    return np.where(live, got, poison(dtype, offs.shape) if fill is None else fill)


def ramp_view(p: Pointers, writable: bool) -> Array | None:
    """A ``(P, lanes)`` view of memory for a ramp pointer block whose programs' rows are all in
    bounds and evenly spaced (vector add, one row per program); None otherwise."""
    starts = p.starts
    if starts is None:
        return None
    n, flat = p.lanes, p.memory.flat
    if int(starts.min()) < 0 or int(starts.max()) + n > p.memory.size:
        return None
    first = int(starts[0])
    if starts.shape[0] == 1:
        return flat[first:first + n][None, :]
    step = int(starts[1]) - first
    if step < (n if writable else 0) or not np.array_equal(starts, first + step * np.arange(starts.shape[0])):
        return None
    return np.lib.stride_tricks.as_strided(flat[first:], shape=(starts.shape[0], n),
                                           strides=(step * flat.strides[0], flat.strides[0]), writeable=writable)


def _live(engine: Engine, mask: object, rank: int, what: str) -> Array | None:
    """The mask as a bool array aligned to ``rank`` (None when absent)."""
    if mask is None:
        return None
    m = values.lift(mask)
    if isinstance(m.handle, values.Prefix) and m.handle.all_live:
        return None
    if not m.type.is_bool:
        raise engine.error(f"the mask of {what} must be a bool block (a comparison), got {m!r}")
    return values.align(values.array(m), m.ndim, rank)


@implements(tl.load)
def load(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    ptr = a["pointer"]
    if isinstance(ptr, tl.BlockPointer):
        from tile_lang_numpy.blocks import load_block

        return load_block(engine, a)
    other = a["other"]
    other_t = None if other is None else values.lift(other)
    fast = _fast_load(engine, ptr, a["mask"], other_t)
    if fast is not None:
        return fast
    p, offs, live = lanes(engine, ptr, a["mask"], "load", () if other_t is None else other_t.block_shape)
    dtype = p.memory.dtype
    fill = None
    if other_t is not None:
        fill_arr = convert(values.array(other_t), other_t.type, dtype)
        fill = np.broadcast_to(values.align(fill_arr, other_t.ndim, offs.ndim - 1), offs.shape)
    return values.make(gather(p, offs, live, fill), dtype)


def _fast_load(engine: Engine, ptr: Tensor[Any, Any], mask: object, other: Tensor[Any, Any] | None
               ) -> Tensor[Any, Any] | None:
    p = values.pointers(ptr, "load")
    view = ramp_view(p, writable=False) if ptr.ndim == 1 else None
    live = _live(engine, mask, 1, "load")
    if view is None or (live is not None and live.shape[1:] != view.shape[1:]):
        return None
    dtype = p.memory.dtype
    if live is None:
        return values.make(view.copy(), dtype)
    fill = poison(dtype, ()) if other is None else convert(values.array(other), other.type, dtype)
    fill = values.align(fill, 0 if other is None else other.ndim, 1) if other is not None else fill
    return values.make(np.where(live, view, fill), dtype)


@implements(tl.store)
def store(engine: Engine, a: Mapping[str, Any]) -> None:
    ptr = a["pointer"]
    if isinstance(ptr, tl.BlockPointer):
        from tile_lang_numpy.blocks import store_block

        store_block(engine, a)
        return
    value = values.lift(a["value"])
    if value.type.is_pointer:
        raise engine.error("storing pointers is not supported")
    if values.block_broadcast(ptr.block_shape, value.block_shape) != ptr.block_shape:
        raise engine.error(f"a value block of shape {list(value.block_shape)} does not fit the pointer block of "
                           f"shape {list(ptr.block_shape)} it is stored through")
    p = values.pointers(ptr, "store")
    view = ramp_view(p, writable=True) if ptr.ndim == 1 and value.ndim <= 1 else None
    live = _live(engine, a["mask"], 1, "store") if view is not None else None
    if view is not None and (live is None or live.shape[1:] == view.shape[1:]):
        data = convert(values.array(value), value.type, p.memory.dtype)
        data = np.broadcast_to(values.align(data, value.ndim, 1), np.broadcast_shapes(data.shape[:1] + (1,), view.shape))
        engine.record_view_write(view)
        if live is None:
            view[...] = data
        else:
            np.copyto(view, data, where=np.broadcast_to(live, view.shape))
        return
    p, offs, live = lanes(engine, ptr, a["mask"], "store", value.block_shape)
    dtype = p.memory.dtype
    data = np.broadcast_to(values.align(convert(values.array(value), value.type, dtype), value.ndim, offs.ndim - 1),
                           offs.shape)
    scatter(engine, p, offs, live, data)


def scatter(engine: Engine, p: Pointers, offs: Array, live: Array, data: Array) -> None:
    """Write ``data`` at ``offs`` where ``live`` (later programs and lanes win on duplicates)."""
    if bool(live.all()):
        index, chosen = offs.reshape(-1), data.reshape(-1)
    else:
        index, chosen = offs[live], data[live]
    engine.record_write(p.memory, index)
    p.memory.flat[index] = chosen


