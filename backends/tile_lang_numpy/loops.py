"""Loops as the compiler types them, for the plain (unmasked) version of a kernel or @tl.func.

A kernel runs its *plain version* (made by :mod:`rewrite`: its own source with only its loops
and its calls of @tl.funcs routed here, line numbers kept) so that, as in Triton, the index of
a runtime loop (``range``, ``tl.range``) is an integer scalar tensor (:func:`index_dtype`), a
``tl.static_range``'s a Python int, and a loop-carried value keeps its shape: a name rebound
to another shape in a loop becomes :class:`Stale`, and reading it is the compiler's error at
the line of the read. The SIMT version (:mod:`simt`) shares these pieces.
"""

from __future__ import annotations

import builtins
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator
from types import FunctionType
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import DType, scalar_dtype
from tile_lang.func import Func
from tile_lang.semantics import loops as rules
from tile_lang.tensor import Tensor

from tile_lang_numpy import rewrite, values
from tile_lang_numpy.engine import Stale


class Unbound:
    """The value of a local variable not yet assigned (a rewritten version binds the locals it
    tracks up front, so that a loop or an assignment can read the value it replaces)."""

    def __repr__(self) -> str:
        return "<unbound local>"


UNBOUND = Unbound()


def block_type(value: object) -> rules.BlockType | None:
    """A value's dtype and block shape, for the loop-carried rule; None for a value the rule
    does not cover (an unbound or stale name, a block pointer...)."""
    if isinstance(value, Tensor):
        return value.type, value.block_shape
    if isinstance(value, (bool, int, float)):
        return scalar_dtype(value), ()
    return None


class Carried:
    """The values a loop may carry: its names bound before it, and their types then (the
    values themselves are not kept: a loop must not hold its first value's memory)."""

    __slots__ = ("names", "before", "runtime")

    def __init__(self, names: tuple[str, ...], before: tuple[object, ...], runtime: bool) -> None:
        self.names = names
        # a Python number before the loop takes the loop's type: it is not checked
        self.before = tuple(block_type(v) if isinstance(v, Tensor) else None for v in before)
        self.runtime = runtime  # a runtime loop (not an unrolled tl.static_range or a loop over a tuple)

    def check(self, now: tuple[object, ...]) -> tuple[object, ...]:
        """``now`` (the names' values at an iteration's start or after the loop), each name
        rebound with another shape than before the loop replaced by :class:`Stale`."""
        if not self.runtime:
            return now
        out = now
        for k, (was, new) in enumerate(zip(self.before, now)):
            if was is None or (isinstance(new, Tensor) and new.block_shape == was[1]):
                continue
            inside = block_type(new)
            error = rules.loop_carried(self.names[k], was, inside) if inside is not None else None
            if error is not None:
                out = out[:k] + (Stale(error),) + out[k + 1:]
        return out


def range_bounds(callee: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[object, object, object] | None:
    """``(start, stop, step)`` of a runtime loop's ``range(...)`` or ``tl.range(...)``; None
    for any other iterable (a ``tl.static_range`` is unrolled: its index is a Python int)."""
    if callee is builtins.range:
        if kwargs or not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 positional arguments, got {len(args)}")
        return (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    if callee is tl.range:
        r = tl.range(*args, **kwargs)
        return r.start, r.end, r.step
    return None


def index_dtype(bounds: Iterable[object]) -> DType:
    """The dtype of the index of a runtime loop with these bounds (the shared rule)."""
    return rules.index_dtype(b.type if isinstance(b, Tensor) else scalar_dtype(b) for b in bounds
                             if isinstance(b, (Tensor, int)))


def indices(ks: Iterable[int], dtype: DType) -> Iterator[Tensor[Any, Any]]:
    """The loop index for each of ``ks``, as a scalar tensor shared by the programs."""
    kind = dtype.numpy
    for k in ks:
        yield values.make(np.array([k], kind), dtype)


# ------------------------------------------------------------------------------ called by plain versions


class Loop:
    """A loop of a plain version: Python's own loop, over typed indices."""

    __slots__ = ("carried",)

    def __init__(self, spins: bool, names: tuple[str, ...], before: tuple[object, ...]) -> None:
        self.carried = Carried(names, before, spins)  # a while loop is a runtime loop

    def __enter__(self) -> Loop:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def call(self, callee: Any, *args: Any, **kwargs: Any) -> Iterator[object]:
        """``for ... in callee(*args, **kwargs)``."""
        bounds = range_bounds(callee, args, kwargs)
        if bounds is None:
            return iter(callee(*args, **kwargs))
        self.carried.runtime = True
        ks = builtins.range(*bounds)  # type: ignore[call-overload]  # tensors pass as ints (uniform, or Divergent)
        return indices(ks, index_dtype(bounds))

    def over(self, iterable: Any) -> Iterator[object]:
        """``for ... in iterable`` (not a call): Python's own iteration."""
        return iter(iterable)

    def bind(self, value: object, old: object) -> object:
        return value

    def carry(self, *now: object) -> tuple[object, ...]:
        return self.carried.check(now)


def loop(spins: bool, names: tuple[str, ...], *before: object) -> Loop:
    return Loop(spins, names, before)


def fn(f: object) -> object:
    """The callee of a call: the plain version of a @tl.func, anything else as it is."""
    if isinstance(f, Func):
        return version(f.fn)
    return f


def version(f: Callable[..., Any]) -> Callable[..., Any]:
    """The plain version of a kernel's or @tl.func's function (``f`` itself when it has no loop
    and calls no @tl.func, or when its source cannot be read), made once."""
    if not isinstance(f, FunctionType):
        return f
    known = _VERSIONS.get(f)
    if known is None:
        known = _VERSIONS[f] = (rewrite.transform(f, sys.modules[__name__], UNBOUND, masked=False),)
    return known[0] or f


# None: the function itself (a value referring to its key would keep the entry alive)
_VERSIONS: weakref.WeakKeyDictionary[FunctionType, tuple[FunctionType | None]] = weakref.WeakKeyDictionary()
