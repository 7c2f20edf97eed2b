"""Elementwise ops on random inputs against NumPy float64 references, on every backend."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr, f32, i32
from typing import TypeVar

W = TypeVar("W", bound=Width)
N = 300  # ragged: not a multiple of BLOCK
BLOCK = 128


@tl.kernel
def exp_kernel(x: Pointer[Float[W]], out: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(out + offs, tl.exp(v), mask=m)


@tl.kernel
def math_kernel(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Eleven unary functions of x, stored in eleven rows of out."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=1.0)
    a = tl.abs(v) + 0.5
    tl.store(out + offs, tl.log(a), mask=m)
    tl.store(out + n + offs, tl.log2(a), mask=m)
    tl.store(out + 2 * n + offs, tl.sqrt(a), mask=m)
    tl.store(out + 3 * n + offs, tl.rsqrt(a), mask=m)
    tl.store(out + 4 * n + offs, tl.sin(v), mask=m)
    tl.store(out + 5 * n + offs, tl.cos(v), mask=m)
    tl.store(out + 6 * n + offs, tl.exp2(v), mask=m)
    tl.store(out + 7 * n + offs, tl.erf(v), mask=m)
    tl.store(out + 8 * n + offs, tl.atan(v), mask=m)
    tl.store(out + 9 * n + offs, tl.sigmoid(v), mask=m)
    tl.store(out + 10 * n + offs, tl.floor(v) + tl.ceil(v), mask=m)


@tl.kernel
def int_kernel(x: Pointer[i32], y: Pointer[i32], out: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    """C division and remainder, bitwise ops, shifts, min/max and where on i32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1)
    b = tl.load(y + offs, mask=m, other=1)
    tl.store(out + offs, a // b, mask=m)
    tl.store(out + n + offs, a % b, mask=m)
    tl.store(out + 2 * n + offs, (a & b) ^ (a | 7), mask=m)
    tl.store(out + 3 * n + offs, (a << 3) + (a >> 2), mask=m)
    tl.store(out + 4 * n + offs, tl.maximum(a, b) - tl.minimum(a, b), mask=m)
    tl.store(out + 5 * n + offs, tl.where(a > b, a * b, -a), mask=m)


@tl.kernel
def cast_kernel(x: Pointer[f32], h: Pointer[tl.f16], b: Pointer[tl.bf16], i: Pointer[i32], n: int,
                BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(h + offs, v.to(tl.f16), mask=m)
    tl.store(b + offs, v.to(tl.bf16), mask=m)
    tl.store(i + offs, v.to(tl.i32), mask=m)


def grid(n: int) -> tuple[int]:
    return (tl.cdiv(n, BLOCK),)


@pytest.mark.parametrize("dtype", [tl.f16, tl.bf16, tl.f32, tl.f64])
def test_exp_every_float_dtype(tile_backend: str, dtype: Any) -> None:
    np_type = {tl.f16: np.float16, tl.bf16: ml_dtypes.bfloat16, tl.f32: np.float32, tl.f64: np.float64}[dtype]
    host = np.random.default_rng(0).uniform(-4, 4, N).astype(np_type)
    out = tl.to_device(np.full(N, np.nan).astype(np_type))
    exp_kernel[grid(N)](tl.to_device(host), out, N, BLOCK=BLOCK)
    tol = {tl.f16: 2e-3, tl.bf16: 1e-2, tl.f32: 1e-6, tl.f64: 1e-12}[dtype]
    np.testing.assert_allclose(out.numpy().astype(np.float64), np.exp(host.astype(np.float64)), rtol=tol)


def test_unary_math(tile_backend: str) -> None:
    v = np.random.default_rng(1).uniform(-3, 3, N).astype(np.float32)
    out = tl.to_device(np.full(11 * N, np.nan, np.float32), tl.f32)
    math_kernel[grid(N)](tl.to_device(v, tl.f32), out, N, BLOCK=BLOCK)
    x = v.astype(np.float64)
    a = np.abs(x) + 0.5
    erf = np.vectorize(__import__("math").erf)(x)
    expected = [np.log(a), np.log2(a), np.sqrt(a), 1 / np.sqrt(a), np.sin(x), np.cos(x), np.exp2(x), erf,
                np.arctan(x), 1 / (1 + np.exp(-x)), np.floor(x) + np.ceil(x)]
    np.testing.assert_allclose(out.numpy().reshape(11, N), np.stack(expected), rtol=2e-6, atol=2e-6)


def test_integer_semantics_are_c(tile_backend: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-1000, 1000, N).astype(np.int32)
    b = rng.integers(1, 50, N).astype(np.int32) * rng.choice([-1, 1], N).astype(np.int32)
    out = tl.to_device(np.full(6 * N, -7, np.int32), tl.i32)
    int_kernel[grid(N)](tl.to_device(a, tl.i32), tl.to_device(b, tl.i32), out, N, BLOCK=BLOCK)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    quotient = np.trunc(a64 / b64).astype(np.int64)
    expected = [quotient, a64 - quotient * b64, (a64 & b64) ^ (a64 | 7), (a64 << 3) + (a64 >> 2),
                np.maximum(a64, b64) - np.minimum(a64, b64), np.where(a64 > b64, a64 * b64, -a64)]
    np.testing.assert_array_equal(out.numpy().reshape(6, N), np.stack(expected))


def test_casts_round_to_nearest_even_and_saturate(tile_backend: str) -> None:
    rng = np.random.default_rng(3)
    v = (rng.standard_normal(N) * 1e3).astype(np.float32)
    v[:4] = [3e9, -3e9, np.nan, 2.5]
    h = tl.to_device(np.full(N, np.nan, np.float16), tl.f16)
    b = tl.to_device(np.full(N, np.nan, ml_dtypes.bfloat16), tl.bf16)
    i = tl.to_device(np.full(N, -1, np.int32), tl.i32)
    cast_kernel[grid(N)](tl.to_device(v, tl.f32), h, b, i, N, BLOCK=BLOCK)
    np.testing.assert_array_equal(h.numpy()[4:], v[4:].astype(np.float16))
    np.testing.assert_array_equal(b.numpy()[4:], v[4:].astype(ml_dtypes.bfloat16))
    expected_i = np.trunc(v[4:]).astype(np.int32)
    np.testing.assert_array_equal(i.numpy()[4:], expected_i)
    np.testing.assert_array_equal(i.numpy()[:4], [2**31 - 1, -(2**31), 0, 2])


@tl.kernel
def wide_casts(x: Pointer[tl.f64], i: Pointer[tl.i64], u: Pointer[tl.u64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(i + offs, v.to(tl.i64))
    tl.store(u + offs, v.to(tl.u64))


def test_casts_to_64_bit_integers_saturate_on_the_reference() -> None:
    """Past 2**63 (2**64 unsigned) a cast gives the largest value, as the GPU's cvt.rzi does (they
    wrapped to the smallest before: 2**63 - 1 has no float, so clipping to it overflowed); the
    CPU emulator follows x86 here, so only the reference is asked."""
    v = np.array([9.3e18, 2.0**63, -(2.0**63), -1e30, 1e30, 1.8e19, 2.0**64, np.nan, -1.5, 2.0**53 + 2], np.float64)
    with tl.backend("numpy"):
        i, u = tl.to_device(np.zeros(16, np.int64)), tl.to_device(np.zeros(16, np.uint64))
        wide_casts[(1,)](tl.to_device(np.resize(v, 16)), i, u, BLOCK=16)
        got_i, got_u = i.numpy()[:10].tolist(), u.numpy()[:10].tolist()
    top, bottom = 2**63 - 1, -(2**63)
    assert got_i == [top, top, bottom, bottom, top, top, top, 0, -1, 2**53 + 2]
    assert got_u == [9300000000000000000, 2**63, 0, 0, 2**64 - 1, 18000000000000000000, 2**64 - 1, 0, 0, 2**53 + 2]


@tl.kernel
def promote_kernel(x: Pointer[tl.f16], y: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0.0)
    b = tl.load(y + offs, mask=m, other=0.0)
    tl.store(out + offs, a.to(tl.f32) * b + 1.5, mask=m)


def test_mixed_precision_arithmetic(tile_backend: str) -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal(N).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float32)
    out = tl.to_device(np.full(N, np.nan, np.float32), tl.f32)
    promote_kernel[grid(N)](tl.to_device(a, tl.f16), tl.to_device(b, tl.f32), out, N, BLOCK=BLOCK)
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) * b + 1.5, rtol=1e-6, atol=1e-6)


def test_masked_load_without_other_is_poison_on_reference() -> None:
    @tl.kernel
    def leak(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
        offs = tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n)
        tl.store(out + offs, v)

    with tl.backend("numpy"):
        out = tl.to_device(np.zeros(8, np.float32), tl.f32)
        leak[(1,)](tl.to_device(np.ones(8, np.float32), tl.f32), out, 5, BLOCK=8)
        got = out.numpy()
        np.testing.assert_array_equal(got[:5], 1.0)
        assert np.isnan(got[5:]).all()


def test_integer_division_by_zero_is_an_error_on_reference() -> None:
    with tl.backend("numpy"):
        a = tl.to_device(np.arange(N, dtype=np.int32), tl.i32)
        zero = tl.to_device(np.zeros(N, np.int32), tl.i32)
        with pytest.raises(tl.KernelError, match="integer division by zero"):
            int_kernel[grid(N)](a, zero, tl.empty(6 * N, tl.i32), N, BLOCK=BLOCK)


