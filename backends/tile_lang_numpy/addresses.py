"""Pointers made from integers on the reference (Triton's ``addr.to(tl.pointer_type(tl.float16))``,
as grouped GEMM reads a table of ``t.data_ptr()`` values), mapped back to the host allocations
the addresses lie in: the launch's buffers first, then the NumPy arrays and torch CPU tensors
alive in the process (:class:`Book`), each seen as memory of the element type.

A cast whose lanes all lie in one allocation, aligned, gives the usual pointers into it
(:func:`cast`): from there on every access is bounds-checked against that allocation. Any other
cast (random integers, several allocations) points into the *address space* of its element type
(:func:`space`): a :class:`Memory` holding nothing, whose offsets are byte addresses, so
``ptr + k`` adds ``k`` elements' bytes (:func:`scaled`); a load, store or atomic through such
pointers looks each live lane up (:func:`split`). A cast back to an integer gives the address
(:func:`addresses_of`, for any pointer), and so do pointers compared or selected by ``tl.where``
across different allocations. An address in no known allocation, or not aligned to the element
size, is a KernelError at the line.
"""

from __future__ import annotations

import functools
import gc
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tile_lang.dtypes import BOOL, I64, DType
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.values import Array, Memory, Pointers

if TYPE_CHECKING:
    from tile_lang_numpy.engine import Engine

_INDEX = np.dtype(np.int64)


@functools.cache
def space(element: DType) -> Memory:
    """The memory that pointers to ``element`` made from integers point into (offsets: byte addresses)."""
    return Memory(np.empty(0, element.numpy), "an address made from an integer", element)


@functools.cache
def _nowhere(element: DType) -> Memory:
    """An empty memory no lane reaches (the pointers of an access whose lanes are all masked off)."""
    return Memory(np.empty(0, element.numpy), "no allocation", element)


def is_space(memory: Memory) -> bool:
    return memory.size == 0 and memory is space(memory.dtype)


def through(ptr: object) -> bool:
    """Whether ``ptr`` is a pointer block made from integers (its accesses go through :func:`split`)."""
    return isinstance(ptr, Tensor) and isinstance(ptr.handle, Pointers) and is_space(ptr.handle.memory)


def addresses_of(p: Pointers) -> Array:
    """The byte address of each pointer (program axis first), as int64."""
    offsets = p.offsets.astype(_INDEX, copy=False)
    if is_space(p.memory):
        return offsets
    return p.memory.flat.ctypes.data + offsets * p.memory.dtype.itemsize


def element_offsets(p: Pointers) -> tuple[Array, int]:
    """The pointers' offsets in elements and the element size (what ``tl.multiple_of`` and its
    kin check): from the address itself for pointers made from integers (in bytes when one is
    not a whole number of elements)."""
    offsets, size = p.offsets.astype(_INDEX, copy=False), p.memory.dtype.itemsize
    if not is_space(p.memory):
        return offsets, size
    return (offsets // size, size) if not bool((offsets % size).any()) else (offsets, 1)


def pointers_at(addresses: Array, kind: DType) -> Tensor[Any, Any]:
    """A block of pointers of type ``kind`` at these byte addresses (program axis first)."""
    assert kind.element is not None
    return values.make(Pointers(space(kind.element), addresses.astype(_INDEX, copy=False)), kind)


def cast(engine: Engine, x: Tensor[Any, Any], dst: DType) -> Tensor[Any, Any]:
    """``x.to(dst)`` with a pointer on a side (as the cast's or store's rule allowed): an address
    reinterpreted."""
    found = addresses_of(values.pointers(x, "the cast")) if x.type.is_pointer else values.array(x).view(_INDEX)
    if dst.is_pointer:
        return _homed(engine, found, dst)
    return values.make(found.view(dst.numpy), dst)


def homed(engine: Engine, ptr: Tensor[Any, Any]) -> Tensor[Any, Any]:
    """``ptr`` into the one allocation the executing programs' addresses lie in, where it points
    into the address space (a selection between allocations, made under a branch) and one does."""
    if not through(ptr):
        return ptr
    assert isinstance(ptr.handle, Pointers)
    return _homed(engine, addresses_of(ptr.handle), ptr.type)


def _homed(engine: Engine, found: Array, kind: DType) -> Tensor[Any, Any]:
    """Pointers at these addresses: into the one allocation that holds those of the executing
    programs, aligned, when there is one (the usual pointers, bounds-checked against it from here
    on; a masked-off program's lanes, poison in a masked region, are never accessed), else into
    the address space (looked up lane by lane when accessed)."""
    element = kind.element
    assert element is not None
    active = engine.active
    executing = found if active is None or found.shape[0] != active.shape[0] else found[active]
    which = engine.addresses.find(executing.reshape(-1))
    if which.size and which[0] >= 0 and bool((which == which[0]).all()):
        start, memory = engine.addresses.memory(int(which[0]), element)
        offset = found - start
        if not bool(((executing - start) % element.itemsize).any()):
            return values.make(Pointers(memory, offset // element.itemsize), kind)
    return pointers_at(found, kind)


def scaled(offsets: object, element: DType) -> Tensor[Any, Any]:
    """Element offsets added to an address, in bytes."""
    return values.make(values.array(values.lift(offsets)).astype(_INDEX) * element.itemsize, I64)


Access = Callable[["Engine", Mapping[str, Any]], Any]  # a load, store or atomic of the reference


def loaded(engine: Engine, a: Mapping[str, Any], access: Access) -> Tensor[Any, Any]:
    """A load (or atomic) through pointers made from integers: one ``access`` per allocation
    the live lanes point into, their results merged lane by lane."""
    result: Tensor[Any, Any] | None = None
    for ptr, mask in split(engine, a["pointer"], a.get("mask")):
        got = access(engine, {**a, "pointer": ptr, "mask": mask})
        result = got if result is None else \
            values.make(np.where(values.array(mask), values.array(got), values.array(result)), got.type)
    assert result is not None
    return result


def stored(engine: Engine, a: Mapping[str, Any], access: Access) -> None:
    """A store through pointers made from integers: one ``access`` per allocation."""
    for ptr, mask in split(engine, a["pointer"], a["mask"]):
        access(engine, {**a, "pointer": ptr, "mask": mask})


def split(engine: Engine, ptr: Tensor[Any, Any], mask: object) -> list[tuple[Tensor[Any, Any], Tensor[Any, Any]]]:
    """The lanes of pointers made from integers, by the allocation each live one points into:
    a pointer block into that allocation's memory and the mask of its lanes (one pair, with no
    live lane, when none is)."""
    element = ptr.type.element
    assert element is not None and isinstance(ptr.handle, Pointers)
    m = values.lift(True if mask is None else mask)
    shape = values.block_broadcast(ptr.block_shape, m.block_shape)
    r = len(shape)
    addresses, live = np.broadcast_arrays(values.align(ptr.handle.offsets, ptr.ndim, r),
                                          values.align(values.array(m), m.ndim, r))
    live = engine.only_active(live)
    book = engine.addresses
    which = np.full(addresses.shape, -1, dtype=np.int64)
    which[live] = book.find(addresses[live])
    _check_found(engine, addresses, live, which)
    held = np.unique(which[live]).tolist()
    if not held:  # no live lane: an access that reads poison (or ``other``) and writes nothing
        nowhere = values.make(Pointers(_nowhere(element), np.zeros((1,) + shape, _INDEX)), ptr.type)
        return [(nowhere, values.make(np.zeros((1,) + shape, bool), BOOL))]
    parts = []
    for k in held:
        start, memory = book.memory(k, element)
        mine = live & (which == k)
        offset = np.where(mine, addresses - start, 0)
        _check_aligned(engine, offset, mine, element, memory)
        made = values.make(Pointers(memory, offset // element.itemsize), ptr.type)
        parts.append((made, values.make(mine, BOOL)))
    return parts


def _check_found(engine: Engine, addresses: Array, live: Array, which: Array) -> None:
    lost = live & (which < 0)
    if bool(lost.any()):
        row, lane = _first(lost)
        raise engine.error(f"address {int(addresses[(row, *lane)]):#x} (program {engine.program_of(row)}, lane "
                           f"{lane}) lies in no buffer of the launch and no live NumPy array or torch CPU tensor: "
                           "a pointer made from an integer must point into one")


def _check_aligned(engine: Engine, offset: Array, live: Array, element: DType, memory: Memory) -> None:
    odd = live & (offset % element.itemsize != 0)
    if bool(odd.any()):
        row, lane = _first(odd)
        raise engine.error(f"address {int(offset[(row, *lane)])} bytes into {memory.param} (program "
                           f"{engine.program_of(row)}, lane {lane}) is not aligned to {element!r}'s "
                           f"{element.itemsize} bytes")


def _first(flags: Array) -> tuple[int, tuple[int, ...]]:
    where = np.argwhere(flags)[0]
    return int(where[0]), tuple(int(i) for i in where[1:])


@dataclass
class _Allocation:
    start: int
    nbytes: int
    raw: Array  # its bytes, as uint8
    name: str
    memory: Memory | None = None  # the launch's memory of it, when it is a buffer of the launch


@dataclass
class Book:
    """The host allocations a launch's addresses may point into: its buffers (``memories``, the
    launch's own, filled as its arguments are made), then, for an address in none of them, the
    live torch CPU tensors and NumPy arrays, looked up once when first needed."""

    memories: dict[int, Memory]
    _found: list[_Allocation] | None = None
    _views: dict[tuple[int, DType], tuple[int, Memory]] = field(default_factory=dict)

    def _buffers(self) -> list[_Allocation]:
        return [_Allocation(m.flat.ctypes.data, m.flat.nbytes, m.flat.view(np.uint8), m.param, m)
                for m in self.memories.values() if m.size]

    def find(self, addresses: Array) -> Array:
        """The index of the allocation holding each address (-1: none): the launch's buffers
        first, the live arrays after."""
        known = self._buffers()
        found = _lookup(known, addresses)
        if bool((found < 0).any()):
            if self._found is None:
                self._found = _live_allocations()
            later = _lookup(self._found, addresses)
            found = np.where((found < 0) & (later >= 0), later + len(known), found)
        return found

    def memory(self, index: int, element: DType) -> tuple[int, Memory]:
        """The start address of allocation ``index`` (as :meth:`find` numbers them) and its memory
        seen as ``element`` elements: a buffer's own memory when that is its element type."""
        known = self._buffers()
        alloc = known[index] if index < len(known) else (self._found or [])[index - len(known)]
        if alloc.memory is not None and alloc.memory.dtype is element:
            return alloc.start, alloc.memory
        key = (alloc.start, element)
        if key not in self._views:
            whole = alloc.nbytes - alloc.nbytes % element.itemsize
            self._views[key] = (alloc.start, Memory(alloc.raw[:whole].view(element.numpy), alloc.name, element))
        return self._views[key]


def _lookup(allocations: list[_Allocation], addresses: Array) -> Array:
    """The index in ``allocations`` of the one holding each address, or -1."""
    if not allocations or not addresses.size:
        return np.full(addresses.shape, -1, dtype=np.int64)
    order = np.argsort([a.start for a in allocations])
    starts = np.array([allocations[i].start for i in order], dtype=np.int64)
    ends = np.array([allocations[i].start + allocations[i].nbytes for i in order], dtype=np.int64)
    at = np.searchsorted(starts, addresses, side="right") - 1
    inside = (at >= 0) & (addresses < ends[np.maximum(at, 0)])
    return np.where(inside, order[np.maximum(at, 0)], -1)


def _live_allocations() -> list[_Allocation]:
    """The allocations of the live torch CPU tensors and NumPy arrays (each once). Asking every
    object whether it is one can warn (deprecated lazy module attributes): those are silenced."""
    found: dict[int, _Allocation] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for alloc in (*_torch_allocations(), *_numpy_allocations()):
            found.setdefault(alloc.start, alloc)
    return list(found.values())


def _torch_allocations() -> Iterator[_Allocation]:
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and obj.device.type == "cpu" and obj.layout == torch.strided:
            try:  # fake, functional and other tensor subclasses without real storage refuse this
                storage = obj.untyped_storage()
                size, base = storage.nbytes(), storage.data_ptr()
                raw = torch.empty(0, dtype=torch.uint8).set_(storage).numpy() if size else None
            except (RuntimeError, NotImplementedError, TypeError):
                continue
            if raw is not None:
                yield _Allocation(base, size, raw, f"the torch tensor at {base:#x}")


def _numpy_allocations() -> Iterator[_Allocation]:
    """NumPy arrays held by the running frames or by any object the garbage collector tracks
    (arrays themselves are not tracked), each as the array owning its memory (arrays of Python
    objects hold no elements a kernel could read)."""
    frame = sys._getframe(1)
    held: list[object] = []
    while frame is not None:
        held.extend(frame.f_locals.values())
        frame = frame.f_back  # type: ignore[assignment]
    for obj in (*held, *gc.get_referents(*gc.get_objects())):
        if isinstance(obj, np.ndarray):
            root = obj
            while isinstance(root.base, np.ndarray):
                root = root.base
            if root.nbytes and not root.dtype.hasobject and (root.flags.c_contiguous or root.flags.f_contiguous):
                raw = root.reshape(-1, order="A").view(np.uint8)
                yield _Allocation(root.ctypes.data, root.nbytes, raw, f"the NumPy array at {root.ctypes.data:#x}")
