"""A Python int out of range for the integer elements it is loaded as (``other=``) or stored into
wraps, as in Triton 3.6 (``to_tensor`` makes it an i32, u32, i64 or u64 constant, then a cast to
the elements truncates): ``other=300`` on i8 reads 44, ``-1`` on u8 or u32 the largest value,
``2**40 + 5`` on i32 5. On the NumPy reference and the generated CUDA (CPU emulator), into
poisoned outputs, against Python's modular arithmetic; an int beyond 64 bits stays an error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, i8, i32, u8, u32
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 16


@tl.kernel
def wrapped(b_ptr: Pointer[i8], u_ptr: Pointer[u8], w_ptr: Pointer[u32], i_ptr: Pointer[i32],
            ob_ptr: Pointer[i8], ou_ptr: Pointer[u8], ow_ptr: Pointer[u32], oi_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    low = offs < B // 2
    tl.store(ob_ptr + offs, tl.load(b_ptr + offs, mask=low, other=300))
    tl.store(ou_ptr + offs, tl.load(u_ptr + offs, mask=low, other=-1))
    tl.store(ow_ptr + offs, tl.load(w_ptr + offs, mask=low, other=-2))
    tl.store(oi_ptr + offs, tl.load(i_ptr + offs, mask=low, other=2**40 + 5))
    tl.store(ob_ptr + B + offs, -129)
    tl.store(oi_ptr + B + offs, 2**32 - 7)


def _wrap(value: int, dtype: Any) -> Any:
    return np.array(value % 2 ** (8 * np.dtype(dtype).itemsize)).astype(np.uint64).astype(dtype)


def test_out_of_range_ints_wrap_to_the_elements(target: str) -> None:
    rng = np.random.default_rng(41)
    ins = [rng.integers(np.iinfo(d).min, np.iinfo(d).max, B, endpoint=True).astype(d)
           for d in (np.int8, np.uint8, np.uint32, np.int32)]
    with tl.backend(target):
        ob, ou = tl.to_device(np.full(2 * B, 7, np.int8)), tl.to_device(np.full(2 * B, 7, np.uint8))
        ow, oi = tl.to_device(np.full(2 * B, 7, np.uint32)), tl.to_device(np.full(2 * B, 7, np.int32))
        wrapped[(1,)](tl.to_device(ins[0]), tl.to_device(ins[1]), tl.to_device(ins[2]), tl.to_device(ins[3]),
                      ob, ou, ow, oi, B=B)
        got = [b.numpy() for b in (ob, ou, ow, oi)]
    for k, (given, other) in enumerate(zip(ins, (300, -1, -2, 2**40 + 5))):
        want = np.where(np.arange(B) < B // 2, given, _wrap(other, given.dtype))
        np.testing.assert_array_equal(got[k][:B], want, err_msg=f"load {k}")
    assert got[0][B:].tolist() == [127] * B and got[3][B:].tolist() == [-7] * B
    assert got[1][B:].tolist() == [7] * B  # untouched


@tl.kernel
def too_wide(x_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < 2, other=2**64))


def test_an_int_beyond_64_bits_is_still_an_error() -> None:
    """Triton: "Nonrepresentable integer 18446744073709551616"."""
    with pytest.raises(KernelError, match="out of range for every integer type"):
        too_wide[(1,)](tl.to_device(np.zeros(B, np.int32)), B=B)
