"""Barriers between a program's scalar reads and writes of memory. A scalar store or atomic runs
on one thread (thread 0), a scalar load on every thread, while the reference runs a program's
scalar accesses in order, as one lane's: so ``tl.store(p, v)`` then ``tl.load(p)`` read the old
value on other threads (296 of 1024 lanes on the emulator), and ``c = tl.load(p)`` then
``tl.store(p, c + 1)`` or ``tl.atomic_xchg(p, 1)`` could give a late thread the new one. A
scalar load that a scalar write may precede with no barrier between, and a scalar write that a
scalar load may precede, get a barrier before them (scalar control flow is uniform, so every
thread reaches it); kernels that only read scalars, or only write them, are unchanged."""

from __future__ import annotations

from tile_lang.compiler.ir import Function, Node, Op, Region
from tile_lang.compiler.passes.rebuild import rebuild

_State = tuple[bool, bool]  # since the last barrier: a scalar written, a scalar loaded


def order_scalar_accesses(fn: Function) -> Function:
    fenced = _unordered(fn)

    def rule(node: Node, body: list[Node]) -> Node:
        if node in fenced:
            body.append(Node(Op.BARRIER, None, loc=node.loc))
        return node

    return rebuild(fn, rule) if fenced else fn


def _scalar(node: Node, ops: tuple[Op, ...]) -> bool:
    return node.op in ops and bool(node.args) and node.args[0].ty.is_scalar


def _unordered(fn: Function) -> set[Node]:
    """The scalar accesses that need a barrier before them, found by walking the program with
    what happened since the last barrier; a loop's body is walked twice, the second time from
    the state its end leaves (the next iteration)."""
    found: set[Node] = set()

    def region(body: Region, state: _State) -> _State:
        for node in body.body:
            if node.op in (Op.FOR, Op.WHILE):
                entry = state
                for _ in range(2):
                    for sub in node.regions:
                        state = region(sub, state)
                    state = (entry[0] or state[0], entry[1] or state[1])
            elif node.regions:  # an if: either branch, or neither
                ends = [region(sub, state) for sub in node.regions] + ([state] if len(node.regions) < 2 else [])
                state = (any(e[0] for e in ends), any(e[1] for e in ends))
            elif node.op is Op.BARRIER:
                state = (False, False)
            elif _scalar(node, (Op.LOAD,)):
                if state[0]:
                    found.add(node)
                state = (False, True)
            elif _scalar(node, (Op.STORE, Op.ATOMIC)):
                if state[1]:
                    found.add(node)
                state = (True, False)
        return state

    region(fn.body, (False, False))
    return found
