"""The one place a builtin's rule is applied: both dispatchers (the reference's engine, the
compiler's front end) call :func:`checked` before the backend's implementation, which then reads
the checked, normalised arguments. Importing this module registers every family's rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import tile_lang.semantics.creation  # noqa: F401 (registers its rules)
import tile_lang.semantics.elementwise  # noqa: F401 (registers its rules)
import tile_lang.semantics.hints  # noqa: F401 (registers its rules)
import tile_lang.semantics.libdevice  # noqa: F401 (registers its rules)
import tile_lang.semantics.linalg  # noqa: F401 (registers its rules)
import tile_lang.semantics.memory  # noqa: F401 (registers its rules)
import tile_lang.semantics.random  # noqa: F401 (registers its rules)
import tile_lang.semantics.reduction  # noqa: F401 (registers its rules)
import tile_lang.semantics.shape  # noqa: F401 (registers its rules)
from tile_lang.builtin import Builtin
from tile_lang.ops.memory import BlockPointer, TensorDescriptor
from tile_lang.semantics.base import FAMILY_RULES, RULES, Block, Seen

View = Callable[[object], Block | None]  # a backend's runtime value as a Block (None: not one)


def checked(op: Builtin, args: Mapping[str, Any], view: View) -> Mapping[str, Any]:
    """``args`` with what ``op``'s rule made of them (unchanged for an op without a rule); a
    broken rule raises its SemanticError, which each dispatcher reports at the user's line."""
    own = RULES.get(op)  # its own rule, else its family's
    shared = None if own is not None or op.family is None else FAMILY_RULES.get(op.family)
    if own is None and shared is None:
        return args
    seen = {name: _seen(value, view) for name, value in args.items()}
    if own is not None:
        made = own(seen)
    else:
        assert shared is not None
        made = shared(repr(op), seen)
    return {**args, **made} if made else args


def _seen(value: object, view: View) -> object:
    """What a rule sees of one argument: Blocks for runtime values, also inside a tuple or list,
    and a block pointer's or descriptor's :class:`~tile_lang.semantics.base.Tiled` (its handle,
    each backend's own, says it)."""
    block = view(value)
    if block is not None:
        return block
    if isinstance(value, (BlockPointer, TensorDescriptor)):
        handle: object = value.handle
        return handle.seen() if isinstance(handle, Seen) else value
    if isinstance(value, tuple):
        return tuple(_seen(v, view) for v in value)
    if isinstance(value, list):
        return [_seen(v, view) for v in value]
    return value
