"""Reductions, scans, sorting, histograms and gathers along a block axis.

Every op works on the whole group of programs at once: the program axis (array axis 0) is
never reduced, so a value shared by all programs (leading axis 1) gives a shared result.
``axis=None`` reduces all block axes, in row-major order.

Result dtypes (Triton 3.6's, given by tile_lang.semantics.reduction):

* ``sum``/``cumsum``: signed integers narrower than 32 bits accumulate in i32; unsigned ones
  and bool in u32 (Triton's rule, GPU-verified for bool). Integers wrap on overflow. ``dtype=``
  converts the input to that type first. ``cumsum`` and ``cumprod`` of bf16 give f32.
* ``max``/``min`` without indices: floats narrower than 32 bits give f32, integers (and bool)
  i32; with ``return_indices`` bf16 values give f32, others keep the input dtype.
* everything else keeps the input dtype; indices and histograms are i32.

Floating-point sums and scans accumulate in float64 and round once to the result dtype (fp8
saturating, as its casts do), so they are at least as accurate as the GPU's tree order, not
bit-identical to it. ``max`` and
``min`` ignore NaN unless every element is NaN (maxnum/minnum) and order -0.0 below +0.0, as
the GPU's max/min instructions do; ``argmax``/``argmin`` skip NaN too (an all-NaN row gives its
last index).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import F64, I32, DType
from tile_lang.func import Func
from tile_lang.tensor import Tensor
from tile_lang.ops import forms
from tile_lang.semantics.dispatch import apply

from tile_lang_numpy import checked, values
from tile_lang_numpy.elementwise import convert
from tile_lang_numpy.engine import Divergent, Engine, error_at, implements
from tile_lang_numpy.shape import (
    block,
    moved_back, moved_last, operand, remap, same_lead,
)
from tile_lang_numpy.values import Array

# ------------------------------------------------------------------------------ reducing along an axis


@dataclass(frozen=True)
class Along:
    """A block prepared for reduction: the data, the array axis to reduce, the result shape."""

    data: Array  # program axis first; the block axes flattened into one when reducing all of them
    axis: int  # the array axis being reduced (block axis + 1)
    shape: tuple[int, ...]  # the result's block shape (keep_dims applied)

    def finish(self, reduced: Array) -> Array:
        """A reduction result (reduced axis kept with size 1) in the result's block shape."""
        return reduced.reshape(reduced.shape[:1] + self.shape)


def along(x: Tensor[Any, Any], k: int | None, keep_dims: bool) -> Along:
    """Prepare ``x`` for reducing block axis ``k`` (every block axis when None; the rule checked it)."""
    data = values.array(x)
    if k is None:
        return Along(data.reshape(data.shape[0], -1), 1, (1,) * x.ndim if keep_dims else ())
    shape = x.block_shape[:k] + ((1,) if keep_dims else ()) + x.block_shape[k + 1:]
    return Along(data, k + 1, shape)


def _accumulator(dtype: DType) -> np.dtype[Any]:
    """The NumPy dtype results of ``dtype`` are computed in: float64 for floats, else exact."""
    return np.dtype(np.float64) if dtype.is_float else dtype.numpy


def _rounded(accumulated: Array, dtype: DType) -> Array:
    """An accumulated result in ``dtype``: a float64 one rounded once, an fp8 one saturating as the
    CUDA's cast (an fp8 sum past 448 is 448, not e4m3's NaN)."""
    return convert(accumulated, F64, dtype) if dtype.is_float else accumulated.astype(dtype.numpy)


# ------------------------------------------------------------------------------ sum, xor_sum


# The REDUCTION family and tl.sum (semantics checks the axis and gives the result dtype): each
# builtin's ufunc. The input is converted to the result dtype first (sum's ``dtype=``: exactly that).
REDUCTIONS: dict[Callable[..., Any], np.ufunc] = {tl.sum: np.add, tl.xor_sum: np.bitwise_xor}


def reduction(name: str, ufunc: np.ufunc) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    """The implementation of a row of :data:`REDUCTIONS` (``name``: the builtin's)."""
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        x, out = operand(engine, a["input"], name), a["dtype"]
        x = values.make(convert(values.array(x), x.type, out), out)
        r = along(x, a["axis"], a["keep_dims"])
        total = ufunc.reduce(r.data, axis=r.axis, dtype=_accumulator(out), keepdims=True)
        return values.make(_rounded(r.finish(total), out), out)
    return impl


for _reduced, _ufunc in REDUCTIONS.items():
    implements(_reduced)(reduction(f"tl.{_reduced.__name__}", _ufunc))


# ------------------------------------------------------------------------------ max, min, argmax, argmin


def _extreme(r: Along, dtype: DType, largest: bool) -> Array:
    """The maximum (or minimum) along the axis as the GPU's max/min instructions combine it: NaN
    ignored unless all are NaN, and -0.0 < +0.0 (so any order gives one result); axis kept."""
    if not dtype.is_float:
        ints: Array = (np.maximum if largest else np.minimum).reduce(r.data, axis=r.axis, keepdims=True)
        return ints
    result: Array = (np.fmax if largest else np.fmin).reduce(r.data, axis=r.axis, keepdims=True)
    zero = result == 0
    if bool(zero.any()):  # a max of zeros is +0.0 if any is, a min -0.0 if any is
        signed = (r.data == 0) & (np.signbit(r.data) != largest)
        flip = zero & np.any(signed, axis=r.axis, keepdims=True)
        result = np.where(flip, np.abs(result) if largest else -np.abs(result), result)
    return result


def _arg_extreme(r: Along, dtype: DType, largest: bool, tie_break_left: bool) -> tuple[Array, Array]:
    """The extreme value (as without indices) and its index along the axis (axis kept). NaN is
    skipped, as Triton's combine (``a > b`` is false against NaN) and interpreter skip it; ties
    (``==``, so -0.0 ties +0.0) go to the leftmost index, or with ``tie_break_left=False`` to the
    rightmost: Triton's fast combine keeps the right operand on ties, which a tree of in-order
    combines turns into the rightmost one. An all-NaN row gives its last index (the one Triton's
    combine keeps, never out of range) and NaN."""
    best = _extreme(r, dtype, largest)
    hit = r.data == best
    last = r.data.shape[r.axis] - 1
    if tie_break_left:
        index = np.argmax(hit, axis=r.axis, keepdims=True)
    else:
        index = last - np.argmax(np.flip(hit, axis=r.axis), axis=r.axis, keepdims=True)
    if dtype.is_float:  # no hit: every element NaN
        index = np.where(np.any(hit, axis=r.axis, keepdims=True), index, last)
    return best, index.astype(np.int32)


def _extremum(largest: bool, name: str) -> Callable[[Engine, Mapping[str, Any]], Any]:
    def impl(engine: Engine, a: Mapping[str, Any]) -> Any:
        x = operand(engine, a["input"], name)
        r = along(x, a["axis"], a["keep_dims"])
        if a["return_indices"]:
            best, index = _arg_extreme(r, x.type, largest, a["return_indices_tie_break_left"])
            return values.make(convert(r.finish(best), x.type, a["dtype"]), a["dtype"]), values.make(r.finish(index), I32)
        out = a["dtype"]
        return values.make(convert(r.finish(_extreme(r, x.type, largest)), x.type, out), out)
    return impl


def _arg(largest: bool, name: str) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        x = operand(engine, a["input"], name)
        r = along(x, a["axis"], a["keep_dims"])
        _, index = _arg_extreme(r, x.type, largest, a["tie_break_left"])
        return values.make(r.finish(index), I32)
    return impl


implements(tl.max)(_extremum(True, "tl.max"))
implements(tl.min)(_extremum(False, "tl.min"))
implements(tl.argmax)(_arg(True, "tl.argmax"))
implements(tl.argmin)(_arg(False, "tl.argmin"))


# ------------------------------------------------------------------------------ user combine functions


def _operands(engine: Engine, given: object, what: str) -> tuple[tuple[Tensor[Any, Any], ...], bool]:
    """The input of ``tl.reduce``/``tl.associative_scan``: its blocks (as the rule checked
    them), and whether it came as a tuple (the result then does too)."""
    items = given if isinstance(given, tuple) else (given,)
    xs = tuple(operand(engine, x, what) for x in items)
    data = [values.array(x) for x in xs]
    lead = max(d.shape[0] for d in data)  # a block the same in every program has one row
    spread = tuple(values.make(np.broadcast_to(d, (lead,) + d.shape[1:]), x.type) for d, x in zip(data, xs))
    return spread, isinstance(given, tuple)


def _result(value: object, dtype: DType) -> Tensor[Any, Any] | str:
    """One value a combine function returned, as a tensor (a Python number typed as ``dtype``),
    or the name of its type when it is none."""
    if not isinstance(value, (Tensor, bool, int, float)):
        return type(value).__name__
    return values.lift(value, dtype)


def _combine(engine: Engine, fn: Func[..., Any], kinds: tuple[DType, ...], what: str,
             left: list[Array], right: list[Array]) -> list[Array]:
    """``fn`` applied to every pair of tuples ``(left[.][i], right[.][i])`` in one call.

    All axes are folded into the program axis, so ``fn`` sees genuine rank-0 tensors (as on
    the GPU) whose every lane is one independent combine."""
    shape, lanes = left[0].shape, left[0].size

    def lane_values(arrays: list[Array]) -> list[Tensor[Any, Any]]:
        return [values.make(np.ascontiguousarray(a).reshape(-1), d) for a, d in zip(arrays, kinds)]

    run = checked.version(fn.fn) if isinstance(fn, Func) else fn  # its checked version: `a and b` as the compiler reads it
    try:
        with engine.lanes_as_programs():
            out = run(*lane_values(left), *lane_values(right))
    except Divergent as exc:  # at the combine function's branch, as the compiler reports it
        raise error_at(exc.site, str(apply(forms.combine_branches, fn)), engine.kernel) from None
    outs = out if isinstance(out, tuple) else (out,)
    apply(forms.combine_count, fn, len(outs), len(kinds), what)
    got = [_result(v, d) for v, d in zip(outs, kinds)]
    apply(forms.combine_results, fn, [g if isinstance(g, str) else block(g) for g in got], kinds, what)
    results = [values.array(t) for t in got if not isinstance(t, str)]
    if any(r.shape[0] not in (1, lanes) for r in results):
        raise engine.error(f"{fn!r} mixes its arguments with per-program values; a combine function "
                           "may only use its arguments and constants")
    return [np.broadcast_to(r, (lanes,)).reshape(shape) for r in results]


def _rebuilt(xs: tuple[Tensor[Any, Any], ...], data: list[Array], as_tuple: bool) -> Any:
    """The result blocks (dtypes of ``xs``), a tuple when the input was one."""
    out = tuple(values.make(d, x.type) for d, x in zip(data, xs))
    return out if as_tuple else out[0]


@implements(tl.reduce)
def reduce(engine: Engine, a: Mapping[str, Any]) -> Any:
    """A tree of in-order pairwise combines: ``(x0 . x1) . (x2 . x3)``..., one ``combine_fn``
    call per level (a tuple input's blocks combined together, element by element); equal to a
    left fold for any associative function."""
    xs, as_tuple = _operands(engine, a["input"], "tl.reduce")
    fn: Func[..., Any] = a["combine_fn"]
    kinds = tuple(x.type for x in xs)
    rs = [along(x, a["axis"], a["keep_dims"]) for x in xs]
    data = [np.moveaxis(r.data, r.axis, -1) for r in rs]
    while data[0].shape[-1] > 1:
        n = data[0].shape[-1]
        paired = _combine(engine, fn, kinds, "tl.reduce", [d[..., 0:n - 1:2] for d in data],
                          [d[..., 1:n:2] for d in data])
        data = paired if n % 2 == 0 else [np.concatenate([p, d[..., n - 1:]], axis=-1) for p, d in zip(paired, data)]
    return _rebuilt(xs, [r.finish(np.moveaxis(d, -1, r.axis)) for r, d in zip(rs, data)], as_tuple)


def _flipped(data: Array, reverse: bool) -> Array:
    """The last axis reversed when ``reverse`` (a view)."""
    return data[..., ::-1] if reverse else data


@implements(tl.associative_scan)
def associative_scan(engine: Engine, a: Mapping[str, Any]) -> Any:
    """Hillis-Steele: at step ``d`` every element combines with the one ``d`` before it (the
    earlier one as the left operand), ``log2(n)`` calls in all; a tuple input's blocks are
    scanned together. ``reverse`` scans from the end: ``out[i] = x[n-1] . x[n-2] . ... . x[i]``,
    the mirror image of the forward scan."""
    xs, as_tuple = _operands(engine, a["input"], "tl.associative_scan")
    fn: Func[..., Any] = a["combine_fn"]
    k = a["axis"]
    kinds = tuple(x.type for x in xs)
    data = [_flipped(moved_last(values.array(x), k), a["reverse"]) for x in xs]
    n, d = data[0].shape[-1], 1
    while d < n:
        tail = _combine(engine, fn, kinds, "tl.associative_scan", [x[..., :n - d] for x in data],
                        [x[..., d:] for x in data])
        data = [np.concatenate([x[..., :d], t], axis=-1) for x, t in zip(data, tail)]
        d *= 2
    return _rebuilt(xs, [moved_back(_flipped(x, a["reverse"]), k) for x in data], as_tuple)


# ------------------------------------------------------------------------------ cumsum, cumprod


def _scan(ufunc: np.ufunc, name: str) -> Callable[[Engine, Mapping[str, Any]], Tensor[Any, Any]]:
    """An inclusive prefix scan with a NumPy ufunc, of the input converted to the rule's dtype
    (cumprod keeps narrow integers: Triton 3.6 does not widen them)."""

    def impl(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
        x, k, out = operand(engine, a["input"], name), a["axis"], a["dtype"]
        data = _flipped(moved_last(convert(values.array(x), x.type, out), k), a["reverse"])
        scanned = ufunc.accumulate(data, axis=-1, dtype=_accumulator(out))
        return values.make(_rounded(moved_back(_flipped(scanned, a["reverse"]), k), out), out)
    return impl


implements(tl.cumsum)(_scan(np.add, "tl.cumsum"))
implements(tl.cumprod)(_scan(np.multiply, "tl.cumprod"))


# ------------------------------------------------------------------------------ sort, flip


@implements(tl.sort)
def sort(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """Along the last axis only, as in Triton; NaNs sort last (first when descending), which
    Triton leaves unspecified. A permutation of the elements, as Triton's network of swaps is:
    ``np.sort`` would rewrite each NaN (f16 ones to 0x7c01, f32 ones to a positive quiet NaN)."""
    x = operand(engine, a["x"], "tl.sort")
    data = values.array(x)
    # ml_dtypes' floats (kind "V") sort by f32 keys: their own sort misplaced bf16 NaNs before ml_dtypes 0.5
    keys = values.widen(data, np.float32) if data.dtype.kind == "V" else data
    ordered = np.take_along_axis(data, np.argsort(keys, axis=-1, kind="stable"), axis=-1)
    return values.make(ordered[..., ::-1] if a["descending"] else ordered, x.type)


@implements(tl.flip)
def flip(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x = operand(engine, a["x"], "tl.flip")
    return remap(x, lambda arr: np.flip(arr, axis=a["dim"] + 1))


# ------------------------------------------------------------------------------ histogram, gather


@implements(tl.histogram)
def histogram(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """Counts per value in ``[0, num_bins)``; other values and masked-off lanes are ignored
    (as Triton 3.9 and its interpreter do; Triton 3.6 on an H200 wraps them instead, so a
    kernel should not rely on either)."""
    x = operand(engine, a["input"], "tl.histogram")
    mask = None if a["mask"] is None else values.lift(a["mask"])
    bins = a["num_bins"]
    engine.note_block(bins)
    data = values.array(x).astype(np.int64)  # u64 values >= 2**63 turn negative: out of range either way
    live = (data >= 0) & (data < bins)
    if mask is not None:
        live = live & values.align(values.array(mask), mask.ndim, 1)
    data, live = same_lead(data, live)
    lead = live.shape[0]
    slots = (np.arange(lead, dtype=np.int64)[:, None] * bins + data)[live]
    counts = np.bincount(slots, minlength=lead * bins).reshape(lead, bins)
    return values.make(counts.astype(np.int32), I32)


@implements(tl.gather)
def gather(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """``out[..i..] = src[..index[..i..]..]`` along ``axis``; an index outside the axis is an
    error here (undefined on the GPU)."""
    src = operand(engine, a["src"], "tl.gather")
    index = operand(engine, a["index"], "tl.gather: index")
    k = a["axis"]
    idx = values.array(index).astype(np.int64)
    extent = src.block_shape[k]
    bad = (idx < 0) | (idx >= extent)
    if bool(bad.any()):
        row = int(np.argwhere(bad)[0][0])
        raise engine.error(f"tl.gather: index {int(idx[bad][0])} is outside [0, {extent}) on axis {k} "
                           f"(program {engine.program_of(row)})")
    data, idx = same_lead(values.array(src), idx)
    engine.note_block(math.prod(index.block_shape))
    return values.make(np.take_along_axis(data, idx, axis=k + 1), src.type)
