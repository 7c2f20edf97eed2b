"""What a rule sees of a kernel's values, on either backend: a :class:`Block` (a runtime value's
dtype and block shape) and a :class:`Tiled` (a block pointer's or tensor descriptor's element type
and block shape, which each backend's handle gives through :class:`Seen`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tile_lang.dtypes import DType

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Block:
    """What a rule sees of a value: its dtype and block shape (``()`` for a scalar)."""

    dtype: DType
    shape: Shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"a {self.dtype!r} scalar" if not self.shape else f"a {self.dtype!r} block of shape {list(self.shape)}"


@dataclass(frozen=True)
class Tiled:
    """What a rule sees of a block pointer or a tensor descriptor: its element type and block shape."""

    element: DType
    shape: Shape

    @property
    def rank(self) -> int:
        return len(self.shape)


@runtime_checkable
class Seen(Protocol):
    """A backend's handle of a block pointer or descriptor, as its rules see it."""

    def seen(self) -> Tiled: ...
