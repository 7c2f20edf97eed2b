"""What the race check keeps of each memory (see :mod:`races`): accesses as runs of consecutive
lanes (:class:`Runs`, :class:`Kept`), kept unentered until another access meets them
(:class:`Lazy` loads, :class:`Deferred` stores), and once they meet, per-element shadow arrays
(:class:`Shadow`: the last plain writer with its tag, lane and barriers, the first two loading
programs with theirs) with the :class:`Stretch` of them where every entry holds one value, so
that one program's run of lanes there is checked with scalars.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tile_lang_numpy.affine import Affine
from tile_lang_numpy.values import Array


NOBODY = -1
EPOCH_BITS = 16  # a tag is site << EPOCH_BITS | atomics executed (saturated)
EPOCH_MASK = (1 << EPOCH_BITS) - 1
LANE_BITS = 24  # a writer's place is lane | barriers executed << LANE_BITS (blocks hold < 2^24 lanes)
LANE_MASK = (1 << LANE_BITS) - 1
BROADCAST = LANE_MASK  # the lane of an element several lanes of one store wrote with one value
HELD_BYTES = 16 << 20  # bytes of kept accesses per memory past which they are made runs (where smaller)
SHADOW_BYTES = 40  # per element: what a memory's shadow arrays cost, built once kept accesses cost more
CHUNK = 1 << 20  # lanes scanned for runs at a time (bounds the scan's temporaries)


@dataclass(frozen=True)
class Runs:
    """The live lanes of one access as runs of consecutive lanes of one group row at consecutive
    elements: first element, length, group row, first lane (flat index within the block)."""

    start: Array
    length: Array
    row: Array
    lane: Array

    @staticmethod
    def of(offs: Array | Affine, live: Array | None, programs: int) -> Runs:
        """From offsets (an array, or an affine block made a chunk at a time) and mask
        (broadcastable, program axis first; None: all live) of a group of ``programs``."""
        if isinstance(offs, Affine) and live is None:
            return Runs.of_affine(offs.base, offs.strides, offs.block, programs)
        live = np.ones((1,) * len(offs.shape), bool) if live is None else live
        shape = np.broadcast_shapes(offs.shape, live.shape, (programs,) + (1,) * (max(len(offs.shape), live.ndim) - 1))
        rows, width = shape[0], int(np.prod(shape[1:], dtype=np.int64))
        live = np.broadcast_to(live, shape)
        step = max(1, CHUNK // max(1, width))
        parts = [_runs(_rows(offs, r, r + step, shape), live[r:r + step].reshape(-1, width), r)
                 for r in range(0, rows, step)]
        return Runs(*(np.concatenate([p[k] for p in parts]) for k in range(4)))

    @staticmethod
    def of_affine(base: Array, strides: tuple[int, ...], block: tuple[int, ...], programs: int) -> Runs:
        """Every lane of an affine block (lane ``i`` of program ``p`` at ``base[p] + strides . i``):
        a run per program and index of its leading axes, its contiguous trailing axes in one."""
        lead, run = len(block), 1
        while lead and (block[lead - 1] == 1 or strides[lead - 1] == run):
            lead -= 1
            run *= block[lead]
        rel = np.zeros(block[:lead], np.int64)
        for axis in range(lead):
            rel = rel + (np.arange(block[axis], dtype=np.int64) * strides[axis]).reshape(
                (-1,) + (1,) * (lead - 1 - axis))
        per = rel.size
        starts = np.broadcast_to(base.reshape(-1, 1).astype(np.int64) + rel.reshape(1, -1), (programs, per))
        return Runs(starts.reshape(-1), np.full(programs * per, run, np.int64),
                    np.repeat(np.arange(programs, dtype=np.int64), per), np.tile(
                        np.arange(per, dtype=np.int64) * run, programs))

    @property
    def nbytes(self) -> int:
        return self.start.nbytes * 4

    def span(self) -> tuple[int, int]:
        return int(self.start.min()), int((self.start + self.length).max()) - 1

    def overlapping(self) -> bool:
        """Whether two of its lanes reach one element."""
        order = np.argsort(self.start, kind="stable")
        stops = (self.start + self.length)[order]
        return bool((stops[:-1] > self.start[order][1:]).any())

    def expand(self) -> tuple[Array, Array, Array, Array]:
        """Per lane, in access order: element, run, group row, lane."""
        run = np.repeat(np.arange(self.start.size), self.length)
        step = np.arange(run.size) - np.repeat(np.cumsum(self.length) - self.length, self.length)
        return self.start[run] + step, run, self.row[run], self.lane[run] + step


def _rows(offs: Array | Affine, start: int, stop: int, shape: tuple[int, ...]) -> Array:
    """Rows ``start:stop`` of the offsets broadcast to ``shape``, flattened per row."""
    if isinstance(offs, Affine):
        base = offs.base if offs.base.shape[0] == 1 else offs.base[start:stop]
        offs, shape = Affine(base, offs.strides, offs.block, offs.dtype).materialize(), (min(stop, shape[0]) - start,
                                                                                          *shape[1:])
        return np.broadcast_to(offs, shape).reshape(shape[0], -1)
    return np.broadcast_to(offs, shape)[start:stop].reshape(-1, int(np.prod(shape[1:], dtype=np.int64)))


def _runs(offs: Array, live: Array, first_row: int) -> tuple[Array, Array, Array, Array]:
    """The runs of rows ``first_row..`` (see :class:`Runs`)."""
    width = offs.shape[1]
    goes_on = np.zeros(offs.shape, bool)  # the lane continues its left neighbour's run
    np.equal(offs[:, 1:] - offs[:, :-1], 1, out=goes_on[:, 1:])
    goes_on[:, 1:] &= live[:, :-1]
    goes_on &= live
    heads = np.flatnonzero(live & ~goes_on)
    ends = np.flatnonzero(live & ~np.concatenate([goes_on[:, 1:], np.zeros((offs.shape[0], 1), bool)], axis=1))
    row, lane = np.divmod(heads, width)
    return offs.reshape(-1)[heads].astype(np.int64), ends - heads + 1, row + first_row, lane


@dataclass(frozen=True)
class Kept:
    """An access kept for later: its runs, and per run the program, tag and barriers executed."""

    runs: Runs
    program: Array
    tag: Array
    barrier: Array

    @functools.cached_property
    def nbytes(self) -> int:
        """Computed once: a memory's budget sums it after every access."""
        return self.runs.nbytes + held(self.program, self.tag, self.barrier)


@dataclass
class Lanes:
    """The live lanes of an access, one entry each: element, program, lane, tag, barriers executed."""

    index: Array
    program: Array
    lane: Array
    tag: Array
    barrier: Array

    @staticmethod
    def of(kept: Kept) -> Lanes:
        index, run, _, lane = kept.runs.expand()
        return Lanes(index, kept.program[run], lane, kept.tag[run], kept.barrier[run])

    def pick(self, which: Array) -> Lanes:
        return Lanes(self.index[which], self.program[which], self.lane[which], self.tag[which], self.barrier[which])


# shadow arrays of finished launches, reused: a fresh array page-faults on first touch
_POOL: dict[tuple[int, np.dtype[Any]], list[Array]] = {}
POOL_BYTES = 64 << 20  # arrays larger than this are not kept


def _take(size: int, dtype: np.dtype[Any], fill: int | None = None) -> Array:
    kept = _POOL.get((size, dtype))
    array = kept.pop() if kept else np.empty(size, dtype)
    if fill is not None:
        array.fill(fill)
    return array


@dataclass
class Span:
    """The elements ``[low, high]`` some accesses reach."""

    low: int = 1 << 62
    high: int = -1

    def meets(self, low: int, high: int) -> bool:
        return low <= self.high and high >= self.low

    def widen(self, low: int, high: int) -> None:
        self.low, self.high = min(self.low, low), max(self.high, high)


@dataclass(frozen=True)
class Place:
    """Where an affine access of a group goes: lane ``i`` of program ``first + r`` (``r <
    count``) at ``offsets`` lane ``i`` of row ``r``."""

    first: int
    count: int
    offsets: Affine

    def same(self, other: Place) -> bool:
        """Whether both reach the same elements from the same programs, lane for lane."""
        a, b = self.offsets, other.offsets
        return self.first == other.first and self.count == other.count and a.strides == b.strides and \
            a.block == b.block and a.base.shape == b.base.shape and (a.base is b.base or np.array_equal(a.base, b.base))


@dataclass(frozen=True)
class Lazy:
    """A load kept unscanned: its first program, the bytes its maker holds, the maker of its
    runs, and where it went when that is known without them."""

    first: int
    held: int
    make: Callable[[], Kept]
    place: Place | None = None


@dataclass
class Deferred:
    """A store kept for later: how to enter it into the writer arrays and what that holds, and
    (for one kept as views) how to make it runs instead, which may hold less."""

    first: int  # its first program
    held: int
    enter: Callable[[Shadow], None]
    compact: Callable[[], Kept] | None = None

    @staticmethod
    def of(first: int, kept: Kept) -> Deferred:
        return Deferred(first, kept.nbytes, lambda into: enter_writers(into, Lanes.of(kept)))


@dataclass(frozen=True)
class Stretch:
    """Elements ``[low, high)`` of a shadow whose every entry holds one value: the last plain
    writer's program, tag and barriers executed, with consecutive lanes from ``lane`` at ``low``
    (or BROADCAST for all), and both loading programs with their tags (tags are 0 where the
    program is NOBODY). A one-run access of one program inside it is checked and entered with a
    few scalars (``Races._load_run``, ``Races._store_run``): a lock's critical section, run
    program by program, meets the last holder's run each time."""

    low: int
    high: int
    writer: int
    writer_tag: int
    lane: int
    barrier: int
    a: int
    a_tag: int
    b: int
    b_tag: int

    def covers(self, low: int, high: int) -> bool:
        return self.low <= low and high <= self.high


@dataclass
class Shadow:
    """Who touched each element of one memory: the last plain writer (program, tag, lane and
    barriers executed) and two loading programs (with tags). Accesses that needed no check are
    kept (stores as ``deferred`` entries, loads as ``lazy`` or ``loaded`` ones) and entered only when a
    later access meets them, so a launch that writes each element once builds no arrays."""

    size: int
    ids: np.dtype[Any]
    written: Span = field(default_factory=Span)  # what the stores reach
    read: Span = field(default_factory=Span)  # what the loads reach
    deferred: list[Deferred] = field(default_factory=list)
    lazy: list[Lazy] = field(default_factory=list)  # loads not yet scanned
    stuck: list[Lazy] = field(default_factory=list)  # ones whose runs hold more
    lazy_bytes: int = 0  # what the lazy and stuck loads hold (summed once per change, not per access)
    loaded: list[tuple[int, Kept]] = field(default_factory=list)  # loads as runs, within ``read``
    writer: Array | None = None
    writer_tag: Array | None = None
    writer_at: Array | None = None  # lane | barriers << LANE_BITS
    reader: list[Array] | None = None  # program a, tag a, program b, tag b
    stretch: Stretch | None = None  # where the arrays are known to hold one value (None once anything else writes them)

    def writers(self) -> tuple[Array, Array, Array]:
        """The writer arrays, built if needed, with the deferred stores entered in order."""
        self.stretch = None  # the caller may write them
        if self.writer is None:
            self.writer = _take(self.size, self.ids, NOBODY)
            self.writer_tag = _take(self.size, np.dtype(np.int32))  # read only where a writer is entered
            self.writer_at = _take(self.size, np.dtype(np.int64))
        deferred, self.deferred = self.deferred, []
        for entry in deferred:
            entry.enter(self)
        assert self.writer_tag is not None and self.writer_at is not None
        return self.writer, self.writer_tag, self.writer_at

    def readers(self) -> list[Array]:
        """The reader arrays, built if needed, with the kept loads entered."""
        self.stretch = None  # the caller may write them
        if self.reader is None:
            self.reader = [_take(self.size, self.ids, NOBODY), _take(self.size, np.dtype(np.int32)),
                           _take(self.size, self.ids, NOBODY), _take(self.size, np.dtype(np.int32))]
        self.scan()
        loaded, self.loaded = self.loaded, []
        for _, kept in loaded:
            note_readers(self.reader, Lanes.of(kept))
        return self.reader

    def scan(self, keep: Callable[[Place], bool] | None = None) -> None:
        """Turn the lazily kept loads into runs (their makers may hold whole blocks), and widen
        ``read`` by them; loads whose place ``keep`` accepts stay lazy (a store they provably
        cannot race with)."""
        if keep is None:
            scanned, self.lazy, self.stuck = self.lazy + self.stuck, [], []
        else:
            scanned = [e for e in self.lazy + self.stuck if e.place is None or not keep(e.place)]
            self.lazy = [e for e in self.lazy if e.place is not None and keep(e.place)]
            self.stuck = [e for e in self.stuck if e.place is not None and keep(e.place)]
        self.lazy_bytes = sum(entry.held for entry in self.lazy + self.stuck)
        for entry in scanned:
            self._scanned(entry.first, entry.make())

    def _scanned(self, first: int, kept: Kept) -> None:
        if kept.runs.start.size:
            self.read.widen(*kept.runs.span())
            self.loaded.append((first, kept))

    def held(self) -> int:
        return sum(entry.held for entry in self.deferred) + self.lazy_bytes + \
            sum(kept.nbytes for _, kept in self.loaded)

    def settle(self) -> None:
        """Past the budget: the kept accesses that hold most become runs, where runs hold less;
        past what per-element arrays would cost, those are built."""
        while self.lazy and not self.stuck and self.held() > HELD_BYTES:  # once runs did not pay, stop trying
            load = self.lazy.pop(max(range(len(self.lazy)), key=lambda k: self.lazy[k].held))
            kept = load.make()
            if kept.nbytes < load.held:
                self.lazy_bytes -= load.held
                self._scanned(load.first, kept)
            else:
                self.stuck.append(load)
        while self.held() > HELD_BYTES and any(entry.compact for entry in self.deferred):
            entry = max((e for e in self.deferred if e.compact), key=lambda e: e.held)
            assert entry.compact is not None
            kept, entry.compact = entry.compact(), None
            if kept.nbytes < entry.held:
                entry.held, entry.enter = kept.nbytes, Deferred.of(entry.first, kept).enter
        if self.held() > max(HELD_BYTES, SHADOW_BYTES * self.size):
            if self.deferred:
                self.writers()
            if self.loaded or self.lazy or self.stuck:
                self.readers()

    def arrays(self) -> list[Array]:
        return [a for a in (self.writer, self.writer_tag, self.writer_at) if a is not None] + (self.reader or [])

    def release(self) -> None:
        """Give the arrays back for the next launch's shadows."""
        for array in self.arrays():
            if array.nbytes <= POOL_BYTES and not _POOL.get((array.size, array.dtype)):
                _POOL.setdefault((array.size, array.dtype), []).append(array)

    def forget(self, first: int, last: int) -> None:
        """Drop the entries of programs ``first..last`` (a group that reruns)."""
        self.stretch = None
        self.deferred = [entry for entry in self.deferred if entry.first < first]
        self.lazy = [entry for entry in self.lazy if entry.first < first]
        self.stuck = [entry for entry in self.stuck if entry.first < first]
        self.lazy_bytes = sum(entry.held for entry in self.lazy + self.stuck)
        self.loaded = [entry for entry in self.loaded if entry[0] < first]
        for who in [self.writer] + (self.reader or [])[::2]:
            if who is not None:
                who[(who >= first) & (who <= last)] = NOBODY


def note_readers(reader: list[Array], lanes: Lanes) -> None:
    """Enter loading lanes: slot a takes the first program, slot b the first other than a's."""
    a, a_tag, b, b_tag = reader
    first = a[lanes.index] == NOBODY
    a[lanes.index[first]] = lanes.program[first]
    a_tag[lanes.index[first]] = lanes.tag[first]
    second = (a[lanes.index] != lanes.program) & (b[lanes.index] == NOBODY)
    b[lanes.index[second]] = lanes.program[second]
    b_tag[lanes.index[second]] = lanes.tag[second]


def held(*arrays: Array | None) -> int:
    """The bytes these arrays hold (a broadcast axis holds one element's worth)."""
    return sum(math.prod(n for n, st in zip(a.shape, a.strides) if st) * a.itemsize for a in arrays if a is not None)


def enter_writers(shadow: Shadow, lanes: Lanes) -> None:
    """Make the lanes the last writers of their elements."""
    writer, writer_tag, writer_at = shadow.writers()
    writer[lanes.index] = lanes.program
    writer_tag[lanes.index] = lanes.tag
    writer_at[lanes.index] = lanes.lane | (lanes.barrier << LANE_BITS)


def one_run(offsets: Affine | None) -> tuple[int, int] | None:
    """``(low, high)`` when one program's lanes are the elements ``low..high - 1`` in lane order."""
    if offsets is None or offsets.base.shape[0] != 1:
        return None
    count = 1
    for stride, extent in zip(reversed(offsets.strides), reversed(offsets.block)):
        if extent != 1 and stride != count:
            return None
        count *= extent
    low = int(offsets.base[0])
    return low, low + count


def stretch_of(shadow: Shadow, low: int, high: int) -> Stretch | None:
    """The shadow's arrays over ``[low, high)`` as a :class:`Stretch`, when they hold one value
    there (consecutive lanes); else None."""
    if shadow.writer is None or shadow.reader is None:
        return None
    assert shadow.writer_tag is not None and shadow.writer_at is not None
    writer, tag = _one_value(shadow.writer[low:high], shadow.writer_tag[low:high])
    lane = barrier = 0
    if writer is None or tag is None:
        return None
    if writer != NOBODY:
        at = shadow.writer_at[low:high]
        first = int(at[0])
        lane, barrier = first & LANE_MASK, first >> LANE_BITS
        if not bool((at == (first if lane == BROADCAST else first + np.arange(high - low))).all()):
            return None
    (a, a_tag), (b, b_tag) = (_one_value(shadow.reader[k][low:high], shadow.reader[k + 1][low:high]) for k in (0, 2))
    if a is None or a_tag is None or b is None or b_tag is None:
        return None
    return Stretch(low, high, writer, tag, lane, barrier, a, a_tag, b, b_tag)


def _one_value(who: Array, tag: Array) -> tuple[int | None, int | None]:
    """The one program in ``who`` and its one tag (0 for NOBODY, whose tags are not kept), or Nones."""
    first = int(who[0])
    if not bool((who == first).all()):
        return None, None
    if first == NOBODY:
        return first, 0
    tagged = int(tag[0])
    return (first, tagged) if bool((tag == tagged).all()) else (None, None)
