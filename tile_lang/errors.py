"""Errors that point at the user's code: the kernel, the parameter, or the source line."""

from __future__ import annotations

import linecache


class TileLangError(Exception):
    """The base of every error tile_lang raises on purpose: ``except tl.TileLangError`` catches them all."""


class BackendError(TileLangError, RuntimeError):
    """A backend that cannot be loaded, cannot run here, or lacks a capability (source generation)."""


class LaunchError(TileLangError, TypeError):
    """A launch that cannot run: bad grid, wrong argument kind or dtype, missing constexpr."""


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
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.filename}:{self.lineno}:{self.col + 1}"
        head = f"{where}: in kernel {self.kernel}: {self.message}" if self.kernel else f"{where}: {self.message}"
        line = linecache.getline(self.filename, self.lineno).rstrip("\n")
        if not line:
            return head
        return f"{head}\n    {line}\n    {' ' * self.col}^"
