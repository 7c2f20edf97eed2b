"""A clean kernel one package down, and one constexpr-free kernel checked without a declaration."""

from __future__ import annotations

import tile_lang as tl
from tile_lang import Pointer, f32


@tl.kernel
def fill_one(x_ptr: Pointer[f32]) -> None:
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.full([16], 1.0, tl.f32))
