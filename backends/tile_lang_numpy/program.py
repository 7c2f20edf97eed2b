"""Program identity and Python control flow on scalars (``if``, ``range`` bounds, indexing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ParamSpec, TypeVar

import numpy as np

import tile_lang as tl
from tile_lang import operators
from tile_lang.dtypes import BOOL, I32
from tile_lang.errors import SemanticError
from tile_lang.ops import forms
from tile_lang.ops.forms import Form
from tile_lang.semantics.dispatch import apply
from tile_lang.tensor import Tensor

from tile_lang_numpy import addresses, affine, tiled, values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Pointers

P = ParamSpec("P")
R = TypeVar("R")


@implements(tl.program_id)
def program_id(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return tiled.program_id(engine, a["axis"])


@implements(tl.num_programs)
def num_programs(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return values.scalar(engine.grid[a["axis"]], I32)


def scalar_values(engine: Engine, x: Tensor[Any, Any], grid: bool = False) -> np.ndarray[Any, Any]:
    """Each program's value of a tensor ``x`` used as a condition (program axis of P or 1, or in
    grid space: see :mod:`tiled`), after the rule that a condition is a scalar (or a block of one
    element, whose unit axes are dropped)."""
    one = ruled(engine, forms.condition, x.block_shape)
    if isinstance(x.handle, Pointers):  # `if bias_ptr:`: a pointer's truth is that it is not null, as Triton
        x = values.make(addresses.addresses_of(x.handle) != 0, BOOL)  # casts a pointer to int1 (ptr != 0)
    held = tiled.space(engine, x) if grid else values.array(x)
    return held.reshape(held.shape[:held.ndim - x.ndim]) if one else held


def ruled(engine: Engine, form: Form[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``form``'s rule applied (the dispatcher's :func:`apply`), its SemanticError located at the
    user's line (callers outside :meth:`Engine.call`: Python control flow in the kernel's source)."""
    try:
        return apply(form, *args, **kwargs)
    except SemanticError as exc:
        raise engine.error(str(exc)) from None


@implements(operators.truth)
def truth(engine: Engine, a: Mapping[str, Any]) -> bool:
    return bool(engine.uniform(scalar_values(engine, a["x"]), "condition"))


def integer_values(engine: Engine, x: Tensor[Any, Any], grid: bool = False) -> np.ndarray[Any, Any]:
    """Each program's value of an integer scalar (a range bound or an index; in grid space when
    ``grid``)."""
    ruled(engine, forms.index, x.block_shape, x.type)
    return tiled.space(engine, x) if grid else values.array(x)


@implements(operators.index)
def index(engine: Engine, a: Mapping[str, Any]) -> int:
    x = a["x"]
    if not isinstance(x, Tensor):
        raise engine.error(f"expected an integer scalar, got {type(x).__name__}")
    return int(engine.uniform(integer_values(engine, x), "integer"))


@implements(operators.subscript)
def subscript(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    x, key = a["x"], a["key"]
    parts = apply(forms.subscript, key, len(x.block_shape))  # inside Engine.call, which locates its error
    index: tuple[Any, ...] = (slice(None),) + tuple(np.newaxis if p is None else slice(None) for p in parts)
    handle = x.handle
    if isinstance(handle, values.Pointers):
        if handle.affine is not None:
            return values.make(values.Pointers(handle.memory, None, affine.insert_axes(handle.affine, parts)), x.type)
        return values.make(values.Pointers(handle.memory, handle.offsets[index]), x.type)
    if isinstance(handle, affine.Affine):
        return values.make(affine.insert_axes(handle, parts), x.type)
    if isinstance(handle, affine.Box):
        return values.make(affine.insert_box_axes(handle, parts), x.type)
    return values.make(values.array(x)[index], x.type)
