"""From a launch's specialisation to its generated CUDA and its cubin: the cache keys, the
disk lookups, and the compiles they save. Needs no GPU: the cubin compiler comes in a
:class:`Toolchain` (NVRTC through CuPy at run time, a stand-in or nvcc in tests).

Keys cannot collide (docs/compiler.md, Runtime):
- generated source: the kernel's module, qualified name, file:line and source text digest, the
  specialisation (argument kinds, constexprs with their types, ``num_warps``), the compiler
  version, and the fingerprints of every Python value the front end read (globals, closure
  values, module attributes). The reads are only known after a compile, so a small manifest under
  the first part lists them; a lookup re-resolves them and looks for the entry keyed by both.
- cubin: the generated source, the target architecture, the NVRTC version and compile options,
  and the compiler version (the source includes our header).

An entry that fails a check (a field of the wrong type or out of range, a cubin cut short) is a
``CacheWarning`` and a rebuild, never an error of the launch.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.errors import TileLangError
from tile_lang.launch import LaunchedKernel
from tile_lang.reads import Read, ReadKind, current, source_digest

from tile_lang_cupy.cache import DiskCache, compiler_version, digest

if TYPE_CHECKING:
    from tile_lang.compiler.spec import Spec

_FORMAT = "tile_lang-cache-2"  # bump when what an entry holds changes


@dataclass(frozen=True)
class Toolchain:
    """What a cubin depends on besides its source, and the compiler that makes one."""

    arch: str  # e.g. "90"
    version: str  # of NVRTC
    options: tuple[str, ...]
    compile: Callable[[str, str], bytes]  # (source, kernel name) -> cubin

    def key(self) -> str:
        return f"sm_{self.arch}|nvrtc {self.version}|{' '.join(self.options)}"


class CorruptEntry(TileLangError):
    """A disk-cache entry that does not read back; the cache drops it and compiles again."""


@dataclass(frozen=True)
class Generated:
    """A specialisation's generated CUDA and how to launch it (a generated-source entry)."""

    name: str
    source: str
    threads: int
    smem_bytes: int
    params: tuple[str | None, ...]  # per parameter: None for a pointer, else a NumPy type string
    map_bytes: int  # global memory per program for bulk copies' tensor maps, passed last

    @classmethod
    def from_json(cls, data: dict[str, Any], arity: int, smem_limit: int | None) -> Generated:
        """The entry of a kernel with ``arity`` runtime parameters on a device giving a block at
        most ``smem_limit`` bytes of shared memory (None: unknown); a CorruptEntry saying what is
        wrong if a field is missing, of the wrong type or out of range."""
        name, source, threads, smem, params, map_bytes = (data.get(f.name) for f in fields(cls))
        if not (isinstance(name, str) and name.isidentifier() and isinstance(source, str)
                and isinstance(params, list) and all(p is None or _scalar_type(p) for p in params)):
            raise CorruptEntry("a field is missing or of the wrong type")
        if len(params) != arity:
            raise CorruptEntry(f"{len(params)} parameters, the kernel has {arity}")
        if not (type(threads) is int and 32 <= threads <= 1024 and threads % 32 == 0):
            raise CorruptEntry(f"threads {threads!r} is not a multiple of 32 from 32 to 1024")
        if not (type(smem) is int and 0 <= smem <= (smem_limit if smem_limit is not None else smem)):
            raise CorruptEntry(f"smem_bytes {smem!r} is not from 0 to the device's {smem_limit}")
        if not (type(map_bytes) is int and map_bytes >= 0):
            raise CorruptEntry(f"map_bytes {map_bytes!r} is not a size")
        return cls(name, source, threads, smem, tuple(params), map_bytes)


def _scalar_type(text: object) -> bool:
    """Whether ``text`` is a NumPy type string of a bool, integer or float (how a scalar is packed)."""
    try:
        return isinstance(text, str) and np.dtype(text).kind in "biuf"
    except TypeError:
        return False


def source_key(kernel: LaunchedKernel, spec_text: str) -> str:
    """The key of everything a compile depends on that is known before compiling."""
    fn = kernel.fn
    return digest(_FORMAT, fn.__module__, fn.__qualname__, f"{kernel.filename}:{kernel.lineno}",
                  source_digest(fn), spec_text, compiler_version())


def generated(kernel: LaunchedKernel, spec: Callable[[], Spec], spec_text: str | None, disk: DiskCache,
              smem_limit: int | None = None) -> Generated:
    """The generated CUDA for the specialisation ``spec()`` (called only to compile: building a
    ``Spec`` imports the compiler) described by ``spec_text`` (None: no stable key, nothing is
    cached): from the disk cache when an entry matches the kernel and every value it read, else
    from the compiler (and stored, when every read can be found again and its blocks fit in
    ``smem_limit`` bytes of shared memory: so a stored entry above the device's limit is corrupt)."""
    front = source_key(kernel, spec_text) if spec_text is not None else None
    if front is not None:
        found = _cached(kernel, front, disk, smem_limit)
        if found is not None:
            return found
    from tile_lang.compiler import compile_ir
    from tile_lang_cupy.codegen import generate

    specialisation = spec()
    fn = compile_ir(kernel, specialisation)
    cuda = generate(fn)
    params = tuple(None if a.dtype.is_pointer else a.dtype.numpy.str for a in specialisation.args)
    result = Generated(cuda.name, cuda.source, cuda.threads, cuda.smem_bytes, params, cuda.map_bytes)
    fingerprints = [r.fingerprint for r in fn.reads]
    fits = smem_limit is None or cuda.smem_bytes <= smem_limit  # else the launch fails: OutOfResources
    if front is not None and fits and all(r.owner is not None for r in fn.reads) and None not in fingerprints:
        paths = _paths(fn.reads)
        entry = _entry_key(front, paths, fingerprints)
        disk.write(f"{entry}.cu", cuda.source.encode())
        disk.write_json(f"{entry}.json", asdict(result))
        disk.write_json(f"{front}.reads.json", {"reads": paths})
    return result


def _cached(kernel: LaunchedKernel, front: str, disk: DiskCache, smem_limit: int | None) -> Generated | None:
    manifest = disk.read_json(f"{front}.reads.json")
    if manifest is None:
        return None
    reads = _reads(manifest.get("reads"))
    if reads is None:
        disk.corrupt(f"{front}.reads.json", "no valid 'reads' list")
        return None
    fingerprints = [current(r, kernel.fn) for r in reads]
    if None in fingerprints:
        return None
    entry = _entry_key(front, _paths(reads), fingerprints)
    data = disk.read_json(f"{entry}.json")
    if data is None:
        return None
    try:
        return Generated.from_json(data, len(kernel.runtime_params), smem_limit)
    except CorruptEntry as exc:
        disk.corrupt(f"{entry}.json", str(exc))
        return None


def _paths(reads: tuple[Read, ...] | list[Read]) -> list[list[str | None]]:
    return [[r.kind.value, r.owner, r.name] for r in reads]


def _reads(paths: Any) -> list[Read] | None:
    """The reads a manifest lists (without fingerprints), or None if it is malformed."""
    if not isinstance(paths, list):
        return None
    kinds = {k.value: k for k in ReadKind}
    out = []
    for p in paths:
        if not (isinstance(p, list) and len(p) == 3 and p[0] in kinds and isinstance(p[1], str)
                and isinstance(p[2], str)):
            return None
        out.append(Read(kinds[p[0]], p[1], p[2], None))
    return out


def _entry_key(front: str, paths: list[list[str | None]], fingerprints: list[str | None]) -> str:
    return digest(front, json.dumps(paths), *(f or "" for f in fingerprints))


def cubin(result: Generated, toolchain: Toolchain, disk: DiskCache, fresh: bool = False) -> tuple[bytes, bool]:
    """The cubin of ``result`` and whether it came from the cache: the cached one (unless
    ``fresh``: it failed to load), else a new compile, stored. The bytes returned are the bytes
    checked: the module is loaded from them, never from the file again (it could be swapped)."""
    name = f"{digest(result.source, toolchain.key(), compiler_version())}.cubin"
    if not fresh:
        data = disk.read(name)
        if data is not None:
            if looks_like_cubin(data):
                return data, True
            disk.corrupt(name, "not a complete ELF file")
    elif disk.path(name) is not None:
        disk.corrupt(name, "the CUDA driver could not load it")
    data = toolchain.compile(result.source, result.name)
    disk.write(name, data)
    return data, False


def looks_like_cubin(data: bytes) -> bool:
    """A 64-bit little-endian ELF file whose section header table lies inside it (a cubin cut
    short before its end fails this; one cut within its last bytes fails to load, and is rebuilt
    then). NVRTC's cubins, as CuPy returns them, end a byte before their program header table
    does (seen on the H200 with CUDA 13), so that table is not checked."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return False
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    end: int = shoff + shentsize * shnum
    return end <= len(data)
