"""Bounds-checked, masked loads and stores through pointer blocks.

Every lane a load or store touches is checked against the argument its pointer came from;
masked-off lanes never fault. A masked load without ``other`` yields poison: NaN for floats,
the byte pattern 0xA5 repeated for integers (e.g. -1515870811 as i32), True for bools.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import F32, DType
from tile_lang.tensor import Tensor
from tile_lang.errors import SemanticError

from tile_lang_numpy import addresses, affine, values
from tile_lang_numpy.affine import Box
from tile_lang_numpy.elementwise import convert, select
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.shadows import Place, Runs, held
from tile_lang_numpy.values import Array, Pointers

POISON_BYTE = 0xA5


def poison(dtype: DType, shape: tuple[int, ...]) -> Array:
    """The value a masked-off lane reads when a load has no ``other``."""
    if dtype.is_float:
        return convert(np.full(shape, np.nan, dtype=np.float32), F32, dtype)
    if dtype.is_bool:
        return np.ones(shape, dtype=bool)
    return np.full(shape, int.from_bytes(bytes([POISON_BYTE]) * dtype.itemsize, "little"), dtype=np.uint64) \
        .astype(np.dtype(f"u{dtype.itemsize}")).view(dtype.numpy)


def lanes(engine: Engine, ptr: Tensor[Any, Any], mask: object, what: str,
          extra: tuple[int, ...] = ()) -> tuple[Pointers, Array, Array]:
    """Offsets and mask broadcast together (program axis first), after the bounds check."""
    p = values.pointers(ptr, what)
    m = values.lift(True if mask is None else mask)
    try:
        shape = values.block_broadcast(ptr.block_shape, m.block_shape, extra)
    except SemanticError as exc:
        raise engine.error(f"{what}: {exc}") from None
    r = len(shape)
    offs, live = values.align(p.offsets, ptr.ndim, r), values.align(values.array(m), m.ndim, r)
    full = np.broadcast_shapes(offs.shape, live.shape) if offs.shape != live.shape else offs.shape
    live = engine.only_active(shaped(live, full))
    full = (max(full[0], live.shape[0]),) + shape
    offs, live = shaped(offs, full), shaped(live, full)
    engine.note_block(math.prod(shape))
    check_bounds(engine, p, offs, live, what)
    return p, offs, live


def shaped(a: Array, shape: tuple[int, ...]) -> Array:
    """``a`` broadcast to ``shape`` for reading (``a`` itself when it has that shape, so one
    program's scalar atomic costs no call)."""
    return a if a.shape == shape else np.broadcast_to(a, shape)


def check_bounds(engine: Engine, p: Pointers, offs: Array, live: Array, what: str, rows: Array | None = None,
                 lane0: int = 0) -> None:
    """Every live lane inside its memory, else the error naming the first that is not (``rows``:
    the group rows of the offsets' rows, when they are only some programs' lanes; ``lane0``: the
    block's lane of their first, when they are only some lanes of a block of one axis)."""
    outside = offs.view(np.dtype(f"u{offs.dtype.itemsize}")) >= p.memory.size  # negatives wrap to huge
    if not bool(outside.any()):
        return
    bad = live & outside
    if not bool(bad.any()):
        return
    where = np.argwhere(bad)[0]
    row, lane = int(where[0] if rows is None else rows[where[0]]), tuple(int(i) for i in where[1:])
    flat_lane = lane0 + (int(np.ravel_multi_index(lane, offs.shape[1:])) if lane else 0)
    raise engine.error(
        f"out-of-bounds {what} through {p.memory.param}: program {engine.program_of(row)}, lane {flat_lane}"
        f"{' ' + str(lane) if len(lane) > 1 else ''}, offset {int(offs[(int(where[0]), *lane)])}, but "
        f"{p.memory.param} has {p.memory.size} elements (mask this lane, or fix the offsets)")


def gather(engine: Engine, p: Pointers, offs: Array, live: Array, fill: Array | None) -> Array:
    """Read ``offs`` where ``live``; other lanes take ``fill`` (poison when None)."""
    memory = p.memory
    engine.load_lanes(memory, lambda: Runs.of(offs, live, engine.nprograms), held(offs, live))
    dtype = memory.dtype
    if not memory.size:
        return poison(dtype, offs.shape) if fill is None else np.array(fill)
    if bool(live.all()):
        return memory.flat.take(offs)
    got = memory.flat.take(np.where(live, offs, 0))
    return _filled(got, live, poison(dtype, ()) if fill is None else fill)


def _filled(got: Array, live: Array, fill: Array) -> Array:
    """``got``, a fresh copy of the lanes a load read, with ``fill`` in its masked-off lanes: in
    place when it has the result's shape (a masked copy into it costs half a new ``np.where``)."""
    if np.broadcast_shapes(got.shape, live.shape, fill.shape) != got.shape:
        return select(live, got, fill)
    np.copyto(got, fill, where=~live)
    return got


def _in_bounds(p: Pointers) -> bool:
    """Whether an affine pointer block lies wholly inside its memory, for every program."""
    if p.affine is None:
        return False
    low, high = p.affine.span()
    return low >= 0 and high < p.memory.size


def _fits(ptr: Tensor[Any, Any], other: object) -> bool:
    """Whether ``other`` broadcasts to the pointer block without growing it."""
    shape = other.block_shape if isinstance(other, Tensor) else ()
    if shape == () or shape == ptr.block_shape:
        return True
    try:
        return values.block_broadcast(ptr.block_shape, shape) == ptr.block_shape
    except SemanticError:
        return False


def _live(engine: Engine, ptr: Tensor[Any, Any], mask: object, what: str) -> Array | None:
    """The mask, and the executing programs, aligned to the pointer block's rank; None when
    every lane is live."""
    if mask is None:
        return None if engine.active is None else engine.active.reshape((-1,) + (1,) * ptr.ndim)
    m = values.lift(mask)
    if isinstance(m.handle, Box) and engine.active is None:  # whether every lane is live, from the bounds
        return None if m.handle.all_live else values.align(m.handle.materialize(), m.ndim, ptr.ndim)
    live = engine.only_active(values.align(values.array(m), m.ndim, ptr.ndim))
    return None if bool(live.all()) else live


@implements(tl.load)
def load(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    # the cache hints (checked by the rule) change no value
    ptr = a["pointer"]
    if isinstance(ptr, tl.BlockPointer):
        from tile_lang_numpy.blocks import load_block

        return load_block(engine, a)
    if addresses.through(ptr):  # pointers made from integers: by the allocation each lane is in
        return addresses.loaded(engine, a, load)
    if a["volatile"] and engine.spin_check is not None:
        engine.spin_check("a volatile tl.load")
    other = a["other"]
    other_t = None
    if other is not None:
        other_t = values.lift(other)
    fast = _fast_load(engine, ptr, a["mask"], other_t)
    if fast is None:
        fast = _window_load(engine, ptr, a["mask"], other_t)
    if fast is not None:
        return fast
    p, offs, live = lanes(engine, ptr, a["mask"], "load", () if other_t is None else other_t.block_shape)
    dtype = p.memory.dtype
    fill = None
    if other_t is not None:
        fill_arr = convert(values.array(other_t), other_t.type, dtype)
        fill = np.broadcast_to(values.align(fill_arr, other_t.ndim, offs.ndim - 1), offs.shape)
    return values.make(gather(engine, p, offs, live, fill), dtype)


def _fast_load(engine: Engine, ptr: Tensor[Any, Any], mask: object, other: Tensor[Any, Any] | None
               ) -> Tensor[Any, Any] | None:
    """A load through strided views, when the pointers are affine and wholly in bounds."""
    p = values.pointers(ptr, "load")
    if not (_in_bounds(p) and _fits(ptr, mask) and _fits(ptr, other)):
        return None
    assert p.affine is not None
    got = affine.view(p.memory.flat, p.affine, engine.whole_grid)
    dtype = p.memory.dtype
    live = _live(engine, ptr, mask, "load")
    base, strides, block, n = p.affine.base, p.affine.strides, p.affine.block, engine.nprograms  # pins no lanes
    engine.load_lanes(p.memory, lambda: Runs.of(affine.Affine(base, strides, block, np.dtype(np.int64)), live, n),
                      held(base, live), p.affine, live is None)
    if live is None:
        return values.make(got, dtype)
    fill = poison(dtype, ()) if other is None else \
        values.align(convert(values.array(other), other.type, dtype), other.ndim, ptr.ndim)
    loaded = got.materialize() if isinstance(got, affine.Tiles) else got
    return values.make(_filled(loaded, live, fill), dtype)


def _window_load(engine: Engine, ptr: Tensor[Any, Any], mask: object, other: Tensor[Any, Any] | None
                 ) -> Tensor[Any, Any] | None:
    """A load through affine pointers whose programs' bases no strided view serves, or whose
    masked-off lanes stray outside memory: each program's lanes copied as one row of
    :func:`affine.windows`, the bounds checked per program, and lane by lane only for the
    programs whose rows leave memory. Of a block of one axis only the lanes some program has
    live are read (a mirrored edge's few lanes, not the whole row)."""
    p = values.pointers(ptr, "load")
    a = p.affine
    if a is None or not (_fits(ptr, mask) and _fits(ptr, other)):
        return None
    box = _lane_box(engine, a.block, mask)
    live = _live(engine, ptr, mask, "load") if box is None else None
    lo, hi = _live_lanes(engine, a.block, live, mask) if box is None else _narrowed(box.live_lanes(), a.block)
    part = a if (lo, hi) == (0, a.block[0] if a.block else 1) else \
        affine.Affine(a.base + a.strides[0] * lo, a.strides, (hi - lo,), a.dtype)
    made = affine.windows(p.memory.flat, part) if hi > lo else None
    if made is None and hi > lo:
        return None
    engine.note_block(math.prod(ptr.block_shape))
    if box is not None and part is a:
        live = box.materialize()
    if part is a or made is None:
        some = None
    else:  # of a lazy mask, only these lanes are made
        some = box.lanes(lo, hi).materialize() if box is not None else None if live is None else live[:, lo:hi]
    got = None if made is None else _rows(engine, p, part, made, live if part is a else some, lo)
    base, strides, block, n = a.base, a.strides, a.block, engine.nprograms  # pins no lanes

    def runs() -> Runs:  # a lazy mask's lanes are made only if the race check needs them
        return Runs.of(affine.Affine(base, strides, block, np.dtype(np.int64)),
                       live if box is None else box.materialize(), n)

    engine.load_lanes(p.memory, runs, held(base, live) if box is None else held(base) + math.prod(box.shape), a,
                      live is None and box is None)
    dtype = p.memory.dtype
    if live is None and box is None:
        assert got is not None
        return values.make(got, dtype)
    fill = poison(dtype, ()) if other is None else \
        values.align(convert(values.array(other), other.type, dtype), other.ndim, ptr.ndim)
    if part is a:
        assert got is not None and live is not None
        return values.make(_filled(got, live, fill), dtype)
    programs = box.shape[0] if box is not None else live.shape[0] if live is not None else 1
    out = np.empty((max(programs, a.base.shape[0]), *a.block), dtype.numpy)
    out[...] = fill
    if got is not None and some is not None:
        out[:, lo:hi] = select(some, got, fill[:, lo:hi] if fill.ndim == 2 and fill.shape[1] > 1 else fill)
    return values.make(out, dtype)


def _lane_box(engine: Engine, block: tuple[int, ...], mask: object) -> Box | None:
    """The lazy mask of a block of one axis with some lane masked off, when no program is: its
    live lanes are read from its bounds, and only those lanes made (a mirrored edge's few)."""
    box = mask.handle if isinstance(mask, Tensor) else None
    if not isinstance(box, Box) or len(block) != 1 or box.block != block or engine.active is not None:
        return None
    return None if box.all_live else box


def _live_lanes(engine: Engine, block: tuple[int, ...], live: Array | None, mask: object) -> tuple[int, int]:
    """The lanes ``lo:hi`` outside which no program has a live lane (for a block of one axis;
    its whole extent otherwise, or when every lane is live); read from the bounds of a lazy
    mask ``live`` was made of when no program is masked off."""
    whole = (0, block[0] if block else 1)
    if live is None or len(block) != 1 or live.shape[1] != block[0]:
        return whole
    box = mask.handle if isinstance(mask, Tensor) else None
    if isinstance(box, Box) and box.block == block and engine.active is None:
        return _narrowed(box.live_lanes(), block)
    lanes = np.flatnonzero(live.any(axis=0))
    return _narrowed((int(lanes[0]), int(lanes[-1]) + 1) if lanes.size else (0, 0), block)


def _narrowed(lanes: tuple[int, int], block: tuple[int, ...]) -> tuple[int, int]:
    """The live lanes ``lo:hi`` of a block of one axis when narrower than it by half at least
    (worth another copy), else the whole block."""
    lo, hi = lanes
    return (lo, hi) if 2 * (hi - lo) <= block[0] else (0, block[0])


def _rows(engine: Engine, p: Pointers, offsets: affine.Affine, made: tuple[Array, Array], live: Array | None,
          lane0: int) -> Array:
    """Each program's lanes ``offsets`` as a row of the view ``made`` (:func:`affine.windows`);
    the rows that leave memory lane by lane, after the bounds check of their ``live`` lanes
    (lane ``lane0`` of the block is the first of ``offsets``). A row that leaves memory with no
    live lane (a program masked off at a padded edge) reads nothing: the caller fills its lanes."""
    view, starts = made
    outside = np.flatnonzero(starts.view(np.uint64) >= view.shape[0])  # negatives wrap to huge
    if not outside.size:
        got: Array = view[starts]
        return got
    got = view[affine.clamp(starts, view.shape[0] - 1)]
    shape = (outside.size, *offsets.block)
    if live is None:
        lanes_live = np.ones(shape, bool)
    else:
        lanes_live = np.broadcast_to(live if live.shape[0] == 1 else live[outside], shape)
        some = lanes_live.reshape(outside.size, -1).any(axis=1)
        if not bool(some.all()):
            outside, lanes_live = outside[some], lanes_live[some]
            if not outside.size:
                return got
    picked = offsets.base if offsets.base.shape[0] == 1 else offsets.base[outside]
    offs = np.broadcast_to(picked.reshape((-1,) + (1,) * len(offsets.block)) + offsets.relative(), lanes_live.shape)
    check_bounds(engine, p, offs, lanes_live, "load", outside, lane0)
    got[outside] = p.memory.flat.take(np.where(lanes_live, offs, 0))  # a fresh copy: one row per base
    return got


def _fast_store(engine: Engine, ptr: Tensor[Any, Any], value: Tensor[Any, Any], mask: object) -> bool:
    """A store through writable strided views; False when the generic path must do it."""
    p = values.pointers(ptr, "store")
    if not (_in_bounds(p) and _fits(ptr, mask)):
        return False
    assert p.affine is not None
    views = affine.writable_views(p.memory.flat, p.affine, engine.whole_grid)
    data = values.align(convert(values.array(value), value.type, p.memory.dtype), value.ndim, ptr.ndim)
    live = _live(engine, ptr, mask, "store")
    counts = [math.prod(v.shape[: v.ndim - ptr.ndim]) for v in views] if views is not None else []
    if views is None or data.shape[0] > sum(counts) or (live is not None and live.shape[0] > sum(counts)):
        return False  # e.g. all programs write the same lanes: the generic path keeps the last writer
    _race_check_views(engine, p, views, counts, live, data, ptr.block_shape)
    start = 0
    for view, count in zip(views, counts):
        rows = slice(start, start + count)
        engine.record_view_write(view)
        chosen = _rows_as(data, rows, view.shape, ptr.block_shape)
        if live is None:
            view[...] = chosen
        else:
            np.copyto(view, chosen, where=_rows_as(live, rows, view.shape, ptr.block_shape))
        start += count
    return True


def _race_check_views(engine: Engine, p: Pointers, views: list[Array], counts: list[int], live: Array | None,
                      data: Array, block: tuple[int, ...]) -> None:
    """The race check of a strided store, through the same views of the shadow (one program's
    run of lanes in a uniform stretch of it with a few scalars: see ``Races.store_run``)."""
    if engine.races is None:
        return
    if live is None and engine.nprograms == 1 and p.affine is not None and \
            engine.races.store_run(p.memory, p.affine, engine.first, engine.site()):
        return
    def slow() -> None:
        offs = p.offsets
        full = (max(offs.shape[0], data.shape[0]),) + offs.shape[1:]
        engine.store_lanes(p.memory, np.broadcast_to(offs, full), np.ones((1,) * (len(block) + 1), bool)
                           if live is None else live, np.broadcast_to(data, full))

    if sum(counts) != engine.nprograms:  # programs share views: lane by lane
        slow()
        return
    assert p.affine is not None
    offsets, grid = p.affine, engine.whole_grid
    programs, lives, start = [], [], 0
    for view, count in zip(views, counts):
        rows = slice(start, start + count)
        lead = view.shape[: view.ndim - len(block)]
        ids = np.arange(engine.first + rows.start, engine.first + rows.stop, dtype=engine.races.ids)  # a group's are consecutive
        programs.append(ids.reshape(lead + (1,) * len(block)))
        lives.append(None if live is None else _rows_as(live, rows, view.shape, block))
        start += count
    engine.races.store_views(p.memory, lambda shadow: affine.writable_views(shadow, offsets, grid) or [],
                             offsets.span(), programs, lives, block, engine.site(), slow,
                             lambda: Runs.of(offsets, live, engine.nprograms), Place(engine.first, engine.nprograms,
                                                                                     offsets))


def _rows_as(a: Array, rows: slice, shape: tuple[int, ...], block: tuple[int, ...]) -> Array:
    """Programs ``rows`` of ``a`` (or its single shared row) shaped like a view with leading
    program axes."""
    picked = a[rows] if a.shape[0] > 1 else a
    count = rows.stop - rows.start
    if picked.shape == shape and shape == (count, *block):  # one program axis, nothing to broadcast
        return picked
    return np.broadcast_to(picked, (count, *block)).reshape(shape)


@implements(tl.store)
def store(engine: Engine, a: Mapping[str, Any]) -> None:
    ptr = a["pointer"]
    if isinstance(ptr, tl.BlockPointer):
        from tile_lang_numpy.blocks import store_block

        store_block(engine, a)
        return
    if addresses.through(ptr):  # pointers made from integers: by the allocation each lane is in
        addresses.stored(engine, a, store)
        return
    value = values.lift(a["value"])
    if value.type.is_pointer:  # its address, when the elements are 64-bit integers (the shared rule)
        value = addresses.cast(engine, value, values.pointers(ptr, "store").memory.dtype)
    if _fast_store(engine, ptr, value, a["mask"]) or _window_store(engine, ptr, value, a["mask"]):
        return
    p, offs, live = lanes(engine, ptr, a["mask"], "store", value.block_shape)
    dtype = p.memory.dtype
    data = values.align(convert(values.array(value), value.type, dtype), value.ndim, offs.ndim - 1)
    full = (max(offs.shape[0], data.shape[0]),) + offs.shape[1:]  # programs may store different values to shared lanes
    scatter(engine, p, np.broadcast_to(offs, full), np.broadcast_to(live, full), np.broadcast_to(data, full))


def _window_store(engine: Engine, ptr: Tensor[Any, Any], value: Tensor[Any, Any], mask: object) -> bool:
    """A store through affine pointers whose programs' bases no strided view serves, or whose
    masked-off lanes stray outside memory: each program whose lanes are all live and inside
    memory writes one row of :func:`affine.windows`, the others lane by lane, after the bounds
    check of those. Only when no two programs' live lanes can meet (their spans are disjoint),
    so the order of the writes cannot matter; False when the generic path must do it."""
    p = values.pointers(ptr, "store")
    a, n = p.affine, engine.nprograms
    if a is None or a.base.shape[0] != n or not _fits(ptr, mask) or not affine.one_to_one(a.strides, a.block):
        return False
    made = affine.windows(p.memory.flat, a)
    if made is None:
        return False
    view, starts = made
    live = _live(engine, ptr, mask, "store")
    lanes_live = None if live is None else np.broadcast_to(live, (n, *a.block)).reshape(n, -1)
    ranges = _lane_ranges(engine, mask, lanes_live, a.block, n)
    spans = _live_spans(a, starts, lanes_live, ranges)
    if spans is None:
        return False
    engine.note_block(math.prod(ptr.block_shape))
    whole = starts.view(np.uint64) < view.shape[0]  # the rows inside memory (negatives wrap to huge)
    if ranges is not None and ranges[2]:  # each program's live lanes are consecutive: whole when they span the block
        whole &= (ranges[0] == 0) & (ranges[1] == a.block[0])
        some = ranges[1] > ranges[0]
    elif lanes_live is not None:
        whole &= lanes_live.all(axis=1)
        some = np.count_nonzero(lanes_live, axis=1) > 0
    rest = np.flatnonzero(~whole if lanes_live is None else ~whole & some)
    narrow = _narrow_rows(p.memory.flat, a, rest, ranges) if ranges is not None and ranges[2] else None
    if narrow is not None:  # the partial rows are one window's: written as rows too
        rest = rest[:0]
    offs = (a.base[rest].reshape((-1,) + (1,) * len(a.block)) + a.relative()) if rest.size else None
    rest_live = np.ones((rest.size, *a.block), bool) if lanes_live is None else \
        lanes_live[rest].reshape((rest.size, *a.block))
    if offs is not None:
        check_bounds(engine, p, offs, rest_live, "store", rest)
    data = np.broadcast_to(values.align(convert(values.array(value), value.type, p.memory.dtype), value.ndim,
                                        ptr.ndim), (n, *a.block))
    if engine.races is not None:
        runs = spans[2] if spans[2] is not None else Runs.of(a, live, n)
        if runs.start.size:
            engine.races.store(p.memory, runs, data, engine.first, engine.site(), engine.error)
    rows = np.flatnonzero(whole)
    engine.journal.record(view, starts[rows])
    view[starts[rows]] = data[rows]
    if narrow is not None:
        part_view, part_rows, lo, hi, programs = narrow
        engine.journal.record(part_view, part_rows)
        part_view[part_rows] = data[programs, lo:hi]
    if offs is not None:
        index = offs[rest_live]
        engine.record_write(p.memory, index)
        p.memory.flat[index] = data[rest][rest_live]
    return True


def _narrow_rows(flat: Array, a: affine.Affine, rest: Array, ranges: tuple[Array, Array, bool]
                 ) -> tuple[Array, Array, int, int, Array] | None:
    """When the programs ``rest`` (their live lanes consecutive, not the whole block) all have
    live lanes ``lo:hi`` (a tile past a row's end) and those lie in memory: a window view of
    just those lanes, each program's row of it, ``lo``, ``hi`` and ``rest``; None otherwise
    (then lane by lane, with the bounds check that names a lane outside)."""
    if not rest.size:
        return None
    first, stop = ranges[0][rest], ranges[1][rest]
    lo, hi = int(first[0]), int(stop[0])
    if not (bool((first == lo).all()) and bool((stop == hi).all())):
        return None
    made = affine.windows(flat, affine.Affine(a.base + a.strides[0] * lo, a.strides, (hi - lo,), a.dtype))
    if made is None:
        return None
    view, starts = made
    rows = starts[rest]
    if not bool((rows.view(np.uint64) < view.shape[0]).all()):  # negatives wrap to huge
        return None
    return view, rows, lo, hi, rest


def _lane_ranges(engine: Engine, mask: object, live: Array | None, block: tuple[int, ...], n: int
                 ) -> tuple[Array, Array, bool] | None:
    """For a block of one axis, each program's first live lane and the lane after its last
    (equal when none is live), and whether its live lanes are all those between; read off a
    lazy mask's bounds when it has them. None for blocks of several axes."""
    if len(block) != 1:
        return None
    count = block[0]
    box = values.lift(mask).handle if mask is not None else None
    if live is None or (isinstance(box, Box) and box.block == block and engine.active is None):
        low, high = (None, None) if live is None or not isinstance(box, Box) else (box.starts[0], box.limits[0])
        first = np.zeros(n, np.int64) if low is None else np.broadcast_to(affine.clamp(low, count), (n,))
        stop = np.full(n, count, np.int64) if high is None else np.broadcast_to(affine.clamp(high, count), (n,))
        return first, np.maximum(first, stop), True
    has = live.any(axis=1)
    first = np.argmax(live, axis=1)
    stop = np.where(has, count - np.argmax(live[:, ::-1], axis=1), first)
    return first, stop, bool((np.count_nonzero(live, axis=1) == stop - first).all())


def _live_spans(a: affine.Affine, starts: Array, live: Array | None, ranges: tuple[Array, Array, bool] | None
                ) -> tuple[Array, Array, Runs | None] | None:
    """Per program with a live lane, the first and last element its live lanes reach (its
    whole window for a block of several axes), and, when each program's live lanes are
    consecutive elements, their runs for the race check; None when two programs' spans meet."""
    runs = None
    if ranges is not None:
        first, stop, consecutive = ranges
        programs = np.flatnonzero(stop > first)
        first, stop = first[programs], stop[programs]
        ends = a.base[programs] + a.strides[0] * np.stack([first, stop - 1])
        low, high = ends.min(axis=0), ends.max(axis=0)
        if consecutive and a.strides[0] == 1:
            runs = Runs(low.astype(np.int64), (stop - first).astype(np.int64), programs, first.astype(np.int64))
    else:
        programs = np.arange(a.base.shape[0]) if live is None else np.flatnonzero(live.any(axis=1))
        low = starts[programs]
        high = low + affine.reach(a)[1] - 1
    order = np.argsort(low, kind="stable")
    if bool((low[order][1:] <= high[order][:-1]).any()):
        return None
    return low, high, runs


def scatter(engine: Engine, p: Pointers, offs: Array, live: Array, data: Array) -> None:
    """Write ``data`` at ``offs`` where ``live`` (later programs and lanes win on duplicates;
    duplicates between programs are a race, see :mod:`races`)."""
    engine.store_lanes(p.memory, offs, live, data)
    if bool(live.all()):
        index, chosen = offs.reshape(-1), data.reshape(-1)
    else:
        index, chosen = offs[live], data[live]
    engine.record_write(p.memory, index)
    p.memory.flat[index] = chosen


