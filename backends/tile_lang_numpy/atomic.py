"""Atomic read-modify-write in one sequential order: program by program, lanes in C order.

That order is one a GPU may choose, so duplicate addresses accumulate and each lane returns
the value memory held just before its own update. It is computed without a Python loop over
lanes: live lanes are sorted stably by address and each run of equal addresses is scanned
(float ``atomic_add`` accumulates one element at a time in the element dtype, as the GPU does;
f32 adds flush subnormals to zero, as ``atom.add.f32`` does).
Masked-off lanes touch nothing and return poison, as a masked load does (Triton leaves them
undefined). ``sem`` and ``scope`` are validated but cannot change a sequential execution.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.tensor import Tensor
from tile_lang.errors import SemanticError

from tile_lang_numpy import addresses, values
from tile_lang_numpy.elementwise import convert
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.memory import lanes, poison, shaped
from tile_lang_numpy.values import Array, Pointers

@dataclass(frozen=True)
class Runs:
    """Live lanes sorted stably by address: runs of one address, each in sequential order."""

    order: Array  # sorted position -> position among the live lanes
    starts: Array  # first sorted position of each run
    counts: Array  # lanes in each run
    address: Array  # the address of each run
    in_order: bool = False  # whether ``order`` is the identity (nothing to permute)

    @staticmethod
    def of(index: Array) -> Runs:
        if index.size <= 1:  # a scalar atomic of one program (a lock's): nothing to sort
            first = np.zeros(index.size, np.intp)
            return Runs(first, first, np.ones(index.size, np.intp), index, True)
        order = np.argsort(index, kind="stable")
        ordered = index[order]
        first = np.ones(ordered.shape, dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(first)
        counts = np.diff(np.append(starts, ordered.size))
        return Runs(order, starts, counts, ordered[starts])

    @property
    def unique(self) -> bool:
        return self.starts.size == self.order.size

    def run_of(self) -> Array:
        """The run of each sorted position."""
        return np.repeat(np.arange(self.starts.size), self.counts)


# ------------------------------------------------------------------------------ scans over runs


def scan(ufunc: np.ufunc, init: Array, data: Array, runs: Runs) -> tuple[Array, Array]:
    """Per run, fold ``data`` (sorted) into ``init`` left to right: the value before each
    element and the final value. Runs are padded into tables of power-of-two widths so one
    ``ufunc.accumulate`` per width does the work."""
    if runs.unique:
        return init, ufunc(init, data).astype(init.dtype)
    before = np.empty(data.shape, init.dtype)
    final = np.empty(init.shape, init.dtype)
    run = runs.run_of()
    rank = np.arange(data.size) - runs.starts[run]
    widths = 1 << np.ceil(np.log2(runs.counts + 1)).astype(np.int64)
    for width in np.unique(widths):
        chosen = np.flatnonzero(widths == width)
        row = np.zeros(init.shape, np.int64)
        row[chosen] = np.arange(chosen.size)
        members = np.flatnonzero(widths[run] == width)
        table = np.zeros((chosen.size, int(width)), init.dtype)
        table[:, 0] = init[chosen]
        table[row[run[members]], rank[members] + 1] = data[members]
        acc = ufunc.accumulate(table, axis=1, dtype=init.dtype)
        before[members] = acc[row[run[members]], rank[members]]
        final[chosen] = acc[np.arange(chosen.size), runs.counts[chosen]]
    return before, final


def exchange(init: Array, data: Array, runs: Runs) -> tuple[Array, Array]:
    """``atomic_xchg`` per run: each lane sees the previous writer's value."""
    before = np.empty(data.shape, init.dtype)
    before[1:] = data[:-1]
    before[runs.starts] = init
    return before, data[runs.starts + runs.counts - 1]


def compare_exchange(init: Array, cmp: Array, data: Array, runs: Runs) -> tuple[Array, Array]:
    """``atomic_cas`` per run, bitwise compare as the GPU does; a step per duplicate rank."""
    bits = np.dtype(f"u{init.dtype.itemsize}")
    if runs.unique:  # one lane per address (a lock's scalar): one step
        return init, np.where(init.view(bits) == cmp.view(bits), data, init)
    current = init.copy()
    before = np.empty(data.shape, init.dtype)
    for rank in range(int(runs.counts.max(initial=0))):
        live_runs = np.flatnonzero(runs.counts > rank)
        at = runs.starts[live_runs] + rank
        before[at] = current[live_runs]
        hit = current[live_runs].view(bits) == cmp[at].view(bits)
        current[live_runs] = np.where(hit, data[at], current[live_runs])
    return before, current


def order_key(x: Array) -> Array:
    """Float bits mapped to signed ints ordered like the floats (-NaN < -inf < -0 < +0 < +NaN);
    its own inverse. The GPU's float max/min (signed max of the bits for a non-negative value,
    unsigned min for a negative one) is exactly max/min of this key."""
    bits = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


Fold = Callable[[Array, list[Array], Runs], tuple[Array, Array]]


_F32_TINY = np.float32(np.finfo(np.float32).tiny)


def _flushed(x: Array) -> Array:
    """``x`` with subnormals replaced by zeros of their sign."""
    out: Array = np.where(np.abs(x) < _F32_TINY, np.copysign(np.float32(0), x), x).astype(x.dtype)
    return out


def add_fold(init: Array, data: list[Array], runs: Runs) -> tuple[Array, Array]:
    """``atomic_add``: f32 as the GPU's ``atom.add.f32`` adds (SASS ``ATOMG.ADD.F32.FTZ.RN``, the
    PTX ISA: "flushes subnormal inputs and results to sign-preserving zero"), other dtypes plainly.
    Where no operand, old value or sum is subnormal the flushes change nothing; else a step per
    rank of the runs, as :func:`compare_exchange` steps."""
    before, final = scan(np.add, init, data[0], runs)
    if init.dtype != np.float32 or not any(bool(((np.abs(a) < _F32_TINY) & (a != 0)).any())
                                           for a in (init, data[0], before, final)):
        return before, final
    current = init.copy()
    before = np.empty(data[0].shape, init.dtype)
    for rank in range(int(runs.counts.max(initial=0))):
        live_runs = np.flatnonzero(runs.counts > rank)
        at = runs.starts[live_runs] + rank
        before[at] = current[live_runs]
        current[live_runs] = _flushed(_flushed(current[live_runs]) + _flushed(data[0][at]))
    return before, current


def scan_fold(ufunc: np.ufunc, ordered: bool = False) -> Fold:
    """The fold of a read-modify-write op combining memory with a value by ``ufunc``; an
    ``ordered`` one (max, min) folds floats' order keys."""

    def fold(init: Array, data: list[Array], runs: Runs) -> tuple[Array, Array]:
        if not ordered or init.dtype.kind != "f":
            return scan(ufunc, init, data[0], runs)
        before, final = scan(ufunc, order_key(init), order_key(data[0]), runs)
        return order_key(before).view(init.dtype), order_key(final).view(init.dtype)
    return fold


# ------------------------------------------------------------------------------ the builtins


def _operands(engine: Engine, name: str, pointer: Tensor[Any, Any], mask: object, operands: tuple[object, ...]
              ) -> tuple[Pointers, Array, Array, list[Array]]:
    """Offsets, mask and operands (converted to the element type) for every program of the
    group: an atomic happens once per program even when all programs share its operands."""
    p = values.pointers(pointer, f"the pointer of tl.{name}")
    dtype = p.memory.dtype
    given = [values.lift(v, dtype) for v in operands]
    if any(t.type.is_pointer for t in given):
        raise engine.error(f"tl.{name} cannot store pointers")
    if not pointer.ndim and mask is None and engine.nprograms == 1 and engine.mask is None and \
            not any(t.ndim for t in given) and 0 <= int(p.offsets[0]) < p.memory.size:
        # one lane of one program (a lock's): nothing to broadcast, mask or check lane by lane
        return p, p.offsets, _ONE_LANE, [convert(values.array(t), t.type, dtype) for t in given]
    try:
        extra = values.block_broadcast(*(t.block_shape for t in given))
    except SemanticError as exc:
        raise engine.error(f"tl.{name}: {exc}") from None
    p, offs, live = lanes(engine, pointer, mask, f"tl.{name}", extra)
    full = (engine.nprograms,) + offs.shape[1:]
    rank = len(full) - 1
    data = [shaped(values.align(convert(values.array(t), t.type, dtype), t.ndim, rank), full) for t in given]
    return p, shaped(offs, full), shaped(live, full), data


_ONE_LANE = np.ones(1, bool)
_ONE_LANE.flags.writeable = False


def _apply(engine: Engine, name: str, a: Mapping[str, Any], operands: tuple[object, ...], fold: Fold) -> Tensor[Any, Any]:
    """Run one atomic: fold each address's lanes in order, journal and write the final values,
    return the old value of every lane (poison where masked off)."""
    if addresses.through(a["pointer"]):  # pointers made from integers: by the allocation each lane is in
        return addresses.loaded(engine, a, lambda e, parts: _apply(e, name, parts, operands, fold))
    p, offs, live, data = _operands(engine, name, a["pointer"], a.get("mask"), operands)
    flat_live = live.reshape(-1)
    whole = bool(flat_live.all())  # every lane live (a lock's): nothing to pick, no poison
    index = offs.reshape(-1) if whole else offs.reshape(-1)[flat_live]
    engine.atomic_lanes(p.memory, offs, live, a["pointer"].ndim == 0)
    runs = Runs.of(index)
    init = p.memory.flat.take(runs.address)
    init.flags.writeable = False  # the journal keeps it, and it may be the result (``before``)
    picked = [d.reshape(-1) if whole else d.reshape(-1)[flat_live] for d in data]
    before, final = fold(init, picked if runs.in_order else [d[runs.order] for d in picked], runs)
    engine.note_atomic(f"tl.{name}")
    engine.record_write(p.memory, runs.address, init)
    p.memory.flat[runs.address] = final
    if whole and runs.in_order:  # ``before`` is a fresh array, in the lanes' order
        return values.make(before.reshape(offs.shape), p.memory.dtype)
    old = poison(p.memory.dtype, offs.shape)
    old.reshape(-1)[(np.arange(flat_live.size) if whole else np.flatnonzero(flat_live))[runs.order]] = before
    return values.make(old, p.memory.dtype)


# The ATOMIC family (semantics checks the element type and the ordering): each builtin's fold of
# one address's lanes, in order, into memory.
ATOMICS: dict[Callable[..., Any], Fold] = {
    tl.atomic_add: add_fold, tl.atomic_and: scan_fold(np.bitwise_and), tl.atomic_or: scan_fold(np.bitwise_or),
    tl.atomic_xor: scan_fold(np.bitwise_xor), tl.atomic_max: scan_fold(np.maximum, ordered=True),
    tl.atomic_min: scan_fold(np.minimum, ordered=True),
    tl.atomic_xchg: lambda init, data, runs: exchange(init, data[0], runs),
}


def read_modify_write(name: str, fold: Fold) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    """The implementation of a row of :data:`ATOMICS` (``name``: the builtin's)."""
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        return _apply(engine, name, a, (a["val"],), fold)
    return impl


for _atomic, _fold in ATOMICS.items():
    implements(_atomic)(read_modify_write(_atomic.__name__, _fold))


@implements(tl.atomic_cas)
def atomic_cas(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return _apply(engine, "atomic_cas", a, (a["cmp"], a["val"]),
                  lambda init, data, runs: compare_exchange(init, data[0], data[1], runs))
