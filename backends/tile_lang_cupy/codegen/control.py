"""Structured control flow: loops and branches over uniform scalars, carried values as
variables declared before the construct and reassigned at the end of each iteration."""

from __future__ import annotations

from tile_lang.compiler.ir import ConstAttr, Node, Op, Region

from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, emits


def _carry(em: Emitter, node: Node, params: tuple[Node, ...], inits: tuple[Node, ...]) -> list[str]:
    """Declare the variables of carried values and give them their initial values."""
    names = []
    for param, init in zip(params, inits):
        name = em.declare(param, "c")
        em.assign_from(param, init, name)
        names.append(name)
    em.results[node] = names
    return names


def _yield(em: Emitter, params: tuple[Node, ...], values: tuple[Node, ...], names: list[str]) -> None:
    """Assign the values a region yields to the carried variables (via temporaries, since the
    yields may read the variables being updated)."""
    moves = []
    for param, value, name in zip(params, values, names):
        if value is param:
            continue
        temp = em.fresh("t")
        em.line(f"{_decl(em, param, temp)};")
        em.assign_from(param, value, temp)
        moves.append((param, name, temp))
    for param, name, temp in moves:
        if param.ty.is_scalar:
            em.line(f"{name} = {temp};")
        else:
            em.line("#pragma unroll")
            em.line(f"for (int k = 0; k < {em.layout(param).per_thread}; ++k) {name}[k] = {temp}[k];")


def _decl(em: Emitter, node: Node, name: str) -> str:
    from tile_lang_cupy.codegen.ctypes_ import ctype
    t = ctype(node.ty.dtype)
    return f"{t} {name}" if node.ty.is_scalar else f"{t} {name}[{em.layout(node).per_thread}]"


@emits(Op.FOR)
def _for(em: Emitter, node: Node) -> None:
    lower, upper, step, *inits = node.args
    body: Region = node.regions[0]
    iv, *params = body.params
    names = _carry(em, node, tuple(params), tuple(inits))
    from tile_lang_cupy.codegen.ctypes_ import ctype
    i = em.name(iv, "i")
    negative = step.op is Op.CONST and isinstance(step.attr, ConstAttr) and step.attr.value < 0
    cmp = ">" if negative else "<"
    s = em.elem(step, SCALAR)
    head = f"for ({ctype(iv.ty.dtype)} {i} = {em.elem(lower, SCALAR)}; {i} {cmp} {em.elem(upper, SCALAR)}; {i} += {s})"
    with em.block(head):
        em.region(body)
        _yield(em, tuple(params), body.results, names)


@emits(Op.WHILE)
def _while(em: Emitter, node: Node) -> None:
    cond, body = node.regions
    names = _carry(em, node, body.params, node.args)
    for param, name in zip(cond.params, names):
        em.names[param] = name
    with em.block("while (true)"):
        em.region(cond)
        em.line(f"if (!({em.elem(cond.results[0], SCALAR)})) break;")
        em.region(body)
        _yield(em, body.params, body.results, names)


@emits(Op.IF)
def _if(em: Emitter, node: Node) -> None:
    then, other = node.regions
    names = []
    for value in then.results:
        name = em.fresh("r")
        em.line(f"{_decl(em, value, name)};")
        names.append(name)
    em.results[node] = names
    with em.block(f"if ({em.elem(node.args[0], SCALAR)})"):
        em.region(then)
        for value, name in zip(then.results, names):
            em.assign_from(value, value, name)
    if other.body or other.results:
        with em.block("else"):
            em.region(other)
            for value, name in zip(other.results, names):
                em.assign_from(value, value, name)


@emits(Op.RESULT)
def _result(em: Emitter, node: Node) -> None:
    em.names[node] = em.results[node.args[0]][getattr(node.attr, "index")]


@emits(Op.RETURN)
def _return(em: Emitter, node: Node) -> None:
    em.line("return;")


@emits(Op.BARRIER)
def _barrier(em: Emitter, node: Node) -> None:
    em.line("__syncthreads();")
