"""``Buffer[D]``: a typed handle to device memory owned by one backend."""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.errors import LaunchError
from tile_lang.tensor import D, Pointer


class Owner(Protocol):
    """What a buffer uses of the backend owning it (a :class:`~tile_lang.registry.Backend`, whose
    protocol hands out buffers, so it sits above this module)."""

    name: str

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]: ...


class Buffer(Pointer[D]):
    """Memory on a backend, typed by its element type. A subclass of ``Pointer[D]`` so the
    ParamSpec-typed launcher accepts it exactly where a kernel takes ``Pointer[D]``.

    ``device`` is the index of the device holding the memory (a CUDA device's ordinal; always 0
    on the NumPy reference): a launch runs on the device of its buffers."""

    type: DType  # the runtime dtype, where a kernel's pointer has a PointerType (Pointer.type)

    def __init__(self, backend: Owner, data: Any, dtype: DType, shape: tuple[int, ...],
                 strides: tuple[int, ...] | None = None, device: int = 0) -> None:
        self.backend = backend
        self.data = data
        self.type = dtype
        self.device = device
        self._shape = shape
        self._strides = strides if strides is not None else _row_major(shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    def stride(self, dim: int) -> int:
        """The stride of ``dim`` in elements (as ``torch.Tensor.stride``)."""
        return self._strides[dim]

    def numpy(self) -> np.ndarray[Any, Any]:
        """A host copy with the original shape (bf16/fp8 as ml_dtypes arrays)."""
        return self.backend.to_host(self)

    def __repr__(self) -> str:
        return f"Buffer[{self.type!r}](shape={self._shape}, backend={self.backend.name!r}, device={self.device})"


def native_dtype(dtype: np.dtype[Any]) -> DType:
    """The tile_lang dtype of a native array's elements; a LaunchError naming it if there is none."""
    try:
        return dtypes.from_numpy(dtype)
    except TypeError:
        raise LaunchError(f"an array of {dtype} elements, which no tile_lang dtype holds "
                          "(convert it first, e.g. array.astype(np.float32))") from None


TORCH_DTYPES: dict[str, DType] = {
    "torch.float32": dtypes.F32, "torch.float64": dtypes.F64, "torch.float16": dtypes.F16,
    "torch.bfloat16": dtypes.BF16, "torch.int8": dtypes.I8, "torch.int16": dtypes.I16, "torch.int32": dtypes.I32,
    "torch.int64": dtypes.I64, "torch.uint8": dtypes.U8, "torch.uint16": dtypes.U16, "torch.uint32": dtypes.U32,
    "torch.uint64": dtypes.U64, "torch.bool": dtypes.BOOL,
    "torch.float8_e4m3fn": dtypes.F8E4M3, "torch.float8_e5m2": dtypes.F8E5M2,
    "torch.float8_e4m3fnuz": dtypes.F8E4B8, "torch.float8_e5m2fnuz": dtypes.F8E5B16,
}
"""Each torch dtype a pointer can take, by its ``str`` (so reading it needs no torch import;
``tl.float8e4b15`` has none: ``triton.reinterpret`` gives it a uint8 tensor's memory)."""
TORCH_NAMES: dict[DType, str] = {d: name for name, d in TORCH_DTYPES.items()}


def torch_dtype(tensor: Any) -> DType:
    """The tile_lang dtype of a torch tensor's elements; a LaunchError naming it if there is none."""
    found = TORCH_DTYPES.get(str(tensor.dtype))
    if found is None:
        raise LaunchError(f"a torch tensor of {tensor.dtype} elements, which no tile_lang dtype holds "
                          "(convert it first, e.g. tensor.float())")
    return found


def retyped(buffer: Buffer[Any], dtype: DType) -> Buffer[Any]:
    """``buffer``'s memory as ``dtype``, whose host arrays are of the buffer's NumPy type (a coded
    dtype's codes in a uint8 buffer)."""
    assert buffer.type.numpy == dtype.numpy, (buffer.type, dtype)
    return Buffer(buffer.backend, buffer.data, dtype, buffer.shape, buffer._strides, buffer.device)


def native_buffer(backend: Owner, data: Any, dtype: DType, shape: tuple[int, ...], byte_strides: tuple[int, ...],
                  address: int, device: int = 0) -> Buffer[Any]:
    """A Buffer of a native array adopted without copying. A pointer addresses memory upwards from
    the array's first element, in whole elements, so the array must be aligned to its element size
    and have non-negative strides that are multiples of it (gaps are fine: a kernel indexes a view
    with its ``stride(dim)``, as in Triton). ``device`` is the device index holding it. Anything else is a LaunchError saying how to fix it."""
    itemsize = dtype.numpy.itemsize
    moving = [(n, s) for n, s in zip(shape, byte_strides) if n > 1]  # a dimension of extent 1 never steps
    copy = "pass a contiguous copy (ascontiguousarray)"
    if math.prod(shape) and any(s % itemsize for _, s in moving):
        raise LaunchError(f"a view with byte strides {byte_strides}, not multiples of its {itemsize}-byte elements, "
                          f"cannot be passed as a pointer; {copy}")
    strides = tuple(s // itemsize for s in byte_strides)
    if math.prod(shape) and any(s < 0 for _, s in moving):
        raise LaunchError(f"a view with negative strides {strides} cannot be passed as a pointer, which addresses "
                          f"memory upwards from the view's first element; {copy}")
    if address % itemsize:
        raise LaunchError(f"an array at address {address:#x}, not aligned to its {itemsize}-byte elements, cannot "
                          f"be passed as a pointer; {copy}")
    return Buffer(backend, data, dtype, shape, strides, device)


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides: list[int] = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))
