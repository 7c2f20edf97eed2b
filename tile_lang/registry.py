"""The backend registry: one small protocol, built-in and entry-point backends, selection."""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from tile_lang.dtypes import DType
from tile_lang.errors import BackendError, UsageError

if TYPE_CHECKING:
    from tile_lang.buffer import Buffer
    from tile_lang.launch import Launch

ENTRY_POINT_GROUP = "tile_lang.backends"
DEFAULT = "numpy"
ENV_VAR = "TILE_LANG_BACKEND"

# Shipped backends, found even when the package is used from a source tree without install.
_BUILTIN = {"numpy": "tile_lang_numpy:NumpyBackend", "cupy": "tile_lang_cupy:CupyBackend"}


class Backend(Protocol):
    """What a backend implements: memory in and out, native-array adoption and launch."""

    name: str
    host: bool
    """True when its buffers are host memory (NumPy arrays, torch CPU tensors) and no GPU is involved:
    the reference, a CPU emulator. Triton code run on it sees a stand-in CUDA device (as_triton)."""

    def unavailable_reason(self) -> str | None:
        """None when usable here, else a sentence saying why not (no GPU, no CuPy...)."""

    def to_device(self, array: np.ndarray[Any, Any], dtype: DType) -> Buffer[Any]:
        """Copy a host array (already of ``dtype``) into a new buffer."""

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        """An uninitialised buffer."""

    def to_host(self, buffer: Buffer[Any]) -> np.ndarray[Any, Any]:
        """A host copy of ``buffer`` with its shape."""

    def adopt(self, obj: object) -> Buffer[Any] | None:
        """Wrap a native array passed straight to a launch (zero-copy), or None if not native; a
        LaunchError if it is native but no pointer can take it (see ``buffer.native_buffer``)."""

    def launch(self, launch: Launch) -> None:
        """Run a checked launch."""


@dataclass(frozen=True)
class GeneratedSource:
    """A kernel's generated source, with what compiling it offline needs (``kernel.compile``): the
    folders of the headers it includes, and the shared memory a block takes beyond what it declares."""

    text: str
    include_dirs: tuple[str, ...]
    dynamic_shared: int  # bytes


@runtime_checkable
class Precompiler(Protocol):
    """An optional backend capability: compile the kernels of several checked launches together
    (an autotuner's configs, before it times them: the CUDA backend runs NVRTC for them side by
    side); each launch then finds its kernel ready."""

    def precompile(self, launches: Sequence[Launch]) -> None:
        """Compile and load the kernels of ``launches`` not compiled yet."""


@dataclass(frozen=True)
class BackendInfo:
    """One row of ``tl.backends()``."""

    name: str
    available: bool
    reason: str | None


_LOADED: dict[str, Backend] = {}
_LOAD_ERRORS: dict[str, str] = {}
_LOCK = threading.Lock()  # one backend object per name, however many threads launch first
SELECTED: contextvars.ContextVar[str | None] = contextvars.ContextVar("tile_lang_backend", default=None)
"""The backend ``tl.backend(...)`` selected in this context (None: the environment's, else the default)."""
EPOCH = [0]
"""Counts the backends loaded or registered: a launch remembered outside Python (the CUDA backend's
express lane) is reused only while this holds the count it was remembered at."""


def _targets() -> dict[str, str]:
    """Every backend's ``module:factory``: the shipped ones, then the entry points of other
    packages (which cannot replace a shipped backend's name)."""
    from importlib.metadata import entry_points  # 15-30 ms to import, and the scan grows with installed packages

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return {**found, **_BUILTIN}


def _target(name: str) -> str:
    """Where backend ``name`` lives; a shipped backend is found without scanning entry points."""
    if name in _BUILTIN:
        return _BUILTIN[name]
    targets = _targets()
    if name not in targets:
        known = ", ".join(sorted(targets))
        raise UsageError(f"unknown tile_lang backend {name!r} (registered: {known})")
    return targets[name]


def get(name: str) -> Backend:
    """The backend called ``name``, loaded on first use; raises if it is unknown or unusable."""
    backend = load(name)
    reason = backend.unavailable_reason()
    if reason is not None:
        raise BackendError(f"tile_lang backend {name!r} is not available here: {reason}")
    return backend


def load(name: str) -> Backend:
    """The backend called ``name``, loaded on first use, whether or not it can run here (its source
    generator needs only its code: no GPU, no CuPy); raises if it is unknown or cannot be loaded."""
    backend = _try_load(name)
    if backend is None:
        raise BackendError(f"tile_lang backend {name!r} could not be loaded: {_LOAD_ERRORS[name]}")
    return backend


def _try_load(name: str) -> Backend | None:
    """Backend ``name``, made once: threads launching at once share one object (a buffer made
    through one instance is refused by a launch through another). Importing happens outside the
    lock, under Python's own per-module import lock."""
    found = _LOADED.get(name)
    if found is not None:
        return found
    module_name, _, attr = _target(name).partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # an optional backend's import failing is reported, not raised
        _LOAD_ERRORS[name] = f"{type(exc).__name__}: {exc}"
        return None
    with _LOCK:
        found = _LOADED.get(name)
        if found is None:
            found = _LOADED[name] = factory()
            EPOCH[0] += 1
    return found


def register(backend: Backend) -> None:
    """Register a backend object directly (entry points are the installed way)."""
    with _LOCK:
        _LOADED[backend.name] = backend
        EPOCH[0] += 1


def backends() -> list[BackendInfo]:
    """Every registered backend, whether it is usable here, and if not, why."""
    rows = []
    for name in sorted(set(_targets()) | set(_LOADED)):
        backend = _try_load(name)
        reason = _LOAD_ERRORS.get(name) if backend is None else backend.unavailable_reason()
        rows.append(BackendInfo(name, reason is None, reason))
    return rows


def current_name() -> str:
    """The backend for buffer creation and launches: ``tl.backend(...)`` scope, env, default."""
    return SELECTED.get() or os.environ.get(ENV_VAR) or DEFAULT


def current() -> Backend:
    return get(current_name())


def is_loaded(backend: Backend) -> bool:
    """Whether ``backend`` is the one its name gives (none registered in its place since): a kernel
    that launched on it finds it again by the name alone (:meth:`tile_lang.kernel.Kernel.current_cache`)."""
    return _LOADED.get(backend.name) is backend


def current_is_host() -> bool:
    """Whether the current backend keeps its buffers in host memory (:attr:`Backend.host`)."""
    return get(current_name()).host


@contextlib.contextmanager
def backend(name: str) -> Iterator[Backend]:
    """Use backend ``name`` inside the ``with`` block."""
    selected = get(name)
    token = SELECTED.set(name)
    try:
        yield selected
    finally:
        SELECTED.reset(token)
