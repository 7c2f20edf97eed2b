"""Values that depend on only some axes of the launch grid, kept compact.

A group's programs form a box of the grid (see :mod:`executor`). In *grid space* a per-program
value has three leading axes ``(z, y, x)`` instead of the program axis, each either the box's
extent or 1 where the value does not depend on that axis: ``tl.program_id(1)`` of a 16x256x256
group is 256 numbers, not a million, and so is ``oh - PAD`` or a mirrored row index.
Arithmetic, comparisons, ``tl.where`` and the masks of divergent control flow (:mod:`simt`)
broadcast such values; a value is expanded to one per program (:class:`affine.Tiles`, the
handle of a compact value) only where an operation needs that, e.g. a pointer, a load or a store.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tile_lang.dtypes import I32, DType
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.affine import Affine, Tiles
from tile_lang_numpy.engine import Engine
from tile_lang_numpy.values import Array, Lead


def involved(*xs: object) -> bool:
    """Whether any of ``xs`` is a compact value (then an operation on them runs in grid space)."""
    return any(isinstance(x, Tensor) and isinstance(x.handle, Tiles) for x in xs)


def lead_of(*xs: object) -> Lead:
    """The leading axes an operation on ``xs`` runs with: grid space where one is compact."""
    return Lead.GRID if involved(*xs) else Lead.PROGRAM


def space(engine: Engine, x: Tensor[Any, Any]) -> Array:
    """The grid-space array of a value tensor."""
    handle = x.handle
    if isinstance(handle, Tiles) and handle.grid == engine.box:
        return handle.compact
    return of(engine, values.array(x))


def of(engine: Engine, arr: Array) -> Array:
    """A ``(P|1, *block)`` array in grid space (a view)."""
    gx, gy, gz = engine.box
    return arr.reshape(((1, 1, 1) if arr.shape[0] == 1 else (gz, gy, gx)) + arr.shape[1:])


def expand(engine: Engine, arr: Array) -> Array:
    """A grid-space array with one value per program: ``(P, *block)``."""
    gx, gy, gz = engine.box
    return np.broadcast_to(arr, (gz, gy, gx) + arr.shape[3:]).reshape((gx * gy * gz,) + arr.shape[3:])


def tensor(engine: Engine, arr: Array, dtype: DType) -> Tensor[Any, Any]:
    """A kernel-visible tensor of a grid-space array: compact when it depends on some grid
    axes but not all, else a plain ``(P|1, *block)`` array."""
    return _tensor(engine.box, arr, dtype)


def _tensor(box: tuple[int, int, int], arr: Array, dtype: DType) -> Tensor[Any, Any]:
    gx, gy, gz = box
    lead, block = arr.shape[:3], arr.shape[3:]
    if lead == (1, 1, 1):
        return values.make(arr.reshape((1,) + block), dtype)
    if lead == (gz, gy, gx):
        return values.make(arr.reshape((gx * gy * gz,) + block), dtype)
    return values.make(Tiles(arr, box), dtype)


def moved(engine: Engine, ptr: Tensor[Any, Any], sign: int, amount: Tensor[Any, Any]) -> Tensor[Any, Any]:
    """``ptr + sign * amount`` for a scalar pointer and an integer scalar, at least one of them
    compact: the offsets (int64) stay compact until they depend on every grid axis."""
    p = ptr.handle
    assert isinstance(p, values.Pointers)
    if p.compact is not None:
        base = p.compact.compact
    else:
        flat = p.affine.base if p.affine is not None and not p.affine.block else p.offsets
        base = of(engine, flat.astype(np.int64, copy=False))
    delta = space(engine, amount).astype(np.int64)
    offsets = base + delta if sign == 1 else base - delta
    gx, gy, gz = engine.box
    lead = offsets.shape[:3]
    if lead == (1, 1, 1) or lead == (gz, gy, gx):
        scalars = Affine(offsets.reshape(-1), (), (), offsets.dtype)
        return values.make(values.Pointers(p.memory, None, scalars), ptr.type)
    return values.make(values.Pointers(p.memory, None, None, Tiles(offsets, engine.box)), ptr.type)


def program_id(engine: Engine, axis: int) -> Tensor[Any, Any]:
    """``tl.program_id(axis)``: compact along ``axis`` (one value per program when the group
    spans only that axis, one for all when it does not span it)."""
    gx, gy, gz = box = engine.box
    made = _cached_ids if gx * gy * gz <= CACHED_IDS else _ids
    return made(engine.origin[axis], axis, box)


CACHED_IDS = 4096  # a test's launches repeat the same few groups: their ids are kept


def _ids(first: int, axis: int, box: tuple[int, int, int]) -> Tensor[Any, Any]:
    """The program ids along ``axis`` of a group of programs forming ``box`` from ``first`` on."""
    shape = [1, 1, 1]
    shape[2 - axis] = box[axis]
    ids = np.arange(first, first + box[axis], dtype=np.int32).reshape(shape)
    ids.flags.writeable = False
    return _tensor(box, ids, I32)


_cached_ids = functools.lru_cache(maxsize=256)(_ids)
