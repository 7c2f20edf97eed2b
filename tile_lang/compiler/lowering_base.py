"""What every lowering family builds on: the table of lowerings (:data:`LOWERINGS`, filled by
``@lowers``), the :class:`Context` a lowering sees of the front end, and the helpers the
families share. :mod:`lowering_memory` and :mod:`lowering_collective` import this module, never
:mod:`lowering` or each other; :mod:`lowering` imports both, so its ``LOWERINGS`` is complete.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import tile_lang.dtypes as dtypes
from tile_lang.builtin import Builtin, builtin_of
from tile_lang.compiler.builder import Builder, Value
from tile_lang.compiler.ir import AxisAttr, Node, Op, PermuteAttr, Type
from tile_lang.dtypes import DType
from tile_lang.semantics import SemanticError, base, shape as shapes
from tile_lang.seen import Block


class Context(Protocol):
    """What a lowering sees of the front end: the builder, errors, and inlining of a @tl.func."""

    b: Builder

    def error(self, message: str) -> SemanticError: ...

    def inline(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], func: bool = True,
               combine: object = None) -> Any: ...


Args = Mapping[str, Any]
Lowering = Callable[[Context, Args], Any]
LOWERINGS: dict[Builtin, Lowering] = {}


def lowers(*functions: Callable[..., Any]) -> Callable[[Lowering], Lowering]:
    def register(impl: Lowering) -> Lowering:
        for fn in functions:
            LOWERINGS[builtin_op(fn)] = impl
        return impl
    return register


def builtin_op(fn: object) -> Builtin:
    op = builtin_of(fn)
    assert op is not None, fn
    return op


def dtype_arg(marker: Any) -> DType:
    """The dtype a marker such as ``tl.f32`` names."""
    return dtypes.dtype_of(marker)


def node_arg(b: Builder, value: Value) -> Node:
    """A tensor argument as a node (a Python number becomes a constant)."""
    return b.to_node(value)


def constant(c: Context, value: Any, what: str, arg: str) -> int:
    """A compile-time integer argument ``arg`` of ``what``, or an error naming both."""
    return base.constexpr_int(value, what, arg)


def block(x: Node) -> Block:
    """What the rules of :mod:`tile_lang.semantics` see of ``x``."""
    return Block(x.ty.dtype, x.ty.shape)


def block_of(value: object) -> Block | None:
    """What the rules see of a front-end value (None: not a runtime value)."""
    return Block(value.ty.dtype, value.ty.shape) if isinstance(value, Node) else None


def permute(c: Context, x: Node, dims: tuple[int, ...]) -> Node:
    """``x`` with its axes reordered (out axis i is x's axis dims[i], a checked permutation)."""
    if dims == tuple(range(len(dims))):
        return x
    return c.b.emit(Op.PERMUTE, x.ty.with_shape(shapes.permuted(x.ty.shape, dims)), (x,), PermuteAttr(dims))


def gather(c: Context, src: Node, index: Node, axis: int) -> Node:
    """``out[..i..] = src[.. index[..i..] at axis ..]``: the result has index's shape."""
    return c.b.emit(Op.GATHER, Type(src.ty.dtype, index.ty.shape), (src, index), AxisAttr(axis))
