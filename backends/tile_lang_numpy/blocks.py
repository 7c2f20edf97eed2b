"""Block pointers (``make_block_ptr``/``advance``) and tensor descriptors, as strided gathers.

Element ``i`` of a block lies at ``base + sum_d (offsets_d + i_d) * strides_d``. A block-pointer
load or store checks only the dims in ``boundary_check``: outside ``[0, shape_d)`` those read
the padding (poison for ``""``) or are not written; an element outside an unchecked dim is a
KernelError here (the GPU would touch whatever lies there). A tensor descriptor checks every
dim and pads with zeros. Every element actually touched is still bounds-checked against the
argument's memory, like any load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import BOOL, I64, DType
from tile_lang.ops import memory as tl_memory
from tile_lang.ops.memory import DESCRIPTOR_PADDINGS, PADDINGS, padding_fill
from tile_lang.tensor import Tensor
from tile_lang.errors import SemanticError
from tile_lang.ops import forms
from tile_lang.ops.memory import DESCRIPTOR_ALIGN
from tile_lang.seen import Tiled
from tile_lang.semantics.dispatch import apply

from tile_lang_numpy import addresses, values
from tile_lang_numpy.elementwise import convert
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.memory import gather, lanes, scatter
from tile_lang_numpy.values import Array, Memory, Pointers



@dataclass(frozen=True)
class BlockHandle:
    """A block of a strided tensor in one argument's memory. Per-program values have a leading
    program axis of P or 1: ``base`` is ``(P|1,)``, ``shape``/``strides``/``offsets`` are ``(P|1, ndim)``."""

    memory: Memory
    base: Array
    shape: Array
    strides: Array
    offsets: Array
    block_shape: tuple[int, ...]
    order: tuple[int, ...]
    fill: Array | None = None  # what a descriptor's out-of-bounds elements read as

    @property
    def ndim(self) -> int:
        return len(self.block_shape)

    def seen(self) -> Tiled:
        """What the rules see of this block."""
        return Tiled(self.memory.dtype, self.block_shape)


def merge_handles(mask: Array, new: BlockHandle, old: BlockHandle) -> BlockHandle | None:
    """``new`` for the programs in ``mask`` (a (P,) bool array), ``old`` for the others; None
    when they differ in more than per-program values."""
    if new.memory is not old.memory or new.block_shape != old.block_shape or new.order != old.order:
        return None

    def pick(x: Array, y: Array) -> Array:
        return np.where(mask.reshape((-1,) + (1,) * (max(x.ndim, y.ndim) - 1)), x, y)

    return replace(new, base=pick(new.base, old.base), shape=pick(new.shape, old.shape),
                   strides=pick(new.strides, old.strides), offsets=pick(new.offsets, old.offsets))


def handle_of(engine: Engine, x: object, kind: type[Any], what: str) -> BlockHandle:
    """The handle of a block pointer or descriptor made by this backend."""
    handle = getattr(x, "handle", None) if isinstance(x, kind) else None
    if not isinstance(handle, BlockHandle):
        raise engine.error(f"{what} needs a {kind.__name__}, got {type(x).__name__}")
    return handle


# ------------------------------------------------------------------------------ arguments


def _column(engine: Engine, x: object, what: str) -> Array:
    """One integer per program (``(P|1,)`` int64) from a Python int or an integer scalar."""
    if isinstance(x, Tensor) and x.block_shape == () and (x.type.is_int or x.type.is_bool):
        return values.array(x).astype(np.int64)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return np.array([int(x)], dtype=np.int64)
    raise engine.error(f"{what} must hold integers or integer scalars, got {x!r}")


def _vector(engine: Engine, items: object, ndim: int, what: str) -> Array:
    """A per-program vector of ``ndim`` integers, ``(P|1, ndim)``."""
    if not isinstance(items, (tuple, list)) or len(items) != ndim:
        raise engine.error(f"{what} must be a tuple of {ndim} integers, got {items!r}")
    columns = [_column(engine, x, what) for x in items]
    lead = max((c.shape[0] for c in columns), default=1)
    return np.stack([np.broadcast_to(c, (lead,)) for c in columns], axis=1).reshape(lead, ndim)


def _block_shape(engine: Engine, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The rule's block shape, noted as a block of the launch."""
    engine.note_block(math.prod(dims))
    return dims


def _base(engine: Engine, base: object, what: str) -> tuple[Pointers, Array]:
    """The memory and per-program element offset of a scalar pointer."""
    if not (isinstance(base, Tensor) and isinstance(base.handle, Pointers) and base.block_shape == ()):
        raise engine.error(f"the base of {what} must be a scalar pointer, got {base!r}")
    base = addresses.homed(engine, base)
    assert isinstance(base.handle, Pointers)
    if addresses.is_space(base.handle.memory) and (engine.active is None or bool(engine.active.any())):
        raise engine.error(f"the base of {what} is a pointer made from an integer, and the executing programs' "
                           "addresses do not all lie in one buffer or array: the numpy backend cannot address it")
    return base.handle, base.handle.offsets.astype(np.int64)


# ------------------------------------------------------------------------------ addressing


def _indices(h: BlockHandle) -> list[Array]:
    """Per dim, the tensor index of each block element along it, shaped to broadcast."""
    out = []
    for d, extent in enumerate(h.block_shape):
        shape = [1] * (h.ndim + 1)
        shape[d + 1] = extent
        start = h.offsets[:, d].reshape((-1,) + (1,) * h.ndim)
        out.append(start + np.arange(extent, dtype=np.int64).reshape(shape))
    return out


def _dim(h: BlockHandle, array: Array, d: int) -> Array:
    return array[:, d].reshape((-1,) + (1,) * h.ndim)


def resolve(engine: Engine, h: BlockHandle, checked: tuple[int, ...], what: str
            ) -> tuple[Tensor[Any, Any], Tensor[Any, Any]]:
    """The block's pointers and which elements are inside the checked dims; an element outside
    an unchecked dim is an error."""
    index = _indices(h)
    address = h.base.reshape((-1,) + (1,) * h.ndim)
    live: Array = np.ones((1,) * (h.ndim + 1), dtype=bool)
    for d, i in enumerate(index):
        address = address + i * _dim(h, h.strides, d)
        inside = (i >= 0) & (i < _dim(h, h.shape, d))
        if d in checked:
            live = live & inside
        elif bool((outside := engine.only_active(~inside)).any()):
            _outside(engine, h, d, i, ~outside, what)
    mask = np.broadcast_to(live, live.shape[:1] + h.block_shape)
    return values.make(Pointers(h.memory, address), h.memory.dtype.pointer_to()), values.make(mask, BOOL)


def _outside(engine: Engine, h: BlockHandle, d: int, index: Array, inside: Array, what: str) -> None:
    row, *lane = (int(v) for v in np.argwhere(~inside)[0])
    at = int(np.broadcast_to(index, inside.shape)[(row, *lane)])
    extent = int(h.shape[min(row, h.shape.shape[0] - 1), d])
    raise engine.error(
        f"{what}: program {engine.program_of(row)} reaches index {at} of dim {d}, whose extent is {extent}, "
        f"and dim {d} is not in boundary_check (add it, or fix the offsets)")


def _padding(engine: Engine, padding: object, dtype: DType, allowed: tuple[str, ...] = PADDINGS) -> Array | None:
    """The fill for out-of-bounds elements; None means poison."""
    try:
        fill = padding_fill(padding, dtype, allowed)
    except SemanticError as exc:
        raise engine.error(str(exc)) from None
    return None if fill is None else np.array(fill).astype(dtype.numpy)


def _read(engine: Engine, h: BlockHandle, checked: tuple[int, ...], fill: Array | None, what: str) -> Tensor[Any, Any]:
    ptrs, live = resolve(engine, h, checked, what)
    p, offs, mask = lanes(engine, ptrs, live, what)
    full = None if fill is None else np.broadcast_to(fill, offs.shape)
    return values.make(gather(engine, p, offs, mask, full), h.memory.dtype)


def _write(engine: Engine, h: BlockHandle, checked: tuple[int, ...], value: Tensor[Any, Any], what: str) -> None:
    ptrs, live = resolve(engine, h, checked, what)
    p, offs, mask = lanes(engine, ptrs, live, what)
    dtype = h.memory.dtype
    data = values.align(convert(values.array(value), value.type, dtype), value.ndim, h.ndim)
    full = (max(offs.shape[0], data.shape[0]),) + offs.shape[1:]
    scatter(engine, p, np.broadcast_to(offs, full), np.broadcast_to(mask, full), np.broadcast_to(data, full))


# ------------------------------------------------------------------------------ block pointers


@implements(tl.make_block_ptr)
def make_block_ptr(engine: Engine, a: Mapping[str, Any]) -> tl.BlockPointer[Any, Any]:
    block_shape = _block_shape(engine, a["block_shape"])
    ndim = len(block_shape)
    p, base = _base(engine, a["base"], "tl.make_block_ptr")
    order = a["order"]
    return tl.BlockPointer(BlockHandle(
        p.memory, base, _vector(engine, a["shape"], ndim, "shape"), _vector(engine, a["strides"], ndim, "strides"),
        _vector(engine, a["offsets"], ndim, "offsets"), block_shape, tuple(order)))


@implements(tl.advance)
def advance(engine: Engine, a: Mapping[str, Any]) -> tl.BlockPointer[Any, Any]:
    h = handle_of(engine, a["base"], tl.BlockPointer, "tl.advance")
    return tl.BlockPointer(replace(h, offsets=h.offsets + _vector(engine, a["offsets"], h.ndim, "offsets")))


def load_block(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """``tl.load`` through a block pointer."""
    h = handle_of(engine, a["pointer"], tl.BlockPointer, "tl.load")
    return _read(engine, h, a["boundary_check"], _padding(engine, a["padding_option"], h.memory.dtype), "block-pointer load")


def store_block(engine: Engine, a: Mapping[str, Any]) -> None:
    """``tl.store`` through a block pointer: the value has the block's shape (or is a scalar)
    and its dtype exactly, as in Triton (the rule checked)."""
    h = handle_of(engine, a["pointer"], tl.BlockPointer, "tl.store")
    _write(engine, h, a["boundary_check"], values.lift(a["value"], h.memory.dtype), "block-pointer store")


# ------------------------------------------------------------------------------ tensor descriptors


def _active_rows(engine: Engine, rows: Array) -> Array:
    """``rows`` (one per program, or one all programs share) of the programs executing now: a
    program masked off by control flow (an ``if`` it does not take) fails no check."""
    live = engine.only_active(np.ones(len(rows), dtype=bool))
    if len(live) != len(rows):
        return rows if bool(live.any()) else rows[:0]
    return rows[live]


def _check_descriptor(engine: Engine, p: Pointers, base: Array, strides: Array) -> None:
    """The TMA rules on runtime values: 16-byte aligned base, unit last stride, 16-byte multiple
    other strides (the block shape's, the rule checked)."""
    element = p.memory.dtype
    for row in np.unique(_active_rows(engine, strides), axis=0).tolist():  # as the compiler checks one program's
        apply(forms.descriptor_strides, tuple(int(s) for s in row), element)
    address = p.memory.flat.ctypes.data + base * element.itemsize
    misaligned = engine.only_active(address % DESCRIPTOR_ALIGN != 0)
    if bool(np.any(misaligned)):
        row = int(np.argmax(misaligned))
        raise engine.error(f"the base of a tensor descriptor must be {DESCRIPTOR_ALIGN}-byte aligned, but "
                           f"program {engine.program_of(row)} has element offset "
                           f"{int(np.broadcast_to(base, misaligned.shape)[row])} into {p.memory.param}")


@implements(tl.make_tensor_descriptor)
def make_tensor_descriptor(engine: Engine, a: Mapping[str, Any]) -> tl.TensorDescriptor[Any, Any]:
    block_shape = _block_shape(engine, a["block_shape"])
    ndim = len(block_shape)
    p, base = _base(engine, a["base"], "tl.make_tensor_descriptor")
    strides = _vector(engine, a["strides"], ndim, "strides")
    _check_descriptor(engine, p, base, strides)
    fill = _padding(engine, a["padding_option"], p.memory.dtype, DESCRIPTOR_PADDINGS)
    return tl.TensorDescriptor(BlockHandle(
        p.memory, base, _vector(engine, a["shape"], ndim, "shape"), strides,
        np.zeros((1, ndim), dtype=np.int64), block_shape, tuple(range(ndim - 1, -1, -1)), fill))


def _at(engine: Engine, a: Mapping[str, Any], what: str) -> BlockHandle:
    """The descriptor's handle moved to ``offsets`` (i32, as the rule checked)."""
    h = handle_of(engine, a["desc"], tl.TensorDescriptor, what)
    return replace(h, offsets=_vector(engine, a["offsets"], h.ndim, "offsets"))


@implements(tl_memory.descriptor_dims)
def descriptor_dims(engine: Engine, a: Mapping[str, Any]) -> tuple[Tensor[Any, Any], ...]:
    h = handle_of(engine, a["desc"], tl.TensorDescriptor, f"desc.{a['which']}")
    parts, dtype = getattr(h, a["which"]), a["dtype"]
    return tuple(values.make(convert(parts[:, d], I64, dtype), dtype) for d in range(h.ndim))


def _rows(engine: Engine, a: Mapping[str, Any], what: str) -> tuple[BlockHandle, Tensor[Any, Any], Tensor[Any, Any]]:
    """A row gather's or scatter's descriptor, and the pointers and in-bounds mask of its block:
    rows ``x_offsets``, columns from ``y_offset`` on (program axis first)."""
    h = handle_of(engine, a["desc"], tl.TensorDescriptor, what)
    rows = values.array(a["x_offsets"]).astype(np.int64)[:, :, None]
    columns = (_column(engine, a["y_offset"], "y_offset")[:, None] + np.arange(h.block_shape[1]))[:, None, :]
    dims = [x.reshape(-1, 1, 1) for x in (h.base, h.shape[:, 0], h.shape[:, 1], h.strides[:, 0], h.strides[:, 1])]
    base, height, width, row_stride, column_stride = dims
    address = base + rows * row_stride + columns * column_stride
    live = (rows >= 0) & (rows < height) & (columns >= 0) & (columns < width)
    full = (max(address.shape[0], live.shape[0]), *a["shape"])
    ptrs = values.make(Pointers(h.memory, np.broadcast_to(address, full)), h.memory.dtype.pointer_to())
    return h, ptrs, values.make(np.broadcast_to(live, full), BOOL)


@implements(tl_memory.descriptor_gather)
def descriptor_gather(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    h, ptrs, live = _rows(engine, a, "descriptor gather")
    p, offs, mask = lanes(engine, ptrs, live, "descriptor gather")
    full = None if h.fill is None else np.broadcast_to(h.fill, offs.shape)
    return values.make(gather(engine, p, offs, mask, full), h.memory.dtype)


@implements(tl_memory.descriptor_scatter)
def descriptor_scatter(engine: Engine, a: Mapping[str, Any]) -> None:
    h, ptrs, live = _rows(engine, a, "descriptor scatter")
    p, offs, mask = lanes(engine, ptrs, live, "descriptor scatter")
    value = a["value"]
    data = convert(values.array(value), value.type, h.memory.dtype)
    full = (max(offs.shape[0], data.shape[0]),) + offs.shape[1:]
    scatter(engine, p, np.broadcast_to(offs, full), np.broadcast_to(mask, full), np.broadcast_to(data, full))


@implements(tl_memory.descriptor_load)
def descriptor_load(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    h = _at(engine, a, "descriptor load")
    return _read(engine, h, tuple(range(h.ndim)), h.fill, "descriptor load")


@implements(tl_memory.descriptor_store)
def descriptor_store(engine: Engine, a: Mapping[str, Any]) -> None:
    h = _at(engine, a, "descriptor store")
    _write(engine, h, tuple(range(h.ndim)), values.lift(a["value"], h.memory.dtype), "descriptor store")
