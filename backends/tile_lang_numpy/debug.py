"""Compiler hints checked on every program's values, assertions, printing and inline asm.

A hint the compiler trusts (``multiple_of``, ``max_contiguous``, ``max_constancy``, ``assume``)
is a promise; when a value breaks it the GPU silently misbehaves, so here it is an error at the
kernel's line naming the promise, the program, the element and its value. Per Triton's axis
analysis, along each axis: ``max_contiguous(x, c)`` means each aligned group of ``c`` elements is
``v, v+1, ...``; ``max_constancy(x, c)`` means each such group is constant; ``multiple_of(x, m)``
means the first element of every run of consecutive values (``v, v+1, ...``) is a multiple of
``m``, so ``pid * BLOCK + tl.arange(0, BLOCK)`` is a multiple of BLOCK. For a pointer block,
runs are of consecutive elements and ``multiple_of`` is about the byte offset from the start of
the argument (whose own alignment is taken as given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.tensor import Tensor

from tile_lang_numpy import addresses, values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array, Pointers

# ------------------------------------------------------------------------------ locating a failure


def element(engine: Engine, bad: Array) -> tuple[tuple[int, ...], str]:
    """The first true entry of ``bad`` (program axis first) and how to name it in a message."""
    row, *lane = (int(v) for v in np.argwhere(bad)[0])
    if not lane:
        return (row,), f"program {engine.program_of(row)}"
    flat = int(np.ravel_multi_index(tuple(lane), bad.shape[1:]))
    where = f"element {flat}{' ' + str(tuple(lane)) if len(lane) > 1 else ''}"
    return (row, *lane), f"{where} of program {engine.program_of(row)}"


# ------------------------------------------------------------------------------ hints


def _hint_values(x: Tensor[Any, Any]) -> tuple[Array, int]:
    """The integers a hint is about, widened to int64, and their unit in bytes for
    divisibility: a pointer block gives its element offsets and the element size."""
    if isinstance(x.handle, Pointers):
        return addresses.element_offsets(x.handle)
    return values.array(x).astype(np.int64), 1


def _continues(a: Array, axis: int, step: int) -> Array:
    """Whether each element equals its predecessor along block ``axis`` plus ``step``
    (False for the first)."""
    ax = axis + 1
    follows = np.zeros(a.shape, dtype=bool)
    head = [slice(None)] * a.ndim
    tail = [slice(None)] * a.ndim
    head[ax], tail[ax] = slice(1, None), slice(None, -1)
    follows[tuple(head)] = a[tuple(head)] - a[tuple(tail)] == step
    return follows


def _group_starts(a: Array, axis: int, size: int) -> Array:
    """Whether each element begins an aligned group of ``size`` along block ``axis``."""
    shape = [1] * a.ndim
    shape[axis + 1] = a.shape[axis + 1]
    starts: Array = np.arange(a.shape[axis + 1]) % size == 0
    return starts.reshape(shape)


Check = Callable[[Array, int, int, int], Array]  # (values, block axis, promise, unit) -> broken elements


def _multiple(a: Array, axis: int, m: int, unit: int) -> Array:
    scaled: Array = a * unit
    return np.logical_and(~_continues(a, axis, 1), np.not_equal(np.remainder(scaled, m), 0))


def _contiguous(a: Array, axis: int, c: int, unit: int) -> Array:
    return np.logical_and(~_group_starts(a, axis, c), ~_continues(a, axis, 1))


def _constant(a: Array, axis: int, c: int, unit: int) -> Array:
    return np.logical_and(~_group_starts(a, axis, c), ~_continues(a, axis, 0))


def _hint(name: str, check: Check, describe: str) -> Callable[[Engine, Mapping[str, Any]], Any]:
    """The implementation of one hint: check the promise on every program, return the input."""
    def impl(engine: Engine, a: Mapping[str, Any]) -> Any:
        given = a["input"]
        x = values.lift(given) if isinstance(given, int) else given  # as the rule checked it
        arr, unit = _hint_values(x)
        blocks = arr if x.ndim else arr[:, None]  # a scalar is checked as a block of one
        for axis, v in enumerate(a["per_axis"]):
            bad = engine.only_active(check(blocks, axis, v, unit))
            if bool(bad.any()):
                at, where = element(engine, bad if x.ndim else bad[:, 0])
                # the values as the check saw them: one program's row stands for all when they agree
                seen = int(np.broadcast_to(blocks, bad.shape)[at if x.ndim else (*at, 0)])
                value = f"byte offset {seen * unit}" if isinstance(x.handle, Pointers) else seen
                along = f" along axis {axis}" if x.ndim > 1 else ""
                raise engine.error(f"tl.{name}(input, {a['values']!r}) does not hold: {where} is {value}"
                                   f"{along}, {describe.format(v)}")
        return given
    return impl


implements(tl.multiple_of)(_hint(
    "multiple_of", _multiple, "which starts a run of consecutive values but is not a multiple of {}"))
implements(tl.max_contiguous)(_hint(
    "max_contiguous", _contiguous, "which does not follow its predecessor in a group of {} by 1"))
implements(tl.max_constancy)(_hint(
    "max_constancy", _constant, "which differs from its predecessor in a group of {}"))


def _condition(engine: Engine, name: str, cond: object) -> Array:
    """A condition as a bool array with the program axis first."""
    t = values.lift(cond)
    if not t.type.is_bool:
        raise engine.error(f"tl.{name} needs a bool condition (a comparison), got {t!r}")
    return values.array(t)


@implements(tl.assume)
def assume(engine: Engine, a: Mapping[str, Any]) -> None:
    broken = engine.only_active(~_condition(engine, "assume", a["cond"]))
    if bool(broken.any()):
        raise engine.error(f"tl.assume(cond) does not hold: it is False at {element(engine, broken)[1]}")


# ------------------------------------------------------------------------------ assertions and printing


@implements(tl.device_assert)
def device_assert(engine: Engine, a: Mapping[str, Any]) -> None:
    ok = _condition(engine, "device_assert", a["cond"])
    if a["mask"] is not None:
        live = _condition(engine, "device_assert", a["mask"])
        rank = max(ok.ndim, live.ndim) - 1
        try:
            ok = values.align(ok, ok.ndim - 1, rank) | ~values.align(live, live.ndim - 1, rank)
        except ValueError:
            raise engine.error(f"device_assert: the mask's shape {list(live.shape[1:])} does not broadcast "
                               f"with the condition's {list(ok.shape[1:])}") from None
    ok = ~engine.only_active(~ok)
    if not bool(ok.all()):
        msg = f": {a['msg']}" if a["msg"] else ""
        raise engine.error(f"device_assert failed{msg} (at {element(engine, ~ok)[1]})")


def _show(x: object, hex: bool, row: int) -> str:
    """One program's view of a device_print argument."""
    if not isinstance(x, Tensor):
        return str(x)
    if isinstance(x.handle, Pointers):
        offsets = x.handle.offsets
        return f"<{x.handle.memory.param} + {_show_array(offsets[min(row, offsets.shape[0] - 1)], False)}>"
    arr = values.array(x)
    return _show_array(arr[min(row, arr.shape[0] - 1)], hex)


def _show_array(a: Array, hex: bool) -> str:
    if hex:
        a = a.astype(np.uint8) if a.dtype == np.bool_ else a.view(np.dtype(f"u{a.dtype.itemsize}"))
    if not a.ndim:
        return f"0x{int(a):x}" if hex else str(a)
    formatter: Any = {"int": lambda v: f"0x{v:x}"} if hex else None
    return np.array2string(a, threshold=1 << 20, max_line_width=1 << 20, formatter=formatter)


@implements(tl.device_print)
def device_print(engine: Engine, a: Mapping[str, Any]) -> None:
    """One line per program, ``pid (x, y, z)`` then the prefix and its values (the GPU prints a
    line per element)."""
    args = a["args"]
    prefix = a["prefix"]  # as the rule normalised it
    for row in engine.active_rows.tolist():
        pid = tuple(int(c) for c in engine.pids[row])
        engine.output.append(f"pid {pid}{prefix}" + " ".join(_show(x, a["hex"], row) for x in args))


@implements(tl.static_assert)
def static_assert(engine: Engine, a: Mapping[str, Any]) -> None:
    cond = a["cond"]
    if isinstance(cond, Tensor):
        raise engine.error(f"tl.static_assert needs a compile-time condition (constexpr), got {cond!r}")
    if not cond:
        raise engine.error(f"static_assert failed{': ' + a['msg'] if a['msg'] else ''}")


@implements(tl.static_print)
def static_print(engine: Engine, a: Mapping[str, Any]) -> None:
    """Printed by the group holding the launch's first program, as Triton prints it once when compiling."""
    if not any(engine.origin):
        engine.output.append(" ".join(str(repr(v) if isinstance(v, Tensor) else v) for v in a["values"]))


@implements(tl.gdc_wait, tl.gdc_launch_dependents)
def grid_dependence(engine: Engine, a: Mapping[str, Any]) -> None:
    """Launches run one after another: no grid to wait for or to release."""


@implements(tl.debug_barrier)
def debug_barrier(engine: Engine, a: Mapping[str, Any]) -> None:
    """Nothing to wait for here (lanes run in order); the race check learns that each executing
    program's lanes are in step from here on."""
    engine.note_barrier()

