"""A CPU stand-in for the GPU: the CUDA the compiler generates, built with g++ against a small
CUDA-on-CPU header (``cuda_on_cpu.h``) and run with one std::thread per CUDA thread.

It runs the generated code's indexing, shared-memory staging, barriers and warp shuffles for
real, so the differential tests can run without a GPU:
``pytest -p tests.compiler.emulator --tile-backend=emu tests/numpy_backend``. It cannot say
anything about PTX-level behaviour (tensor-core rounding, memory ordering): PTX ``atom``
instructions are rewritten into CPU compare-and-swap loops (f32 adds flushing subnormals, as the
GPU's), other inline PTX does not build, and the approximate units (MUFU: ex2, lg2, rcp, rsqrt,
sin, cos) round faithfully, not correctly, so exact comparisons of their results fail here too.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tile_lang import dtypes, registry
from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, argument_spec
from tile_lang.diskcache import private_directory
from tile_lang.dtypes import DType
from tile_lang.kernel import Launch

HERE = Path(__file__).resolve().parent
CUDA_INCLUDE = Path("/usr/local/cuda/include")
CXX = shutil.which("g++")
CACHE = Path(tempfile.gettempdir()) / f"tile_lang_emu-{os.getuid()}"  # per user: what it holds is loaded
NAME = "emu"

_ATOM = re.compile(
    r'asm volatile\("atom\.global\.\w+\.\w+\.(?P<op>\w+)\.(?:noftz\.)?(?P<type>\w+) %0, \[%1\], %2(?:, %3)?;" '
    r': "=\w"\((?P<old>[^()]*(?:\([^()]*\))?[^()]*)\) : "l"\((?P<ptr>.*?)\), "\w"\((?P<a>.*?)\)'
    r'(?:, "\w"\((?P<b>.*?)\))? : "memory"\);')
_UPDATES = {"add": "o + a", "max": "o > a ? o : a", "min": "o < a ? o : a", "and": "o & a", "or": "o | a",
            "xor": "o ^ a", "exch": "a"}


# Hopper's vector add (``atom...add.v4.f32 {%0, ..}, [%4], {%5, ..}``): each element atomically
_VATOM = re.compile(
    r'asm volatile\("atom\.global\.\w+\.\w+\.add\.(?:noftz\.)?v\d\.(?P<type>\w+) \{[^}]*\}, \[%\d+\], \{[^}]*\};" '
    r': (?P<olds>.*?) : "l"\((?P<ptr>.*?)\), (?P<vals>"\w"\(.*?\)) : "memory"\);')


# ``red`` (an atomic whose old values nothing reads): the same updates, no old value
_RED = re.compile(
    r'asm volatile\("red\.global\.\w+\.\w+\.(?P<op>\w+)\.(?:noftz\.)?(?P<type>\w+) \[%0\], %1;" '
    r':: "l"\((?P<ptr>.*?)\), "\w"\((?P<a>.*?)\) : "memory"\);')
_VRED = re.compile(
    r'asm volatile\("red\.global\.\w+\.\w+\.add\.(?:noftz\.)?v\d\.(?P<type>\w+) \[%0\], \{[^}]*\};" '
    r':: "l"\((?P<ptr>.*?)\), (?P<vals>"\w"\(.*?\)) : "memory"\);')


def _operands(text: str) -> list[str]:
    """The expressions of a list of asm operands ``"=f"(x), "f"(tl::bitcast<T>(y[k]))``."""
    out, depth, start = [], 0, None
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
            if depth == 1:
                start = i + 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                out.append(text[start:i])
    return out


def _vector_atomic(match: re.Match[str]) -> str:
    values = _operands(match.group("vals"))
    olds: list[str | None] = list(_operands(match.group("olds"))) if "olds" in match.groupdict() else [None] * len(values)
    ptr = match.group("ptr")
    updates = " ".join(_update("add", match.group("type"), old, f"(({ptr}) + {i})", a, None)
                       for i, (old, a) in enumerate(zip(olds, values)))
    return f"{{ {updates} }}"  # one statement, as the asm was (it may be an if's body)


def _atomic(match: re.Match[str]) -> str:
    """One PTX ``atom`` (or ``red``) as a CAS loop on the CPU (bitwise compare for cas, as the GPU)."""
    found = match.groupdict()
    return _update(found["op"], found["type"], found.get("old"), found["ptr"], found["a"], found.get("b"))


def _update(op: str, ptx_type: str, old: str | None, ptr: str, a: str, b: str | None) -> str:
    """The CPU statement of one element's atomic ``op`` on ``ptr``, its old value into ``old``
    (None: a ``red``, which keeps none)."""
    cell = {"s32": "int", "u32": "unsigned", "s64": "long long", "u64": "unsigned long long", "f32": "float",
            "f64": "double", "b32": "unsigned", "b64": "unsigned long long", "b16": "unsigned short",
            "f16": "__half", "bf16": "__nv_bfloat16"}[ptx_type]
    if op == "cas":
        update = f"tl_emu_bits<{cell}>(o) == tl_emu_bits<{cell}>(a) ? tl_emu_bits<{cell}>({b}) : o"
    elif ptx_type in ("f16", "bf16"):
        update = f"{cell}(float(o) + float(a))"
    elif ptx_type == "f32" and op == "add":  # atom/red .add.f32 flush subnormal inputs and sums (SASS: ADD.F32.FTZ.RN)
        update = "tl_emu::flush(tl_emu::flush(o) + tl_emu::flush(a))"
    else:
        update = _UPDATES[op]
    value = f"tl_emu_bits<{cell}>({a})" if ptx_type.startswith("b") or ptx_type in ("f16", "bf16") else f"({cell})({a})"
    keep = "" if old is None else f"{old} = tl_emu_bits<std::remove_reference_t<decltype({old})>>(was_); "
    return (f"{{ auto* cell_ = reinterpret_cast<{cell}*>({ptr}); const {cell} a = {value}; "
            f"const {cell} was_ = tl_emu::atomic_update(cell_, [&]({cell} o) -> {cell} {{ return {update}; }}); "
            f"(void)was_; {keep}}}")


def emulated_source(source: str) -> str:
    """The generated CUDA with PTX atomics replaced by CPU equivalents."""
    for pattern, emulate in ((_ATOM, _atomic), (_VATOM, _vector_atomic), (_RED, _atomic), (_VRED, _vector_atomic)):
        source = pattern.sub(emulate, source)
    return source


def _launcher(name: str, params: list[str]) -> str:
    unpack = ", ".join(f"*static_cast<{p}*>(args[{i}])" for i, p in enumerate(params))
    head = 'extern "C" void tl_emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned threads, void** args)'
    return f"\n{head} {{\n  tl_emu::run(tl_emu_dim3{{gx, gy, gz}}, threads, [&] {{ {name}({unpack}); }});\n}}\n"


def private_dir(path: Path) -> Path:
    """``path`` (created, mode 700, if missing), checked as the disk cache checks its root: ours
    alone, and no directory above it writable by others. Libraries found here are loaded and
    kernels imported, so a directory another user could fill is refused."""
    problem = private_directory(path)
    if problem is not None:
        raise RuntimeError(f"{path}: {problem}; not loading anything from it")
    return path


def build(source: str, name: str, params: list[str]) -> Path:
    """The shared library of one generated kernel (cached by source)."""
    from tile_lang_cupy.headers import INCLUDE_DIR

    text = emulated_source(source) + _launcher(name, params)
    headers = (HERE / "cuda_on_cpu.h").read_text() + "".join(p.read_text() for p in sorted(INCLUDE_DIR.glob("*.cuh")))
    digest = hashlib.sha256((text + headers).encode()).hexdigest()[:24]
    lib = private_dir(CACHE) / f"{digest}.so"
    if lib.exists():
        return lib
    src = CACHE / f"{digest}.{os.getpid()}.cpp"  # per process: two building one kernel do not share files
    src.write_text(text)
    assert CXX is not None
    cmd = [CXX, "-std=c++20", "-O1", "-w", "-fPIC", "-shared", "-pthread", f"-I{INCLUDE_DIR}", f"-I{CUDA_INCLUDE}",
           "-include", str(HERE / "cuda_on_cpu.h"), str(src), "-o", f"{src}.so"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"g++ failed on {src}:\n{done.stderr[:4000]}")
    os.replace(f"{src}.so", lib)
    return lib


SHARED_LIMIT = {80: 166912, 90: 232448}  # bytes of shared memory a block may opt into: A100, H100/H200


_SCALARS: dict[DType, Any] = {
    dtypes.I8: ctypes.c_int8, dtypes.I16: ctypes.c_int16, dtypes.I32: ctypes.c_int32, dtypes.I64: ctypes.c_int64,
    dtypes.U8: ctypes.c_uint8, dtypes.U16: ctypes.c_uint16, dtypes.U32: ctypes.c_uint32, dtypes.U64: ctypes.c_uint64,
    dtypes.F32: ctypes.c_float, dtypes.F64: ctypes.c_double, dtypes.BOOL: ctypes.c_bool}


class EmuBackend:
    """A tile_lang backend whose buffers are host arrays and whose kernels are the generated
    CUDA run on CPU threads."""

    name = NAME
    host = True  # host arrays, kernels on CPU threads

    def __init__(self, arch: int = 80) -> None:
        self.arch = arch  # the target the code is generated for (90: Hopper's wgmma, emulated)
        self.loaded: dict[Any, tuple[Any, int, int, int]] = {}
        self.last_source = ""  # the CUDA of the kernel compiled last (tests check what ran)

    def unavailable_reason(self) -> str | None:
        if CXX is None or not CUDA_INCLUDE.exists():
            return "the emulator needs g++ and the CUDA headers (/usr/local/cuda/include)"
        return None

    def _wrap(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        return Buffer(self, array, dtype, tuple(array.shape))

    def to_device(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        return self._wrap(np.ascontiguousarray(array).copy(), dtype)

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        return self._wrap(np.empty(shape, dtype=dtype.numpy), dtype)

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]:
        host: np.ndarray[Any, Any] = np.array(buffer.data).view(buffer.type.numpy).reshape(buffer.shape)
        return host

    def adopt(self, obj: object) -> Buffer[Any] | None:
        """Host arrays as the reference adopts them (NumPy, torch CPU tensors, DLPack): the emulated
        kernel addresses their memory, so real projects' kernels run here on their own tensors."""
        from tile_lang_numpy import adopt_host

        return adopt_host(self, obj)

    def launch(self, launch: Launch) -> None:
        """As the GPU would: a block needing more shared memory than the target's devices give one
        is the cupy backend's OutOfResources (the CPU has room for it, and the wgmma descriptors'
        14-bit address fields would wrap past 256 KB)."""
        from tile_lang_cupy.launch import check_shared_memory

        function, threads, map_bytes, smem = self._function(launch)
        check_shared_memory(launch, smem, SHARED_LIMIT[self.arch])
        keep = [self._arg(a) for a in launch.args]
        if map_bytes:  # the tensor maps' global memory, per program
            scratch = np.zeros(map_bytes * int(np.prod(launch.grid)) + 128, np.uint8)
            keep.append(ctypes.c_void_p(scratch.ctypes.data + (-scratch.ctypes.data) % 128))
        argv = (ctypes.c_void_p * max(1, len(keep)))(*[ctypes.cast(ctypes.pointer(k), ctypes.c_void_p) for k in keep])
        function(*launch.grid, threads, argv)

    def _arg(self, value: Any) -> Any:
        if isinstance(value, Buffer):
            return ctypes.c_void_p(value.data.ctypes.data)
        return _SCALARS[_spec(value).dtype](value)

    def _function(self, launch: Launch) -> tuple[Any, int, int, int]:
        from tile_lang.compiler import compile_ir
        from tile_lang_cupy.codegen import generate
        from tile_lang_cupy.codegen.ctypes_ import ctype

        spec = Spec(tuple(_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                    launch.options.num_warps, launch.options.num_stages, self.arch)
        key = (launch.kernel, spec.key())
        found = self.loaded.get(key)
        if found is None:
            fn = compile_ir(launch.kernel, spec, verify_each=True)
            cuda = generate(fn)
            self.last_source = cuda.source
            params = [ctype(p.ty.dtype) for p in fn.params] + (["unsigned char*"] if cuda.map_bytes else [])
            lib = ctypes.CDLL(str(build(cuda.source, cuda.name, params)))
            entry = lib.tl_emu_launch
            entry.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
            entry.restype = None
            found = self.loaded[key] = (entry, cuda.threads, cuda.map_bytes, cuda.smem_bytes)
        return found


def _spec(value: Any) -> ArgSpec:
    if isinstance(value, Buffer):
        return ArgSpec(value.type.pointer_to(), value.data.ctypes.data % 16 == 0)
    return argument_spec(value)


EMULATOR = EmuBackend()  # the sm_80 emulator the tests share (one cache of built kernels)
ON_BOTH = ("numpy", pytest.param(NAME, marks=pytest.mark.skipif(
    EMULATOR.unavailable_reason() is not None, reason=str(EMULATOR.unavailable_reason()))))
"""The backends of a differential test: the NumPy reference, then the generated CUDA emulated."""


def pytest_configure(config: pytest.Config) -> None:
    """Loaded with ``-p tests.compiler.emulator``: makes the ``emu`` backend selectable."""
    registry.register(EmuBackend())
