"""Reduction and scan rules: which blocks they take and the dtypes they produce; histogram and
gather arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.builtin import Family
from tile_lang.dtypes import DType
from tile_lang.func import Func
from tile_lang.ops import reduction as tlreduction
from tile_lang.ops import forms
from tile_lang.semantics.base import (
    Args, Block, SemanticError, applies, block_axis, constexpr_int, dtype_arg, family_rule, operand, pow2_shape, rule,
    shown,
)


def values(dtype: DType, what: str) -> DType:
    """A reduction, scan or sort reads values, not pointers."""
    if dtype.is_pointer:
        raise SemanticError(f"{what} needs a block of values, got a block of {dtype!r}")
    return dtype


def sum_dtype(dtype: DType) -> DType:
    """Sums (and cumsum) widen narrow signed ints to i32, narrow unsigned ints and bool to u32."""
    if dtype.bits < 32 and (dtype.is_bool or dtype.kind is dtypes.Kind.UINT):
        return dtypes.U32
    if dtype.bits < 32 and dtype.is_signed:
        return dtypes.I32
    return dtype


def max_dtype(dtype: DType, indices: bool) -> DType:
    """The values' dtype of max/min, as Triton 3.6's ``tl.max``/``tl.min``: bf16 becomes f32 (its
    ``_promote_bfloat16_to_float32``: no bf16 max, min or compare in hardware); without indices
    anything narrower than 32 bits is then widened, floats to f32 and integers (and bool) to i32."""
    if dtype is dtypes.BF16 or (not indices and dtype.is_float and dtype.bits < 32):
        return dtypes.F32
    return dtypes.I32 if not indices and not dtype.is_float and dtype.bits < 32 else dtype


def scan_dtype(dtype: DType, widen: bool) -> DType:
    """cumsum and cumprod scan bf16 in f32 (Triton 3.6 promotes it first); cumsum (``widen``)
    then widens narrow integers as sums do, cumprod keeps them."""
    dtype = dtypes.F32 if dtype is dtypes.BF16 else dtype
    return sum_dtype(dtype) if widen else dtype


def integer_block(dtype: DType, what: str) -> DType:
    """xor_sum, histogram and gather indices take integers (xor_sum also bools)."""
    if not (dtype.is_int or (dtype.is_bool and what == "tl.xor_sum")):
        raise SemanticError(f"{what} needs an integer block, got {dtype!r}")
    return dtype


def scan_axis(rank: int, axis: object, what: str, advice: str = "") -> int:
    """The axis a scan, reduction or sort runs along: a compile-time int in range for ``rank``
    (a scalar has none, as in Triton). ``advice`` ends any error's message."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise SemanticError(f"{what}: axis must be a compile-time int, got {shown(axis)}{advice}")
    if rank == 0:
        raise SemanticError(f"{what}: a scalar has no axis {int(axis)}{advice}")
    return block_axis(rank, axis, what)


def reduce_axis(rank: int, axis: object, what: str, twin: str | None = None) -> int | None:
    """A reduction's axis (see :func:`scan_axis`), or None for every axis: the one way to reduce a
    scalar (to itself). ``twin`` names the elementwise op a second operand in the axis's place
    likely meant (``tl.max(a, b)`` for ``tl.maximum(a, b)``)."""
    if axis is None:
        return None
    advice = "; axis=None reduces a scalar" if rank == 0 else ""
    if twin:
        advice += f"; for the elementwise {twin.removeprefix('tl.')} of two values write {twin}(a, b)"
    return scan_axis(rank, axis, what, advice)


def combine_operands(blocks: Sequence[Block], what: str) -> tuple[int, ...]:
    """The operands of ``tl.reduce``/``tl.associative_scan`` with a combine function: one block,
    or (as in Triton) a tuple of value blocks of one shape, whose combine function then takes the
    N left values and the N right values and returns N. Returns the shape."""
    if not blocks:
        raise SemanticError(f"{what}: needs at least one block, got an empty tuple")
    for b in blocks:
        values(b.dtype, what)
    if any(b.shape != blocks[0].shape for b in blocks):
        raise SemanticError(f"{what}: the input tuple's blocks must have one shape, got "
                            + ", ".join(map(str, blocks)))
    return blocks[0].shape


def combine_arity(fn: object, body: Callable[..., Any], n: int, what: str) -> None:
    """A combine function (``fn``, whose Python function is ``body``) of N input blocks takes 2N
    values: the N left ones, then the N right ones."""
    try:
        inspect.signature(body).bind(*range(2 * n))
    except TypeError:
        raise SemanticError(f"{what}: {fn!r} must take {2 * n} arguments (the {n} left value{'s' * (n > 1)}, "
                            f"then the {n} right), one pair per input block") from None


@applies(forms.combine_count)
def combine_count(fn: object, got: int, want: int, what: str) -> None:
    """A combine function returns one value per input block."""
    if got != want:
        raise SemanticError(f"{what}: {fn!r} must return {want} value{'s' * (want > 1)} "
                            f"(one per input block), got {got}")


@applies(forms.combine_branches)
def combine_branches(fn: object) -> SemanticError:
    """A combine function runs once per pair of elements, every lane in step: Python control flow
    on its arguments is refused (both backends), and ``tl.where`` says the same."""
    return SemanticError(f"{fn!r} branches on its arguments with Python control flow; "
                         "a combine function must be branch-free (use tl.where)")


@applies(forms.combine_results)
def combine_results(fn: object, got: Sequence[Block | str], want: Sequence[DType], what: str) -> None:
    """A combine function's results (as many as :func:`combine_count` checked): rank-0 values of
    the input blocks' dtypes, in order (a ``str`` stands for a returned value that is no tensor:
    its type's name)."""
    for i, (g, dtype) in enumerate(zip(got, want)):
        if isinstance(g, str) or g.dtype != dtype or g.shape:
            place = f"result {i} " if len(want) > 1 else ""
            shown_got = f"a {g}" if isinstance(g, str) else str(g)
            raise SemanticError(f"{what}: {fn!r} {place}must be a rank-0 {dtype!r} tensor (its arguments' type), "
                                f"got {shown_got}")


def sort_axis(rank: int, dim: object) -> int:
    """tl.sort sorts a block along its last axis only (``dim`` None or naming it); returns it."""
    if rank == 0:
        raise SemanticError("tl.sort sorts a block, got a scalar")
    axis = scan_axis(rank, rank - 1 if dim is None else dim, "tl.sort")
    if axis != rank - 1:
        raise SemanticError(f"tl.sort sorts along the last axis only (dim={rank - 1} or None), got dim={dim}")
    return axis


def histogram(x: Block, num_bins: object, mask: Block | None) -> int:
    """``tl.histogram``: a 1-D integer block, a power-of-two constexpr bin count, and a bool
    mask shaped like the input (or a scalar). Returns the bin count."""
    integer_block(values(x.dtype, "tl.histogram"), "tl.histogram")
    if x.rank != 1:
        raise SemanticError(f"tl.histogram needs a 1-D block, got {x}")
    bins = constexpr_int(num_bins, "tl.histogram", "num_bins")
    pow2_shape((bins,), "tl.histogram: num_bins")
    if mask is not None:
        if not mask.dtype.is_bool or mask.shape not in ((), (1,), x.shape):
            raise SemanticError(f"tl.histogram: mask must be a bool block like the input {x}, got {mask}")
    return bins


def gather(src: Block, index: Block, axis: object) -> int:
    """``tl.gather``: an integer index block of src's rank, matching it on every axis but
    ``axis``. Returns the axis."""
    values(src.dtype, "tl.gather")
    integer_block(values(index.dtype, "tl.gather: index"), "tl.gather: index")
    if src.rank != index.rank:
        raise SemanticError(f"tl.gather: src ({src}) and index ({index}) must have the same rank")
    k = block_axis(src.rank, axis, "tl.gather")
    if any(s != i for d, (s, i) in enumerate(zip(src.shape, index.shape)) if d != k):
        raise SemanticError(f"tl.gather: index ({index}) must match src ({src}) on every axis but {k}")
    return k


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


def _values_of(a: Args, what: str, arg: str = "input") -> Block:
    """The block argument ``arg`` of ``what``, of values (not pointers)."""
    x = operand(a[arg])
    values(x.dtype, what)
    return x


def _reduction(what: str, a: Args, twin: str | None = None) -> dict[str, Any]:
    """A reduction of a block of values: ``axis`` checked (None: every axis), the result's
    ``dtype`` the input's (the rule of the REDUCTION family, which the others build on)."""
    x = _values_of(a, what)
    return {"axis": reduce_axis(x.rank, a["axis"], what, twin), "dtype": x.dtype}


family_rule(Family.REDUCTION)(_reduction)


@rule(tlreduction.sum)
def _sum(a: Args) -> dict[str, Any]:
    x = _values_of(a, "tl.sum")
    out = sum_dtype(x.dtype) if a["dtype"] is None else dtype_arg(a["dtype"], "tl.sum")
    return {"axis": reduce_axis(x.rank, a["axis"], "tl.sum"), "dtype": out}


@rule(tlreduction.xor_sum)
def _xor_sum(a: Args) -> dict[str, Any]:
    integer_block(_values_of(a, "tl.xor_sum").dtype, "tl.xor_sum")
    return _reduction("tl.xor_sum", a)


def _extremum(a: Args, what: str, twin: str) -> dict[str, Any]:
    """``tl.max``/``tl.min``: ``dtype`` is the values' (:func:`max_dtype`)."""
    checked = _reduction(what, a, twin)
    return {**checked, "dtype": max_dtype(checked["dtype"], bool(a["return_indices"]))}


rule(tlreduction.max)(lambda a: _extremum(a, "tl.max", "tl.maximum"))
rule(tlreduction.min)(lambda a: _extremum(a, "tl.min", "tl.minimum"))
rule(tlreduction.argmax)(lambda a: {**_reduction("tl.argmax", a), "dtype": dtypes.I32})
rule(tlreduction.argmin)(lambda a: {**_reduction("tl.argmin", a), "dtype": dtypes.I32})


def _scan(a: Args, what: str, widen: bool) -> dict[str, Any]:
    """``dtype``: what the scan runs in and returns (:func:`scan_dtype`, or cumsum's ``dtype=``,
    to which Triton converts the input, as sum's)."""
    x = _values_of(a, what)
    given = a.get("dtype")
    out = scan_dtype(x.dtype, widen) if given is None else dtype_arg(given, what)
    return {"axis": scan_axis(x.rank, a["axis"], what), "dtype": out}


rule(tlreduction.cumsum)(lambda a: _scan(a, "tl.cumsum", True))
rule(tlreduction.cumprod)(lambda a: _scan(a, "tl.cumprod", False))


def _combined(a: Args, what: str) -> tuple[Block, ...]:
    """The blocks of ``tl.reduce``/``tl.associative_scan``'s input, with a @tl.func combine
    function taking two values per block."""
    given = a["input"]
    blocks = tuple(operand(x) for x in (given if isinstance(given, tuple) else (given,)))
    combine_operands(blocks, what)
    fn = a["combine_fn"]
    if not isinstance(fn, Func):
        raise SemanticError(f"{what}: combine_fn must be a @tl.func, got {fn!r}")
    combine_arity(fn, fn.fn, len(blocks), what)
    return blocks


@rule(tlreduction.reduce)
def _reduce(a: Args) -> dict[str, Any]:
    blocks = _combined(a, "tl.reduce")
    return {"axis": reduce_axis(blocks[0].rank, a["axis"], "tl.reduce")}


@rule(tlreduction.associative_scan)
def _associative_scan(a: Args) -> dict[str, Any]:
    blocks = _combined(a, "tl.associative_scan")
    return {"axis": scan_axis(blocks[0].rank, a["axis"], "tl.associative_scan")}


@rule(tlreduction.sort)
def _sort(a: Args) -> dict[str, Any]:
    return {"dim": sort_axis(_values_of(a, "tl.sort", "x").rank, a["dim"])}


@rule(tlreduction.flip)
def _flip(a: Args) -> dict[str, Any]:
    """``dim``: the axis reversed (None: the last)."""
    x = operand(a["x"])
    if not x.shape:
        raise SemanticError("tl.flip needs a block")
    return {"dim": block_axis(x.rank, x.rank - 1 if a["dim"] is None else a["dim"], "tl.flip")}


@rule(tlreduction.histogram)
def _histogram(a: Args) -> dict[str, Any]:
    mask = None if a["mask"] is None else operand(a["mask"])
    return {"num_bins": histogram(operand(a["input"]), a["num_bins"], mask)}


@rule(tlreduction.gather)
def _gather(a: Args) -> dict[str, Any]:
    return {"axis": gather(operand(a["src"]), operand(a["index"]), a["axis"])}
