"""The checked version of a kernel or @tl.func: what a group runs while its programs agree on
control flow.

It is the function's own source (made once by :mod:`rewrite`, line numbers kept) with only the
constructs whose compiler rules need the source routed here: ``and``/``or`` (a compile-time
operand that decides ends them, a runtime one branches), ``assert`` (a device assertion on a
runtime scalar), loops (integer bounds, typed indices and carried shapes: :mod:`loops`), and
calls of @tl.funcs (their own checked versions). Everything else runs as written, so both
backends accept and reject the same kernels. Programs that disagree raise :class:`Divergent`,
and the group reruns the SIMT version (:mod:`simt`), which shares these pieces.
"""

from __future__ import annotations

import builtins
import functools
import sys
import weakref
from collections.abc import Callable, Iterator, Mapping
from types import FunctionType
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import builtin, legality
from tile_lang.dtypes import BOOL, DType
from tile_lang.func import MAX_DEPTH, Func, too_deep
from tile_lang.errors import SemanticError
from tile_lang.ops import forms
from tile_lang.semantics.dispatch import apply, checked
from tile_lang.signature import plain, value_attribute
from tile_lang.tensor import Tensor, dtype_value, type_value

from tile_lang_numpy import debug, program, rewrite, values
from tile_lang_numpy.engine import CAPABILITIES, Divergent, Engine, view
from tile_lang_numpy.loops import UNBOUND, Carried, Unbound, bound, index_dtype, indices, range_bounds
from tile_lang_numpy.program import ruled, scalar_values
from tile_lang_numpy.values import Array

RunBy = Callable[[Engine, Array, Callable[[], object]], object]
"""How a version runs the rest of ``and``/``or`` for some of the executing programs."""


def flags(engine: Engine, x: Tensor[Any, Any], grid: bool = False) -> Array:
    """Each program's truth of a runtime scalar (after the rule that it is a scalar; in grid
    space when ``grid``, see :mod:`tiled`)."""
    return _truth(scalar_values(engine, x, grid))


def _truth(raw: Array) -> Array:
    """Python's truth of each value: non-zero."""
    return raw if raw.dtype == np.bool_ else raw != 0


def boolean(x: object, y: Callable[[], object], conjunction: bool, run_by: RunBy) -> object:
    """The compiler's ``and``/``or``: a compile-time ``x`` that decides the result ends it (Python's
    value); after a runtime scalar ``x``, ``y`` runs for the programs ``x`` does not decide (for
    none when it decides for all: ``y``'s rules still apply), and the result is a bool per program."""
    if not isinstance(x, Tensor):
        return x if apply(forms.decides, x, conjunction) else y()
    if apply(forms.logical, x.block_shape, _engine().combining):
        rest = y()
        if not isinstance(rest, Tensor):
            return rest if apply(forms.decides, rest, conjunction) else logical_truth(x)
        return logical_truth(x) & logical_truth(rest) if conjunction else logical_truth(x) | logical_truth(rest)
    engine = _engine()
    left = flags(engine, x)
    rest = run_by(engine, left if conjunction else ~left, y)
    right = flags(engine, rest) if isinstance(rest, Tensor) else np.asarray([bool(rest)])
    return values.make(left & right if conjunction else left | right, BOOL)


def logical_truth(x: Tensor[Any, Any]) -> Tensor[Any, Any]:
    """A block's truth element by element (non-zero), as ``and``/``or``/``not`` read it on a block."""
    return x if x.type is BOOL else x != 0


def not_(x: object) -> object:
    """``not x``: element by element on a block (``forms.logical``), else Python's."""
    if isinstance(x, Tensor) and apply(forms.logical, x.block_shape, _engine().combining, True):
        return ~logical_truth(x)
    return not x


def raise_(source: str) -> None:
    """A ``raise`` statement reached: the shared rule's error (``forms.raised``)."""
    engine = _engine()
    raise engine.error(str(apply(forms.raised, source)))


def assert_(test: object, msg: Callable[[], object] | None, source: str) -> None:
    """``assert test, msg``: checked now on a compile-time test, a device assertion on a
    runtime scalar or block (every element, for the programs executing it)."""
    engine = _engine()
    if isinstance(test, Tensor):
        program.ruled(engine, forms.asserted, test.type)
        held = _truth(values.array(test))
        if bool(held.all()):
            return
        message = apply(forms.assertion_message, None if msg is None else msg(), source)
        debug.device_assert(engine, {"cond": values.make(held, BOOL), "msg": message, "mask": None})
    elif not test:
        message = apply(forms.assertion_message, None if msg is None else msg(), source)
        raise engine.error(f"assertion failed: {message}")


def _engine() -> Engine:
    engine = builtin.active_engine()
    assert isinstance(engine, Engine)
    return engine


# ------------------------------------------------------------------------------ called by checked versions


def and_(x: object, y: Callable[[], object]) -> object:
    """``x and y``."""
    return boolean(x, y, True, _run_by)


def or_(x: object, y: Callable[[], object]) -> object:
    """``x or y``."""
    return boolean(x, y, False, _run_by)


def _run_by(engine: Engine, programs: Array, y: Callable[[], object]) -> object:
    """``y()`` run by all the programs, or by none (its rules still apply, its effects are
    masked off); a split raises :class:`Divergent`: the SIMT version reruns the group."""
    if bool(programs.all()):
        return y()
    if programs.any():
        raise Divergent("a condition that differs between programs", engine.site())
    saved = engine.mask
    engine.mask = np.zeros((1, 1, 1), bool)
    try:
        return y()
    finally:
        engine.mask = saved


class Loop:
    """A loop of a checked version: Python's own loop, over integer bounds and typed indices,
    its carried values checked at each iteration's start and after it."""

    __slots__ = ("carried",)

    def __init__(self, spins: bool, line: int, names: tuple[str, ...], before: tuple[object, ...]) -> None:
        self.carried = Carried(names, before, spins, line, not spins)  # a while loop is a runtime loop

    def __enter__(self) -> Loop:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def call(self, callee: Any, *args: Any, **kwargs: Any) -> Iterator[object]:
        """``for ... in callee(*args, **kwargs)``: a range's bounds are integers the programs
        agree on; its index a scalar tensor, a ``tl.static_range``'s a Python int."""
        engine = _engine()
        given = range_bounds(callee, args, kwargs)
        if given is None:
            raise engine.error(legality.LOOP_ITERATOR)
        start, stop, step = (b if isinstance(b, int) else int(engine.uniform(b, "range bound"))
                             for b in (bound(engine, g) for g in given))
        step = ruled(engine, forms.range_step, step)  # Python's words for a zero step, as compiled
        if callee is tl.static_range:
            return iter(builtins.range(start, stop, step))
        self.carried.runtime = True
        return indices(builtins.range(start, stop, step), index_dtype(given))

    def carry(self, *now: object) -> tuple[object, ...]:
        """The carried names' values, each rebound with another shape made stale."""
        return self.carried.check(now, _engine())


class Branch:
    """An ``if`` at ``line`` whose sides bind the names ``then`` and ``orelse`` (each only there):
    after a runtime condition, each such name that is a block before and after it keeps its type,
    which the other side leaves as it was (the compiler's rule), and each of ``own`` (the names it
    may keep to itself, ``forms.branch_own``) unbound before it is unbound after it, whatever
    side ran."""

    def __init__(self, line: int, then: tuple[str, ...], orelse: tuple[str, ...], own: tuple[str, ...],
                 scope: Mapping[str, object]) -> None:
        self.sides = then, orelse
        self.before = {n: _block_type(scope.get(n)) for n in then + orelse}
        self.own = {n: Unbound(branch=line) if isinstance(scope.get(n), Unbound) else None for n in own}
        self.runtime = False

    def test(self, cond: object) -> object:
        self.runtime = isinstance(cond, Tensor)
        return cond

    def join(self, scope: Mapping[str, object]) -> tuple[object, ...]:
        """The values of the names ``own`` after the ``if``, once its types are checked."""
        if not self.runtime:
            return tuple(scope.get(n) for n in self.own)
        self.check(scope)
        return tuple(scope.get(n) if kept is None else kept for n, kept in self.own.items())

    def check(self, scope: Mapping[str, object]) -> None:
        for side, names in enumerate(self.sides):
            for name in names:
                before, after = self.before[name], _block_type(scope.get(name))
                if before is not None and after is not None:
                    try:
                        apply(forms.branch_types, name, *((after, before) if side == 0 else (before, after)))
                    except SemanticError as exc:
                        engine = _engine()
                        raise engine.error(str(exc)) from None


def _block_type(value: object) -> tuple[DType, tuple[int, ...]] | None:
    return (value.type, value.block_shape) if isinstance(value, Tensor) else None


def legal_callee(f: object) -> None:
    """The compiler's rules for a callee known only when its call runs: a kernel may call it
    (:func:`tile_lang.legality.call_refusal`), and a @tl.func's body is one a kernel may hold."""
    engine = _engine()
    refusal = legality.call_refusal(f)
    if refusal is not None:
        raise engine.error(refusal)
    if isinstance(f, Func):
        legality.check(f.fn, engine.kernel, False)


def loop(spins: bool, line: int, names: tuple[str, ...], *before: object) -> Loop:
    return Loop(spins, line, names, before)


def fn(f: object) -> object:
    """The callee of a call: the checked version of a @tl.func, anything else as it is."""
    f = legality.alias_of(f) or f  # print(...): tl.device_print(...)
    legal_callee(f)
    if isinstance(f, Func):
        return nested(f, version(f.fn))
    return python_builtin(f) if legality.python_builtin(f) else f


def python_builtin(f: object) -> Callable[..., Any]:
    """Python's ``min``/``max``/``abs`` as a kernel calls them: on runtime values the op the shared
    rule names (``tl.minimum``...: NaN and all, as compiled), on compile-time ones Python's own."""
    assert callable(f)

    def call(*args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(v, Tensor) for v in (*args, *kwargs.values())):
            return f(*args, **kwargs)
        shapes = tuple(v.block_shape if isinstance(v, Tensor) else () for v in args)
        try:
            op = apply(forms.python_builtin, f, shapes, bool(kwargs))
        except SemanticError as exc:
            engine = _engine()
            raise engine.error(str(exc)) from None
        return functools.reduce(op, args) if len(args) > 1 else op(*args)  # max(a, b, c): max(max(a, b), c)

    return call


def nested(f: Func[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` (a version of ``f``) called one @tl.func deeper: past MAX_DEPTH nested calls, the
    compiler's error at the call's line (recursion must end by a constexpr)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        engine = _engine()
        if engine.depth >= MAX_DEPTH:
            raise engine.error(too_deep(f.__qualname__))
        engine.depth += 1
        try:
            return run(*args, **kwargs)
        finally:
            engine.depth -= 1

    return call


def read(x: object, name: str) -> object:
    """A read of local ``name`` where it may be unbound (the preamble bound it to UNBOUND):
    Python's UnboundLocalError when it is, the shared rule's error where only a runtime loop or
    one side of a runtime ``if`` bound it (``forms.loop_local``, ``forms.branch_local``, as the
    compiler reads it)."""
    if isinstance(x, Unbound):
        if x.loop or x.branch:
            engine = _engine()
            error = apply(forms.loop_local, name, x.loop) if x.loop else apply(forms.branch_local, name, x.branch)
            raise engine.error(str(error))
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")
    return x


def isinstance_(value: object, classinfo: object) -> bool:
    """``isinstance`` in a kernel: the compile-time bool of the shared rule (``tl.tensor`` holds
    the tensors), as the compiler answers it."""
    return legality.kernel_isinstance(value, classinfo, isinstance(value, Tensor))


def dtype_(x: object) -> object:
    """``x.dtype``: a tensor's, or the dtype Triton gives a Python number bound in a kernel."""
    if isinstance(x, (bool, int, float)):
        return dtype_value(program.ruled(_engine(), forms.constant_dtype, x))
    return getattr(x, "dtype")


def type_(x: object) -> object:
    """``x.type``: a tensor's Triton type (``tensor.type_value``; the tensor's own ``type`` slot
    is its DType, which tile_lang's code reads), anything else's ``type`` attribute."""
    return type_value(x.type, x.block_shape) if isinstance(x, Tensor) else getattr(x, "type")


def value_(x: object) -> object:
    """``x.value``: a compile-time constant's own value (Triton's ``tl.constexpr``), anything
    else's ``value`` attribute (``signature.value_attribute``, as the compiler reads it)."""
    return value_attribute(x)


def discarded_hint(f: object) -> Callable[..., None]:
    """A hint called as a statement, its result discarded: its arguments are checked, its promise
    is not, as in Triton (the form ``forms.discarded_hint``)."""
    op = builtin.builtin_of(f)
    assert op is not None

    def call(*args: object, **kwargs: object) -> None:
        bound = op.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        engine = _engine()
        try:
            checked(op, bound.arguments, view, CAPABILITIES)
        except SemanticError as exc:
            raise engine.error(str(exc)) from None

    return call


def constant(x: object) -> object:
    """A module-level ``tl.constexpr(v)`` read by a kernel or @tl.func: ``v``, as the compiler reads it."""
    return plain(x)


def version(f: Callable[..., Any]) -> Callable[..., Any]:
    """The checked version of a kernel's or @tl.func's function, made once: ``f`` itself when
    nothing in it needs checking or when its source cannot be read."""
    if not isinstance(f, FunctionType):
        return f
    known = _VERSIONS.get(f)
    if known is None:
        known = _VERSIONS[f] = (rewrite.transform(f, sys.modules[__name__], UNBOUND, masked=False),)
    return known[0] or f


# None: the function itself (a value referring to its key would keep the entry alive)
_VERSIONS: weakref.WeakKeyDictionary[FunctionType, tuple[FunctionType | None]] = weakref.WeakKeyDictionary()
