"""The ``cupy`` backend: buffers are CuPy arrays; kernels are compiled to CUDA and launched."""

from __future__ import annotations

import sys
from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.buffer import TORCH_DTYPES, Buffer, native_buffer, native_dtype, torch_dtype
from tile_lang.dtypes import DType
from tile_lang.launch import Launch
from tile_lang.launch_cache import ExpressTarget, Probe, Runner
from tile_lang.registry import GeneratedSource

from tile_lang_cupy.memory import Foreign, address

if TYPE_CHECKING:
    from tile_lang.compiler.ir import Function

    from tile_lang_cupy.launch import Compiled, KernelCache


class CupyBackend:
    """Runs kernels on NVIDIA GPUs through CuPy. Arrays from CuPy, torch, or anything with
    ``__cuda_array_interface__`` or DLPack are adopted without copies, with their device; a
    launch runs on the device holding its buffers."""

    name = "cupy"
    host = False  # device memory: CuPy arrays, torch CUDA tensors

    def __init__(self) -> None:
        self._kernels: KernelCache | None = None
        self._reason: str | None | bool = False  # False: not checked yet

    def unavailable_reason(self) -> str | None:
        if self._reason is False:
            self._reason = self._check()
        return self._reason if isinstance(self._reason, str) else None

    def _check(self) -> str | None:
        try:
            import cupy
        except Exception as exc:
            return f"CuPy is not installed or failed to import ({type(exc).__name__}: {exc}); pip install cupy-cuda13x"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            # without a driver CuPy says "CUDA driver version is insufficient", which reads as an old driver
            return f"no CUDA GPU/driver found (CuPy: {type(exc).__name__}: {exc})"
        return None if count > 0 else "no CUDA device found"

    def device_count(self) -> int:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()

    def on_device(self, index: int) -> AbstractContextManager[object]:
        import cupy

        return cupy.cuda.Device(index)

    def _wrap(self, array: Any, dtype: DType | None = None) -> Buffer[Any]:
        data = array.data
        return native_buffer(self, array, dtype or native_dtype(array.dtype), tuple(array.shape), tuple(array.strides),
                             data.ptr, data.device_id)

    def to_device(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        import cupy

        return self._wrap(cupy.asarray(array.view(_storage(dtype))), dtype)

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        import cupy

        return self._wrap(cupy.empty(shape, dtype=_storage(dtype)), dtype)

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]:
        import cupy

        data = buffer.data.owner if isinstance(buffer.data, Foreign) else buffer.data
        with cupy.cuda.Device(buffer.device):
            host: np.ndarray[Any, Any] = cupy.asnumpy(cupy.asarray(data))
        return host.view(buffer.type.numpy).reshape(buffer.shape)

    def adopt(self, obj: object) -> Buffer[Any] | None:
        import cupy

        if isinstance(obj, cupy.ndarray):
            return self._wrap(obj)
        if getattr(obj, "is_cuda", None) is False:
            return None  # a torch tensor in host memory
        if getattr(obj, "is_cuda", False) and str(getattr(obj, "dtype", "")) in TORCH_DTYPES:
            return self._adopt_tensor(obj)
        if hasattr(obj, "__cuda_array_interface__"):
            try:
                array = cupy.asarray(obj)
            except (TypeError, ValueError):
                array = None  # e.g. a dtype the interface cannot describe: try DLPack
            if array is not None:
                return self._wrap(array)
        if hasattr(obj, "__dlpack__"):
            return self._wrap(cupy.from_dlpack(obj))
        return None

    def _adopt_tensor(self, tensor: Any) -> Buffer[Any]:
        """A torch CUDA tensor, read through its own accessors (much cheaper per launch than
        building a CuPy view through ``__cuda_array_interface__``)."""
        dtype = torch_dtype(tensor)
        size = tensor.element_size()
        return native_buffer(self, Foreign(tensor.data_ptr(), tensor), dtype, tuple(tensor.shape),
                             tuple(s * size for s in tensor.stride()), tensor.data_ptr(), tensor.get_device())

    def generate_source(self, fn: Function) -> GeneratedSource:
        """The CUDA C++ for ``fn`` (``kernel.cuda_source``); needs neither CuPy nor a GPU."""
        from tile_lang_cupy.codegen import generate
        from tile_lang_cupy.headers import INCLUDE_DIR

        cuda = generate(fn)
        return GeneratedSource(cuda.source, (str(INCLUDE_DIR),), cuda.smem_bytes)

    def launch(self, launch: Launch) -> None:
        from tile_lang_cupy import launch as launching

        launching.launch(self._compiled(launch), launch)

    def probe(self, cls: type) -> Probe | None:
        """Fast-path readers (see :mod:`tile_lang.launch_cache`) for the array classes that
        ``adopt`` takes without building a CuPy view: Buffers, CuPy arrays and torch tensors."""
        if issubclass(cls, Buffer):
            return self._probe_buffer
        cupy = sys.modules.get("cupy")
        if cupy is not None and issubclass(cls, cupy.ndarray):
            return _probe_cupy
        torch = sys.modules.get("torch")
        if torch is not None and issubclass(cls, torch.Tensor):
            return _probe_tensor
        return None

    def runner(self, launch: Launch) -> Runner:
        if any(isinstance(a, Buffer) for a in launch.args):
            return self._compiled(launch).runner(launch.options.stream)

        def on_current_device(grid: tuple[int, int, int], raw: tuple[Any, ...]) -> None:
            self._compiled(launch).runner(launch.options.stream)(grid, raw)

        return on_current_device  # no buffers to say where: the device current at each launch

    def express_target(self, launch: Launch) -> ExpressTarget | None:
        """The express lane's target for a launch with buffers (which say its device), else None."""
        if not any(isinstance(a, Buffer) for a in launch.args):
            return None
        from tile_lang_cupy import express

        return express.target(self._compiled(launch), launch.options.stream)

    def precompile(self, launches: Sequence[Launch]) -> None:
        """Compile the kernels of launches on one device (an autotuner's configs) side by side."""
        import cupy

        from tile_lang_cupy import launch as launching

        if self._kernels is None:
            self._kernels = launching.KernelCache()
        by_device: dict[int, list[Launch]] = {}
        for launch in launches:
            by_device.setdefault(self._device(launch, cupy), []).append(launch)
        for device, group in by_device.items():
            with cupy.cuda.Device(device):
                self._kernels.load(group, device)

    def _compiled(self, launch: Launch) -> Compiled:
        """The kernel loaded on the device of ``launch``'s buffers (checked to be one device; a
        launch without buffers: the current device), which is current while it is looked up."""
        import cupy

        from tile_lang_cupy import launch as launching

        if self._kernels is None:
            self._kernels = launching.KernelCache()
        device = self._device(launch, cupy)
        with cupy.cuda.Device(device):
            return self._kernels.get(launch, device)

    @staticmethod
    def _device(launch: Launch, cupy: Any) -> int:
        """The device of ``launch``'s buffers (checked to be one), else the current one."""
        device = next((a.device for a in launch.args if isinstance(a, Buffer)), None)
        return int(cupy.cuda.runtime.getDevice()) if device is None else device

    def _probe_buffer(self, buffer: Buffer[Any]) -> tuple[Hashable, int]:
        if buffer.backend is not self:  # the checked path rejects it
            return (buffer.backend.name, buffer.type.name), 0
        return (None, buffer.type.name, buffer.device), address(buffer)


def _probe_cupy(array: Any) -> tuple[Hashable, int]:
    """Adoption's verdict on a view follows from its strides, unless one is negative: then from
    which dimensions have one element (they never step), so the shape is part of the token."""
    data, strides = array.data, array.strides
    if strides and ((strides[0] | strides[-1]) < 0 or len(strides) > 2 and min(strides) < 0):  # min is slower
        return (array.dtype, strides, data.device_id, array.shape), data.ptr
    return (array.dtype, strides, data.device_id), data.ptr


def _probe_tensor(tensor: Any) -> tuple[Hashable, int]:
    return (tensor.dtype, tensor.get_device()), tensor.data_ptr()  # device -1: a host tensor, which adopt refuses


def _storage(dtype: DType) -> np.dtype[Any]:
    """How CuPy holds ``dtype``: fp8 as raw bytes (CuPy has no fp8 dtype; kernels see the bits)."""
    return np.dtype(np.uint8) if dtype.is_fp8 else dtype.numpy
