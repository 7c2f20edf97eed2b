"""Async copies into shared memory (``cp.async``, or bulk tensor copies: codegen/tma.py) and
software-pipelined ``for`` loops.

An ``ASYNC_COPY`` outside a pipelined loop copies and waits at once (a conversion to shared
memory without the trip through registers). In a loop marked with ``stages`` (passes/pipeline.py)
each copy gets a ring of ``stages`` buffers: the prologue issues iterations ``0 .. stages-2``,
and each iteration waits for its own copies (cp.async groups; a bulk copy's mbarrier phase),
then issues those of iteration ``i + stages - 1`` into the buffer the previous iteration
finished reading: after the body's in-place wgmma accumulation, else under its first wgmma.
The loop counts its trips once before the prologue (``tl::trip_count``), which the prologue's
tests read where ``lo + k * step < hi`` could overflow. A step of 1 keeps C's own loop, which cannot wrap, and tests whether an iteration
ahead runs by the unsigned distance to the bound; another step counts the trips left, as a plain
loop does (codegen/control.py): neither the index nor a test of an index ahead can wrap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from tile_lang.compiler.ir import Blocked, Computed, ConstAttr, MemAttr, Mma, Node, Op, Region, Shared, carried_steps

from tile_lang_cupy.codegen import tma
from tile_lang_cupy.codegen.carried import carry, counted_head, trip_type, yield_values
from tile_lang_cupy.codegen.ctypes_ import ctype, literal
from tile_lang_cupy.codegen.emitter import (
    SCALAR, Emitter, Held, Index, coords_of, emits, flat_index, index_function, shared_align, shared_numel,
    shared_offset,
)


def _slot_elements(node: Node) -> int:
    assert isinstance(node.layout, Shared)
    return shared_numel(node.layout, node.ty.shape)


def _copy_layout(em: Emitter, copy: Node) -> Blocked:
    """How ``issue`` deals ``copy``'s runs of ``vector`` elements to the threads."""
    assert isinstance(copy.attr, MemAttr)
    width, numel = copy.attr.vector, copy.ty.numel
    used = min(em.fn.threads, numel // width)
    return Blocked(used, width, numel // (used * width))


@contextmanager
def _walk_copy(em: Emitter, copy: Node) -> Iterator[Index]:
    """A loop over the first element of each of this thread's runs of ``copy``, in the order
    ``issue`` copies them: a copy into a transposed layout walks the reversed shape, so its runs
    go down the first dimension (``Index.transposed``; ``k`` counts its runs as ``issue``'s do)."""
    assert isinstance(copy.attr, MemAttr) and isinstance(copy.layout, Shared)
    lay, flip = _copy_layout(em, copy), copy.layout.transposed
    with em.walk(lay, copy.ty.shape[::-1] if flip else copy.ty.shape, copy.attr.vector) as walked:
        yield Index(walked.k, walked.coords[::-1], walked.flat, lay, True) if flip else walked


@dataclass(frozen=True)
class Runs:
    """Where this thread's runs of a copy go in its shared buffer, computed once before the loop:
    ``name`` plus ``step`` elements a run when the layout allows (a swizzle repeats every 8 rows,
    so runs 8 rows apart move by a constant), else ``name[k]``, an array of each run's offset."""

    name: str
    step: int | None


def issue(em: Emitter, copy: Node, dst: str, runs: Runs | None = None) -> None:
    """This thread's ``cp.async`` instructions for ``copy`` into the shared buffer ``dst``
    (``runs``: where they go, computed once by ``_hoist``)."""
    assert isinstance(copy.attr, MemAttr) and isinstance(copy.layout, Shared)
    width = copy.attr.vector
    lay = _copy_layout(em, copy)
    used = lay.threads
    ptr = copy.args[0]
    mask = copy.args[1] if copy.attr.has_mask else None
    nbytes = width * copy.ty.dtype.itemsize
    with _walk_copy(em, copy) as idx:
        if runs is None:
            at = f"{dst}[{shared_offset(copy.layout, idx.coords, copy.ty.shape, copy.ty.dtype.itemsize)}]"
        elif runs.step is None:
            at = f"{dst}[{runs.name}[k]]"
        else:  # one register a copy: ptxas folds each run's constant into the instruction
            at = f"({dst} + {runs.name})[k / {width} * {runs.step}]"
        pred = em.elem(mask, idx) if mask is not None else "true"
        stmt = f"tl::cp_async<{nbytes}>(&{at}, {em.elem(ptr, idx)}, {pred});"
        em.line(stmt if used == em.fn.threads else f"if (tid < {used}u) {stmt}")


@emits(Op.ASYNC_COPY)
def _async_copy(em: Emitter, node: Node) -> None:
    if node in em.names:
        return  # a pipelined loop has issued it and named its buffer
    t = ctype(node.ty.dtype)
    name = em.name(node, "s")
    assert isinstance(node.layout, Shared)
    offset = em.shared(_slot_elements(node) * node.ty.dtype.itemsize, shared_align(node.layout))
    em.line(f"{t}* {name} = reinterpret_cast<{t}*>(tl_smem + {offset});")
    em.line("__syncthreads();")  # earlier readers of this buffer (in a loop) are done
    if tma.is_bulk(node):
        map_, bar = tma.tensor_map(em, node), tma.barriers(em, 1)
        em.line("tl::fence_proxy_async();")  # earlier ordinary stores to these bytes come before the copy's
        em.line("__syncthreads();")
        tma.acquire(em, [map_])
        tma.issue(em, {node: (map_, name)}, bar)
        em.line(f"tl::mbar_wait({bar}, 0u);")
        em.line("__syncthreads();")
        tma.release(em, bar, 1)
    else:
        issue(em, node, name)
        em.line("tl::cp_async_commit();")
        em.line("tl::cp_async_wait<0>();")
        em.line("__syncthreads();")
    # wgmma reads what cp.async wrote after its wait and a barrier, with no proxy fence: only
    # stores from registers need one (Triton's fence insertion makes the same distinction)
    em.fenced.add(node)


@contextmanager
def _ahead(em: Emitter, loop: Node, start: str, count: int) -> Iterator[None]:
    """Evaluate expressions ``count`` iterations after the one whose induction variable is
    ``start``: the induction variable and the carried scalars stand for their later values (a
    carried scalar advances by its step each iteration), and the body's scalars in between are
    recomputed inline from them."""
    body = loop.regions[0]
    saved = dict(em.names)
    for node in body.body:
        em.names.pop(node, None)
        if node.op is Op.CONST and isinstance(node.attr, ConstAttr):
            em.names[node] = literal(node.attr.value, node.ty.dtype)
    steps = carried_steps(loop)
    advanced = {param: f"({saved[param]} + {count} * ({em.elem(amount, SCALAR)}))" for param, amount in steps.items()}
    em.names[body.params[0]] = _index_ahead(em, loop, start, count)
    em.names.update(advanced)
    try:
        yield
    finally:
        em.names.clear()
        em.names.update(saved)


def _index_ahead(em: Emitter, loop: Node, start: str, count: int) -> str:
    """The index ``count`` trips after the index ``start``, for a trip that runs (so in the
    index's range): in the index's type, or where ``count`` steps pass that type's range, in its
    unsigned type, whose wrapped sum converts back to the exact value."""
    iv, step = loop.regions[0].params[0], loop.args[2]
    assert isinstance(step.attr, ConstAttr)  # passes/pipeline.py pipelines a positive constant step
    s = em.elem(step, SCALAR)
    if count * int(step.attr.value) < 2 ** (iv.ty.dtype.bits - 1):
        return f"({start} + {count} * ({s}))"
    t, u = ctype(iv.ty.dtype), trip_type(iv)
    return f"(({t})(({u})({start}) + {count}u * ({u})({s})))"


def pipelined_for(em: Emitter, node: Node, stages: int) -> None:
    """The loop with its copies ``stages - 1`` iterations ahead (see the module docstring). Its
    rings, and whatever the body reserves, are free for the code after it (an epilogue staging
    the accumulators reuses them)."""
    with em.shared_scope():
        _pipelined_for(em, node, stages)


def _pipelined_for(em: Emitter, node: Node, stages: int) -> None:
    lower, upper, step, *inits = node.args
    body: Region = node.regions[0]
    iv, *params = body.params
    names = carry(em, node, tuple(params), tuple(inits))
    copies = [n for n in body.body if n.op is Op.ASYNC_COPY]
    rings: dict[Node, Ring] = {}
    held = dict(em.hoisted)
    em.fenced.update(copies)  # see _async_copy
    for copy in copies:
        t, size = ctype(copy.ty.dtype), _slot_elements(copy)
        buffers = em.fresh("ring")
        assert isinstance(copy.layout, Shared)
        offset = em.shared(stages * size * copy.ty.dtype.itemsize, shared_align(copy.layout))
        em.line(f"{t}* {buffers} = reinterpret_cast<{t}*>(tl_smem + {offset});")
        bulk = tma.is_bulk(copy)
        rings[copy] = Ring(buffers, size, None if bulk else _hoist(em, copy, body), tma.tensor_map(em, copy) if bulk else None)
    bars = tma.barriers(em, stages) if any(r.map for r in rings.values()) else None
    lo, hi = em.elem(lower, SCALAR), em.elem(upper, SCALAR)
    exact = _prologue_exact(lower, step, iv, stages)
    trips = None if exact and step.attr == ConstAttr(1) else _trips(em, iv, lo, hi, step)
    if bars is not None:
        em.line("tl::fence_proxy_async();")  # ordinary stores to the rings' bytes come before the copies'
    em.line("__syncthreads();")  # the rings may reuse memory earlier code (an earlier loop's epilogue) still reads
    if bars is not None:
        tma.acquire(em, [r.map for r in rings.values() if r.map is not None])
    for ahead in range(stages - 1):
        with _ahead(em, node, lo, ahead):
            with em.block(f"if ({em.names[iv]} < {hi})" if exact else f"if ({trips} > {ahead}u)"):
                _issue_all(em, rings, f"{ahead}u", bars)
        if _cp_async(rings):
            em.line("tl::cp_async_commit();")
    slot, phase = em.fresh("slot"), em.fresh("phase")
    em.line(f"unsigned {slot} = 0u;")
    if bars is not None:
        em.line(f"unsigned {phase} = 0u;")
    head, index, runs = _head(em, iv, lo, hi, step, trips)
    accumulators = _async_accumulators(em, body, names)
    with ExitStack() as guard:
        if accumulators:  # ptxas serialises every wgmma if a zero-trip path joins before the last wait
            guard.enter_context(em.block(f"if ({lo} < {hi})"))
        with em.block(head):
            if index:
                em.line(index)
            if _cp_async(rings):
                em.line(f"tl::cp_async_wait<{stages - 2}>();")
            if bars is not None:
                em.line(f"tl::mbar_wait({bars} + {slot}, {phase});")
            em.line("__syncthreads();")  # this iteration's operands landed; the previous one's reads are done
            for copy, ring in rings.items():
                em.names[copy] = f"({ring.name} + {slot} * {ring.size}u)"
                em.slots[copy] = (ring.name, slot, ring.size)
            if accumulators:  # the previous iteration's wgmma may still read its buffers until the body waits
                em.region(body)
                em.line("__syncthreads();")  # every warpgroup's previous wgmma is done: its buffers are free
                _prefetch(em, node, rings, bars, runs, slot, stages)
            else:  # the copies are issued while the body's first wgmma runs
                _under_first_wgmma(em, body, lambda: _prefetch(em, node, rings, bars, runs, slot, stages))
            yield_values(em, tuple(params), body.results, names)
            if bars is not None:  # each pass over the ring completes one phase of each barrier
                em.line(f"{phase} ^= {slot} + 1u == {stages}u ? 1u : 0u;")
            em.line(f"{slot} = {slot} + 1u == {stages}u ? 0u : {slot} + 1u;")
        if accumulators:
            em.line("tl::wgmma_wait<0>();")
            for name, per_thread in accumulators:
                em.line(f"tl::fence_registers<{per_thread}>({name});")
    if _cp_async(rings):
        em.line("tl::cp_async_wait<0>();")
    em.line("__syncthreads();")
    if bars is not None:
        tma.release(em, bars, stages)
    em.hoisted = held  # the registers go out of scope with the enclosing block


def _prologue_exact(lower: Node, step: Node, iv: Node, stages: int) -> bool:
    """Whether the prologue's ``lo + k * step < hi`` cannot overflow: a constant ``lo`` and step
    whose largest sum fits the index's type. (Testing the trip count instead cost the benchmark
    matmul 2 registers, 184 to 186: ptxas allocates differently.)"""
    assert isinstance(step.attr, ConstAttr)  # passes/pipeline.py pipelines a positive constant step
    return (lower.op is Op.CONST and isinstance(lower.attr, ConstAttr)
            and int(lower.attr.value) + (stages - 2) * int(step.attr.value) < 2 ** (iv.ty.dtype.bits - 1))


def _trips(em: Emitter, iv: Node, lo: str, hi: str, step: Node) -> str:
    """The name of the loop's trip count, computed once before the prologue."""
    trips, u = em.fresh("trips"), trip_type(iv)
    em.line(f"const {u} {trips} = tl::trip_count<{u}, {ctype(iv.ty.dtype)}>({lo}, {hi}, {em.elem(step, SCALAR)});")
    return trips


def _head(em: Emitter, iv: Node, lo: str, hi: str, step: Node, trips: str | None) -> tuple[str, str, Callable[[int], str]]:
    """The loop's head, the body's line declaring the index where the head does not, and the test
    of whether the iteration ``k`` trips after the current one runs. A step of 1 is C's loop and
    the test ``hi - i > k`` in the unsigned type (exact: ``i < hi``), as cheap as ``i + k < hi``
    and no more registers (the benchmark matmul's 184 became 188 counted); another step counts."""
    u, i, s = trip_type(iv), em.name(iv, "i"), em.elem(step, SCALAR)
    assert isinstance(step.attr, ConstAttr)  # passes/pipeline.py pipelines a positive constant step
    if step.attr.value == 1:
        return (f"for ({ctype(iv.ty.dtype)} {i} = {lo}; {i} < {hi}; {i} += {s})", "",
                lambda k: f"({u})({hi}) - ({u})({i}) > {k}u")
    assert trips is not None
    head, index, left = counted_head(em, iv, lo, s, trips)
    return head, index, lambda k: f"{left} > {k}u"


def _under_first_wgmma(em: Emitter, body: Region, prefetch: Callable[[], None]) -> None:
    """The loop body with ``prefetch`` emitted between the commit and the wait of its first wgmma
    dot that runs every iteration (one directly in the body, not in a branch or an inner loop,
    where the copies would be issued conditionally or repeatedly), or before the body when it has
    none. Under the wgmma the copies' issue overlaps the tensor cores' work (a bulk copy's single
    issuing thread no longer holds its warpgroup at the wgmma) and their address registers are
    not live across it: attention d=64 causal went from 210 and 190 registers a thread (pointer
    and descriptor forms) to 168, three blocks an SM instead of two."""
    first = next((n for n in body.body if n.op is Op.DOT and isinstance(n.layout, Mma)
                  and isinstance(n.args[1].layout, Shared) and n.args[1].layout.swizzle), None)
    if first is None:
        prefetch()
        em.region(body)
        return
    em.under_wgmma = (first, prefetch)
    em.region(body)
    assert em.under_wgmma is None, "the body's wgmma did not issue the copies"


@dataclass(frozen=True)
class Ring:
    """A pipelined copy's ``stages`` buffers of ``size`` elements, with where this thread's
    ``cp.async`` runs go (``runs``) or, for a bulk copy, its tensor map (``map``)."""

    name: str
    size: int
    runs: Runs | None
    map: str | None


def _cp_async(rings: dict[Node, Ring]) -> bool:
    return any(r.map is None for r in rings.values())


def _issue_all(em: Emitter, rings: dict[Node, Ring], slot: str, bars: str | None) -> None:
    """Every copy of one iteration into the ring buffers of ``slot``; the bulk ones complete on
    that slot's barrier."""
    bulk = {}
    for copy, ring in rings.items():
        dst = f"({ring.name} + {slot} * {ring.size}u)"
        if ring.map is None:
            issue(em, copy, dst, ring.runs)
        else:
            bulk[copy] = (ring.map, dst)
    if bulk:
        assert bars is not None
        tma.issue(em, bulk, f"{bars} + {slot}")


def _hoist(em: Emitter, copy: Node, body: Region) -> Runs:
    """Hold in registers, before the loop, what this thread's copies compute alike in every
    iteration: where each run goes in its shared buffer and, for a copy marked ``hold``
    (passes/pipeline.py), the pointer blocks from before the loop its source addresses add up
    from. Registers instead of the swizzle and 64-bit address arithmetic each iteration."""
    layout = copy.layout
    assert isinstance(layout, Shared) and isinstance(copy.attr, MemAttr)
    flip = layout.transposed  # walked column by column (see ``issue``)
    inside = set(body.body) | set(body.params)
    lay = _copy_layout(em, copy)
    shape, itemsize = copy.ty.shape, copy.ty.dtype.itemsize
    walked = shape[::-1] if flip else shape

    def offset(coords: tuple[str, ...]) -> str:
        return shared_offset(layout, coords[::-1] if flip else coords, shape, itemsize)

    offsets = em.fresh("at")
    step = _run_step(offset, lay, walked)
    if step is None:
        em.line(f"unsigned {offsets}[{lay.per_thread}];")
        with em.walk(lay, walked, lay.vector) as idx:
            em.line(f"{offsets}[k] = {offset(idx.coords)};")
    else:
        flat = em.fresh("f")
        em.line(f"const unsigned {flat} = {flat_index(lay, walked, '0u')};")
        em.line(f"const unsigned {offsets} = {offset(coords_of(flat, walked))};")
    if not copy.attr.hold:
        return Runs(offsets, step)  # its source addresses are read at coordinates, not as registers
    ptr = copy.args[0]
    stack, seen = [ptr], set()
    while stack:
        node = stack.pop()
        if node in seen or node.ty.is_scalar or not isinstance(node.layout, Computed):
            continue
        seen.add(node)
        if node in inside:
            stack.extend(node.args)
        elif node.ty.dtype.element is not None and node not in em.hoisted:
            name = em.fresh("at")
            em.line(f"{ctype(node.ty.dtype)} {name}[{lay.per_thread}];")
            with _walk_copy(em, copy) as idx:
                em.line(f"{name}[k] = {em.elem(node, idx)};")
            em.hoisted[node] = Held(name, lay, flip)
    return Runs(offsets, step)


def _run_step(offset: Callable[[tuple[str, ...]], str], lay: Blocked, shape: tuple[int, ...]) -> int | None:
    """The distance in elements between a thread's successive runs in its shared buffer (``offset``
    of the walked coordinates) when it is the same for every thread and run, else None."""
    names = tuple(f"x{d}" for d in range(len(shape)))
    at_coords = index_function(offset(names), names)

    def at(thread: int, run: int) -> int:
        flat, coords = (run * lay.threads + thread) * lay.vector, []  # ``tl::flat``'s order
        for size in reversed(shape):
            flat, c = divmod(flat, size)
            coords.append(c)
        return at_coords(*reversed(coords))

    step = at(0, 1) - at(0, 0) if lay.reps > 1 else 0
    linear = all(at(t, r) == at(t, 0) + r * step for t in range(lay.threads) for r in range(lay.reps))
    return step if linear and step >= 0 else None


def _prefetch(em: Emitter, loop: Node, rings: dict[Node, Ring], bars: str | None, runs: Callable[[int], str],
              slot: str, stages: int) -> None:
    """Issue the copies of iteration ``i + stages - 1`` into the buffers its slot names, when that
    iteration runs (``runs``: the test, see ``_head``; a branch around the copies: folding the
    test into every copy's predicate measured slower where they have masks of their own)."""
    with _ahead(em, loop, em.names[loop.regions[0].params[0]], stages - 1):
        with em.block(f"if ({runs(stages - 1)})"):
            _issue_all(em, rings, f"(({slot} + {stages - 1}u) % {stages}u)", bars)
    if _cp_async(rings):
        em.line("tl::cp_async_commit();")


def _wgmma_operands(dot: Node) -> bool:
    """Whether ``dot`` runs on wgmma: B swizzled in shared memory, A too or in registers."""
    a, b = dot.args[:2]
    swizzled = isinstance(b.layout, Shared) and bool(b.layout.swizzle)
    return swizzled and (not isinstance(a.layout, Shared) or bool(a.layout.swizzle))


def _async_accumulators(em: Emitter, body: Region, names: list[str]) -> list[tuple[str, int]]:
    """The wgmma dots of the loop that accumulate into a carried value only (``acc = tl.dot(a, b,
    acc)``): they write the carried registers in place and run on while the next iteration
    starts (wgmma's wait for the group before last). Their (variable, registers per thread)."""
    found = []
    params = body.params[1:]
    for dot in body.body:
        if dot.op is not Op.DOT or not _wgmma_operands(dot):
            continue
        acc = dot.args[2]
        if acc not in params or em.uses.get(dot) != 1:
            continue
        index = params.index(acc)
        if body.results[index] is dot and em.uses.get(acc) == 1:
            em.inplace[dot] = names[index]
            found.append((names[index], em.layout(dot).per_thread))
    return found
