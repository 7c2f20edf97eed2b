"""What loops share: carried values (variables declared before the construct, assigned each
iteration) and the head of a loop that counts its trips."""

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


def trip_type(iv: Node) -> str:
    """The unsigned C type of the loop index ``iv``'s width: it holds every trip count of a range
    over that type, and the index's steps wrap in it as the exact value would."""
    return "unsigned long long" if iv.ty.dtype.bits == 64 else "unsigned"


def counted_head(em: Emitter, iv: Node, lo: str, step: str, trips: str) -> tuple[str, str, str]:
    """The head of a ``for`` that runs ``trips`` times (an expression of :func:`trip_type`) with
    the index ``iv`` at ``lo``, ``lo + step``, ...; the body's first line, declaring ``iv``; and
    the name of the trips left, this one included. The index advances in the unsigned type, so
    that the step after the last trip cannot overflow."""
    u, t, i = trip_type(iv), ctype(iv.ty.dtype), em.name(iv, "i")
    n, k = em.fresh("n"), em.fresh("k")
    return (f"for ({u} {n} = {trips}, {k} = ({u})({lo}); {n} != 0u; --{n}, {k} += ({u})({step}))",
            f"const {t} {i} = ({t})({k});", n)
