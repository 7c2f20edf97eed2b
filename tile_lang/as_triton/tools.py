"""Host-side objects of Triton's that a launch treats specially: ``triton.reinterpret``'s
``TensorWrapper`` (launched as the tensor it views) and
``triton.tools.tensor_descriptor.TensorDescriptor`` (tile_lang's host descriptor); and an inert ``triton.profiler``
(proton), as the tutorials import them."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.buffer import TORCH_NAMES, retyped
from tile_lang.descriptor import HostTensorDescriptor
from tile_lang.errors import LaunchError, TileLangError
from tile_lang.host import wrap


TensorDescriptor = HostTensorDescriptor
"""Triton's host-side tensor descriptor (``TensorDescriptor(tensor, shape, strides, block_shape)``,
``.from_tensor``): tile_lang's, which kernel parameters take (``block_shape`` may be set until the
launch, as autotune pre-hooks do)."""


class TensorWrapper:
    """``triton.reinterpret(tensor, dtype)``: a torch tensor's memory seen as another dtype of the
    same width, with Triton's ``.base``, ``.dtype`` (the Triton dtype) and the tensor accessors
    its tests call; a launch passes :meth:`tensor` in its place."""

    def __init__(self, base: Any, dtype: Any) -> None:
        self.base = base
        self.dtype = dtype
        self.data = base.data
        self.shape = base.shape
        self.device = base.device

    def tensor(self) -> Any:
        """The torch view of the memory as the dtype; for ``tl.float8e4b15``, which torch lacks, the
        memory's bytes wrapped as a buffer of it (its codes)."""
        import torch

        dtype = dtypes.dtype_of(self.dtype)
        name = TORCH_NAMES.get(dtype)
        if name is None:
            return retyped(wrap(self.base.view(torch.uint8)), dtype)
        return self.base.view(getattr(torch, name.removeprefix("torch.")))

    def __dlpack__(self, **kwargs: Any) -> Any:
        """DLPack of :meth:`tensor`, for launches the shim does not see (an autotuned kernel's):
        it carries every dtype but bf16 and fp8."""
        return self.tensor().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.base.__dlpack_device__()

    def data_ptr(self) -> int:
        return int(self.base.data_ptr())

    def stride(self, *dim: int) -> Any:
        return self.base.stride(*dim)

    def numel(self) -> int:
        return int(self.base.numel())

    def dim(self) -> int:
        return int(self.base.dim())

    def element_size(self) -> int:
        return int(self.base.element_size())

    def cpu(self) -> TensorWrapper:
        return TensorWrapper(self.base.cpu(), self.dtype)

    def to(self, device: Any) -> TensorWrapper:
        return TensorWrapper(self.base.to(device), self.dtype)

    def clone(self) -> TensorWrapper:
        return TensorWrapper(self.base.clone(), self.dtype)

    def copy_(self, other: TensorWrapper) -> None:
        self.base.copy_(other.base)

    def new_empty(self, sizes: Any) -> TensorWrapper:
        """An uninitialised tensor of ``sizes`` viewed as the same dtype (Triton's test_tensor_descriptor
        makes its outputs so)."""
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """``triton.reinterpret``: a NumPy array's ``view`` as that dtype; for a torch tensor a
    TensorWrapper (the tensor itself when it already has that dtype; a TensorWrapper's base is
    unwrapped first)."""
    if isinstance(tensor, np.ndarray):
        return tensor.view(dtypes.dtype_of(dtype).numpy)
    base = tensor.base if isinstance(tensor, TensorWrapper) else tensor
    same = str(base.dtype) == TORCH_NAMES.get(dtypes.dtype_of(dtype))
    return base if same else TensorWrapper(base, dtype)


def launch_arguments(kernel: str, names: Sequence[str], args: Sequence[Any],
                     kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A launch's arguments as tile_lang takes them: each TensorWrapper replaced by its view (a
    LaunchError naming the parameter where the current backend cannot take its memory).
    ``names`` are the kernel's parameters in order."""
    def passed(name: str, value: Any) -> Any:
        try:
            if isinstance(value, TensorWrapper):
                return value.tensor()
            return strided_tensor(value) if _strided_view(value) else value
        except TileLangError as exc:
            raise LaunchError(f"kernel {kernel}, parameter {name}: {exc}") from None

    return (tuple(passed(n, a) for n, a in zip(names, args)) + tuple(args[len(names):]),
            {k: passed(k, v) for k, v in kwargs.items()})




def _strided_view(value: Any) -> bool:
    """Whether ``value`` is a tensor-like host object of a library's own (not a torch tensor):
    a torch ``dtype``, ``data_ptr()``, ``shape`` and ``stride()``, as FlagGems' StridedBuffer has."""
    torch = sys.modules.get("torch")
    if torch is None or isinstance(value, torch.Tensor) or not isinstance(getattr(value, "dtype", None), torch.dtype):
        return False
    return all(hasattr(value, name) for name in ("data_ptr", "shape", "stride"))


def strided_tensor(value: Any) -> Any:
    """A torch tensor over the memory a tensor-like object addresses (the CPU's, or a CUDA device's),
    from its ``data_ptr()`` to its last element by its shape and strides: Triton launches such an
    object as the pointer ``data_ptr()``, which tile_lang's buffers need the extent of. Negative
    strides (a flipped view) reach memory before the pointer, which a buffer cannot start before:
    refused."""
    import torch

    device = torch.device(getattr(value, "device", None) or "cpu")
    if device.type not in ("cpu", "cuda"):
        raise LaunchError(f"a {type(value).__name__} on {device}: only CPU and CUDA memory is adopted this way")
    shape, strides = tuple(value.shape), tuple(value.stride())
    if any(st < 0 for st in strides):
        raise LaunchError(f"a {type(value).__name__} with negative strides {strides}: its elements lie before "
                          "its data_ptr(), where a tile_lang buffer cannot reach")
    itemsize = torch.empty((), dtype=value.dtype).element_size()
    count = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, strides))
    if count == 0:
        return torch.empty(0, dtype=value.dtype, device=device)
    if device.type == "cuda":  # seen as integers of the element's width (the array interface has no bf16 or fp8)
        span = _DeviceSpan(int(value.data_ptr()), count, itemsize)
        return torch.as_tensor(span, device=device).view(value.dtype)
    memory = (ctypes.c_char * (count * itemsize)).from_address(int(value.data_ptr()))
    return torch.frombuffer(memory, dtype=value.dtype, count=count)


class _DeviceSpan:
    """``count`` elements of ``itemsize`` bytes of device memory at ``address``, as the CUDA array
    interface describes them to ``torch.as_tensor`` (which views them without a copy). The object
    the memory belongs to keeps it alive, as a Triton launch of the same pointer assumes."""

    def __init__(self, address: int, count: int, itemsize: int) -> None:
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": f"<i{itemsize}", "data": (address, False),
                                         "version": 2}
