"""The NumPy reference backend: runs a kernel's Python directly, vectorised over the grid.

It shares no code with the compiler, so comparing it with the CUDA backend tests the compiler.
It is strict: out-of-bounds lanes, broken ``multiple_of``/``assume`` promises and failed
``device_assert`` raise errors naming the kernel and the source line. Programs whose Python
control flow differs run masked (see :mod:`simt`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tile_lang.buffer import Buffer, Owner, native_buffer, native_dtype, torch_dtype
from tile_lang.errors import LaunchError
from tile_lang.dtypes import DType
from tile_lang.launch import Launch

# importing the op families registers their implementations
from tile_lang_numpy import atomic, blocks, debug, elementwise, libdevice, linalg, memory, program, random, reduction, shape  # noqa: F401
from tile_lang_numpy import allocator, executor
from tile_lang_numpy.engine import DivergenceWarning

__all__ = ["DivergenceWarning", "NumpyBackend", "adopt_host"]


class NumpyBackend:
    """Host memory and host execution; native arrays are NumPy arrays."""

    name = "numpy"
    host = True

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
        return adopt_host(self, obj)

    def launch(self, launch: Launch) -> None:
        executor.run(launch)


def adopt_host(backend: Owner, obj: object) -> Buffer[Any] | None:
    """A Buffer of ``backend`` over host memory without a copy: a NumPy array, a torch CPU tensor or
    another host array exporting DLPack (None for anything else). Any backend whose kernels read
    host memory adopts through this (the reference, the CPU emulator of the generated CUDA)."""
    if not isinstance(obj, np.ndarray):
        obj = _host_tensor(obj) if _is_tensor(obj) else _host_dlpack(obj)
        if obj is None:
            return None
    return native_buffer(backend, obj, native_dtype(obj.dtype), tuple(obj.shape), tuple(obj.strides), obj.ctypes.data)


_SAME_WIDTH = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}
"""The torch integer dtype of each element width, through which any tensor reaches NumPy."""


def _is_tensor(obj: object) -> bool:
    torch = sys.modules.get("torch")  # a torch tensor exists only once torch is imported
    return torch is not None and isinstance(obj, torch.Tensor)


def _host_tensor(tensor: Any) -> np.ndarray[Any, Any]:
    """A zero-copy NumPy view of a torch CPU tensor, as Triton reads its pointer: detached (one
    that requires grad shares its storage) and seen as the integer of its width, then as the
    tile_lang dtype's NumPy type (DLPack carries no bf16 or fp8; ml_dtypes has them)."""
    import torch

    dtype = torch_dtype(tensor)
    if tensor.device.type != "cpu":
        raise LaunchError(f"a torch tensor on device {tensor.device}, but the NumPy reference runs on the CPU; "
                          "pass tensor.cpu(), or launch inside `with tl.backend('cupy')`")
    if tensor.layout != torch.strided:
        raise LaunchError(f"a torch tensor of layout {tensor.layout}, which a pointer cannot address; "
                          "pass tensor.to_dense()")
    bits = tensor.detach().view(getattr(torch, _SAME_WIDTH[tensor.element_size()]))
    try:
        view: np.ndarray[Any, Any] = bits.numpy()
    except RuntimeError as exc:  # e.g. a lazily negated view
        raise LaunchError(f"a torch tensor NumPy cannot view ({exc}); pass tensor.clone()") from None
    return view.view(dtype.numpy)


def _host_dlpack(obj: Any) -> np.ndarray[Any, Any] | None:
    """A zero-copy NumPy view of another host array that exports DLPack, or None."""
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or device()[0] != 1:  # 1: kDLCPU
        return None
    try:
        view: np.ndarray[Any, Any] = np.from_dlpack(obj)
    except (TypeError, BufferError, RuntimeError):  # a dtype DLPack cannot carry
        return None
    return view
