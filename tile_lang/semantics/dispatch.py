"""The one place a builtin's rule is applied: both dispatchers (the reference's engine, the
compiler's front end) call :func:`checked` before the backend's implementation, which then reads
the checked, normalised arguments. Importing this module registers every family's rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import tile_lang.semantics.creation  # noqa: F401 (registers its rules)
import tile_lang.semantics.elementwise  # noqa: F401 (registers its rules)
import tile_lang.semantics.hints  # noqa: F401 (registers its rules)
import tile_lang.semantics.linalg  # noqa: F401 (registers its rules)
import tile_lang.semantics.memory  # noqa: F401 (registers its rules)
import tile_lang.semantics.random  # noqa: F401 (registers its rules)
import tile_lang.semantics.reduction  # noqa: F401 (registers its rules)
import tile_lang.semantics.shape  # noqa: F401 (registers its rules)
from tile_lang.builtin import Builtin
from tile_lang.ops.memory import BlockPointer, TensorDescriptor
from tile_lang.semantics.base import Block, Seen, rule_of

View = Callable[[object], Block | None]  # a backend's runtime value as a Block (None: not one)


def checked(op: Builtin, args: Mapping[str, Any], view: View) -> Mapping[str, Any]:
    """``args`` with what ``op``'s rule made of them (unchanged for an op without a rule); a
    broken rule raises its SemanticError, which each dispatcher reports at the user's line."""
    fn = rule_of(op)
    if fn is None:
        return args
    return {**args, **fn({name: _seen(value, view) for name, value in args.items()})}


def _seen(value: object, view: View) -> object:
    """What a rule sees of one argument: Blocks for runtime values, also inside a tuple or list,
    and a block pointer's or descriptor's :class:`~tile_lang.semantics.base.Tiled` (its handle,
    each backend's own, says it)."""
    if isinstance(value, (BlockPointer, TensorDescriptor)):
        handle: object = value.handle
        return handle.seen() if isinstance(handle, Seen) else value
    if isinstance(value, tuple):
        return tuple(_seen(v, view) for v in value)
    if isinstance(value, list):
        return [_seen(v, view) for v in value]
    block = view(value)
    return value if block is None else block
