"""The rule of the coded dtypes (``tl.float8e4b15``, whose values NumPy cannot hold, see
:mod:`tile_lang.fp8`): their blocks are loaded, stored, converted, reinterpreted, moved and
given ``tl.abs`` (a sign bit cleared, as Triton computes it); everything else computes on values,
so it takes them converted (``x.to(tl.float32)``). :func:`~tile_lang.semantics.dispatch.checked`
applies it to every builtin; the operators, whose dtype is the operands' promoted one, apply it
in their own rules (``e4b15 + f32`` computes in f32)."""

from __future__ import annotations

from collections.abc import Iterable

import tile_lang.operators as operators
from tile_lang.builtin import Builtin, builtin_of
from tile_lang.dtypes import DType
from tile_lang.ops import creation, debug, math, memory, reduction, shape
from tile_lang.semantics.base import Block, SemanticError


def _builtins(*functions: object) -> frozenset[Builtin]:
    found = frozenset(filter(None, (builtin_of(fn) for fn in functions)))
    assert len(found) == len(functions), "not all are builtins"
    return found


MOVES = _builtins(
    memory.load, memory.store, memory.descriptor_load, memory.descriptor_store, creation.cast, creation.full,
    creation.full_like, creation.zeros, math.abs, math.where, shape.broadcast, shape.broadcast_to,
    shape.expand_dims, shape.permute, shape.trans, shape.reshape, shape.view, shape.ravel, shape.join, shape.split,
    shape.interleave, shape.cat, reduction.flip, reduction.gather, operators.subscript, debug.static_print,
    debug.static_assert, operators.binary, operators.unary,
)
"""The builtins a coded block may be given (the operators check the dtype they compute in)."""


def computes_on(dtype: DType, what: str) -> None:
    """``what`` computes on ``dtype`` values: not on a coded dtype's codes."""
    if dtype.coded:
        raise SemanticError(f"{what} on {dtype!r} values: tile_lang holds {dtype!r} as its 8-bit codes (NumPy has "
                            "no such type), which are loaded, stored, converted and moved; compute on converted "
                            "values, e.g. x.to(tl.float32)")


def moves_only(op: Builtin, seen: Iterable[object]) -> None:
    """A builtin outside :data:`MOVES` computes on the values of its block arguments."""
    if op in MOVES:
        return
    for value in seen:
        for block in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(block, Block):
                computes_on(block.dtype, repr(op))
