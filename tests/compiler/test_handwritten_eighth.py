"""An eighth set of hand-written kernels, aimed at the result dtypes recently aligned with Triton
3.6 and at constructs real kernels use that earlier rounds did not: 16-bit floats divided by and
taken modulo Python numbers, fp8 arithmetic past its range, non-commutative scans and reductions
along either axis and reversed, C's integer division on i16/i64 with negative operands,
``tl.where`` of scalar branches of mixed types, loops whose carried values change inside ``if``s
beside early returns, and shape ops chained on small tiles. Each runs on the NumPy reference and
the generated CUDA under the CPU emulator (sm_80 and sm_90), outputs poisoned first, against
NumPy in float64 or exact integers (expected dtypes taken from Triton 3.6's interpreter)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, bf16, constexpr, f16, f32, f64, i8, i16, i32, i64, u8, u32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
Arr = np.ndarray[Any, Any]


def _within_f32(got: Arr, want: Arr, ulps: float) -> None:
    """``got`` within ``ulps`` f32 units of the float64 ``want`` (NaN and infinities exactly)."""
    special = ~np.isfinite(want)
    np.testing.assert_array_equal(got[special], want[special].astype(np.float32))
    ok = ~special
    err = np.abs(got[ok].astype(np.float64) - want[ok])
    bound = ulps * np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, f"at {bad[:5]}: got {got[ok][bad[:5]]}, want {want[ok][bad[:5]]}"


# ---------------------------------------------------------------- 16-bit floats with Python numbers

@tl.kernel
def halves_by_numbers(x_ptr: Pointer[f16], y_ptr: Pointer[bf16], o_ptr: Pointer[f32], B: constexpr) -> None:
    """``/`` and ``%`` of f16 and bf16 blocks with Python floats on either side: f32 results, the
    number a constant of f32 (Triton's ``scalar_constant(number, fp32)``), never rounded to the
    block's 16 bits first; a number exact in 16 bits and an int for contrast."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    outs = (x % 0.7, x % -0.3, -1.7 % x, y % 0.3, 7.1 % y, x / 0.7, 2.9 / x, y / 0.1, x % 3, y / 0.5)
    for i in tl.static_range(len(outs)):
        tl.store(o_ptr + i * B + offs, outs[i])


def test_sixteen_bit_division_and_remainder_take_the_number_in_f32(target: str) -> None:
    """The reference lifted the number into the block's dtype before converting both to f32:
    ``h % 0.7`` took 0.7 as f16's 0.70020 and ``y / 0.1`` 0.1 as bf16's 0.10010 (472 of the 512
    elements of the eight outputs whose number 16 bits do not hold were wrong, remainders by up to
    47 times, quotients by 3e-4 to 1e-3), where the CUDA and Triton's interpreter use the f32
    constant (now the reference too); ``% 3`` and ``/ 0.5`` were right."""
    rng, b = np.random.default_rng(81), 64
    x = (rng.standard_normal(b) * 3).astype(np.float16)
    y = (rng.standard_normal(b) * 3).astype(ml_dtypes.bfloat16)
    x[:4], y[:4] = [0.0, -0.0, np.inf, 1.3037109], [0.0, np.nan, -np.inf, 0.9472656]
    with tl.backend(target):
        o = tl.to_device(np.full(10 * b, 12345.0, np.float32))
        halves_by_numbers[(1,)](tl.to_device(x), tl.to_device(y), o, B=b)
        got = o.numpy().reshape(10, b)
    xf, yf = x.astype(np.float32), y.astype(np.float32)

    def c(v: float) -> Arr:
        return np.float32(v) * np.ones(b, np.float32)

    with np.errstate(all="ignore"):
        exact = [np.fmod(xf, c(0.7)), np.fmod(xf, c(-0.3)), np.fmod(c(-1.7), xf), np.fmod(yf, c(0.3)),
                 np.fmod(c(7.1), yf), None, None, None, np.fmod(xf, c(3.0)), None]
        quotients = {5: xf.astype(np.float64) / np.float64(np.float32(0.7)), 6: np.float64(np.float32(2.9)) / xf,
                     7: yf.astype(np.float64) / np.float64(np.float32(0.1)), 9: yf.astype(np.float64) / 0.5}
    for i, want in enumerate(exact):
        if want is not None:
            np.testing.assert_array_equal(got[i], want, err_msg=f"output {i}")
    for i, q in quotients.items():
        _within_f32(got[i], q, 2)


# ---------------------------------------------------------------- fp8 arithmetic past the range

@tl.kernel
def fp8_arithmetic(x_ptr: Pointer[f32], y_ptr: Pointer[f32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    """Arithmetic on e4m3 and e5m2 blocks whose results pass the largest finite value: products,
    sums, a fused multiply-add, a row sum and a reversed scan, each rounded to its fp8 dtype."""
    rm = tl.arange(0, M)
    p = rm[:, None] * N + tl.arange(0, N)[None, :]
    x, y = tl.load(x_ptr + p), tl.load(y_ptr + p)
    e4, e5 = x.to(tl.float8e4nv), y.to(tl.float8e5)
    block = M * N
    tl.store(o_ptr + p, (e4 * e4).to(tl.float32))
    tl.store(o_ptr + block + p, (e4 * 3 - e4).to(tl.float32))
    tl.store(o_ptr + 2 * block + p, (e5 + e5 * 2.0).to(tl.float32))
    tl.store(o_ptr + 3 * block + p, tl.fma(e4, e4, e4).to(tl.float32))
    tl.store(o_ptr + 4 * block + p, tl.cumsum(e5, 1, reverse=True).to(tl.float32))
    tl.store(o_ptr + 5 * block + rm, tl.sum(e4, 1).to(tl.float32))


def _fp8(values: Arr, dtype: Any, limit: float) -> Arr:
    """float64 values rounded once to an fp8 dtype, saturating at its largest finite value."""
    out: Arr = np.clip(values, -limit, limit).astype(dtype).astype(np.float64)
    return out


def test_fp8_arithmetic_saturates_as_its_casts_do(target: str) -> None:
    """The CUDA computes fp8 arithmetic in f32 and rounds with the saturating cast (448, 57344),
    as every cast to fp8 saturates on both backends; the reference used ml_dtypes' own arithmetic,
    whose overflow is e4m3's NaN and e5m2's inf, in products, sums, fma, sum and cumsum (82 of the
    324 elements here were NaN or inf where the CUDA gave the largest value). Triton cannot lower
    fp8 arithmetic at all (its issue 11898), so the CUDA's saturation is the rule."""
    rng, m, n = np.random.default_rng(82), 4, 16
    x = (rng.uniform(-1, 1, (m, n)) * np.array([[30.0], [8.0], [400.0], [1.0]])).astype(np.float32)
    y = (rng.uniform(-1, 1, (m, n)) * np.array([[20000.0], [60.0], [50000.0], [3.0]])).astype(np.float32)
    with tl.backend(target):
        o = tl.to_device(np.full(5 * m * n + m, np.nan, np.float32))
        fp8_arithmetic[(1,)](tl.to_device(x), tl.to_device(y), o, M=m, N=n)
        got = o.numpy()
    e4 = x.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    e5 = y.astype(ml_dtypes.float8_e5m2).astype(np.float64)

    def r4(v: Arr) -> Arr:
        return _fp8(v, ml_dtypes.float8_e4m3fn, 448.0)

    def r5(v: Arr) -> Arr:
        return _fp8(v, ml_dtypes.float8_e5m2, 57344.0)

    wants = [r4(e4 * e4), r4(r4(e4 * 3) - e4), r5(e5 + r5(e5 * 2)), r4(e4 * e4 + e4),
             r5(np.flip(np.cumsum(np.flip(e5, 1), 1), 1))]
    for i, want in enumerate(wants):
        np.testing.assert_array_equal(got[i * m * n:(i + 1) * m * n].reshape(m, n), want, err_msg=f"output {i}")
    np.testing.assert_array_equal(got[5 * m * n:], r4(e4.sum(1)))
    assert (np.abs(e4 * e4) > 448).any() and (np.abs(e5 * 3) > 57344).any() and (np.abs(e4.sum(1)) > 448).any()


# ---------------------------------------------------------------- non-commutative scans and reductions

@tl.func
def affine_step(a1: Any, b1: Any, a2: Any, b2: Any) -> Any:
    """The composition of two affine maps ``v -> a*v + b`` (first, then second): associative,
    not commutative, as a linear recurrence's scan (Mamba's, FlagGems') combines."""
    return a1 * a2, b1 * a2 + b2


@tl.kernel
def affine_scans(a_ptr: Pointer[i32], b_ptr: Pointer[i32], o_ptr: Pointer[i32], M: constexpr, N: constexpr) -> None:
    """The tuple scan along each axis, forward and reversed, and the tuple reduction along each."""
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    p = rm[:, None] * N + rn[None, :]
    a, b = tl.load(a_ptr + p), tl.load(b_ptr + p)
    for axis in tl.static_range(2):
        for rev in tl.static_range(2):
            sa, sb = tl.associative_scan((a, b), axis, affine_step, reverse=rev == 1)
            tl.store(o_ptr + (axis * 2 + rev) * 2 * M * N + p, sa)
            tl.store(o_ptr + (axis * 2 + rev) * 2 * M * N + M * N + p, sb)
    ra, rb = tl.reduce((a, b), 1, affine_step)
    tl.store(o_ptr + 8 * M * N + rm, ra)
    tl.store(o_ptr + 8 * M * N + M + rm, rb)
    ca, cb = tl.reduce((a, b), 0, affine_step, keep_dims=True)
    tl.store(o_ptr + 8 * M * N + 2 * M + rn[None, :], ca)
    tl.store(o_ptr + 8 * M * N + 2 * M + N + rn[None, :], cb)


def _affine_scan(a: Arr, b: Arr, axis: int, reverse: bool) -> tuple[Arr, Arr]:
    """The scan in Triton's order (its interpreter's too): reversed, the accumulator is the
    composition of the later elements, combined first with each earlier one."""
    a, b = np.moveaxis(a.astype(np.int64), axis, 0), np.moveaxis(b.astype(np.int64), axis, 0)
    order = range(a.shape[0] - 1, -1, -1) if reverse else range(a.shape[0])
    sa, sb = np.empty_like(a), np.empty_like(b)
    acc: tuple[Arr, Arr] | None = None
    for i in order:
        acc = (a[i], b[i]) if acc is None else (acc[0] * a[i], acc[1] * a[i] + b[i])
        sa[i], sb[i] = acc
    return np.moveaxis(sa, 0, axis), np.moveaxis(sb, 0, axis)


@pytest.mark.parametrize("m, n", [(4, 8), (1, 16), (2, 2), (16, 1)])
def test_non_commutative_scans_and_reductions_keep_their_order(target: str, m: int, n: int) -> None:
    rng = np.random.default_rng(83 + m * n)
    a = rng.integers(-2, 3, (m, n)).astype(np.int32)
    b = rng.integers(-3, 4, (m, n)).astype(np.int32)
    with tl.backend(target):
        o = tl.to_device(np.full(8 * m * n + 2 * m + 2 * n, -777, np.int32))
        affine_scans[(1,)](tl.to_device(a), tl.to_device(b), o, M=m, N=n)
        got = o.numpy().astype(np.int64)
    wrap = np.int64(2**32)
    for axis in range(2):
        for rev in range(2):
            sa, sb = _affine_scan(a, b, axis, bool(rev))
            base = (axis * 2 + rev) * 2 * m * n
            np.testing.assert_array_equal(got[base:base + m * n].reshape(m, n), (sa + 2**31) % wrap - 2**31)
            np.testing.assert_array_equal(got[base + m * n:base + 2 * m * n].reshape(m, n), (sb + 2**31) % wrap - 2**31)
    ra, rb = _affine_scan(a, b, 1, False)
    ca, cb = _affine_scan(a, b, 0, False)
    tail = got[8 * m * n:]
    np.testing.assert_array_equal(tail[:m], ra[:, -1])
    np.testing.assert_array_equal(tail[m:2 * m], rb[:, -1])
    np.testing.assert_array_equal(tail[2 * m:2 * m + n], ca[-1])
    np.testing.assert_array_equal(tail[2 * m + n:], cb[-1])


# ---------------------------------------------------------------- C's integer division

@tl.kernel
def c_divisions(a_ptr: Pointer[i64], b_ptr: Pointer[i64], w_ptr: Pointer[i16], o_ptr: Pointer[i64], B: constexpr) -> None:
    """``//``, ``%`` and ``tl.cdiv`` of i64 and i16 blocks with negative operands and numbers on
    either side, and the i32 narrowing of i64 operands before a division."""
    offs = tl.arange(0, B)
    a, b, w = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(w_ptr + offs)
    outs = (a // b, a % b, a // -7, a % 7, -7 // b, 7 % b, tl.cdiv(a, 5), w // 3, w % -3, -w // 7, tl.cdiv(w, 4),
            w.to(tl.uint16) // 7, a.to(tl.int32) // b.to(tl.int32), a.to(tl.int32) % b.to(tl.int32))
    for i in tl.static_range(len(outs)):
        tl.store(o_ptr + i * B + offs, outs[i].to(tl.int64))


def _c_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _narrow(v: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (v + half) % (2 * half) - half


def test_integer_division_truncates_on_every_width(target: str) -> None:
    rng, b = np.random.default_rng(84), 64
    a = rng.integers(-2**40, 2**40, b).astype(np.int64)
    d = rng.integers(-1000, 1000, b).astype(np.int64)
    d[d == 0] = 3
    w = rng.integers(-32768, 32768, b).astype(np.int16)
    a[:6], d[:6], w[:3] = [-7, 7, -1, 0, -2**40, 6], [2, -2, 5, -5, 7, -6], [-32767, -1, 32000]
    with tl.backend(target):
        o = tl.to_device(np.full(14 * b, -777, np.int64))
        c_divisions[(1,)](tl.to_device(a), tl.to_device(d), tl.to_device(w), o, B=b)
        got = o.numpy().reshape(14, b)
    ai, di, wi = ([int(v) for v in arr] for arr in (a, d, w))

    def mod(x: int, y: int) -> int:
        return x - _c_div(x, y) * y

    wants = [[_c_div(x, y) for x, y in zip(ai, di)], [mod(x, y) for x, y in zip(ai, di)],
             [_c_div(x, -7) for x in ai], [mod(x, 7) for x in ai], [_c_div(-7, y) for y in di], [mod(7, y) for y in di],
             [_c_div(x + 4, 5) for x in ai], [_c_div(x, 3) for x in wi], [mod(x, -3) for x in wi],
             [_c_div(_narrow(-x, 16), 7) for x in wi], [_c_div(x + 3, 4) for x in wi], [(x % 65536) // 7 for x in wi],
             [_c_div(_narrow(x, 32), y) for x, y in zip(ai, di)], [mod(_narrow(x, 32), y) for x, y in zip(ai, di)]]
    for i, want in enumerate(wants):
        np.testing.assert_array_equal(got[i], np.asarray(want, np.int64), err_msg=f"output {i}")


# ---------------------------------------------------------------- tl.where of scalar branches

@tl.kernel
def scalar_branches(x_ptr: Pointer[f16], a_ptr: Pointer[i8], u_ptr: Pointer[u8], d_ptr: Pointer[u32],
                    o_ptr: Pointer[f64], B: constexpr) -> None:
    """``tl.where`` with Python numbers of each kind on either side of blocks of each kind."""
    offs = tl.arange(0, B)
    x, a = tl.load(x_ptr + offs), tl.load(a_ptr + offs)
    u, d = tl.load(u_ptr + offs), tl.load(d_ptr + offs)
    c = a > 0
    outs = (tl.where(c, 1, 2.5), tl.where(c, a, 1.5), tl.where(c, 2**40, 1), tl.where(c, u, True), tl.where(c, x, 1),
            tl.where(c, c, 7), tl.where(c, 3000000000, d), tl.where(c, -0.0, x), tl.where(c, x, 1e5), tl.where(c, u, 255),
            tl.where(c, 0.1, x) * 3, tl.where(c, d, 2**32 - 1), tl.where(a != 0, 5, 6), tl.where(u != 0, x, 0.3))
    for i in tl.static_range(len(outs)):
        tl.store(o_ptr + i * B + offs, outs[i].to(tl.float64))


def test_where_of_scalar_branches_types_as_triton(target: str) -> None:
    """Each result's dtype is Triton 3.6's (its interpreter: f32, f32, i64, u8, f16, i32, u32,
    f16, f16, u8, f16, u32, i32, f16), so the values are those of that dtype."""
    rng, b = np.random.default_rng(85), 32
    x = rng.standard_normal(b).astype(np.float16)
    a = rng.integers(-128, 128, b).astype(np.int8)
    u = rng.integers(0, 256, b).astype(np.uint8)
    d = rng.integers(0, 2**32, b, dtype=np.uint64).astype(np.uint32)
    a[:3], u[:2] = [0, 1, -1], 0
    with tl.backend(target):
        o = tl.to_device(np.full(14 * b, np.nan, np.float64))
        scalar_branches[(1,)](tl.to_device(x), tl.to_device(a), tl.to_device(u), tl.to_device(d), o, B=b)
        got = o.numpy().reshape(14, b)
    c = a > 0
    h = x.astype(np.float64)
    f16_inf = np.float64(np.float16(np.inf))
    wants = [np.where(c, 1.0, 2.5), np.where(c, a, 1.5), np.where(c, 2.0**40, 1), np.where(c, u, 1), np.where(c, h, 1),
             np.where(c, 1.0, 7.0), np.where(c, 3e9, d), np.where(c, -0.0, h), np.where(c, h, f16_inf), np.where(c, u, 255),
             (np.where(c, np.float16(0.1), x) * np.float16(3)).astype(np.float64), np.where(c, d, 2.0**32 - 1),
             np.where(a != 0, 5.0, 6.0), np.where(u != 0, h, np.float64(np.float16(0.3)))]
    for i, want in enumerate(wants):
        np.testing.assert_array_equal(got[i], np.asarray(want, np.float64), err_msg=f"output {i}")
    np.testing.assert_array_equal(np.signbit(got[7][c]), True)


# ---------------------------------------------------------------- loops, branches and early returns

@tl.kernel
def branchy_loops(x_ptr: Pointer[f32], n_ptr: Pointer[i32], o_ptr: Pointer[f32], q_ptr: Pointer[i32], B: constexpr) -> None:
    """Per program: an early return on a negative trip count; a ``for`` whose body updates
    different carried values on each side of an ``if``/``elif``/``else`` (one condition a row
    sum); then a ``while`` halving the block until its max is small, changed again in an ``if``."""
    pid = tl.program_id(0)
    offs = tl.arange(0, B)
    n = tl.load(n_ptr + pid)
    if n < 0:
        tl.store(q_ptr + pid, -1)
        return
    acc = tl.zeros((B,), tl.float32)
    best = tl.full((B,), -1.0e30, tl.float32)
    cnt = 0
    last = -1
    for i in range(0, n):
        v = tl.load(x_ptr + i * B + offs)
        if i % 3 == 0:
            acc += v
            cnt += 1
        elif tl.sum(v, 0) > 0:
            best = tl.maximum(best, v)
            last = i
        else:
            acc -= v * 0.5
    j = n
    while j > 0 and tl.max(acc, 0) > 1.0:
        acc = acc * 0.5
        if j == 3:
            acc = acc - 100.0
        j -= 1
    tl.store(o_ptr + pid * 2 * B + offs, acc)
    tl.store(o_ptr + pid * 2 * B + B + offs, best)
    tl.store(q_ptr + pid, cnt * 1000 + last * 10 + j)


def test_carried_values_changed_in_branches_beside_an_early_return(target: str) -> None:
    rng, b = np.random.default_rng(86), 16
    x = rng.standard_normal((12, b)).astype(np.float32)
    trips = np.array([0, 5, -2, 12, 7, 1], np.int32)
    p = trips.size
    with tl.backend(target):
        o = tl.to_device(np.full(p * 2 * b, np.nan, np.float32))
        q = tl.to_device(np.full(p, -777, np.int32))
        branchy_loops[(p,)](tl.to_device(x), tl.to_device(trips), o, q, B=b)
        got, codes = o.numpy().reshape(p, 2, b), q.numpy()
    for pid, n in enumerate(trips.tolist()):
        if n < 0:
            assert codes[pid] == -1 and np.isnan(got[pid]).all()
            continue
        acc, best, cnt, last = np.zeros(b, np.float32), np.full(b, -1e30, np.float32), 0, -1
        for i in range(n):
            v = x[i]
            if i % 3 == 0:
                acc, cnt = acc + v, cnt + 1
            elif v.astype(np.float64).sum() > 0:
                best, last = np.maximum(best, v), i
            else:
                acc = acc - v * np.float32(0.5)
        j = n
        while j > 0 and acc.max() > 1.0:
            acc = acc * np.float32(0.5)
            if j == 3:
                acc = acc - np.float32(100)
            j -= 1
        np.testing.assert_allclose(got[pid, 0], acc, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(got[pid, 1], best)
        assert codes[pid] == cnt * 1000 + last * 10 + j, (pid, codes[pid])


# ---------------------------------------------------------------- shape ops chained on small tiles

@tl.kernel
def shape_chains(x_ptr: Pointer[f32], g_ptr: Pointer[i32], o_ptr: Pointer[f32], M: constexpr, N: constexpr) -> None:
    """Sorts, flips, transposes, splits, joins, interleaves, permutes and gathers feeding each
    other, as top-k, RoPE and MoE routing kernels chain them."""
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    p = rm[:, None] * N + rn[None, :]
    x = tl.load(x_ptr + p)
    tl.store(o_ptr + rn[:, None] * M + rm[None, :], tl.trans(tl.sort(x, 1, descending=True)))
    tl.store(o_ptr + M * N + p, tl.flip(x, 1))
    even, odd = tl.split(tl.reshape(x, (M, N // 2, 2)))
    tl.store(o_ptr + 2 * M * N + p, tl.reshape(tl.join(odd, even), (M, N)))
    tl.store(o_ptr + 3 * M * N + p, tl.interleave(odd, even))
    tl.store(o_ptr + 4 * M * N + p, tl.gather(x, tl.load(g_ptr + p), 1))
    tl.store(o_ptr + 5 * M * N + p, tl.flip(tl.sort(x, 1), 1))
    tl.store(o_ptr + 6 * M * N + p, tl.reshape(tl.permute(tl.reshape(x, (M, 2, N // 2)), 0, 2, 1), (M, N)))
    tl.store(o_ptr + 7 * M * N + p, tl.flip(x, 0) + tl.cumsum(tl.flip(x, 1), 1))
    tl.store(o_ptr + 8 * M * N + p, tl.sort(tl.flip(x, 0), 1))


@pytest.mark.parametrize("m, n", [(4, 8), (1, 4), (2, 2), (8, 16)])
def test_shape_ops_chained_on_small_tiles(target: str, m: int, n: int) -> None:
    rng = np.random.default_rng(87 + m + n)
    x = rng.integers(-8, 8, (m, n)).astype(np.float32)
    g = rng.integers(0, n, (m, n)).astype(np.int32)
    with tl.backend(target):
        o = tl.to_device(np.full(9 * m * n, np.nan, np.float32))
        shape_chains[(1,)](tl.to_device(x), tl.to_device(g), o, M=m, N=n)
        got = o.numpy().reshape(9, -1)
    swapped = x.reshape(m, n // 2, 2)[:, :, ::-1].reshape(m, n)
    wants = [(-np.sort(-x, 1)).T, x[:, ::-1], swapped, swapped, np.take_along_axis(x, g, 1), np.sort(x, 1)[:, ::-1],
             x.reshape(m, 2, n // 2).transpose(0, 2, 1).reshape(m, n), x[::-1] + np.cumsum(x[:, ::-1], 1), np.sort(x[::-1], 1)]
    for i, want in enumerate(wants):
        np.testing.assert_array_equal(got[i].reshape(want.shape), want, err_msg=f"output {i}")


# ---------------------------------------------------------------- reversed scans and ties on short axes

@tl.kernel
def short_axes(x_ptr: Pointer[f32], y_ptr: Pointer[bf16], o_ptr: Pointer[f32], i_ptr: Pointer[i32],
               M: constexpr, N: constexpr) -> None:
    """Reversed cumsums and cumprods of 2-D f32 and bf16 blocks (bf16's in f32) along either axis,
    and argmax/argmin with ties and NaNs, each way of breaking ties, on axes of one or two."""
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    p = rm[:, None] * N + rn[None, :]
    x, y = tl.load(x_ptr + p), tl.load(y_ptr + p)
    block = M * N
    tl.store(o_ptr + p, tl.cumsum(x, 1, reverse=True))
    tl.store(o_ptr + block + p, tl.cumsum(x, 0, reverse=True))
    tl.store(o_ptr + 2 * block + p, tl.cumprod(y, 0, reverse=True))
    tl.store(o_ptr + 3 * block + p, tl.cumsum(y, 1))
    tl.store(i_ptr + rm, tl.argmax(x, 1))
    tl.store(i_ptr + M + rn, tl.argmin(x, 0))
    tl.store(i_ptr + M + N + rm, tl.argmax(y, 1, tie_break_left=False))
    tl.store(i_ptr + 2 * M + N + rn, tl.argmin(y, 0, tie_break_left=False))


def _arg(a: Arr, axis: int, largest: bool, left: bool) -> Arr:
    """argmax/argmin skipping NaN (an all-NaN line gives its last index), ties to the left or right."""
    out = []
    for line in np.moveaxis(a, axis, 0).T:
        if np.isnan(line).all():
            out.append(line.size - 1)
            continue
        hits = np.flatnonzero(line == (np.nanmax(line) if largest else np.nanmin(line)))
        out.append(int(hits[0] if left else hits[-1]))
    return np.asarray(out)


@pytest.mark.parametrize("m, n", [(1, 16), (2, 8), (16, 2), (8, 1)])
def test_reversed_scans_and_ties_on_short_axes(target: str, m: int, n: int) -> None:
    rng = np.random.default_rng(88 + 10 * m + n)
    x = rng.integers(-3, 4, (m, n)).astype(np.float32)
    x[rng.random((m, n)) < 0.15] = np.nan
    y = rng.integers(-2, 3, (m, n)).astype(ml_dtypes.bfloat16)
    with tl.backend(target):
        o = tl.to_device(np.full(4 * m * n, 12345.0, np.float32))
        ix = tl.to_device(np.full(2 * m + 2 * n, -777, np.int32))
        short_axes[(1,)](tl.to_device(x), tl.to_device(y), o, ix, M=m, N=n)
        got, idx = o.numpy().reshape(4, m, n), ix.numpy()
    yd = y.astype(np.float64)
    wants = [np.flip(np.cumsum(np.flip(x, 1), 1), 1), np.flip(np.cumsum(np.flip(x, 0), 0), 0),
             np.flip(np.cumprod(np.flip(yd, 0), 0), 0), np.cumsum(yd, 1)]
    for i, want in enumerate(wants):
        np.testing.assert_array_equal(got[i], want.astype(np.float32), err_msg=f"output {i}")
    yf = y.astype(np.float32)
    np.testing.assert_array_equal(idx[:m], _arg(x.T, 0, True, True))
    np.testing.assert_array_equal(idx[m:m + n], _arg(x, 0, False, True))
    np.testing.assert_array_equal(idx[m + n:2 * m + n], _arg(yf.T, 0, True, False))
    np.testing.assert_array_equal(idx[2 * m + n:], _arg(yf, 0, False, False))
