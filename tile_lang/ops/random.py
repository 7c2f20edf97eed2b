"""Counter-based random numbers (Philox 4x32), bit-exact with Triton's streams."""

from __future__ import annotations

from tile_lang.builtin import builtin
from typing import Any, TypeAlias

from tile_lang.dtypes import Float, Int, UInt, W32
from tile_lang.ops.math import IntT
from tile_lang.tensor import R0, R, Tensor

DEFAULT_ROUNDS = 10

Seed: TypeAlias = int | Tensor[Int[Any], R0] | Tensor[UInt[Any], R0]
"""A seed: a scalar argument or a value loaded from memory (``tl.load(seed_ptr)``)."""


@builtin
def randint(seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS) -> Tensor[UInt[W32], R]:
    """One block of random u32 (the first Philox output) for ``(seed, offset)``."""


@builtin
def randint4x(
    seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS
) -> tuple[Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R]]:
    """All four Philox outputs for ``(seed, offset)``."""


@builtin
def rand(seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS) -> Tensor[Float[W32], R]:
    """Uniform f32 in [0, 1) for ``(seed, offset)``."""


@builtin
def randn(seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS) -> Tensor[Float[W32], R]:
    """Standard normal f32 (Box-Muller on two uniforms) for ``(seed, offset)``."""
