"""Host-side buffer creation on the current backend."""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from tile_lang import dtypes, registry
from tile_lang.buffer import Buffer
from tile_lang.errors import LaunchError
from tile_lang.tensor import D


@overload
def to_device(array: Any, dtype: type[D]) -> Buffer[D]: ...
@overload
def to_device(array: Any, dtype: None = None) -> Buffer[Any]: ...
def to_device(array: Any, dtype: Any = None) -> Buffer[Any]:
    """Copy a host array to the current backend. With ``dtype`` (e.g. ``tl.f32``) the buffer is
    typed for mypy, and the array's element type is checked against it at run time."""
    host = np.asarray(array)
    found = dtypes.from_numpy(host.dtype)
    if dtype is not None and dtypes.dtype_of(dtype) != found:
        raise TypeError(f"to_device: the array holds {host.dtype} ({found!r}) but dtype={dtypes.dtype_of(dtype)!r} "
                        "was asked for; convert it first, e.g. array.astype(np.float32)")
    return registry.current().to_device(np.ascontiguousarray(host), found)


def empty(shape: int | tuple[int, ...], dtype: type[D]) -> Buffer[D]:
    """An uninitialised buffer of ``shape`` on the current backend."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"empty: negative extent in shape {dims}")
    return registry.current().empty(dims, dtypes.dtype_of(dtype))


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
        raise TypeError(f"wrap: {type(array).__name__} is not a native array of backend {backend.name!r}")
    if dtype is not None and dtypes.dtype_of(dtype) != buffer.type:
        raise TypeError(f"wrap: the array holds {buffer.type!r} but dtype={dtypes.dtype_of(dtype)!r} was asked for")
    return buffer
