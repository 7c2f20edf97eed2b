"""Shape rules: the argument checks and result shapes of ``broadcast``/``broadcast_to``,
``expand_dims``, ``permute``/``trans``, ``reshape``/``view``/``ravel``, ``join``/``interleave``,
``split`` and ``cat``. Both backends move the elements their own way; the shapes come from here."""

from __future__ import annotations

import math

from typing import Any

from tile_lang.ops import shape as tlshape
from tile_lang.ops import forms
from tile_lang.semantics.base import (
    Args, Block, SemanticError, Shape, applies, block_axis, broadcast, int_tuple, operand, pow2_shape, rule,
)


def broadcast_to(x: Block, shape: object) -> Shape:
    """The target shape: x's rank, with only size-1 axes expanded; a scalar splats to any shape,
    as in Triton."""
    target = pow2_shape(int_tuple(shape, "tl.broadcast_to", "shape"), "tl.broadcast_to")
    if x.rank and (len(target) != x.rank or any(s != d and s != 1 for s, d in zip(x.shape, target))):
        raise SemanticError(f"tl.broadcast_to: cannot broadcast a block of shape {list(x.shape)} to "
                            f"{list(target)} (the ranks must match and only size-1 axes expand)")
    return target


@applies(forms.subscript)
def index_parts(key: object, rank: int) -> tuple[object, ...]:
    """The parts of ``x[:, None]`` on a block of ``rank`` axes, as Triton reads them: the k-th
    index a None inserts a unit axis at position k of the result so far, a ``:`` keeps what is
    there (past the last axis too: ``s[None, None, :]`` of a scalar is ``(1, 1)``), and axes not
    indexed stay (``x[None]`` of ``(N,)`` is ``(1, N)``); any other index is Triton's
    "unsupported tensor index". The result has one ``:`` per axis, each None where it goes."""
    parts: list[object] = [slice(None)] * rank
    for position, part in enumerate(key if isinstance(key, tuple) else (key,)):
        if part is None:
            if position > len(parts):
                raise SemanticError(f"index {key!r}: None at position {position} is past the {len(parts)} axes "
                                    "there are before it")
            parts.insert(position, None)
        elif part != slice(None):
            raise SemanticError(f"unsupported tensor index: {part!r} (a block is indexed only with ':' and None)")
    return tuple(parts)


def expand_dims(x: Block, axis: object) -> tuple[int, ...]:
    """The new unit axes, as sorted axes of the result (negative ones count from its end)."""
    axes = int_tuple(axis, "tl.expand_dims", "axis")
    rank = x.rank + len(axes)
    new = sorted(block_axis(rank, ax, "tl.expand_dims") for ax in axes)
    if len(set(new)) != len(new):
        raise SemanticError(f"tl.expand_dims: duplicate axes, normalized axes = {new} (given {list(axes)})")
    return tuple(new)


def expanded(shape: Shape, axes: tuple[int, ...]) -> Shape:
    """``shape`` with unit axes inserted at ``axes`` (sorted axes of the result)."""
    out = list(shape)
    for ax in axes:
        out.insert(ax, 1)
    return tuple(out)


def _one_tuple(dims: object) -> object:
    """``dims`` as Triton's ``*dims`` takes them, ints or one tuple or list of ints: the ints."""
    if isinstance(dims, tuple) and len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return dims[0]
    return dims


def permute(x: Block, dims: object, what: str = "tl.permute") -> tuple[int, ...]:
    """The permutation (result axis i is x's axis order[i]), negative dims from the end."""
    given = int_tuple(_one_tuple(dims), what, "dims")
    order = tuple(block_axis(x.rank, d, what) for d in given) if len(given) == x.rank else ()
    if sorted(order) != list(range(x.rank)):
        raise SemanticError(f"{what}: dims {list(given)} are not a permutation of the {x.rank} axes of {x}")
    return order


def trans(x: Block, dims: object) -> tuple[int, ...]:
    """Without ``dims`` Triton 3.6 permutes with ``(1, 0)``: only 2-D blocks are accepted then
    (Triton 3.9 would swap the last two axes of a 3-D block, so that case is refused, not guessed)."""
    dims = _one_tuple(dims)
    if not dims:
        if x.rank != 2:
            raise SemanticError(f"tl.trans without dims transposes a 2-D block; got {x}, so pass dims explicitly")
        return (1, 0)
    return permute(x, dims, "tl.trans")


def permuted(shape: Shape, order: tuple[int, ...]) -> Shape:
    return tuple(shape[d] for d in order)


def reshape(x: Block, shape: object, what: str) -> Shape:
    """Row-major reshape: the same element count, dimensions powers of two."""
    target = int_tuple(shape, what, "shape")
    if math.prod(target) != math.prod(x.shape):
        raise SemanticError(f"{what}: cannot reshape a block of shape {list(x.shape)} "
                            f"({math.prod(x.shape)} elements) to {list(target)}")
    return pow2_shape(target, what)


def ravel(x: Block) -> Shape:
    return reshape(x, (math.prod(x.shape),), "tl.ravel")


def same_dtype(x: Block, y: Block, what: str) -> None:
    if x.dtype != y.dtype:
        raise SemanticError(f"{what} needs two blocks of the same dtype, got {x} and {y}")


def join(x: Block, y: Block, what: str) -> Shape:
    """``join``/``interleave``: one dtype; the shape both broadcast to (the result adds an axis of 2)."""
    same_dtype(x, y, what)
    return broadcast(x.shape, y.shape, what)


def split(x: Block) -> Shape:
    """The shape of each half: x without its last axis, which must have size 2."""
    if x.rank == 0 or x.shape[-1] != 2:
        raise SemanticError(f"tl.split needs a block whose last axis has size 2, got {x}")
    return x.shape[:-1]


def cat(x: Block, y: Block) -> Shape:
    """Concatenation along the first axis of two blocks of one shape and dtype (so the result
    stays a power of two)."""
    if x.rank == 0 or x.shape != y.shape:
        raise SemanticError(f"tl.cat needs two blocks of the same shape (rank >= 1), got {x} and {y}")
    same_dtype(x, y, "tl.cat")
    return (2 * x.shape[0], *x.shape[1:])


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


@rule(tlshape.broadcast)
def _broadcast(a: Args) -> dict[str, Any]:
    x = operand(a["input"])
    return {"shape": broadcast(x.shape, operand(a["other"], x).shape, "tl.broadcast")}


@rule(tlshape.broadcast_to)
def _broadcast_to(a: Args) -> dict[str, Any]:
    return {"shape": broadcast_to(operand(a["input"]), _one_tuple(a["shape"]))}


@rule(tlshape.expand_dims)
def _expand_dims(a: Args) -> dict[str, Any]:
    """``axis``: the new unit axes, sorted axes of the result."""
    return {"axis": expand_dims(operand(a["input"]), a["axis"])}


@rule(tlshape.permute)
def _permute(a: Args) -> dict[str, Any]:
    return {"dims": permute(operand(a["input"]), a["dims"])}


@rule(tlshape.trans)
def _trans(a: Args) -> dict[str, Any]:
    return {"dims": trans(operand(a["input"]), a["dims"])}


@rule(tlshape.reshape)
def _reshape(a: Args) -> dict[str, Any]:
    return {"shape": reshape(operand(a["input"]), a["shape"], "tl.reshape")}


@rule(tlshape.view)
def _view(a: Args) -> dict[str, Any]:
    return {"shape": reshape(operand(a["input"]), a["shape"], "tl.view")}


@rule(tlshape.ravel)
def _ravel(a: Args) -> dict[str, Any]:
    return {"shape": ravel(operand(a["x"]))}


def _joined(a: Args, what: str) -> dict[str, Any]:
    """``shape``: the one both operands broadcast to (the result adds an axis of 2)."""
    x = operand(a["a"])
    return {"shape": join(x, operand(a["b"], x), what)}


rule(tlshape.join)(lambda a: _joined(a, "tl.join"))
rule(tlshape.interleave)(lambda a: _joined(a, "tl.interleave"))


@rule(tlshape.split)
def _split(a: Args) -> dict[str, Any]:
    return {"shape": split(operand(a["a"]))}


@rule(tlshape.cat)
def _cat(a: Args) -> dict[str, Any]:
    x = operand(a["input"])
    return {"shape": cat(x, operand(a["other"], x))}
