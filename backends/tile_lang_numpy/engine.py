"""The reference engine: executes builtins for a group of programs at once.

Implementations register per builtin with ``@implements(tl.op)``; each receives the engine
(program ids, journal, error context) and the bound arguments by Triton's parameter names.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

import tile_lang
from tile_lang import operators
from tile_lang.builtin import Builtin, active_engine, builtin_of
from tile_lang.errors import KernelError, UsageError
from tile_lang.errors import SemanticError
from tile_lang.seen import Block
from tile_lang.semantics.dispatch import checked, lacking
from tile_lang.tensor import Tensor

from tile_lang_numpy.affine import Affine
from tile_lang_numpy.addresses import Book
from tile_lang_numpy.journal import Journal
from tile_lang_numpy.memo import Memo, key as memo_key
from tile_lang_numpy.races import Races, Site
from tile_lang_numpy.shadows import Runs
from tile_lang_numpy.values import Array, Lead, Memory

Impl = Callable[["Engine", Mapping[str, Any]], Any]
IMPLS: dict[Builtin, Impl] = {}
CAPABILITIES = lacking("the numpy backend", {
    tile_lang.inline_asm_elementwise: "inline assembly is PTX, which only the CUDA backend compiles",
})
"""The builtins the reference does not run (every other builtin has an implementation)."""

KEPT = frozenset({builtin_of(operators.binary), builtin_of(tile_lang.arange)})
"""The builtins whose results a group keeps for the same operands (see memo)."""

INTERNAL_DIRS = (os.path.dirname(tile_lang.__file__) + os.sep, os.path.dirname(__file__) + os.sep)


def implements(*functions: Callable[..., Any]) -> Callable[[Impl], Impl]:
    """Register the decorated function as the reference implementation of these builtins."""

    def register(impl: Impl) -> Impl:
        for fn in functions:
            op = builtin_of(fn)
            if op is None:
                raise UsageError(f"{fn!r} is not a tile_lang builtin")
            IMPLS[op] = impl
        return impl

    return register


class Divergent(Exception):
    """Programs of one group disagree on control flow the engine cannot run masked (see
    :mod:`simt`): the group reruns one program at a time, or, when ``passed`` programs got
    through a spin loop together before the others waited on them (a lock per program of them),
    in groups of that many."""

    def __init__(self, reason: str, site: Site, passed: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.site = site
        self.passed = passed


class Stale:
    """What a name holds once a runtime loop rebound it with another shape (see :mod:`loops`):
    any use of it is the compiler's error, at the line of that use."""

    __slots__ = ("error",)

    def __init__(self, error: SemanticError) -> None:
        self.error = error

    def fail(self, *args: object) -> NoReturn:
        engine = active_engine()
        raise engine.error(str(self.error)) if isinstance(engine, Engine) else self.error

    def __getattr__(self, name: str) -> NoReturn:
        self.fail()

    def __repr__(self) -> str:
        return "<stale loop value>"


for _op in "add sub mul truediv floordiv mod pow lshift rshift and or xor matmul".split():
    setattr(Stale, f"__{_op}__", Stale.fail)
    setattr(Stale, f"__r{_op}__", Stale.fail)
for _op in "lt le gt ge eq ne neg pos invert abs bool index int float getitem call".split():
    setattr(Stale, f"__{_op}__", Stale.fail)


class DivergenceWarning(RuntimeWarning):
    """A launch of the reference falls back to running programs one at a time."""


@dataclass
class Engine:
    """State of one group of programs being executed together."""

    kernel: str
    ids: Callable[[], Array]  # the group's program ids (P, 3), made when first needed
    grid: tuple[int, int, int]
    origin: tuple[int, int, int]  # the ids of the group's first program
    journal: Journal = field(default_factory=Journal)  # shared by every group of the launch
    output: list[str] = field(default_factory=list)  # device_print lines, printed once the group commits
    largest_block: int = 1
    depth: int = 0  # the @tl.func calls running now, nested (see checked.nested)
    races: Races | None = None  # shared by every group of the launch; None when the check is off
    box: tuple[int, int, int] = (1, 1, 1)  # the group's extents along grid x, y, z: its programs form this box
    mask: Array | None = None  # the programs executing now (see simt), in grid space (see tiled); None: all
    spin_check: Callable[[str], None] | None = None  # set by simt: refuses atomics that could spin forever
    addresses: Book = field(default_factory=lambda: Book({}))  # the launch's allocations, for pointers made from ints
    combining: bool = False  # running a combine function's body (lanes_as_programs): and/or/not element by element
    memo: Memo = field(default_factory=Memo)  # the group's integer operator and arange results (see memo)

    _flat: tuple[Array, Array] | None = None  # (mask, the (P,) flags made from it)
    _ids: Array | None = None

    @property
    def nprograms(self) -> int:
        gx, gy, gz = self.box
        return gx * gy * gz

    @property
    def pids(self) -> Array:
        """``(P, 3)``: each program's (x, y, z) ids."""
        if self._ids is None:
            self._ids = self.ids()
        return self._ids

    @property
    def executing(self) -> slice | Array:
        """The linear ids of the programs executing now: a slice when all of them are (a group's
        ids are consecutive, so one program's costs no array)."""
        first = self.first
        active = self.active
        return slice(first, first + self.nprograms) if active is None else first + np.flatnonzero(active)

    @functools.cached_property
    def first(self) -> int:
        """The linear id of the group's first program (the group's ids are consecutive)."""
        gx, gy, _ = self.grid
        x, y, z = self.origin
        return x + gx * (y + gy * z)

    @property
    def active(self) -> Array | None:
        """``(P,)``: the programs executing now (None: all of them), made from :attr:`mask` once."""
        mask = self.mask
        if mask is None:
            return None
        if self._flat is None or self._flat[0] is not mask:
            gx, gy, gz = self.box
            self._flat = (mask, np.broadcast_to(mask, (gz, gy, gx)).reshape(-1))
        return self._flat[1]

    def call(self, op: Builtin, args: Mapping[str, Any]) -> Any:
        if op in KEPT and self.mask is None and not self.combining:
            key = memo_key(op.name, args)
            if key is not None:
                kept = self.memo.get(key)
                if kept is not None:
                    return kept
                result = self._call(op, args)
                self.memo.keep(key, args, result)
                return result
        return self._call(op, args)

    def _call(self, op: Builtin, args: Mapping[str, Any]) -> Any:
        try:
            made = checked(op, args, view, CAPABILITIES)
            return IMPLS[op](self, made)
        except Exception as exc:
            stale = next((v for v in args.values() if isinstance(v, Stale)), None)
            if stale is not None:  # the argument is the error, not what the builtin made of it
                raise self.error(str(stale.error)) from None
            if isinstance(exc, SemanticError):  # a rule of tile_lang.semantics, located at the user's line
                raise self.error(str(exc)) from exc
            raise

    def uniform(self, values: Array, what: str) -> Any:
        """The single value the executing programs agree on, or :class:`Divergent`."""
        flat = values.reshape(values.shape[0], -1)[:, 0] if values.ndim > 1 else values
        if self.active is not None and flat.shape[0] == self.active.shape[0] and bool(self.active.any()):
            flat = flat[self.active]
        first = flat[0]
        if flat.shape[0] > 1 and not bool(np.all(flat == first)):
            raise Divergent(f"a {what} that differs between programs", self.site())
        return first.item()

    def only_active(self, flags: Array, lead: Lead = Lead.PROGRAM) -> Array:
        """``flags`` (the ``lead`` axes first)
        cleared for the programs not executing now, so a masked-off program never faults,
        writes, prints or fails a check."""
        if self.mask is None:
            return flags
        if lead is Lead.GRID:
            return flags & self.mask.reshape(self.mask.shape + (1,) * (flags.ndim - 3))
        active = self.active
        assert active is not None
        return flags & active.reshape((-1,) + (1,) * (flags.ndim - 1))

    @contextlib.contextmanager
    def lanes_as_programs(self) -> Iterator[None]:
        """For code run on lanes folded into the program axis (combine functions): nothing is masked."""
        saved, self.mask = self.mask, None
        combining, self.combining = self.combining, True
        try:
            yield
        finally:
            self.mask, self.combining = saved, combining

    @property
    def active_rows(self) -> Array:
        """The group rows executing now."""
        return np.arange(self.nprograms) if self.active is None else np.flatnonzero(self.active)

    @property
    def whole_grid(self) -> tuple[int, int, int] | None:
        """The grid, when this group is every program of the launch (in order)."""
        return self.grid if self.nprograms == self.grid[0] * self.grid[1] * self.grid[2] else None

    def record_write(self, memory: Memory, index: Array, old: Array | None = None) -> None:
        """Remember old values before a write, so a group or the launch can be rolled back
        (``old``: those values, when the caller has just read them)."""
        self.journal.record(memory.flat, index, old)

    def record_view_write(self, view: Array) -> None:
        """Like :meth:`record_write` for a write through a view of memory."""
        self.journal.record_view(view)

    def note_block(self, elements: int) -> None:
        self.largest_block = max(self.largest_block, elements)

    def program_of(self, row: int) -> tuple[int, ...]:
        """The grid coordinates of program ``row`` of this group (trailing unit axes dropped)."""
        coords = tuple(int(c) for c in self.pids[min(row, self.nprograms - 1)])
        dims = 3 if self.grid[2] > 1 else 2 if self.grid[1] > 1 else 1
        return coords[:dims]

    def site(self) -> Site:
        """The innermost line of user code (kernel or @tl.func) now running."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(INTERNAL_DIRS):
            frame = frame.f_back  # type: ignore[assignment]
        return Site("<unknown>", 0) if frame is None else Site(frame.f_code.co_filename, frame.f_lineno)

    def error(self, message: str) -> KernelError:
        """A KernelError at the innermost line of user code (kernel or @tl.func) now running."""
        return error_at(self.site(), message, self.kernel)

    def load_lanes(self, memory: Memory, make: Callable[[], Runs], held: int, offsets: Affine | None = None,
                   whole: bool = False) -> None:
        """Note a plain load for race detection; ``make`` gives its lanes when they are needed
        and holds ``held`` bytes until then; ``offsets``: its affine lanes, when it has them
        (``whole``: all of them live)."""
        if self.races is not None:
            self.races.load(memory, make, held, self.first, self.nprograms, self.site(), self.error, offsets, whole)

    def store_lanes(self, memory: Memory, offs: Array, live: Array, data: Array) -> None:
        """Note a plain store of ``data`` (shaped like ``offs``) for race detection (before it is made)."""
        if self.races is not None:
            runs = Runs.of(offs, live, self.nprograms)
            if runs.start.size:
                self.races.store(memory, runs, data, self.first, self.site(), self.error)

    def atomic_lanes(self, memory: Memory, offs: Array, live: Array, scalar: bool) -> None:
        """Note an atomic's lanes for race detection (against plain stores of the same program);
        a ``scalar`` one's old value reaches every lane through a barrier."""
        if self.races is not None:
            self.races.atomic(memory, lambda: Runs.of(offs, live, self.nprograms), self.first, self.site, self.error)
            if scalar:
                self.note_barrier()

    def note_atomic(self, what: str) -> None:
        """An atomic is about to execute (``what`` names it for a message)."""
        if self.spin_check is not None:
            self.spin_check(what)
        if self.races is not None:
            self.races.note_atomic(self.executing)

    def note_barrier(self) -> None:
        """The executing programs passed a ``tl.debug_barrier()``."""
        if self.races is not None:
            self.races.note_barrier(self.executing)


def view(value: object) -> Block | None:
    """What the rules see of a reference value (None: not a runtime value)."""
    return _block(value.type, value.block_shape) if isinstance(value, Tensor) else None


_block = functools.lru_cache(maxsize=1024)(Block)  # a kernel's values have a few types: made once each


def error_at(site: Site, message: str, kernel: str) -> KernelError:
    """A KernelError at ``site``, with the caret under the line's first character."""
    line = linecache.getline(site.filename, site.lineno)
    indent = len(line) - len(line.lstrip())
    return KernelError(message, site.filename, site.lineno, indent, kernel=kernel)
