"""Structured control flow: loops and branches over uniform scalars, carried values as
variables declared before the construct and reassigned at the end of each iteration."""

from __future__ import annotations

from tile_lang.compiler.ir import ConstAttr, LoopAttr, Node, Op, Region

from tile_lang_cupy.codegen.carried import carry, counted_head, decl, trip_type, yield_values
from tile_lang_cupy.codegen.ctypes_ import ctype
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, emits
from tile_lang_cupy.codegen.pipeline import pipelined_for


@emits(Op.FOR)
def _for(em: Emitter, node: Node) -> None:
    if isinstance(node.attr, LoopAttr) and node.attr.stages > 1:
        pipelined_for(em, node, node.attr.stages)
        return
    lower, upper, step, *inits = node.args
    body: Region = node.regions[0]
    iv, *params = body.params
    names = carry(em, node, tuple(params), tuple(inits))
    if isinstance(node.attr, LoopAttr) and node.attr.unroll is not None:
        em.line(f"#pragma unroll {max(1, node.attr.unroll)}")  # as in Triton, a factor below 2 unrolls nothing
    head, index = _head(em, iv, lower, upper, step)
    with em.block(head):
        if index:
            em.line(index)
        em.region(body)
        yield_values(em, tuple(params), body.results, names)


def _head(em: Emitter, iv: Node, lower: Node, upper: Node, step: Node) -> tuple[str, str]:
    """The head of a ``for`` over ``range(lower, upper, step)``, and the line declaring its index
    ``iv`` in the body where the head does not. A constant step of 1 or -1 is C's own loop (the
    index cannot pass the type's range); any other step counts the trips Python's ``range`` makes
    (``tl::trip_count``, once, before the first) in the unsigned type of the index's width, where
    every count fits, so that the index never wraps and a runtime step's sign is tested once."""
    t, i = ctype(iv.ty.dtype), em.name(iv, "i")
    lo, hi, s = em.elem(lower, SCALAR), em.elem(upper, SCALAR), em.elem(step, SCALAR)
    unit = step.attr.value if step.op is Op.CONST and isinstance(step.attr, ConstAttr) else None
    if unit in (1, -1):
        return f"for ({t} {i} = {lo}; {i} {'<' if unit == 1 else '>'} {hi}; {i} += {s})", ""
    head, index, _ = counted_head(em, iv, lo, s, f"tl::trip_count<{trip_type(iv)}, {t}>({lo}, {hi}, {s})")
    return head, index


@emits(Op.WHILE)
def _while(em: Emitter, node: Node) -> None:
    cond, body = node.regions
    names = carry(em, node, body.params, node.args)
    for param, name in zip(cond.params, names):
        em.names[param] = name
    with em.block("while (true)"):
        em.region(cond)
        em.line(f"if (!({em.elem(cond.results[0], SCALAR)})) break;")
        em.region(body)
        yield_values(em, body.params, body.results, names)


@emits(Op.IF)
def _if(em: Emitter, node: Node) -> None:
    then, other = node.regions
    names = []
    for value in then.results:
        name = em.fresh("r")
        em.line(f"{decl(em, value, name)};")
        names.append(name)
    em.results[node] = names
    with em.block(f"if ({em.elem(node.args[0], SCALAR)})"):
        em.region(then)
        for value, name in zip(then.results, names):
            em.assign_from(value, value, name)
    if other.body or other.results:
        with em.block("else"):
            em.region(other)
            for value, target, name in zip(other.results, then.results, names):
                em.assign_from(target, value, name)  # into the then branch's layout: the result's


@emits(Op.RESULT)
def _result(em: Emitter, node: Node) -> None:
    em.names[node] = em.results[node.args[0]][getattr(node.attr, "index")]


@emits(Op.RETURN)
def _return(em: Emitter, node: Node) -> None:
    em.line("return;")


@emits(Op.BARRIER)
def _barrier(em: Emitter, node: Node) -> None:
    em.line("__syncthreads();")
