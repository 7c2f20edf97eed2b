"""Shape manipulation: broadcast, expand_dims, permute/trans, reshape/view/ravel, join/split,
interleave and cat.

These ops only move elements, so they are bit-exact and work on pointer blocks as well as
values (the element offsets move instead). Axes are *block* axes: array axis ``axis + 1``,
because every handle carries the program axis first; the rules (tile_lang.semantics.shape)
gave every shape and axis already. The helpers at the top (operands, moving data) are shared
with ``reduction`` and ``linalg``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.errors import SemanticError
from tile_lang.seen import Block
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array, Pointers

# ------------------------------------------------------------------------------ shared helpers


def block(x: Tensor[Any, Any]) -> Block:
    """What the rules of :mod:`tile_lang.semantics` see of ``x``."""
    return Block(x.type, x.block_shape)


def operand(engine: Engine, x: object, what: str, like: Tensor[Any, Any] | None = None) -> Tensor[Any, Any]:
    """``x`` as a tensor (a Python scalar typed next to ``like``), or a clear error."""
    try:
        return values.lift(x, None if like is None else like.type)
    except SemanticError:
        raise engine.error(f"{what}: expected a block, got {type(x).__name__}") from None


def data_of(x: Tensor[Any, Any]) -> Array:
    """What shape ops move: a value block's values, or a pointer block's element offsets."""
    return x.handle.offsets if isinstance(x.handle, Pointers) else values.array(x)


def rebuild(like: Tensor[Any, Any], data: Array) -> Tensor[Any, Any]:
    """A block with ``like``'s dtype (and memory, for pointers) holding moved ``data``."""
    handle = like.handle
    if isinstance(handle, Pointers):
        return values.make(Pointers(handle.memory, data), like.type)
    return values.make(data, like.type)


def remap(x: Tensor[Any, Any], fn: Callable[[Array], Array]) -> Tensor[Any, Any]:
    """Apply an element-moving array function to a value block or to a pointer block."""
    return rebuild(x, fn(data_of(x)))


def moved_last(arr: Array, axis: int) -> Array:
    """A view of ``arr`` with block axis ``axis`` moved to the end (for along-axis algorithms)."""
    return np.moveaxis(arr, axis + 1, -1)


def moved_back(arr: Array, axis: int) -> Array:
    """The inverse of :func:`moved_last`."""
    return np.moveaxis(arr, -1, axis + 1)


def _pair(engine: Engine, a: Tensor[Any, Any], b: Tensor[Any, Any], what: str) -> tuple[Array, Array]:
    """The data of two blocks combined into one (pointers into the same argument)."""
    ha, hb = a.handle, b.handle
    if isinstance(ha, Pointers) and isinstance(hb, Pointers) and ha.memory is not hb.memory:
        raise engine.error(f"{what} of pointers into different arguments is not supported by the numpy backend")
    return data_of(a), data_of(b)


def _expand(a: Array, rank_a: int, shape: tuple[int, ...]) -> Array:
    """Broadcast an array of block rank ``rank_a`` to the block ``shape`` (program axis kept)."""
    aligned = values.align(a, rank_a, len(shape))
    return np.broadcast_to(aligned, aligned.shape[:1] + shape)


def same_lead(a: Array, b: Array) -> tuple[Array, Array]:
    """Both arrays with the same program-axis length (1 broadcasts against P)."""
    lead = max(a.shape[0], b.shape[0])
    return np.broadcast_to(a, (lead,) + a.shape[1:]), np.broadcast_to(b, (lead,) + b.shape[1:])


# ------------------------------------------------------------------------------ broadcasting


@implements(tl.broadcast)
def broadcast(engine: Engine, a: Mapping[str, Any]) -> tuple[Tensor[Any, Any], Tensor[Any, Any]]:
    x = operand(engine, a["input"], "tl.broadcast")
    y = operand(engine, a["other"], "tl.broadcast", like=x)
    shape = a["shape"]
    engine.note_block(math.prod(shape))
    return (remap(x, lambda arr: _expand(arr, x.ndim, shape)), remap(y, lambda arr: _expand(arr, y.ndim, shape)))


@implements(tl.broadcast_to)
def broadcast_to(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["input"], "tl.broadcast_to")
    shape = a["shape"]
    engine.note_block(math.prod(shape))
    return remap(x, lambda arr: _expand(arr, x.ndim, shape))


@implements(tl.expand_dims)
def expand_dims(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["input"], "tl.expand_dims")
    return remap(x, lambda arr: np.expand_dims(arr, tuple(ax + 1 for ax in a["axis"])))


# ------------------------------------------------------------------------------ axis order


def _permuted(x: Tensor[Any, Any], order: tuple[int, ...]) -> Tensor[Any, Any]:
    return remap(x, lambda arr: arr.transpose((0,) + tuple(d + 1 for d in order)))


@implements(tl.permute)
def permute(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["input"], "tl.permute")
    return _permuted(x, a["dims"])


@implements(tl.trans)
def trans(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["input"], "tl.trans")
    return _permuted(x, a["dims"])


# ------------------------------------------------------------------------------ reshaping


def _reshaped(engine: Engine, x: Tensor[Any, Any], shape: tuple[int, ...]) -> Tensor[Any, Any]:
    """``x``'s elements in row-major order under ``shape``."""
    engine.note_block(math.prod(shape))
    return remap(x, lambda arr: arr.reshape(arr.shape[:1] + shape))


@implements(tl.reshape)
def reshape(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """Row-major; ``can_reorder=True`` allows any order in Triton, and row-major is one of them."""
    x = operand(engine, a["input"], "tl.reshape")
    return _reshaped(engine, x, a["shape"])


@implements(tl.view)
def view(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["input"], "tl.view")
    return _reshaped(engine, x, a["shape"])


@implements(tl.ravel)
def ravel(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["x"], "tl.ravel")
    return _reshaped(engine, x, a["shape"])


# ------------------------------------------------------------------------------ join, split, cat


def _joined(engine: Engine, a: Mapping[str, Any], what: str) -> Tensor[Any, Any]:
    """``a`` and ``b`` broadcast together and stacked along a new minor axis of size 2."""
    x = operand(engine, a["a"], what)
    y = operand(engine, a["b"], what, like=x)
    shape = a["shape"]
    ax, ay = _pair(engine, x, y, what)
    ax, ay = same_lead(_expand(ax, x.ndim, shape), _expand(ay, y.ndim, shape))
    engine.note_block(2 * math.prod(shape))
    return rebuild(x, np.stack([ax, ay], axis=-1))


@implements(tl.join)
def join(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return _joined(engine, a, "tl.join")


@implements(tl.split)
def split(engine: Engine, a: Mapping[str, Any]) -> tuple[Tensor[Any, Any], Tensor[Any, Any]]:
    x = operand(engine, a["a"], "tl.split")
    return remap(x, lambda arr: arr[..., 0]), remap(x, lambda arr: arr[..., 1])


@implements(tl.interleave)
def interleave(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """``join`` then merge the new axis into the last one: out[..., 2i] = a[..., i], out[..., 2i+1] = b[..., i]."""
    joined = _joined(engine, a, "tl.interleave")
    if joined.ndim == 1:  # two scalars: the join is already the interleaving
        return joined
    shape = joined.block_shape[:-2] + (2 * joined.block_shape[-2],)
    return remap(joined, lambda arr: arr.reshape(arr.shape[:1] + shape))


@implements(tl.cat)
def cat(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """Concatenation along the first block axis of two blocks of the same shape (so the result
    stays a power of two). Triton 3.6 only promises *some* order (``can_reorder``); this one is
    the plain concatenation, which is what Triton 3.9 guarantees."""
    x = operand(engine, a["input"], "tl.cat")
    y = operand(engine, a["other"], "tl.cat", like=x)
    ax, ay = same_lead(*_pair(engine, x, y, "tl.cat"))
    engine.note_block(2 * math.prod(x.block_shape))
    return rebuild(x, np.concatenate([ax, ay], axis=1))
