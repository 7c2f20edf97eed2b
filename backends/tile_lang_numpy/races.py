"""Data races in one launch: between programs, and between the lanes of one program.

Between programs: a store to an element another program stored or loaded, or a load of an
element another program stored, is a race unless an atomic separates them (the earlier program
executed an atomic after its access and the later one has executed one before its own: a lock,
or a counter the last program waits on). Within a program: a load, store or atomic by one lane
of an element another lane of the same program stored is a race unless a ``tl.debug_barrier()``
separates them (lanes of a block are threads of the GPU). A lane is an element of the access's
block, by flat row-major index (a scalar is lane 0); lanes of one store writing one value to one
element (a broadcast) count as every lane's. A store that writes the value an element already
holds (bit for bit) races with nothing, so programs may all store one scalar; lanes or programs
of one store writing different values to one element race. Atomics never race with atomics.

Bookkeeping grows with what is touched twice (:mod:`shadows`): accesses are kept as runs
(consecutive lanes of one program at consecutive elements, a few numbers per row of a tile) and
checked against others only where their spans meet; per-element shadow arrays of a memory are
built only then, or when its kept accesses pass ``HELD_BYTES``; one program's run of lanes
inside a stretch of them holding one value is checked with scalars (a lock's holders, run one
at a time). ``TILE_LANG_RACE_CHECK=0`` turns the check off.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tile_lang.errors import KernelError

from tile_lang_numpy.affine import Affine
from tile_lang_numpy.shadows import BROADCAST, EPOCH_BITS, EPOCH_MASK, HELD_BYTES, LANE_BITS, LANE_MASK, NOBODY
from tile_lang_numpy.shadows import Deferred, Kept, Lanes, Lazy, Place, Runs, Shadow, Span, Stretch
from tile_lang_numpy.shadows import enter_writers, held, note_readers, one_run, stretch_of
from tile_lang_numpy.values import Array, Memory

ENV = "TILE_LANG_RACE_CHECK"


def enabled() -> bool:
    """Whether launches check for races (on unless ``TILE_LANG_RACE_CHECK`` is 0/off/false/no)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


class Access(enum.Enum):
    LOAD = "loads"
    STORE = "stores"
    ATOMIC = "atomically updates"


@dataclass(frozen=True)
class Site:
    """A line of user code."""

    filename: str
    lineno: int

    def __str__(self) -> str:
        return f"line {self.lineno} of {os.path.basename(self.filename)}"


@dataclass(frozen=True)
class Conflict:
    """The first racing lane of an access: position in its lanes, the other access's program,
    tag, kind and lane (None when it was a load, which names no lane)."""

    position: int
    other: int
    other_tag: int
    other_access: Access
    other_lane: int | None = None


Report = Callable[[str], KernelError]


class Races:
    """Launch-wide race state: a shadow per accessed memory, atomics and barriers per program."""

    def __init__(self, grid: tuple[int, int, int]) -> None:
        self.grid = grid
        self.shadows: dict[int, Shadow] = {}
        self.sites: list[Site] = []
        self._site_ids: dict[Site, int] = {}
        self._shared_tags: dict[tuple[int, int], Array] = {}  # read-only tags of a site's group, before any atomic
        self.atomics: Array | None = None  # atomics executed, per program (linear id)
        self.barriers: Array | None = None  # tl.debug_barrier()s executed, per program
        self.ids = np.dtype(np.int32 if grid[0] * grid[1] * grid[2] < 2**31 else np.int64)

    # ---------------------------------------------------------------- bookkeeping

    def close(self) -> None:
        """The launch is over: shadow arrays go back to the pool; kept accesses are dropped
        (their makers hold the engine, which holds this: a cycle that would keep the launch's
        blocks alive until the garbage collector ran)."""
        for shadow in self.shadows.values():
            shadow.release()
        self.shadows.clear()

    def forget(self, first: int, last: int) -> None:
        """A group of programs ``first..last`` is rolled back to rerun: drop what it did."""
        for shadow in self.shadows.values():
            shadow.forget(first, last)
        for counts in (self.atomics, self.barriers):
            if counts is not None:
                counts[first:last + 1] = 0

    def tags(self, site: Site, programs: Array | range) -> Array:
        """Per program (linear ids, or a range of them): the site and how many atomics it has
        executed so far."""
        ident = self._site_id(site)
        if self.atomics is None:  # no program has executed an atomic yet: every epoch is 0
            shared = self._shared_tags.get((ident, len(programs)))
            if shared is None:
                shared = self._shared_tags[ident, len(programs)] = np.broadcast_to(
                    np.int32(ident << EPOCH_BITS), (len(programs),))
            return shared
        counts = self.atomics[programs.start:programs.stop] if isinstance(programs, range) else self.atomics[programs]
        return (ident << EPOCH_BITS) | np.minimum(counts, EPOCH_MASK).astype(np.int32)

    def _site_id(self, site: Site) -> int:
        ident = self._site_ids.setdefault(site, len(self._site_ids))
        if ident == len(self.sites):
            self.sites.append(site)
        return ident

    def _tag(self, site: Site, program: int) -> int:
        """One program's tag at ``site`` (see :meth:`tags`)."""
        done = 0 if self.atomics is None else min(int(self.atomics[program]), EPOCH_MASK)
        return self._site_id(site) << EPOCH_BITS | done

    def barriers_of(self, programs: Array) -> Array:
        return np.broadcast_to(np.int64(0), programs.shape) if self.barriers is None else self.barriers[programs]

    def note_atomic(self, programs: slice | Array) -> None:
        """Programs that executed an atomic (a possible synchronisation point)."""
        if self.atomics is None:
            self.atomics = np.zeros(self.grid[0] * self.grid[1] * self.grid[2], np.int32)
        self.atomics[programs] += 1  # a group's programs are distinct

    def note_barrier(self, programs: slice | Array) -> None:
        """Programs that executed ``tl.debug_barrier()``: their lanes' earlier stores are settled."""
        if self.barriers is None:
            self.barriers = np.zeros(self.grid[0] * self.grid[1] * self.grid[2], np.int64)
        self.barriers[programs] += 1

    def keep(self, runs: Runs, first: int, site: Site) -> Kept:
        """An access's runs (of the group of programs from ``first`` on) with each run's
        program, tag and barriers executed."""
        program = (first + runs.row).astype(self.ids)
        return Kept(runs, program, self.tags(site, program), self.barriers_of(program))

    def _shadow(self, memory: Memory) -> Shadow:
        shadow = self.shadows.get(id(memory))
        if shadow is None:
            shadow = self.shadows[id(memory)] = Shadow(memory.size, self.ids)
        return shadow

    # ---------------------------------------------------------------- accesses

    def load(self, memory: Memory, make: Callable[[], Runs], held: int, first: int, count: int, site: Site,
             report: Report, offsets: Affine | None = None, whole: bool = False) -> None:
        """A plain load by the group of ``count`` programs from ``first`` on (a group's linear ids
        are consecutive); ``make`` gives its runs when needed and holds ``held`` bytes until then;
        ``offsets``, when given, are the (affine) elements it reaches, so its place is known
        without the runs, and ``whole`` says every lane is live."""
        shadow = self._shadow(memory)
        run = one_run(offsets) if whole and count == 1 else None
        if run is not None and self._load_run(shadow, *run, first, site):
            return
        tags = self.tags(site, range(first, first + count))

        def kept() -> Kept:
            runs = make()
            program = (first + runs.row).astype(self.ids)
            return Kept(runs, program, tags[runs.row], self.barriers_of(program))  # barriers: now, for the check

        place = None if offsets is None else Place(first, count, offsets)
        if (shadow.writer is None and not shadow.deferred) or (place is not None and not shadow.written.meets(
                *place.offsets.span())):  # nothing stored yet where it reads: nothing to check
            shadow.lazy.append(Lazy(first, held, kept, place))
            shadow.lazy_bytes += held
        else:
            self._loaded(shadow, kept(), memory, site, report)
        if shadow.held() > HELD_BYTES:
            shadow.settle()
        if run is not None:
            shadow.stretch = stretch_of(shadow, *run)

    def _loaded(self, shadow: Shadow, access: Kept, memory: Memory, site: Site, report: Report) -> None:
        """A load of a memory stored to: checked where it meets the stores, then kept."""
        if not access.runs.start.size:
            return
        low, high = access.runs.span()
        shadow.read.widen(low, high)
        stored = shadow.written.meets(low, high)
        if not stored and shadow.reader is None:
            shadow.loaded.append((int(access.program[0]), access))
            return
        lanes = Lanes.of(access)
        if stored:
            self._check_writer(shadow, lanes, memory, Access.LOAD, site, report)
        if shadow.reader is not None:
            shadow.stretch = None
            note_readers(shadow.reader, lanes)
        else:
            shadow.loaded.append((int(access.program[0]), access))

    def store(self, memory: Memory, runs: Runs, data: Array, first: int, site: Site, report: Report) -> None:
        """A plain store of ``data`` (shaped like the offsets the runs came from) by the group of
        programs from ``first`` on."""
        if not runs.start.size:
            return
        shadow = self._shadow(memory)
        shadow.scan()
        low, high = runs.span()
        access = self.keep(runs, first, site)
        twice = runs.overlapping()
        if not twice and not shadow.written.meets(low, high) and not shadow.read.meets(low, high):
            shadow.written.widen(low, high)
            shadow.deferred.append(Deferred.of(first, access))
            if shadow.held() > HELD_BYTES:
                shadow.settle()
            return
        shadow.written.widen(low, high)
        lanes = Lanes.of(access)
        _, _, row, lane = runs.expand()
        within = np.unravel_index(lane, data.shape[1:]) if data.ndim > 1 else ()
        mine = _bits(data)[(np.minimum(row, data.shape[0] - 1), *within)]
        changed = lanes.pick(_bits(memory.flat)[lanes.index] != mine)  # storing what is there races with nothing
        self._check_writer(shadow, changed, memory, Access.STORE, site, report)
        if shadow.read.meets(low, high):
            a, a_tag, b, b_tag = shadow.readers()
            self._check(changed, a, a_tag, Access.LOAD, memory, Access.STORE, site, report)
            self._check(changed, b, b_tag, Access.LOAD, memory, Access.STORE, site, report)
        enter_writers(shadow, self._one_per_element(lanes, mine, memory, site, report) if twice else lanes)

    def _one_per_element(self, lanes: Lanes, mine: Array, memory: Memory, site: Site, report: Report) -> Lanes:
        """Lanes of one store reaching one element: a race unless they store one value; then
        the last stands for them all (as every lane's, when they are one program's)."""
        order = np.argsort(lanes.index, kind="stable")
        ordered = lanes.index[order]
        last = np.concatenate([ordered[1:] != ordered[:-1], [True]])  # the last lane of its element
        group = np.concatenate([[0], np.cumsum(last)[:-1]])  # per sorted lane: its element's group
        head = np.concatenate([[0], np.flatnonzero(last[:-1]) + 1])[group]  # its element's first sorted lane
        differ = np.zeros(order.size, bool)
        differ[order] = mine[order] != mine[order[head]]
        if bool(differ.any()):  # the first lane (in order) storing another value than an earlier one
            k = int(np.argmax(differ))
            first = int(order[head[np.flatnonzero(order == k)[0]]])
            other = Conflict(k, int(lanes.program[first]), int(lanes.tag[first]), Access.STORE, int(lanes.lane[first]))
            raise self._message(memory, lanes, other, Access.STORE, site, report)
        winner = order[last][group]
        kept = lanes.pick(order[last])
        shared = (~last) & (lanes.program[order] == lanes.program[winner])  # another lane of the winner's program
        kept.lane[group[shared]] = BROADCAST
        return kept

    def store_views(self, memory: Memory, views_of: Callable[[Array], list[Array]], span: tuple[int, int],
                    programs: list[Array], live: list[Array | None], block: tuple[int, ...], site: Site,
                    slow: Callable[[], None], runs: Callable[[], Runs], mine: Place) -> None:
        """A plain store through strided views (one per group of programs, as the store itself
        goes), at ``mine``: checked and entered through the same views of the shadow; ``slow``
        redoes it lane by lane when some element was touched before, to check and name it.
        Elements ``span`` covers need no check when nothing reached them yet (a fresh output), or
        only loads at the same place by the same programs (an in-place update: one view for all
        programs never gives two programs one element); such a store is kept as views, or as
        ``runs`` once the kept stores pass the budget."""
        shadow = self._shadow(memory)
        run = one_run(mine.offsets) if len(programs) == 1 and programs[0].size == 1 and live[0] is None else None
        tags = [self.tags(site, me.reshape(-1)).reshape(me.shape) for me in programs]
        barriers = [self.barriers_of(me) for me in programs]
        place = np.arange(int(np.prod(block, dtype=np.int64)), dtype=np.int64).reshape(block)

        def enter(into: Shadow) -> None:
            writer, writer_tag, writer_at = into.writers()
            for me, lv, tag, barrier, who, whose, where in zip(programs, live, tags, barriers, views_of(writer),
                                                                views_of(writer_tag), views_of(writer_at)):
                mask = True if lv is None else lv
                np.copyto(who, me, where=mask)
                np.copyto(whose, tag, where=mask)
                np.copyto(where, place + (barrier << LANE_BITS), where=mask)

        if len(programs) > 1:  # views of one store may overlap each other: lane by lane
            shadow.scan()
            slow()
            return
        shadow.scan(lambda load: not Span(*load.offsets.span()).meets(*span) or load.same(mine))
        if shadow.written.meets(*span) or shadow.read.meets(*span):
            if not self._plain(shadow, views_of, programs, live, barriers, place):
                slow()
                return
            enter(shadow)
            shadow.written.widen(*span)
            if run is not None:
                shadow.stretch = stretch_of(shadow, *run)
            return
        shadow.written.widen(*span)
        def compact() -> Kept:
            lanes = runs()
            return Kept(lanes, programs[0].reshape(-1)[lanes.row], tags[0].reshape(-1)[lanes.row],
                        barriers[0].reshape(-1)[lanes.row])

        shadow.deferred.append(Deferred(int(programs[0].reshape(-1)[0]), held(*programs, *tags, *barriers, *live),
                                        enter, compact))
        if shadow.held() > HELD_BYTES:
            shadow.settle()

    def store_run(self, memory: Memory, offsets: Affine, me: int, site: Site) -> bool:
        """A plain store of every lane of one program ``me`` at ``offsets``, when they are one run
        inside a stretch (see :meth:`_store_run`); False: :meth:`store_views` must check it."""
        run = one_run(offsets)
        return run is not None and self._store_run(self._shadow(memory), *run, me, site)

    def _load_run(self, shadow: Shadow, low: int, high: int, me: int, site: Site) -> bool:
        """A load of elements ``[low, high)`` by program ``me`` (lane ``k`` at ``low + k``) inside
        the shadow's stretch, checked and entered as :meth:`_loaded` would: False when it must
        take that path (no stretch holds it, or it may race, which that path names)."""
        s = shadow.stretch
        if s is None or not s.covers(low, high) or shadow.deferred or not shadow.written.meets(low, high - 1):
            return False
        if self._unsynced_one(s.writer, s.writer_tag, me) or self._own_lanes_race(s, low, me):
            return False
        assert shadow.reader is not None  # a stretch is made with the reader arrays
        tag, (a, a_tag, b, b_tag) = self._tag(site, me), (s.a, s.a_tag, s.b, s.b_tag)
        if a == NOBODY:  # as note_readers: slot a takes the first program, slot b the first other
            a, a_tag = me, tag
            shadow.reader[0][low:high], shadow.reader[1][low:high] = a, a_tag
        elif a != me and b == NOBODY:
            b, b_tag = me, tag
            shadow.reader[2][low:high], shadow.reader[3][low:high] = b, b_tag
        shadow.read.widen(low, high - 1)
        if (a, b) != (s.a, s.b):
            lane = s.lane if s.lane == BROADCAST else s.lane + low - s.low
            shadow.stretch = Stretch(low, high, s.writer, s.writer_tag, lane, s.barrier, a, a_tag, b, b_tag)
        return True

    def _store_run(self, shadow: Shadow, low: int, high: int, me: int, site: Site) -> bool:
        """A plain store to elements ``[low, high)`` by program ``me`` (lane ``k`` at ``low + k``)
        inside the shadow's stretch, checked and entered as :meth:`store_views` would: False
        when it must take that path (no stretch holds it, kept accesses wait to be entered, it
        meets nothing yet, or it may race, which that path names)."""
        s = shadow.stretch
        if s is None or not s.covers(low, high) or shadow.deferred or shadow.lazy or shadow.stuck or shadow.loaded:
            return False
        if not (shadow.written.meets(low, high - 1) or shadow.read.meets(low, high - 1)):
            return False
        if self._unsynced_one(s.writer, s.writer_tag, me) or self._own_lanes_race(s, low, me) or \
                self._unsynced_one(s.a, s.a_tag, me) or self._unsynced_one(s.b, s.b_tag, me):
            return False
        assert shadow.writer is not None and shadow.writer_tag is not None and shadow.writer_at is not None
        tag, barrier = self._tag(site, me), self._barrier(me)
        shadow.writer[low:high], shadow.writer_tag[low:high] = me, tag
        shadow.writer_at[low:high] = np.arange(high - low) + (barrier << LANE_BITS)
        shadow.written.widen(low, high - 1)
        shadow.stretch = Stretch(low, high, me, tag, 0, barrier, s.a, s.a_tag, s.b, s.b_tag)
        return True

    def _unsynced_one(self, other: int, tag: int, me: int) -> bool:
        """:meth:`_unsynced` of one element."""
        if other == NOBODY or other == me:
            return False
        return self.atomics is None or not (int(self.atomics[other]) > (tag & EPOCH_MASK) and int(self.atomics[me]) > 0)

    def _own_lanes_race(self, s: Stretch, low: int, me: int) -> bool:
        """Whether lanes of program ``me`` from ``low`` on meet other lanes of its own in the
        stretch with no barrier between them (the second check of :meth:`_check_writer`)."""
        return s.writer == me and s.lane != BROADCAST and s.lane - s.low != -low and s.barrier == self._barrier(me)

    def _barrier(self, program: int) -> int:
        return 0 if self.barriers is None else int(self.barriers[program])

    def _plain(self, shadow: Shadow, views_of: Callable[[Array], list[Array]], programs: list[Array],
               live: list[Array | None], barriers: list[Array], place: Array) -> bool:
        """Whether a strided store provably races with nothing it meets: each earlier store is by
        this lane itself or since a barrier of its program, or by another program with an atomic
        between them, and each earlier load is by its own program or one synchronised so (a lock
        handing elements from program to program). False sends it lane by lane, to name a race."""
        writer, writer_tag, writer_at = (views_of(a) for a in shadow.writers())
        readers = [views_of(a) for a in shadow.readers()] if shadow.loaded or shadow.reader else []
        for k, (me, lv, barrier) in enumerate(zip(programs, live, barriers)):
            at = writer_at[k]
            lane = at & LANE_MASK
            suspects = [self._unsynced(writer[k], writer_tag[k], me) |
                        ((writer[k] == me) & (lane != place) & (lane != BROADCAST) & ((at >> LANE_BITS) == barrier))]
            suspects += [self._unsynced(readers[s][k], readers[s + 1][k], me) for s in (0, 2) if readers]
            suspect = np.logical_or.reduce(suspects) if len(suspects) > 1 else suspects[0]
            if bool((suspect if lv is None else suspect & lv).any()):
                return False
        return True

    def _unsynced(self, who: Array, tag: Array, me: Array) -> Array:
        """Where another program accessed (``who``, with its ``tag``) with no atomic between that
        access and program ``me`` (which has executed one since the other's access, after its own)."""
        other: Array = (who != NOBODY) & (who != me)
        if self.atomics is None or not bool(other.any()):
            return other
        synced: Array = (self.atomics[np.maximum(who, 0)] > (tag & EPOCH_MASK)) & (self.atomics[me] > 0)
        return other & ~synced

    def atomic(self, memory: Memory, make: Callable[[], Runs], first: int, where: Callable[[], Site],
               report: Report) -> None:
        """An atomic's lanes (``make`` gives them, needed only where plain stores went; ``where``
        its site): a race with a plain store of another lane of the same program."""
        shadow = self.shadows.get(id(memory))
        if shadow is None or (shadow.writer is None and not shadow.deferred):
            return
        site = where()
        runs = make()
        if not runs.start.size or not shadow.written.meets(*runs.span()):
            return
        lanes = Lanes.of(self.keep(runs, first, site))
        self._check_writer(shadow, lanes, memory, Access.ATOMIC, site, report, between_programs=False)

    # ---------------------------------------------------------------- checks

    def _check_writer(self, shadow: Shadow, lanes: Lanes, memory: Memory, access: Access, site: Site,
                      report: Report, between_programs: bool = True) -> None:
        """Lanes against the last plain writer of their elements: another program with no
        atomic between them, or another lane of the same program with no barrier between them."""
        writer, writer_tag, writer_at = shadow.writers()
        if between_programs:
            self._check(lanes, writer, writer_tag, Access.STORE, memory, access, site, report)
        others, at = writer[lanes.index], writer_at[lanes.index]
        their_lane = at & LANE_MASK
        racing = (others == lanes.program) & (their_lane != lanes.lane) & (their_lane != BROADCAST) & \
            (lanes.lane != BROADCAST) & ((at >> LANE_BITS) == lanes.barrier)
        hits = np.flatnonzero(racing)
        if hits.size:
            k = int(hits[0])
            conflict = Conflict(k, int(others[k]), int(writer_tag[lanes.index[k]]), Access.STORE, int(their_lane[k]))
            raise self._message(memory, lanes, conflict, access, site, report)

    def _check(self, lanes: Lanes, who: Array, tag: Array, earlier: Access, memory: Memory, later: Access,
               site: Site, report: Report) -> None:
        """Lanes against one slot, between programs."""
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
                 report: Report) -> KernelError:
        other_site = self.sites[c.other_tag >> EPOCH_BITS]
        k = c.position
        program, lane = int(lanes.program[k]), int(lanes.lane[k])
        head = f"data race on {memory.param}[{int(lanes.index[k])}]: "
        if c.other != program:
            return report(
                f"{head}program {self.coords(program)} {access.value} it (lane {_lane(lane)}, {site}) and program "
                f"{self.coords(c.other)} {c.other_access.value} it ({other_site}), with no atomic between them. "
                f"Give each program its own elements or use tl.atomic_*; {ENV}=0 turns this check off")
        return report(
            f"{head}lane {_lane(lane)} of program {self.coords(program)} {access.value} it ({site}) and lane "
            f"{_lane(c.other_lane)} of the same program {c.other_access.value} it ({other_site}), with no "
            f"tl.debug_barrier() between them (lanes run as separate GPU threads). Separate the two with "
            f"tl.debug_barrier() or have each lane touch only what it stored; {ENV}=0 turns this check off")

    def coords(self, program: int) -> tuple[int, ...]:
        gx, gy, gz = self.grid
        full = (program % gx, (program // gx) % gy, program // (gx * gy))
        return full[:3 if gz > 1 else 2 if gy > 1 else 1]


def _lane(lane: int | None) -> str:
    return "(several)" if lane is None or lane == BROADCAST else str(lane)


def _bits(a: Array) -> Array:
    """Values as unsigned integers of their width, so equal means bit for bit equal."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.itemsize in (1, 2, 4, 8) and a.dtype != bool else a

