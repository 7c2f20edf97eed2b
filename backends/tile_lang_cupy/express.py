"""The express lane of repeat launches (``express.c``): a launch like one the fast path of
:mod:`tile_lang.launch_cache` already made on this backend is compared, packed and handed to
``cuLaunchKernel`` in C, with no Python frame per argument. What it does not recognise (another
class, dtype, device, alignment, int width or constexpr, a hook, another backend, a host
descriptor...) returns False and takes the Python path, which checks everything as before.

The extension is compiled once per machine and Python by the host C compiler into the cache
directory; without a compiler or Python's headers (or with ``TILE_LANG_EXPRESS=0``) there is no
lane and every launch takes the Python path.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tile_lang import registry
from tile_lang.buffer import Buffer
from tile_lang.kernel import LAUNCH_HOOKS
from tile_lang.launch_cache import ExpressLane

from tile_lang_cupy import cache
from tile_lang_cupy.memory import Foreign

if TYPE_CHECKING:
    from tile_lang_cupy.launch import Compiled

ENV_VAR = "TILE_LANG_EXPRESS"
SOURCE = Path(__file__).with_name("express.c")
def extension() -> ModuleType | None:
    """The compiled extension (built on first use), or None where it cannot be (:func:`unavailable_reason`)."""
    return _built()[0]


def unavailable_reason() -> str | None:
    """Why there is no express lane here, or None: the extension built (or found cached) and loaded."""
    return _built()[1]


@functools.cache
def _built() -> tuple[ModuleType | None, str | None]:
    if os.environ.get(ENV_VAR) == "0":
        return None, f"{ENV_VAR}=0"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    source = SOURCE.read_bytes()
    name = f"express-{cache.digest(source, sys.version, sysconfig.get_platform(), ' '.join(compiler))}{suffix}"
    disk = cache.open_cache()
    found = disk.path(name)
    try:
        if found is not None and found.is_file():
            return _load(found), None
        with tempfile.TemporaryDirectory() as work:
            built = Path(work) / name
            subprocess.run([*compiler, "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(SOURCE),
                            "-o", str(built)], check=True, capture_output=True, text=True)
            kept = disk.write(name, built.read_bytes())
            return _load(kept or built), None  # no usable cache directory: loaded from here, before it goes
    except (OSError, subprocess.CalledProcessError, ImportError) as error:
        detail = error.stderr.strip().splitlines()[-1:] if isinstance(error, subprocess.CalledProcessError) else []
        return None, f"building {SOURCE.name} failed: {error}{': ' + detail[0] if detail else ''}"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("tile_lang_express", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def driver_launch_address() -> int | None:
    """The address of the CUDA driver's ``cuLaunchKernel`` (libcuda, which CuPy has loaded), or None."""
    try:
        function = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    except (OSError, AttributeError):
        return None
    address = ctypes.cast(function, ctypes.c_void_p).value
    return int(address) if address else None


@dataclass(frozen=True)
class Target:
    """A compiled specialisation on one device and stream option, as the express lane launches it."""

    compiled: Compiled
    stream: Any  # Options.stream: None for the ambient stream at each launch
    codes: tuple[str, ...]
    address: int  # of cuLaunchKernel (or a stand-in's)

    def lane(self) -> ExpressLane | None:
        """A new lane for a kernel (None where the extension is unavailable)."""
        ext = extension()
        if ext is None:
            return None
        lane: ExpressLane = ext.Express(registry.SELECTED, registry.ENV_VAR, registry.DEFAULT, registry.EPOCH,
                                        LAUNCH_HOOKS, Foreign)
        return lane

    def plan(self, roles: tuple[int, ...], backend: str, constexprs: dict[str, Any]) -> tuple[Any, ...]:
        """What ``Express.record`` keeps of this target for a call whose flat arguments fill ``roles``."""
        from tile_lang_cupy import launch

        compiled = self.compiled
        current_stream = compiled.current_stream
        if current_stream is None:
            import cupy

            current_stream = cupy.cuda.get_current_stream
        fixed = None if self.stream is None else int(launch.stream_of(self.stream).ptr)
        ambient, torch_stream = launch.ambient_stream(current_stream, compiled.device)
        classes = (Buffer, _class("cupy", "ndarray"), _class("torch", "Tensor"))
        return (backend, registry.EPOCH[0], roles, self.codes, int(compiled.function.ptr), compiled.threads,
                compiled.smem_bytes, compiled.device, fixed, self.address, compiled, classes, constexprs,
                compiled.current_device, current_stream, ambient, torch_stream)


def target(compiled: Compiled, stream: Any) -> Target | None:
    """The express target of a compiled kernel, or None if the lane cannot launch it (tensor maps
    made per launch, a scalar it cannot pack, no launch function known)."""
    from tile_lang_cupy import launch

    codes = launch.slot_codes(compiled.params)
    address = compiled.launch_address
    if codes is None or compiled.map_bytes or address is None or extension() is None:
        return None
    return Target(compiled, stream, codes, address)


def _class(module: str, name: str) -> type | None:
    found = sys.modules.get(module)
    cls = getattr(found, name, None) if found is not None else None
    return cls if isinstance(cls, type) else None
