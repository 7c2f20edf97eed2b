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

from typing import Any

import numpy as np

from tile_lang.dtypes import I32, DType
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.affine import Tiles
from tile_lang_numpy.engine import Engine
from tile_lang_numpy.values import Array


def involved(*xs: object) -> bool:
    """Whether any of ``xs`` is a compact value (then an operation on them runs in grid space)."""
    return any(isinstance(x, Tensor) and isinstance(x.handle, Tiles) for x in xs)


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
    gx, gy, gz = engine.box
    lead, block = arr.shape[:3], arr.shape[3:]
    if lead == (1, 1, 1):
        return values.make(arr.reshape((1,) + block), dtype)
    if lead == (gz, gy, gx):
        return values.make(arr.reshape((gx * gy * gz,) + block), dtype)
    return values.make(Tiles(arr, engine.box), dtype)


def program_id(engine: Engine, axis: int) -> Tensor[Any, Any] | None:
    """``tl.program_id(axis)`` in grid space, None when the group spans one grid axis (then the
    per-program ids are as compact as it gets)."""
    if sum(extent > 1 for extent in engine.box) < 2:
        return None
    extent, first = engine.box[axis], int(engine.pids[0, axis])
    shape = [1, 1, 1]
    shape[2 - axis] = extent
    return tensor(engine, np.arange(first, first + extent, dtype=np.int32).reshape(shape), I32)
