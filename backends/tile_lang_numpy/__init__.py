"""The NumPy reference backend: runs a kernel's Python directly, vectorised over the grid.

It shares no code with the compiler, so comparing it with the CUDA backend tests the compiler.
It is strict: out-of-bounds lanes, broken ``multiple_of``/``assume`` promises and failed
``device_assert`` raise errors naming the kernel and the source line. Programs whose Python
control flow differs run masked (see :mod:`simt`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tile_lang.buffer import Buffer, native_buffer, native_dtype
from tile_lang.dtypes import DType
from tile_lang.kernel import Launch

# importing the op families registers their implementations
from tile_lang_numpy import atomic, blocks, debug, elementwise, linalg, memory, program, random, reduction, shape  # noqa: F401
from tile_lang_numpy import allocator, executor
from tile_lang_numpy.engine import DivergenceWarning

__all__ = ["DivergenceWarning", "NumpyBackend"]


class NumpyBackend:
    """Host memory and host execution; native arrays are NumPy arrays."""

    name = "numpy"

    def __init__(self) -> None:
        allocator.keep_heap()

    def unavailable_reason(self) -> str | None:
        return None

    def to_device(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        return Buffer(self, np.array(array, dtype=dtype.numpy, copy=True), dtype, tuple(array.shape))

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        return Buffer(self, np.empty(shape, dtype=dtype.numpy), dtype, shape)

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]:
        return np.array(buffer.data, copy=True)

    def adopt(self, obj: object) -> Buffer[Any] | None:
        if not isinstance(obj, np.ndarray):
            obj = _host_dlpack(obj)
            if obj is None:
                return None
        return native_buffer(self, obj, native_dtype(obj.dtype), tuple(obj.shape), tuple(obj.strides), obj.ctypes.data)

    def launch(self, launch: Launch) -> None:
        executor.run(launch)


def _host_dlpack(obj: Any) -> np.ndarray[Any, Any] | None:
    """A zero-copy NumPy view of a host array that exports DLPack (a torch CPU tensor...), or None."""
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or device()[0] != 1:  # 1: kDLCPU
        return None
    try:
        view: np.ndarray[Any, Any] = np.from_dlpack(obj)
    except (TypeError, BufferError, RuntimeError):  # e.g. bf16, or a tensor that requires grad
        return None
    return view
