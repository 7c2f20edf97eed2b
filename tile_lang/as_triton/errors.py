"""The shim's error for a Triton name it does not provide."""

from __future__ import annotations

from typing import NoReturn

from tile_lang.errors import TileLangError

DOCS = "docs/triton.md, 'Running Triton code'"


class TritonNameError(TileLangError, AttributeError):
    """A Triton name (or option) that tile_lang's Triton shim does not provide; an AttributeError,
    so ``hasattr(triton.language, name)`` feature checks keep working."""


def missing(qualname: str, why: str = "tile_lang has no counterpart") -> NoReturn:
    raise TritonNameError(f"{qualname} is not provided when Triton code runs on tile_lang: {why} (see {DOCS})")


def unprovided_class(qualname: str, why: str) -> type:
    """A stand-in for a Triton class the shim does not provide, so a module importing it still
    imports (Triton's test files import ``triton.tools.mxfp`` at their top): making one is the
    :func:`missing` error, at the user's line."""
    def refuse(self: object, *args: object, **kwargs: object) -> None:
        missing(qualname, why)

    return type(qualname.rpartition(".")[2], (), {"__init__": refuse, "__doc__": f"Not provided: {why}."})
