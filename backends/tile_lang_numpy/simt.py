"""Masked (SIMT) execution of Python control flow that differs between the programs of a group.

A kernel's SIMT version (made by :mod:`rewrite` from its source) calls this module at every
``if``, loop, ``return``, ``and``/``or``/``not``, conditional expression and assignment. The group keeps one *active* mask (the programs executing the current
statement): an ``if`` runs each side under its share of the mask, a loop runs until no program
is left in it, ``return`` takes the programs executing it out of the mask, and an assignment keeps the old value of every program that is masked off but will come
back (``np.where`` over the program axis); a name only some programs bound records which (:class:`Partial`), and a
program reading it without a binding gets Python's UnboundLocalError. Masks live in grid space (:mod:`tiled`): a branch on
a value that depends on one grid axis splits that axis, not a million programs. Builtins read
the mask through ``Engine.active``, so a masked-off program never faults, writes, prints, fails
a check or counts for the race check.
What cannot be expressed this way raises :class:`Divergent` and the group reruns one program
at a time (see :mod:`executor`). The rules that need the source are the checked version's
(:mod:`checked`: ``and``/``or``, ``assert``; :mod:`loops`: range bounds, typed indices,
carried shapes), shared, not copied.
"""

from __future__ import annotations

import builtins
import contextvars
import sys
import weakref
from collections.abc import Callable, Iterator
from types import FunctionType, TracebackType
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import legality
from tile_lang.dtypes import BOOL, DType
from tile_lang.func import Func
from tile_lang.ops.memory import BlockPointer, TensorDescriptor
from tile_lang.ops import forms
from tile_lang.semantics.dispatch import apply
from tile_lang.tensor import Tensor

from tile_lang_numpy import blocks, elementwise, rewrite, tiled, values
from tile_lang_numpy.checked import _engine as _engine, legal_callee
from tile_lang_numpy.checked import assert_ as assert_, raise_ as raise_  # SIMT versions assert and raise alike
from tile_lang_numpy.checked import constant as constant  # SIMT versions read constants as checked ones do
from tile_lang_numpy.checked import dtype_ as dtype_, isinstance_ as isinstance_, type_ as type_  # and answer these alike
from tile_lang_numpy.checked import value_ as value_
from tile_lang_numpy.checked import discarded_hint as discarded_hint
from tile_lang_numpy.checked import read as checked_read
from tile_lang_numpy.checked import boolean, flags, nested, python_builtin
from tile_lang_numpy.checked import not_ as checked_not
from tile_lang_numpy.engine import Divergent, Engine, Stale
from tile_lang_numpy.loops import UNBOUND, Carried, Unbound, bound, index_dtype, indices, range_bounds
from tile_lang_numpy.program import ruled
from tile_lang_numpy.values import Array, Lead


class State:
    """The masks of one group running a SIMT version: the active programs and the frames of
    the kernel and the @tl.funcs it is in."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.none = np.zeros((1, 1, 1), bool)  # masks are in grid space (see tiled)
        self.active = np.ones((1, 1, 1), bool)
        self.frames: list[Frame] = []
        self.merging = False  # whether some program masked off now will execute this frame again

    def set_active(self, mask: Array, force: bool = False) -> None:
        """Make ``mask`` the executing programs (``force``: recompute after a frame change)."""
        if mask is self.active and not force:
            return
        self.active = mask
        full = bool(mask.all())
        self.engine.mask = None if full else mask
        self.merging = not full and bool(np.greater(self.frames[-1].alive, mask).any())  # alive, not in mask

    def truth(self, x: object) -> bool | Array:
        """Python truth of ``x``: a bool, or per program when ``x`` is a tensor."""
        if not isinstance(x, Tensor):
            return bool(x)
        held = flags(self.engine, x, grid=True)
        return bool(held.reshape(-1)[0]) if held.size == 1 else held

    def split(self, flags: bool | Array) -> tuple[Array, Array]:
        """The active programs for which ``flags`` holds, and those for which it does not."""
        if isinstance(flags, bool):
            return (self.active, self.none) if flags else (self.none, self.active)
        return self.active & flags, self.active & ~flags

    def spin_check(self, what: str) -> None:
        """In lockstep, a program spinning in a while loop on an atomic or volatile load can
        wait forever for a program of its group that has left the loop: refuse."""
        for frame in self.frames:
            for loop in frame.loops:
                passed = loop.entry & ~loop.alive
                if loop.spins and bool(passed.any()):
                    gx, gy, gz = self.engine.box
                    raise Divergent(f"{what} in a while loop that some programs of the group have left (in lockstep "
                                    "a program could wait forever on one that cannot proceed)", self.engine.site(),
                                    int(np.broadcast_to(passed, (gz, gy, gx)).sum()))


_STATE: contextvars.ContextVar[State] = contextvars.ContextVar("tile_lang_simt")


def execute(engine: Engine, fn: Callable[..., Any], args: dict[str, Any]) -> None:
    """Run the SIMT version ``fn`` of a kernel for the group of ``engine``."""
    state = State(engine)
    engine.spin_check = state.spin_check
    token = _STATE.set(state)
    try:
        fn(**args)
    finally:
        _STATE.reset(token)
        engine.mask, engine.spin_check = None, None


def merge(engine: Engine, mask: Array, new: object, old: object) -> object:
    """``new`` for the programs in ``mask``, ``old`` for the others."""
    if isinstance(old, Unbound) or new is old:
        return new
    if isinstance(new, Stale) or isinstance(old, Stale):
        return new if isinstance(new, Stale) else old  # reading it is an error for every program
    if isinstance(new, (tuple, list)) and isinstance(old, (tuple, list)) and len(new) == len(old):
        return type(new)(merge(engine, mask, n, o) for n, o in zip(new, old))
    if isinstance(new, (BlockPointer, TensorDescriptor)) and type(new) is type(old):
        assert isinstance(old, (BlockPointer, TensorDescriptor))
        ours, theirs = new.handle, old.handle
        handle = blocks.merge_handles(tiled.expand(engine, mask), ours, theirs) if isinstance(ours, blocks.BlockHandle) and \
            isinstance(theirs, blocks.BlockHandle) else None
        if handle is not None:
            return type(new)(handle)
    elif _mergeable(new) and _mergeable(old) and not _retyped(new, old):
        if not isinstance(new, Tensor) and not isinstance(old, Tensor) and type(new) is type(old) and new == old:
            return new
        if _selectable(new, old):
            return elementwise.where(engine, {"condition": tiled.tensor(engine, mask, BOOL), "x": new, "y": old})
    elif type(new) is type(old) and _same(new, old):
        return new
    raise Divergent(f"a variable holding {_kind(new)} for some programs and {_kind(old)} for others",
                    engine.site())


def _retyped(new: object, old: object) -> bool:
    """Value blocks of two dtypes (``p = p.to(tl.float16)`` in a loop some programs have left):
    ``tl.where`` would promote the executing programs' value, so none merges them (the programs
    run one at a time)."""
    return isinstance(new, Tensor) and isinstance(old, Tensor) and new.type is not old.type and \
        not new.type.is_pointer and not old.type.is_pointer


def _mergeable(x: object) -> bool:
    return isinstance(x, (Tensor, bool, int, float)) and not isinstance(x, np.generic)


def _selectable(new: object, old: object) -> bool:
    """Whether ``tl.where`` merges the two: values, pointers into one memory, or pointers of one
    type into different memories (selected by address, see :mod:`addresses`)."""
    if _pointer_memory(new) is _pointer_memory(old):
        return True
    return isinstance(new, Tensor) and isinstance(old, Tensor) and _pointer_memory(old) is not None and \
        new.type is old.type


def _pointer_memory(x: object) -> object:
    return x.handle.memory if isinstance(x, Tensor) and isinstance(x.handle, values.Pointers) else None


def _same(x: object, y: object) -> bool:
    try:
        return bool(x == y)
    except Exception:
        return False


def _kind(x: object) -> str:
    return repr(x) if isinstance(x, (Tensor, bool, int, float, type(None))) else type(x).__name__


# ------------------------------------------------------------------------------ called by SIMT versions


class Partial:
    """The value of a local variable that only some programs of the frame have bound (the
    others ran no trip of the loop or not the branch binding it): reading it is an error for
    them (:func:`read`), as reading ``missing`` (what they hold) is."""

    __slots__ = ("value", "bound", "missing")

    def __init__(self, value: object, bound: Array, missing: Unbound) -> None:
        self.value = value
        self.bound = bound  # the programs that bound it (grid space, see tiled)
        self.missing = missing


def assign(new: object, old: object) -> object:
    """The value of a variable after ``x = new`` (``old`` is its value before)."""
    state = _STATE.get()
    if not state.merging:
        return new
    return _rebind(state, new, old)


def _rebind(state: State, new: object, old: object) -> object:
    """``new`` for the executing programs, ``old`` for the others (each part of a tuple
    target's); a :class:`Partial` while some program that may read it has not bound it."""
    if isinstance(old, Partial):
        merged = merge(state.engine, state.active, new, old.value)
        return _partial(state, merged, old.bound | state.active, old.missing)
    if isinstance(old, Unbound):
        return _partial(state, new, state.active, old)
    if isinstance(old, tuple) and isinstance(new, (tuple, list)) and len(new) == len(old):
        return type(new)(_rebind(state, n, o) for n, o in zip(new, old))
    return merge(state.engine, state.active, new, old)


def _partial(state: State, value: object, bound: Array, missing: Unbound) -> object:
    """``value`` bound by the programs ``bound``: a :class:`Partial` while some program still
    in the frame has not bound it (it holds ``missing``)."""
    return Partial(value, bound, missing) if bool(np.greater(state.frames[-1].alive, bound).any()) else value


def _unbound_after(state: State, before: object, line: int) -> object | None:
    """What a name holds after the runtime ``if`` at ``line`` that keeps it to itself, where the
    executing programs had not bound it before (None where they had): each other program's value
    as it was (the ``if`` does not run for them)."""
    if isinstance(before, Unbound):
        return Unbound(branch=line)
    if isinstance(before, Partial) and bool(np.greater(state.active, before.bound).any()):
        return Partial(before.value, before.bound, Unbound(branch=line))
    return None


def read(x: object, name: str) -> object:
    """A read of local ``name`` where some program may not have bound it: Python's error when an
    executing program has not (:func:`checked.read`)."""
    if isinstance(x, Partial):
        x = x.missing if bool(np.greater(_STATE.get().active, x.bound).any()) else x.value
    return checked_read(x, name)


def fn(f: object) -> object:
    """The callee of a call: the SIMT version of a @tl.func, anything else as it is."""
    f = legality.alias_of(f) or f  # print(...): tl.device_print(...)
    legal_callee(f)
    if isinstance(f, Func):
        return nested(f, version(f.fn) or f.fn)
    return python_builtin(f) if legality.python_builtin(f) else f


def function() -> Frame:
    return Frame(_STATE.get())


def branch(cond: object, line: int, *own: object) -> Branch:
    return Branch(_STATE.get(), cond, line, own)


def loop(spins: bool, line: int, names: tuple[str, ...], *before: object) -> Loop:
    return Loop(_STATE.get(), spins, Carried(names, before, spins, line, not spins))


def and_(x: object, y: Callable[[], object]) -> object:
    """``x and y``."""
    return boolean(x, y, True, _run_by)


def or_(x: object, y: Callable[[], object]) -> object:
    """``x or y``."""
    return boolean(x, y, False, _run_by)


def _run_by(engine: Engine, programs: Array, y: Callable[[], object]) -> object:
    """``y()`` run by the executing programs among ``programs`` (per program, or one flag for all)."""
    state = _STATE.get()
    saved = state.active
    state.set_active(state.active & tiled.of(engine, programs))
    try:
        return y()
    finally:
        state.set_active(saved)


def not_(x: object) -> object:
    """``not x``: element by element on a block (``forms.logical``)."""
    if not isinstance(x, Tensor) or apply(forms.logical, x.block_shape, _engine().combining, True):
        return checked_not(x)
    state = _STATE.get()
    yes, no = state.split(state.truth(x))
    if not yes.any() or not no.any():
        return not bool(yes.any())
    return tiled.tensor(state.engine, no, BOOL)


def select(cond: object, x: Callable[[], object], y: Callable[[], object]) -> object:
    """``x if cond else y``."""
    state = _STATE.get()
    yes, no = state.split(state.truth(cond))
    if not no.any():
        return x()
    if not yes.any():
        return y()
    saved = state.active
    try:
        state.set_active(yes)
        first = x()
        state.set_active(no)
        second = y()
    finally:
        state.set_active(saved)
    return merge(state.engine, yes, first, second)


def version(f: Callable[..., Any]) -> FunctionType | None:
    """The SIMT version of a kernel's or @tl.func's function (None when its source cannot be
    read), made once."""
    if not isinstance(f, FunctionType):
        return None
    known = _VERSIONS.get(f)
    if known is None:
        known = _VERSIONS[f] = (rewrite.transform(f, sys.modules[__name__], UNBOUND, masked=True),)
    return known[0]


_VERSIONS: weakref.WeakKeyDictionary[FunctionType, tuple[FunctionType | None]] = weakref.WeakKeyDictionary()


# ------------------------------------------------------------------------------ the constructs


class Frame:
    """One call of the kernel or of a @tl.func: the programs that made it, those that have not
    returned yet, and the value each returned."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.entry = self.alive = state.active
        self.value: object = UNBOUND
        self.loops: list[Loop] = []

    def __enter__(self) -> Frame:
        self.state.frames.append(self)
        self.state.merging = False
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        state = self.state
        state.frames.pop()
        if state.frames:
            state.set_active(self.entry, force=True)

    @property
    def result(self) -> object:
        return None if self.value is UNBOUND else self.value

    def ret(self, value: object) -> bool:
        """``return value`` by the active programs; True when no program is left in the call."""
        state = self.state
        leaving = state.active
        self.value = merge(state.engine, leaving, value, self.value)
        self.alive = self.alive & ~leaving
        for loop in self.loops:
            loop.leave(leaving)
        state.set_active(state.none)
        return not self.alive.any()


class Branch:
    """An ``if`` at ``line``: each side runs under its share of the active programs; afterwards the
    programs that did not leave (break, continue, return) on either side are active. ``own``: the
    values before it of the names it may keep to itself (``forms.branch_own``)."""

    def __init__(self, state: State, cond: object, line: int, own: tuple[object, ...]) -> None:
        self.state = state
        self.entry = state.active
        self.then_mask, self.else_mask = state.split(state.truth(cond))
        self.ran_then = self.ran_else = self.has_else = False
        self.after_then = state.none  # the programs still active at the end of the then side
        # after a runtime condition, what each name the programs here had not bound holds (None: bound)
        self.own = tuple(_unbound_after(state, v, line) if isinstance(cond, Tensor) else None for v in own)

    def join(self, *now: object) -> tuple[object, ...]:
        """The names ``own`` after the ``if``: unbound for the programs here where they were
        before it, whatever side each took (as the compiler reads them)."""
        return tuple(v if kept is None else kept for v, kept in zip(now, self.own))

    def __enter__(self) -> Branch:
        return self

    def then(self) -> bool:
        self.ran_then = bool(self.then_mask.any())
        if self.ran_then:
            self.state.set_active(self.then_mask)
        return self.ran_then

    def otherwise(self) -> bool:
        self.has_else = True
        self.after_then = self.state.active if self.ran_then else self.state.none
        self.ran_else = bool(self.else_mask.any())
        if self.ran_else:
            self.state.set_active(self.else_mask)
        return self.ran_else

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        state = self.state
        if not self.has_else:
            after_then, after_else = (state.active if self.ran_then else state.none), self.else_mask
        else:
            after_then, after_else = self.after_then, (state.active if self.ran_else else state.none)
        if after_then is state.none:
            state.set_active(after_else)
        elif after_else is state.none:
            state.set_active(after_then)
        else:
            state.set_active(after_then | after_else)


class Loop:
    """A ``while`` or ``for`` loop: it runs while any program is in it; a program leaves when
    its condition fails or its range is exhausted, or by ``return``."""

    def __init__(self, state: State, spins: bool, carried: Carried) -> None:
        self.state = state
        self.spins = spins  # a while loop (see State.spin_check)
        self.static = False
        self.carried = carried
        self.entry = self.alive = state.active

    def __enter__(self) -> Loop:
        self.state.frames[-1].loops.append(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        frame = self.state.frames[-1]
        frame.loops.remove(self)
        self.state.set_active(self.entry & frame.alive)

    def leave(self, programs: Array) -> None:
        self.alive = self.alive & ~programs

    def next(self, staying: Array | None = None) -> bool:
        """Start an iteration with the programs still in the loop (and in ``staying``)."""
        if staying is not None:
            self.alive = self.alive & staying
        if not self.alive.any():
            return False
        self.state.set_active(self.alive)
        return True

    def test(self, cond: object) -> bool:
        """A while loop's condition, evaluated by the programs starting the iteration."""
        stay, leave = self.state.split(self.state.truth(cond))
        if leave.any():
            self.alive = self.alive & ~leave
            self.state.set_active(self.alive)
        return bool(stay.any())

    def bind(self, value: object, old: object) -> object:
        """The loop variable's value (a static_range's stays a Python int, the same for every
        program: where only some bind it, the others still have none)."""
        if not self.static:
            return assign(value, old)
        if isinstance(old, Partial):
            return assign(value, Partial(value, old.bound, old.missing))
        return assign(value, old) if isinstance(old, Unbound) else value

    def carry(self, *now: object) -> tuple[object, ...]:
        """The carried names' values, each rebound with another shape made stale."""
        return self.carried.check(now, self.state.engine)

    def over(self, iterable: object) -> Iterator[object]:
        """A loop over a Python iterable: the same items for every program."""
        for item in iter(iterable):  # type: ignore[call-overload]
            if not self.next():
                return
            yield item

    def call(self, callee: object, *args: Any, **kwargs: Any) -> Iterator[object]:
        """``for ... in callee(*args, **kwargs)``: a range with per-program bounds runs until
        the last program's range is exhausted; its index is a scalar tensor, a
        ``tl.static_range``'s a Python int (see :mod:`loops`)."""
        bounds = range_bounds(callee, args, kwargs)
        if bounds is None:
            raise self.state.engine.error(legality.LOOP_ITERATOR)
        self.static = callee is tl.static_range
        self.carried.runtime = not self.static
        return self._range(*bounds)

    def _range(self, start: object, stop: object, step: object) -> Iterator[object]:
        bounds = [bound(self.state.engine, b, grid=True) for b in (start, stop, step)]
        uniform = [self._uniform(b) for b in bounds]
        dtype = index_dtype((start, stop, step))
        if uniform[0] is not None and uniform[1] is not None and uniform[2] is not None:
            ks = builtins.range(uniform[0], uniform[1], ruled(self.state.engine, forms.range_step, uniform[2]))
            return self.over(ks if self.static else indices(ks, dtype))
        return self._per_program(bounds, uniform, dtype)

    def _per_program(self, bounds: list[int | Array], uniform: list[int | None], dtype: DType) -> Iterator[object]:
        engine = self.state.engine
        first, last, step = (np.asarray(b, np.int64).reshape(np.shape(b) or (1, 1, 1)) for b in bounds)
        if bool(engine.only_active(step == 0, Lead.GRID).any()):
            apply(forms.range_step, 0)  # a zero step, for some program: the rule's error
        trips = np.minimum(_trip_counts(first, last, step), np.uint64(np.iinfo(np.int32).max)).astype(np.int64)
        count = np.where(self.alive, trips, 0).astype(np.int32)  # compared per trip
        for k in builtins.range(int(count.max(initial=0))):
            if not self.next(k < count):
                return
            if uniform[0] is not None and uniform[2] is not None:
                yield values.make(np.array([uniform[0] + k * uniform[2]]).astype(dtype.numpy), dtype)
            else:  # wrapped to 64 bits, then to the index's: the true value, which is in its range
                nth = first.astype(np.uint64) + step.astype(np.uint64) * np.uint64(k)
                yield tiled.tensor(engine, nth.astype(np.int64).astype(dtype.numpy), dtype)

    def _uniform(self, bound: int | Array) -> int | None:
        """The bound as a Python int when every program in the loop agrees on it."""
        if isinstance(bound, int):
            return bound
        if bound.size == 1:
            return int(bound.reshape(-1)[0])
        if self.alive.all():  # two reductions instead of selecting the live programs' bounds
            low = int(bound.min())
            return low if low == int(bound.max()) else None
        shape = np.broadcast_shapes(bound.shape, self.alive.shape)
        alive = np.broadcast_to(self.alive, shape)
        live = np.broadcast_to(bound, shape)[alive] if alive.any() else bound.reshape(-1)[:1]
        return int(live[0]) if bool((live == live[0]).all()) else None


def _trip_counts(first: Array, last: Array, step: Array) -> Array:
    """Per program, how many iterations ``range(first, last, step)`` makes, as Python counts
    them: in uint64, where the distance between two int64 bounds and a step's size are exact."""
    up = step > 0
    span = np.where(up, last.astype(np.uint64) - first.astype(np.uint64), first.astype(np.uint64) - last.astype(np.uint64))
    size = np.maximum(np.where(up, step.astype(np.uint64), np.uint64(0) - step.astype(np.uint64)), np.uint64(1))
    ahead = np.where(up, last > first, (first > last) & (step < 0))
    counts: Array = np.where(ahead, (span - np.uint64(1)) // size + np.uint64(1), np.uint64(0))
    return counts
