"""tl.dot and tl.dot_scaled: tiled ragged matmuls against float64 references that model the GPU's
operand rounding (tf32 truncation, the tf32x3 split) and f32 accumulation, for every operand dtype."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Dtype, Float, Pointer, constexpr, f32, i8, u8
from tile_lang.ops.linalg import InputPrecision

from tests.numpy_backend._support import benign_races, name, np_type, poisoned

W = TypeVar("W", bound=tl.Width)
D = TypeVar("D", bound=Dtype)
E = TypeVar("E", bound=Dtype)

M, N, K = 37, 45, 70  # ragged against 32 x 32 x 16 tiles, so every edge is masked
BM, BN, BK = 32, 32, 16
GRID = (tl.cdiv(M, BM), tl.cdiv(N, BN))
Array = Any


@tl.kernel
def matmul(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[f32], M: int, N: int, K: int,
           BM: constexpr, BN: constexpr, BK: constexpr, PRECISION: Constexpr[InputPrecision]) -> None:
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.f32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def bits(x: Array) -> Array:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def truncated(x: Array) -> Array:
    """What a tf32 tensor core reads: the low 13 mantissa bits ignored."""
    return (bits(x) & np.uint32(0xFFFFE000)).view(np.float32)


def rna(x: Array) -> Array:
    """cvt.rna.tf32.f32 on finite values: round half away from zero to 10 mantissa bits."""
    return ((bits(x) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def tile_dot(a: Array, b: Array, acc: Array) -> Array:
    """One dot accumulated into f32, modelled as exact products and one rounding (the backends
    sum in f32 in their own order, so comparisons allow a few f32 ulps)."""
    return (acc.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def tf32x3(a: Array, b: Array, acc: Array) -> Array:
    a_big, b_big = rna(a), rna(b)
    a_small, b_small = a - a_big, b - b_big
    zero = np.zeros_like(acc)
    partial = tile_dot(truncated(a_big), truncated(b_small), tile_dot(truncated(a_small), truncated(b_big), zero))
    return tile_dot(truncated(a_big), truncated(b_big), partial) + acc


DOTS: dict[str, Callable[[Array, Array, Array], Array]] = {
    "ieee": tile_dot,
    "tf32": lambda a, b, acc: tile_dot(truncated(a), truncated(b), acc),
    "tf32x3": tf32x3,
}


def chained(a: Array, b: Array, precision: str) -> Array:
    """The kernel's K loop: one f32-accumulating dot per K tile (zero-padded)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], BK):
        acc = DOTS[precision](a[:, k0:k0 + BK], b[k0:k0 + BK], acc)
    return acc


def operands(dtype: Any, seed: int) -> tuple[Array, Array]:
    gen = np.random.default_rng(seed)
    return (gen.standard_normal((M, K)).astype(np_type(dtype)), gen.standard_normal((K, N)).astype(np_type(dtype)))


@pytest.mark.parametrize("precision", ["ieee", "tf32", "tf32x3"])
def test_f32_dot_models_each_input_precision(tile_backend: str, precision: InputPrecision) -> None:
    a, b = operands(tl.f32, 40)
    c = poisoned((M, N), tl.f32)
    matmul[GRID](tl.to_device(a), tl.to_device(b), c, M, N, K, BM=BM, BN=BN, BK=BK, PRECISION=precision)
    np.testing.assert_allclose(c.numpy(), chained(a, b, precision), rtol=1e-5, atol=2e-5)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.numpy(), exact, rtol=2e-2 if precision == "tf32" else 1e-5, atol=1e-2)


@pytest.mark.parametrize("dtype", [tl.f16, tl.bf16], ids=name)
def test_half_dot_accumulates_in_f32(tile_backend: str, dtype: Any) -> None:
    a, b = operands(dtype, 41)
    c = poisoned((M, N), tl.f32)
    matmul[GRID](tl.to_device(a), tl.to_device(b), c, M, N, K, BM=BM, BN=BN, BK=BK, PRECISION="tf32")
    np.testing.assert_allclose(c.numpy(), chained(a, b, "ieee"), rtol=1e-5, atol=2e-5)


def test_tf32x3_keeps_infinities(tile_backend: str) -> None:
    """inf - rna(inf) is NaN; the split zeroes the NaN partial sums so inf survives (Triton >= 3.2)."""
    a = np.ones((32, 32), np.float32)
    a[3, 5] = np.inf
    c = poisoned((32, 32), tl.f32)
    matmul[(1, 1)](tl.to_device(a), tl.to_device(np.ones((32, 32), np.float32)), c, 32, 32, 32, BM=32, BN=32, BK=32,
                   PRECISION="tf32x3")
    want = np.full((32, 32), 32, np.float32)
    want[3] = np.inf
    np.testing.assert_array_equal(c.numpy(), want)


IDENTITY_CASES: dict[str, Callable[[Array], Array]] = {
    "ieee": lambda a: a,
    "tf32": truncated,
    "tf32x3": lambda a: rna(a) + truncated(a - rna(a)),
}


@pytest.mark.parametrize("precision", list(IDENTITY_CASES))
def test_product_with_identity_shows_operand_rounding(tile_backend: str, precision: InputPrecision) -> None:
    """A @ I exposes what the tensor cores saw of A (the GPU-verified facts, bit for bit)."""
    a = np.random.default_rng(42).standard_normal((32, 32)).astype(np.float32)
    c = poisoned((32, 32), tl.f32)
    matmul[(1, 1)](tl.to_device(a), tl.to_device(np.eye(32, dtype=np.float32)), c, 32, 32, 32, BM=32, BN=32, BK=32,
                   PRECISION=precision)
    np.testing.assert_array_equal(c.numpy(), IDENTITY_CASES[precision](a))


@tl.kernel
def tile_ops(a_ptr: Pointer[D], b_ptr: Pointer[D], acc_ptr: Pointer[E], c_ptr: Pointer[E],
             BM: constexpr, BN: constexpr, BK: constexpr, OUT: Constexpr[object]) -> None:
    """One tile: ``dot(a, b, acc, out_dtype=OUT)`` with the accumulator loaded from memory."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a: Any = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b: Any = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc: Any = tl.load(acc_ptr + rm[:, None] * BN + rn[None, :])
    out: Any = OUT
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, acc, out_dtype=out))


def run_tile(a: Array, b: Array, acc: Array, out: Any) -> Array:
    c = poisoned(acc.shape, out)
    with benign_races():  # both programs store the same tile
        tile_ops[(2,)](tl.to_device(a), tl.to_device(b), tl.to_device(acc), c, BM=a.shape[0], BN=b.shape[1],
                       BK=a.shape[1], OUT=out)
    return c.numpy()


@pytest.mark.parametrize("dtype", [tl.f16, tl.bf16], ids=name)
def test_half_out_dtype_rounds_the_f32_accumulation(tile_backend: str, dtype: Any) -> None:
    gen = np.random.default_rng(43)
    a, b = (gen.standard_normal(s).astype(np_type(dtype)) for s in ((16, 32), (32, 16)))
    acc = gen.standard_normal((16, 16)).astype(np_type(dtype))
    got = run_tile(a, b, acc, dtype)
    assert got.dtype == np_type(dtype)
    want = tile_dot(a, b, acc.astype(np.float32)).astype(np_type(dtype))
    # one rounding of the f32 sum to the half type; the f32 summation order may move it by an ulp
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2.0**-7, atol=2.0**-10)


@pytest.mark.parametrize("dtype", [tl.f8e4m3, tl.f8e5m2], ids=name)
def test_fp8_dot_accumulates_in_f32(tile_backend: str, dtype: Any) -> None:
    gen = np.random.default_rng(49)
    a, b = (gen.standard_normal(s).astype(np_type(dtype)) for s in ((16, 32), (32, 16)))
    acc = gen.standard_normal((16, 16)).astype(np.float32)
    np.testing.assert_allclose(run_tile(a, b, acc, tl.f32), tile_dot(a, b, acc), rtol=1e-6, atol=1e-6)


@tl.kernel
def widen_codes(x_ptr: Pointer[D], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))


@pytest.mark.parametrize("dtype", [tl.f8e4m3, tl.f8e5m2], ids=name)
def test_every_fp8_code_widens_to_its_value(tile_backend: str, dtype: Any) -> None:
    """All 256 codes (zeros, subnormals, infinities, NaNs) converted to f32 and through a dot with
    the identity: the values ml_dtypes gives in float64 (the reference widens fp8 by a table)."""
    codes = np.arange(256, dtype=np.uint8).view(np_type(dtype))
    want = codes.astype(np.float64)
    out = poisoned((256,), tl.f32)
    widen_codes[(1,)](tl.to_device(codes), out, BLOCK=256)
    np.testing.assert_array_equal(out.numpy().astype(np.float64), want)
    finite = codes[np.isfinite(want)]
    tile = np.resize(finite, 16 * 32).reshape(16, 32)  # every finite code (fp8 dots take K >= 32)
    eye = np.eye(32).astype(np_type(dtype))
    got = run_tile(tile, eye, np.zeros((16, 32), np.float32), tl.f32)
    np.testing.assert_array_equal(got.astype(np.float64), tile.astype(np.float64))


def test_f64_dot_is_f64(tile_backend: str) -> None:
    gen = np.random.default_rng(44)
    a, b, acc = gen.standard_normal((16, 8)), gen.standard_normal((8, 16)), gen.standard_normal((16, 16))
    got = run_tile(a, b, acc, tl.f64)
    np.testing.assert_allclose(got, a @ b + acc, rtol=1e-14, atol=1e-14)


def test_i8_dot_accumulates_in_i32_and_wraps(tile_backend: str) -> None:
    gen = np.random.default_rng(45)
    a = gen.integers(-128, 128, (16, 64)).astype(np.int8)
    b = gen.integers(-128, 128, (64, 32)).astype(np.int8)
    acc = gen.integers(-(2**31), 2**31, (16, 32)).astype(np.int32)
    acc[0, :] = 2**31 - 1  # these overflow and wrap
    got = run_tile(a, b, acc, tl.i32)
    want = (a.astype(np.int64) @ b.astype(np.int64) + acc).astype(np.int32)
    np.testing.assert_array_equal(got, want)


@tl.kernel
def batched(a_ptr: Pointer[f32], b_ptr: Pointer[f32], c_ptr: Pointer[f32], B: constexpr, BM: constexpr,
            BN: constexpr, BK: constexpr) -> None:
    base = tl.program_id(0) * B
    rb, rm, rn, rk = tl.arange(0, B), tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    bat = (base + rb)[:, None][:, :, None]
    a = tl.load(a_ptr + bat * (BM * BK) + rm[:, None][None, :, :] * BK + rk[None, :][None, :, :])
    b = tl.load(b_ptr + bat * (BK * BN) + rk[:, None][None, :, :] * BN + rn[None, :][None, :, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + bat * (BM * BN) + rm[:, None][None, :, :] * BN + rn[None, :][None, :, :], c)


def test_batched_3d_dot(tile_backend: str) -> None:
    gen = np.random.default_rng(46)
    a = gen.standard_normal((6, 16, 32)).astype(np.float32)
    b = gen.standard_normal((6, 32, 8)).astype(np.float32)
    c = poisoned((6, 16, 8), tl.f32)
    batched[(3,)](tl.to_device(a), tl.to_device(b), c, B=2, BM=16, BN=8, BK=32)
    np.testing.assert_allclose(c.numpy(), np.matmul(a.astype(np.float64), b), rtol=1e-6, atol=1e-6)


@tl.kernel
def mixed_fp8(a_ptr: Pointer[tl.f8e4m3], b_ptr: Pointer[tl.f8e5m2], c_ptr: Pointer[f32], BM: constexpr,
              BN: constexpr, BK: constexpr) -> None:
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a: Any = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b: Any = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


def test_mixed_fp8_operands(tile_backend: str) -> None:
    gen = np.random.default_rng(47)
    a = gen.standard_normal((16, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = gen.standard_normal((32, 16)).astype(ml_dtypes.float8_e5m2)
    c = poisoned((16, 16), tl.f32)
    mixed_fp8[(1,)](tl.to_device(a), tl.to_device(b), c, BM=16, BN=16, BK=32)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ dot_scaled


@tl.kernel
def scaled(a_ptr: Pointer[D], sa_ptr: Pointer[u8], b_ptr: Pointer[E], sb_ptr: Pointer[u8], acc_ptr: Pointer[f32],
           c_ptr: Pointer[f32], BM: constexpr, BN: constexpr, BK: constexpr, LHS: constexpr,
           RHS: constexpr, SCALED: Constexpr[bool]) -> None:  # dot_scaled takes a format literal or a bare constexpr
    rm, rn, rk, rg = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK), tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.load(acc_ptr + rm[:, None] * BN + rn[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (BK // 32) + rg[None, :]) if SCALED else None
    sb = tl.load(sb_ptr + rn[:, None] * (BK // 32) + rg[None, :]) if SCALED else None
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot_scaled(a, sa, LHS, b, sb, RHS, acc))


def e8m0(s: Array) -> Array:
    return np.ldexp(1.0, s.astype(np.int64) - 127)


@pytest.mark.parametrize(("lhs", "rhs", "with_scales"), [
    ("e4m3", "e5m2", True), ("e5m2", "e4m3", True), ("bf16", "fp16", False), ("fp16", "e4m3", True),
])
def test_dot_scaled_applies_e8m0_scales_per_32_k(tile_backend: str, lhs: str, rhs: str, with_scales: bool) -> None:
    bm, bn, bk = 16, 32, 64
    host = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "bf16": ml_dtypes.bfloat16,
            "fp16": np.float16}
    gen = np.random.default_rng(48)
    a = gen.standard_normal((bm, bk)).astype(host[lhs])
    b = gen.standard_normal((bk, bn)).astype(host[rhs])
    sa = gen.integers(120, 135, (bm, bk // 32)).astype(np.uint8)
    sb = gen.integers(120, 135, (bn, bk // 32)).astype(np.uint8)
    acc = gen.standard_normal((bm, bn)).astype(np.float32)
    b_dev = tl.to_device(b.view(np.uint8) if rhs == "e5m2" else b)  # fp8 may come as raw u8 bits
    c = poisoned((bm, bn), tl.f32)
    with benign_races():  # both programs store the same tile
        scaled[(2,)](tl.to_device(a), tl.to_device(sa), b_dev, tl.to_device(sb), tl.to_device(acc), c,
                     BM=bm, BN=bn, BK=bk, LHS=lhs, RHS=rhs, SCALED=with_scales)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if with_scales:
        a64 = a64 * np.repeat(e8m0(sa), 32, axis=1)
        b64 = b64 * np.repeat(e8m0(sb), 32, axis=1).T
    np.testing.assert_allclose(c.numpy(), (a64 @ b64 + acc).astype(np.float32), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ errors (reference only)


@tl.kernel
def misuse(x_ptr: Pointer[f32], h_ptr: Pointer[tl.f16], q_ptr: Pointer[i8], u_ptr: Pointer[u8],
           out: Pointer[f32], CASE: Constexpr[str]) -> None:
    r16, r32 = tl.arange(0, 16), tl.arange(0, 32)
    x: Any = tl.load(x_ptr + r32[:, None] * 32 + r32[None, :])
    h: Any = tl.load(h_ptr + r32[:, None] * 32 + r32[None, :])
    q: Any = tl.load(q_ptr + r16[:, None] * 16 + r16[None, :])
    u: Any = tl.load(u_ptr + r32[:, None] * 32 + r32[None, :])
    r: Any = x
    if CASE == "small_k":
        r = tl.dot(q, q)
    elif CASE == "mixed":
        r = tl.dot(x, h)
    elif CASE == "unsigned":
        r = tl.dot(u, u)
    elif CASE == "precision":
        unknown: Any = "bf16x3"
        r = tl.dot(x, x, input_precision=unknown)
    elif CASE == "both":
        r = tl.dot(x, x, input_precision="ieee", allow_tf32=True)
    elif CASE == "acc":
        r = tl.dot(x, x, h)
    elif CASE == "chain":
        r = tl.dot(x, tl.reshape(x, (16, 64)))
    elif CASE == "e2m1":
        r = tl.dot_scaled(u, None, "e2m1", u, None, "e2m1")
    elif CASE == "scale_shape":
        r = tl.dot_scaled(u, u, "e4m3", u, None, "e4m3")
    tl.store(out + r32[:, None] * 32 + r32[None, :], r)


@pytest.mark.parametrize(("case", "message"), [
    ("small_k", "K = 16 is below the minimum of 32"),
    ("mixed", "same dtype"),
    ("unsigned", "must be i8, f16, bf16, f32, f64 or fp8"),
    ("precision", "input_precision must be one of"),
    ("both", "only one of input_precision and allow_tf32"),
    ("acc", "acc must be a tl.f32 block"),
    ("chain", "do not chain"),
    ("e2m1", "e2m1 .* not supported"),
    ("scale_shape", r"lhs_scale must be a u8 block of shape \[32, 1\]"),
])
def test_misuse_is_a_kernel_error_at_the_line(case: str, message: str) -> None:
    with tl.backend("numpy"):
        args = [tl.to_device(np.zeros(1024, t)) for t in (np.float32, np.float16, np.int8, np.uint8)]
        with pytest.raises(tl.KernelError, match=message) as info:
            misuse[(1,)](args[0], args[1], args[2], args[3], tl.empty(1024, tl.f32), CASE=case)
        assert info.value.filename == __file__
