"""The launch's undo log: old contents of every element written, so a launch is all or nothing.

Every write path (plain and strided stores, block-pointer stores, atomics) records what it
overwrites before writing. A group whose programs diverge is undone back to its own start and
rerun; a launch that raises is undone entirely, so no buffer keeps a partial result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]


class Journal:
    """Old values of written elements, in write order; undone newest first."""

    def __init__(self) -> None:
        self._entries: list[tuple[Array, Array | None, Array] | Callable[[], None]] = []

    def mark(self) -> int:
        """A point to roll back to."""
        return len(self._entries)

    def record(self, flat: Array, index: Array) -> None:
        """Before ``flat[index] = ...``."""
        self._entries.append((flat, index, flat.take(index)))

    def record_view(self, view: Array) -> None:
        """Before a write through ``view``, a view of memory."""
        self._entries.append((view, None, view.copy()))

    def record_undo(self, undo: Callable[[], None]) -> None:
        """Any other state a rerun must not see (the race detector's)."""
        self._entries.append(undo)

    def rollback(self, mark: int = 0) -> None:
        """Restore every element written since ``mark``."""
        while len(self._entries) > mark:
            entry = self._entries.pop()
            if callable(entry):
                entry()
                continue
            target, index, old = entry
            if index is None:
                target[...] = old
            else:
                target[index] = old
