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

    @functools.wraps(fn)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        active = _ENGINE.get()
        if active is None:
            raise RuntimeError(f"{op!r} can only be called inside a @tl.kernel or @tl.func being run")
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{op!r}: {exc}") from None
        bound.apply_defaults()
        return active.call(op, bound.arguments)

    setattr(dispatch, "__tile_builtin__", op)
    return cast(F, dispatch)


def builtin_of(obj: object) -> Builtin | None:
    """The builtin behind a ``tl.*`` function object, or None for anything else."""
    found = getattr(obj, "__tile_builtin__", None)
    return found if isinstance(found, Builtin) else None
