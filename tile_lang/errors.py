"""Errors that point at the user's code: the kernel, the parameter, or the source line.

Every error tile_lang raises on purpose is a :class:`TileLangError` (``tests/test_error_model.py``
checks every ``raise`` of the package): a bad host call a :class:`UsageError`, a launch that cannot
run a :class:`LaunchError`, a kernel breaking an op's rule (or Python's, on a compile-time value)
a :class:`SemanticError` that each backend re-raises as a :class:`KernelError` at the line. Any
other exception escaping the compiler's own code (an internal assertion, a pass or code generator
failing) is a :class:`CompilerBug` chained from the original. A launch raises its errors without tile_lang's
frames (the message names the kernel line). ``TILE_LANG_DEBUG=1``, the one debugging switch, shows
everything: the original of an internal error, and every frame of a launch's error.
"""

from __future__ import annotations

import contextlib
import linecache
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

DEBUG_ENV_VAR = "TILE_LANG_DEBUG"


class TileLangError(Exception):
    """The base of every error tile_lang raises on purpose: ``except tl.TileLangError`` catches them all."""


class BackendError(TileLangError, RuntimeError):
    """A backend that cannot be loaded, cannot run here, or lacks a capability (source generation)."""


class UsageError(TileLangError, TypeError, ValueError):
    """A call tile_lang refuses outside a kernel's rules: a host function given a bad argument
    (``tl.empty((-1,), tl.f32)``, an unknown backend or device), a builtin called outside a kernel
    or with arguments its signature does not bind. The message names the function, the parameter
    and the value; it is also the TypeError and the ValueError the builtins would raise."""


class SemanticError(TileLangError):
    """A kernel breaks a rule (an op's, in ``tile_lang.semantics``, or Python's on a compile-time
    value). It carries only the message: the backend that met it re-raises it as a KernelError
    at the user's line."""


def python(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``: Python's own work on a kernel's compile-time values (``t[5]`` of a
    pair, ``1 // 0``, a helper called with too few arguments), whose exception is the kernel's
    error: a SemanticError naming it as Python does (as the reference, which runs it, reports it)."""
    try:
        return fn(*args, **kwargs)
    except TileLangError:
        raise
    except Exception as exc:
        raise SemanticError(f"{type(exc).__name__}: {exc}") from exc


class SourceUnavailable(TileLangError, OSError):
    """A kernel's or helper's Python source cannot be read (one defined by ``exec`` or in an
    interactive session): the compiler reads it. Also the OSError ``inspect`` raises for it."""


class LaunchError(TileLangError, TypeError):
    """A launch that cannot run: bad grid, wrong argument kind or dtype, missing constexpr."""


class OutOfResources(LaunchError):
    """A launch config needs more of a device resource (shared memory a block) than the device
    has (Triton's name): the autotuner skips such a config; a plain launch reports it."""


class KernelError(TileLangError):
    """A problem at a line of a kernel's source, shown with a caret excerpt.

    Raised by the compiler front end and by the reference backend's checks (out-of-bounds
    access, broken promises, failed device_assert).
    """

    def __init__(self, message: str, filename: str, lineno: int, col: int = 0, kernel: str = "") -> None:
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.kernel = kernel
        super().__init__(at_line(message, filename, lineno, col, kernel))


class CompilerBug(TileLangError):
    """An internal error of the compiler or a code generator, not of the kernel: it names the
    kernel, the stage and the source line being compiled; ``__cause__`` is the original."""

    def __init__(self, stage: str, error: BaseException, filename: str, lineno: int, col: int = 0,
                 kernel: str = "") -> None:
        self.stage = stage
        self.filename = filename
        self.lineno = lineno
        self.kernel = kernel
        message = (f"internal compiler error in {stage}: {type(error).__name__}: {error} (a tile_lang bug; "
                   f"{DEBUG_ENV_VAR}=1 raises the original with its traceback)")
        super().__init__(at_line(message, filename, lineno, col, kernel))


def at_line(message: str, filename: str, lineno: int, col: int = 0, kernel: str = "") -> str:
    """``file:line:col: in kernel K: message`` and the source line with a caret under ``col``."""
    where = f"{filename}:{lineno}:{col + 1}"
    head = f"{where}: in kernel {kernel}: {message}" if kernel else f"{where}: {message}"
    line = linecache.getline(filename, lineno).rstrip("\n")
    if not line:
        return head
    return f"{head}\n    {line}\n    {' ' * col}^"


def debugging() -> bool:
    """Whether ``TILE_LANG_DEBUG=1``: internal errors are raised as they are, not as CompilerBugs, and
    a launch's errors keep tile_lang's frames."""
    return os.environ.get(DEBUG_ENV_VAR) == "1"


def trimmed(error: TileLangError) -> TileLangError:
    """``error`` without the library frames it passed through (and the exception it was raised
    while handling), for a launch to raise: the user's frames remain and the message holds the
    kernel's line; a CompilerBug's ``__cause__`` keeps its own traceback. ``TILE_LANG_DEBUG=1``
    leaves it whole."""
    if debugging():
        return error
    error.__suppress_context__ = True
    return error.with_traceback(None)


@contextlib.contextmanager
def internal_errors(stage: str, kernel: str, where: Callable[[], tuple[str, int]]) -> Iterator[None]:
    """Raise any exception but tile_lang's own from the block as a CompilerBug at ``where()``
    (file, line: read when it fails, so it can follow progress)."""
    try:
        yield
    except TileLangError:
        raise
    except Exception as exc:
        if debugging():
            raise
        filename, line = where()
        raise CompilerBug(stage, exc, filename, line, kernel=kernel) from exc


class Unsupported(TileLangError, AttributeError):
    """A name of Triton's language tile_lang does not define yet (``tl.reduce_or``)."""


class MissingAsm(TileLangError, KeyError):
    """A form of a compiled kernel its ``asm`` does not hold (Triton's ``ttgir`` or ``llir``: tile_lang
    compiles through CUDA C++, not MLIR)."""
