"""Lowerings of memory builtins: loads, stores and atomics through pointer blocks, and block
pointers and tensor descriptors, which become masked pointer-block loads and stores."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import tile_lang as tl
from tile_lang import dtypes
from tile_lang.compiler.aggregates import BlockInfo, Part, info
from tile_lang.compiler.builder import Builder, Value, broadcast_shapes
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, BinaryFn, MemAttr, Node, Op, Scope, Sem, Type
from tile_lang.compiler.lowering import LOWERINGS, Args, Context, Lowering, builtin_op, lowers, pow2_shape
from tile_lang.dtypes import DType
from tile_lang.ops import memory as tl_memory
from tile_lang.ops.memory import DESCRIPTOR_PADDINGS, PADDINGS, padding_fill
from tile_lang.operators import BinaryOp

MAX_DESCRIPTOR_RANK = 5
DESCRIPTOR_ALIGN = 16  # bytes: every stride but the last, and the last block dim's extent


def _mask(b: Builder, mask: Value | None, shape: tuple[int, ...]) -> Node | None:
    if mask is None:
        return None
    return b.broadcast_to(b.truth(b.to_node(mask)), shape)


def _pointer(c: Context, pointer: Any, mask: Any) -> Node:
    if not isinstance(pointer, Node) or not pointer.ty.dtype.is_pointer:
        raise c.error(f"expected a pointer or a block of pointers, got {pointer!r}")
    if isinstance(mask, Node) and len(mask.ty.shape) > len(pointer.ty.shape):
        return c.b.broadcast_to(pointer, mask.ty.shape)
    return pointer


def _element(ptr: Node) -> DType:
    element = ptr.ty.dtype.element
    assert element is not None
    return element


def load(c: Context, ptr: Node, mask: Node | None, other: Value | None, volatile: bool = False) -> Node:
    """A load of ``ptr``'s block; masked-off lanes read ``other`` (undefined without one)."""
    element = _element(ptr)
    fill = c.b.broadcast_to(c.b.to_node(other, element), ptr.ty.shape) if other is not None and mask is not None \
        else None
    args = tuple(x for x in (ptr, mask, fill) if x is not None)
    attr = MemAttr(mask is not None, fill is not None, volatile=volatile)
    return c.b.emit(Op.LOAD, Type(element, ptr.ty.shape), args, attr)


def store(c: Context, ptr: Node, value: Value, mask: Node | None) -> None:
    stored = c.b.broadcast_to(c.b.to_node(value, _element(ptr)), ptr.ty.shape)
    args = (ptr, stored) if mask is None else (ptr, stored, mask)
    c.b.emit(Op.STORE, None, args, MemAttr(mask is not None))


@lowers(tl.load)
def _load(c: Context, a: Args) -> Node:
    block = info(a["pointer"])
    if block is not None:
        return _load_block(c, block, a)
    ptr = _pointer(c, a["pointer"], a["mask"])
    return load(c, ptr, _mask(c.b, a["mask"], ptr.ty.shape), a["other"], bool(a["volatile"]))


@lowers(tl.store)
def _store(c: Context, a: Args) -> None:
    block = info(a["pointer"])
    if block is not None:
        _store_block(c, block, a)
        return
    ptr = _pointer(c, a["pointer"], a["mask"])
    store(c, ptr, a["value"], _mask(c.b, a["mask"], ptr.ty.shape))


# ---------------------------------------------------------------- atomics


def _check_atomic(c: Context, fn: AtomicFn, dtype: DType) -> None:
    """Triton's element types: 32/64-bit ints and floats; f16/bf16 only for add; floats not for
    bitwise ops; any 16-bit or wider type for cas."""
    if fn is AtomicFn.CAS:
        ok = dtype.bits in (16, 32, 64)
    elif dtype in (dtypes.F16, dtypes.BF16):
        ok = fn is AtomicFn.ADD
    else:
        ok = dtype.bits in (32, 64) and not (dtype.is_float and fn in (AtomicFn.AND, AtomicFn.OR, AtomicFn.XOR))
    if not ok:
        name = "xchg" if fn is AtomicFn.XCHG else fn.value
        raise c.error(f"tl.atomic_{name} does not support {dtype!r} elements")


def _ordering(c: Context, a: Args) -> tuple[Sem, Scope]:
    sems, scopes = [s.value for s in Sem], [s.value for s in Scope]
    if a["sem"] not in (None, *sems):
        raise c.error(f"sem must be one of {', '.join(map(repr, sems))}, got {a['sem']!r}")
    if a["scope"] not in (None, *scopes):
        raise c.error(f"scope must be one of {', '.join(map(repr, scopes))}, got {a['scope']!r}")
    return Sem(a["sem"] or "acq_rel"), Scope(a["scope"] or "gpu")


def _atomic_lowering(fn: AtomicFn) -> Lowering:
    """Pointers, operands and mask broadcast together: a scalar pointer with a block of values
    updates the one address once per lane."""
    def lower(c: Context, a: Args) -> Node:
        ptr = _pointer(c, a["pointer"], a.get("mask"))
        element = _element(ptr)
        _check_atomic(c, fn, element)
        sem, scope = _ordering(c, a)
        values = [c.b.to_node(a[k], element) for k in (("cmp", "val") if fn is AtomicFn.CAS else ("val",))]
        shape = ptr.ty.shape
        for v in values:
            shape = broadcast_shapes(shape, v.ty.shape)
        ptr = c.b.broadcast_to(ptr, shape)
        operands = [c.b.broadcast_to(v, shape) for v in values]
        mask = _mask(c.b, a.get("mask"), ptr.ty.shape)
        args = (ptr, *operands) + ((mask,) if mask is not None else ())
        return c.b.emit(Op.ATOMIC, Type(element, ptr.ty.shape), args, AtomicAttr(fn, sem, scope, mask is not None))
    return lower


_ATOMICS: dict[object, AtomicFn] = {
    tl.atomic_add: AtomicFn.ADD, tl.atomic_max: AtomicFn.MAX, tl.atomic_min: AtomicFn.MIN, tl.atomic_and: AtomicFn.AND,
    tl.atomic_or: AtomicFn.OR, tl.atomic_xor: AtomicFn.XOR, tl.atomic_xchg: AtomicFn.XCHG, tl.atomic_cas: AtomicFn.CAS,
}
for _atomic, _atomic_fn in _ATOMICS.items():
    LOWERINGS[builtin_op(_atomic)] = _atomic_lowering(_atomic_fn)


# ---------------------------------------------------------------- block pointers and tensor descriptors


def _block_shape(c: Context, block_shape: Any, what: str) -> tuple[int, ...]:
    if not isinstance(block_shape, (tuple, list)) or not block_shape:
        raise c.error(f"{what}: block_shape must be a non-empty tuple of constexpr ints, got {block_shape!r}")
    if any(isinstance(d, Node) or not isinstance(d, int) for d in block_shape):
        raise c.error(f"{what}: block_shape must hold constexpr ints, got {block_shape!r}")
    return pow2_shape(c, tuple(block_shape), what)


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
    ptrs = c.b.broadcast_to(c.b.binary(BinaryFn.ADD, block.base, offset), full)
    return ptrs, None if mask is None else c.b.broadcast_to(mask, full)


def _boundary_dims(c: Context, boundary_check: Any, ndim: int) -> tuple[int, ...]:
    dims = boundary_check if isinstance(boundary_check, (tuple, list)) else (boundary_check,)
    if any(not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < ndim for d in dims):
        raise c.error(f"boundary_check must list dims in [0, {ndim}), got {boundary_check!r}")
    return tuple(dims)


def _padding(c: Context, padding: Any, dtype: DType, allowed: tuple[str, ...] = PADDINGS) -> float | None:
    """The fill of out-of-bounds elements; None leaves them undefined."""
    try:
        return padding_fill(padding, dtype, allowed)
    except ValueError as exc:
        raise c.error(str(exc)) from None


@lowers(tl.make_block_ptr)
def _make_block_ptr(c: Context, a: Args) -> tl.BlockPointer[Any, Any]:
    block_shape = _block_shape(c, a["block_shape"], "tl.make_block_ptr")
    ndim = len(block_shape)
    order = a["order"]
    if not isinstance(order, (tuple, list)) or sorted(order) != list(range(ndim)):
        raise c.error(f"order must be a permutation of range({ndim}), got {order!r}")
    return tl.BlockPointer(BlockInfo(
        _base(c, a["base"], "tl.make_block_ptr"), _integers(c, a["shape"], ndim, "shape"),
        _integers(c, a["strides"], ndim, "strides"), _integers(c, a["offsets"], ndim, "offsets"), block_shape))


def _block_arg(c: Context, value: Any, kind: type[Any], what: str) -> BlockInfo:
    block = info(value)
    if block is None or not isinstance(value, kind):
        raise c.error(f"{what} needs a {kind.__name__}, got {type(value).__name__}")
    return block


@lowers(tl.advance)
def _advance(c: Context, a: Args) -> tl.BlockPointer[Any, Any]:
    block = _block_arg(c, a["base"], tl.BlockPointer, "tl.advance")
    deltas = _integers(c, a["offsets"], block.ndim, "offsets")
    moved = tuple(o if isinstance(d, int) and d == 0 else c.b.binary_op(BinaryOp.ADD, o, d)
                  for o, d in zip(block.offsets, deltas))
    return tl.BlockPointer(BlockInfo(block.base, block.shape, block.strides, moved, block.block_shape))


def _load_block(c: Context, block: BlockInfo, a: Args) -> Node:
    if a["mask"] is not None or a["other"] is not None:
        raise c.error("a block-pointer load takes no mask or other; use boundary_check and padding_option")
    checked = _boundary_dims(c, a["boundary_check"], block.ndim)
    fill = _padding(c, a["padding_option"], _element(block.base))
    ptrs, mask = _resolve(c, block, checked)
    return load(c, ptrs, mask, fill, bool(a["volatile"]))


def _store_block(c: Context, block: BlockInfo, a: Args) -> None:
    """The value has the block's shape (or is a scalar) and exactly its dtype, as in Triton."""
    if a["mask"] is not None:
        raise c.error("a block-pointer store takes no mask; use boundary_check")
    dtype = _element(block.base)
    value = a["value"]
    if isinstance(value, Node) and value.ty.dtype != dtype:
        raise c.error(f"a block-pointer store needs {dtype!r} values, got {value.ty} (convert with .to())")
    if isinstance(value, Node) and value.ty.shape not in ((), block.block_shape):
        raise c.error(f"a block-pointer store needs a value of shape {list(block.block_shape)}, got {value.ty}")
    ptrs, mask = _resolve(c, block, _boundary_dims(c, a["boundary_check"], block.ndim))
    store(c, ptrs, value, mask)


def _check_descriptor(c: Context, base: Node, strides: tuple[Part, ...], block_shape: tuple[int, ...]) -> None:
    """The TMA rules that are known when compiling: unit last stride, 16-byte multiple other
    strides, at least 16 bytes along the last block dim (the base's alignment is the caller's)."""
    size = _element(base).itemsize
    if not (isinstance(strides[-1], int) and strides[-1] == 1):
        raise c.error(f"the last stride of a tensor descriptor must be 1, got {strides[-1]!r}")
    for d, stride in enumerate(strides[:-1]):
        if isinstance(stride, int) and stride * size % DESCRIPTOR_ALIGN:
            raise c.error(f"stride {d} of a tensor descriptor is {stride} elements = {stride * size} bytes, "
                          f"not a multiple of {DESCRIPTOR_ALIGN} bytes")
    if block_shape[-1] * size < DESCRIPTOR_ALIGN:
        raise c.error(f"the last block dim of a tensor descriptor must span at least {DESCRIPTOR_ALIGN} bytes, "
                      f"got {block_shape[-1]} x {size} bytes")


@lowers(tl.make_tensor_descriptor)
def _make_tensor_descriptor(c: Context, a: Args) -> tl.TensorDescriptor[Any, Any]:
    block_shape = _block_shape(c, a["block_shape"], "tl.make_tensor_descriptor")
    ndim = len(block_shape)
    if ndim > MAX_DESCRIPTOR_RANK:
        raise c.error(f"a tensor descriptor has 1 to {MAX_DESCRIPTOR_RANK} dims, got {ndim}")
    base = _base(c, a["base"], "tl.make_tensor_descriptor")
    strides = _integers(c, a["strides"], ndim, "strides")
    _check_descriptor(c, base, strides, block_shape)
    element = base.ty.dtype.element
    assert element is not None
    fill = _padding(c, a["padding_option"], element, DESCRIPTOR_PADDINGS)
    return tl.TensorDescriptor(BlockInfo(base, _integers(c, a["shape"], ndim, "shape"), strides, (0,) * ndim,
                                         block_shape, fill or 0))


def _at(c: Context, a: Args, what: str) -> BlockInfo:
    """The descriptor's block moved to ``offsets`` (32-bit integers, as Triton requires)."""
    block = _block_arg(c, a["desc"], tl.TensorDescriptor, what)
    offsets = _integers(c, a["offsets"], block.ndim, "offsets")
    if any(isinstance(o, Node) and o.ty.dtype.bits > 32 for o in offsets):
        raise c.error(f"{what}: offsets must be 32-bit integers (add .to(tl.i32))")
    return replace(block, offsets=offsets)


@lowers(tl_memory.descriptor_load)
def _descriptor_load(c: Context, a: Args) -> Node:
    """Every dim is checked; out-of-bounds elements read as the descriptor's padding."""
    block = _at(c, a, "descriptor load")
    ptrs, mask = _resolve(c, block, tuple(range(block.ndim)))
    return load(c, ptrs, mask, block.fill)


@lowers(tl_memory.descriptor_store)
def _descriptor_store(c: Context, a: Args) -> None:
    block = _at(c, a, "descriptor store")
    value = a["value"]
    if not isinstance(value, Node) or value.ty.shape != block.block_shape:
        raise c.error(f"a descriptor store needs a value of shape {list(block.block_shape)}, got {value!r}")
    ptrs, mask = _resolve(c, block, tuple(range(block.ndim)))
    store(c, ptrs, value, mask)
