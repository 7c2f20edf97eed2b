"""Philox 4x32 random numbers, bit-exact with Triton's ``randint``/``randint4x``/``rand`` streams.

The counter is ``(offset_lo, offset_hi, 0, 0)`` and the key is the seed, sign-extended to 64
bits and split into two words, as Triton 3.4+ does. All arithmetic is uint32 that wraps; the
32x32 -> 64-bit products use uint64. ``randn`` is Triton's Box-Muller in f32; its log, sqrt,
cos are correctly rounded here, so it differs from the GPU's approximate ones by about 1e-6.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import F32, U32
from tile_lang.tensor import Tensor

from tile_lang_numpy import values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.values import Array

KEY_A = np.uint32(0x9E3779B9)
KEY_B = np.uint32(0xBB67AE85)
ROUND_A = np.uint64(0xD2511F53)
ROUND_B = np.uint64(0xCD9E8D57)
LOW32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
UNIFORM_SCALE = np.float32(4.6566127342e-10)  # (1 - 2**-24) * 2**-31 once rounded to f32
MIN_UNIFORM = np.float32(1.0e-7)
TWO_PI = np.float32(6.283185307179586)

Words = tuple[Array, Array, Array, Array]


def philox(key: tuple[Array, Array], counter: Words, n_rounds: int) -> Words:
    """Random123 ``philox4x32``: ``n_rounds`` rounds on uint32 words (broadcast together)."""
    k0, k1 = key
    c0, c1, c2, c3 = counter
    for _ in range(n_rounds):
        p0 = ROUND_A * c0.astype(np.uint64)
        p2 = ROUND_B * c2.astype(np.uint64)
        c0, c1, c2, c3 = (
            (p2 >> SHIFT32).astype(np.uint32) ^ c1 ^ k0,
            (p2 & LOW32).astype(np.uint32),
            (p0 >> SHIFT32).astype(np.uint32) ^ c3 ^ k1,
            (p0 & LOW32).astype(np.uint32),
        )
        k0, k1 = k0 + KEY_A, k1 + KEY_B
    return c0, c1, c2, c3


def _widened(t: Tensor[Any, Any]) -> Array:
    """The values as 64-bit words: signed types sign-extend, unsigned ones zero-extend."""
    return values.array(t).astype(np.int64 if t.type.is_signed else np.uint64).view(np.uint64)


def _words(engine: Engine, a: Mapping[str, Any]) -> Words:
    """Triton's ``randint4x(seed, offset, n_rounds)``: four uint32 blocks."""
    seed, offset = values.lift(a["seed"]), values.lift(a["offset"])
    rank, n_rounds = len(a["shape"]), a["n_rounds"]
    s = values.align(_widened(seed), seed.ndim, rank)
    o = values.align(_widened(offset), offset.ndim, rank)
    key = ((s & LOW32).astype(np.uint32), (s >> SHIFT32).astype(np.uint32))
    lo = (o & LOW32).astype(np.uint32)
    hi = (o >> SHIFT32).astype(np.uint32) if offset.type.bits > 32 else np.zeros_like(lo)
    zero = np.zeros_like(lo)
    shape = np.broadcast_shapes(s.shape, o.shape)
    engine.note_block(math.prod(shape[1:]))
    c0, c1, c2, c3 = (np.broadcast_to(w, shape) for w in philox(key, (lo, hi, zero, zero), n_rounds))
    return c0, c1, c2, c3


def uniform(x: Array) -> Array:
    """Triton's ``uint_to_uniform_float`` for 32-bit words: f32 in [0, 1)."""
    signed = x.view(np.int32)
    folded = np.where(signed < 0, ~signed, signed)
    return folded.astype(np.float32) * UNIFORM_SCALE


def _f32(x: Array) -> Array:
    return x.astype(np.float32)


def normal(u1: Array, u2: Array) -> Array:
    """The cosine branch of Triton's ``pair_uniform_to_normal``, in f32."""
    u1 = np.maximum(MIN_UNIFORM, u1)
    theta = TWO_PI * u2
    radius = np.sqrt(np.float32(-2.0) * _f32(np.log(u1.astype(np.float64))))
    return radius * _f32(np.cos(theta.astype(np.float64)))


@implements(tl.randint4x)
def randint4x(engine: Engine, a: Mapping[str, Any]) -> tuple[Tensor[Any, Any], ...]:
    return tuple(values.make(w, U32) for w in _words(engine, a))


@implements(tl.randint)
def randint(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return values.make(_words(engine, a)[0], U32)


@implements(tl.rand)
def rand(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    return values.make(uniform(_words(engine, a)[0]), F32)


@implements(tl.randn)
def randn(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    c0, c1, _, _ = _words(engine, a)
    return values.make(normal(uniform(c0), uniform(c1)), F32)
