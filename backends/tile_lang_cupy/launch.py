"""From a checked launch to a CUDA launch: specialisation key, compiled-module lookup
(memory, then disk, then compile), argument packing and the call on the stream."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tile_lang import dtypes
from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, int_spec
from tile_lang.kernel import Kernel, Launch

from tile_lang_cupy import cache, nvrtc
from tile_lang_cupy.memory import address


@dataclass
class Compiled:
    """A loaded kernel ready to launch."""

    function: Any
    threads: int
    smem_bytes: int
    packers: tuple[Any, ...]  # per runtime argument: how to pass it (np scalar type, or None for pointers)
    compile_seconds: float


_NP_SCALARS: dict[dtypes.DType, Any] = {dtypes.I32: np.int32, dtypes.I64: np.int64, dtypes.U64: np.uint64,
                                       dtypes.F32: np.float32, dtypes.BOOL: np.bool_}


def arg_key(value: Any) -> Any:
    """The part of an argument that selects a specialisation (cheap: runs every launch)."""
    if isinstance(value, Buffer):
        return (value.type, address(value) % 16 == 0)
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return (-(2**31) <= value < 2**31, value % 16 == 0, value == 1, value < 2**63)
    return float


def arg_spec(value: Any) -> ArgSpec:
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
        key = (launch.kernel, tuple(arg_key(a) for a in launch.args), tuple(launch.constexprs.items()),
               launch.options.num_warps)
        found = self.loaded.get(key)
        if found is None:
            spec = Spec(tuple(arg_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                        launch.options.num_warps)
            found = self.loaded[key] = load(launch.kernel, spec)
        return found


def _arch() -> str:
    import cupy

    return str(cupy.cuda.Device().compute_capability)


def load(kernel: Kernel[Any], spec: Spec) -> Compiled:
    """The kernel for ``spec``: generated source from the disk cache or the compiler, and the
    module from the disk cache or NVRTC."""
    import cupy

    start = time.perf_counter()
    arch = _arch()
    root = cache.cache_dir()
    front = cache.digest(kernel.filename, kernel.name, cache.current_digest(kernel.filename), spec.key(),
                         cache.compiler_version())
    meta = _cached_source(root, front)
    if meta is None:
        meta = _generate(kernel, spec, root, front)
    function = _module(root, meta, arch).get_function(meta["name"])
    if meta["smem_bytes"] > 48 * 1024:
        function.max_dynamic_shared_size_bytes = meta["smem_bytes"]
    packers = tuple(_NP_SCALARS.get(a.dtype) if not a.dtype.is_pointer else None for a in spec.args)
    return Compiled(function, meta["threads"], meta["smem_bytes"], packers, time.perf_counter() - start)


def _module(root: Path, meta: dict[str, Any], arch: str) -> Any:
    """The loaded module: the cached cubin, or a fresh NVRTC compile stored for next time."""
    import cupy

    cubin_path = root / f"{cache.digest(meta['source'], arch, *nvrtc.options(arch))}.cubin"
    if not cubin_path.exists():
        cache.write_atomic(cubin_path, nvrtc.compile_cubin(meta["source"], meta["name"], arch))
    return cupy.RawModule(path=str(cubin_path))


def _cached_source(root: Path, front: str) -> dict[str, Any] | None:
    meta = cache.read_json(root / f"{front}.json")
    if meta is None:
        return None
    if any(cache.current_digest(f) != d for f, d in meta.get("files", {}).items()):
        return None  # an inlined helper changed
    return meta


def _generate(kernel: Kernel[Any], spec: Spec, root: Path, front: str) -> dict[str, Any]:
    from tile_lang.compiler import compile_ir
    from tile_lang_cupy.codegen import generate

    fn = compile_ir(kernel, spec)
    cuda = generate(fn)
    meta = {"name": cuda.name, "source": cuda.source, "threads": cuda.threads, "smem_bytes": cuda.smem_bytes,
            "files": {f: cache.current_digest(f) for f in fn.files}}
    cache.write_atomic(root / f"{front}.cu", cuda.source.encode())
    cache.write_json(root / f"{front}.json", meta)
    return meta


def launch(compiled: Compiled, launch: Launch) -> None:
    args = tuple(np.uint64(address(a)) if pack is None else pack(a)
                 for a, pack in zip(launch.args, compiled.packers))
    stream = launch.options.stream
    compiled.function(launch.grid, (compiled.threads, 1, 1), args, shared_mem=compiled.smem_bytes,
                      stream=_stream(stream) if stream is not None else None)


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
