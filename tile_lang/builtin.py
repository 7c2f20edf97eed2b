"""Builtins: the ``tl.*`` functions a kernel calls, dispatched to whichever engine runs it.

A builtin's Python body is never executed. Calling it inside a kernel binds the arguments
against its signature (so keyword spellings and defaults are Triton's) and hands them to the
active :class:`Engine`: the NumPy reference installs one while it executes a kernel; the
compiler front end never calls builtins, it recognises them by identity in the AST.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from tile_lang.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


class Family(enum.Enum):
    """A family of builtins that share one rule (``tile_lang.semantics`` holds it) and one row
    shape in each backend's table, so adding a member is its declaration plus one row per backend."""

    UNARY_MATH = "unary math"  # f(x) on a float block, elementwise, the result x's dtype
    REDUCTION = "reduction"  # f(input, axis=None, keep_dims=False) on a block of values, result its dtype
    ATOMIC = "atomic"  # f(pointer, val, mask=None, sem=None, scope=None): a read-modify-write
    LIBDEVICE = "libdevice"  # f(x, ...) elementwise, its operand and result dtypes one of its overloads


@dataclass(frozen=True, eq=False)
class Builtin:
    """Identity and signature of one ``tl.*`` operation, and its family (None: an op of its own)."""

    name: str
    signature: inspect.Signature
    doc: str
    family: Family | None = None

    def __repr__(self) -> str:
        return f"tl.{self.name}"

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments by name with the defaults, or a UsageError naming the builtin (both
        backends' binding of a call)."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UsageError(f"{self!r}: {exc}") from None
        bound.apply_defaults()
        return dict(bound.arguments)


class Engine(Protocol):
    """What executes builtins: the NumPy reference's interpreter implements this."""

    def call(self, op: Builtin, args: Mapping[str, Any]) -> Any: ...


_ENGINE: contextvars.ContextVar[Engine | None] = contextvars.ContextVar("tile_lang_engine", default=None)

BUILTINS: dict[str, Builtin] = {}


class engine:
    """Route builtin calls to ``active`` for the duration of a kernel run (a class rather than a
    generator-based context manager: it is entered once per group of every launch)."""

    __slots__ = ("_active", "_token")

    def __init__(self, active: Engine) -> None:
        self._active = active
        self._token: contextvars.Token[Engine | None] | None = None

    def __enter__(self) -> None:
        self._token = _ENGINE.set(self._active)

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _ENGINE.reset(self._token)


def active_engine() -> Engine | None:
    return _ENGINE.get()


def family(member_of: Family) -> Callable[[F], F]:
    """Declare a builtin as :func:`builtin` does, as a member of ``member_of``."""
    def declare(fn: F) -> F:
        return builtin(fn, member_of)
    return declare


# The families' declarations; semantics holds each family's rule, and each backend one row per
# member (the reference's NumPy function, ufunc or fold; the compiler's IR function).
unary_math = family(Family.UNARY_MATH)  # tl.exp
reduction = family(Family.REDUCTION)  # tl.xor_sum
read_modify_write = family(Family.ATOMIC)  # tl.atomic_add
libdevice = family(Family.LIBDEVICE)  # libdevice.pow


def builtin(fn: F, member_of: Family | None = None) -> F:
    """Declare ``fn`` (a typed signature with a docstring) as the builtin ``tl.<name>``."""
    signature = inspect.signature(fn)
    op = Builtin(name=fn.__name__, signature=signature, doc=(fn.__doc__ or "").strip(), family=member_of)
    BUILTINS[op.name] = op

    bind = _binder(op)

    @functools.wraps(fn)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        active = _ENGINE.get()
        if active is None:
            raise UsageError(f"{op!r} can only be called inside a @tl.kernel or @tl.func being run")
        return active.call(op, bind(args, kwargs))

    setattr(dispatch, "__tile_builtin__", op)
    return cast(F, dispatch)


def _binder(op: Builtin) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """Argument binding by name with defaults; a fast path for plain positional-or-keyword
    signatures, since builtins are called once per statement of every kernel run."""
    params = list(op.signature.parameters.values())
    simple = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}

    slow = op.bind
    count = len(names)
    later = [frozenset(names[given:]) for given in range(count + 1)]  # what keywords may name after `given` positionals

    def fast(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        given = len(args)
        if given == count and not kwargs:  # every argument positional: nothing to default or check
            return dict(zip(names, args))
        if given > count or (kwargs and not kwargs.keys() <= later[given]):
            return slow(args, kwargs)
        bound = defaults.copy()
        bound.update(zip(names, args))
        if kwargs:
            bound.update(kwargs)
        return bound if len(bound) == count else slow(args, kwargs)  # short: a required parameter is missing

    return fast if simple else slow


def builtin_of(obj: object) -> Builtin | None:
    """The builtin behind a ``tl.*`` function object, or None for anything else."""
    found = getattr(obj, "__tile_builtin__", None)
    return found if isinstance(found, Builtin) else None
