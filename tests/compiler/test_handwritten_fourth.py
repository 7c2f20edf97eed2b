"""A fourth set of hand-written kernels in the idioms of real Triton code, probing conversions,
masked accesses (predicated from 16 bytes a thread), reductions, scans and shape ops: each runs on
the NumPy reference and on the generated CUDA under the CPU emulator (sm_80 and sm_90), outputs
poisoned first, against NumPy in float64. Tests named for a wrong result kept it, reduced; the
others cover an idea the code generator must keep right."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, f64, i8, i32, i64

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


# ---------------------------------------------------------------- conversions that must round once

@tl.kernel
def rounded_once(i_ptr: Pointer[i32], l_ptr: Pointer[i64], d_ptr: Pointer[f64], b_ptr: Pointer[tl.bfloat16],
                 e_ptr: Pointer[tl.float8e4nv], g_ptr: Pointer[tl.float8e5], B: constexpr) -> None:
    """Integers wider than float's 24 bits to bf16 (FlagGems' casts of index sums), and f64 to fp8:
    each rounds once, from the exact value."""
    offs = tl.arange(0, B)
    i = tl.load(i_ptr + offs)
    tl.store(b_ptr + offs, i.to(tl.bfloat16))
    tl.store(b_ptr + B + offs, i.to(tl.uint32).to(tl.bfloat16))
    tl.store(b_ptr + 2 * B + offs, tl.load(l_ptr + offs).to(tl.bfloat16))
    tl.store(e_ptr + offs, tl.load(d_ptr + offs).to(tl.float8e4nv))
    tl.store(g_ptr + offs, tl.load(d_ptr + B + offs).to(tl.float8e5))


def nearest(values: np.ndarray, fraction_bits: int) -> np.ndarray:
    """Normal values (exact in f64) rounded once to ``fraction_bits`` bits after the point, nearest
    even, as float64, on the f64 bits: ml_dtypes before 0.5 converts f64 and integers to bf16 and
    fp8 through f32, rounding twice (18 of 32 i32 -> bf16 wrong), so it cannot be the reference."""
    bits = values.astype(np.float64).view(np.uint64)  # exact for integers below 2**53
    drop = np.uint64(52 - fraction_bits)
    kept = (bits + np.uint64((1 << (51 - fraction_bits)) - 1) + ((bits >> drop) & np.uint64(1))) >> drop
    return (kept << drop).view(np.float64)


def test_wide_integers_to_bf16_and_f64_to_fp8_round_once(target: str) -> None:
    """Through f32 first, the CUDA rounded twice: a value just past halfway between two neighbours
    (2**25 + 2**17 + 1 for bf16) fell to the even one below: 45 of 96 bf16 elements, 17 of 32 e4m3
    and 17 of 32 e5m2 ones wrong on the emulator."""
    rng = np.random.default_rng(4)
    base = rng.integers(1 << 24, 1 << 30, 32)
    ulp = np.exp2(np.floor(np.log2(base)) - 7).astype(np.int64)  # bf16's spacing at each value
    wide = (base // ulp) * ulp + ulp // 2 + rng.integers(1, 4, 32) * np.sign(rng.standard_normal(32)).astype(np.int64)
    ints = (wide * rng.choice([-1, 1], 32)).astype(np.int32)
    longs = wide * (1 << 20)
    # halfway points between neighbours in [1, 2) (e4m3's 1/8 apart, e5m2's 1/4), nudged up or down
    halves = np.concatenate([rng.integers(8, 16, 32) / 8 + 1 / 16, rng.integers(4, 8, 32) / 4 + 1 / 8])
    doubles = (halves + rng.choice([1.0, -1.0], 64) * 2.0**-40) * rng.choice([1.0, -1.0], 64)
    bf = ml_dtypes.bfloat16
    with tl.backend(target):
        b = tl.to_device(np.full(96, np.nan, bf))
        e, g = tl.to_device(np.zeros(32, ml_dtypes.float8_e4m3fn)), tl.to_device(np.zeros(32, ml_dtypes.float8_e5m2))
        rounded_once[(1,)](tl.to_device(ints), tl.to_device(longs), tl.to_device(doubles), b, e, g, B=32)
        got = b.numpy().astype(np.float64)
        np.testing.assert_array_equal(got[:32], nearest(ints, 7))
        np.testing.assert_array_equal(got[32:64], nearest(ints.astype(np.int64) % 2**32, 7))
        np.testing.assert_array_equal(got[64:], nearest(longs, 7))
        np.testing.assert_array_equal(e.numpy().astype(np.float64), nearest(doubles[:32], 3))
        np.testing.assert_array_equal(g.numpy().astype(np.float64), nearest(doubles[32:], 2))


# ---------------------------------------------------------------- ideas the code generator must keep right

@tl.kernel
def ragged_tile(x_ptr: Pointer[f32], fill_ptr: Pointer[f32], o_ptr: Pointer[f32], m: int, n: int, stride: int,
                BM: constexpr, BN: constexpr) -> None:
    """A 2-D tile masked on rows and ragged columns, filled with a loaded row broadcast down the tile:
    16-byte runs predicated only where the column mask holds over the run."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    fill = tl.load(fill_ptr + rn)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=(rm[:, None] < m) & (rn[None, :] < n),
                other=fill[None, :])
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], x)


@pytest.mark.parametrize("m, n, stride", [(20, 13, 16), (33, 30, 32)])
def test_a_ragged_tile_takes_its_fill_from_a_row(target: str, m: int, n: int, stride: int) -> None:
    rng = np.random.default_rng(m)
    x, fill = rng.standard_normal((m, stride)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    rows = tl.cdiv(m, 16) * 16
    want = np.broadcast_to(fill, (rows, 32)).copy()
    want[:m, :n] = x[:, :n]
    with tl.backend(target):
        out = tl.to_device(np.full((rows, 32), np.nan, np.float32))
        ragged_tile[(rows // 16,)](tl.to_device(x), tl.to_device(fill), out, m, n, stride, BM=16, BN=32)
        np.testing.assert_array_equal(out.numpy(), want)


@tl.kernel
def holed(x_ptr: Pointer[f32], b_ptr: Pointer[i8], o_ptr: Pointer[f32], h_ptr: Pointer[f16], n: int,
          B: constexpr) -> None:
    """Masks that change inside a 4-element run (every third lane, pairs), byte loads with a
    negative fill and an eviction hint, and a masked store of converted values."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=(offs % 3 != 0) & (offs < n), other=7.0)
    y = tl.load(x_ptr + offs, mask=(offs // 2) % 2 == 0, other=-1.0, cache_modifier=".cg")
    b = tl.load(b_ptr + offs, mask=offs < n, other=-3, eviction_policy="evict_last")
    tl.store(o_ptr + offs, x + y * 10.0 + b.to(tl.float32), mask=(offs & 5) != 1)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=offs < n)


def test_masks_that_change_inside_a_run(target: str) -> None:
    n, lanes = 100, np.arange(128)
    rng = np.random.default_rng(7)
    x, b = rng.standard_normal(128).astype(np.float32), rng.integers(-128, 128, 128).astype(np.int8)
    xx = np.where((lanes % 3 != 0) & (lanes < n), x, np.float32(7.0))
    yy = np.where((lanes // 2) % 2 == 0, x, np.float32(-1.0))
    bb = np.where(lanes < n, b, -3).astype(np.float32)
    with tl.backend(target):
        out, half = tl.to_device(np.full(128, np.nan, np.float32)), tl.to_device(np.full(128, np.nan, np.float16))
        holed[(1,)](tl.to_device(x), tl.to_device(b), out, half, n, B=128)
        np.testing.assert_array_equal(out.numpy(), np.where((lanes & 5) != 1, xx + yy * np.float32(10.0) + bb, np.nan))
        np.testing.assert_array_equal(half.numpy(), np.where(lanes < n, xx.astype(np.float16), np.float16(np.nan)))


@tl.func
def _first_largest(a: tl.Tensor2[f32], ai: tl.Tensor2[i32], b: tl.Tensor2[f32],
                   bi: tl.Tensor2[i32]) -> tuple[tl.Tensor2[f32], tl.Tensor2[i32]]:
    take = (a > b) | ((a == b) & (ai < bi))
    return tl.where(take, a, b), tl.where(take, ai, bi)


@tl.kernel
def cube_reductions(x_ptr: Pointer[f32], o_ptr: Pointer[f32], i_ptr: Pointer[i32], A: constexpr, B: constexpr,
                    C: constexpr) -> None:
    """Reductions over each axis of a 3-D block with ties (argmax/argmin take the first index),
    keep_dims, a reversed scan along the first axis and a custom combine carrying indices."""
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)
    ra, rb, rc = tl.arange(0, A)[:, None], tl.arange(0, B)[:, None], tl.arange(0, C)[None, :]
    tl.store(o_ptr + rb * C + rc, tl.sum(x, 0))
    tl.store(o_ptr + B * C + a * B + b + c * 0, tl.min(x, 2, keep_dims=True))
    tl.store(o_ptr + B * C + A * B + a * B * C + b * C + c, tl.cumsum(x, 0, reverse=True))
    tl.store(i_ptr + ra * C + rc, tl.argmax(x, 1))
    tl.store(i_ptr + A * C + rb * C + rc, tl.argmin(x, 0))
    top, where = tl.reduce((tl.reshape(x, (A * B, C)), tl.broadcast_to(rc, (A * B, C))), 1, _first_largest)
    tl.store(o_ptr + B * C + A * B + A * B * C + tl.arange(0, A * B), top + where.to(tl.float32) * 100.0)


@pytest.mark.parametrize("a, b, c, warps", [(4, 8, 16, 4), (2, 16, 4, 1)])
def test_reductions_over_each_axis_of_a_cube(target: str, a: int, b: int, c: int, warps: int) -> None:
    x = np.random.default_rng(a * b).integers(-2, 3, (a, b, c)).astype(np.float32)
    flat = x.reshape(a * b, c)
    with tl.backend(target):
        out = tl.to_device(np.full(b * c + 2 * a * b + a * b * c, np.nan, np.float32))
        idx = tl.to_device(np.full(a * c + b * c, -9, np.int32))
        cube_reductions[(1,), tl.Options(num_warps=warps)](tl.to_device(x), out, idx, A=a, B=b, C=c)
        np.testing.assert_array_equal(out.numpy(), np.concatenate([
            x.sum(0).ravel(), x.min(2).ravel(), np.cumsum(x[::-1], 0)[::-1].ravel(),
            flat.max(1) + flat.argmax(1) * 100.0]))
        np.testing.assert_array_equal(idx.numpy(), np.concatenate([x.argmax(1).ravel(), x.argmin(0).ravel()]))


@tl.kernel
def reshuffled(x_ptr: Pointer[f32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    """join, a 3-D permute and split; interleave; flips along each axis; reshape without reordering
    then a permute; nested where with scalars."""
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    y = tl.load(x_ptr + M * N + rm * N + rn)
    left, right = tl.split(tl.permute(tl.join(x, y), (1, 0, 2)))
    tl.store(o_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], left - right * 2.0)
    tl.store(o_ptr + M * N + rm * 2 * N + tl.arange(0, 2 * N)[None, :], tl.interleave(x, y))
    tl.store(o_ptr + 3 * M * N + rm * N + rn, tl.flip(x, 1) + tl.flip(y, 0) * 100.0)
    cube = tl.permute(tl.reshape(x, (M, N // 4, 4), can_reorder=False), (2, 1, 0))
    tl.store(o_ptr + 4 * M * N + tl.arange(0, 4)[:, None, None] * (N // 4) * M + tl.arange(0, N // 4)[None, :, None] * M
             + tl.arange(0, M)[None, None, :], cube)
    tl.store(o_ptr + 5 * M * N + rm * N + rn, tl.where(rn > 3, x, tl.where(rm < 2, -1.0, 2.0)))


@pytest.mark.parametrize("m, n, warps", [(8, 16, 4), (16, 8, 2)])
def test_shape_ops_move_every_element(target: str, m: int, n: int, warps: int) -> None:
    x, y = np.random.default_rng(m).integers(-8, 9, (2, m, n)).astype(np.float32)
    with tl.backend(target):
        out = tl.to_device(np.full(6 * m * n, np.nan, np.float32))
        reshuffled[(1,), tl.Options(num_warps=warps)](tl.to_device(np.stack([x, y])), out, M=m, N=n)
        np.testing.assert_array_equal(out.numpy(), np.concatenate([
            (x - y * 2.0).T.ravel(), np.stack([x, y], -1).ravel(), (x[:, ::-1] + y[::-1] * 100.0).ravel(),
            x.reshape(m, n // 4, 4).transpose(2, 1, 0).ravel(),
            np.where(np.arange(n) > 3, x, np.where(np.arange(m)[:, None] < 2, -1.0, 2.0)).ravel()]))


@tl.kernel
def integer_rules(a_ptr: Pointer[i32], b_ptr: Pointer[i32], u_ptr: Pointer[tl.uint32], o_ptr: Pointer[i64],
                  B: constexpr) -> None:
    """C's truncating // and % on negative operands (Triton follows C for ints), i32 read as u32,
    umulhi, and narrowing casts."""
    offs = tl.arange(0, B)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    u = tl.load(u_ptr + offs)
    tl.store(o_ptr + offs, (a // b).to(tl.int64))
    tl.store(o_ptr + B + offs, (a % -7).to(tl.int64))
    tl.store(o_ptr + 2 * B + offs, (u + a.to(tl.uint32)).to(tl.int64))
    tl.store(o_ptr + 3 * B + offs, tl.umulhi(u, u).to(tl.int64))
    tl.store(o_ptr + 4 * B + offs, (a.to(tl.uint32) < u).to(tl.int64))
    tl.store(o_ptr + 5 * B + offs, a.to(tl.int8).to(tl.int64) + a.to(tl.uint8).to(tl.int64) * 1000)


def test_integer_division_promotion_and_narrowing(target: str) -> None:
    rng = np.random.default_rng(11)
    a = rng.integers(-1000, 1000, 64).astype(np.int32)
    b = (rng.integers(1, 20, 64) * rng.choice([-1, 1], 64)).astype(np.int32)
    u = rng.integers(0, 2**32, 64, dtype=np.int64).astype(np.uint32)
    wide_a, wide_b, wide_u = a.astype(np.int64), b.astype(np.int64), u.astype(np.int64)
    quotient = np.trunc(wide_a / wide_b).astype(np.int64)
    with tl.backend(target):
        out = tl.to_device(np.full(6 * 64, -99, np.int64))
        integer_rules[(1,)](tl.to_device(a), tl.to_device(b), tl.to_device(u), out, B=64)
        np.testing.assert_array_equal(out.numpy(), np.concatenate([
            quotient, wide_a - np.trunc(wide_a / -7).astype(np.int64) * -7, (wide_u + wide_a) % 2**32,
            [(int(v) * int(v)) >> 32 for v in u], (wide_a % 2**32) < wide_u,
            a.astype(np.int8).astype(np.int64) + a.astype(np.uint8).astype(np.int64) * 1000]))


@tl.kernel
def data_driven(x_ptr: Pointer[i32], o_ptr: Pointer[i32], f_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    """A while loop whose condition is loaded data, an if on a loaded scalar, and a loop-carried
    pair swapped in a static_range inside a tl.range with num_stages."""
    offs = tl.arange(0, B)
    i = 0
    total = tl.zeros([1], tl.int32)
    while tl.load(x_ptr + i) != 0:
        total += tl.load(x_ptr + i)
        i += 1
    if tl.load(x_ptr + n) > 3:
        w = tl.load(x_ptr + offs) * 2
    else:
        w = tl.load(x_ptr + offs) - 1
    a = tl.zeros((B,), tl.float32)
    b = tl.full((B,), 1.0, tl.float32)
    for k in tl.range(0, 3, num_stages=2):
        for j in tl.static_range(2):
            a, b = b + j, a * 2.0 + k
    tl.store(o_ptr + tl.arange(0, 1), total * 1000 + i)
    tl.store(o_ptr + 1 + offs, w)
    tl.store(f_ptr + offs, a * 100.0 + b)


@pytest.mark.parametrize("n", [6, 2])
def test_control_flow_on_loaded_values(target: str, n: int) -> None:
    x = np.concatenate([[5, -2, 7, 9, 0], np.arange(1, 60)]).astype(np.int32)
    a, b = 0.0, 1.0
    for k in range(3):
        for j in range(2):
            a, b = b + j, a * 2.0 + k
    with tl.backend(target):
        out, f = tl.to_device(np.full(33, -99, np.int32)), tl.to_device(np.full(32, np.nan, np.float32))
        data_driven[(1,)](tl.to_device(x), out, f, n, B=32)
        np.testing.assert_array_equal(out.numpy(), np.concatenate([[19 * 1000 + 4], x[:32] * 2 if x[n] > 3 else x[:32] - 1]))
        np.testing.assert_array_equal(f.numpy(), np.full(32, a * 100.0 + b))
