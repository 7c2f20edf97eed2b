"""Device addresses of buffers: CuPy arrays, or foreign CUDA memory adopted without copying."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tile_lang.buffer import Buffer


@dataclass(frozen=True)
class Foreign:
    """CUDA memory owned by another library (a torch tensor...): its address, and the owner
    kept alive while the buffer lives."""

    ptr: int
    owner: Any


def address(buffer: Buffer[Any]) -> int:
    data = buffer.data
    return data.ptr if isinstance(data, Foreign) else int(data.data.ptr)
