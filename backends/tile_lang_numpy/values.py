"""How the reference represents kernel values: NumPy arrays with a leading program axis.

Every block value is an array of shape ``(P, *block_shape)`` where ``P`` is the number of
programs run together, or ``1`` when the value is the same for all of them (arguments,
``arange``); NumPy broadcasting does the rest. A value that depends on only some grid axes
(``tl.program_id(1)``, ``oh - PAD``) is kept compact instead (:class:`Tiles`, see :mod:`tiled`). Pointers are a :class:`Memory` plus element
offsets. The program axis is invisible to the kernel: ``x.shape`` is the block shape.
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tile_lang import dtypes, fp8
from tile_lang.dtypes import DType
from tile_lang.errors import SemanticError
from tile_lang.ops import forms
from tile_lang.semantics.dispatch import apply
from tile_lang.tensor import Tensor

from tile_lang_numpy.affine import Affine, Box, Tiles

Array = np.ndarray[Any, Any]



@dataclass(eq=False)
class Memory:
    """One kernel argument's memory: a flat, writable view and the parameter it came from."""

    flat: Array
    param: str
    dtype: DType

    @property
    def size(self) -> int:
        return int(self.flat.size)


ARGUMENT_OFFSET = np.zeros((1,), dtype=np.int64)  # the offsets of every argument pointer (so one is known by identity)
ARGUMENT_OFFSET.flags.writeable = False


class Pointers:
    """A block of pointers into one :class:`Memory`: element offsets shaped ``(P|1, *block)``,
    either as an array, as a lazy :class:`Affine` block, or compact along the grid axes they do
    not depend on (:class:`Tiles`, see :mod:`tiled`); the last two are materialised on demand."""

    __slots__ = ("memory", "_offsets", "affine", "compact")

    def __init__(self, memory: Memory, offsets: Array | None, affine: Affine | None = None,
                 compact: Tiles | None = None) -> None:
        self.memory = memory
        self._offsets = offsets
        self.affine = affine
        self.compact = compact

    @property
    def offsets(self) -> Array:
        if self._offsets is None:
            lazy = self.affine or self.compact
            assert lazy is not None
            self._offsets = lazy.materialize()
        return self._offsets

    @property
    def is_argument(self) -> bool:
        """Whether this is a kernel argument's pointer (offset 0, shared by every program)."""
        return self._offsets is ARGUMENT_OFFSET

    @property
    def shape(self) -> tuple[int, ...]:
        """``(P|1, *block)`` without materialising the offsets."""
        lazy = self.affine or self.compact
        return lazy.shape if self._offsets is None and lazy is not None else tuple(self.offsets.shape)


def make(handle: Array | Pointers | Affine | Box | Tiles, dtype: DType) -> Tensor[Any, Any]:
    """Wrap a handle (program axis first) as a kernel-visible tensor (a lazy handle's block
    read directly: its ``shape`` is computed)."""
    if isinstance(handle, (Affine, Box)):
        return Tensor(handle, dtype, handle.block)
    return Tensor(handle, dtype, tuple(handle.shape[1:]))


def array(x: Tensor[Any, Any]) -> Array:
    """The value array of a non-pointer tensor."""
    handle = x.handle
    if isinstance(handle, (Affine, Box, Tiles)):  # lazy and compact handles: one value per program
        return handle.materialize()
    if isinstance(handle, Pointers):
        raise SemanticError("expected a value, got a pointer block")
    assert isinstance(handle, np.ndarray)
    return handle


_FP8_TABLES: dict[tuple[np.dtype[Any], np.dtype[Any]], Array] = {}


def widen(x: Array, wide: type[np.number[Any]] | np.dtype[Any]) -> Array:
    """``x.astype(wide, copy=False)``; an fp8 array (ml_dtypes' one-byte floats) through a table
    of its 256 codes, made by that same ``astype`` so every value, NaN included, is the same bits:
    about 4x faster than ml_dtypes' element-by-element cast (an fp8 ``tl.dot``'s operands)."""
    if x.dtype.itemsize != 1 or not x.dtype.name.startswith("float8"):
        return x.astype(wide, copy=False)
    key = (x.dtype, np.dtype(wide))
    table = _FP8_TABLES.get(key)
    if table is None:
        table = _FP8_TABLES[key] = np.arange(256, dtype=np.uint8).view(x.dtype).astype(wide)
        table.flags.writeable = False
    return table.take(x.view(np.uint8))


def pointers(x: object, what: str) -> Pointers:
    """The pointer block of ``x``, or a clear error naming the parameter ``what``."""
    handle = x.handle if isinstance(x, Tensor) else None
    if not isinstance(handle, Pointers):
        raise SemanticError(f"{what} must be a pointer or a block of pointers, got {_describe(x)}")
    return handle


def _describe(x: object) -> str:
    return repr(x) if isinstance(x, Tensor) else type(x).__name__


def of_dtype(value: object, dtype: DType) -> Array:
    """Python numbers as an array of ``dtype`` (of its codes for a coded dtype, :mod:`tile_lang.fp8`)."""
    given = np.asarray(value)
    return fp8.encode_e4b15(given) if dtype.coded else given.astype(dtype.numpy)


def scalar(value: bool | int | float, dtype: DType) -> Tensor[Any, Any]:
    """A rank-0 tensor shared by all programs."""
    return make(of_dtype([value], dtype), dtype)


def lift(value: object, like: DType | None = None) -> Tensor[Any, Any]:
    """A tensor from a tensor or a Python scalar (typed as Triton types it next to ``like``).
    A constant's tensor is made once, its array read-only (a kernel's ``x + 1.0`` or
    ``tl.atomic_cas(lock, 0, 1)`` meets the same few each time; tensors are never changed)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        py = value.item() if isinstance(value, np.generic) else value
        key = (like, type(py), py, math.copysign(1.0, py) if type(py) is float else 1.0)  # the sign: 0.0 == -0.0
        made = _CONSTANTS.get(key)
        if made is None:
            dtype = dtypes.scalar_dtype(py) if like is None else dtypes.promote_scalar(like, py)
            if like is not None and dtype.is_int and not isinstance(py, bool):
                check_fits(py, dtype)
            made = scalar(py, dtype)
            assert isinstance(made.handle, np.ndarray)
            made.handle.flags.writeable = False
            if len(_CONSTANTS) >= _KEPT_CONSTANTS:
                _CONSTANTS.clear()
            _CONSTANTS[key] = made
        return made
    raise apply(forms.not_an_operand, value)


_CONSTANTS: dict[tuple[DType | None, type, bool | int | float, float], Tensor[Any, Any]] = {}
_KEPT_CONSTANTS = 4096


def check_fits(value: bool | int | float, dtype: DType) -> None:
    """A Python int constant must fit the integer dtype it becomes (the shared rule)."""
    if isinstance(value, int) and not isinstance(value, bool):
        apply(forms.constant_fits, value, dtype)


class Lead(enum.IntEnum):
    """The leading axes of a value's array before its block axes, by their count: one program
    axis, or grid space's three ``(z, y, x)`` (a compact value, see :mod:`tiled`)."""

    PROGRAM = 1
    GRID = 3


def align(a: Array, rank_a: int, rank: int, lead: Lead = Lead.PROGRAM) -> Array:
    """Give a block of rank ``rank_a`` the rank ``rank`` by inserting leading unit block axes
    (after the ``lead`` axes)."""
    if rank_a == rank:
        return a
    return a.reshape(a.shape[:lead] + (1,) * (rank - rank_a) + a.shape[lead:])


def block_broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Triton's broadcast of block shapes (the shared rule, the form ``forms.broadcast``,
    folded left to right; its SemanticError names the pair that does not broadcast). Equal shapes
    and a scalar with a block, the hot path's cases, return before the rule is called."""
    first = shapes[0]
    if len(shapes) == 2:
        second = shapes[1]
        if second == first or not second:
            return first
        if not first:
            return second
    elif all(shape == first or shape == () for shape in shapes):
        return first
    return functools.reduce(lambda a, b: apply(forms.broadcast, a, b), shapes)
