"""What Triton code asks of the device: ``driver.active.get_current_target()``,
``driver.active.utils.get_device_properties(i)`` and, where torch has no CUDA, ``torch.cuda``'s
capability and properties. On the CUDA backend the answers are the current GPU's; on the NumPy
reference they are those of :data:`STAND_IN`, the sm_80 target tile_lang compiles for by default,
so the tutorials' device-dependent choices (TMA or not, a persistent grid's size) come out as on
an A100 and every path they take runs on the reference.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import tile_lang.registry as registry
from tile_lang.errors import BackendError


@dataclass(frozen=True)
class DeviceFacts:
    """The facts of a device that Triton's host code reads, in Triton's units (kHz, bytes)."""

    name: str
    major: int
    minor: int
    multiprocessor_count: int
    max_shared_mem: int  # a block's shared memory with the opt-in, bytes
    max_num_regs: int  # 32-bit registers a block may use
    warp_size: int
    sm_clock_rate: int  # kHz
    mem_clock_rate: int  # kHz
    mem_bus_width: int  # bits
    total_memory: int  # bytes
    max_threads_per_sm: int

    def triton_properties(self) -> dict[str, int]:
        """``driver.active.utils.get_device_properties``'s dict, with Triton's keys."""
        return {"max_shared_mem": self.max_shared_mem, "max_num_regs": self.max_num_regs,
                "multiprocessor_count": self.multiprocessor_count, "warpSize": self.warp_size,
                "sm_clock_rate": self.sm_clock_rate, "mem_clock_rate": self.mem_clock_rate,
                "mem_bus_width": self.mem_bus_width, "max_threads_per_sm": self.max_threads_per_sm}


STAND_IN = DeviceFacts(name="tile_lang NumPy reference (sm_80 stand-in)", major=8, minor=0,
                       multiprocessor_count=108, max_shared_mem=166912, max_num_regs=65536, warp_size=32,
                       sm_clock_rate=1410000, mem_clock_rate=1215000, mem_bus_width=5120,
                       total_memory=40 * 2**30, max_threads_per_sm=2048)
"""The device the NumPy reference answers for: an A100's figures (sm_80, 108 SMs)."""


def facts(device: int | None = None) -> DeviceFacts:
    """The current backend's device ``device`` (the current one for None). CUDA 13 dropped the clock
    rates from the device properties: 0 where CuPy does not report them."""
    if registry.current_is_host():
        return STAND_IN
    import cupy

    return _gpu(cupy.cuda.Device().id if device is None else int(device))


@functools.lru_cache(maxsize=None)
def _gpu(index: int) -> DeviceFacts:
    """GPU ``index``'s facts, read once (the query costs about a millisecond, and tutorial 02's
    warmup before each launch it times asks for them)."""
    import cupy

    p = cupy.cuda.runtime.getDeviceProperties(index)
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    return DeviceFacts(name=name, major=int(p["major"]), minor=int(p["minor"]),
                       multiprocessor_count=int(p["multiProcessorCount"]),
                       max_shared_mem=int(p["sharedMemPerBlockOptin"]), max_num_regs=int(p["regsPerBlock"]),
                       warp_size=int(p["warpSize"]), sm_clock_rate=int(p.get("clockRate", 0)),
                       mem_clock_rate=int(p.get("memoryClockRate", 0)), mem_bus_width=int(p["memoryBusWidth"]),
                       total_memory=int(p["totalGlobalMem"]),
                       max_threads_per_sm=int(p["maxThreadsPerMultiProcessor"]))


@dataclass(frozen=True)
class TorchProperties:
    """``torch.cuda.get_device_properties(...)``'s answer on the reference: torch's attribute names."""

    name: str
    major: int
    minor: int
    multi_processor_count: int
    total_memory: int
    warp_size: int
    max_threads_per_multi_processor: int
    regs_per_multiprocessor: int
    shared_memory_per_block_optin: int


def _torch_properties(device: Any = None) -> TorchProperties:
    f = STAND_IN
    return TorchProperties(f.name, f.major, f.minor, f.multiprocessor_count, f.total_memory, f.warp_size,
                           f.max_threads_per_sm, f.max_num_regs, f.max_shared_mem)


def _torch_capability(device: Any = None) -> tuple[int, int]:
    return STAND_IN.major, STAND_IN.minor


def _current_device() -> int:
    """``torch.cuda.current_device()`` on the reference: the stand-in's index, 0 (FlagGems' heuristics ask)."""
    return 0


def _exchange_device(device: int | None) -> int:
    """``with torch.cuda.device(d):``'s switch on the reference: nothing to switch for ``None`` (a
    CPU tensor's ``.device.index``, which torch without CUDA fails to compare), a negative index
    or the stand-in's 0; any other index is a BackendError (a RuntimeError, as torch's would be)."""
    if device is None or device < 0:
        return -1
    if device != 0:
        raise BackendError(f"the NumPy reference's stand-in CUDA device is device 0, not device {device}")
    return 0


def answer_torch_cuda(torch: types.ModuleType) -> None:
    """On the NumPy reference with a torch that has no CUDA, ``torch.cuda.get_device_capability``,
    ``get_device_properties`` and ``current_device`` answer for :data:`STAND_IN` (they would raise) and
    ``torch.cuda.device(d)`` switches nothing; ``is_available()`` stays False. A torch with CUDA,
    or the CUDA backend, is left alone."""
    if not registry.current_is_host() or torch.cuda.is_available():
        return
    torch.cuda.get_device_capability = _torch_capability
    torch.cuda.get_device_properties = _torch_properties
    torch.cuda._exchange_device = torch.cuda._maybe_exchange_device = _exchange_device
    torch.cuda.current_device = _current_device


class TorchHook(importlib.abc.MetaPathFinder):
    """Applies :func:`answer_torch_cuda` when ``torch`` is imported (torch is not imported for it)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            answer_torch_cuda(module)

        setattr(loader, "exec_module", exec_module)  # noqa: B010 (mypy refuses assigning a method)
        return spec


def install_torch_hook() -> None:
    """:class:`TorchHook` on ``sys.meta_path`` (or, torch imported already, its answers now)."""
    if "torch" in sys.modules:
        answer_torch_cuda(sys.modules["torch"])
    elif not any(isinstance(f, TorchHook) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchHook())
