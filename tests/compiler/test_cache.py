"""The CUDA backend's compile caches, without a GPU: keys that cannot collide (same-named kernels,
module globals and attributes, constexprs equal under ``==``, a file edited after import) and
cache faults that warn once and fall back (unusable or untrusted directory, truncated cubin,
tampered JSON, FIFO entries). NVRTC is replaced by a recording stand-in (or nvcc); generated code
is checked against a fresh compile, and run on the CPU emulator against NumPy where it matters."""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import json
import os
import re
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
import types
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.noop_backend import DeviceArray, NoopBackend
from tile_lang import Constexpr, Pointer, constexpr, diskcache, dtypes, registry
from tile_lang.buffer import Buffer
from tile_lang.kernel import Kernel, Launch
from tile_lang.launch_cache import typed
from tile_lang.reads import fingerprint
from tile_lang_cupy import artifacts, cache
from tile_lang_cupy.artifacts import Generated, Toolchain
from tile_lang_cupy.codegen.ctypes_ import c_string
from tile_lang_cupy.launch import arg_key, launch_spec, spec_text
from tile_lang_cupy.memory import Foreign

from tests.compiler import cache_constants
from tests.compiler.conftest import NVCC, nvcc_cubin
from tests.compiler.emulator import EmuBackend, build
from tests.test_launch import launch_untyped

SCALE = 2.0
N = 300
EMULATOR = EmuBackend().unavailable_reason()
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    """No cache fault may hang a launch (a FIFO opened for reading blocks forever)."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError("cache test took over 60 s: something blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def fake_cubin(source: str) -> bytes:
    """A well-formed 64-bit ELF file carrying ``source`` (what the stand-in 'compiles' to)."""
    payload = source.encode()
    shoff = 64 + len(payload)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)  # 64-bit, little-endian
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 1, 0)
    return header + payload + bytes(64)


class FakeNvrtc:
    """Stands in for NVRTC: records each compile."""

    def __init__(self) -> None:
        self.sources: list[str] = []
        self.toolchain = Toolchain("90", "12.8", ("-std=c++17", "-arch=sm_90"), self)

    def __call__(self, source: str, name: str) -> bytes:
        self.sources.append(source)
        return fake_cubin(source)


@pytest.fixture
def front_end(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of kernels the compiler front end ran on."""
    import tile_lang.compiler

    seen: list[str] = []
    original = tile_lang.compiler.compile_ir

    def counting(kernel: Any, spec: Any, verify_each: bool = False) -> Any:
        seen.append(kernel.name)
        return original(kernel, spec, verify_each)

    monkeypatch.setattr(tile_lang.compiler, "compile_ir", counting)
    return seen


def device(array: np.ndarray[Any, Any]) -> Buffer[Any]:
    """A host array posing as device memory (the cache reads only its dtype and address)."""
    return Buffer(registry.get("numpy"), Foreign(array.ctypes.data, array), dtypes.from_numpy(array.dtype),
                  array.shape)


def compile_launch(kernel: Kernel[Any], disk: cache.DiskCache, nvrtc: FakeNvrtc, args: tuple[Any, ...],
                   **constexprs: Any) -> Generated:
    """What the CUDA backend's ``load`` does for a launch, up to loading the cubin."""
    return compile_on(kernel, disk, nvrtc, args, None, constexprs)


def compile_on(kernel: Kernel[Any], disk: cache.DiskCache, nvrtc: FakeNvrtc, args: tuple[Any, ...],
               smem_limit: int | None, constexprs: dict[str, Any]) -> Generated:
    """``compile_launch`` on a device giving a block ``smem_limit`` bytes of shared memory."""
    launch = Launch(kernel, (1, 1, 1), args, constexprs)
    keys = tuple(arg_key(a) for a in args)
    gen = artifacts.generated(kernel, lambda: launch_spec(launch), spec_text(keys, launch), disk, smem_limit)
    data, _ = artifacts.cubin(gen, nvrtc.toolchain, disk)
    assert data == fake_cubin(gen.source)  # the module for exactly this source
    return gen


def fresh_source(kernel: Kernel[Any], args: tuple[Any, ...], **constexprs: Any) -> str:
    """The CUDA a compile without any cache generates."""
    from tile_lang.compiler.frontend import build as front_end
    from tile_lang.compiler.passes import run_passes
    from tile_lang_cupy.codegen import generate

    spec = launch_spec(Launch(kernel, (1, 1, 1), args, constexprs))
    return generate(run_passes(front_end(kernel, spec))).source


def emulate(gen: Generated, kernel: Kernel[Any], x: np.ndarray[Any, Any], **constexprs: Any) -> np.ndarray[Any, Any]:
    """Run generated code of a (x, out, n) kernel on the CPU emulator; out starts as NaN."""
    from tile_lang_cupy.codegen.ctypes_ import ctype

    out = np.full_like(x, np.nan)
    args = (device(x), device(out), N)
    spec = launch_spec(Launch(kernel, (1, 1, 1), args, constexprs))
    entry = ctypes.CDLL(str(build(gen.source, gen.name, [ctype(a.dtype) for a in spec.args]))).tl_emu_launch
    entry.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
    keep = [ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int32(N)]
    argv = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.pointer(k), ctypes.c_void_p) for k in keep])
    entry(-(-N // constexprs["BLOCK"]), 1, 1, gen.threads, argv)
    return out


def make_scaler(scale: float) -> Kernel[...]:
    """Kernels of one name, file and line that differ only in a closure value."""
    @tl.kernel
    def scaled(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)

    return scaled


@tl.kernel
def global_scaled(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * SCALE + cache_constants.OFFSET, mask=mask)


@tl.kernel
def filled(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr, C: constexpr,
           F: Constexpr[float]) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.0 + (C + F), mask=mask)


# int and bool pass an int constexpr's check, int and float a float one's: all must differ
EQUAL_CONSTEXPRS = [(1, 4), (True, 4), (4, 4), (1, 4.0), (1, 0.0), (1, -0.0)]
SPEC = {"BLOCK": 64, "C": 1, "F": 0.5}


def buffers() -> tuple[np.ndarray[Any, Any], tuple[Any, ...]]:
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    out = np.full_like(x, np.nan)
    return x, (device(x), device(out), N)


@pytest.fixture
def disk(tmp_path: Path) -> cache.DiskCache:
    return cache.DiskCache.open(tmp_path / "cache")


# ---------------------------------------------------------------- keys


def test_fingerprints_tell_apart_values_equal_under_eq() -> None:
    values = [4, 4.0, True, 1, 0.0, -0.0, (1, 2), (1.0, 2.0), "4", None]
    assert len({fingerprint(v) for v in values}) == len(values)
    assert len({typed(v) for v in values}) == len(values)
    assert fingerprint(object()) is None  # its repr shows only an address: never keyed on disk


def test_scalars_annotated_with_a_dtype_key_and_compile_as_it() -> None:
    """A parameter annotated ``tl.int64`` is checked into a NumPy scalar: keyed and compiled as
    that dtype, not by the value's width as a plain int is."""
    from tile_lang.compiler.spec import ArgSpec, argument_spec

    assert len({arg_key(v) for v in (5, np.int64(5), np.int32(5), np.int64(16), 0.5, np.float64(0.5))}) == 6
    assert argument_spec(np.int64(16)) == ArgSpec(dtypes.I64, divisible_by_16=True, nonnegative=True)
    assert argument_spec(np.float64(0.5)).dtype == dtypes.F64 and argument_spec(0.5).dtype == dtypes.F32


@pytest.mark.skipif(EMULATOR is not None, reason=str(EMULATOR))
def test_same_named_kernels_from_a_factory_get_their_own_code(disk: cache.DiskCache, front_end: list[str]) -> None:
    x, args = buffers()
    nvrtc = FakeNvrtc()
    kernels = {scale: make_scaler(scale) for scale in (2.0, 3.0)}
    for scale, kernel in kernels.items():
        gen = compile_launch(kernel, disk, nvrtc, args, BLOCK=128)
        assert gen.source == fresh_source(kernel, args, BLOCK=128)
        np.testing.assert_allclose(emulate(gen, kernel, x, BLOCK=128), x.astype(np.float64) * scale, rtol=1e-6)
    assert len(set(nvrtc.sources)) == 2 and front_end == ["scaled", "scaled"]
    # a later process (a new kernel object, a new cache handle) finds each one's own code
    again = cache.DiskCache.open(disk.root or Path())
    for scale in (3.0, 2.0):
        gen = compile_launch(make_scaler(scale), again, nvrtc, args, BLOCK=128)
        np.testing.assert_allclose(emulate(gen, kernels[scale], x, BLOCK=128), x.astype(np.float64) * scale,
                                   rtol=1e-6)
    assert len(nvrtc.sources) == 2 and len(front_end) == 2


@pytest.mark.skipif(EMULATOR is not None, reason=str(EMULATOR))
def test_a_changed_module_global_or_imported_constant_gives_new_code(
        disk: cache.DiskCache, front_end: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    x, args = buffers()
    nvrtc = FakeNvrtc()
    settings = [(2.0, 0.5), (3.0, 0.5), (3.0, -1.25), (2.0, 0.5)]  # the last was compiled before
    for scale, offset in settings:
        monkeypatch.setattr(sys.modules[__name__], "SCALE", scale)
        monkeypatch.setattr(cache_constants, "OFFSET", offset)
        gen = compile_launch(global_scaled, disk, nvrtc, args, BLOCK=64)
        assert gen.source == fresh_source(global_scaled, args, BLOCK=64)
        expected = x.astype(np.float64) * scale + offset
        np.testing.assert_allclose(emulate(gen, global_scaled, x, BLOCK=64), expected, rtol=1e-6, atol=1e-6)
    assert len(front_end) == 3 and len(nvrtc.sources) == 3


def test_constexprs_equal_under_eq_get_distinct_entries(disk: cache.DiskCache, front_end: list[str]) -> None:
    _, args = buffers()
    nvrtc = FakeNvrtc()
    keys = tuple(arg_key(a) for a in args)
    texts = {spec_text(keys, Launch(filled, (1, 1, 1), args, {"BLOCK": 64, "C": c, "F": f})) for c, f in EQUAL_CONSTEXPRS}
    assert len(texts) == len(EQUAL_CONSTEXPRS)
    for c, f in EQUAL_CONSTEXPRS * 2:  # the second round hits the disk cache
        gen = compile_launch(filled, disk, nvrtc, args, BLOCK=64, C=c, F=f)
        assert gen.source == fresh_source(filled, args, BLOCK=64, C=c, F=f)
    assert len(front_end) == len(EQUAL_CONSTEXPRS) and len(nvrtc.sources) == len(set(nvrtc.sources))


def test_fast_path_keys_constexprs_by_type_and_sign() -> None:
    backend = NoopBackend()
    registry.register(backend)
    src, dst = DeviceArray(np.dtype(np.float32), 1 << 20, (100,)), DeviceArray(np.dtype(np.float32), 2 << 20, (100,))
    with tl.backend("noop"):
        for c, f in EQUAL_CONSTEXPRS * 2:
            launch_untyped(filled, (1,), src, dst, 100, BLOCK=64, C=c, F=f)
    assert backend.runners == len(EQUAL_CONSTEXPRS)


def test_the_source_compiled_is_the_source_keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 disk: cache.DiskCache) -> None:
    """A kernel file edited while a process runs: the process keeps compiling (and keying) the text it
    read first; a new process compiles and keys the new text."""
    module = tmp_path / "edited_kernel.py"
    body = ("import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n@tl.kernel\n"
            "def edited(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:\n"
            "    offs = tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * {}, mask=offs < n)\n")
    module.write_text(body.format("2.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    _, args = buffers()
    nvrtc = FakeNvrtc()
    first = importlib.import_module("edited_kernel")
    before = compile_launch(first.edited, disk, nvrtc, args, BLOCK=64)
    module.write_text(body.format("7.0"))
    os.utime(module, ns=(1, 1))  # a different mtime, whatever the clock resolution
    same = compile_launch(first.edited, disk, nvrtc, args, BLOCK=64, )
    assert same.source == before.source and "2.0" in before.source
    monkeypatch.delitem(sys.modules, "edited_kernel")
    after = compile_launch(importlib.import_module("edited_kernel").edited, disk, nvrtc, args, BLOCK=64)
    assert "7.0" in after.source and "2.0" not in after.source
    monkeypatch.delitem(sys.modules, "edited_kernel")


# ---------------------------------------------------------------- file names in generated code

HOSTILE_NAMES = ['k" \n#warning X\n#define ZZ 1\n', 'back\\slash?? */ \x01\t"q"']
KERNEL_SOURCE = """import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.kernel
def named(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0 - 1.0, mask=mask)
"""


def load_kernel(path: Path) -> Kernel[Any]:
    """The kernel of ``KERNEL_SOURCE`` written to ``path`` and imported from there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(KERNEL_SOURCE)
    spec = importlib.util.spec_from_file_location("hostile_named_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel: Kernel[Any] = module.named
    return kernel


def c_unescape(literal: str) -> str:
    """The text of a C string literal as the preprocessor reads it (the escapes c_string writes)."""
    assert literal.startswith('"') and literal.endswith('"'), literal
    body = re.sub(r'\\([0-7]{3}|["\\?])', lambda m: chr(int(m[1], 8)) if len(m[1]) == 3 else m[1], literal[1:-1])
    return body.encode("latin-1").decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("name", ['plain.py', *HOSTILE_NAMES, 'caf\u00e9 \udcff.py'])
def test_file_names_are_escaped_in_generated_code(name: str) -> None:
    from tile_lang_cupy.codegen.emitter import line_directive

    for path in (f"/a/{name}/k.py", f"/a/{name}"):
        directive = line_directive(path, 7)
        assert directive.count("\n") == 0 and re.fullmatch(r'#line 7 "(?:[ -~])*"', directive), directive
        assert c_unescape(directive.removeprefix("#line 7 ")) == path


@pytest.mark.parametrize("hostile", HOSTILE_NAMES)
def test_a_kernel_file_named_to_inject_directives_compiles_as_written(tmp_path: Path, hostile: str) -> None:
    """A kernel imported from a file whose directory and name hold a quote, a backslash, newlines,
    ``*/`` and directives: its generated CUDA has no line that is not ours, every ``#line`` names
    the file exactly, and (on the emulator) it builds and computes what the reference does."""
    path = tmp_path / f"dir {hostile} */ \\ end" / f"{hostile}.py"
    kernel = load_kernel(path)
    x, args = buffers()
    source = fresh_source(kernel, args, BLOCK=128)
    lines = source.splitlines()
    assert lines[0] == f"// Generated by tile_lang from {c_string(str(path))}:5; do not edit."
    directives = [ln.strip() for ln in lines if ln.lstrip().startswith("#")]
    assert directives and all(re.fullmatch(r'#(define TL_\w+ 1|include "[\w.]+"|pragma unroll( \d+)?|line \d+ "[ -~]*")', d)
                              for d in directives), directives
    assert {c_unescape(d.split(" ", 2)[2]) for d in directives if d.startswith("#line")} == {str(path)}
    if EMULATOR is not None:
        pytest.skip(EMULATOR)
    expected = x.astype(np.float64) * 3.0 - 1.0
    registry.register(EmuBackend())
    for backend in ("numpy", "emu"):
        with tl.backend(backend):
            out = tl.to_device(np.full(N, np.nan, np.float32))
            kernel[(-(-N // 128),)](tl.to_device(x), out, N, BLOCK=128)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- faults


def cache_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, cache.CacheWarning)]


def check_falls_back(disk: cache.DiskCache, record: list[warnings.WarningMessage], expected: int = 1) -> None:
    """Two launches of one specialisation: right code both times, ``expected`` warnings in all."""
    _, args = buffers()
    nvrtc = FakeNvrtc()
    for _ in range(2):
        gen = compile_launch(filled, disk, nvrtc, args, **SPEC)
        assert gen.source == fresh_source(filled, args, **SPEC)
    assert len(cache_warnings(record)) == expected, cache_warnings(record)


def test_an_unusable_directory_compiles_in_memory_with_one_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "file" / "cache"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        disk = cache.open_cache()
        assert cache.open_cache() is disk and disk.root is None
        check_falls_back(disk, record)
    assert str(tmp_path / "file" / "cache") in cache_warnings(record)[0]


def test_failing_writes_warn_once_and_compile_in_memory(disk: cache.DiskCache, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(diskcache, "write_atomic", refuse)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        check_falls_back(disk, record)
    assert "Permission denied" in cache_warnings(record)[0]


@pytest.mark.skipif(ROOT, reason="root can write into a read-only directory")
def test_a_read_only_directory_warns_once(disk: cache.DiskCache) -> None:
    assert disk.root is not None
    disk.root.chmod(0o500)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            check_falls_back(disk, record)
    finally:
        disk.root.chmod(0o700)


def populated(disk: cache.DiskCache) -> tuple[Path, Path, Path]:
    """Fill the cache for one specialisation: its manifest, entry JSON and cubin."""
    _, args = buffers()
    compile_launch(filled, disk, FakeNvrtc(), args, **SPEC)
    assert disk.root is not None
    cubin, = disk.root.glob("*.cubin")
    manifest, = disk.root.glob("*.reads.json")
    entry, = (p for p in disk.root.glob("*.json") if p != manifest)
    return manifest, entry, cubin


def rebuilds(disk: cache.DiskCache, compiles: int, front_ends: int, front_end: list[str]) -> str:
    """Launch once more: the right code, the given compiles, one warning; its message."""
    _, args = buffers()
    nvrtc = FakeNvrtc()
    before = len(front_end)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        gen = compile_launch(filled, disk, nvrtc, args, **SPEC)
    assert gen.source == fresh_source(filled, args, **SPEC)
    assert len(nvrtc.sources) == compiles and len(front_end) - before == front_ends
    messages = cache_warnings(record)
    assert len(messages) == 1, messages
    return messages[0]


def test_a_truncated_cubin_is_rebuilt(disk: cache.DiskCache, front_end: list[str]) -> None:
    _, _, cubin = populated(disk)
    whole = cubin.read_bytes()
    cubin.write_bytes(whole[: len(whole) // 2])
    assert "corrupt" in rebuilds(disk, compiles=1, front_ends=0, front_end=front_end)
    assert cubin.read_bytes() == whole


@pytest.mark.parametrize("text", ['{"name": "filled"}', "{not json", "[1, 2]", '{"name": 1, "source": "x", '
                                  '"threads": 128, "smem_bytes": 0, "params": []}'])
def test_a_tampered_entry_is_rebuilt(disk: cache.DiskCache, front_end: list[str], text: str) -> None:
    _, entry, _ = populated(disk)
    entry.write_text(text)
    assert "corrupt" in rebuilds(disk, compiles=0, front_ends=1, front_end=front_end)
    assert "source" in entry.read_text()


OUT_OF_RANGE = [("threads", 0), ("threads", 33), ("threads", 2048), ("threads", True), ("threads", 128.0),
                ("smem_bytes", -1), ("smem_bytes", "0"), ("map_bytes", -128), ("name", "filled(); x"),
                ("params", [None, None]), ("params", [None, None, "<V2"]), ("params", [None, None, "garbage"]),
                ("params", [None, None, ["<i4"]])]


@pytest.mark.parametrize(("field", "value"), OUT_OF_RANGE)
def test_an_entry_with_a_field_out_of_range_is_rebuilt(disk: cache.DiskCache, front_end: list[str], field: str,
                                                       value: Any) -> None:
    """Fields of the right JSON type but values no compile gives (a block of 33 threads, negative
    shared memory, a parameter count or type the kernel does not have) are a corrupt entry too."""
    _, entry, _ = populated(disk)
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps({**data, field: value}))
    assert "corrupt" in rebuilds(disk, compiles=0, front_ends=1, front_end=front_end)
    assert json.loads(entry.read_text()) == data


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_truncated_or_too_deep_entry_is_rebuilt(disk: cache.DiskCache, front_end: list[str], cut: int) -> None:
    manifest, entry, _ = populated(disk)
    text = entry.read_text()
    entry.write_text(text[: len(text) * cut // 4] if cut < 3 else "[" * 100_000)
    assert "corrupt" in rebuilds(disk, compiles=0, front_ends=1, front_end=front_end)
    manifest.write_bytes(b"\xff\xfe{")  # not UTF-8
    assert "corrupt" in rebuilds(disk, compiles=0, front_ends=1, front_end=front_end)


def test_shared_memory_above_the_devices_limit(disk: cache.DiskCache, front_end: list[str]) -> None:
    """A compile needing more shared memory than the device gives is not stored (its launch fails
    with OutOfResources), so an entry above the limit is corrupt: rebuilt, not launched."""
    _, args = buffers()
    nvrtc = FakeNvrtc()
    assert disk.root is not None
    needed = compile_launch(filled, cache.DiskCache(None), nvrtc, args, **SPEC).smem_bytes
    compile_on(filled, disk, nvrtc, args, needed - 1, SPEC)
    assert not list(disk.root.glob("*.json"))
    _, entry, _ = populated(disk)
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps({**data, "smem_bytes": 232449}))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        gen = compile_on(filled, disk, nvrtc, args, 232448, SPEC)
    assert gen.smem_bytes == needed and "smem_bytes 232449" in cache_warnings(record)[0]
    assert json.loads(entry.read_text()) == data


class FakeModule:
    """Stands in for ``cupy.cuda.function.Module``: records what it loads; refuses ``refused``."""

    loaded: list[bytes] = []
    refused: bytes = b""

    def load(self, cubin: bytes) -> None:
        if cubin == self.refused:
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")
        self.loaded.append(cubin)

    def get_function(self, name: str) -> tuple[str, bytes]:
        return name, self.loaded[-1]


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch) -> type[FakeModule]:
    """``import cupy`` in the launch's module loading gets the stand-in (no GPU here)."""
    module = type("Module", (FakeModule,), {"loaded": [], "refused": b""})
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(function=types.SimpleNamespace(Module=module)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return module


def test_the_module_is_loaded_from_the_bytes_checked(disk: cache.DiskCache, fake_cupy: type[FakeModule],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A cubin swapped on disk after its check is never what runs: the module is loaded from the
    bytes read and checked, not from the file by path."""
    from tile_lang_cupy import launch

    _, entry, cubin = populated(disk)
    gen = Generated.from_json(json.loads(entry.read_text()), 3, None)
    checked = cubin.read_bytes()
    read = artifacts.cubin

    def swapped_after_reading(*args: Any, **kwargs: Any) -> tuple[bytes, bool]:
        found = read(*args, **kwargs)
        cubin.write_bytes(fake_cubin("swapped"))
        return found

    monkeypatch.setattr(artifacts, "cubin", swapped_after_reading)
    nvrtc = FakeNvrtc()
    loaded: object = launch._function(gen, nvrtc.toolchain, disk, artifacts.cubin(gen, nvrtc.toolchain, disk))
    assert loaded == (gen.name, checked)
    assert fake_cupy.loaded == [checked] and nvrtc.sources == []


def test_a_cubin_the_driver_refuses_is_rebuilt(disk: cache.DiskCache, fake_cupy: type[FakeModule]) -> None:
    from tile_lang_cupy import launch

    _, entry, cubin = populated(disk)
    gen = Generated.from_json(json.loads(entry.read_text()), 3, None)
    whole = cubin.read_bytes()
    fake_cupy.refused = whole[:100] + bytes([whole[100] ^ 1]) + whole[101:]  # passes our check, corrupt inside
    cubin.write_bytes(fake_cupy.refused)
    nvrtc = FakeNvrtc()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        loaded: object = launch._function(gen, nvrtc.toolchain, disk, artifacts.cubin(gen, nvrtc.toolchain, disk))
    assert loaded == (gen.name, whole)
    assert "could not load it" in cache_warnings(record)[0] and cubin.read_bytes() == whole


def test_threads_launching_a_new_specialisation_at_once_load_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tile_lang_cupy import launch

    loads: list[str | None] = []

    def slow_load(launch_: Launch, text: str | None, capability: int) -> Any:
        loads.append(text)
        time.sleep(0.05)  # a compile: the other threads arrive meanwhile
        return object()

    monkeypatch.setattr(launch, "load", slow_load)
    monkeypatch.setattr(launch, "compute_capability", lambda: 90)
    kernels = launch.KernelCache()
    _, args = buffers()
    start = threading.Barrier(8)

    def get() -> Any:
        start.wait()
        return kernels.get(Launch(filled, (1, 1, 1), args, dict(SPEC)), 0)

    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lambda _: get(), range(8)))
    assert len(loads) == 1 and all(f is found[0] for f in found)


def test_a_tampered_manifest_is_rebuilt(disk: cache.DiskCache, front_end: list[str]) -> None:
    manifest, _, _ = populated(disk)
    manifest.write_text('{"reads": [["name", "", 3]]}')
    assert "corrupt" in rebuilds(disk, compiles=0, front_ends=1, front_end=front_end)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_fifo_entry_is_never_opened(disk: cache.DiskCache, front_end: list[str], which: int) -> None:
    path = populated(disk)[which]
    path.unlink()
    os.mkfifo(path)
    message = rebuilds(disk, compiles=int(which == 2), front_ends=int(which < 2), front_end=front_end)
    assert "not a regular file" in message and str(path) in message
    assert stat.S_ISREG(os.lstat(path).st_mode)


def test_a_group_writable_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o775)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        disk = cache.DiskCache.open(root)
        assert disk.root is None
        check_falls_back(disk, record)
    assert "writable by group or others" in cache_warnings(record)[0] and not list(root.iterdir())


def swappable_root(tmp_path: Path, layout: str) -> Path:
    """A cache root that someone else could replace, by ``layout``."""
    safe = tmp_path / "safe"
    safe.mkdir(mode=0o700, parents=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777 if layout != "group-writable grandparent" else 0o775)
    if layout == "symlinked root":
        (tmp_path / "link").symlink_to(safe)
        return tmp_path / "link"
    if layout == "link through a world-writable directory":
        (shared / "link").symlink_to(safe)
        return shared / "link" / "cache"
    return shared / "sub" / "cache"


@pytest.mark.parametrize(("layout", "message"), [
    ("symlinked root", "is a symbolic link"),
    ("world-writable parent", "writable by group or others and not sticky (mode 777)"),
    ("group-writable grandparent", "writable by group or others and not sticky (mode 775)"),
    ("link through a world-writable directory", "writable by group or others and not sticky (mode 777)")])
def test_a_root_someone_else_could_swap_is_refused(tmp_path: Path, layout: str, message: str) -> None:
    root = swappable_root(tmp_path, layout)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        disk = cache.DiskCache.open(root)
        assert disk.root is None
        check_falls_back(disk, record)
    assert message in cache_warnings(record)[0], cache_warnings(record)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # nothing stored (an empty folder may be made)


def test_a_root_under_a_sticky_directory_is_used(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp: others can add names here, not replace ours
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        disk = cache.DiskCache.open(shared / "cache")
        assert disk.root == shared / "cache"
        check_falls_back(disk, record, expected=0)
    assert stat.S_IMODE(os.stat(shared / "cache").st_mode) == 0o700


def test_the_root_is_checked_each_time_it_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory above the root made writable by others after the first open: the next open
    refuses the cache, warning once, and this process does not use it again."""
    parent = tmp_path / "parent"
    monkeypatch.setenv(cache.ENV_VAR, str(parent / "cache"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.open_cache().root == parent / "cache"
        parent.chmod(0o777)
        refused = cache.open_cache()
        parent.chmod(0o755)
        assert refused.root is None and cache.open_cache() is refused
    messages = cache_warnings(record)
    assert len(messages) == 1 and str(parent) in messages[0], messages


def test_keys_of_file_names_that_are_not_utf8() -> None:
    assert cache.digest("/k/\udcff.py") == cache.digest(b"/k/\xff.py") != cache.digest("/k/\udcfe.py")


def test_the_emulator_and_fuzzer_caches_are_private(tmp_path: Path) -> None:
    """The test tools' caches in $TMPDIR hold libraries they load and kernels they import: each is
    a per-user directory made mode 700, and one another user could fill is refused."""
    from tests.compiler import emulator
    from tests.fuzz import runner

    for folder in (emulator.CACHE, runner.KERNEL_DIR):
        assert folder.name.endswith(f"-{os.getuid()}")
    made = emulator.private_dir(tmp_path / "new" / "cache")
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o700
    for layout in ("symlinked root", "world-writable parent"):
        root = swappable_root(tmp_path / layout.replace(" ", "_"), layout)
        with pytest.raises(RuntimeError, match="not loading anything from it"):
            emulator.private_dir(root)
    made.chmod(0o777)
    with pytest.raises(RuntimeError, match="writable by group or others"):
        emulator.private_dir(made)


@pytest.mark.skipif(not ROOT, reason="giving a directory to another user needs root")
def test_a_directory_or_entry_of_another_user_is_refused(disk: cache.DiskCache, front_end: list[str],
                                                         tmp_path: Path) -> None:
    _, _, cubin = populated(disk)
    os.chown(cubin, 12345, -1)
    assert "owned by uid 12345" in rebuilds(disk, compiles=1, front_ends=0, front_end=front_end)
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 12345, -1)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.DiskCache.open(other).root is None
    assert "owned by uid 12345" in cache_warnings(record)[0]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_real_cubins_pass_the_check_and_truncated_ones_do_not(tmp_path: Path) -> None:
    _, args = buffers()
    done = nvcc_cubin(fresh_source(filled, args, **SPEC), "sm_90", tmp_path)
    assert done.returncode == 0, done.stderr
    cubin = next(tmp_path.glob("*.cubin")).read_bytes()
    assert artifacts.looks_like_cubin(cubin)
    # cut within its last bytes, a cubin passes (NVRTC's, through CuPy, end a byte short of their program
    # headers and load fine); one the driver refuses to load is rebuilt (tile_lang_cupy.launch._function)
    assert not any(artifacts.looks_like_cubin(cubin[:n]) for n in (0, 16, 64, len(cubin) // 2))


def test_the_cubin_key_has_the_toolchain(disk: cache.DiskCache) -> None:
    _, args = buffers()
    nvrtc = FakeNvrtc()
    gen = compile_launch(filled, disk, nvrtc, args, **SPEC)
    base = nvrtc.toolchain
    for other in (replace(base, version="13.0"), replace(base, options=(*base.options, "-G")), replace(base, arch="100")):
        _, cached = artifacts.cubin(gen, other, disk)
        assert not cached
    assert disk.root is not None
    assert len(nvrtc.sources) == 4 and len(list(disk.root.glob("*.cubin"))) == 4


WARM_SCRIPT = """
import sys, warnings
from pathlib import Path
import numpy as np
warnings.simplefilter("error")
from tile_lang import dtypes, registry
from tile_lang.buffer import Buffer
from tile_lang.kernel import Launch
from tile_lang_cupy import artifacts, cache
from tile_lang_cupy.launch import arg_key, launch_spec, spec_text
from tile_lang_cupy.memory import Foreign
from tests.compiler.kernels import add_kernel
x = np.zeros(256, np.float32)
buf = Buffer(registry.get("numpy"), Foreign(x.ctypes.data, x), dtypes.F32, x.shape)
launch = Launch(add_kernel, (1, 1, 1), (buf, buf, buf, 256), {"BLOCK": 256})
compiles = []
toolchain = artifacts.Toolchain("90", "12.8", (), lambda s, n: compiles.append(s) or bytes.fromhex(sys.argv[2]))
disk = cache.DiskCache.open(Path(sys.argv[1]))
text = spec_text(tuple(map(arg_key, launch.args)), launch)
gen = artifacts.generated(add_kernel, lambda: launch_spec(launch), text, disk)
artifacts.cubin(gen, toolchain, disk)
print(len(compiles), int("tile_lang.compiler" in sys.modules))
"""


def test_a_warm_cache_in_a_new_process_imports_no_compiler(tmp_path: Path) -> None:
    """The keys are computed without the compiler: a warm lookup in a new process never imports it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, "-c", WARM_SCRIPT, str(tmp_path / "c"), fake_cubin("x").hex()]
    runs = [subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)
            for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["1", "1"], ["0", "0"]], [r.stderr[-2000:] for r in runs]
