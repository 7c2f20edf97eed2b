"""Shared helpers for compiler tests: recording the launches the examples make."""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tile_lang import registry
from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, int_spec
from tile_lang.kernel import Launch

NVCC = shutil.which("nvcc")
ARCHS = ("sm_90", "sm_80")
CUDA_INCLUDE = Path("/usr/local/cuda/include")


def launch_spec(launch: Launch) -> Spec:
    """The specialisation a real launch of these arguments would compile (pointers aligned)."""
    args = []
    for value in launch.args:
        if isinstance(value, Buffer):
            args.append(ArgSpec(value.type.pointer_to(), True))
        elif isinstance(value, bool):
            args.append(ArgSpec(__import__("tile_lang").dtypes.BOOL))
        elif isinstance(value, int):
            args.append(int_spec(value))
        else:
            args.append(ArgSpec(__import__("tile_lang").dtypes.F32))
    return Spec(tuple(args), tuple(sorted(launch.constexprs.items())), launch.options.num_warps,
                launch.options.num_stages)


@contextmanager
def recorded_launches(backend: registry.Backend | None = None) -> Iterator[list[Launch]]:
    """Every launch ``backend`` (the NumPy reference's if None) runs inside the ``with`` block, in order."""
    backend = registry.get("numpy") if backend is None else backend
    seen: list[Launch] = []
    original = backend.launch

    def recording(launch: Launch) -> None:
        seen.append(launch)
        original(launch)

    setattr(backend, "launch", recording)
    try:
        yield seen
    finally:
        delattr(backend, "launch")


def record_example(name: str) -> list[Launch]:
    """Run example ``name`` on the NumPy reference, recording every launch it makes."""
    from examples import load

    with recorded_launches() as seen, registry.backend("numpy"):
        load(name)(0)
    return seen


def nvcc_cubin(source: str, arch: str, workdir: Any, verbose: bool = False) -> subprocess.CompletedProcess[str]:
    """Compile generated CUDA down to machine code for ``arch``: ptxas checks the PTX too (inline
    atomics, asm), as NVRTC does when a kernel is loaded; ``verbose``: its resource report."""
    from tile_lang_cupy.headers import INCLUDE_DIR

    path = workdir / f"k_{arch}.cu"
    path.write_text(source)
    assert NVCC is not None
    return subprocess.run([NVCC, "-cubin", f"-arch={arch}", "-std=c++17", f"-I{INCLUDE_DIR}",
                           *(["-Xptxas", "-v"] if verbose else []), str(path), "-o", str(path.with_suffix(".cubin"))],
                          capture_output=True, text=True, check=False)


def sm90a_report(source: str, workdir: Any) -> str:
    """ptxas's report on ``source`` for sm_90a, which must compile with no serialised wgmma
    (warning C75xx) and no spills."""
    done = nvcc_cubin(source, "sm_90a", workdir, verbose=True)
    assert done.returncode == 0, done.stderr
    assert "(C75" not in done.stderr, done.stderr
    assert " 0 bytes spill stores" in done.stderr, done.stderr
    return done.stderr


@pytest.fixture
def need_cuda_compiler() -> Iterator[None]:
    if NVCC is None and NVRTC is None:
        pytest.skip("neither nvcc nor libnvrtc is here: the generated CUDA cannot be compile-checked")
    yield


def _libnvrtc() -> Any:
    """NVRTC from the nvidia-cuda-nvrtc wheel or the CUDA toolkit, or None."""
    candidates = []
    wheel = importlib.util.find_spec("nvidia")
    for base in (wheel.submodule_search_locations or []) if wheel is not None else []:
        candidates += sorted(glob.glob(f"{base}/**/libnvrtc.so*", recursive=True))
    candidates += sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))
    for path in candidates:
        if "alt" not in path:
            try:
                for builtins in glob.glob(str(Path(path).parent / "libnvrtc-builtins.so.*")):
                    if "alt" not in builtins:  # NVRTC opens it by name: load it first
                        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
                return ctypes.CDLL(path)
            except OSError:
                continue
    return None


NVRTC = _libnvrtc()


def nvrtc_compile(source: str, name: str, arch: str) -> tuple[bool, str]:
    """Compile with NVRTC as the cupy backend does at run time (it has no host headers and
    fewer builtins than nvcc); returns (success, log)."""
    from tile_lang_cupy.headers import INCLUDE_DIR
    from tile_lang_cupy.nvrtc import flags

    assert NVRTC is not None
    prog = ctypes.c_void_p()
    NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), f"{name}.cu".encode(), 0, None, None)
    options = [o.encode() for o in (*flags(arch.removeprefix("sm_")), f"-I{INCLUDE_DIR}", f"-I{CUDA_INCLUDE}")]
    argv = (ctypes.c_char_p * len(options))(*options)
    status = NVRTC.nvrtcCompileProgram(prog, len(options), argv)
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(prog, log)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    return status == 0, log.value.decode(errors="replace")


TARGETS = {"numpy": ("numpy", 80), "emu-sm80": ("emulator", 80), "emu-sm90": ("emulator", 90)}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``target`` runs over the reference and both emulated targets, and over the GPU too when the run
    selects the cupy backend (``--tile-backend=numpy,cupy``), so hand-written cases also run on hardware."""
    if "target" in metafunc.fixturenames:
        from tile_lang.pytest_plugin import selected

        ids = [*TARGETS, *(["cupy"] if "cupy" in selected(metafunc.config) else [])]
        metafunc.parametrize("target", ids, indirect=True)


@pytest.fixture
def target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A backend for hand-written kernels to run on: the reference, then the emulated CUDA of each
    target (mma.sync; Hopper's wgmma and bulk copies), then the GPU if selected. Files using it skip
    where the emulator is missing."""
    from tests.compiler.emulator import EMULATOR, NAME

    if request.param == "cupy":
        info = {b.name: b for b in registry.backends()}["cupy"]
        if not info.available:
            pytest.skip(f"tile_lang backend 'cupy' is not available here: {info.reason}")
        return "cupy"
    name, arch = TARGETS[request.param]
    registry.register(EMULATOR)
    monkeypatch.setattr(EMULATOR, "arch", arch)
    return NAME if name == "emulator" else str(name)
