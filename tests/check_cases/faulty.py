"""Kernels mypy accepts and the compiler rejects (blocks as Python truth values too); each CHECK comment
holds the message fragment ``tile-lang check`` must report at that line (tests/test_check.py)."""

from __future__ import annotations

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr, f32
from tile_lang.check import Specialization


@tl.kernel
def runtime_arange(x_ptr: Pointer[f32], n: int) -> None:
    offs = tl.arange(0, n)  # CHECK: tl.arange: end must be a compile-time int, got a runtime value
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@tl.kernel
def odd_block(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)  # CHECK: the length must be a positive power of two
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@tl.kernel
def builtin_abs(x_ptr: Pointer[f32], n: int, BLOCK: constexpr = 64) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < abs(offs - n)))  # type: ignore[arg-type]  # CHECK: abs


@tl.kernel  # CHECK: constexpr BLOCK must be int
def wrong_declaration(x_ptr: Pointer[f32], BLOCK: Constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@tl.kernel
def block_as_condition(x_ptr: Pointer[f32], BLOCK: constexpr = 64) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if x > 0.0:  # CHECK: used as a condition
        tl.store(x_ptr + offs, -x)


TILE_LANG_CHECK = [
    Specialization(odd_block, {"BLOCK": 64}),
    Specialization(odd_block, {"BLOCK": 100}),
    Specialization(wrong_declaration, {"BLOCK": "wide"}),
]
