"""Compile-time values with runtime parts: block pointers and tensor descriptors.

In a kernel they are Python objects (``tl.BlockPointer``/``tl.TensorDescriptor`` holding a
:class:`BlockInfo`), not IR values; their scalars (base pointer, shape, strides, offsets) are.
Control flow carries them through loops and branches part by part: :func:`leaves` lists the
parts and :func:`rebuild` puts a value back together from new ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Union

from tile_lang.compiler.ir import Node
from tile_lang.ops.memory import BlockPointer, TensorDescriptor
from tile_lang.seen import Tiled

Part = Union[Node, bool, int, float]


@dataclass(frozen=True)
class BlockInfo:
    """A block of a strided tensor: element ``i`` lies at ``base + sum_d (offsets_d + i_d) * strides_d``.

    ``shape``, ``strides`` and ``offsets`` hold one integer per dim (a scalar node or a constant)."""

    base: Node
    shape: tuple[Part, ...]
    strides: tuple[Part, ...]
    offsets: tuple[Part, ...]
    block_shape: tuple[int, ...]
    fill: float | int = 0  # what a descriptor's out-of-bounds elements read as (its padding_option)

    @property
    def ndim(self) -> int:
        return len(self.block_shape)

    def seen(self) -> Tiled:
        """What the rules see of this block."""
        element = self.base.ty.dtype.element
        assert element is not None
        return Tiled(element, self.block_shape)

    def parts(self) -> tuple[Part, ...]:
        return (self.base, *self.shape, *self.strides, *self.offsets)

    def with_parts(self, parts: Sequence[Any]) -> BlockInfo:
        n = self.ndim
        base = parts[0]
        assert isinstance(base, Node)
        return replace(self, base=base, shape=tuple(parts[1:1 + n]), strides=tuple(parts[1 + n:1 + 2 * n]),
                       offsets=tuple(parts[1 + 2 * n:]))


def info(value: object) -> BlockInfo | None:
    """The block behind a block pointer or descriptor made by the compiler, else None."""
    if isinstance(value, (BlockPointer, TensorDescriptor)) and isinstance(value.handle, BlockInfo):
        return value.handle
    return None


def leaves(value: object) -> tuple[Part, ...] | None:
    """The runtime parts of an aggregate, or None for any other value."""
    found = info(value)
    return None if found is None else found.parts()


def rebuild(value: object, parts: Sequence[Any]) -> object:
    """``value`` (an aggregate) with its parts replaced."""
    found = info(value)
    assert found is not None
    block = found.with_parts(parts)
    return BlockPointer(block) if isinstance(value, BlockPointer) else TensorDescriptor(block)
