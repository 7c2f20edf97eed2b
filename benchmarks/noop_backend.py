"""A backend that launches nothing, for timing and testing the host side of launches without a GPU.

Its runners are the CUDA backend's (:meth:`tile_lang_cupy.launch.Compiled.runner`, packing the
arguments the same way) around a stand-in for ``cuLaunchKernel`` that only counts its calls, so
timing a launch here times everything but the driver::

    python -m timeit -s "from benchmarks.noop_backend import add_launch; f = add_launch()" "f()"
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import dtypes, registry
from tile_lang.buffer import Buffer
from tile_lang.dtypes import DType
from tile_lang.kernel import Launch
from tile_lang.launch_cache import Probe, Runner
from tile_lang_cupy.launch import Compiled, arg_spec
from tile_lang_cupy.memory import Foreign, address


@dataclass
class DeviceArray:
    """A stand-in for a GPU array: a NumPy dtype and a fake device address."""

    dtype: np.dtype[Any]
    ptr: int
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Handle:
    """A stand-in for a CuPy Function or Stream: its ``ptr``, the handle the driver takes."""

    ptr: int


NULL_STREAM = Handle(0)


def null_stream() -> Handle:
    """A stand-in for ``cupy.cuda.get_current_stream``: the legacy default stream."""
    return NULL_STREAM


class Calls:
    """The stand-in for ``cuLaunchKernel`` (``cupy.cuda.driver.launchKernel``'s arguments):
    records (grid, block, arguments read back from the kernel parameters) when ``record`` is set;
    a function handle is the index of its parameters' types in ``layouts``."""

    def __init__(self) -> None:
        self.count = 0
        self.record = False
        self.seen: list[tuple[tuple[int, ...], tuple[int, ...], tuple[Any, ...]]] = []
        self.layouts: list[tuple[str | None, ...]] = []

    def __call__(self, function: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared_mem: int,
                 stream: int, params: int, extra: int) -> None:
        self.count += 1
        if self.record:
            self.seen.append(((gx, gy, gz), (bx, by, bz), read_params(self.layouts[function], params)))


def read_params(layout: tuple[str | None, ...], address: int) -> tuple[Any, ...]:
    """The arguments a kernel receives from ``cuLaunchKernel``'s parameter array at ``address``:
    an address (int) per pointer, a NumPy scalar of its type per scalar."""
    slots = (ctypes.c_void_p * len(layout)).from_address(address)
    return tuple(ctypes.c_uint64.from_address(slot).value if kind is None
                 else np.frombuffer(ctypes.string_at(slot, np.dtype(kind).itemsize), np.dtype(kind))[0]
                 for kind, slot in zip(layout, slots))


class NoopBackend:
    """Adopts :class:`DeviceArray` and ``Buffer`` of its own; every launch calls ``calls``."""

    name = "noop"
    host = False  # it stands in for the CUDA backend

    def __init__(self) -> None:
        self.calls = Calls()
        self.runners = 0  # how many specialisations were prepared

    def unavailable_reason(self) -> str | None:
        return None

    def to_device(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        return self.empty(array.shape, dtype)

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        return self._wrap(DeviceArray(dtype.numpy, 1 << 20, shape))

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]:
        return np.zeros(buffer.shape, buffer.type.numpy)

    def adopt(self, obj: object) -> Buffer[Any] | None:
        return self._wrap(obj) if isinstance(obj, DeviceArray) else None

    def launch(self, launch: Launch) -> None:
        raw = tuple(address(a) if isinstance(a, Buffer) else a for a in launch.args)
        self.runner(launch)(launch.grid, raw)

    def probe(self, cls: type) -> Probe | None:
        if cls is DeviceArray:
            return _probe_array
        return self._probe_buffer if issubclass(cls, Buffer) else None

    def runner(self, launch: Launch) -> Runner:
        self.runners += 1
        params = tuple(None if a.dtype.is_pointer else a.dtype.numpy.str for a in map(arg_spec, launch.args))
        self.calls.layouts.append(params)
        compiled = Compiled(32 * launch.options.num_warps, 0, params, 0, Handle(len(self.calls.layouts) - 1),
                            lambda: 0, launch_kernel=self.calls, current_stream=null_stream)
        return compiled.runner(None)  # streams are ignored (they would need CuPy)

    def _wrap(self, array: DeviceArray) -> Buffer[Any]:
        return Buffer(self, Foreign(array.ptr, array), dtypes.from_numpy(array.dtype), array.shape)

    def _probe_buffer(self, buffer: Buffer[Any]) -> tuple[Hashable, int]:
        if buffer.backend is not self:
            return (buffer.backend.name, buffer.type.name), 0
        return (None, buffer.type.name, buffer.device), address(buffer)


def _probe_array(array: DeviceArray) -> tuple[Hashable, int]:
    return array.dtype, array.ptr


_SCOPES: list[Any] = []  # entered ``tl.backend`` scopes, kept alive (closing one deselects it)


def use_noop() -> NoopBackend:
    """Register a fresh no-op backend and select it for the rest of the process."""
    backend = NoopBackend()
    registry.register(backend)
    scope = registry.backend("noop")
    scope.__enter__()
    _SCOPES.append(scope)
    return backend


def add_launch() -> Callable[[], None]:
    """A launch of the benchmark's vector add on 4096 elements, as ``gpu_bench`` times it."""
    from tests.compiler.kernels import add_kernel

    use_noop()
    x, y, out = (_array(1 << (20 + i)) for i in range(3))

    def launch() -> None:
        add_kernel[(4,)](x, y, out, 4096, BLOCK=1024)

    launch()
    return launch


def layernorm_launch() -> Callable[[], None]:
    """A launch of the benchmark's layernorm (7 runtime arguments, ``Options``)."""
    from tests.compiler.kernels import layernorm_kernel

    use_noop()
    x, y, w, b = (_array(1 << (20 + i)) for i in range(4))

    def launch() -> None:
        layernorm_kernel[(8192,), tl.Options(num_warps=8)](x, y, w, b, 4096, 4096, 1e-5, BLOCK=4096)

    launch()
    return launch


def _array(address: int) -> Any:
    """A 4096-element f32 array (typed Any: launches accept it where mypy expects a Pointer)."""
    return DeviceArray(np.dtype(np.float32), address, (4096,))
