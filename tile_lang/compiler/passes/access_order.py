"""Barriers between a program's accesses to one element by different threads. The reference runs
a program's accesses in order, lane by lane (a scalar is lane 0), and a lane may re-read or
overwrite what it wrote; on the GPU a lane is the thread holding that element in the layout the
access walks. A scalar store or atomic runs on thread 0, which holds lane 0 of every layout; a
scalar load runs on every thread; a block of one element is accessed as a scalar is (every thread
loads its own copy, thread 0 writes); another block access runs on the threads of its register
layout. So
where two accesses, at least one a write, may touch one element and a lane of one is not on the
thread of the same lane of the other, the later one gets a ``__syncthreads()`` before it unless a
barrier lies between:

- ``tl.store(p, v)`` then ``tl.load(p)``, and ``c = tl.load(p)`` then ``tl.store(p, c + 1)``:
  the other threads read the old value (296 of 1024 lanes on the emulator), or a late one the
  new value;
- ``tl.store(p + offs, x)`` then ``tl.load(p)`` reads what lane 0 wrote, and ``c = tl.load(p)``
  then ``tl.store(p + offs, x)`` must not see it (an in-place ``x / x[0]``: 1020 of 1024 lanes
  divided by the new ``x[0]`` on the emulator);
- a dot result stored from its fragments, then loaded back by rows (``tl.load(c_ptrs)`` in the
  default layout): 420-520 of 1024 elements read stale on the emulator;
- ``x = tl.load(p + tl.arange(0, 1))`` then ``tl.store(p + tl.arange(0, 1), x * 2)``: the other
  threads' copies of ``x`` read the new value (1019 of 1024 lanes of a later ``y * x`` wrong);
- ``y = tl.load(q + offs)`` then ``tl.store(q + (B - 1 - offs), y)``: one layout, but element
  ``q[j]`` is lane ``j`` of the load and lane ``B - 1 - j`` of the store (an in-place reversal:
  most of 1024 elements wrong on the emulator); accesses of one layout are ordered only through
  pointers computed alike, and a scalar write (thread 0) only against another scalar access.

Two accesses may touch one element when their pointers come from the same kernel argument, or
either one's is not known; two scalar accesses always may. Kernels whose accesses agree on their
threads, or touch different arguments, are unchanged (scalar control flow is uniform, so every
thread reaches a barrier placed there)."""

from __future__ import annotations

import enum

from tile_lang.compiler.ir import Function, Node, Op, Region, Registers, held_in, stored_walk, walk
from tile_lang.compiler.passes.rebuild import rewrite


class Threads(enum.Enum):
    """Which threads perform a scalar access: every one (a load), or thread 0 (a write)."""

    EVERY = "every"
    FIRST = "first"


# one access since the last barrier: whether it writes, its pointers' root (None: not known),
# the threads performing it (a block's register layout) and its pointers' expression (equal
# expressions put each element on the same lane)
_Access = tuple[bool, Node | None, Registers | Threads, object]

# operations whose value is a function of their operands and attribute alone
_PURE = frozenset({Op.CONST, Op.PROGRAM_ID, Op.NUM_PROGRAMS, Op.ARANGE, Op.SPLAT, Op.BINARY, Op.UNARY, Op.CAST,
                   Op.WHERE, Op.HINT, Op.BROADCAST, Op.RESHAPE, Op.PERMUTE, Op.CONVERT})
_State = frozenset[_Access]


def order_accesses(fn: Function) -> Function:
    fenced = _unordered(fn)

    def rule(original: Node, node: Node, body: list[Node]) -> Node:
        if original in fenced:  # an access after a loop given a barrier is a new node
            body.append(Node(Op.BARRIER, None, loc=node.loc))
        return node

    return rewrite(fn, rule) if fenced else fn


class _Roots:
    """The kernel argument a pointer (block) is computed from by pointer arithmetic, views and
    loop-carried steps (``p += 1``); None where it is not known (loaded, selected, made from an
    integer, or carried from another)."""

    def __init__(self, fn: Function) -> None:
        self.known: dict[Node, Node | None] = {p: p for p in fn.params}
        self.carried: dict[Node, tuple[Node, Node]] = {}  # loop parameter -> (init, yield)
        for node in walk(fn.body):
            if node.op is Op.FOR:
                body = node.regions[0]
                self.carried.update(zip(body.params[1:], zip(node.args[3:], body.results)))
            elif node.op is Op.WHILE:
                for region in node.regions:
                    self.carried.update(zip(region.params, zip(node.args, node.regions[1].results)))

    def __call__(self, ptr: Node) -> Node | None:
        if ptr in self.known:
            return self.known[ptr]
        root: Node | None = None
        if ptr in self.carried:
            init, step = self.carried[ptr]
            self.known[ptr] = root = self(init)  # tentatively, for the yield that reads it
            before = set(self.known)
            if self(step) != root:
                for node in set(self.known) - before:  # found from the tentative root
                    del self.known[node]
                root = None
        elif ptr.op is Op.BINARY:
            ptrs = [a for a in ptr.args if a.ty.dtype.is_pointer]
            root = self(ptrs[0]) if len(ptrs) == 1 else None
        elif ptr.op in (Op.SPLAT, Op.BROADCAST, Op.RESHAPE, Op.PERMUTE, Op.CONVERT) and ptr.args:
            root = self(ptr.args[0])
        self.known[ptr] = root
        return root


class _Expressions:
    """A key equal for two pointer blocks computed alike (``q + offs`` written twice): the same
    pure operations of the same parameters, loop variables and loaded values."""

    def __init__(self) -> None:
        self.keys: dict[Node, object] = {}

    def __call__(self, node: Node) -> object:
        key = self.keys.get(node)
        if key is None:
            pure = node.op in _PURE and not node.regions and _hashable(node.attr)
            key = (node.op, node.attr, node.type, tuple(self(a) for a in node.args)) if pure else node
            self.keys[node] = key
        return key


def _hashable(attr: object) -> bool:
    try:
        hash(attr)
    except TypeError:
        return False
    return True


def _accesses(node: Node, fn: Function, roots: _Roots, expressions: _Expressions) -> list[_Access]:
    """What ``node`` reads and writes of global memory (an atomic both), as :data:`_Access`es."""
    if node.op not in (Op.LOAD, Op.STORE, Op.ATOMIC) or not node.args:
        return []
    ptr = node.args[0]
    root = roots(ptr)
    if ptr.ty.numel == 1:  # a scalar, or a block of one element: every thread holds it, thread 0 writes it
        threads: Registers | Threads = Threads.EVERY if node.op is Op.LOAD else Threads.FIRST
    else:
        threads = held_in(stored_walk(node) if node.op is Op.STORE else node, fn)
    return [(write, root, threads, expressions(ptr)) for write in ((False,) if node.op is Op.LOAD else (True,) if node.op is Op.STORE
                                                  else (False, True))]


def _conflict(a: _Access, b: _Access) -> bool:
    """Whether ``a`` and ``b`` may touch one element from different threads, one of them writing."""
    (write_a, root_a, threads_a, lanes_a), (write_b, root_b, threads_b, lanes_b) = a, b
    if not (write_a or write_b):
        return False
    if Threads.EVERY in (threads_a, threads_b):
        apart = True
    elif Threads.FIRST in (threads_a, threads_b):  # thread 0: a block's element may be on another
        apart = threads_a != threads_b
    else:  # one layout walks each element on the same thread only through equal pointers
        apart = threads_a != threads_b or lanes_a != lanes_b
    scalars = all(isinstance(t, Threads) for t in (threads_a, threads_b))
    return apart and (scalars or root_a is None or root_b is None or root_a == root_b)


def _unordered(fn: Function) -> set[Node]:
    """The accesses that need a barrier before them, found by walking the program with the
    accesses since the last barrier; a loop's body is walked twice, the second time from the
    state its end leaves (the next iteration)."""
    found: set[Node] = set()
    roots, expressions = _Roots(fn), _Expressions()

    def region(body: Region, state: _State) -> _State:
        for node in body.body:
            if node.op in (Op.FOR, Op.WHILE):
                entry = state
                for _ in range(2):
                    for sub in node.regions:
                        state = region(sub, state)
                    state = entry | state
            elif node.regions:  # an if: either branch, or neither
                ends = [region(sub, state) for sub in node.regions] + ([state] if len(node.regions) < 2 else [])
                state = frozenset().union(*ends)
            elif node.op is Op.BARRIER:
                state = frozenset()
            else:
                accesses = _accesses(node, fn, roots, expressions)
                if any(_conflict(seen, access) for seen in state for access in accesses):
                    found.add(node)
                    state = frozenset()
                state = state | frozenset(accesses)
        return state

    region(fn.body, frozenset())
    return found
