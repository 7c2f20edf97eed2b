"""Memory rules: atomics' element types and orderings, block pointers and tensor descriptors.

Rules about runtime values (bounds, a descriptor base's alignment) stay with the backend that
sees them; a stride unknown when compiling is checked per program by the reference only.
"""

from __future__ import annotations

from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.builtin import Family
from tile_lang.dtypes import DType
from tile_lang.ops import atomic as tlatomic, memory as tlmemory
from tile_lang.ops import forms
from tile_lang.semantics.base import (
    Args, Block, SemanticError, Shape, Tiled, applies, broadcast, constexpr_int, family_rule, operand, pow2_shape, rule,
    shown,
)
from tile_lang.semantics.elementwise import pointer_cast, scalar_fits

SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("gpu", "cta", "sys")
BITWISE_ATOMICS = ("atomic_and", "atomic_or", "atomic_xor")
MAX_DESCRIPTOR_RANK = 5


def atomic_element(name: str, dtype: DType) -> None:
    """Triton's element types for ``tl.<name>``: 32/64-bit ints and floats; f16/bf16 only for add;
    floats not for bitwise ops; any 16-bit or wider type for cas."""
    if name == "atomic_cas":
        ok = dtype.bits in (16, 32, 64)
    elif dtype in (dtypes.F16, dtypes.BF16):
        ok = name == "atomic_add"
    else:
        ok = dtype.bits in (32, 64) and not (dtype.is_float and name in BITWISE_ATOMICS)
    if not ok:
        raise SemanticError(f"tl.{name} does not support {dtype!r} elements")


def ordering(name: str, sem: object, scope: object) -> tuple[str, str]:
    """An atomic's memory ordering and scope (Triton's spellings; defaults acq_rel and gpu)."""
    if sem not in (None, *SEMS):
        raise SemanticError(f"tl.{name}: sem must be one of {', '.join(map(repr, SEMS))}, got {sem!r}")
    if scope not in (None, *SCOPES):
        raise SemanticError(f"tl.{name}: scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    return str(sem or "acq_rel"), str(scope or "gpu")


LOAD_CACHE = (".ca", ".cg", ".cv")  # Triton's cache modifiers of a load, of a store
STORE_CACHE = (".wb", ".cg", ".cs", ".wt")
EVICTION = ("evict_first", "evict_last", "evict_normal")


def cache_hints(what: str, cache_modifier: object, eviction_policy: object) -> tuple[str, str]:
    """A load's or store's cache modifier and eviction policy (``""``: none), as Triton accepts them."""
    allowed = LOAD_CACHE if what == "load" else STORE_CACHE
    for name, value, choices in (("cache_modifier", cache_modifier, allowed), ("eviction_policy", eviction_policy, EVICTION)):
        if value != "" and value not in choices:
            raise SemanticError(f"tl.{what}: {name} {value!r} is not one of {', '.join(map(repr, choices))} (or '')")
    return str(cache_modifier), str(eviction_policy)


def stored(pointer: Shape, value: Shape) -> None:
    """A stored value broadcasts to the pointer block without growing it (Triton broadcasts the
    value to the pointers' shape)."""
    if value == pointer or not value:
        return
    try:
        fits = broadcast(pointer, value) == pointer
    except SemanticError:
        fits = False
    if not fits:
        raise SemanticError(f"a value block of shape {list(value)} does not fit the pointer block of shape "
                            f"{list(pointer)} it is stored through")


def block_shape(block_shape: object, what: str) -> tuple[int, ...]:
    """The block shape of a block pointer or descriptor: a non-empty tuple of constexpr powers of two."""
    if not isinstance(block_shape, (tuple, list)) or not block_shape:
        raise SemanticError(f"{what}: block_shape must be a non-empty tuple of constexpr ints, got {shown(block_shape)}")
    return pow2_shape(tuple(constexpr_int(d, what, "block_shape") for d in block_shape), what)


def order(order: object, ndim: int) -> tuple[int, ...]:
    """make_block_ptr's ``order``: a permutation of the dims."""
    if not isinstance(order, (tuple, list)) or sorted(order) != list(range(ndim)):
        raise SemanticError(f"order must be a permutation of range({ndim}), got {order!r}")
    return tuple(order)


def boundary_dims(boundary_check: object, ndim: int) -> tuple[int, ...]:
    """The dims a block-pointer access checks against the tensor's shape."""
    dims = boundary_check if isinstance(boundary_check, (tuple, list)) else (boundary_check,)
    if any(not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < ndim for d in dims):
        raise SemanticError(f"boundary_check must list dims in [0, {ndim}), got {boundary_check!r}")
    return tuple(dims)


def block_load(mask: object, other: object) -> None:
    if mask is not None or other is not None:
        raise SemanticError("a block-pointer load takes no mask or other; use boundary_check and padding_option")


def block_store(mask: object, element: DType, value: DType | None, shape: tuple[int, ...],
                block: tuple[int, ...]) -> None:
    """A block-pointer store's value has the block's shape (or is a scalar) and exactly its
    dtype (``value`` None: a Python number, converted), as in Triton."""
    if mask is not None:
        raise SemanticError("a block-pointer store takes no mask; use boundary_check")
    if value is not None and value != element:
        raise SemanticError(f"a block-pointer store needs {element!r} values, got {value!r} (convert with .to())")
    if shape not in ((), block):
        raise SemanticError(f"a block-pointer store needs a value of shape {list(block)}, got shape {list(shape)}")


def descriptor_block(block: tuple[int, ...], element: DType) -> None:
    """A tensor descriptor has 1 to 5 dims and spans at least 16 bytes along the last."""
    if len(block) > MAX_DESCRIPTOR_RANK:
        raise SemanticError(f"a tensor descriptor has 1 to {MAX_DESCRIPTOR_RANK} dims, got {len(block)}")
    if block[-1] * element.itemsize < tlmemory.DESCRIPTOR_ALIGN:
        raise SemanticError(f"Descriptor block shape must have at least {tlmemory.DESCRIPTOR_ALIGN} bytes in the last "
                            f"dimension (the TMA moves whole 16-byte pieces of a row), got {block[-1]} x "
                            f"{element.itemsize} bytes")


@applies(forms.descriptor_strides)
def descriptor_strides(strides: tuple[int | None, ...], element: DType) -> None:
    """The TMA's strides: the last is 1, the others are multiples of 16 bytes (None: a stride
    known only at run time, which the compiler cannot check; an int argument launched as 1 is
    known, as Triton specialises it)."""
    if strides[-1] != 1:
        shown = "a runtime value" if strides[-1] is None else strides[-1]
        raise SemanticError(f"the last stride of a tensor descriptor must be 1, got {shown}")
    for d, stride in enumerate(strides[:-1]):
        if stride is not None and stride * element.itemsize % tlmemory.DESCRIPTOR_ALIGN:
            raise SemanticError(f"stride {d} of a tensor descriptor is {stride} elements = "
                                f"{stride * element.itemsize} bytes, not a multiple of {tlmemory.DESCRIPTOR_ALIGN} bytes")


def descriptor_offsets(widths: tuple[int, ...], what: str) -> None:
    """A descriptor access's offsets are 32-bit integers, as Triton requires (bits of each runtime one)."""
    if any(bits > 32 for bits in widths):
        raise SemanticError(f"{what}: offsets must be 32-bit integers (add .to(tl.i32))")


def descriptor_store(shape: tuple[int, ...], block: tuple[int, ...]) -> None:
    if shape != block:
        raise SemanticError(f"a descriptor store needs a value of shape {list(block)}, got shape {list(shape)}")


def descriptor_rows(desc: Tiled, x_offsets: object, what: str) -> tuple[int, int]:
    """The block a row gather or scatter moves, ``[len(x_offsets), block columns]``, by Triton's
    rules: a 2-D descriptor with a one-row block, a 1-D block of at least 8 integer row offsets,
    and at least 8 words of columns (TMA gather4's pieces)."""
    if desc.rank != 2 or desc.shape[0] != 1:
        raise SemanticError(f"{what} needs a 2-D descriptor with a block of 1 row, got block shape {list(desc.shape)}")
    if not (isinstance(x_offsets, Block) and x_offsets.rank == 1 and x_offsets.dtype.is_int):
        raise SemanticError(f"{what}: x_offsets must be a 1-D block of integers, got {shown(x_offsets)}")
    rows, columns = x_offsets.shape[0], 32 // desc.element.bits * 8
    if rows < 8:
        raise SemanticError(f"{what} must have at least 8 rows, but got {rows}")
    if desc.shape[1] < columns:
        raise SemanticError(f"{what} of {desc.element!r} must have at least {columns} columns, but got {desc.shape[1]}")
    return rows, desc.shape[1]


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


@family_rule(Family.ATOMIC)
def _atomic(what: str, a: Args) -> dict[str, Any]:
    """An atomic's ``sem`` and ``scope`` (defaults filled in) and its pointers' element type;
    what the pointer argument is, each backend checks as it builds its lanes."""
    name = what.removeprefix("tl.")
    mask_of(what, a.get("mask"))
    sem, scope = ordering(name, a["sem"], a["scope"])
    pointer = a["pointer"]
    if isinstance(pointer, Block) and pointer.dtype.element is not None:
        atomic_element(name, pointer.dtype.element)
    return {"sem": sem, "scope": scope}


rule(tlatomic.atomic_cas)(lambda a: _atomic("tl.atomic_cas", a))


def mask_of(what: str, mask: object) -> None:
    """A load's, store's or atomic's mask is a bool block or scalar (a comparison), as in Triton:
    an integer block is no mask (``mask=cols`` meant ``cols < n``)."""
    if mask is not None and not operand(mask).dtype.is_bool:
        raise SemanticError(f"the mask of {what} must be a bool block (a comparison), got {operand(mask)}")


def _hints(what: str, a: Args) -> dict[str, Any]:
    cache_modifier, eviction_policy = cache_hints(what, a["cache_modifier"], a["eviction_policy"])
    return {"cache_modifier": cache_modifier, "eviction_policy": eviction_policy}


def _elements(a: Args) -> tuple[Block, DType] | None:
    """The pointer block of a load or store and its element type (None: a block pointer, or what
    the backend refuses as no pointer)."""
    pointer = a["pointer"]
    element = pointer.dtype.element if isinstance(pointer, Block) else None
    return None if element is None else (pointer, element)


@rule(tlmemory.load)
def _load(a: Args) -> dict[str, Any]:
    """The cache hints; a Python number ``other`` must be a value of the elements; through a
    block pointer, no mask or other, and ``boundary_check``: the checked dims."""
    hints = _hints("load", a)
    pointer = a["pointer"]
    if isinstance(pointer, Tiled):
        block_load(a["mask"], a["other"])
        return {**hints, "boundary_check": boundary_dims(a["boundary_check"], pointer.rank)}
    if (found := _elements(a)) is not None:
        mask_of("load", a["mask"])
        scalar_fits(a["other"], found[1], "other")
    return hints


@rule(tlmemory.store)
def _store(a: Args) -> dict[str, Any]:
    """The cache hints; the value is of the elements (a Python number, or a pointer's address)
    and fits the pointers; through a block pointer, exactly the block's shape (or a scalar) and
    dtype, no mask, and ``boundary_check``: the checked dims."""
    hints = _hints("store", a)
    pointer, value = a["pointer"], a["value"]
    if isinstance(pointer, Tiled):
        given, shape = (value.dtype, value.shape) if isinstance(value, Block) else (None, ())
        block_store(a["mask"], pointer.element, given, shape, pointer.shape)
        return {**hints, "boundary_check": boundary_dims(a["boundary_check"], pointer.rank)}
    if (found := _elements(a)) is not None:
        pointers, element = found
        mask_of("store", a["mask"])
        scalar_fits(value, element, "value")
        block = operand(value)
        if block.dtype.is_pointer:  # its address, into 64-bit integer elements
            pointer_cast(block.dtype, element)
        stored(pointers.shape, block.shape)
    return hints


@rule(tlmemory.make_block_ptr)
def _make_block_ptr(a: Args) -> dict[str, Any]:
    dims = block_shape(a["block_shape"], "tl.make_block_ptr")
    return {"block_shape": dims, "order": order(a["order"], len(dims))}


@rule(tlmemory.make_tensor_descriptor)
def _make_tensor_descriptor(a: Args) -> dict[str, Any]:
    """The block shape, spanning a whole TMA piece of the base's elements; the strides, runtime
    values on the reference, each backend checks as far as it knows them."""
    dims = block_shape(a["block_shape"], "tl.make_tensor_descriptor")
    base = a["base"]
    if isinstance(base, Block) and base.dtype.element is not None and not base.shape:
        descriptor_block(dims, base.dtype.element)
    return {"block_shape": dims}


def _descriptor_offsets(a: Args, what: str) -> dict[str, Any]:
    offsets = a["offsets"]
    if isinstance(offsets, (tuple, list)):
        descriptor_offsets(tuple(o.dtype.bits for o in offsets if isinstance(o, Block)), what)
    return {}


rule(tlmemory.descriptor_load)(lambda a: _descriptor_offsets(a, "descriptor load"))

@rule(tlmemory.descriptor_gather)
def _descriptor_gather(a: Args) -> dict[str, Any]:
    """The gathered block's shape (:func:`descriptor_rows`); the column offset is 32-bit."""
    return _descriptor_rows(a, "descriptor gather")


@rule(tlmemory.descriptor_scatter)
def _descriptor_scatter(a: Args) -> dict[str, Any]:
    """As a gather's, and the value has the scattered block's shape."""
    checked = _descriptor_rows(a, "descriptor scatter")
    value = a["value"]
    if "shape" in checked and (not isinstance(value, Block) or value.shape != checked["shape"]):
        raise SemanticError(f"descriptor scatter needs a value of shape {list(checked['shape'])}, got {shown(value)}")
    return checked


def _descriptor_rows(a: Args, what: str) -> dict[str, Any]:
    y = a["y_offset"]
    descriptor_offsets((y.dtype.bits,) if isinstance(y, Block) else (), what)
    desc = a["desc"]
    return {"shape": descriptor_rows(desc, a["x_offsets"], what)} if isinstance(desc, Tiled) else {}


DESCRIPTOR_DIMS = {"shape": dtypes.I32, "strides": dtypes.I64}
"""The dtype of each scalar of ``desc.shape`` and ``desc.strides``, Triton's (32-bit sizes, 64-bit strides)."""


@rule(tlmemory.descriptor_dims)
def _descriptor_dims(a: Args) -> dict[str, Any]:
    """Which parts of the descriptor are read, and their dtype."""
    which = a["which"]
    if which not in DESCRIPTOR_DIMS:
        raise SemanticError(f"a tensor descriptor has .shape and .strides, not {which!r}")
    return {"dtype": DESCRIPTOR_DIMS[which]}


@rule(tlmemory.descriptor_store)
def _descriptor_store(a: Args) -> dict[str, Any]:
    """The offsets' widths; the value has the block's shape (or is a scalar)."""
    checked = _descriptor_offsets(a, "descriptor store")
    desc, value = a["desc"], a["value"]
    if isinstance(desc, Tiled):
        descriptor_store(value.shape if isinstance(value, Block) else (), desc.shape)
    return checked
