"""Lazy affine index blocks, so the usual pointer arithmetic never materialises offsets.

``pid * BLOCK + tl.arange(0, BLOCK)``, ``offs_m[:, None] * stride + offs_k[None, :]`` and
``ptrs += BLOCK_K`` are all of the form ``base[p] + sum_d strides[d] * i_d``: kept in that form,
a pointer block's bounds are known per program without looking at its lanes, and loads and
stores go through strided views of memory instead of gathers. Anything else materialises.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

_INDEX = np.dtype(np.int64)  # bases and pointer offsets

# views are built program by program for up to this many distinct bases; beyond, a gather
GATHER_LANES = 8  # blocks of at most this many lanes are gathered, not viewed
MAX_VIEWS = 64


class Affine:
    """An integer block whose lane ``(i_0, i_1, ...)`` of program ``p`` is
    ``base[p] + sum(strides[d] * i_d)``; ``base`` has one entry per program, or one for all."""

    __slots__ = ("base", "strides", "block", "dtype", "_array", "_span")

    def __init__(self, base: Array, strides: tuple[int, ...], block: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.base = base
        self.strides = strides
        self.block = block
        self.dtype = dtype
        self._array: Array | None = None
        self._span: tuple[int, int] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.base.shape[0], *self.block)

    def relative(self) -> Array:
        """``sum(strides[d] * i_d)`` over the block, as int64."""
        rel = np.zeros(self.block, dtype=np.int64)
        for axis, (stride, extent) in enumerate(zip(self.strides, self.block)):
            if stride and extent > 1:
                shape = [1] * len(self.block)
                shape[axis] = extent
                rel = rel + (np.arange(extent, dtype=np.int64) * stride).reshape(shape)
        return rel

    def materialize(self) -> Array:
        if self._array is None:
            lead = self.base.reshape((-1,) + (1,) * len(self.block))
            self._array = (lead + self.relative()).astype(self.dtype)
        return self._array

    def span(self) -> tuple[int, int]:
        """The smallest and largest lane value over all programs (computed once: a load or
        store asks for its bounds check and again for the race check)."""
        if self._span is None:
            low = high = 0
            for stride, extent in zip(self.strides, self.block):
                reach = stride * (extent - 1)
                if reach < 0:
                    low += reach
                else:
                    high += reach
            base = self.base
            first, last = (int(base[0]),) * 2 if base.shape[0] == 1 else (int(base.min()), int(base.max()))
            self._span = first + low, last + high
        return self._span

    def as_offsets(self) -> Affine:
        """The same lanes as pointer offsets (int64), sharing the base and the span: an argument
        pointer plus this block (``x_ptr + offs``), so pointers made from one block span it once."""
        if self.dtype is _INDEX:
            return self
        moved = Affine(self.base, self.strides, self.block, _INDEX)
        moved._span = self.span()
        return moved

    def fits(self, dtype: np.dtype[Any]) -> bool:
        """Whether every lane is representable in ``dtype`` (else wrap-around must be
        materialised): the span, which a load or store through the block reuses."""
        low, high = int_range(dtype)
        first, last = self.span()
        return low <= first and last <= high


@functools.cache
def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (cached: ``np.iinfo`` is slow)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


Bounds = tuple[Array | None, ...]  # per block axis: a per-program (or shared) bound, or None


class Box:
    """A lazy mask: lane ``(i_0, i_1, ...)`` of program ``p`` is live when ``starts[d][p] <= i_d
    < limits[d][p]`` on every axis ``d`` that has those bounds. ``offs < n`` and ``offs >= 0`` on
    an affine block are one; ``&`` of two is one; a load or store sees at once when every lane
    is live, and where each program's live lanes begin and end."""

    __slots__ = ("limits", "starts", "block", "_array", "_all_live", "_lanes")

    def __init__(self, limits: Bounds, block: tuple[int, ...], starts: Bounds | None = None) -> None:
        self.limits = limits
        self.starts: Bounds = (None,) * len(block) if starts is None else starts
        self.block = block
        self._array: Array | None = None
        self._all_live: bool | None = None  # computed once: a mask is usually shared by a load and a store
        self._lanes: tuple[int, int] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        lead = max((b.shape[0] for b in self.limits + self.starts if b is not None), default=1)
        return (lead, *self.block)

    @property
    def all_live(self) -> bool:
        if self._all_live is None:
            self._all_live = all(lim is None or _least(lim) >= n for lim, n in zip(self.limits, self.block)) and \
                all(start is None or -_least(-start) <= 0 for start in self.starts)
        return self._all_live

    def materialize(self) -> Array:
        """Each program's lanes along an axis, ``start <= i < limit``, as a row copied from a
        table of steps (:func:`_steps`): one copy per bound instead of comparing every lane."""
        if self._array is None:
            live: Array | None = None
            rank = len(self.block)
            for axis, (start, lim, n) in enumerate(zip(self.starts, self.limits, self.block)):
                for bound, below in ((lim, True), (start, False)):
                    if bound is None:
                        continue
                    rows = _steps(n, below).take(n - clamp(bound, n), axis=0)
                    rows = rows.reshape((-1,) + tuple(n if d == axis else 1 for d in range(rank)))
                    live = rows if live is None else live & rows
            shape = self.shape
            if live is None:
                live = np.ones(shape, dtype=bool)
            elif live.shape != shape:  # bounds on some axes only: broadcast, and copied to be writable
                live = np.ascontiguousarray(np.broadcast_to(live, shape))
            self._array = live
        return self._array


    def live_lanes(self) -> tuple[int, int]:
        """Of a block of one axis: the lanes ``lo:hi`` outside which no program has a live lane
        (``0, 0`` when none has), from the bounds: a load of a mirrored edge asks before it
        reads, and scanning the materialised lanes costs a pass over every lane; computed once."""
        if self._lanes is None:
            self._lanes = self._live_lanes()
        return self._lanes

    def _live_lanes(self) -> tuple[int, int]:
        """:meth:`live_lanes`, computed."""
        n = self.block[0]
        start, limit = self.starts[0], self.limits[0]
        lows = np.zeros(1, np.int64) if start is None else clamp(start.reshape(-1), n)
        highs = np.full(1, n) if limit is None else clamp(limit.reshape(-1), n)
        lows, highs = np.broadcast_arrays(lows, highs)
        some = highs > lows
        if not bool(some.any()):
            return 0, 0
        return int(lows[some].min()), int(highs[some].max())

    def chosen(self, x: Array, y: Array) -> Array | None:
        """``np.where(self, x, y)`` (``(P|1, n)`` arrays, program axis first) when, of a block of
        one axis, only narrow lanes ``lo:hi`` are live anywhere (a mirrored edge's): ``y`` copied,
        then ``x`` where live in those lanes only; None otherwise."""
        n = self.block[0]
        lo, hi = self.live_lanes()
        if 2 * (hi - lo) > n:
            return None
        shape = (max(self.shape[0], x.shape[0], y.shape[0]), n)
        out = np.empty(shape, np.result_type(x, y))
        out[...] = y
        if hi > lo:
            np.copyto(out[:, lo:hi], np.broadcast_to(x, shape)[:, lo:hi], where=self.lanes(lo, hi).materialize())
        return out

    def lanes(self, lo: int, hi: int) -> Box:
        """Lanes ``lo:hi`` of a block of one axis, as a mask of their own."""
        start, limit = self.starts[0], self.limits[0]
        return Box((None if limit is None else limit - lo,), (hi - lo,), (None if start is None else start - lo,))

    def gated(self, flags: Array) -> Box:
        """``self & flags`` for a per-program (or shared) bool: no lane of a program whose flag is false."""
        shut = np.where(flags, self.block[0], 0)
        first = self.limits[0]
        return Box((shut if first is None else np.minimum(first, shut), *self.limits[1:]), self.block, self.starts)


@functools.lru_cache(maxsize=64)
def _steps(n: int, below: bool) -> Array:
    """A table whose row ``n - k`` (``0 <= k <= n``) is the ``n`` lanes ``i < k`` (``below``) or
    ``i >= k``: windows of ``n`` ones then ``n`` zeros (or the reverse). Copied contiguous for
    short rows, whose gather is several times faster than from the sliding view (which longer
    rows keep: the table grows as ``n**2``)."""
    step = np.zeros(2 * n, bool)
    step[:n] = below
    step[n:] = not below
    slid = np.lib.stride_tricks.sliding_window_view(step, n)
    if n > CONTIGUOUS_STEPS:
        return slid
    table: Array = np.ascontiguousarray(slid)
    table.flags.writeable = False  # shared by every Box of this extent
    return table


CONTIGUOUS_STEPS = 256  # the longest rows :func:`_steps` copies into a table (64 KiB)


def clamp(values: Array, high: int) -> Array:
    """``values`` clipped to ``[0, high]`` (``np.clip`` asks ``np.iinfo`` each call: slower on small arrays)."""
    clamped: Array = np.minimum(np.maximum(values, 0), high)
    return clamped


def _least(bound: Array) -> int:
    return int(bound.item()) if bound.size == 1 else int(bound.min())


def compare(a: Affine, bound: Array, upper: bool, inclusive: bool) -> Box | None:
    """``a < bound`` (``<=`` when inclusive), or with ``upper`` False ``a > bound`` (``>=``), as a
    :class:`Box`, when ``a`` varies along one axis with a positive stride."""
    moving = [d for d, (s, n) in enumerate(zip(a.strides, a.block)) if s and n > 1]
    if len(moving) != 1 or a.strides[moving[0]] < 0:
        return None
    axis = moving[0]
    stride = a.strides[axis]
    bounds: list[Array | None] = [None] * len(a.block)
    if upper:  # lanes i with i * stride < room
        room = bound - a.base + 1 if inclusive else bound - a.base
        bounds[axis] = room if stride == 1 else -((-room) // stride)  # ceil(room / stride)
        return Box(tuple(bounds), a.block)
    floor = bound - a.base if inclusive else bound - a.base + 1  # lanes i with i * stride >= floor
    bounds[axis] = floor if stride == 1 else -((-floor) // stride)
    return Box((None,) * len(a.block), a.block, tuple(bounds))


def both(x: Box, y: Box) -> Box | None:
    """``x & y``, broadcasting blocks (ranks aligned on the right)."""
    rank = max(len(x.block), len(y.block))
    bx = (1,) * (rank - len(x.block)) + x.block
    by = (1,) * (rank - len(y.block)) + y.block
    if any(m != n and 1 not in (m, n) for m, n in zip(bx, by)):
        return None
    return Box(_joined(x.limits, y.limits, rank, np.minimum), tuple(max(m, n) for m, n in zip(bx, by)),
               _joined(x.starts, y.starts, rank, np.maximum))


def _joined(x: Bounds, y: Bounds, rank: int, tighter: Any) -> Bounds:
    """Two boxes' bounds on each axis (ranks aligned on the right), the tighter where both have one."""
    x, y = (None,) * (rank - len(x)) + x, (None,) * (rank - len(y)) + y
    return tuple(a if b is None else b if a is None else tighter(a, b) for a, b in zip(x, y))


def shift(a: Affine, amount: Array, dtype: np.dtype[Any]) -> Affine | None:
    """``a + amount`` for per-program integer scalars ``amount`` (None if it would wrap in
    ``dtype``). The base stays int64."""
    base = a.base
    if amount.dtype != np.int64:  # widened first: NumPy adds mixed widths several times slower (u64 wraps)
        amount = amount.astype(np.int64)
    if base.shape == (1,) and not base[0]:  # ``arange`` or an argument pointer: no add (values are never written in place)
        return _checked(Affine(amount, a.strides, a.block, dtype))
    return _checked(Affine(base + amount, a.strides, a.block, dtype))


def scale(a: Affine, factor: int, dtype: np.dtype[Any]) -> Affine | None:
    """``a * factor`` for a factor shared by all programs."""
    return _checked(Affine(a.base * factor, tuple(s * factor for s in a.strides), a.block, dtype))


def combine(a: Affine, b: Affine, sign: int, dtype: np.dtype[Any]) -> Affine | None:
    """``a + sign * b``, broadcasting blocks as Triton does (ranks aligned on the right)."""
    if not a.block and sign == 1 and 1 not in b.block:  # a scalar plus a block (``ptr + offs``): b's lanes
        return _checked(Affine(a.base + b.base, b.strides, b.block, dtype))
    rank = max(len(a.block), len(b.block))
    sa, na = _pad(a, rank)
    sb, nb = _pad(b, rank)
    if any(x != y and 1 not in (x, y) for x, y in zip(na, nb)):
        return None
    block = tuple(max(x, y) for x, y in zip(na, nb))
    strides = tuple((s if n > 1 else 0) + sign * (t if m > 1 else 0) for s, n, t, m in zip(sa, na, sb, nb))
    return _checked(Affine(a.base + b.base if sign == 1 else a.base - b.base, strides, block, dtype))


def insert_axes(a: Affine, key: tuple[object, ...]) -> Affine:
    """``a[:, None]``-style indexing: ``None`` adds a unit axis."""
    strides, block = _inserted(list(a.strides), list(a.block), key, 0)
    return Affine(a.base, tuple(strides), tuple(block), a.dtype)


def insert_box_axes(b: Box, key: tuple[object, ...]) -> Box:
    """The same indexing for a lazy mask."""
    limits, block = _inserted(list(b.limits), list(b.block), key, None)
    starts, _ = _inserted(list(b.starts), list(b.block), key, None)
    return Box(tuple(limits), tuple(block), tuple(starts))


def _inserted(per_axis: list[Any], block: list[int], key: tuple[object, ...], unit: object) -> tuple[list[Any], list[int]]:
    for position, part in enumerate(key):
        if part is None:
            per_axis.insert(position, unit)
            block.insert(position, 1)
    return per_axis, block


def _pad(a: Affine, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    extra = rank - len(a.block)
    return (0,) * extra + a.strides, (1,) * extra + a.block


def _checked(a: Affine) -> Affine | None:
    """``a``, unless some lane would wrap around in its dtype (then the caller materialises).
    64-bit values (pointer offsets) are not checked: no block gets near 2**63."""
    return a if a.dtype.itemsize == 8 or a.fits(a.dtype) else None


class Tiles:
    """A loaded block that depends on only some axes of the launch grid, kept compact:
    ``compact`` has shape ``(gz|1, gy|1, gx|1, *block)``, and program ``(x, y, z)`` (the whole
    grid, in order) holds ``compact[z, y, x]`` with unit axes broadcast. A tiled matmul's A tile
    depends on ``pid_m`` only: 8 tiles instead of 64 copies, and ``tl.dot`` of two such blocks
    is one matrix product instead of one per program."""

    __slots__ = ("compact", "grid", "_array")

    def __init__(self, compact: Array, grid: tuple[int, int, int]) -> None:
        self.compact = compact
        self.grid = grid
        self._array: Array | None = None

    @property
    def block(self) -> tuple[int, ...]:
        return tuple(self.compact.shape[3:])

    @property
    def shape(self) -> tuple[int, ...]:
        gx, gy, gz = self.grid
        return (gx * gy * gz, *self.block)

    def materialize(self) -> Array:
        if self._array is None:
            gx, gy, gz = self.grid
            full = np.broadcast_to(self.compact, (gz, gy, gx, *self.block))
            self._array = np.ascontiguousarray(full).reshape(self.shape)
        return self._array


# ------------------------------------------------------------------------------ memory views


def view(flat: Array, offsets: Affine, grid: tuple[int, int, int] | None = None) -> Array | Tiles:
    """A ``(P|1, *block)`` array read through strided views of ``flat`` (caller checked bounds,
    so :func:`windows` serves any bases: a program's lanes span no more than ``flat``). ``grid`` is given
    when the programs are the whole launch grid, in order (then bases affine in the program
    coordinates, as in a tiled matmul, read as one view)."""
    step = flat.strides[0]
    shape, strides = offsets.block, tuple([s * step for s in offsets.strides])
    base = offsets.base
    if base.shape[0] == 1:
        return _strided(flat, int(base[0]), (1, *shape), (0, *strides)).copy()
    if math.prod(shape) == 1:  # one element per program: one gather, cheaper than testing the bases for a pattern
        scalars: Array = flat.take(base).reshape((base.shape[0], *shape))  # faster than indexing (bounds were checked)
        return scalars
    first, spacing = int(base[0]), int(base[1]) - int(base[0])
    per_axis = _grid_strides(base, grid) if grid is not None else None
    if per_axis is None and evenly_spaced(base, first, spacing):
        return _strided(flat, first, (base.shape[0], *shape), (spacing * step, *strides)).copy()
    if per_axis is not None:
        gx, gy, gz = grid or (1, 1, 1)
        sx, sy, sz = (s * step for s in per_axis)
        extents = tuple(1 if s == 0 else g for s, g in ((sz, gz), (sy, gy), (sx, gx)))
        compact = _strided(flat, first, (*extents, *shape), (sz, sy, sx, *strides)).copy()  # never aliases memory
        compacted = math.prod(extents) < base.shape[0]  # some grid axis the block does not depend on
        return Tiles(compact, (gx, gy, gz)) if compacted else compact.reshape((base.shape[0], *shape))
    if math.prod(shape) <= GATHER_LANES:  # tiny blocks (a scalar per program): a gather of lanes
        gathered: Array = flat[offsets.materialize()]
        return gathered
    made = windows(flat, offsets)  # irregular bases: each program's lanes copied as one row
    assert made is not None  # the lanes are in bounds
    copied: Array = made[0][made[1]]
    return copied


def evenly_spaced(base: Array, first: int, spacing: int) -> bool:
    """Whether ``base[p] == first + spacing * p`` for every program (the last one's checked
    first: irregular bases, a gather's, fail there without a pass over them)."""
    count = base.shape[0]
    if int(base[-1]) != first + spacing * (count - 1):
        return False
    return bool(np.array_equal(base, first + spacing * np.arange(count)))


def reach(offsets: Affine) -> tuple[int, int]:
    """The lowest lane of a program relative to its base, and how many elements its lanes span."""
    low = sum(min(0, s * (n - 1)) for s, n in zip(offsets.strides, offsets.block))
    return low, 1 + sum(abs(s) * (n - 1) for s, n in zip(offsets.strides, offsets.block))


def windows(flat: Array, offsets: Affine) -> tuple[Array, Array] | None:
    """A view whose row ``j`` holds the block's lanes as if its base were ``j - low``
    (``low``: the block's lowest lane relative to its base), and each program's row, ``base +
    low``; a program's lanes all lie in ``flat`` exactly when its row is one of the view's. A
    gather of whole rows copies each program's lanes as one strided block instead of lane by
    lane. None when the block spans more than ``flat``."""
    low, extent = reach(offsets)
    if extent > flat.shape[0]:
        return None
    step = flat.strides[0]
    view = _strided(flat, -low, (flat.shape[0] - extent + 1, *offsets.block),
                    (step, *(s * step for s in offsets.strides)))
    return view, offsets.base + low


def _grid_strides(base: Array, grid: tuple[int, int, int]) -> tuple[int, int, int] | None:
    """Per-grid-axis strides when ``base[p] = base[0] + sum(pid_d * s_d)`` over the whole grid."""
    gx, gy, gz = grid
    laid = base.reshape(gz, gy, gx)
    sx = int(laid[0, 0, 1] - laid[0, 0, 0]) if gx > 1 else 0
    sy = int(laid[0, 1, 0] - laid[0, 0, 0]) if gy > 1 else 0
    sz = int(laid[1, 0, 0] - laid[0, 0, 0]) if gz > 1 else 0
    if int(laid[-1, -1, -1]) != int(laid[0, 0, 0]) + (gx - 1) * sx + (gy - 1) * sy + (gz - 1) * sz:
        return None  # the last program's base rules it out without building the grid's (a gather's bases)
    expected = (int(base[0]) + np.arange(gz)[:, None, None] * sz + np.arange(gy)[None, :, None] * sy
                + np.arange(gx)[None, None, :] * sx)
    return (sx, sy, sz) if np.array_equal(laid, expected) else None


def writable_views(flat: Array, offsets: Affine, grid: tuple[int, int, int] | None = None) -> list[Array] | None:
    """Writable views of the programs' lanes, each with leading program axes (``view.ndim``
    minus the block's rank of them): one view for all when no two lanes of the launch share an
    address (bases evenly spaced far enough apart, or, with ``grid``, affine in the program
    coordinates as a tiled matmul's output), else one per program, in order (so "later
    programs win", as in the generic path). None when lanes of one program may alias, or there
    are too many irregular programs."""
    if not one_to_one(offsets.strides, offsets.block):
        return None
    step = flat.strides[0]
    strides = tuple([s * step for s in offsets.strides])
    base = offsets.base
    first = int(base[0])
    if base.shape[0] == 1:  # one program (or all at one place): the leading axis has extent 1
        return [_strided(flat, first, (1, *offsets.block), (0, *strides))]
    extent = 1 + sum(abs(s) * (n - 1) for s, n in zip(offsets.strides, offsets.block))
    spacing = int(base[1]) - first
    if abs(spacing) >= extent and evenly_spaced(base, first, spacing):
        return [_strided(flat, first, (base.shape[0], *offsets.block), (spacing * step, *strides))]
    per_axis = _grid_strides(base, grid) if grid is not None else None
    if grid is not None and per_axis is not None and \
            one_to_one((*offsets.strides, *per_axis), (*offsets.block, *grid)):
        (gx, gy, gz), (sx, sy, sz) = grid, per_axis
        return [_strided(flat, first, (gz, gy, gx, *offsets.block), (sz * step, sy * step, sx * step, *strides))]
    if base.shape[0] > MAX_VIEWS:
        return None
    return [_strided(flat, int(b), offsets.block, strides)[None] for b in base]


def one_to_one(strides: tuple[int, ...], block: tuple[int, ...]) -> bool:
    """Whether distinct lanes of one program always get distinct offsets (nested, non-overlapping axes)."""
    if len(block) == 1:  # the common case
        return block[0] <= 1 or strides[0] != 0
    axes = sorted((abs(s), n) for s, n in zip(strides, block) if n > 1)
    if any(s == 0 for s, _ in axes):
        return False
    reach = 1
    for stride, extent in axes:
        if stride < reach:
            return False
        reach = stride * extent
    return True


def _strided(flat: Array, start: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> Array:
    """A view of ``flat`` from element ``start`` with byte ``strides`` (the caller checked that
    every lane is inside ``flat``). Built with the ndarray constructor when the strides allow
    (several times cheaper than ``as_strided``), else ``as_strided`` through an unsigned view,
    which also accepts ml_dtypes' bf16/fp8 dtypes."""
    if len(shape) == 2 and shape[0] == 1 and strides[1] == flat.strides[0]:  # one program's contiguous lanes
        return flat[None, start:start + shape[1]]
    if flat.flags.c_contiguous and (not strides or min(strides) >= 0):
        view: Array = np.ndarray(shape, flat.dtype, buffer=flat, offset=start * flat.itemsize, strides=strides)
        return view
    raw = flat.view(np.dtype(f"u{flat.dtype.itemsize}"))[start:]
    strided: Array = np.lib.stride_tricks.as_strided(raw, shape=shape, strides=strides).view(flat.dtype)
    return strided
