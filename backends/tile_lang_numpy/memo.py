"""Integer arithmetic computed once per group: a runtime loop's index math, again and again.

A runtime loop runs its body's Python once per iteration for the whole group, and index
arithmetic that does not depend on the loop (``b * C_IN``, ``od + kd - PAD`` for the few values
``kd`` takes, ``ow_mask & (iw >= 0)``) paid dispatch, a NumPy pass and the overflow check each
time: conv3d's tap recomputed ~35 such operations to change four numbers. A binary operator's
result on integer or bool operands (and ``tl.arange``'s) is a pure function of them (values are
never written in place; loads and pointers are not kept), so the group keeps it, keyed by each
operand's dtype and handle (a number, or a scalar every program shares, by its value), and
returns the same tensor when it meets the same operands again. Only while every program of the
group executes (an error such as a division by zero depends on which do) and outside combine
functions; an operation that raised keeps nothing, so it raises again. Bounded: the least
recently met go first.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from tile_lang import dtypes
from tile_lang.operators import BinaryOp
from tile_lang.tensor import Tensor

from tile_lang_numpy.affine import Affine, Box

ENTRIES = 1024  # results kept per group at most
PINNED = 64 << 20  # bytes the kept results and their operands may hold alive, counting what a lazy one may make
LARGEST = 4 << 20  # an entry that may hold more is not kept

Key = tuple[object, object, object]


class Memo:
    """One group's kept results: key -> (result, its bytes, the operands, which pin the keys' handles)."""

    __slots__ = ("entries", "pinned")

    def __init__(self) -> None:
        self.entries: OrderedDict[Key, tuple[Tensor[Any, Any], int, object, object]] = OrderedDict()
        self.pinned = 0

    def get(self, key: Key) -> Tensor[Any, Any] | None:
        """The result kept for ``key``, which becomes the newest entry (a loop's invariants stay
        while the results it makes once per iteration come and go)."""
        found = self.entries.get(key)
        if found is None:
            return None
        self.entries.move_to_end(key)
        return found[0]

    def keep(self, key: Key, args: Mapping[str, Any], result: object) -> None:
        """Remember ``result`` of the operands ``args`` (when it and they are small enough)."""
        if type(result) is not Tensor:
            return
        x, y = args.get("x"), args.get("y")
        made = footprint(result)
        if made is None:
            return
        size = made + (footprint(x) or 0) + (footprint(y) or 0)
        if size > LARGEST:
            return
        entries = self.entries
        while entries and (len(entries) >= ENTRIES or self.pinned + size > PINNED):
            self.pinned -= entries.popitem(last=False)[1][1]
        entries[key] = (result, size, x, y)
        self.pinned += size


def key(name: str, args: Mapping[str, Any]) -> Key | None:
    """The builtin ``name``'s operands as a key (an operator's with the operator, ``arange``'s two
    ints), or None when an operand is not kept by (a float, a pointer, a compact handle)."""
    if name == "arange":
        start, end = args["start"], args["end"]
        return (name, start, end) if type(start) is int and type(end) is int else None
    op = args["op"]
    x = _part(args["x"])
    if x is None or type(op) is not BinaryOp:
        return None
    y = _part(args["y"])
    return None if y is None else (id(op), x, y)  # an Enum member lives as long as the process (and hashes in Python)


_INTEGRAL = frozenset(d for d in dtypes.ALL if d.is_int or d.is_bool)  # hashed by identity


def _part(v: object) -> object:
    """An operand's part of a key: a number by its type and value, a tensor by its dtype and
    handle (a scalar every program shares by its value, so a loop's fresh ``kd`` of the same
    value meets its earlier result)."""
    kind = type(v)
    if kind is int or kind is bool:
        return kind, v
    if kind is not Tensor:
        return None
    assert isinstance(v, Tensor)
    dtype, handle = v.type, v.handle
    if dtype not in _INTEGRAL:
        return None
    if type(handle) is np.ndarray:
        if handle.shape == (1,):
            return dtype, handle.item()
        return dtype, v.block_shape, id(handle)
    if type(handle) is Affine or type(handle) is Box:
        return dtype, id(handle)
    return None


def footprint(v: object) -> int | None:
    """The bytes a tensor may hold: its array's, or all a lazy handle's lanes once made (None:
    not a tensor, or a handle not kept, such as a compact one)."""
    if type(v) is not Tensor:
        return None
    assert isinstance(v, Tensor)
    handle = v.handle
    if type(handle) is np.ndarray:
        return int(handle.nbytes)
    if type(handle) is Affine or type(handle) is Box:
        return math.prod(handle.shape) * v.type.itemsize
    return None
