"""Builtins: the ``tl.*`` functions a kernel calls, dispatched to whichever engine runs it.

A builtin's Python body is never executed. Calling it inside a kernel binds the arguments
against its signature (so keyword spellings and defaults are Triton's) and hands them to the
active :class:`Engine`: the NumPy reference installs one while it executes a kernel; the
compiler front end never calls builtins, it recognises them by identity in the AST.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, eq=False)
class Builtin:
    """Identity and signature of one ``tl.*`` operation."""

    name: str
    signature: inspect.Signature
    doc: str

    def __repr__(self) -> str:
        return f"tl.{self.name}"


class Engine(Protocol):
    """What executes builtins: the NumPy reference's interpreter implements this."""

    def call(self, op: Builtin, args: Mapping[str, Any]) -> Any: ...


_ENGINE: contextvars.ContextVar[Engine | None] = contextvars.ContextVar("tile_lang_engine", default=None)

BUILTINS: dict[str, Builtin] = {}


@contextlib.contextmanager
def engine(active: Engine) -> Iterator[None]:
    """Route builtin calls to ``active`` for the duration of a kernel run."""
    token = _ENGINE.set(active)
    try:
        yield
    finally:
        _ENGINE.reset(token)


def active_engine() -> Engine | None:
    return _ENGINE.get()


def builtin(fn: F) -> F:
    """Declare ``fn`` (a typed signature with a docstring) as the builtin ``tl.<name>``."""
    signature = inspect.signature(fn)
    op = Builtin(name=fn.__name__, signature=signature, doc=(fn.__doc__ or "").strip())
    BUILTINS[op.name] = op

    bind = _binder(op)

    @functools.wraps(fn)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        active = _ENGINE.get()
        if active is None:
            raise RuntimeError(f"{op!r} can only be called inside a @tl.kernel or @tl.func being run")
        return active.call(op, bind(args, kwargs))

    setattr(dispatch, "__tile_builtin__", op)
    return cast(F, dispatch)


def _binder(op: Builtin) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """Argument binding by name with defaults; a fast path for plain positional-or-keyword
    signatures, since builtins are called once per statement of every kernel run."""
    params = list(op.signature.parameters.values())
    simple = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
    names = [p.name for p in params]
    positions = {name: i for i, name in enumerate(names)}
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}

    def slow(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = op.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{op!r}: {exc}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def fast(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        count = len(args)
        if count > len(names):
            return slow(args, kwargs)
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if positions.get(key, -1) < count:  # not a parameter, or also given by position
                return slow(args, kwargs)
            bound[key] = value
        if len(bound) < len(names):
            for key, value in defaults.items():
                bound.setdefault(key, value)
        return bound if len(bound) == len(names) else slow(args, kwargs)

    return fast if simple else slow


def builtin_of(obj: object) -> Builtin | None:
    """The builtin behind a ``tl.*`` function object, or None for anything else."""
    found = getattr(obj, "__tile_builtin__", None)
    return found if isinstance(found, Builtin) else None
