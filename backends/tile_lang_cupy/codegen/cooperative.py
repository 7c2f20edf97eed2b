"""Ops the threads of a block compute together in shared memory: gather, sort, histogram, and
reductions and scans with a user combine function (inlined as a C++ lambda).

Each copies its operand into a private shared-memory buffer (:meth:`Emitter.stage`), works
on it in rounds separated by ``__syncthreads()`` with the work dealt to all threads, and reads
its result back into registers. Combines happen in exactly the NumPy reference's order, so
results match it bit for bit even for non-associative floating-point functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tile_lang.compiler.ir import AxisAttr, CombineAttr, HistogramAttr, Node, Op, Region, SortAttr

from tile_lang_cupy.codegen.ctypes_ import compute_dtype, ctype
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, Index, emits


@emits(Op.GATHER)
def _gather(em: Emitter, node: Node) -> None:
    """``out[..i..] = src[.. index[..i..] ..]`` along the axis (src read at any coordinates)."""
    assert isinstance(node.attr, AxisAttr)
    src = em.random_access(node.args[0])
    index = node.args[1]
    name = em.declare(node)
    with em.each(node) as idx:
        coords = list(idx.coords)
        coords[node.attr.axis] = f"(unsigned)({em.elem(index, idx)})"
        em.line(f"{name}[k] = {em.elem(src, Index(None, tuple(coords)))};")


def _read_back(em: Emitter, node: Node, buffer: str, flat: str = "") -> None:
    """``node``'s registers (or scalar) from row-major ``buffer`` (``flat`` maps an element's
    flat index to its buffer position; identity by default)."""
    def at(idx: Index) -> str:
        if node.ty.is_scalar:
            return f"{buffer}[0]"
        return f"{buffer}[{flat.format(idx.flat) if flat else idx.flat}]"

    em.define(node, at)


# ---------------------------------------------------------------- sort


@emits(Op.SORT)
def _sort(em: Emitter, node: Node) -> None:
    """A bitonic network along the last axis, every row at once; NaN sorts as the largest.
    Descending is the ascending row read backwards (as the reference)."""
    assert isinstance(node.attr, SortAttr)
    x = node.args[0]
    n = x.ty.shape[-1]
    buf = em.stage(x)
    w = ctype(compute_dtype(x.ty.dtype))
    size = 2
    while size <= n:
        stride = size // 2
        while stride:
            with em.strided(f"{x.ty.numel // 2}u") as item:
                em.line(f"const unsigned j = {item} % {n // 2}u, p = 2u * {stride}u * (j / {stride}u) + j % {stride}u;")
                em.line(f"const unsigned lo = {item} / {n // 2}u * {n}u + p, hi = lo + {stride}u;")
                em.line(f"const bool up = (p & {size}u) == 0;")
                em.line(f"const auto a = {buf}[lo], b = {buf}[hi];")
                swap = f"{{ {buf}[lo] = b; {buf}[hi] = a; }}"
                em.line(f"if (tl::sort_greater(tl::cvt<{w}>(a), tl::cvt<{w}>(b)) == up) {swap}")
            em.line("__syncthreads();")
            stride //= 2
        size *= 2
    backwards = f"({{0}} / {n}u * {n}u + {n - 1}u - {{0}} % {n}u)"
    _read_back(em, node, buf, backwards if node.attr.descending else "")


# ---------------------------------------------------------------- histogram


@emits(Op.HISTOGRAM)
def _histogram(em: Emitter, node: Node) -> None:
    """Shared-memory counters bumped atomically; values outside [0, bins) and masked-off lanes
    are skipped (u64 values from 2**63 read as negative: out of range either way)."""
    assert isinstance(node.attr, HistogramAttr)
    x = node.args[0]
    mask = node.args[1] if node.attr.has_mask else None
    bins = node.attr.bins
    counts = em.scratch(node.ty.dtype, bins, "bins")
    em.line("__syncthreads();")
    with em.strided(f"{bins}u") as item:
        em.line(f"{counts}[{item}] = 0;")
    em.line("__syncthreads();")
    with em.each(x) as idx:
        guard = " && ".join(f"({g})" for g in (em.owner(x), em.elem(mask, idx) if mask is not None else None,
                                                   f"v >= 0 && v < {bins}") if g)
        em.line(f"{{ const long long v = (long long)({em.elem(x, idx)}); if ({guard}) atomicAdd(&{counts}[v], 1); }}")
    em.line("__syncthreads();")
    _read_back(em, node, counts)


# ---------------------------------------------------------------- user combine functions


def _combine_fn(em: Emitter, region: Region) -> str:
    """The combine region as a C++ lambda ``(lhs..., rhs..., &out...)``: the N left and N right
    values (copies, so an output may alias an input) and a reference to each of the N results;
    returns its name."""
    n = len(region.results)
    decls: list[str] = []
    for p in region.params:
        em.names[p] = em.fresh("rhs" if len(decls) >= n else "lhs")
        decls.append(f"{ctype(p.ty.dtype)} {em.names[p]}")
    outs = [em.fresh("out") for _ in range(n)]
    decls += [f"{ctype(r.ty.dtype)}& {o}" for r, o in zip(region.results, outs)]
    fn = em.fresh("combine")
    with em.block(f"auto {fn} = [&]({', '.join(decls)})", close="};"):
        em.region(region)
        for r, o in zip(region.results, outs):
            em.line(f"{o} = {em.elem(r, SCALAR)};")
    return fn


def _call(fn: str, lhs: list[str], rhs: list[str], out: list[str]) -> str:
    """One combine: ``out... = lhs... . rhs...``."""
    return f"{fn}({', '.join(lhs + rhs + out)});"


def _extents(node: Node, axis: int | None) -> tuple[int, int, int]:
    """(outer, along, inner): element (o, r, i) of the operand lies at ``(o * along + r) * inner + i``."""
    shape = node.ty.shape
    if axis is None:
        return 1, node.ty.numel, 1
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _combined(em: Emitter, node: Node, run: Callable[[], list[str]]) -> list[str]:
    """The shared-memory buffers holding a combine's N results. The N nodes of one tuple combine
    (the same operands and region) emit it once: the first runs it, the others read its buffers
    while they are in scope (no line has left the C++ block they were declared in) - nothing
    else writes them."""
    key = (*node.args, *node.regions[0].results)
    found = em.combined.get(key)
    if found is not None:
        buffers, start = found
        indent = "  " * em.depth
        if all(line.startswith(indent) or line.startswith("#") for line in em.lines[start:]):
            return buffers
    buffers = run()
    em.combined[key] = (buffers, len(em.lines))
    return buffers


@emits(Op.COMBINE_REDUCE)
def _combine_reduce(em: Emitter, node: Node) -> None:
    """A balanced tree of in-order combines along the axis, in place: at step ``s`` position
    ``r`` (a multiple of ``2s``) takes ``buf[r] . buf[r + s]``, so ``(x0 . x1) . (x2 . x3)``...
    Of a tuple of operands every buffer moves together; the node reads back its own result."""
    assert isinstance(node.attr, CombineAttr)
    x = node.args[0]
    outer, n, inner = _extents(x, node.attr.axis)

    def run() -> list[str]:
        bufs = [em.stage(a) for a in node.args]
        fn = _combine_fn(em, node.regions[0])
        step = 1
        while step < n:
            lanes = outer * inner
            with em.strided(f"{lanes * (n // (2 * step))}u") as item:
                em.line(f"const unsigned oi = {item} % {lanes}u, r = {item} / {lanes}u * {2 * step}u;")
                em.line(f"const unsigned at = (oi / {inner}u * {n}u + r) * {inner}u + oi % {inner}u;")
                here = [f"{b}[at]" for b in bufs]
                em.line(_call(fn, here, [f"{b}[at + {step * inner}u]" for b in bufs], here))
            em.line("__syncthreads();")
            step *= 2
        return bufs

    buffer = _combined(em, node, run)[node.attr.index]
    _read_back(em, node, buffer, f"({{0}} / {inner}u * {n * inner}u + {{0}} % {inner}u)")


@emits(Op.COMBINE_SCAN)
def _combine_scan(em: Emitter, node: Node) -> None:
    """Hillis-Steele with two buffers an operand: at distance ``d`` each element combines with
    the one ``d`` earlier (later when reversed), the earlier one in scan order on the left."""
    assert isinstance(node.attr, CombineAttr) and node.attr.axis is not None
    x = node.args[0]
    _, n, inner = _extents(x, node.attr.axis)
    reverse = node.attr.reverse

    def run() -> list[str]:
        current = [em.stage(a) for a in node.args]
        spare = [em.scratch(a.ty.dtype, a.ty.numel) for a in node.args]
        fn = _combine_fn(em, node.regions[0])
        distance = 1
        while distance < n:
            with em.strided(f"{x.ty.numel}u") as item:
                em.line(f"const unsigned r = {item} / {inner}u % {n}u;")
                has, partner = (f"r + {distance}u < {n}u", f"{item} + {distance * inner}u") if reverse else (
                    f"r >= {distance}u", f"{item} - {distance * inner}u")
                mine, into = [f"{b}[{item}]" for b in current], [f"{b}[{item}]" for b in spare]
                copy = " ".join(f"{t} = {v};" for t, v in zip(into, mine))
                em.line(f"if ({has}) {_call(fn, [f'{b}[{partner}]' for b in current], mine, into)} else {{ {copy} }}")
            em.line("__syncthreads();")
            current, spare = spare, current
            distance *= 2
        return current

    _read_back(em, node, _combined(em, node, run)[node.attr.index])
