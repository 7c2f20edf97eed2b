"""A fifth set of hand-written kernels in the idioms of real Triton code, probing atomics (every
read-modify-write op, old values, many lanes on one address), Philox streams, grids and persistent
loops, saturating float -> int casts and sort/topk/gather/histogram: each runs on the NumPy
reference and on the generated CUDA under the CPU emulator (sm_80 and sm_90), outputs poisoned
first, against NumPy in float64 (or an independent NumPy model, bit for bit)."""

from __future__ import annotations

from typing import Any, TypeVar

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Dtype, Pointer, constexpr, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
T = TypeVar("T", bound=Dtype)
N = TypeVar("N", bound=i32 | i64 | u32 | u64 | f32 | f64)
Z = TypeVar("Z", bound=i32 | i64 | u32 | u64)


# ---------------------------------------------------------------- atomics

@tl.kernel
def every_rmw(x_ptr: Pointer[N], v_ptr: Pointer[N], o_ptr: Pointer[N], B: constexpr) -> None:
    """Each op on its own slice of distinct addresses, every fifth lane masked off: memory after,
    and each lane's old value."""
    offs = tl.arange(0, B)
    v = tl.load(v_ptr + offs)
    m = offs % 5 != 2
    tl.store(o_ptr + offs, tl.atomic_add(x_ptr + offs, v, mask=m), mask=m)
    tl.store(o_ptr + B + offs, tl.atomic_max(x_ptr + B + offs, v, mask=m, sem="relaxed"), mask=m)
    tl.store(o_ptr + 2 * B + offs, tl.atomic_min(x_ptr + 2 * B + offs, v, mask=m, scope="cta"), mask=m)
    tl.store(o_ptr + 3 * B + offs, tl.atomic_xchg(x_ptr + 3 * B + offs, v, mask=m, sem="release"), mask=m)


@tl.kernel
def bitwise_rmw(x_ptr: Pointer[Z], v_ptr: Pointer[Z], o_ptr: Pointer[Z], B: constexpr) -> None:
    """The bitwise ops as :func:`every_rmw` runs the others, on slices 4 to 6."""
    offs = tl.arange(0, B)
    v = tl.load(v_ptr + offs)
    m = offs % 5 != 2
    tl.store(o_ptr + 4 * B + offs, tl.atomic_and(x_ptr + 4 * B + offs, v, mask=m), mask=m)
    tl.store(o_ptr + 5 * B + offs, tl.atomic_or(x_ptr + 5 * B + offs, v, mask=m, sem="acquire"), mask=m)
    tl.store(o_ptr + 6 * B + offs, tl.atomic_xor(x_ptr + 6 * B + offs, v, mask=m, scope="sys"), mask=m)


def _float_order(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Triton's float atomic max/min compare the bits: signed for >= 0, unsigned for < 0, so this
    key (a total order with -0.0 < +0.0 and NaN outermost by sign) is what they compare."""
    bits = a.view(np.int32)
    return np.where(bits < 0, bits ^ np.int32(2**31 - 1), bits)


@pytest.mark.parametrize("host", [np.int32, np.uint32, np.int64, np.uint64, np.float32])
def test_every_read_modify_write_op_and_its_old_values(target: str, host: type) -> None:
    rng, b = np.random.default_rng(11), 64
    ints = np.issubdtype(host, np.integer)
    ops = 7 if ints else 4
    if ints:
        info = np.iinfo(host)
        x0 = rng.integers(info.min, info.max, ops * b, dtype=host, endpoint=True)
        v = rng.integers(info.min, info.max, b, dtype=host, endpoint=True)
        v[:4] = [info.max, info.min, info.min, info.max]
        x0[::b], x0[1::b] = info.min, info.max
    else:
        x0 = rng.standard_normal(ops * b).astype(host)
        v = rng.standard_normal(b).astype(host)
        x0[:8] = x0[b:b + 8] = x0[2 * b:2 * b + 8] = [-0.0, 0.0, np.nan, 1.0, -np.inf, -np.nan, -0.0, 3.0]
        v[:8] = [0.0, -0.0, 1.0, np.nan, -1.0, 2.0, -0.0, -np.nan]
    lanes = np.arange(b) % 5 != 2
    old = x0.reshape(ops, b)
    with np.errstate(over="ignore"):
        new = [old[0] + v, None, None, np.broadcast_to(v, (b,))]
    if ints:
        new[1], new[2] = np.maximum(old[1], v), np.minimum(old[2], v)
        new += [old[4] & v, old[5] | v, old[6] ^ v]
    else:
        new[1] = np.where(_float_order(v) > _float_order(old[1]), v, old[1])
        new[2] = np.where(_float_order(v) < _float_order(old[2]), v, old[2])
    want = np.where(lanes, np.stack(new), old)
    with tl.backend(target):
        x, o = tl.to_device(x0.copy()), tl.to_device(np.full(ops * b, 7, host))
        every_rmw[(1,)](x, tl.to_device(v), o, B=b)
        if ints:
            bitwise_rmw[(1,)](x, tl.to_device(v), o, B=b)
        got_x, got_o = x.numpy().reshape(ops, b), o.numpy().reshape(ops, b)
    if ints:
        np.testing.assert_array_equal(got_x, want)
    else:  # add's NaN payloads are the hardware's; the rest moves bits
        np.testing.assert_array_equal(got_x[0], want[0])
        np.testing.assert_array_equal(got_x[1:].view(np.uint32), want[1:].view(np.uint32))
    np.testing.assert_array_equal(got_o.view(np.uint8), np.where(lanes, old, np.full_like(old, 7)).view(np.uint8))


@tl.kernel
def one_address(c_ptr: Pointer[i32], l_ptr: Pointer[i64], v_ptr: Pointer[i32], o_ptr: Pointer[i32],
                t_ptr: Pointer[i32], h_ptr: Pointer[f16], g_ptr: Pointer[tl.bfloat16], B: constexpr) -> None:
    """Many lanes (and programs) on one address: integer sums exact at any order, a ticket a
    program from a scalar atomic, half-precision adds, bitwise folds."""
    offs = tl.arange(0, B)
    v = tl.load(v_ptr + offs)
    old = tl.atomic_add(c_ptr + offs % 4, v, mask=offs < B - 3)
    tl.store(o_ptr + tl.program_id(0) * B + offs, old)
    tl.atomic_add(l_ptr + offs * 0, v.to(tl.int64) * 1000000000)
    tl.atomic_max(c_ptr + 4 + offs * 0, v)
    tl.atomic_min(c_ptr + 5 + offs * 0, v)
    tl.atomic_or(c_ptr + 6 + offs % 2, 1 << (offs % 31))
    tl.atomic_xor(c_ptr + 8 + offs * 0, v)
    tl.atomic_and(c_ptr + 9 + offs * 0, ~(1 << (offs % 32)), mask=offs % 3 == 0)
    tl.store(t_ptr + tl.program_id(0), tl.atomic_add(c_ptr + 10, 1))
    tl.atomic_add(h_ptr + offs % 8, (v & 7).to(tl.float16) * 0.25, sem="relaxed")
    tl.atomic_add(g_ptr + offs % 8, (v & 7).to(tl.bfloat16), scope="gpu")


def _wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def test_many_lanes_on_one_address(target: str) -> None:
    """Int sums exact whatever the order, and one program's old values chain: per address, each
    lane's old plus its value is another lane's old, from the initial value to the final one."""
    rng, b, p = np.random.default_rng(12), 64, 3
    v = rng.integers(-2**31, 2**31, b).astype(np.int32)
    c0 = np.zeros(16, np.int32)
    c0[4], c0[5], c0[9] = -2**31, -1, -1
    for programs in (1, p):
        with tl.backend(target):
            c, big = tl.to_device(c0.copy()), tl.to_device(np.zeros(1, np.int64))
            o, t = tl.to_device(np.full(programs * b, 7, np.int32)), tl.to_device(np.full(programs, -7, np.int32))
            h, g = tl.to_device(np.zeros(8, np.float16)), tl.to_device(np.zeros(8, ml_dtypes.bfloat16))
            one_address[(programs,)](c, big, tl.to_device(v), o, t, h, g, B=b)
            got = c.numpy()
        vs = [int(q) for q in v]
        for k in range(4):
            assert got[k] == _wrap32(programs * sum(vs[k:b - 3:4]))
        assert big.numpy()[0] == (programs * sum(vs) * 10**9 + 2**63) % 2**64 - 2**63
        assert got[4] == v.max() and got[5] == min(-1, v.min())
        assert got[6] == got[7] == 2**31 - 1  # lane l sets bit l % 31 of word l % 2: every bit of both
        assert got[8] == np.bitwise_xor.reduce(v) * (programs % 2)
        assert got[9] == _wrap32(~sum(1 << (k % 32) for k in range(0, b, 3)) & 0xFFFFFFFF)
        assert sorted(t.numpy()) == list(range(programs)) and got[10] == programs
        per = np.array([sum(vs[k] & 7 for k in range(j, b, 8)) for j in range(8)]) * programs
        np.testing.assert_array_equal(h.numpy().astype(np.float64), per * 0.25)
        np.testing.assert_array_equal(g.numpy().astype(np.float64), per)
        if programs == 1:
            olds = o.numpy()
            for k in range(4):
                lanes = list(range(k, b - 3, 4))
                have, at = {int(olds[q]): q for q in lanes}, 0
                for _ in lanes:
                    at = _wrap32(at + vs[have.pop(at)])
                assert at == got[k] and not have


# ---------------------------------------------------------------- Philox

def _philox(seed: int, counter: np.ndarray) -> list[np.ndarray]:
    """Philox 4x32-10 in NumPy (counter, 0, 0, 0), key the seed's low and high words."""
    c = [counter.astype(np.uint64) % np.uint64(2**32), *(np.zeros(counter.shape, np.uint64) for _ in range(3))]
    k0, k1 = seed % 2**32, seed >> 32
    for _ in range(10):
        p0, p1 = c[0] * 0xD2511F53, c[2] * 0xCD9E8D57
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 % np.uint64(2**32), (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1),
             p0 % np.uint64(2**32)]
        k0, k1 = (k0 + 0x9E3779B9) % 2**32, (k1 + 0xBB67AE85) % 2**32
    return [q.astype(np.uint32) for q in c]


def _uniform(bits: np.ndarray) -> np.ndarray:
    signed = bits.view(np.int32)
    return np.where(signed < 0, ~signed, signed).astype(np.float32) * np.float32(4.6566127342e-10)


@tl.kernel
def streams(f_ptr: Pointer[f32], u_ptr: Pointer[u32], seed: int, wide_seed: int, base: int, B: constexpr) -> None:
    """Dropout-style streams: block offsets past 2**31 (wrapping as u32 counters), a 2-D offset
    block, a scalar offset, and all four words of randint4x under a 64-bit seed."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(f_ptr + offs, tl.rand(seed, offs + base))
    tl.store(u_ptr + offs, tl.randint(seed, (offs * 7).to(tl.uint32)))
    a, b, c, d = tl.randint4x(wide_seed, offs)
    tl.store(u_ptr + 4 * B + offs * 4, a)
    tl.store(u_ptr + 4 * B + offs * 4 + 1, b)
    tl.store(u_ptr + 4 * B + offs * 4 + 2, c)
    tl.store(u_ptr + 4 * B + offs * 4 + 3, d)
    r, q = tl.arange(0, B)[:, None], tl.arange(0, 4)[None, :]
    tl.store(f_ptr + 4 * B + pid * B * 4 + r * 4 + q, tl.rand(wide_seed, r * 4 + q + pid * 100))
    tl.store(f_ptr + 20 * B + pid, tl.rand(seed, tl.full((), base, tl.int32) + pid))


def test_philox_streams_are_bit_exact(target: str) -> None:
    b, programs, seed, wide, base = 32, 4, 12345, 2**40 + 77, 2**31 - 300
    n = b * programs
    with tl.backend(target):
        f, u = tl.to_device(np.full(21 * b, np.nan, np.float32)), tl.to_device(np.zeros(20 * b, np.uint32))
        streams[(programs,)](f, u, seed, wide, base, B=b)
        got_f, got_u = f.numpy(), u.numpy()
    offs = np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(got_f[:n], _uniform(_philox(seed, offs + base)[0]))
    np.testing.assert_array_equal(got_u[:n], _philox(seed, offs * 7)[0])
    np.testing.assert_array_equal(got_u[n:5 * n].reshape(n, 4), np.stack(_philox(wide, offs), 1))
    grid = (np.arange(b)[:, None] * 4 + np.arange(4)[None, :])[None] + 100 * np.arange(programs)[:, None, None]
    np.testing.assert_array_equal(got_f[n:5 * n], _uniform(_philox(wide, grid.reshape(-1))[0]))
    np.testing.assert_array_equal(got_f[20 * b:20 * b + programs], _uniform(_philox(seed, np.arange(programs) + base)[0]))


# ---------------------------------------------------------------- grids and loops

@tl.kernel
def grid_cube(o_ptr: Pointer[i32], B: constexpr) -> None:
    """Each program of a 3-D grid writes its linear index and the grid's extents."""
    n0, n1, n2 = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    lin = (tl.program_id(2) * n1 + tl.program_id(1)) * n0 + tl.program_id(0)
    tl.store(o_ptr + lin * B + tl.arange(0, B), lin * 1000 + n0 * 100 + n1 * 10 + n2 + tl.arange(0, B) * 0)


@tl.kernel
def wide_grid(o_ptr: Pointer[i32], n: int) -> None:
    """More than 65535 programs along axis 0 (grid.x goes to 2**31 - 1), with a passing assert."""
    pid = tl.program_id(0)
    tl.device_assert(pid < n, "a program past the grid")
    tl.store(o_ptr + pid, pid * 3 + tl.num_programs(0))


@tl.kernel
def persistent_tiles(x_ptr: Pointer[f32], o_ptr: Pointer[f32], s_ptr: Pointer[f32], bounds_ptr: Pointer[i32],
                     n_tiles: int, B: constexpr, U: constexpr) -> None:
    """A persistent loop over tiles, unrolled U times, a flattened pipelined loop, and a loop
    whose bounds are loaded (empty and reversed ranges among them)."""
    acc = tl.zeros((B,), tl.float32)
    for t in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), loop_unroll_factor=U):
        x = tl.load(x_ptr + t * B + tl.arange(0, B))
        tl.store(o_ptr + t * B + tl.arange(0, B), x * 2.0 + t)
        acc += x
    for k in tl.range(0, 4, flatten=True, warp_specialize=False, num_stages=2):
        acc += k
    lo, hi = tl.load(bounds_ptr + tl.program_id(0)), tl.load(bounds_ptr + tl.program_id(0) + 1)
    for i in range(lo, hi):
        acc += tl.load(x_ptr + i)
    tl.store(s_ptr + tl.program_id(0) * B + tl.arange(0, B), acc)


def test_grids_and_persistent_loops(target: str) -> None:
    n = 70000
    with tl.backend(target):
        o = tl.to_device(np.full(60 * 8, -1, np.int32))
        grid_cube[(3, 4, 5)](o, B=8)
        np.testing.assert_array_equal(o.numpy(), np.repeat(np.arange(60) * 1000 + 345, 8))
        w = tl.to_device(np.full(n, -1, np.int32))
        wide_grid[(n,)](w, n)
        np.testing.assert_array_equal(w.numpy(), np.arange(n) * 3 + n)
    tiles, b, programs = 23, 32, 5
    x = np.random.default_rng(13).standard_normal(tiles * b).astype(np.float32)
    bounds = np.array([0, 3, 3, 10, 1, 2], np.int32)
    loaded = [x[bounds[p]:bounds[p + 1]].astype(np.float64).sum() for p in range(programs)]
    want_s = np.stack([x.reshape(tiles, b)[p::programs].astype(np.float64).sum(0) + 6 + loaded[p] for p in range(programs)])
    for unroll in (1, 3):
        with tl.backend(target):
            o, s = tl.to_device(np.full(tiles * b, np.nan, np.float32)), tl.to_device(np.full(programs * b, np.nan, np.float32))
            persistent_tiles[(programs,)](tl.to_device(x), o, s, tl.to_device(bounds), tiles, B=b, U=unroll)
            np.testing.assert_array_equal(o.numpy(), x * np.float32(2) + np.repeat(np.arange(tiles), b).astype(np.float32))
            np.testing.assert_allclose(s.numpy().reshape(programs, b), want_s, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- conversions and block ops

@tl.kernel
def saturating(x_ptr: Pointer[T], a: Pointer[i8], b: Pointer[u8], c: Pointer[i16], d: Pointer[u16], e: Pointer[i32],
               f: Pointer[u32], g: Pointer[i64], h: Pointer[u64], B: constexpr) -> None:
    """One float block cast to every integer type (FlagGems' casts, quantisation)."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(a + offs, x.to(tl.int8))
    tl.store(b + offs, x.to(tl.uint8))
    tl.store(c + offs, x.to(tl.int16))
    tl.store(d + offs, x.to(tl.uint16))
    tl.store(e + offs, x.to(tl.int32))
    tl.store(f + offs, x.to(tl.uint32))
    tl.store(g + offs, x.to(tl.int64))
    tl.store(h + offs, x.to(tl.uint64))


@pytest.mark.parametrize("host", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_float_to_every_integer_truncates_and_saturates(target: str, host: type) -> None:
    """cvt.rzi.sat: toward zero, clamped to the target's range, NaN to 0, for every width."""
    specials = [np.nan, -np.nan, np.inf, -np.inf, -0.0, -0.7, -1.0, 255.9, 256.0, -129.0, 300.7, 65535.5, 65536.0,
                -40000.0, 2.0**31, -2.0**31 - 4096, 2.0**32, 2.0**32 + 8192, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30]
    b = 64
    x: np.ndarray[Any, Any] = (np.random.default_rng(14).standard_normal(b) * 1e3).astype(host)
    with np.errstate(over="ignore"):
        x[:len(specials)] = np.array(specials).astype(host)
    exact = [0 if np.isnan(q) else (q if np.isfinite(q) else int(np.sign(q)) * 2**70) for q in x.astype(np.float64)]
    kinds = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
    with tl.backend(target):
        outs = [tl.to_device(np.full(b, 77, k)) for k in kinds]
        saturating[(1,)](tl.to_device(x), outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], outs[7], B=b)
        for k, out in zip(kinds, outs):
            bits, signed = np.dtype(k).itemsize * 8, np.dtype(k).kind == "i"
            low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
            want = np.array([min(max(int(q), low), high) for q in exact], dtype=object)
            np.testing.assert_array_equal(out.numpy().astype(object), want, err_msg=k.__name__)


@tl.kernel
def block_ops(x_ptr: Pointer[f32], i_ptr: Pointer[i32], u_ptr: Pointer[u32], o_ptr: Pointer[f32], oi_ptr: Pointer[i32],
              ou_ptr: Pointer[u32], n: int, M: constexpr, K: constexpr) -> None:
    """Sorts and top-k of floats (NaN, infinities), ints and unsigned, gathers along each axis, a
    masked histogram, umulhi and unsigned max/min across the sign bit, cdiv of negatives."""
    r, c = tl.arange(0, M)[:, None], tl.arange(0, M)[None, :]
    x, i, u = tl.load(x_ptr + r * M + c), tl.load(i_ptr + r * M + c), tl.load(u_ptr + r * M + c)
    idx = i & (M - 1)
    tl.store(o_ptr + r * M + c, tl.gather(x, idx, 0))
    tl.store(o_ptr + M * M + r * M + c, tl.gather(x, idx, 1))
    tl.store(o_ptr + 2 * M * M + r * M + c, tl.sort(x, descending=True))
    tl.store(o_ptr + 3 * M * M + r * K + tl.arange(0, K)[None, :], tl.topk(x, K))
    tl.store(oi_ptr + r * M + c, tl.sort(i))
    tl.store(oi_ptr + M * M + r * K + tl.arange(0, K)[None, :], tl.topk(i, K, descending=False))
    tl.store(oi_ptr + 2 * M * M + tl.arange(0, 16), tl.histogram((i & 15).reshape(M * M), 16, mask=tl.arange(0, M * M) < n))
    tl.store(oi_ptr + 3 * M * M + r * M + c, tl.cdiv(i % 1000, 7))
    tl.store(ou_ptr + r * M + c, tl.sort(u))
    tl.store(ou_ptr + M * M + r * M + c, tl.umulhi(u, u * 3 + 1))
    tl.store(ou_ptr + 2 * M * M + r * M + c, tl.maximum(u, u ^ 0x80000000))
    tl.store(ou_ptr + 3 * M * M + r * M + c, tl.minimum(u, u ^ 0x80000000))


def test_sorts_gathers_histograms_and_unsigned_ops(target: str) -> None:
    rng, m, k, n = np.random.default_rng(15), 16, 4, 200
    x = rng.standard_normal(m * m).astype(np.float32)
    x[1:5] = [np.inf, -np.inf, 2.0, 2.0]
    i = rng.integers(-2**31, 2**31, m * m).astype(np.int32)
    i[:3] = [-2**31, 2**31 - 1, 0]
    u = rng.integers(0, 2**32, m * m, dtype=np.uint64).astype(np.uint32)
    with tl.backend(target):
        o, oi = tl.to_device(np.full(4 * m * m, np.nan, np.float32)), tl.to_device(np.full(4 * m * m, 7, np.int32))
        ou = tl.to_device(np.zeros(4 * m * m, np.uint32))
        block_ops[(1,)](tl.to_device(x), tl.to_device(i), tl.to_device(u), o, oi, ou, n, M=m, K=k)
        go, gi, gu = o.numpy(), oi.numpy(), ou.numpy()
    xx, ii, uu, idx = x.reshape(m, m), i.reshape(m, m), u.reshape(m, m), i.reshape(m, m) & (m - 1)
    sq = m * m
    np.testing.assert_array_equal(go[:sq].reshape(m, m), np.take_along_axis(xx, idx, 0))
    np.testing.assert_array_equal(go[sq:2 * sq].reshape(m, m), np.take_along_axis(xx, idx, 1))
    np.testing.assert_array_equal(go[2 * sq:3 * sq].reshape(m, m), -np.sort(-xx, 1))
    np.testing.assert_array_equal(go[3 * sq:3 * sq + m * k].reshape(m, k), -np.sort(-xx, 1)[:, :k])
    np.testing.assert_array_equal(gi[:sq].reshape(m, m), np.sort(ii, 1))
    np.testing.assert_array_equal(gi[sq:sq + m * k].reshape(m, k), np.sort(ii, 1)[:, :k])
    np.testing.assert_array_equal(gi[2 * sq:2 * sq + 16], np.bincount(i[:n] & 15, minlength=16))
    rem = np.fmod(ii.astype(np.int64), 1000) + 6  # Triton's cdiv: (x + 6) // 7, truncating as C does
    np.testing.assert_array_equal(gi[3 * sq:].reshape(m, m), np.trunc(rem / 7).astype(np.int64))
    u64 = uu.astype(np.uint64)
    np.testing.assert_array_equal(gu[:sq].reshape(m, m), np.sort(uu, 1))
    np.testing.assert_array_equal(gu[sq:2 * sq].reshape(m, m), (u64 * ((u64 * 3 + 1) % 2**32)) >> 32)
    flipped = uu ^ np.uint32(0x80000000)
    np.testing.assert_array_equal(gu[2 * sq:3 * sq].reshape(m, m), np.maximum(uu, flipped))
    np.testing.assert_array_equal(gu[3 * sq:].reshape(m, m), np.minimum(uu, flipped))
