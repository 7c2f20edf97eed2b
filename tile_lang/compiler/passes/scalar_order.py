"""Barriers between a program's scalar reads and writes of memory. A scalar store or atomic runs
on one thread (thread 0), a scalar load on every thread, while the reference runs a program's
scalar accesses in order, as one lane's: so ``tl.store(p, v)`` then ``tl.load(p)`` read the old
value on other threads (296 of 1024 lanes on the emulator), and ``c = tl.load(p)`` then
``tl.store(p, c + 1)`` or ``tl.atomic_xchg(p, 1)`` could give a late thread the new one. A
scalar load that a scalar write may precede with no barrier between, and a scalar write that a
scalar load may precede, get a barrier before them (scalar control flow is uniform, so every
thread reaches it); kernels that only read scalars, or only write them, are unchanged. A block
store or atomic runs lane by lane, its lane 0 the reference's scalar lane: a scalar load after
``tl.store(p + offs, x)`` reads what lane 0 wrote there (``tl.load(p)``; other threads read the
old value), so it gets a barrier too where it may read a written block's buffer (a pointer from
the same kernel argument, or either one's not known)."""

from __future__ import annotations

from tile_lang.compiler.ir import Function, Node, Op, Region, walk
from tile_lang.compiler.passes.rebuild import rebuild

# since the last barrier: a scalar written, a scalar loaded, and the roots (kernel pointer
# arguments, None for one not known) of the blocks written
_State = tuple[bool, bool, frozenset[Node | None]]
_START: _State = (False, False, frozenset())


def order_scalar_accesses(fn: Function) -> Function:
    fenced = _unordered(fn)

    def rule(node: Node, body: list[Node]) -> Node:
        if node in fenced:
            body.append(Node(Op.BARRIER, None, loc=node.loc))
        return node

    return rebuild(fn, rule) if fenced else fn


def _scalar(node: Node, ops: tuple[Op, ...]) -> bool:
    return node.op in ops and bool(node.args) and node.args[0].ty.is_scalar


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


def _unordered(fn: Function) -> set[Node]:
    """The scalar accesses that need a barrier before them, found by walking the program with
    what happened since the last barrier; a loop's body is walked twice, the second time from
    the state its end leaves (the next iteration)."""
    found: set[Node] = set()
    roots = _Roots(fn)

    def region(body: Region, state: _State) -> _State:
        for node in body.body:
            if node.op in (Op.FOR, Op.WHILE):
                entry = state
                for _ in range(2):
                    for sub in node.regions:
                        state = region(sub, state)
                    state = (entry[0] or state[0], entry[1] or state[1], entry[2] | state[2])
            elif node.regions:  # an if: either branch, or neither
                ends = [region(sub, state) for sub in node.regions] + ([state] if len(node.regions) < 2 else [])
                state = (any(e[0] for e in ends), any(e[1] for e in ends), frozenset().union(*(e[2] for e in ends)))
            elif node.op is Op.BARRIER:
                state = _START
            elif _scalar(node, (Op.LOAD,)):
                root = roots(node.args[0])
                if state[0] or (state[2] and (root is None or None in state[2] or root in state[2])):
                    found.add(node)
                    state = (False, True, frozenset())
                else:
                    state = (False, True, state[2])
            elif _scalar(node, (Op.STORE, Op.ATOMIC)):
                if state[1]:
                    found.add(node)
                    state = (True, False, frozenset())
                else:
                    state = (True, False, state[2])
            elif node.op in (Op.STORE, Op.ATOMIC) and node.args:
                state = (state[0], state[1], state[2] | {roots(node.args[0])})
        return state

    region(fn.body, _START)
    return found
