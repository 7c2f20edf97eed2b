"""Lowerings of memory builtins: loads, stores and atomics through pointer blocks, and block
pointers and tensor descriptors, which become masked pointer-block loads and stores."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.compiler.aggregates import BlockInfo, Part, info
from tile_lang.compiler.builder import Builder, Value
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, BinaryFn, MemAttr, Node, Op, Scope, Sem, Type, constant
from tile_lang.compiler.lowering_base import LOWERINGS, Args, Context, Lowering, builtin_op, lowers
from tile_lang.dtypes import DType
from tile_lang.ops import atomic as tl_atomic, forms, memory as tl_memory
from tile_lang.ops.memory import DESCRIPTOR_PADDINGS, PADDINGS, padding_fill
from tile_lang.operators import BinaryOp
from tile_lang.semantics import SemanticError
from tile_lang.semantics.elementwise import wrapped_int
from tile_lang.semantics.dispatch import apply



def _mask(b: Builder, mask: Value | None, shape: tuple[int, ...]) -> Node | None:
    if mask is None:
        return None
    return b.broadcast_to(b.truth(b.to_node(mask)), shape)


def _pointer(c: Context, pointer: Any, mask: Any, what: str, extra: tuple[int, ...] = ()) -> Node:
    """The pointers broadcast with the mask and ``extra`` (an atomic's operands), in the
    reference's order, so a mismatch reads the same on both backends."""
    if not isinstance(pointer, Node) or not pointer.ty.dtype.is_pointer:
        raise c.error(f"expected a pointer or a block of pointers, got {pointer!r}")
    shape = pointer.ty.shape
    if isinstance(mask, Node):
        shape = apply(forms.broadcast, shape, mask.ty.shape, what)
    shape = apply(forms.broadcast, shape, extra, what)
    return pointer if shape == pointer.ty.shape else c.b.broadcast_to(pointer, shape)


def _element(ptr: Node) -> DType:
    element = ptr.ty.dtype.element
    assert element is not None
    return element


def load(c: Context, ptr: Node, mask: Node | None, other: Value | None, volatile: bool = False,
         box: BlockInfo | None = None, hints: tuple[str, str] = ("", "")) -> Node:
    """A load of ``ptr``'s block; masked-off lanes read ``other`` (undefined without one).
    ``box``: the tensor block ``ptr`` and ``mask`` were built from, kept as operands so that the
    copy engine can read the block whole (:class:`~tile_lang.compiler.ir.Box`)."""
    element = _element(ptr)
    fill = c.b.broadcast_to(_of_elements(c, other, element), ptr.ty.shape) if other is not None and mask is not None \
        else None
    args = tuple(x for x in (ptr, mask, fill) if x is not None)
    if box is not None:
        args += tuple(_scalar(c, x) for x in box.parts())
    attr = MemAttr(mask is not None, fill is not None, volatile=volatile, box=0 if box is None else box.ndim,
                   cache=hints[0], evict=hints[1])
    return c.b.emit(Op.LOAD, Type(element, ptr.ty.shape), args, attr)


def _scalar(c: Context, part: Part) -> Node:
    """A block's integer as a scalar node (i32 when a constant fits)."""
    if isinstance(part, Node):
        return part
    return c.b.to_node(part, dtypes.I32 if -(2**31) <= part < 2**31 else dtypes.I64)


def _of_elements(c: Context, value: Value, element: DType) -> Node:
    """``value`` (a load's ``other``, a stored value) as ``element`` lanes: a Python float meeting
    integer elements is an f32 constant converted to them, as Triton casts it (toward zero,
    saturating; the reference's conversion too), a Python int wrapping to them as Triton's cast
    of its constant does (``semantics.elementwise.scalar_fits``)."""
    if isinstance(value, float) and element.is_int:
        return c.b.cast(c.b.const(value, dtypes.F32), element)
    if isinstance(value, int) and not isinstance(value, bool) and element.is_int:
        return c.b.const(wrapped_int(value, element), element)
    return c.b.to_node(value, element)


def store(c: Context, ptr: Node, value: Value, mask: Node | None, hints: tuple[str, str] = ("", "")) -> None:
    node = _of_elements(c, value, _element(ptr))
    stored = c.b.broadcast_to(node, ptr.ty.shape)
    args = (ptr, stored) if mask is None else (ptr, stored, mask)
    c.b.emit(Op.STORE, None, args, MemAttr(mask is not None, cache=hints[0], evict=hints[1]))


@lowers(tl_memory.load)
def _load(c: Context, a: Args) -> Node:
    block = info(a["pointer"])
    if block is not None:
        return _load_block(c, block, a)
    other = a["other"]  # as in Triton and the reference, the pointers broadcast with it too
    ptr = _pointer(c, a["pointer"], a["mask"], "load", other.ty.shape if isinstance(other, Node) else ())
    return load(c, ptr, _mask(c.b, a["mask"], ptr.ty.shape), a["other"], bool(a["volatile"]), hints=_hints(a))


@lowers(tl_memory.store)
def _store(c: Context, a: Args) -> None:
    block = info(a["pointer"])
    if block is not None:
        _store_block(c, block, a)
        return
    ptr = _pointer(c, a["pointer"], a["mask"], "store")
    store(c, ptr, a["value"], _mask(c.b, a["mask"], ptr.ty.shape), _hints(a))


# ---------------------------------------------------------------- atomics


def atomic_lowering(name: str, fn: AtomicFn) -> Lowering:
    """Pointers, operands and mask broadcast together: a scalar pointer with a block of values
    updates the one address once per lane."""
    def lower(c: Context, a: Args) -> Node:
        what = f"tl.{name}"
        element = _element(_pointer(c, a["pointer"], None, what))
        values = [c.b.to_node(a[k], element) for k in (("cmp", "val") if fn is AtomicFn.CAS else ("val",))]
        extra = functools.reduce(lambda x, y: apply(forms.broadcast, x, y, what), (v.ty.shape for v in values))
        ptr = _pointer(c, a["pointer"], a.get("mask"), what, extra)
        shape = ptr.ty.shape
        operands = [c.b.broadcast_to(v, shape) for v in values]
        mask = _mask(c.b, a.get("mask"), ptr.ty.shape)
        args = (ptr, *operands) + ((mask,) if mask is not None else ())
        return c.b.emit(Op.ATOMIC, Type(element, ptr.ty.shape), args, AtomicAttr(fn, Sem(a["sem"]), Scope(a["scope"]), mask is not None))
    return lower


# The ATOMIC family and atomic_cas (semantics checks the element type and the ordering): each
# builtin's IR function.
ATOMICS: dict[object, AtomicFn] = {
    tl_atomic.atomic_add: AtomicFn.ADD, tl_atomic.atomic_max: AtomicFn.MAX, tl_atomic.atomic_min: AtomicFn.MIN, tl_atomic.atomic_and: AtomicFn.AND,
    tl_atomic.atomic_or: AtomicFn.OR, tl_atomic.atomic_xor: AtomicFn.XOR, tl_atomic.atomic_xchg: AtomicFn.XCHG, tl_atomic.atomic_cas: AtomicFn.CAS,
}
for _atomic, _atomic_fn in ATOMICS.items():
    LOWERINGS[builtin_op(_atomic)] = atomic_lowering(builtin_op(_atomic).name, _atomic_fn)


# ---------------------------------------------------------------- block pointers and tensor descriptors


def _integers(c: Context, items: Any, ndim: int, what: str) -> tuple[Part, ...]:
    """One integer (a scalar node or a constant) per dim."""
    if not isinstance(items, (tuple, list)) or len(items) != ndim:
        raise c.error(f"{what} must be a tuple of {ndim} integers, got {items!r}")
    for x in items:
        ok = (x.ty.is_scalar and (x.ty.dtype.is_int or x.ty.dtype.is_bool)) if isinstance(x, Node) else (
            isinstance(x, int) and not isinstance(x, bool))
        if not ok:
            raise c.error(f"{what} must hold integers or integer scalars, got {x!r}")
    return tuple(items)


def _base(c: Context, base: Any, what: str) -> Node:
    if not isinstance(base, Node) or not base.ty.is_scalar or not base.ty.dtype.is_pointer:
        raise c.error(f"the base of {what} must be a scalar pointer, got {base!r}")
    return base


def _index(c: Context, block: BlockInfo, d: int) -> Node:
    """The tensor index of each block element along dim ``d``, shaped to broadcast (i32, or i64
    when the dim's stride is a runtime value, as Triton's 64-bit strides)."""
    extent = block.block_shape[d]
    start = block.offsets[d]
    index = c.b.arange(0, extent)
    if not (isinstance(start, int) and start == 0):
        index = c.b.binary(BinaryFn.ADD, start, index)
    if isinstance(block.strides[d], Node):
        index = c.b.cast(index, dtypes.promote(index.ty.dtype, dtypes.I64))
    dims = tuple(extent if i == d else 1 for i in range(block.ndim))
    return c.b.reshape(index, dims)


def _resolve(c: Context, block: BlockInfo, checked: tuple[int, ...]) -> tuple[Node, Node | None]:
    """The block's pointers, and which elements lie inside the checked dims."""
    offset: Value | None = None
    mask: Node | None = None
    for d in range(block.ndim):
        index = _index(c, block, d)
        stride = block.strides[d]
        term = index if isinstance(stride, int) and stride == 1 else c.b.binary_op(BinaryOp.MUL, index, stride)
        offset = term if offset is None else c.b.binary_op(BinaryOp.ADD, offset, term)
        if d in checked:
            inside = c.b.binary(BinaryFn.AND, c.b.binary(BinaryFn.GE, index, 0),
                                c.b.binary(BinaryFn.LT, index, block.shape[d]))
            mask = inside if mask is None else c.b.binary(BinaryFn.AND, mask, inside)
    full = block.block_shape
    assert offset is not None
    ptrs = c.b.broadcast_to(c.b.pointer_arith(BinaryOp.ADD, block.base, offset), full)
    return ptrs, None if mask is None else c.b.broadcast_to(mask, full)


def _padding(c: Context, padding: Any, dtype: DType, allowed: tuple[str, ...] = PADDINGS) -> float | None:
    """The fill of out-of-bounds elements; None leaves them undefined."""
    try:
        return padding_fill(padding, dtype, allowed)
    except SemanticError as exc:
        raise c.error(str(exc)) from None


@lowers(tl_memory.make_block_ptr)
def _make_block_ptr(c: Context, a: Args) -> tl_memory.BlockPointer[Any, Any]:
    block_shape = a["block_shape"]
    ndim = len(block_shape)
    return tl_memory.BlockPointer(BlockInfo(
        _base(c, a["base"], "tl.make_block_ptr"), _integers(c, a["shape"], ndim, "shape"),
        _integers(c, a["strides"], ndim, "strides"), _integers(c, a["offsets"], ndim, "offsets"), block_shape))


def _block_arg(c: Context, value: Any, kind: type[Any], what: str) -> BlockInfo:
    block = info(value)
    if block is None or not isinstance(value, kind):
        raise c.error(f"{what} needs a {kind.__name__}, got {type(value).__name__}")
    return block


@lowers(tl_memory.advance)
def _advance(c: Context, a: Args) -> tl_memory.BlockPointer[Any, Any]:
    block = _block_arg(c, a["base"], tl_memory.BlockPointer, "tl.advance")
    deltas = _integers(c, a["offsets"], block.ndim, "offsets")
    moved = tuple(o if isinstance(d, int) and d == 0 else c.b.binary_op(BinaryOp.ADD, o, d)
                  for o, d in zip(block.offsets, deltas))
    return tl_memory.BlockPointer(BlockInfo(block.base, block.shape, block.strides, moved, block.block_shape))


def _load_block(c: Context, block: BlockInfo, a: Args) -> Node:
    fill = _padding(c, a["padding_option"], _element(block.base))
    ptrs, mask = _resolve(c, block, a["boundary_check"])
    return load(c, ptrs, mask, fill, bool(a["volatile"]), block, _hints(a))


def _store_block(c: Context, block: BlockInfo, a: Args) -> None:
    """The value has the block's shape (or is a scalar) and exactly its dtype, as in Triton (the
    rule checked)."""
    ptrs, mask = _resolve(c, block, a["boundary_check"])
    store(c, ptrs, a["value"], mask, _hints(a))


def _hints(a: Args) -> tuple[str, str]:
    """The cache hints, as the rule checked them."""
    return a["cache_modifier"], a["eviction_policy"]


def _check_strides(base: Node, strides: tuple[Part, ...]) -> None:
    """The TMA rules that are known when compiling: unit last stride, 16-byte multiple other
    strides (the block shape's, the rule checked; the base's alignment is the caller's). A stride
    is known when it is a constant, an int argument specialised to 1 included."""
    apply(forms.descriptor_strides, tuple(_known_int(s) for s in strides), _element(base))


def _known_int(part: Part) -> int | None:
    """A block's integer as known when compiling (None: a runtime value)."""
    value = constant(part) if isinstance(part, Node) else part
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@lowers(tl_memory.make_tensor_descriptor)
def _make_tensor_descriptor(c: Context, a: Args) -> tl_memory.TensorDescriptor[Any, Any]:
    block_shape = a["block_shape"]
    ndim = len(block_shape)
    base = _base(c, a["base"], "tl.make_tensor_descriptor")
    strides = _integers(c, a["strides"], ndim, "strides")
    _check_strides(base, strides)
    element = base.ty.dtype.element
    assert element is not None
    fill = _padding(c, a["padding_option"], element, DESCRIPTOR_PADDINGS)
    return tl_memory.TensorDescriptor(BlockInfo(base, _integers(c, a["shape"], ndim, "shape"), strides, (0,) * ndim,
                                         block_shape, fill or 0))


def _at(c: Context, a: Args, what: str) -> BlockInfo:
    """The descriptor's block moved to ``offsets`` (32-bit integers, as the rule checked)."""
    block = _block_arg(c, a["desc"], tl_memory.TensorDescriptor, what)
    return replace(block, offsets=_integers(c, a["offsets"], block.ndim, "offsets"))


@lowers(tl_memory.descriptor_dims)
def _descriptor_dims(c: Context, a: Args) -> tuple[Node, ...]:
    """The shape or strides the descriptor was made of, each a scalar of the rule's dtype."""
    block = _block_arg(c, a["desc"], tl_memory.TensorDescriptor, f"desc.{a['which']}")
    return tuple(c.b.to_node(part, a["dtype"]) for part in getattr(block, a["which"]))


def _rows(c: Context, a: Args, what: str) -> tuple[BlockInfo, Node, Node]:
    """A row gather's or scatter's descriptor, and the pointers and in-bounds mask of its block:
    rows ``x_offsets``, columns from ``y_offset`` on (64-bit where a stride is a runtime value)."""
    block = _block_arg(c, a["desc"], tl_memory.TensorDescriptor, what)
    rows = c.b.expand_dims(a["x_offsets"], 1)
    columns = c.b.expand_dims(c.b.binary(BinaryFn.ADD, a["y_offset"], c.b.arange(0, block.block_shape[1])), 0)
    offset: Value | None = None
    mask: Node | None = None
    for index, stride, extent in zip((rows, columns), block.strides, block.shape):
        if isinstance(stride, Node):
            index = c.b.cast(index, dtypes.promote(index.ty.dtype, dtypes.I64))
        term = index if isinstance(stride, int) and stride == 1 else c.b.binary_op(BinaryOp.MUL, index, stride)
        offset = term if offset is None else c.b.binary_op(BinaryOp.ADD, offset, term)
        inside = c.b.binary(BinaryFn.AND, c.b.binary(BinaryFn.GE, index, 0), c.b.binary(BinaryFn.LT, index, extent))
        mask = inside if mask is None else c.b.binary(BinaryFn.AND, mask, inside)
    assert offset is not None and mask is not None
    full = a["shape"]
    return block, c.b.broadcast_to(c.b.pointer_arith(BinaryOp.ADD, block.base, offset), full), c.b.broadcast_to(mask, full)


@lowers(tl_memory.descriptor_gather)
def _descriptor_gather(c: Context, a: Args) -> Node:
    """Out-of-bounds elements read as the descriptor's padding."""
    block, ptrs, mask = _rows(c, a, "descriptor gather")
    return load(c, ptrs, mask, block.fill)


@lowers(tl_memory.descriptor_scatter)
def _descriptor_scatter(c: Context, a: Args) -> None:
    _, ptrs, mask = _rows(c, a, "descriptor scatter")
    store(c, ptrs, a["value"], mask)


@lowers(tl_memory.descriptor_load)
def _descriptor_load(c: Context, a: Args) -> Node:
    """Every dim is checked; out-of-bounds elements read as the descriptor's padding."""
    block = _at(c, a, "descriptor load")
    ptrs, mask = _resolve(c, block, tuple(range(block.ndim)))
    return load(c, ptrs, mask, block.fill, box=block)


@lowers(tl_memory.descriptor_store)
def _descriptor_store(c: Context, a: Args) -> None:
    block = _at(c, a, "descriptor store")
    ptrs, mask = _resolve(c, block, tuple(range(block.ndim)))
    store(c, ptrs, a["value"], mask)
