"""From a checked launch to a CUDA launch: specialisation key, compiled-module lookup
(memory, then disk, then compile), argument packing and the call on the stream.

A launch whose generated source and cubin are on disk imports neither the compiler nor NVRTC:
the disk cache is keyed by text built from the launch itself, and its metadata records how to
pack each argument.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.buffer import Buffer
from tile_lang.kernel import Kernel, Launch
from tile_lang.launch_cache import Runner, int_class

from tile_lang_cupy import cache
from tile_lang_cupy.memory import address

if TYPE_CHECKING:
    from tile_lang.compiler.spec import ArgSpec, Spec

Packer = Callable[[tuple[Any, ...]], tuple[Any, ...]]


@dataclass
class Compiled:
    """A loaded kernel ready to launch."""

    function: Any  # a CuPy RawKernel: loads the module on whichever device is current
    threads: int
    smem_bytes: int
    pack: Packer  # raw arguments (addresses for pointers) -> what CuPy's launch takes
    compile_seconds: float
    device: int  # the device current when it was loaded
    direct: Any  # its CuPy Function on ``device``: a call skips RawKernel's per-call lookup
    current_device: Callable[[], int]  # cupy.cuda.runtime.getDevice (a stand-in in tests)

    def runner(self, stream: Any) -> Runner:
        """A launcher of this kernel on ``stream`` (an ``Options.stream``; None: CuPy's current
        stream at each launch), with everything but the grid and the arguments bound once."""
        function, block, smem, pack = self.function, (self.threads, 1, 1), self.smem_bytes, self.pack
        device, direct, current_device = self.device, self.direct, self.current_device
        on = _stream(stream) if stream is not None else None

        def run(grid: tuple[int, int, int], raw: tuple[Any, ...]) -> None:
            if current_device() == device:
                direct(grid, block, pack(raw), smem, on)
            else:
                function(grid, block, pack(raw), shared_mem=smem, stream=on)

        return run


def arg_key(value: Any) -> str:
    """The part of a checked argument that selects a specialisation (cheap: runs on every
    checked launch), as text, since it also keys the disk cache."""
    if isinstance(value, Buffer):
        return f"{value.type.name}*{'a' if address(value) % 16 == 0 else ''}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return f"int{int_class(value)}"
    return "float"


def arg_spec(value: Any) -> ArgSpec:
    from tile_lang import dtypes
    from tile_lang.compiler.spec import ArgSpec, int_spec

    if isinstance(value, Buffer):
        return ArgSpec(value.type.pointer_to(), address(value) % 16 == 0)
    if isinstance(value, bool):
        return ArgSpec(dtypes.BOOL)
    if isinstance(value, int):
        return int_spec(value)
    return ArgSpec(dtypes.F32)


class KernelCache:
    """Compiled kernels of one process, keyed by kernel, specialisation and launch options."""

    def __init__(self) -> None:
        self.loaded: dict[Any, Compiled] = {}

    def get(self, launch: Launch) -> Compiled:
        args = tuple(arg_key(a) for a in launch.args)
        key = (launch.kernel, args, tuple(launch.constexprs.items()), launch.options.num_warps,
               launch.options.num_stages)
        found = self.loaded.get(key)
        if found is None:
            constexprs = ",".join(f"{k}={v!r}" for k, v in sorted(launch.constexprs.items()))
            text = f"{';'.join(args)}|{constexprs}|w{launch.options.num_warps}|s{launch.options.num_stages}"
            found = self.loaded[key] = load(launch, text)
        return found


def _arch() -> str:
    import cupy

    return str(cupy.cuda.Device().compute_capability)


def load(launch: Launch, spec_text: str) -> Compiled:
    """The kernel for ``launch``'s specialisation (described by ``spec_text``): generated source
    from the disk cache or the compiler, and the module from the disk cache or NVRTC."""
    import cupy

    start = time.perf_counter()
    kernel = launch.kernel
    root = cache.cache_dir()
    front = cache.digest(kernel.filename, kernel.name, cache.current_digest(kernel.filename), spec_text,
                         cache.compiler_version())
    meta = _cached_source(root, front)
    if meta is None:
        meta = _generate(kernel, launch_spec(launch), root, front)
    function = _module(root, meta, _arch()).get_function(meta["name"])
    if meta["smem_bytes"] > 48 * 1024:
        function.max_dynamic_shared_size_bytes = meta["smem_bytes"]
    device = cupy.cuda.runtime.getDevice()
    return Compiled(function, meta["threads"], meta["smem_bytes"], make_packer(meta["params"]),
                    time.perf_counter() - start, device, function.kernel, cupy.cuda.runtime.getDevice)


def launch_spec(launch: Launch) -> Spec:
    """The compiler's specialisation for a checked launch."""
    from tile_lang.compiler.spec import Spec

    return Spec(tuple(arg_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                launch.options.num_warps, launch.options.num_stages)


def make_packer(params: list[str | None]) -> Packer:
    """A function from raw arguments to CuPy launch arguments. ``params`` holds, per kernel
    parameter, None for a pointer (its address goes as a Python int, which CuPy passes as 64
    bits) or the NumPy type string of a scalar (the value is converted to that width).

    Generated as one tuple expression: on every launch it is cheaper than a loop over converters.
    """
    if not params:
        return lambda raw: ()
    scalars = {f"t{i}": np.dtype(p).type for i, p in enumerate(params) if p is not None}
    items = "".join(f"t{i}(raw[{i}])," if p is not None else f"raw[{i}]," for i, p in enumerate(params))
    packer: Packer = eval(f"lambda raw: ({items})", scalars)  # noqa: S307 (text built above from ints)
    return packer


def _module(root: Path, meta: dict[str, Any], arch: str) -> Any:
    """The loaded module: the cached cubin, or a fresh NVRTC compile stored for next time. The
    cubin is keyed by the source, the target and the library version (the source includes our
    header, which the source text does not show)."""
    import cupy

    cubin_path = root / f"{cache.digest(meta['source'], arch, cache.compiler_version())}.cubin"
    if not cubin_path.exists():
        from tile_lang_cupy import nvrtc

        cache.write_atomic(cubin_path, nvrtc.compile_cubin(meta["source"], meta["name"], arch))
    return cupy.RawModule(path=str(cubin_path))


def _cached_source(root: Path, front: str) -> dict[str, Any] | None:
    meta = cache.read_json(root / f"{front}.json")
    if meta is None or "params" not in meta:
        return None
    if any(cache.current_digest(f) != d for f, d in meta.get("files", {}).items()):
        return None  # an inlined helper changed
    return meta


def _generate(kernel: Kernel[Any], spec: Spec, root: Path, front: str) -> dict[str, Any]:
    from tile_lang.compiler import compile_ir
    from tile_lang_cupy.codegen import generate

    fn = compile_ir(kernel, spec)
    cuda = generate(fn)
    params = [None if a.dtype.is_pointer else a.dtype.numpy.str for a in spec.args]
    meta = {"name": cuda.name, "source": cuda.source, "threads": cuda.threads, "smem_bytes": cuda.smem_bytes,
            "params": params, "files": {f: cache.current_digest(f) for f in fn.files}}
    cache.write_atomic(root / f"{front}.cu", cuda.source.encode())
    cache.write_json(root / f"{front}.json", meta)
    return meta


def launch(compiled: Compiled, launch: Launch) -> None:
    """Run a checked launch (the path of launches the fast path does not cover)."""
    raw = tuple(address(a) if isinstance(a, Buffer) else a for a in launch.args)
    compiled.runner(launch.options.stream)(launch.grid, raw)


def _stream(stream: Any) -> Any:
    """A CuPy stream for ``Options.stream``: a CuPy stream, or anything with a CUDA stream handle
    (``torch.cuda.Stream`` has ``cuda_stream``)."""
    import cupy

    if isinstance(stream, cupy.cuda.Stream):
        return stream
    handle = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr", None)
    if handle is None and isinstance(stream, int):
        handle = stream
    return cupy.cuda.ExternalStream(int(handle or 0))
