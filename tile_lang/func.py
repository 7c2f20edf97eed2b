"""``@tl.func``: typed device helpers that kernels call, and the only valid combine functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

from tile_lang.errors import UsageError

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., object])

MAX_DEPTH = 64
"""How deeply @tl.func calls may nest in a kernel. The compiler inlines every call, so a recursive
func must end by a constexpr (``if N == 0:``) within this many calls; both backends stop at it."""


def too_deep(name: str) -> str:
    """The error for a call of @tl.func ``name`` nested past :data:`MAX_DEPTH` (the same on both backends)."""
    return (f"@tl.func {name}: calls nest more than {MAX_DEPTH} deep (recursion must end by a "
            f"constexpr, e.g. `if N == 0:`, within {MAX_DEPTH} calls)")


def refuse_captures(fn: Callable[..., Any]) -> None:
    """A device function's names are the module's: one capturing local variables is refused
    (their values would be invisible to the kernel cache's key)."""
    captured = fn.__code__.co_freevars
    if captured:
        raise UsageError(
            f"@tl.func {fn.__qualname__} ({fn.__code__.co_filename}:{fn.__code__.co_firstlineno}) "
            f"captures local variable(s) {', '.join(captured)}; pass them as arguments or "
            "make them module-level constants"
        )


class Func(Generic[P, T]):
    """A device function: inlined by the compiler, called directly by the NumPy reference.

    Nominal, so that a lambda or an undecorated function is a type error where a combine
    function is expected (Rust: a ``fn`` item, not a closure).
    """

    def __init__(self, fn: Callable[P, T]) -> None:
        refuse_captures(fn)
        self._wrap(fn)

    def _wrap(self, fn: Callable[P, T]) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tl.func {self.__qualname__}>"


def func(fn: Callable[P, T]) -> Func[P, T]:
    """Decorate a device helper (also the way to write a ``reduce``/``associative_scan`` combine_fn)."""
    return Func(fn)


def helper(fn: F) -> F:
    """Mark a library function written in kernel Python, so the compiler inlines its source."""
    setattr(fn, "__tile_helper__", True)
    return fn


def inlinable(obj: object) -> Callable[..., object] | None:
    """The Python function behind a ``@tl.func`` or library helper, for the compiler to inline."""
    if isinstance(obj, Func):
        return obj.fn
    if callable(obj) and getattr(obj, "__tile_helper__", False):
        return obj
    return None
