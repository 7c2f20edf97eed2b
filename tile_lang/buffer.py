"""``Buffer[D]``: a typed handle to device memory owned by one backend."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.dtypes import DType, marker_of
from tile_lang.tensor import D, Pointer

if TYPE_CHECKING:
    from tile_lang.registry import Backend


class Buffer(Pointer[D]):
    """Memory on a backend, typed by its element type. A subclass of ``Pointer[D]`` so the
    ParamSpec-typed launcher accepts it exactly where a kernel takes ``Pointer[D]``."""

    def __init__(self, backend: Backend, data: Any, dtype: DType, shape: tuple[int, ...],
                 strides: tuple[int, ...] | None = None) -> None:
        self.backend = backend
        self.data = data
        self.type = dtype
        self._shape = shape
        self._strides = strides if strides is not None else _row_major(shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> object:
        """The tile_lang dtype marker, e.g. ``tl.f32``."""
        return marker_of(self.type)

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
        return f"Buffer[{self.type!r}](shape={self._shape}, backend={self.backend.name!r})"


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides: list[int] = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))
