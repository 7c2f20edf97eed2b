"""Host tensor descriptors: a tensor with its shape, strides and a block shape, passed to a kernel
parameter (Triton's ``triton.tools.tensor_descriptor.TensorDescriptor``).

A launch passes the base as a pointer argument and the shape and strides as int arguments; the
block shape and padding are compile-time (part of the specialisation), so changing
``block_shape`` between launches (autotune's ``pre_hook``) compiles anew. Inside the kernel the
parameter is ``tl.make_tensor_descriptor(base, shape, strides, block_shape, padding)`` made at
its entry, on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tile_lang.ops.memory import TensorDescriptor

if TYPE_CHECKING:
    Described = TensorDescriptor[Any, Any]
else:  # at run time no device descriptor: its read-only ``block_shape`` would refuse the field
    Described = object


@dataclass
class HostTensorDescriptor(Described):
    """A tensor (any array a pointer parameter takes) described for ``desc.load``/``desc.store``
    in a kernel: ``shape`` and ``strides`` in elements, ``block_shape`` the tile each access moves
    (assignable until the launch), ``padding`` what out-of-bounds loads read ("zero" or "nan").
    A ``tl.TensorDescriptor`` to mypy, so a launch type-checks where a kernel takes one (as a
    Buffer is a ``Pointer``); it is never one inside a kernel."""

    base: Any
    shape: list[int]  # type: ignore[assignment]  # on the host ints; the kernel reads scalars (desc.shape)
    strides: list[int]  # type: ignore[assignment]
    block_shape: list[int]
    padding: str = "zero"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: Sequence[int], padding: str = "zero") -> HostTensorDescriptor:
        """The descriptor of the whole of ``tensor`` (its ``shape`` and ``stride()``)."""
        return HostTensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), list(block_shape), padding)


@dataclass(frozen=True)
class Layout:
    """A descriptor parameter as one launch specialises it: the pointee pattern it takes and the
    argument's block shape and padding (its rank is the block shape's)."""

    pointee: Any
    block_shape: tuple[int, ...]
    padding: str

    @property
    def ndim(self) -> int:
        return len(self.block_shape)

    def static(self) -> tuple[tuple[int, ...], str]:
        """What the launch's constexprs hold under the parameter's name, so compile caches key on it."""
        return self.block_shape, self.padding


def part_names(name: str, ndim: int) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The runtime parameters a descriptor parameter ``name`` of rank ``ndim`` is passed as: its
    base (a pointer), its shape's and its strides' (ints)."""
    return (f"{name}_base", tuple(f"{name}_shape{d}" for d in range(ndim)),
            tuple(f"{name}_stride{d}" for d in range(ndim)))
