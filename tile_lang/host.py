"""Host-side buffer creation on the current backend, on one of its devices."""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeAlias, overload, runtime_checkable

import numpy as np

import tile_lang.dtypes as dtypes
import tile_lang.registry as registry
from tile_lang.buffer import Buffer
from tile_lang.errors import LaunchError, UsageError
from tile_lang.tensor import D

Device: TypeAlias = int | str | None
"""A device as ``device=`` takes it: an index (``1``), ``"cuda:1"``, or None or ``"cuda"`` for
the backend's current device (CuPy's, which ``with cupy.cuda.Device(i):`` sets)."""

_CUDA_DEVICE = re.compile(r"cuda(?::(\d+))?", re.ASCII)


@runtime_checkable
class MultiDeviceBackend(Protocol):
    """What a backend with several devices adds to :class:`tile_lang.registry.Backend`: how
    many there are, and a scope in which its allocations land on one of them."""

    def device_count(self) -> int:
        """The number of devices, indexed from 0."""

    def on_device(self, index: int) -> AbstractContextManager[object]:
        """A ``with`` scope in which ``to_device`` and ``empty`` allocate on device ``index``."""


def device_index(what: str, device: object) -> int | None:
    """``device`` as a device index, or None for the current device; a clear error, prefixed
    with ``what`` (the function taking it), for anything that names no device."""
    if device is None:
        return None
    if isinstance(device, str):
        match = _CUDA_DEVICE.fullmatch(device)
        if match is None:
            raise UsageError(f"{what}: device={device!r} is not a device; give an index (1) or 'cuda:1' "
                             "('cuda' or None: the current device)")
        return None if match.group(1) is None else int(match.group(1))
    if not isinstance(device, numbers.Integral) or isinstance(device, (bool, np.bool_)):
        raise UsageError(f"{what}: device must be an int index, a string like 'cuda:1', or None; "
                         f"got {device!r} ({type(device).__name__})")
    if device < 0:
        raise UsageError(f"{what}: device={device!r} is negative; devices are indexed from 0")
    return int(device)


def _on_device(what: str, device: Device, make: Callable[[registry.Backend], Buffer[Any]]) -> Buffer[Any]:
    """``make(backend)`` for the current backend, allocating on ``device``, checked first: a
    backend without :class:`MultiDeviceBackend` has the one device 0."""
    index = device_index(what, device)
    backend = registry.current()
    if index is None:
        return make(backend)
    if not isinstance(backend, MultiDeviceBackend):
        if index == 0:
            return make(backend)
        raise UsageError(f"{what}: backend {backend.name!r} has one device, 0; got device={device!r}")
    count = backend.device_count()
    if index >= count:
        raise UsageError(f"{what}: device={device!r} does not exist; backend {backend.name!r} has {count} "
                         f"device(s), 0 to {count - 1}")
    with backend.on_device(index):
        return make(backend)


def element_type(what: str, dtype: object) -> dtypes.DType:
    """The dtype ``dtype=`` names (``tl.f32``), or a UsageError prefixed with ``what`` (the function)."""
    try:
        return dtypes.dtype_of(dtype)
    except TypeError as exc:  # e.g. the string "f32"
        raise UsageError(f"{what}: dtype={exc}") from None


@overload
def to_device(array: Any, dtype: type[D], device: Device = None) -> Buffer[D]: ...
@overload
def to_device(array: Any, dtype: None = None, device: Device = None) -> Buffer[Any]: ...
def to_device(array: Any, dtype: Any = None, device: Device = None) -> Buffer[Any]:
    """Copy a host array to the current backend, on ``device`` (see :data:`Device`). With
    ``dtype`` (e.g. ``tl.f32``) the buffer is typed for mypy, and the array's element type is
    checked against it at run time."""
    host = np.asarray(array)
    found = dtypes.from_numpy(host.dtype)
    wanted = None if dtype is None else element_type("to_device", dtype)
    if wanted is not None and wanted.coded and host.dtype == wanted.numpy:
        found = wanted  # the array holds its codes
    if wanted is not None and wanted != found:
        how = (f"{wanted!r} has no NumPy type: pass its codes, a uint8 array (tile_lang.fp8.encode_e4b15)"
               if wanted.coded else "convert it first, e.g. array.astype(np.float32)")
        raise UsageError(f"to_device: the array holds {host.dtype} ({found!r}) but dtype={wanted!r} was asked "
                         f"for; {how}")
    contiguous = np.ascontiguousarray(host)
    return _on_device("to_device", device, lambda backend: backend.to_device(contiguous, found))


def empty(shape: int | tuple[int, ...], dtype: type[D], device: Device = None) -> Buffer[D]:
    """An uninitialised buffer of ``shape`` on the current backend, on ``device`` (see :data:`Device`)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(d, numbers.Integral) or isinstance(d, (bool, np.bool_)) or d < 0 for d in dims):
        raise UsageError(f"empty: shape={shape!r} is not a shape; give ints >= 0, e.g. (1024,) or (M, N)")
    element = element_type("empty", dtype)
    return _on_device("empty", device, lambda backend: backend.empty(dims, element))


@overload
def wrap(array: Any, dtype: type[D]) -> Buffer[D]: ...
@overload
def wrap(array: Any, dtype: None = None) -> Buffer[Any]: ...
def wrap(array: Any, dtype: Any = None) -> Buffer[Any]:
    """Wrap a native array of the current backend (a NumPy array; on CUDA a CuPy array, a torch
    CUDA tensor, anything with ``__cuda_array_interface__`` or DLPack) without copying.

    Launches accept native arrays directly too; wrapping gives them a type mypy can check."""
    backend = registry.current()
    try:
        buffer = backend.adopt(array)
    except LaunchError as exc:  # a dtype or layout no pointer can take
        raise LaunchError(f"wrap: {exc}") from None
    if buffer is None:
        raise UsageError(f"wrap: {type(array).__name__} is not a native array of backend {backend.name!r}")
    if dtype is not None and element_type("wrap", dtype) != buffer.type:
        raise UsageError(f"wrap: the array holds {buffer.type!r} but dtype={dtypes.dtype_of(dtype)!r} was asked for")
    return buffer
