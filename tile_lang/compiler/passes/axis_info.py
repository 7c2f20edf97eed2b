"""Axis info (Triton's AxisInfo): per dimension, how long runs of consecutive values are
(contiguity), runs of equal values (constancy), and the power of two dividing each run's first
value (divisibility; in bytes for pointers); and whether an int is known not to be negative.
Drives vector widths of loads and stores."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from tile_lang.compiler.ir import (
    BinaryAttr, BinaryFn, CastAttr, ConstAttr, Function, HintAttr, Node, Op, ParamAttr, PermuteAttr, RangeAttr, constant,
    walk,
)
from tile_lang.dtypes import Kind

MAX_DIV = 1 << 30


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    nonnegative: bool = False  # every element >= 0 (ints; overflow aside, which the reference reports)

    def __str__(self) -> str:
        sign = " >=0" if self.nonnegative else ""
        return f"contig={list(self.contiguity)} div={list(self.divisibility)} const={list(self.constancy)}{sign}"


def _pow2_divisor(value: int) -> int:
    return MAX_DIV if value == 0 else min(MAX_DIV, value & -value)


def _dims(node: Node) -> tuple[int, ...]:
    return node.ty.shape or (1,)  # scalars are analysed as one-element blocks


def _unknown(node: Node) -> AxisInfo:
    ones = tuple(1 for _ in _dims(node))
    return AxisInfo(ones, ones, ones)


def _uniform(node: Node, div: int) -> AxisInfo:
    dims = _dims(node)
    return AxisInfo(tuple(1 for _ in dims), tuple(div for _ in dims), dims)


def analyze(fn: Function) -> dict[Node, AxisInfo]:
    """Axis info of every valued node. A scalar a ``for`` loop carries and advances by a step
    (``offset + step``) is divisible by what divides its start and its step, found by a second
    pass once the step is known; other loop-carried values are unknown."""
    seeds: dict[Node, AxisInfo] = {}
    for _attempt in range(3):
        info = _analyze(fn, seeds)
        found = _carried_steps(fn, info)
        if found == seeds:
            break
        seeds = found
    return info


def _analyze(fn: Function, seeds: dict[Node, AxisInfo]) -> dict[Node, AxisInfo]:
    info: dict[Node, AxisInfo] = dict(seeds)
    for p in fn.params:
        assert isinstance(p.attr, ParamAttr)
        info[p] = replace(_uniform(p, p.attr.divisibility), nonnegative=p.attr.nonnegative or _unsigned(p))
    for node in walk(fn.body):  # a loop comes before its region's parameters
        if node.op is Op.FOR:
            _induction(node, info)
        if node.type is not None and node not in info:
            info[node] = _infer(node, info)
    return info


def _carried_steps(fn: Function, info: dict[Node, AxisInfo]) -> dict[Node, AxisInfo]:
    seeds: dict[Node, AxisInfo] = {}
    for loop in walk(fn.body):
        if loop.op is not Op.FOR:
            continue
        body = loop.regions[0]
        for param, init, out in zip(body.params[1:], loop.args[3:], body.results):
            if not param.ty.is_scalar or not param.ty.dtype.is_int or out.op is not Op.BINARY:
                continue
            if not isinstance(out.attr, BinaryAttr) or out.attr.fn is not BinaryFn.ADD or out.args[0] is not param:
                continue
            step, start = info.get(out.args[1]), info.get(init)
            if step is not None and start is not None:
                seeds[param] = _stepped(param, start, step)
    return seeds


def _stepped(node: Node, start: AxisInfo, step: AxisInfo) -> AxisInfo:
    """start, start + step, ...: divisible by what divides both, and not negative if neither is."""
    return replace(_uniform(node, min(start.divisibility[0], step.divisibility[0])),
                   nonnegative=start.nonnegative and step.nonnegative)


def _induction(loop: Node, info: dict[Node, AxisInfo]) -> None:
    """A for loop's induction variable is start, start + step, ...: every value is divisible by
    what divides both (Triton's rule), e.g. ``range(0, n, BLOCK)`` keeps 128-bit accesses."""
    start, step = (info.get(loop.args[i]) for i in (0, 2))
    iv = loop.regions[0].params[0]
    if start is not None and step is not None:
        info[iv] = _stepped(iv, start, step)


def _infer(node: Node, info: dict[Node, AxisInfo]) -> AxisInfo:
    facts = _runs(node, info)
    return replace(facts, nonnegative=True) if _nonnegative(node, info) else facts


def _unsigned(node: Node) -> bool:
    return node.ty.dtype.is_int and node.ty.dtype.kind is Kind.UINT


def _nonnegative(node: Node, info: dict[Node, AxisInfo]) -> bool:
    """Whether an int node is >= 0 by construction: program ids, aranges, non-negative constants
    and parameters, and what +, *, //, %, min, max and widening casts make of them. The one
    assumption: a divisor of unknown sign is positive (Triton's grouped-tile preamble divides by
    ``min(num_m - first_m, GROUP_M)``); a negative one would make a negative tile index, which
    the reference reports as an out-of-bounds access long before it could vectorise wrongly."""
    if not node.ty.dtype.is_int:
        return False
    if _unsigned(node) or node.op in (Op.PROGRAM_ID, Op.NUM_PROGRAMS):
        return True
    if node.op is Op.CONST:
        return isinstance(node.attr, ConstAttr) and node.attr.value >= 0
    if node.op is Op.ARANGE:
        return isinstance(node.attr, RangeAttr) and node.attr.start >= 0
    args = [info[a].nonnegative for a in node.args if a in info]
    if node.op in (Op.SPLAT, Op.BROADCAST, Op.RESHAPE, Op.PERMUTE, Op.HINT):
        return args[0]
    if node.op is Op.CAST and isinstance(node.attr, CastAttr) and node.args[0].ty.dtype.is_int:
        src, dst = node.args[0].ty.dtype, node.ty.dtype  # narrowing, or u32 -> i32, can wrap below 0
        return args[0] and (dst.itemsize > src.itemsize or (dst.itemsize == src.itemsize and src.is_signed))
    if node.op is Op.WHERE:
        return all(args[1:])
    if node.op is Op.BINARY and isinstance(node.attr, BinaryAttr):
        fn = node.attr.fn
        if fn in (BinaryFn.ADD, BinaryFn.MUL, BinaryFn.MIN, BinaryFn.OR, BinaryFn.XOR):
            return all(args)
        if fn in (BinaryFn.MOD, BinaryFn.SHR):  # C's remainder takes the dividend's sign
            return args[0]
        if fn is BinaryFn.DIV:  # a divisor is taken as positive unless it is a negative constant
            divisor = constant(node.args[1])
            return args[0] and not (isinstance(divisor, int) and divisor < 0)
        if fn in (BinaryFn.MAX, BinaryFn.AND):
            return any(args)
    return False


def _runs(node: Node, info: dict[Node, AxisInfo]) -> AxisInfo:
    if node.op is Op.CONST and isinstance(node.attr, ConstAttr) and isinstance(node.attr.value, int):
        return _uniform(node, _pow2_divisor(int(node.attr.value)))
    if node.op is Op.ARANGE and isinstance(node.attr, RangeAttr):
        n = node.ty.shape[0]
        return AxisInfo((n,), (_pow2_divisor(node.attr.start),), (1,))
    if node.op is Op.SPLAT:
        return _uniform(node, info[node.args[0]].divisibility[0])
    if node.op is Op.BROADCAST:
        return _broadcast(node, info[node.args[0]])
    if node.op is Op.RESHAPE:
        return _reshape(node, info[node.args[0]])
    if node.op is Op.PERMUTE and isinstance(node.attr, PermuteAttr):
        src, dims = info[node.args[0]], node.attr.dims
        return AxisInfo(tuple(src.contiguity[d] for d in dims), tuple(src.divisibility[d] for d in dims),
                        tuple(src.constancy[d] for d in dims))
    if node.op is Op.CAST and node.ty.dtype.is_int and node.args[0].ty.dtype.is_int:
        return info[node.args[0]]
    if node.op is Op.BINARY and isinstance(node.attr, BinaryAttr):
        return _binary(node, node.attr.fn, info[node.args[0]], info[node.args[1]])
    if node.op is Op.WHERE:
        const = _gcds(*(info[a].constancy for a in node.args))
        return AxisInfo(tuple(1 for _ in const), tuple(1 for _ in const), const)
    if node.op is Op.HINT and isinstance(node.attr, HintAttr):
        return _promised(node, node.attr, info)
    return _unknown(node)


def _promised(node: Node, hint: HintAttr, info: dict[Node, AxisInfo]) -> AxisInfo:
    """What a hint adds to the facts derived: per axis the larger run or divisor, in powers of two
    within the axis. ``multiple_of`` promises (as the reference checks it) that each value not
    following its predecessor by 1 is a multiple: so each run of ``c`` known consecutive values
    starts at a multiple of the promise or ``c`` past one, a multiple of the smaller (values of no
    known runs may still follow their predecessors, and gain nothing until ``max_contiguous`` makes
    runs of them, tutorial 09's order). A pointer's divisibility (bytes of its address) keeps what
    its argument's alignment and the offsets give: the reference checks ``multiple_of`` on the byte
    offset from the argument, so the promise says nothing of the address itself."""
    src = info[node.args[0]]
    promised = tuple(_pow2_divisor(v) for v in hint.values)
    if hint.kind == "multiple_of":
        return src if node.ty.dtype.is_pointer else _multiple(src, promised, src.contiguity, _dims(node))
    within = tuple(min(v, n) for v, n in zip(promised, _dims(node)))
    if hint.kind == "max_contiguous":
        runs = replace(src, contiguity=tuple(max(c, v) for c, v in zip(src.contiguity, within)))
        inner = node.args[0]
        if inner.op is Op.HINT and isinstance(inner.attr, HintAttr) and inner.attr.kind == "multiple_of" \
                and not inner.ty.dtype.is_pointer:
            multiples = tuple(_pow2_divisor(v) for v in inner.attr.values)
            known = replace(runs, divisibility=info[inner.args[0]].divisibility)
            return _multiple(known, multiples, runs.contiguity, _dims(node))
        return runs
    return replace(src, constancy=tuple(max(c, v) for c, v in zip(src.constancy, within)))


def _multiple(src: AxisInfo, promised: tuple[int, ...], runs: tuple[int, ...], dims: tuple[int, ...]) -> AxisInfo:
    """``src`` with each axis's divisor raised to the promised multiple, at most its runs' length;
    the whole promise where every element is checked: an axis of one element (a scalar) or of
    constant groups (an element equal to its predecessor does not continue it)."""
    def raised(d: int, v: int, c: int, k: int, n: int) -> int:
        return max(d, v if n == 1 or k > 1 else min(v, c))
    return replace(src, divisibility=tuple(map(raised, src.divisibility, promised, runs, src.constancy, dims)))


def _gcds(*columns: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.gcd(*vals) for vals in zip(*columns))


def _broadcast(node: Node, src: AxisInfo) -> AxisInfo:
    cont, div, const = [], [], []
    for d, (s, t) in enumerate(zip(node.args[0].ty.shape, node.ty.shape)):
        expanded = s == 1 and t != 1
        cont.append(1 if expanded else src.contiguity[d])
        div.append(src.divisibility[d])
        const.append(t if expanded else src.constancy[d])
    return AxisInfo(tuple(cont), tuple(div), tuple(const))


def _reshape(node: Node, src: AxisInfo) -> AxisInfo:
    """Inserting or removing unit dimensions keeps the facts of the others. Along a unit
    dimension every element starts a run, so its divisibility is what divides every element
    (Triton's rule for expand_dims): 1 if the source has runs of consecutive values."""
    real = [(c, v, k) for c, v, k, s in zip(src.contiguity, src.divisibility, src.constancy,
                                              node.args[0].ty.shape or (1,)) if s != 1]
    if [s for s in node.args[0].ty.shape if s != 1] != [s for s in node.ty.shape if s != 1]:
        return _unknown(node)
    every = math.gcd(*(1 if c > 1 else v for c, v in zip(src.contiguity, src.divisibility)))
    it = iter(real)
    rows = [next(it) if s != 1 else (1, every, 1) for s in _dims(node)]  # a scalar as a one-element block
    return AxisInfo(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows))


def _binary(node: Node, fn: BinaryFn, a: AxisInfo, b: AxisInfo) -> AxisInfo:
    const = _gcds(a.constancy, b.constancy)
    ones = tuple(1 for _ in const)
    if fn is BinaryFn.ADD or fn is BinaryFn.SUB:
        scale = node.ty.dtype.element.itemsize if node.ty.dtype.is_pointer and node.ty.dtype.element else 1
        b_div = tuple(min(MAX_DIV, d * scale) for d in b.divisibility)
        cont = tuple(max(math.gcd(ca, kb), math.gcd(ka, cb) if fn is BinaryFn.ADD else 1)
                     for ca, kb, ka, cb in zip(a.contiguity, b.constancy, a.constancy, b.contiguity))
        return AxisInfo(cont, _gcds(a.divisibility, b_div), const)
    if fn is BinaryFn.MUL:
        for i, other in ((0, b), (1, a)):  # times 1 (a stride specialised to 1): the other operand's facts
            if constant(node.args[i]) == 1 and not node.ty.dtype.is_float:
                return AxisInfo(other.contiguity, other.divisibility, _gcds(other.constancy, const))
        # the product has no runs, so its divisibility holds for every element: a factor with
        # runs (x0, x0 + 1, ...) contributes 1, not what divides x0 (Triton's rule)
        div = tuple(min(MAX_DIV, (1 if ca > 1 else da) * (1 if cb > 1 else db))
                    for ca, da, cb, db in zip(a.contiguity, a.divisibility, b.contiguity, b.divisibility))
        return AxisInfo(ones, div, const)
    if fn.is_comparison:
        # x, x+1, ... against a value constant over the run: `x < b` and `x >= b` are equal over
        # runs of the length both sides are aligned to (why Triton specialises ints divisible by
        # 16). `x <= b`, `x > b`, `==` and `!=` change at x == b, the first value of such a run.
        # `n > x` is `x < n` and `n <= x` is `x >= n`: the same runs with the operands swapped
        x, bound = (a, b) if fn is BinaryFn.LT or fn is BinaryFn.GE else (b, a)
        aligned = fn in (BinaryFn.LT, BinaryFn.GE, BinaryFn.GT, BinaryFn.LE)
        run = tuple(math.gcd(cx, dx, dn) if aligned and kn >= cx else 1
                    for cx, dx, dn, kn in zip(x.contiguity, x.divisibility, bound.divisibility, bound.constancy))
        return AxisInfo(ones, ones, tuple(max(k, r) for k, r in zip(const, run)))
    if fn is BinaryFn.MOD and node.ty.dtype.is_int:
        return _mod(a, b, const)
    if fn is BinaryFn.DIV and node.ty.dtype.is_int:
        return AxisInfo(ones, _exact_quotient(a, constant(node.args[1])), const)
    return AxisInfo(ones, ones, const)


def _exact_quotient(a: AxisInfo, divisor: object) -> tuple[int, ...]:
    """What divides ``x // c`` for a constant power of two c (Triton's rule): a multiple of d
    (d a multiple of c) divides exactly into a multiple of d / c; that holds for every element
    only where x has no runs (``pid_k * (K // SPLIT_K)`` keeps 8-byte accesses)."""
    if not isinstance(divisor, int) or isinstance(divisor, bool) or divisor < 1 or divisor & (divisor - 1):
        return tuple(1 for _ in a.divisibility)
    return tuple(d // divisor if c == 1 and d % divisor == 0 else 1 for d, c in zip(a.divisibility, a.contiguity))


def _mod(a: AxisInfo, b: AxisInfo, const: tuple[int, ...]) -> AxisInfo:
    """``x % m`` (Triton's rule): a run of x that starts at a multiple of ``g``, both x's run
    start and m being multiples of ``g``, holds no multiple of m inside its first ``g``
    values, so it stays consecutive for that long (``(pid_n * BN + arange(BN)) % N`` keeps
    128-bit accesses when N is a multiple of 16). Only for x >= 0: C's remainder of a negative
    x is <= 0 (``-4 % 4, -3 % 4`` are ``0, -3``), so no run survives (Triton assumes x >= 0)."""
    cont, div = [], []
    for ca, da, db, kb in zip(a.contiguity, a.divisibility, b.divisibility, b.constancy):
        run = math.gcd(ca, da, db, kb) if a.nonnegative else 1  # powers of two: the shortest of the four
        cont.append(run)
        div.append(math.gcd(da, db) if ca <= run else run)
    return AxisInfo(tuple(cont), tuple(div), const)
