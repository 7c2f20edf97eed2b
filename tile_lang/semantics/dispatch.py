"""The one place a rule is applied: both dispatchers (the reference's engine, the compiler's front
end) call :func:`checked` before a builtin's implementation, which then reads the checked,
normalised arguments, and :func:`apply` for a form (:mod:`tile_lang.ops.forms`: the syntax each
front end compiles itself, and what only running shows). Neither backend calls a rule function.
Importing this module registers every family's rules and every form's."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import tile_lang.semantics.creation  # noqa: F401 (registers its rules)
import tile_lang.semantics.elementwise  # noqa: F401 (registers its rules)
import tile_lang.semantics.hints  # noqa: F401 (registers its rules)
import tile_lang.semantics.libdevice  # noqa: F401 (registers its rules)
import tile_lang.semantics.linalg  # noqa: F401 (registers its rules)
import tile_lang.semantics.loops  # noqa: F401 (registers its rules)
import tile_lang.semantics.memory  # noqa: F401 (registers its rules)
import tile_lang.semantics.operators  # noqa: F401 (registers its rules)
import tile_lang.semantics.random  # noqa: F401 (registers its rules)
import tile_lang.semantics.reduction  # noqa: F401 (registers its rules)
import tile_lang.semantics.shape  # noqa: F401 (registers its rules)
from tile_lang.builtin import Builtin, builtin_of
from tile_lang.dtypes import DType
from tile_lang.errors import SemanticError
from tile_lang.ops.forms import Form
from tile_lang.ops.memory import BlockPointer, TensorDescriptor
from tile_lang.semantics.base import FAMILY_RULES, RULES, Block, Seen, Tiled
from tile_lang.semantics.coded import MOVES, moves_only

P = ParamSpec("P")
R = TypeVar("R")
View = Callable[[object], Block | None]  # a backend's runtime value as a Block (None: not one)
_CONSTANTS = frozenset({bool, int, float, str, type(None)})  # arguments a rule sees as they are


@dataclass(frozen=True)
class Capabilities:
    """What one backend cannot do, declared as data: the builtins it does not run and the dtypes
    it has no values of, each with the reason its one message gives (:func:`checked` refuses them
    before any rule or implementation; the compiler refuses a parameter of such a dtype)."""

    backend: str  # as the message names it: "the numpy backend"
    lacks: Mapping[Builtin, str]
    lacks_dtypes: Mapping[DType, str]

    def refusal(self, op: Builtin) -> SemanticError:
        return SemanticError(f"{op!r} is not supported on {self.backend}: {self.lacks[op]}")

    def dtype_refusal(self, dtype: DType) -> SemanticError | None:
        """The error for a value of ``dtype`` (or a pointer to one) here, or None where it is fine."""
        element = dtype.element or dtype
        why = self.lacks_dtypes.get(element)
        return None if why is None else SemanticError(f"{element!r} is not supported on {self.backend}: {why}")


def lacking(backend: str, lacks: Mapping[Callable[..., Any], str],
            lacks_dtypes: Mapping[DType, str] | None = None) -> Capabilities:
    """The Capabilities of ``backend``, which cannot run these ``tl.*`` functions nor hold these
    dtypes (for the reasons given)."""
    ops: dict[Builtin, str] = {}
    for fn, why in lacks.items():
        op = builtin_of(fn)
        assert op is not None, f"{fn!r} is not a builtin"
        ops[op] = why
    return Capabilities(backend, ops, dict(lacks_dtypes or {}))


def checked(op: Builtin, args: Mapping[str, Any], view: View, capabilities: Capabilities) -> Mapping[str, Any]:
    """``args`` with what ``op``'s rule made of them (unchanged for an op without a rule), on a
    backend with these ``capabilities``; a broken rule, or an op the backend lacks, raises a
    SemanticError, which each dispatcher reports at the user's line."""
    if op in capabilities.lacks:
        raise capabilities.refusal(op)
    own = RULES.get(op)  # its own rule, else its family's
    shared = None if own is not None or op.family is None else FAMILY_RULES.get(op.family)
    if own is None and shared is None and op in MOVES and not capabilities.lacks_dtypes:
        return args  # nothing to check: the hot path of the reference's moves
    seen = {name: _seen(value, view) for name, value in args.items()}
    key = _key(op, capabilities, seen)
    made = _MADE.get(key) if key is not None else None
    if made is None:
        made = _made(op, own, shared, seen, capabilities)
        if key is not None and _immutable(made):
            if len(_MADE) >= _MADE_LIMIT:
                _MADE.clear()
            _MADE[key] = made
    return {**args, **made} if made else args


def _made(op: Builtin, own: Any, shared: Any, seen: dict[str, object], capabilities: Capabilities
          ) -> Mapping[str, Any]:
    """What the rule makes of ``seen`` (raising the rule's error), its dtypes checked."""
    moves_only(op, seen.values())
    made: Mapping[str, Any] = {}
    if own is not None:
        made = own(seen)
    elif shared is not None:
        made = shared(repr(op), seen)
    if capabilities.lacks_dtypes:
        _has_dtypes(capabilities, (*seen.values(), *made.values()))
    return made


# What a rule made of the arguments, by what it saw: a rule is a pure function of the Blocks,
# dtypes and constants it sees (it reads nothing else), so a call site meeting values of the same
# types again (every program of a lock, every launch of a kernel) reuses it. Only results of
# immutable values are kept; a rule that raises keeps nothing and raises again.
_MADE: dict[tuple[object, ...], Mapping[str, Any]] = {}
_MADE_LIMIT = 4096
_KEYED = (Block, Tiled, DType, enum.Enum)


def _key(op: Builtin, capabilities: Capabilities, seen: Mapping[str, object]) -> tuple[object, ...] | None:
    """The cache key of one call: the op, the backend, and each argument as the rule saw it, a
    constant with its type (``1``, ``1.0`` and ``True`` are equal keys otherwise, with different
    rules, and so are ``0.0`` and ``-0.0``); None where an argument is anything else."""
    parts: list[object] = [op, id(capabilities)]
    for name, value in seen.items():
        part = _part(value)
        if part is None:
            return None
        parts += (name, part)
    return tuple(parts)


def _part(value: object) -> object | None:
    if type(value) is float:
        return (float, value.hex())
    if type(value) in _CONSTANTS:
        return (type(value), value)
    if isinstance(value, _KEYED):
        return value
    if type(value) is tuple:
        parts = tuple(_part(v) for v in value)
        return None if any(p is None for p in parts) else (tuple, parts)
    return None


def _immutable(made: Mapping[str, Any]) -> bool:
    """Whether ``made`` holds only hashable values (no list or dict a caller could change)."""
    try:
        hash(tuple(made.values()))
    except TypeError:
        return False
    return True


def _has_dtypes(capabilities: Capabilities, seen: tuple[object, ...]) -> None:
    """Refuse the dtypes the backend lacks: of a block argument, a dtype argument, or a result."""
    for value in seen:
        for item in value if isinstance(value, (tuple, list)) else (value,):
            dtype = item.dtype if isinstance(item, Block) else item
            if isinstance(dtype, DType):
                refused = capabilities.dtype_refusal(dtype)
                if refused is not None:
                    raise refused


def apply(form: Form[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``form``'s rule on these arguments (every form has one once this module is imported); a
    broken rule raises its SemanticError, which each backend reports at the user's line."""
    rule = form.rule
    assert rule is not None, f"{form!r} has no rule"
    return rule(*args, **kwargs)


def _seen(value: object, view: View) -> object:
    """What a rule sees of one argument: Blocks for runtime values, also inside a tuple or list,
    and a block pointer's or descriptor's :class:`~tile_lang.semantics.base.Tiled` (its handle,
    each backend's own, says it)."""
    if type(value) in _CONSTANTS:  # most arguments: nothing to look into
        return value
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
