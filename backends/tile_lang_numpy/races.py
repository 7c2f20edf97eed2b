"""Data races between the programs of one launch: plain accesses to one element by two programs.

For every memory a launch writes with plain stores, a shadow array holds, per element, the
program that last stored it, and up to two programs that loaded it; each entry is tagged with
the source line and the number of atomics its program had executed. A store to an element
another program stored or loaded, or a load of an element another program stored, is a race
unless an atomic separates them: the earlier program executed an atomic after its access and
the later one has executed an atomic before its own (a lock, or a counter the last program
waits on). Loads of a memory are only logged until it is first stored to, so read-only inputs
cost nothing. ``TILE_LANG_RACE_CHECK=0`` turns the check off.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
import numpy as np

from tile_lang.errors import KernelError

from tile_lang_numpy.values import Array, Memory

ENV = "TILE_LANG_RACE_CHECK"
NOBODY = -1
EPOCH_BITS = 16  # a tag is site << EPOCH_BITS | atomics executed (saturated)
EPOCH_MASK = (1 << EPOCH_BITS) - 1
FOLD_LANES = 1 << 24  # logged loads of a memory never stored to are entered past this many lanes


def enabled() -> bool:
    """Whether launches check for races (on unless ``TILE_LANG_RACE_CHECK`` is 0/off/false/no)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


class Access(enum.Enum):
    LOAD = "loads"
    STORE = "stores"


@dataclass(frozen=True)
class Site:
    """A line of user code."""

    filename: str
    lineno: int

    def __str__(self) -> str:
        return f"line {self.lineno} of {os.path.basename(self.filename)}"


@dataclass(frozen=True)
class Lanes:
    """The live lanes of one access, flattened: element index, program (linear id) and, for an
    error message, where each came from (group row, lane within the block)."""

    index: Array
    program: Array
    row: Array
    lane: Array

    @staticmethod
    def of(offs: Array, live: Array, programs: Array) -> Lanes:
        """From offsets and mask (broadcastable, program axis first) and the group's linear
        program ids (one per row)."""
        shape = np.broadcast_shapes(offs.shape, live.shape, (programs.shape[0],) + (1,) * (offs.ndim - 1))
        rows = shape[0]
        flat_live = np.broadcast_to(live, shape).reshape(rows, -1)
        flat_offs = np.broadcast_to(offs, shape).reshape(rows, -1)
        where = np.nonzero(flat_live)
        return Lanes(flat_offs[where].astype(np.int64), programs[where[0]], where[0], where[1])


@dataclass
class Reads:
    """Loads of a memory not yet stored to: kept lazily (lanes made on demand, tags per group
    row) until its first store, so loads of read-only inputs cost nothing."""

    pending: list[tuple[Callable[[], Lanes], Array, tuple[int, int]]] = field(default_factory=list)
    count: int = 0


# shadow arrays of finished launches, reused: a fresh array page-faults on first touch
_POOL: dict[tuple[int, np.dtype[Any]], list[Array]] = {}
POOL_BYTES = 64 << 20  # arrays larger than this are not kept


def _take(size: int, dtype: np.dtype[Any]) -> Array:
    kept = _POOL.get((size, dtype))
    if kept:
        return kept.pop()
    return np.empty(size, dtype)


class Shadow:
    """Who touched each element of one memory: the last plain writer, and (once it has been
    loaded) two readers; each with a tag. Stores that needed no check (nothing entered where
    they land) are kept as deferred entries and entered only when a later access needs the
    arrays, so a launch that writes each element once never builds them."""

    __slots__ = ("size", "ids", "_writer", "_writer_tag", "reader_a", "reader_a_tag", "reader_b", "reader_b_tag",
                 "low", "high", "deferred")

    def __init__(self, size: int, ids: np.dtype[Any]) -> None:
        self.size, self.ids = size, ids
        self.low, self.high = size, -1  # the elements entered (or deferred) so far lie in [low, high]
        self._writer: Array | None = None
        self._writer_tag: Array | None = None
        self.reader_a: Array | None = None
        self.reader_a_tag: Array | None = None
        self.reader_b: Array | None = None
        self.reader_b_tag: Array | None = None
        self.deferred: list[tuple[int, Callable[[Shadow], None]]] = []  # (first program, enter)

    @property
    def writer(self) -> Array:
        self._settle()
        assert self._writer is not None
        return self._writer

    @property
    def writer_tag(self) -> Array:
        self._settle()
        assert self._writer_tag is not None
        return self._writer_tag

    def _settle(self) -> None:
        """Build the writer arrays if needed and enter the deferred stores, in order."""
        if self._writer is None:
            self._writer = _take(self.size, self.ids)
            self._writer.fill(NOBODY)
            self._writer_tag = _take(self.size, np.dtype(np.int32))  # read only where a writer is entered
        deferred, self.deferred = self.deferred, []
        for _, enter in deferred:
            enter(self)

    def readers(self) -> tuple[Array, Array, Array, Array]:
        if self.reader_a is None:
            size = self.size
            self.reader_a, self.reader_b = _take(size, self.ids), _take(size, self.ids)
            self.reader_a.fill(NOBODY)
            self.reader_b.fill(NOBODY)
            self.reader_a_tag, self.reader_b_tag = _take(size, np.dtype(np.int32)), _take(size, np.dtype(np.int32))
        assert self.reader_b is not None and self.reader_a_tag is not None and self.reader_b_tag is not None
        return self.reader_a, self.reader_a_tag, self.reader_b, self.reader_b_tag

    def touched(self, low: int, high: int) -> bool:
        """Whether ``[low, high]`` may hold entries; widens the span to include it."""
        hit = low <= self.high and high >= self.low
        self.low, self.high = min(self.low, low), max(self.high, high)
        return hit

    def release(self) -> None:
        """Give the arrays back for the next launch's shadows."""
        for array in (self._writer, self._writer_tag, self.reader_a, self.reader_a_tag, self.reader_b,
                      self.reader_b_tag):
            if array is not None and array.nbytes <= POOL_BYTES and not _POOL.get((array.size, array.dtype)):
                _POOL.setdefault((array.size, array.dtype), []).append(array)

    def forget(self, first: int, last: int) -> None:
        """Drop the entries of programs ``first..last`` (a group that reruns)."""
        self.deferred = [(start, enter) for start, enter in self.deferred if start < first]
        if self._writer is None and self.reader_a is None:
            return
        for who, _, _ in self.slots():
            who[(who >= first) & (who <= last)] = NOBODY

    def slots(self) -> list[tuple[Array, Array, Access]]:
        """(programs, tags, what they did) for each slot in use."""
        out = [(self.writer, self.writer_tag, Access.STORE)]
        if self.reader_a is not None:
            a, a_tag, b, b_tag = self.readers()
            out += [(a, a_tag, Access.LOAD), (b, b_tag, Access.LOAD)]
        return out


@dataclass(frozen=True)
class Conflict:
    """The first racing lane of an access: position in its lanes, the other program, its tag."""

    position: int
    other: int
    other_tag: int
    other_access: Access


class Races:
    """Launch-wide race state: shadows of stored memories, logged loads, atomics per program."""

    def __init__(self, grid: tuple[int, int, int]) -> None:
        self.grid = grid
        self.shadows: dict[int, Shadow] = {}
        self.reads: dict[int, Reads] = {}
        self.sites: list[Site] = []
        self._site_ids: dict[Site, int] = {}
        self.atomics: Array | None = None  # atomics executed, per program (linear id)
        self.ids = np.dtype(np.int32 if grid[0] * grid[1] * grid[2] < 2**31 else np.int64)

    # ---------------------------------------------------------------- bookkeeping

    def close(self) -> None:
        """The launch is over: its shadows' arrays go back to the pool, and the logged loads
        are dropped (their lanes' makers hold the engine, which holds this: a cycle that would
        keep the launch's blocks alive until the garbage collector ran)."""
        for shadow in self.shadows.values():
            shadow.release()
        self.shadows.clear()
        self.reads.clear()

    def forget(self, first: int, last: int) -> None:
        """A group of programs ``first..last`` is rolled back to rerun: drop what it did."""
        for shadow in self.shadows.values():
            shadow.forget(first, last)
        for reads in self.reads.values():
            reads.pending = [(make, tags, group) for make, tags, group in reads.pending if group[0] < first]
        if self.atomics is not None:
            self.atomics[first:last + 1] = 0

    def tags(self, site: Site, programs: Array) -> Array:
        """Per program: the site and how many atomics it has executed so far."""
        ident = self._site_ids.setdefault(site, len(self._site_ids))
        if ident == len(self.sites):
            self.sites.append(site)
        if self.atomics is None:  # no program has executed an atomic yet: every epoch is 0
            return np.full(programs.shape, ident << EPOCH_BITS, np.int32)
        return (ident << EPOCH_BITS) | np.minimum(self.epochs(programs), EPOCH_MASK).astype(np.int32)

    def epochs(self, programs: Array) -> Array:
        if self.atomics is None:
            return np.zeros(programs.shape, np.int32)
        return self.atomics[programs]

    def note_atomic(self, programs: Array) -> None:
        """Programs that executed an atomic (a possible synchronisation point)."""
        if self.atomics is None:
            self.atomics = np.zeros(self.grid[0] * self.grid[1] * self.grid[2], np.int32)
        np.add.at(self.atomics, programs, 1)

    # ---------------------------------------------------------------- accesses

    def load(self, memory: Memory, make: Callable[[], Lanes], count: int, programs: Array, site: Site,
             report: Callable[[str], KernelError]) -> None:
        """A plain load of ``count`` lanes by the group's ``programs``."""
        shadow = self.shadows.get(id(memory))
        tags = self.tags(site, programs)
        if shadow is None:
            reads = self.reads.setdefault(id(memory), Reads())
            reads.pending.append((make, tags, (int(programs[0]), int(programs[-1]))))
            reads.count += count
            if reads.count > max(FOLD_LANES, memory.size):  # bound what the log holds: fold it
                self._fold(memory)
            return
        lanes = make()
        self._check(lanes, shadow.writer, shadow.writer_tag, Access.STORE, memory, Access.LOAD, site, report)
        self._note_reader(shadow, lanes, tags[lanes.row])

    def store(self, memory: Memory, lanes: Lanes, programs: Array, site: Site,
              report: Callable[[str], KernelError]) -> None:
        """A plain store of ``lanes`` by the group's ``programs``."""
        shadow = self._fold(memory)
        _widen(shadow, lanes)
        for who, tag, access in shadow.slots():
            self._check(lanes, who, tag, access, memory, Access.STORE, site, report)
        tags = self.tags(site, programs)
        self._set(shadow.writer, lanes.index, lanes.program)
        back = shadow.writer[lanes.index]  # two programs storing one element in this very access
        clash = np.flatnonzero(back != lanes.program)
        if clash.size:
            k = int(clash[0])
            conflict = Conflict(k, int(back[k]), int(tags[lanes.row[k]]), Access.STORE)
            raise self._message(memory, lanes, conflict, Access.STORE, site, report)
        self._set(shadow.writer_tag, lanes.index, tags[lanes.row])

    @staticmethod
    def _set(array: Array, index: Array, value: Array) -> None:
        array[index] = value

    def store_views(self, memory: Memory, views_of: Callable[[Array], list[Array]], span: tuple[int, int],
                    programs: list[Array], live: list[Array | None], site: Site, slow: Callable[[], None]) -> None:
        """A plain store through strided views (one per group of programs, as the store itself
        goes): checked and entered through the same views of the shadow; ``slow`` redoes it lane
        by lane when some element was touched by another program, to name the race. Elements
        ``span`` cover need no check when nothing was entered there yet (a fresh output)."""
        shadow = self._fold(memory)
        tags = self.tags(site, programs[0].reshape(-1) if len(programs) == 1 else
                         np.concatenate([m.reshape(-1) for m in programs]))
        if not shadow.touched(*span) and len(programs) == 1:  # nothing to check: entered when needed
            me, lv = programs[0], live[0]

            def enter(into: Shadow) -> None:
                where = True if lv is None else lv
                np.copyto(views_of(into.writer)[0], me, where=where)
                np.copyto(views_of(into.writer_tag)[0], tags.reshape(me.shape), where=where)

            shadow.deferred.append((int(me.reshape(-1)[0]), enter))
            return
        slots = [views_of(who) for who, _, _ in shadow.slots()]
        tag_views = views_of(shadow.writer_tag)
        start = 0
        for k, (me, lv) in enumerate(zip(programs, live)):
            for views in slots:  # views in order: programs of one store see each other
                suspect = (views[k] != NOBODY) & (views[k] != me)
                if bool((suspect if lv is None else suspect & lv).any()):
                    slow()
                    return
            who, tag = slots[0][k], tag_views[k]
            mine = tags[start:start + me.size].reshape(me.shape)
            np.copyto(who, me, where=True if lv is None else lv)
            np.copyto(tag, mine, where=True if lv is None else lv)
            start += me.size

    def _fold(self, memory: Memory) -> Shadow:
        """The memory's shadow, made now if needed, with its logged loads entered."""
        shadow = self.shadows.get(id(memory))
        if shadow is None:
            shadow = self.shadows[id(memory)] = Shadow(memory.size, self.ids)
        reads = self.reads.pop(id(memory), None)
        if reads is not None:
            for make, tags, _ in reads.pending:
                lanes = make()
                self._note_reader(shadow, lanes, tags[lanes.row])
        return shadow

    def _check(self, lanes: Lanes, who: Array, tag: Array, earlier: Access, memory: Memory, later: Access,
               site: Site, report: Callable[[str], KernelError]) -> None:
        others = who[lanes.index]
        racing = (others != NOBODY) & (others != lanes.program)
        if not bool(racing.any()):
            return
        other_tags = tag[lanes.index]
        if self.atomics is not None:
            synced = (self.atomics[np.maximum(others, 0)] > (other_tags & EPOCH_MASK)) & \
                (self.atomics[lanes.program] > 0)
            racing &= ~synced
        hits = np.flatnonzero(racing)
        if hits.size:
            k = int(hits[0])
            raise self._message(memory, lanes, Conflict(k, int(others[k]), int(other_tags[k]), earlier), later,
                                site, report)

    def _message(self, memory: Memory, lanes: Lanes, c: Conflict, access: Access, site: Site,
                 report: Callable[[str], KernelError]) -> KernelError:
        other_site = self.sites[c.other_tag >> EPOCH_BITS]
        return report(
            f"data race on {memory.param}[{int(lanes.index[c.position])}]: program {self.coords(int(lanes.program[c.position]))} "
            f"{access.value} it (lane {int(lanes.lane[c.position])}, {site}) and program {self.coords(c.other)} "
            f"{c.other_access.value} it ({other_site}), with no atomic between them. Give each program its own "
            f"elements or use tl.atomic_*; {ENV}=0 turns this check off")

    def _note_reader(self, shadow: Shadow, lanes: Lanes, tags: Array) -> None:
        """Enter readers: slot a takes the first, slot b the first program other than a's."""
        a, a_tag, b, b_tag = shadow.readers()
        _widen(shadow, lanes)
        first = a[lanes.index] == NOBODY
        self._set(a, lanes.index[first], lanes.program[first])
        self._set(a_tag, lanes.index[first], tags[first])
        second = (a[lanes.index] != lanes.program) & (b[lanes.index] == NOBODY)
        self._set(b, lanes.index[second], lanes.program[second])
        self._set(b_tag, lanes.index[second], tags[second])

    def coords(self, program: int) -> tuple[int, ...]:
        gx, gy, gz = self.grid
        full = (program % gx, (program // gx) % gy, program // (gx * gy))
        return full[:3 if gz > 1 else 2 if gy > 1 else 1]




def _widen(shadow: Shadow, lanes: Lanes) -> None:
    if lanes.index.size:
        shadow.touched(int(lanes.index.min()), int(lanes.index.max()))
