"""Fixed costs of a launch on the reference that a test's first launch pays."""

from __future__ import annotations

import tile_lang as tl
from tile_lang.signature import Param, ParamKind, infer


class Unprintable:
    """An argument whose repr is expensive (a torch tensor's formats every element): typing it
    must not build an error message with it."""

    def __repr__(self) -> str:
        raise AssertionError("repr called while typing an argument")


def test_an_unannotated_argument_is_typed_without_its_repr() -> None:
    param = Param("x", ParamKind.UNANNOTATED, None)
    assert infer(param, Unprintable()).kind is ParamKind.POINTER
    assert infer(param, tl.f32).kind is ParamKind.CONSTEXPR  # dtype markers are still constants
    assert infer(param, tl.float8e4b15).kind is ParamKind.CONSTEXPR  # Triton's fp8 variants too
