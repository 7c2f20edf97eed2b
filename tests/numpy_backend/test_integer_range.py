"""Program ids and offsets never wrap silently on the reference; int arguments are typed as
the CUDA backend types them (i32, i64, u64 from 2**63)."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i64, u64


@tl.kernel
def strided_copy(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, 4)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def strided_copy_wide(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    pid = tl.full((), tl.program_id(0), tl.int64)
    offs = pid * BLOCK + tl.arange(0, 4).to(tl.int64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


def test_an_i32_offset_that_would_wrap_is_an_error_at_its_line() -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.random.default_rng(0).standard_normal(8).astype(np.float32), tl.f32)
        out = tl.to_device(np.full(8, np.nan, np.float32), tl.f32)
        with pytest.raises(tl.KernelError) as info:
            strided_copy[(3,)](x, out, 8, BLOCK=2**30)
        message = str(info.value)
        assert "signed integer overflow: 2 * 1073741824 does not fit in i32 (program (2,), lane 0)" in message
        assert "offs = pid * BLOCK + tl.arange(0, 4)" in message
        assert info.value.lineno == strided_copy.fn.__code__.co_firstlineno + 3
        assert np.isnan(out.numpy()).all()  # nothing written: the launch is all or nothing


def test_the_same_offsets_in_i64_run() -> None:
    with tl.backend("numpy"):
        host = np.random.default_rng(1).standard_normal(8).astype(np.float32)
        out = tl.to_device(np.full(8, np.nan, np.float32), tl.f32)
        strided_copy_wide[(3,)](tl.to_device(host, tl.f32), out, 8, BLOCK=2**30)
        expected = np.full(8, np.nan, np.float32)
        expected[:4] = host[:4]
        np.testing.assert_array_equal(out.numpy(), expected)


@tl.kernel
def products(a: Pointer[i64], b: Pointer[i64], out: Pointer[i64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(a + offs) * tl.load(b + offs))


def test_i64_overflow_is_caught_exactly() -> None:
    with tl.backend("numpy"):
        rng = np.random.default_rng(2)
        a = rng.integers(-(2**31), 2**31, 16, dtype=np.int64)
        b = rng.integers(-(2**31), 2**31, 16, dtype=np.int64)
        a[5], b[5] = 2**62, -2  # exactly -2**63: fits
        out = tl.to_device(np.zeros(16, np.int64), tl.i64)
        products[(1,)](tl.to_device(a, tl.i64), tl.to_device(b, tl.i64), out, BLOCK=16)
        assert out.numpy().tolist() == [int(p) * int(q) for p, q in zip(a, b)]
        a[9], b[9] = 2**40, 2**23  # 2**63: does not fit
        with pytest.raises(tl.KernelError, match=r"1099511627776 \* 8388608 does not fit in i64 \(program \(0,\), lane 9\)"):
            products[(1,)](tl.to_device(a, tl.i64), tl.to_device(b, tl.i64), out, BLOCK=16)


@tl.kernel
def store_int(out: Pointer[u64], value: int, step: int) -> None:
    tl.store(out, value)
    tl.store(out + 1, value + step)  # u64 arithmetic wraps, as on the GPU
    tl.store(out + 2, value - step)
    tl.store(out + 3, value // 3)  # unsigned division: differs if the value were read as i64


@pytest.mark.parametrize("value", [2**63, 2**63 + 12345, 2**64 - 1])
def test_ints_from_2_63_are_u64_as_on_the_cuda_backend(value: int) -> None:
    with tl.backend("numpy"):
        out = tl.to_device(np.zeros(4, np.uint64), tl.u64)
        store_int[(1,)](out, value, 7)
        assert out.numpy().tolist() == [value, (value + 7) % 2**64, value - 7, value // 3]


def test_a_grid_axis_past_i32_is_rejected() -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.zeros(8, np.float32), tl.f32)
        with pytest.raises(tl.LaunchError, match="2147483648"):
            strided_copy[(2**31,)](x, x, 8, BLOCK=4)
