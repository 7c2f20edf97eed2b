"""Counter-based random numbers (Philox 4x32), bit-exact with Triton's streams."""

from __future__ import annotations

from tile_lang.builtin import builtin
from typing import Any, TypeAlias

from tile_lang.dtypes import Float, Int, UInt, W32, float32, int32, int64, uint32, uint64
from tile_lang.func import helper
from tile_lang.ops.creation import cast
from tile_lang.ops.debug import static_assert
from tile_lang.ops.iterators import static_range
from tile_lang.ops.math import IntT, cos, log, maximum, sin, sqrt, umulhi, where
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


@helper
def philox_impl(c0: Tensor[UInt[W32], R], c1: Tensor[UInt[W32], R], c2: Tensor[UInt[W32], R],
                c3: Tensor[UInt[W32], R], k0: Tensor[UInt[W32], Any], k1: Tensor[UInt[W32], Any],
                n_rounds: int = DEFAULT_ROUNDS
                ) -> tuple[Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R]]:
    """``n_rounds`` rounds of Philox 4x32 on the counters ``c0..c3`` with the key ``(k0, k1)``:
    each round multiplies two counters by the round constants (high and low halves, wrapping),
    mixes in the other two and the key, then advances the key by the Weyl constants."""
    static_assert(c0.dtype == uint32, "tl.philox_impl: the counters must be u32 blocks (64-bit Philox is not supported yet)")
    for _ in static_range(n_rounds):
        hi0 = umulhi(c2, 0xCD9E8D57) ^ c1 ^ k0
        hi2 = umulhi(c0, 0xD2511F53) ^ c3 ^ k1
        c1 = c2 * 0xCD9E8D57
        c3 = c0 * 0xD2511F53
        c0, c2 = hi0, hi2
        k0 = k0 + 0x9E3779B9
        k1 = k1 + 0xBB67AE85
    return c0, c1, c2, c3


@helper
def philox(seed: Seed, c0: Tensor[IntT, R], c1: Tensor[IntT, R], c2: Tensor[IntT, R], c3: Tensor[IntT, R],
           n_rounds: int = DEFAULT_ROUNDS
           ) -> tuple[Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R], Tensor[UInt[W32], R]]:
    """Philox 4x32 of four 32-bit counter blocks (their bits read as u32), keyed by the low and
    high words of the 64-bit ``seed``; ``tl.randint4x(seed, offset)`` is ``philox(seed, offset, 0, 0, 0)``
    for a 32-bit ``offset``."""
    static_assert(c0.dtype.primitive_bitwidth == 32, "tl.philox: the counters must be 32-bit (64-bit Philox is not supported yet)")
    wide = cast(seed, uint64)
    return philox_impl(c0.to(uint32, bitcast=True), c1.to(uint32, bitcast=True), c2.to(uint32, bitcast=True),
                       c3.to(uint32, bitcast=True), (wide & 0xFFFFFFFF).to(uint32), (wide >> 32).to(uint32), n_rounds)


@helper
def uint_to_uniform_float(x: Tensor[IntT, R]) -> Tensor[Float[W32], R]:
    """Random 32- or 64-bit integers as f32 uniform in [0, 1), as Triton's: the bits read as
    signed, a negative ``v`` folded onto ``-v - 1`` (``~v``, which cannot overflow), scaled by
    the largest factor that keeps the largest value below 1."""
    if x.dtype.primitive_bitwidth == 64:
        wide = x.to(int64, bitcast=True)
        return where(wide < 0, ~wide, wide).to(float32) * 1.0842020432385337e-19
    bits = x.to(int32, bitcast=True)
    return where(bits < 0, ~bits, bits).to(float32) * 4.6566127342e-10


@helper
def rand4x(
    seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS
) -> tuple[Tensor[Float[W32], R], Tensor[Float[W32], R], Tensor[Float[W32], R], Tensor[Float[W32], R]]:
    """Four blocks of uniform f32 in [0, 1) for ``(seed, offset)``: the four Philox outputs."""
    i1, i2, i3, i4 = randint4x(seed, offset, n_rounds)
    return uint_to_uniform_float(i1), uint_to_uniform_float(i2), uint_to_uniform_float(i3), uint_to_uniform_float(i4)


@helper
def pair_uniform_to_normal(u1: Tensor[Float[W32], R], u2: Tensor[Float[W32], R]
                           ) -> tuple[Tensor[Float[W32], R], Tensor[Float[W32], R]]:
    """Two uniforms to two standard normals (Box-Muller), as Triton's and ``tl.randn``."""
    u1 = maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = sqrt(-2.0 * log(u1))
    return r * cos(th), r * sin(th)


@helper
def randn4x(
    seed: Seed, offset: Tensor[IntT, R], n_rounds: int = DEFAULT_ROUNDS
) -> tuple[Tensor[Float[W32], R], Tensor[Float[W32], R], Tensor[Float[W32], R], Tensor[Float[W32], R]]:
    """Four blocks of standard normal f32 for ``(seed, offset)``; the first is ``tl.randn``'s."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
