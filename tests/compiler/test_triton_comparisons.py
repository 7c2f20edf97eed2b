"""A block compared with a Python number, as Triton 3.6 compares them: the number is first a
tensor of its own dtype (f32, or f64 outside f32's normal range, for a float; i32, u32, i64 or u64
for an int; int1 for a bool), promoted with the block as two blocks are. So ``h < 0.1`` of f16
compares in f32, ``f64_block < 0.1`` against 0.1 rounded to f32, ``u32_block > -1`` against
0xFFFFFFFF (false, no error), ``u8_block > -1`` in i32 (true), ``i8_block < 300`` in i32 and
``i32_block < 2**31`` in u32. On the NumPy reference and the generated CUDA (CPU emulator),
into poisoned outputs, against NumPy comparisons in the dtypes Triton uses, on seeded inputs
drawn so that comparing in the block's own dtype would give other answers."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, bf16, constexpr, f16, f32, f64, i8, i32, u8, u32, u64

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 64


@tl.kernel
def float_comparisons(h_ptr: Pointer[f16], g_ptr: Pointer[bf16], x_ptr: Pointer[f32], d_ptr: Pointer[f64],
                      o_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    h, g, x, d = tl.load(h_ptr + offs), tl.load(g_ptr + offs), tl.load(x_ptr + offs), tl.load(d_ptr + offs)
    lt = h < 0.1
    tl.static_assert(lt.dtype == tl.int1)
    tl.store(o_ptr + offs, lt.to(tl.int32))
    tl.store(o_ptr + B + offs, (h == 0.1).to(tl.int32))
    tl.store(o_ptr + 2 * B + offs, (3.14159 <= g).to(tl.int32))
    tl.store(o_ptr + 3 * B + offs, (g != 3.14159).to(tl.int32))
    tl.store(o_ptr + 4 * B + offs, (d < 0.1).to(tl.int32))
    tl.store(o_ptr + 5 * B + offs, (d == 0.1).to(tl.int32))
    tl.store(o_ptr + 6 * B + offs, (x > 1e-50).to(tl.int32))
    tl.store(o_ptr + 7 * B + offs, (h >= 1).to(tl.int32))  # an int meets f16 in f16, as before


def test_float_blocks_compare_with_the_number_as_its_own_tensor(target: str) -> None:
    rng = np.random.default_rng(21)
    near = np.array([0.1, 3.14159, 0.0, 1.0])[rng.integers(0, 4, B)] * (1 + rng.choice([0, 0, 2**-9, -2**-9], B))
    h = near.astype(np.float16)
    g = near.astype(ml_dtypes.bfloat16)
    x = np.where(rng.random(B) < 0.5, 0.0, 1e-30).astype(np.float32)
    d = np.where(rng.random(B) < 0.5, np.float64(np.float32(0.1)), 0.1) * (1 + rng.choice([0, 2**-40], B))
    with tl.backend(target):
        out = tl.to_device(np.full(8 * B, -7, np.int32))
        float_comparisons[(1,)](tl.to_device(h), tl.to_device(g), tl.to_device(x), tl.to_device(d), out, B=B)
        got = out.numpy().reshape(8, B)
    tenth, pi = np.float32(0.1), np.float32(3.14159)
    want = [h.astype(np.float32) < tenth, h.astype(np.float32) == tenth,
            pi <= g.astype(np.float32), g.astype(np.float32) != pi,
            d < np.float64(tenth), d == np.float64(tenth), x.astype(np.float64) > 1e-50, h >= np.float16(1)]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(got[k], w.astype(np.int32), err_msg=f"comparison {k}")
    # the inputs tell the rules apart: in f16 (bf16, f64) the first six would answer otherwise
    assert (h < np.float16(0.1)).tolist() != want[0].tolist()
    assert (g >= ml_dtypes.bfloat16(3.14159)).tolist() != want[2].tolist()
    assert (d < 0.1).tolist() != want[4].tolist()


@tl.kernel
def int_comparisons(b_ptr: Pointer[i8], u_ptr: Pointer[u8], w_ptr: Pointer[u32], i_ptr: Pointer[i32],
                    q_ptr: Pointer[u64], o_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    b, u, w = tl.load(b_ptr + offs), tl.load(u_ptr + offs), tl.load(w_ptr + offs)
    i, q = tl.load(i_ptr + offs), tl.load(q_ptr + offs)
    tl.store(o_ptr + offs, (b < 300).to(tl.int32))
    tl.store(o_ptr + B + offs, (b == 300).to(tl.int32))
    tl.store(o_ptr + 2 * B + offs, (u > -1).to(tl.int32))
    tl.store(o_ptr + 3 * B + offs, (w > -1).to(tl.int32))
    tl.store(o_ptr + 4 * B + offs, (-1 < w).to(tl.int32))
    tl.store(o_ptr + 5 * B + offs, (i < 2**31).to(tl.int32))
    tl.store(o_ptr + 6 * B + offs, (q >= -2**40).to(tl.int32))


def test_int_blocks_compare_with_the_number_as_its_own_tensor(target: str) -> None:
    """No range errors: the number keeps its own type and the two promote (wrapping where
    Triton's cast of a negative int to unsigned wraps)."""
    rng = np.random.default_rng(22)
    b = rng.integers(-128, 128, B).astype(np.int8)
    u = rng.integers(0, 256, B).astype(np.uint8)
    w = np.where(rng.random(B) < 0.3, 2**32 - 1, rng.integers(0, 2**32, B)).astype(np.uint32)
    i = rng.integers(-2**31, 2**31, B).astype(np.int32)
    q = np.where(rng.random(B) < 0.3, 2**64 - 2**40, rng.integers(0, 2**63, B).astype(np.uint64)).astype(np.uint64)
    with tl.backend(target):
        out = tl.to_device(np.full(7 * B, -7, np.int32))
        int_comparisons[(1,)](tl.to_device(b), tl.to_device(u), tl.to_device(w), tl.to_device(i), tl.to_device(q), out, B=B)
        got = out.numpy().reshape(7, B)
    want: list[Any] = [b.astype(np.int64) < 300, b.astype(np.int64) == 300, np.ones(B, bool), w > np.uint32(2**32 - 1),
                       np.uint32(2**32 - 1) < w, i.view(np.uint32) < np.uint32(2**31),
                       q >= np.uint64(2**64 - 2**40)]
    for k, wanted in enumerate(want):
        np.testing.assert_array_equal(got[k], np.asarray(wanted).astype(np.int32), err_msg=f"comparison {k}")
    assert (w == 2**32 - 1).any() and (i < 0).any() and (q == 2**64 - 2**40).any()
