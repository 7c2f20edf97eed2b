"""Values carried by loops: variables declared before the construct, assigned each iteration."""

from __future__ import annotations

from tile_lang.compiler.ir import Node

from tile_lang_cupy.codegen.ctypes_ import ctype
from tile_lang_cupy.codegen.emitter import Emitter


def carry(em: Emitter, node: Node, params: tuple[Node, ...], inits: tuple[Node, ...]) -> list[str]:
    """Declare the variables of carried values and give them their initial values."""
    names = []
    for param, init in zip(params, inits):
        name = em.declare(param, "c")
        em.assign_from(param, init, name)
        names.append(name)
    em.results[node] = names
    return names


def yield_values(em: Emitter, params: tuple[Node, ...], values: tuple[Node, ...], names: list[str]) -> None:
    """Assign the values a region yields to the carried variables (via temporaries, since the
    yields may read the variables being updated)."""
    moves = []
    for param, value, name in zip(params, values, names):
        if value is param or em.names.get(value) == name:
            continue  # unchanged, or computed in place
        temp = em.fresh("t")
        em.line(f"{decl(em, param, temp)};")
        em.assign_from(param, value, temp)
        moves.append((param, name, temp))
    for param, name, temp in moves:
        if param.ty.is_scalar:
            em.line(f"{name} = {temp};")
        else:
            em.line("#pragma unroll")
            em.line(f"for (int k = 0; k < {em.layout(param).per_thread}; ++k) {name}[k] = {temp}[k];")


def decl(em: Emitter, node: Node, name: str) -> str:
    """The C++ declaration of a variable holding ``node`` (an array for blocks)."""
    t = ctype(node.ty.dtype)
    return f"{t} {name}" if node.ty.is_scalar else f"{t} {name}[{em.layout(node).per_thread}]"
