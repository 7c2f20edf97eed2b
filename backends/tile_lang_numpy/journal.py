"""The launch's undo log: old contents of every element written, so a launch is all or nothing.

Every write path (plain and strided stores, block-pointer stores, atomics) records what it
overwrites before writing. A group whose programs diverge is undone back to its own start and
rerun; a launch that raises is undone entirely, so no buffer keeps a partial result.
The copies of old contents go back to a pool when the launch ends and the next launch copies
into them: a large launch's copies otherwise take fresh memory each time (the heap creeps past
them, and fresh pages fault: 2-4x the time of a 2^22-element vector add on a 2-core VM).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

SPARE_BYTES = 64 << 20  # most bytes of copies the pool keeps between launches
_SPARE: dict[tuple[int, np.dtype[Any]], list[Array]] = {}  # flat copy buffers by (size, dtype)
_spare_bytes = 0  # what _SPARE holds
_SPARE_LOCK = threading.Lock()  # launches from several threads share the pool


class Journal:
    """Old values of written elements, in write order; undone newest first."""

    def __init__(self) -> None:
        self._entries: list[tuple[Array, Array | None, Array]] = []

    def mark(self) -> int:
        """A point to roll back to."""
        return len(self._entries)

    def record(self, flat: Array, index: Array, old: Array | None = None) -> None:
        """Before ``flat[index] = ...`` (``flat`` may be a view of memory whose rows ``index``
        picks; ``old``: a copy of ``flat[index]`` the caller already made)."""
        if old is None:
            old = flat.take(index) if flat.ndim == 1 else flat[index]
        self._entries.append((flat, index, old))

    def record_view(self, view: Array) -> None:
        """Before a write through ``view``, a view of memory."""
        global _spare_bytes
        with _SPARE_LOCK:
            kept = _SPARE.get((view.size, view.dtype))
            flat = kept.pop() if kept else None
            if flat is not None:
                _spare_bytes -= flat.nbytes
        if flat is None:
            flat = np.empty(view.size, view.dtype)
        old = flat.reshape(view.shape)
        np.copyto(old, view)
        self._entries.append((view, None, old))

    def rollback(self, mark: int = 0) -> None:
        """Restore every element written since ``mark``."""
        while len(self._entries) > mark:
            target, index, old = self._entries.pop()
            if index is None:
                target[...] = old
            else:
                target[index] = old

    def close(self) -> None:
        """The launch is over: its copies of whole views go back to the pool, up to ``SPARE_BYTES``."""
        global _spare_bytes
        with _SPARE_LOCK:
            for entry in self._entries:
                if not callable(entry) and entry[1] is None and _spare_bytes + entry[2].nbytes <= SPARE_BYTES:
                    flat = entry[2].reshape(-1)
                    _SPARE.setdefault((flat.size, flat.dtype), []).append(flat)
                    _spare_bytes += flat.nbytes
        self._entries.clear()
