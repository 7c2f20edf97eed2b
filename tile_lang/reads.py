"""What a compiled kernel depends on besides its launch: its source as compiled, and every name
the front end resolved from Python (globals, closure values, module and class attributes).

The front end records each resolution as a :class:`Read` with a stable fingerprint of the value
(its type and ``repr``, or where a function or class is defined). A cache keys compiled code by
those fingerprints and can re-resolve the same reads later, without compiling, to find it again.
Light on purpose: the CUDA backend's warm path imports this module but not the compiler.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
import hashlib
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tile_lang.errors import SourceUnavailable
from tile_lang.func import inlinable

_SCALARS: frozenset[type] = frozenset({type(None), bool, int, float, complex, str, bytes})
_MISSING: Any = object()  # what a name or attribute that is not there resolves to
_ABSENT = "absent"  # its fingerprint


class ReadKind(enum.Enum):
    NAME = "name"  # a name in a function's scope: closure, then globals, then builtins
    ATTR = "attr"  # an attribute of a module or class


@dataclass(frozen=True)
class Read:
    """One Python value a compile read. ``owner``: for a NAME, "" (the kernel's own scope) or the
    module whose globals a helper reads; for an ATTR, "module" or "module:Qual.name" of the
    namespace. None when it cannot be found again (the compile then has no disk key)."""

    kind: ReadKind
    owner: str | None
    name: str
    fingerprint: str | None  # None: no fingerprint stable across processes


@functools.lru_cache(maxsize=1024)
def source_of(fn: Callable[..., Any]) -> tuple[str, str, int]:
    """The function's source text as read once per process (the front end compiles exactly this
    text and caches key by its digest, so a file edited later cannot mix old and new), its file,
    and the line offset that makes lines of the text real; a SourceUnavailable if it has none."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except OSError as exc:
        raise SourceUnavailable(f"{exc} of {fn.__qualname__}: the compiler reads the Python source of kernels and "
                                "helpers, which a function defined by exec or in an interactive session lacks; "
                                "define it in a .py module") from None
    return "".join(lines), inspect.getsourcefile(fn) or fn.__code__.co_filename, first - 1


def source_digest(fn: Callable[..., Any]) -> str:
    return hashlib.sha256(source_of(fn)[0].encode()).hexdigest()[:32]


def closure_vars(fn: Callable[..., Any]) -> dict[str, Any]:
    """The function's closure values by name (an empty cell, not yet assigned, is left out)."""
    cells = getattr(fn, "__closure__", None) or ()
    out: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


def module_owner(globals_: Mapping[str, Any]) -> str | None:
    """The name of the module whose namespace ``globals_`` is, or None if it is not importable
    under that name (code run by ``exec``)."""
    name = globals_.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    return name if module is not None and module.__dict__ is globals_ else None


def location(obj: Any) -> str | None:
    """"module:Qual.name" where a module or class can be imported from, or None."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__ if sys.modules.get(obj.__name__) is obj else None
    qualname = getattr(obj, "__qualname__", "")
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or "<" in qualname:
        return None
    return f"{module}:{qualname}" if _find(f"{module}:{qualname}") is obj else None


def _find(owner: str) -> Any:
    module, _, qualname = owner.partition(":")
    obj: Any = sys.modules.get(module, _MISSING)
    for part in qualname.split(".") if qualname else ():
        obj = getattr(obj, part, _MISSING)
    return obj


def fingerprint(value: Any) -> str | None:
    """Text equal for two values only if compiling against either gives the same code: type and
    ``repr`` for plain data (so 4, 4.0 and True differ, as do 0.0 and -0.0), where functions and
    classes are defined (plus the source of helpers the compiler inlines). None for values with
    no such text (an object whose ``repr`` shows only its address)."""
    kind = type(value)
    if kind in _SCALARS:
        return f"{kind.__name__}:{value!r}"
    if kind in (tuple, list, frozenset, set):
        parts = [fingerprint(v) for v in value]
        if kind in (frozenset, set):
            parts = sorted(parts, key=str)
        return None if None in parts else f"{kind.__name__}({','.join(typing.cast(list[str], parts))})"
    if kind is dict:
        return _joined("dict", [fingerprint(k) for k in value] + [fingerprint(v) for v in value.values()])
    if isinstance(value, (types.ModuleType, type)):
        where = location(value)
        return None if where is None else f"{'module' if isinstance(value, types.ModuleType) else 'class'}:{where}"
    if isinstance(value, enum.Enum):
        where = location(kind)
        return None if where is None else f"enum:{where}.{value.name}"
    if typing.get_origin(value) is not None:  # Float[W32] and other generic aliases
        return _joined(f"alias:{value!r}", [fingerprint(typing.get_origin(value))])
    helper = inlinable(value)
    if helper is not None:
        return f"helper:{helper.__module__}:{helper.__qualname__}:{source_digest(helper)}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return f"function:{value.__module__}:{value.__qualname__}"  # a tl builtin, or not callable in kernels
    if isinstance(value, functools.partial):
        return _joined("partial", [fingerprint(value.func), fingerprint(value.args), fingerprint(value.keywords)])
    if dataclasses.is_dataclass(value) and getattr(kind, "__dataclass_params__").frozen:
        where = location(kind)
        fields = [fingerprint(getattr(value, f.name)) for f in dataclasses.fields(value)]
        return None if where is None else _joined(f"data:{where}", fields)
    if isinstance(value, _numpy_types()):
        return f"numpy.{kind.__name__}:{value!r}"
    return None


def _joined(head: str, parts: list[str | None]) -> str | None:
    return None if None in parts else f"{head}({','.join(typing.cast(list[str], parts))})"


@functools.lru_cache(maxsize=1)
def _numpy_types() -> tuple[type, ...]:
    import numpy as np

    return (np.generic, np.dtype)


def current(read: Read, kernel_fn: Callable[..., Any]) -> str | None:
    """The fingerprint of what ``read`` resolves to now (``kernel_fn`` is the kernel's function,
    for reads in its own scope); None if it cannot be resolved without compiling."""
    if read.owner is None:
        return None
    if read.kind is ReadKind.ATTR:
        namespace = _find(read.owner)
        return _ABSENT if namespace is _MISSING else _fingerprint_or_absent(getattr(namespace, read.name, _MISSING))
    if read.owner:
        module = sys.modules.get(read.owner)
        scopes: list[Mapping[str, Any]] = [module.__dict__] if module is not None else []
    else:
        scopes = [closure_vars(kernel_fn), kernel_fn.__globals__]
    for scope in (*scopes, builtins.__dict__):
        if read.name in scope:
            return fingerprint(scope[read.name])
    return _ABSENT


def _fingerprint_or_absent(value: Any) -> str | None:
    return _ABSENT if value is _MISSING else fingerprint(value)
