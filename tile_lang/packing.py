"""Tuple kernel arguments that hold buffers (Triton's ``kernel[grid]((x_ptr, y_ptr), ...)``).

A launch passes each buffer in the tuple (at any depth, in a NamedTuple too) as a pointer argument
of its own; everything else in it (ints, floats, None, dtypes, jit functions) stays a compile-time
constant of the specialisation, as a tuple of constants is. Inside the kernel the parameter is the
tuple rebuilt from its pointers and constants at its entry, on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tile_lang.errors import UsageError


@dataclass(frozen=True)
class Slot:
    """The place of the ``index``-th pointer argument in a :class:`Packing`'s template."""

    index: int


@dataclass(frozen=True)
class Named:
    """A NamedTuple in a template: its class and its fields' templates."""

    cls: type
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Packing:
    """A tuple parameter as one launch specialises it: the argument's structure, its constants in
    place and a :class:`Slot` for each buffer (``count`` of them), hashed into the compile caches."""

    template: Any
    count: int

    def unpack(self, pointers: Sequence[Any]) -> Any:
        """The tuple the kernel reads: the template with each slot's pointer in place."""
        return _fill(self.template, pointers)


def is_packed(value: object, constant: Any) -> bool:
    """Whether a tuple argument is passed as a :class:`Packing`: it holds something ``constant``
    (the rule of compile-time constants) refuses, such as a buffer or a jit function."""
    if not isinstance(value, tuple):
        return False
    try:
        constant(value)
    except UsageError:
        return True
    return type(value) is not tuple  # a NamedTuple of constants too: its fields are read by name


def pack(value: tuple[Any, ...], constant: Any, hashable: Any) -> tuple[Packing, tuple[Any, ...]]:
    """``value``'s packing and the buffers it passes, in slot order: a leaf ``constant`` accepts,
    or one ``hashable`` says is a compile-time object (a jit function), stays in the template."""
    leaves: list[Any] = []

    def walk(item: Any) -> Any:
        if isinstance(item, tuple):
            items = tuple(walk(v) for v in item)
            return items if type(item) is tuple else Named(type(item), items)
        try:
            return constant(item)
        except UsageError:
            if hashable(item):
                return item
        leaves.append(item)
        return Slot(len(leaves) - 1)

    template = walk(value)
    return Packing(template, len(leaves)), tuple(leaves)


def part_names(name: str, count: int) -> tuple[str, ...]:
    """The pointer parameters a tuple parameter ``name`` with ``count`` buffers is passed as."""
    return tuple(f"{name}_item{i}" for i in range(count))


def _fill(template: Any, pointers: Sequence[Any]) -> Any:
    if isinstance(template, Slot):
        return pointers[template.index]
    if isinstance(template, Named):
        return template.cls(*(_fill(v, pointers) for v in template.items))
    if isinstance(template, tuple):
        return tuple(_fill(v, pointers) for v in template)
    return template
