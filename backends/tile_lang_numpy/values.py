"""How the reference represents kernel values: NumPy arrays with a leading program axis.

Every block value is an array of shape ``(P, *block_shape)`` where ``P`` is the number of
programs run together, or ``1`` when the value is the same for all of them (arguments,
``arange``); NumPy broadcasting does the rest. Pointers are a :class:`Memory` plus element
offsets. The program axis is invisible to the kernel: ``x.shape`` is the block shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tile_lang import dtypes
from tile_lang.dtypes import DType
from tile_lang.tensor import Tensor

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


class Pointers:
    """A block of pointers into one :class:`Memory`: element offsets shaped ``(P|1, *block)``.

    A rank-1 block whose lanes are consecutive (``base + tl.arange``) also knows each
    program's first offset (``starts``), so loads and stores can use slices instead of
    gathers; its full offsets are only materialised when needed.
    """

    __slots__ = ("memory", "_offsets", "starts", "lanes")

    def __init__(self, memory: Memory, offsets: Array | None, starts: Array | None = None, lanes: int = 0) -> None:
        self.memory = memory
        self._offsets = offsets
        self.starts = starts
        self.lanes = lanes

    @property
    def offsets(self) -> Array:
        if self._offsets is None:
            assert self.starts is not None
            self._offsets = self.starts[:, None] + np.arange(self.lanes, dtype=np.int64)
        return self._offsets

    @property
    def shape(self) -> tuple[int, ...]:
        """``(P|1, *block)`` without materialising the offsets."""
        if self._offsets is None:
            assert self.starts is not None
            return (self.starts.shape[0], self.lanes)
        return tuple(self._offsets.shape)


class Ramp:
    """A lazy rank-1 integer block: lane ``i`` of program ``p`` holds ``starts[p] + i``.

    ``pid * BLOCK + tl.arange(0, BLOCK)`` stays a ramp, so pointer blocks built from it load
    and store through slices, and ``offs < n`` becomes a :class:`Prefix` mask."""

    __slots__ = ("starts", "lanes", "dtype", "_array")

    def __init__(self, starts: Array, lanes: int, dtype: np.dtype[Any]) -> None:
        self.starts = starts
        self.lanes = lanes
        self.dtype = dtype
        self._array: Array | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.starts.shape[0], self.lanes)

    def materialize(self) -> Array:
        if self._array is None:
            self._array = (self.starts[:, None] + np.arange(self.lanes, dtype=np.int64)).astype(self.dtype)
        return self._array


class Prefix:
    """A lazy rank-1 mask: lane ``i`` of program ``p`` is live when ``i < limit[p]``."""

    __slots__ = ("limit", "lanes", "_array")

    def __init__(self, limit: Array, lanes: int) -> None:
        self.limit = limit
        self.lanes = lanes
        self._array: Array | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.limit.shape[0], self.lanes)

    @property
    def all_live(self) -> bool:
        return bool(self.limit.min() >= self.lanes)

    def materialize(self) -> Array:
        if self._array is None:
            self._array = np.arange(self.lanes)[None, :] < self.limit[:, None]
        return self._array


def make(handle: Array | Pointers | Ramp | Prefix, dtype: DType) -> Tensor[Any, Any]:
    """Wrap a handle (program axis first) as a kernel-visible tensor."""
    shape = handle.shape[1:]
    return Tensor(handle, dtype, tuple(int(s) for s in shape))


def array(x: Tensor[Any, Any]) -> Array:
    """The value array of a non-pointer tensor."""
    handle = x.handle
    if isinstance(handle, (Ramp, Prefix)):
        return handle.materialize()
    if isinstance(handle, Pointers):
        raise TypeError("expected a value, got a pointer block")
    assert isinstance(handle, np.ndarray)
    return handle


def pointers(x: object, what: str) -> Pointers:
    """The pointer block of ``x``, or a clear error naming the parameter ``what``."""
    handle = x.handle if isinstance(x, Tensor) else None
    if not isinstance(handle, Pointers):
        raise TypeError(f"{what} must be a pointer or a block of pointers, got {_describe(x)}")
    return handle


def _describe(x: object) -> str:
    return repr(x) if isinstance(x, Tensor) else type(x).__name__


def scalar(value: bool | int | float, dtype: DType) -> Tensor[Any, Any]:
    """A rank-0 tensor shared by all programs."""
    return make(np.asarray([value]).astype(dtype.numpy), dtype)


def lift(value: object, like: DType | None = None) -> Tensor[Any, Any]:
    """A tensor from a tensor or a Python scalar (typed as Triton types it next to ``like``)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        py = value.item() if isinstance(value, np.generic) else value
        dtype = dtypes.scalar_dtype(py) if like is None else dtypes.promote_scalar(like, py)
        return scalar(py, dtype)
    raise TypeError(f"expected a tensor or a scalar, got {type(value).__name__}")


def align(a: Array, rank_a: int, rank: int) -> Array:
    """Give a block of rank ``rank_a`` the rank ``rank`` by inserting leading unit block axes."""
    if rank_a == rank:
        return a
    return a.reshape(a.shape[:1] + (1,) * (rank - rank_a) + a.shape[1:])


def block_broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Triton's broadcast of block shapes (ranks aligned on the right)."""
    try:
        return tuple(int(s) for s in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"cannot broadcast block shapes {' and '.join(str(list(s)) for s in shapes)}") from None
