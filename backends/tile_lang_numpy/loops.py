"""Loops as the compiler types them, the pieces both versions of a kernel share (the checked
version, :mod:`checked`, and the SIMT version, :mod:`simt`).

As in Triton, a range's bounds are integers (:func:`bound`), the index of a runtime loop
(``range``, ``tl.range``) is an integer scalar tensor (:func:`index_dtype`, :func:`indices`), a
``tl.static_range``'s a Python int, and a loop-carried value keeps its shape: a name rebound to
another shape in a runtime loop becomes :class:`Stale` (:class:`Carried`), and reading it is the
compiler's error at the line of the read; a name a runtime loop binds first (its body's, or its
index with no earlier binding) is the loop's own, unbound after it and at each iteration's start.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from tile_lang.dtypes import DType, scalar_dtype
from tile_lang.ops import forms
from tile_lang.ops.forms import BlockType
from tile_lang.semantics.dispatch import apply
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.engine import Engine, Stale
from tile_lang_numpy.program import integer_values, ruled
from tile_lang_numpy.values import Array


class Unbound:
    """The value of a local variable not yet assigned (a rewritten version binds the locals it
    tracks up front, so that a loop or an assignment can read the value it replaces), or one that
    only a runtime loop (``loop``, its line) or one side of a runtime ``if`` (``branch``) bound:
    reading it is the shared rule's error then (``forms.loop_local``, ``forms.branch_local``),
    else Python's UnboundLocalError."""

    __slots__ = ("loop", "branch")

    def __init__(self, loop: int = 0, branch: int = 0) -> None:
        self.loop = loop
        self.branch = branch

    def __repr__(self) -> str:
        return "<unbound local>"


UNBOUND = Unbound()


def block_type(value: object) -> BlockType | None:
    """A value's dtype and block shape, for the loop-carried rule; None for a value the rule
    does not cover (an unbound or stale name, a block pointer...)."""
    if isinstance(value, Tensor):
        return value.type, value.block_shape
    if isinstance(value, (bool, int, float)):
        return scalar_dtype(value), ()
    return None


class Carried:
    """The values a loop may carry: its names bound before it, and their types then (the
    values themselves are not kept: a loop must not hold its first value's memory). ``names``
    are those its body binds, then a ``for``'s index (``index``), which each iteration binds
    first and only the code after the loop reads through :meth:`check`."""

    __slots__ = ("names", "before", "carried", "runtime", "local", "index")

    def __init__(self, names: tuple[str, ...], before: tuple[object, ...], runtime: bool, line: int,
                 index: bool) -> None:
        self.names = names
        # a Python number before the loop takes the loop's type: it is not checked
        self.before = tuple(block_type(v) if isinstance(v, Tensor) else None for v in before)
        # the dtype each value is carried in so far, widened as the body widens it (a Python number's
        # as the compiler types it; None: a value no dtype rule covers)
        self.carried: list[DType | None] = [t[0] if (t := block_type(v)) is not None else None for v in before]
        self.runtime = runtime  # a runtime loop (not an unrolled tl.static_range or a loop over a tuple)
        # what each name unbound before the loop holds after it and at an iteration's start (None: bound)
        self.local = tuple(Unbound(line) if isinstance(v, Unbound) else None for v in before)
        self.index = len(names) - 1 if index else len(names)

    def check(self, now: tuple[object, ...], engine: Engine) -> tuple[object, ...]:
        """``now`` (the names' values at an iteration's start, or after the loop with the index),
        each name unbound before the loop unbound again (the loop's own) and each rebound with
        another shape than before the loop replaced by :class:`Stale`; a value the body gives a
        narrower dtype than it is carried in is the compiler's error (it never settles on a type),
        at the user's line."""
        if not self.runtime:
            return now
        out = now
        for k, (was, new) in enumerate(zip(self.before, now)):
            if self.local[k] is not None:
                out = out[:k] + (self.local[k],) + out[k + 1:]
                continue
            if k == self.index:  # bound before: Python's value, the last index or the earlier one
                continue
            if isinstance(new, (bool, int, float)):  # carried as the compiler carries it: a scalar of its dtype
                new = values.make(np.array([new], (dtype := scalar_dtype(new)).numpy), dtype)
                out = out[:k] + (new,) + out[k + 1:]
            if was is not None and not (isinstance(new, Tensor) and new.block_shape == was[1]):
                inside = block_type(new)
                error = apply(forms.loop_carried, self.names[k], was, inside) if inside is not None else None
                if error is not None:  # another shape: not carried (a loop-local value reusing the name)
                    out = out[:k] + (Stale(error),) + out[k + 1:]
                    continue
            self._settle(k, new, engine)
        return out

    def _settle(self, k: int, value: object, engine: Engine) -> None:
        now = block_type(value)
        carried = self.carried[k]
        if now is None or carried is None or now[0] is carried:
            self.carried[k] = now[0] if now is not None else None
            return
        self.carried[k] = ruled(engine, forms.loop_settles, self.names[k], carried, now[0])


def range_bounds(callee: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[object, object, object] | None:
    """``(start, stop, step)`` of ``callee(*args, **kwargs)`` when ``callee`` is ``range``,
    ``tl.range`` or ``tl.static_range`` (bound by the shared rule); None for any other iterable's maker."""
    call = apply(forms.range_call, callee, args, kwargs)
    return None if call is None else (call.start, call.stop, call.step)


def bound(engine: Engine, value: object, grid: bool = False) -> int | Array:
    """A range bound, after the compiler's rule (an integer scalar, or a compile-time int):
    each program's value of a scalar tensor (in grid space when ``grid``), or the int."""
    if isinstance(value, Tensor):
        return integer_values(engine, value, grid).astype(np.int64)
    return ruled(engine, forms.constant_index, value)


def index_dtype(bounds: Iterable[object]) -> DType:
    """The dtype of the index of a runtime loop with these bounds (the shared rule)."""
    return apply(forms.loop_index, (b.type if isinstance(b, Tensor) else scalar_dtype(b) for b in bounds
                                         if isinstance(b, (Tensor, int))))


def indices(ks: Iterable[int], dtype: DType) -> Iterator[Tensor[Any, Any]]:
    """The loop index for each of ``ks``, as a scalar tensor shared by the programs."""
    kind = dtype.numpy
    for k in ks:
        yield values.make(np.array([k], kind), dtype)
