"""Runs a launch: programs in vectorised groups, masked where their control flow differs.

A group executes the kernel's Python once (its checked version, :mod:`checked`, which applies
the compiler's rules that need the source) with every value carrying a leading program axis.
When programs of a group disagree on Python control flow (a branch or loop bound that depends
on ``program_id``) its writes are rolled back and the group reruns the kernel's SIMT version
(:mod:`simt`), which runs such control flow under per-program masks; later groups and launches
of that kernel start with it. What even that cannot express (a spin loop on an atomic, see
:mod:`simt`) reruns program by program, in order, which is also a valid sequential order for
atomics, with a one-time :class:`DivergenceWarning`; but when several programs got through the
spin loop together (a lock each), the rest of the launch runs in groups of that many instead.
Peak memory: a group is sized so its largest block value holds at most ``GROUP_ELEMENTS``
elements (32 MiB at 8 bytes per element), and cut so its programs form a box of the grid (part
of a row, whole rows, whole planes), where values that depend on only some grid axes stay
compact (:mod:`tiled`).
"""

from __future__ import annotations

import functools
import math
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from tile_lang import builtin, legality
from tile_lang.buffer import Buffer
from tile_lang.descriptor import Layout, part_names
from tile_lang.packing import Packing, part_names as tuple_part_names
from tile_lang.dtypes import DType, argument_dtype, scalar_dtype
from tile_lang.errors import KernelError, LaunchError, TileLangError
from tile_lang.launch import Launch
from tile_lang.errors import SemanticError
from tile_lang.signature import ParamKind

from tile_lang_numpy import blocks, checked, races, simt, values
from tile_lang_numpy.addresses import Book
from tile_lang_numpy.engine import INTERNAL_DIRS, Divergent, DivergenceWarning, Engine, error_at
from tile_lang_numpy.races import Site
from tile_lang_numpy.journal import Journal
from tile_lang_numpy.values import Memory, Pointers

GROUP_ELEMENTS = 1 << 22
FIRST_GROUP = 64

_DIVERGING: weakref.WeakSet[Any] = weakref.WeakSet()  # kernels whose programs diverged: they start masked
# per kernel and constexprs, the largest block a launch made: a later launch's first group is sized
# from it (a runtime loop's Python runs once per group: a first group of 64 would cost as much again)
_BLOCKS: weakref.WeakKeyDictionary[Any, dict[tuple[tuple[str, Any], ...], int]] = weakref.WeakKeyDictionary()
_WARNED: set[tuple[str, int, str, int]] = set()  # (kernel file, kernel line, construct file, construct line)


def run(launch: Launch) -> None:
    """Execute every program of ``launch`` on the host; if it raises, every buffer is left as
    it was before the launch (see :mod:`journal`). A kernel whose source holds Python the
    compiler does not translate is refused first, as the compiler refuses it (:mod:`tile_lang.legality`)."""
    legality.check(launch.kernel.fn, launch.kernel.name, True)
    grid = launch.grid  # within CUDA's limits (checked at launch): program ids fit i32
    journal = Journal()
    total = math.prod(grid)
    tracker = races.Races(grid) if races.enabled() else None  # one program: its lanes can race
    try:
        _groups(launch, journal, tracker, total)
    finally:
        journal.close()
        if tracker is not None:
            tracker.close()


def _groups(launch: Launch, journal: Journal, tracker: races.Races | None, total: int) -> None:
    """Run the launch's programs group by group (one at a time once a group diverged)."""
    memories: dict[int, Memory] = {}
    book = Book(memories)  # for pointers made from integers
    key = _constexprs_key(launch)
    known = _BLOCKS.get(launch.kernel, {}).get(key) if key is not None else None
    start, group = 0, min(total, FIRST_GROUP if known is None else max(FIRST_GROUP, GROUP_ELEMENTS // known))
    largest = 1
    sequential = False
    spun = total  # the most programs a group may hold once some waited in a spin loop on others of theirs
    args: dict[str, Any] | None = None  # the same for every group, but for host descriptors (made by each)
    masked = simt.version(launch.kernel.fn) if launch.kernel in _DIVERGING else None
    unmasked = checked.version(launch.kernel.fn)
    while start < total:
        count = 1 if sequential else _box_prefix(launch.grid, start, min(group, spun, total - start))
        engine = _engine(launch, start, count, journal, tracker, book)
        args = _kernel_args(launch, memories, engine) if args is None or launch.kernel.descriptors else args
        mark = journal.mark()
        try:
            _execute(engine, unmasked if sequential or masked is None else masked, args, masked is not None and not sequential)
        except Divergent as exc:
            journal.rollback(mark)  # its writes and its prints are dropped: the group reruns
            if tracker is not None:
                tracker.forget(start, start + count - 1)
            if masked is None:
                masked = simt.version(launch.kernel.fn)
                if masked is not None:
                    _DIVERGING.add(launch.kernel)
                    continue
                exc = Divergent(f"{exc.reason} (and the kernel's source cannot be read to run it masked)", exc.site)
            if 1 < exc.passed < count:  # as many as got through together may not wait on each other (one per lock)
                spun = exc.passed
                continue
            _warn(launch, exc, start, count)
            sequential = True
            continue
        except BaseException:
            journal.rollback()  # all or nothing: no buffer keeps a partial result
            _flush(engine)  # what printed before a failed device_assert is shown
            raise
        _flush(engine)
        start += count
        largest = max(largest, engine.largest_block)
        if not sequential:
            group = max(1, GROUP_ELEMENTS // max(1, engine.largest_block))
    if key is not None:
        _BLOCKS.setdefault(launch.kernel, {})[key] = largest


def _constexprs_key(launch: Launch) -> tuple[tuple[str, Any], ...] | None:
    """The launch's constexprs as a dict key (they fix its block shapes); None when one is unhashable."""
    key = tuple(sorted(launch.constexprs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _box_prefix(grid: tuple[int, int, int], start: int, count: int) -> int:
    """The most programs, at most ``count``, from ``start`` on that form a box of the grid (part
    of a row, whole rows of one plane, or whole planes), so values that depend on only some grid
    axes stay compact in the group (see :mod:`tiled`)."""
    gx, gy, _ = grid
    x, y = start % gx, start // gx % gy
    if x or count < gx:
        return min(count, gx - x)
    if y or count < gx * gy:
        return min(count // gx, gy - y) * gx
    return count // (gx * gy) * gx * gy


def _extents(grid: tuple[int, int, int], count: int) -> tuple[int, int, int]:
    """The extents along x, y and z of a group of ``count`` programs that forms a box."""
    gx, gy, _ = grid
    bx = min(count, gx)
    by = min(count // bx, gy)
    return bx, by, count // (bx * by)


def _warn(launch: Launch, exc: Divergent, start: int, count: int) -> None:
    """Say once per kernel and line that programs run one at a time from here on."""
    kernel = launch.kernel
    key = (kernel.filename, kernel.lineno, exc.site.filename, exc.site.lineno)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn_explicit(
        f"kernel {kernel.name}: {exc.reason} (line {exc.site.lineno}) cannot run masked, so programs {start} to "
        f"{math.prod(launch.grid) - 1} of this launch run one at a time, about {count}x slower than vectorised",
        DivergenceWarning, exc.site.filename, exc.site.lineno)


def _flush(engine: Engine) -> None:
    for line in engine.output:
        print(line)


CACHED_GROUP = 4096  # groups of at most this many programs keep their ids between launches (80 KiB each at most)


def _engine(launch: Launch, start: int, count: int, journal: Journal, tracker: races.Races | None,
            book: Book) -> Engine:
    made = _cached_ids if count <= CACHED_GROUP else _program_ids
    gx, gy, _ = grid = launch.grid
    return Engine(kernel=launch.kernel.name, ids=functools.partial(made, grid, start, count), grid=grid,
                  origin=(start % gx, start // gx % gy, start // (gx * gy)), journal=journal, races=tracker,
                  box=_extents(grid, count), addresses=book)


def _program_ids(grid: tuple[int, int, int], start: int, count: int) -> values.Array:
    """Programs ``start..start+count-1``: their (x, y, z) ids, read-only (a ``(P, 3)`` view of
    one contiguous row per axis, so ``tl.program_id`` is a view). Built row by row of the grid:
    x repeats ``arange(gx)``, y and z are divided out once per row."""
    gx, gy, _ = grid
    first_row, last_row = start // gx, (start + count - 1) // gx
    z, y = np.divmod(np.arange(first_row, last_row + 1, dtype=np.int64), gy)
    lanes = slice(start - first_row * gx, start - first_row * gx + count)
    pids = np.empty((3, count), np.int32)
    pids[0] = np.broadcast_to(np.arange(gx, dtype=np.int32), (y.shape[0], gx)).reshape(-1)[lanes]
    pids[1] = np.repeat(y, gx)[lanes]
    pids[2] = np.repeat(z, gx)[lanes]
    pids.flags.writeable = False
    return pids.T


_cached_ids = functools.lru_cache(maxsize=256)(_program_ids)  # a small test's launches repeat the same few groups


def _execute(engine: Engine, fn: Callable[..., Any], args: dict[str, Any], masked: bool) -> None:
    """Run the kernel's version ``fn`` once for the group (``masked``: its SIMT version); any
    failure other than a KernelError surfaces as one at the innermost line of user code, with
    the original exception chained."""
    try:
        with builtin.engine(engine), np.errstate(all="ignore"):  # wrap-around and inf/nan are GPU semantics
            if masked:
                simt.execute(engine, fn, args)
            else:
                fn(**args)
    except (KernelError, Divergent):
        raise
    except Exception as exc:  # a TileLangError's message is written for the user; anything else is named
        message = str(exc) if isinstance(exc, TileLangError) else f"{type(exc).__name__}: {exc}"
        raise error_at(_user_site(exc), message, engine.kernel) from exc


def _user_site(exc: BaseException) -> Site:
    """The line of user code (a kernel or @tl.func) that called into the failing internals."""
    site = Site("<unknown>", 0)
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # skip _execute
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(INTERNAL_DIRS):
            if site.lineno:
                break
        else:
            site = Site(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return site


# an argument pointer of each live buffer: (the array it viewed, parameter, pointer tensor); a test's
# repeated launches on the same buffers skip making the view, the Memory and the tensor again
_POINTERS: weakref.WeakKeyDictionary[Buffer[Any], tuple[object, str, Any]] = weakref.WeakKeyDictionary()


def _kernel_args(launch: Launch, memories: dict[int, Memory], engine: Engine) -> dict[str, Any]:
    """Kernel-visible arguments: rank-0 pointer and scalar tensors, constexprs as Python values,
    host descriptors as the tensor descriptors they describe, tuples holding buffers as those tuples."""
    out: dict[str, Any] = dict(launch.constexprs)
    aliases: dict[tuple[int, int, DType], dict[str, Buffer[Any]]] = {}  # pointer arguments by where their memory lies
    for param, value in zip(launch.kernel.runtime_params, launch.args):
        if param.kind is ParamKind.POINTER:
            memory = _argument_memory(param.name, value, memories)
            aliases.setdefault(_place(memory), {})[param.name] = value
            pointer = values.make(Pointers(memory, values.ARGUMENT_OFFSET), value.type.pointer_to())
            if memory.param == param.name:
                _POINTERS[value] = (value.data, param.name, pointer)
            out[param.name] = pointer
        else:
            out[param.name] = _scalar(value)
    for named in aliases.values():
        if len(named) > 1:  # one memory under all their names: a store through one meets a load through another
            first = memories[id(next(iter(named.values())))]
            shared = Memory(first.flat, "/".join(named), first.dtype)
            for name, value in named.items():
                memories[id(value)] = shared
                out[name] = values.make(Pointers(shared, values.ARGUMENT_OFFSET), value.type.pointer_to())
    for param in launch.kernel.descriptors:
        assert isinstance(param.annotation, Layout)
        out[param.name] = _descriptor(engine, param.name, param.annotation, out)
    for param in launch.kernel.tuples:  # its pointers back in place (removed from ``out``)
        assert isinstance(param.annotation, Packing)
        names = tuple_part_names(param.name, param.annotation.count)
        out[param.name] = param.annotation.unpack([out.pop(name) for name in names])
    return out


def _argument_memory(name: str, value: Any, memories: dict[int, Memory]) -> Memory:
    """The memory of a pointer argument: the one this launch made for the buffer, else the one
    its last launch through this parameter made (the buffer unchanged), else a new one."""
    assert isinstance(value, Buffer)
    memory = memories.get(id(value))
    if memory is None:
        kept = _POINTERS.get(value)
        if kept is not None and kept[0] is value.data and kept[1] == name:
            memory = kept[2].handle.memory
        else:
            memory = Memory(flat_view(value), name, value.type)
        memories[id(value)] = memory
    return memory


def _place(memory: Memory) -> tuple[int, int, DType]:
    """Where a memory lies. Parameters given memories lying alike (one tensor passed for two of
    them, so adopted twice; or the same buffer) get one memory named after all of them, so the
    race check sees a store through one and a load through another (FlagGems' batch_norm writes
    its statistics into its input so). Views that overlap in part keep their own memories: the
    race check does not look across them."""
    return memory.flat.__array_interface__["data"][0], memory.size, memory.dtype


def _descriptor(engine: Engine, name: str, layout: Layout, args: dict[str, Any]) -> Any:
    """``tl.make_tensor_descriptor`` of the arguments a host descriptor is passed as (removed from
    ``args``), as the kernel would make it at its entry."""
    base, shapes, strides = part_names(name, layout.ndim)
    made = {"base": args.pop(base), "shape": tuple(args.pop(s) for s in shapes),
            "strides": tuple(args.pop(s) for s in strides), "block_shape": layout.block_shape,
            "padding_option": layout.padding}
    try:
        return blocks.make_tensor_descriptor(engine, made)
    except SemanticError as exc:
        raise engine.error(f"parameter {name}: {exc}") from exc


_INTS: dict[int, Any] = {}  # int arguments as kernel-visible read-only tensors (an `n` repeats between launches)
_KEPT_INTS = 1024


def _scalar(value: Any) -> Any:
    """A scalar argument as a rank-0 tensor typed as Triton passes it: i32, i64 or u64; f32; a
    NumPy scalar (a parameter annotated with a dtype) as its own dtype."""
    if type(value) is not int:
        return values.scalar(value, argument_dtype(value))
    tensor = _INTS.get(value)
    if tensor is None:
        if len(_INTS) >= _KEPT_INTS:
            _INTS.clear()
        handle = np.array([value], scalar_dtype(value).numpy)
        handle.flags.writeable = False
        tensor = _INTS[value] = values.make(handle, scalar_dtype(value))
    return tensor


def flat_view(buffer: Buffer[Any]) -> values.Array:
    """A writable 1-D view of a buffer's memory, from its first element to its last."""
    data = buffer.data
    assert isinstance(data, np.ndarray)
    if data.flags.c_contiguous:
        return data.reshape(-1)
    if any(s < 0 for s in data.strides) or any(s % data.itemsize for s in data.strides):
        raise LaunchError(f"an array with strides {data.strides} (negative or unaligned) cannot be a kernel argument")
    span = 1 + sum((n - 1) * s // data.itemsize for n, s in zip(data.shape, data.strides)) if data.size else 0
    raw = data.view(np.dtype(f"u{data.itemsize}"))  # as_strided loses ml_dtypes' fp8 dtypes: unsigned, then back
    flat: values.Array = np.lib.stride_tricks.as_strided(raw, shape=(span,), strides=(data.itemsize,)).view(data.dtype)
    return flat
