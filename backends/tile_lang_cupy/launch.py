"""From a checked launch to a CUDA launch: specialisation key, compiled-module lookup
(memory, then disk, then compile), argument packing and the call on the stream.

A launch whose generated source and cubin are on disk imports neither the compiler nor NVRTC:
the disk cache is keyed by text built from the launch itself and the Python values the kernel
read (see :mod:`tile_lang_cupy.artifacts`), and its metadata records how to pack each argument.
"""

from __future__ import annotations

import ctypes
import os
import functools
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.buffer import Buffer
from tile_lang.errors import OutOfResources, TileLangError
from tile_lang.launch import Launch
from tile_lang.launch_cache import Runner, int_class, typed
from tile_lang.reads import fingerprint

from tile_lang_cupy import artifacts, cache, express
from tile_lang_cupy.memory import address

if TYPE_CHECKING:
    from cupy.cuda.function import Function

    from tile_lang.compiler.spec import ArgSpec, Spec

Packer = Callable[[tuple[Any, ...]], tuple[Any, ...]]
LaunchKernel = Callable[[int, int, int, int, int, int, int, int, int, int, int], None]
"""cupy.cuda.driver.launchKernel: (function, grid x, y, z, block x, y, z, shared bytes, stream,
kernel parameters, extra) -> None, as cuLaunchKernel takes them."""


def _cupy_device(index: int) -> AbstractContextManager[object]:
    import cupy

    return cupy.cuda.Device(index)


def _maps_memory(nbytes: int, stream: Any) -> tuple[Any, int]:
    """Device memory for a launch's tensor maps from CuPy's pool, on ``stream`` (None: the
    current one), so the pool hands it out again only after the launch on that stream; and its address."""
    import cupy

    if stream is None:
        memory = cupy.empty(nbytes, np.uint8)
    else:
        with stream:
            memory = cupy.empty(nbytes, np.uint8)
    return memory, int(memory.data.ptr)


@dataclass
class Compiled:
    """A kernel loaded on one device, ready to launch there."""

    threads: int
    smem_bytes: int
    params: tuple[str | None, ...]  # per parameter: None for a pointer, else a NumPy type string (Generated.params)
    device: int  # the device it was loaded on, which holds the launch's buffers
    function: Any  # its CuPy Function on ``device``, launched by its ``ptr`` (and keeping its module loaded)
    current_device: Callable[[], int]  # cupy.cuda.runtime.getDevice (a stand-in in tests)
    use_device: Callable[[int], AbstractContextManager[object]] = _cupy_device  # ``with`` it: device current
    map_bytes: int = 0  # per program, for bulk copies' tensor maps (Generated.map_bytes)
    scratch: Callable[[int, Any], tuple[Any, int]] = _maps_memory  # (bytes, stream) -> (memory, address)
    launch_kernel: LaunchKernel | None = None  # None: cupy.cuda.driver.launchKernel (cuLaunchKernel)
    current_stream: Callable[[], Any] | None = None  # None: cupy.cuda.get_current_stream (launched on its .ptr)
    launch_address: int | None = None  # of cuLaunchKernel, for the express lane (None: no lane)
    _runners: dict[Any, Runner] = field(default_factory=dict, repr=False)  # by Options.stream

    def runner(self, stream: Any) -> Runner:
        """The launcher of this kernel on ``stream`` (an ``Options.stream``; None: the current
        stream at each launch), made once per stream (:func:`_runner`)."""
        found = self._runners.get(stream)
        if found is None:
            found = self._runners[stream] = _runner(self, stream)
        return found


def _runner(compiled: Compiled, stream: Any) -> Runner:
    """A launcher with everything but the grid and the arguments worked out once: the driver
    call, the function handle, the arguments' layout (:func:`slot_format`) and each thread's
    argument memory, which a launch fills in place with one ``struct.pack_into`` and hands to
    ``cuLaunchKernel``; no objects are made per launch but the tensor maps' memory. It launches
    on the kernel's device, made current for the call when another one is."""
    threads, smem, device, handle = compiled.threads, compiled.smem_bytes, compiled.device, compiled.function.ptr
    current_device, use_device, per_program, scratch = (compiled.current_device, compiled.use_device,
                                                        compiled.map_bytes, compiled.scratch)
    params = compiled.params + ((None,) if per_program else ())  # the maps' address goes last
    pack_into, numpy_values, count = struct.Struct(slot_format(params)).pack_into, make_packer(params), len(params)
    launch_kernel, current_stream = compiled.launch_kernel, compiled.current_stream
    if launch_kernel is None or current_stream is None:
        import cupy

        launch_kernel = launch_kernel or cupy.cuda.driver.launchKernel
        current_stream = current_stream or cupy.cuda.get_current_stream
    on = stream_of(stream) if stream is not None else None
    fixed = on.ptr if on is not None else None
    ambient, _ = ambient_stream(current_stream, device)
    local = threading.local()  # cuLaunchKernel reads the arguments without the GIL: one memory per thread
    # equal arguments pass equal bytes unless a float is among them (0.0 == -0.0)
    reuse = all(p is None or np.dtype(p).kind != "f" for p in params)

    def run(grid: tuple[int, int, int], raw: tuple[Any, ...]) -> None:
        if current_device() != device:
            with use_device(device):
                return run(grid, raw)
        x, y, z = grid
        try:
            slots = local.slots
        except AttributeError:
            slots = local.slots = _Slots(count)
        where = ambient() if fixed is None else fixed
        if per_program:  # held until the launch on its stream is queued
            maps, maps_address = scratch(per_program * x * y * z, on if on is not None or not where else
                                         stream_of(where))
            raw = (*raw, maps_address)
        if raw != slots.packed or not reuse:  # the driver copies them at each launch: the last ones are still there
            slots.packed = None  # a failed pack may leave some written
            try:
                pack_into(slots.values, 0, *raw)
            except OverflowError:  # the checks and the fast-path key fix each int's width: a float beyond f32's range
                pack_into(slots.values, 0, *numpy_values(raw))  # converted as NumPy converts it, to inf
            slots.packed = raw
        launch_kernel(handle, x, y, z, threads, 1, 1, smem, where, slots.address, 0)
        return None

    return run


def ambient_stream(current_stream: Callable[[], Any], device: int) -> tuple[Callable[[], int], list[Callable[[int], int]]]:
    """The stream of a launch given none (``Options.stream``): CuPy's current stream where the code
    made one current; else torch's current stream on the kernel's device where torch has CUDA
    started, as Triton launches (torch's streams do not wait for the default stream, so work
    queued on one, tutorial 02's benchmark, would race a kernel on another); else the default.
    With it, the list that holds torch's stream function once torch has CUDA started (the express
    lane calls it directly)."""
    torch_stream: list[Callable[[int], int]] = []  # torch's, once torch has CUDA started (it stays started)

    def ptr() -> int:
        own = int(current_stream().ptr)
        if own:
            return own
        if not torch_stream:
            torch = sys.modules.get("torch")
            if torch is None or not torch.cuda.is_initialized():
                return 0
            torch_stream.append(torch._C._cuda_getCurrentRawStream)
        return int(torch_stream[0](device))

    return ptr, torch_stream


class _Slots:
    """One thread's argument memory for a runner: an 8-byte slot per argument (``values``), the
    array of the slots' addresses that ``cuLaunchKernel`` takes as its kernel parameters, its
    ``address``, and the raw arguments last packed into the slots (None: none known)."""

    __slots__ = ("values", "pointers", "address", "packed")

    def __init__(self, count: int) -> None:
        self.values = (ctypes.c_uint64 * count)()
        base = ctypes.addressof(self.values)
        self.pointers = (ctypes.c_void_p * count)(*range(base, base + 8 * count, 8))
        self.address = ctypes.addressof(self.pointers)
        self.packed: tuple[Any, ...] | None = None


_CODES = {("b", 1): "?", ("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q", ("u", 1): "B", ("u", 2): "H",
          ("u", 4): "I", ("u", 8): "Q", ("f", 2): "e", ("f", 4): "f", ("f", 8): "d"}
"""The ``struct`` code of a scalar by its NumPy kind and size."""


def slot_format(params: Sequence[str | None]) -> str:
    """The ``struct`` format of a kernel's arguments in 8-byte slots: a pointer as a u64 address,
    a scalar in its own width (a NumPy type string, as in ``Generated.params``) then padding."""
    codes = []
    for param in params:
        if param is None:
            codes.append("Q")
            continue
        dtype = np.dtype(param)
        codes.append(_CODES[dtype.kind, dtype.itemsize] + (f"{8 - dtype.itemsize}x" if dtype.itemsize < 8 else ""))
    return "=" + "".join(codes)


def slot_codes(params: Sequence[str | None]) -> tuple[str, ...] | None:
    """Each parameter's ``struct`` code as the express lane packs it ('P' for a pointer), or None
    if a scalar has none there (an f16 scalar: the lane packs no half floats)."""
    codes = ["P" if param is None else _CODES[np.dtype(param).kind, np.dtype(param).itemsize] for param in params]
    return None if "e" in codes else tuple(codes)


def arg_key(value: Any) -> str:
    """The part of a checked argument that selects a specialisation (cheap: runs on every
    checked launch), as text, since it also keys the disk cache."""
    if isinstance(value, Buffer):
        return f"{value.type.name}*{'a' if address(value) % 16 == 0 else ''}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return f"int{int_class(value)}"
    if isinstance(value, np.integer):  # a parameter annotated with an int dtype (``n: tl.int64``)
        return f"{value.dtype}:{int_class(int(value)) & 7}"
    return str(value.dtype) if isinstance(value, np.generic) else "float"


def arg_spec(value: Any) -> ArgSpec:
    from tile_lang.compiler.spec import ArgSpec, argument_spec

    if isinstance(value, Buffer):
        return ArgSpec(value.type.pointer_to(), address(value) % 16 == 0)
    return argument_spec(value)


class KernelCache:
    """Compiled kernels of one process, keyed by kernel, specialisation, launch options and device.
    Threads launching a new specialisation at once compile and load it once."""

    def __init__(self) -> None:
        self.loaded: dict[Any, Compiled] = {}
        self.lock = threading.Lock()

    def get(self, launch: Launch, device: int) -> Compiled:
        """The kernel for ``launch`` loaded on ``device``, which must be current (loading it if new)."""
        key = self._key(launch, device)
        found = self.loaded.get(key)
        if found is None:
            with self.lock:
                found = self.loaded.get(key)
                if found is None:
                    capability = compute_capability()
                    found = self.loaded[key] = load(launch, spec_text(key[1], launch, capability), capability)
        return found

    def load(self, launches: Sequence[Launch], device: int) -> None:
        """Load the kernels of ``launches`` not loaded yet on ``device``, which must be current,
        their cubins compiled side by side (:func:`load_all`): an autotuner's configs. One that
        fails to compile is left out: its own launch compiles it again and raises the error."""
        with self.lock:
            missing = {key: launch for launch in launches if (key := self._key(launch, device)) not in self.loaded}
            if missing:
                capability = compute_capability()
                texts = [(launch, spec_text(key[1], launch, capability)) for key, launch in missing.items()]
                for key, found in zip(missing, load_all(texts, capability, keep_errors=True)):
                    if isinstance(found, Compiled):  # else its launch compiles it again and raises
                        self.loaded[key] = found

    @staticmethod
    def _key(launch: Launch, device: int) -> tuple[Any, ...]:
        args = tuple(arg_key(a) for a in launch.args)
        constexprs = tuple((k, typed(v)) for k, v in launch.constexprs.items())
        return (launch.kernel, args, constexprs, launch.options.num_warps, launch.options.num_stages, device)


def spec_text(args: tuple[str, ...], launch: Launch, capability: int = 80) -> str | None:
    """The specialisation as disk-cache key text: argument keys, each constexpr's fingerprint
    (type and value: 4, 4.0 and True differ, as do 0.0 and -0.0), ``num_warps`` and ``num_stages``; None if a
    constexpr has no fingerprint stable across processes."""
    constexprs = [(k, fingerprint(v)) for k, v in sorted(launch.constexprs.items())]
    if any(f is None for _, f in constexprs):
        return None
    options = f"w{launch.options.num_warps}|s{launch.options.num_stages}|a{capability}"
    return f"{';'.join(args)}|{','.join(f'{k}={f}' for k, f in constexprs)}|{options}"


def compute_capability() -> int:
    """The current device's compute capability as an int (90 on Hopper)."""
    import cupy

    return int(cupy.cuda.Device().compute_capability)


def target(capability: int) -> str:
    """NVRTC's target for a device: Hopper's arch-specific ``sm_90a`` (wgmma needs it)."""
    return f"{capability}a" if capability == 90 else str(capability)


def load(launch: Launch, spec_text: str | None, capability: int) -> Compiled:
    """The kernel for ``launch``'s specialisation (described by ``spec_text``, None: not cached on
    disk), as :func:`load_all` loads several."""
    (found,) = load_all([(launch, spec_text)], capability)
    assert isinstance(found, Compiled)  # a compile's error was raised
    return found


def load_all(launches: Sequence[tuple[Launch, str | None]], capability: int,
             keep_errors: bool = False) -> list[Compiled | TileLangError]:
    """The kernels for these launches' specialisations (each described by its spec text, None:
    not cached on disk), each loaded on the current device: generated source from the disk cache
    or the compiler, one after another; cubins from the disk cache or NVRTC, in threads side by
    side (NVRTC runs without the GIL). A compile's error is raised, or with ``keep_errors``
    returned in that launch's place."""
    import cupy

    from tile_lang_cupy import nvrtc

    disk = cache.open_cache()
    toolchain = nvrtc.toolchain(target(capability))
    device = cupy.cuda.runtime.getDevice()
    limit = _shared_limit(device)
    gens: list[artifacts.Generated | TileLangError] = []
    for launch, text in launches:
        try:
            gens.append(_generated(launch, text, capability, disk, limit))
        except TileLangError as error:
            if not keep_errors:
                raise
            gens.append(error)
    with ThreadPoolExecutor(max(1, min(len(gens), os.cpu_count() or 1))) as pool:
        cubins = [pool.submit(artifacts.cubin, gen, toolchain, disk) if isinstance(gen, artifacts.Generated) else None
                  for gen in gens]
    loaded: list[Compiled | TileLangError] = []
    for gen, cubin in zip(gens, cubins):
        if cubin is None or not isinstance(gen, artifacts.Generated):
            assert isinstance(gen, TileLangError)
            loaded.append(gen)
            continue
        try:
            found = cubin.result()
        except TileLangError as error:
            if not keep_errors:
                raise
            loaded.append(error)
            continue
        function = _function(gen, toolchain, disk, found)
        if gen.smem_bytes > 48 * 1024:
            driver = cupy.cuda.driver
            driver.funcSetAttribute(function.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, gen.smem_bytes)
        loaded.append(Compiled(gen.threads, gen.smem_bytes, gen.params, device, function, cupy.cuda.runtime.getDevice,
                               map_bytes=gen.map_bytes, launch_address=express.driver_launch_address()))
    return loaded


def _generated(launch: Launch, spec_text: str | None, capability: int, disk: cache.DiskCache,
               limit: int | None) -> artifacts.Generated:
    """The generated CUDA for ``launch`` (:func:`artifacts.generated`), checked to fit the
    device's shared memory."""
    gen = artifacts.generated(launch.kernel, functools.partial(launch_spec, launch, capability), spec_text, disk, limit)
    if limit is not None:
        check_shared_memory(launch, gen.smem_bytes, limit)
    return gen


@functools.cache
def _shared_limit(device: int) -> int | None:
    """The most shared memory one block may have on ``device`` (after opting in above 48 KB)."""
    import cupy

    limit = cupy.cuda.runtime.getDeviceProperties(device).get("sharedMemPerBlockOptin")
    return int(limit) if limit else None


def check_shared_memory(launch: Launch, needed: int, limit: int) -> None:
    """A launch whose blocks need more shared memory than the device gives one block fails here,
    naming the kernel and what to change, not as a CUDA error code at the launch."""
    if needed > limit:
        consts = ", ".join(f"{k}={v!r}" for k, v in sorted(launch.constexprs.items()))
        raise OutOfResources(
            f"kernel {launch.kernel.name}: a block needs {needed} bytes of shared memory with "
            f"num_warps={launch.options.num_warps}, num_stages={launch.options.num_stages}"
            f"{', ' + consts if consts else ''}; this device gives a block at most {limit}: lower num_stages "
            f"or the block sizes")


def _function(gen: artifacts.Generated, toolchain: artifacts.Toolchain, disk: cache.DiskCache,
              found: tuple[bytes, bool]) -> Function:
    """The kernel's CuPy Function, loaded from ``found`` (:func:`artifacts.cubin`'s bytes as they
    were checked, and whether they came from the cache), or from a fresh compile if the driver
    rejects a cached one."""
    data, cached = found
    try:
        return _load(data, gen.name)
    except RuntimeError:  # CUDADriverError: e.g. a cubin corrupted inside
        if not cached:
            raise
    data, _ = artifacts.cubin(gen, toolchain, disk, fresh=True)
    return _load(data, gen.name)


def _load(cubin: bytes, name: str) -> Function:
    """Kernel ``name`` of a module loaded from ``cubin`` on the current device (cuModuleLoadData:
    from memory, so what runs is what was checked; the Function keeps its module loaded)."""
    import cupy

    module = cupy.cuda.function.Module()
    module.load(cubin)
    return module.get_function(name)


def launch_spec(launch: Launch, capability: int = 80) -> Spec:
    """The compiler's specialisation for a checked launch on a device of ``capability``."""
    from tile_lang.compiler.spec import Spec

    return Spec(tuple(arg_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                launch.options.num_warps, launch.options.num_stages, capability)


def make_packer(params: Sequence[str | None]) -> Packer:
    """A function from raw arguments to the values they are passed as: ``params`` holds, per
    kernel parameter, None for a pointer (its address, a Python int) or the NumPy type string of
    a scalar (the value converted as NumPy converts it to that width). CuPy's own launch call
    takes these (``gpu_bench``); a runner packs them only for a float beyond f32's range.

    Generated as one tuple expression: on every launch it is cheaper than a loop over converters.
    """
    if not params:
        return lambda raw: ()
    scalars = {f"t{i}": np.dtype(p).type for i, p in enumerate(params) if p is not None}
    items = "".join(f"t{i}(raw[{i}])," if p is not None else f"raw[{i}]," for i, p in enumerate(params))
    packer: Packer = eval(f"lambda raw: ({items})", scalars)  # noqa: S307 (text built above from ints)
    return packer


def launch(compiled: Compiled, launch: Launch) -> None:
    """Run a checked launch (the path of launches the fast path does not cover)."""
    raw = tuple(address(a) if isinstance(a, Buffer) else a for a in launch.args)
    compiled.runner(launch.options.stream)(launch.grid, raw)


def stream_of(stream: Any) -> Any:
    """A CuPy stream for ``Options.stream``: a CuPy stream, or anything with a CUDA stream handle
    (``torch.cuda.Stream`` has ``cuda_stream``)."""
    import cupy

    if isinstance(stream, cupy.cuda.Stream):
        return stream
    handle = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr", None)
    if handle is None and isinstance(stream, int):
        handle = stream
    return cupy.cuda.ExternalStream(int(handle or 0))
