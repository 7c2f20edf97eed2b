"""Kernels that compile: the specialisations to check are listed in ``TILE_LANG_CHECK``."""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr, f32
from tile_lang.check import Specialization

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def scale(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.f32)
    tl.store(out_ptr + offs, (x * 2.0).to(x_ptr.dtype.element_ty), mask=offs < n)


@tl.kernel
def copy_with_default(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr = 64) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def needs_block(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


TILE_LANG_CHECK = [
    Specialization(scale, {"BLOCK": 128}),
    Specialization(scale, {"BLOCK": 256, "x_ptr": tl.f16, "out_ptr": tl.f16}, num_warps=8),
]
