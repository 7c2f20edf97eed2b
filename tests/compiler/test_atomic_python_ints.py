"""A Python int given to an atomic on integer elements is cast to their type, wrapping, as Triton
3.6 does (``tl.atomic_add(i32_ptr, 2**31)`` adds -2**31, ``tl.atomic_max(u32_ptr, -1)`` stores
0xFFFFFFFF), on the NumPy reference and on the generated CUDA (CPU emulator). The expected
values are Python ints computed here; inputs seeded."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import constexpr

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 8
_OPS: dict[int, Callable[[int, int], int]] = {0: lambda old, v: old + v, 1: max, 2: lambda old, v: v, 3: min}


@tl.kernel
def atomics(p_ptr, V: constexpr, K: constexpr, B: constexpr):  # type: ignore[no-untyped-def]
    ptrs = p_ptr + tl.arange(0, B)
    if K == 0:
        tl.atomic_add(ptrs, V)
    elif K == 1:
        tl.atomic_max(ptrs, V)
    elif K == 2:
        tl.atomic_xchg(ptrs, V)
    else:
        tl.atomic_min(ptrs, V)


def _wrap(value: int, signed: bool, bits: int) -> int:
    v = value % (1 << bits)
    return v - (1 << bits) if signed and v >> (bits - 1) else v


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
@pytest.mark.parametrize("value", [300, -1, 2**31, 2**32 + 3, 2**63, -2**63])
def test_an_atomic_casts_a_python_int_to_its_elements(target: str, dtype: type, value: int) -> None:
    info = np.iinfo(dtype)
    signed, bits = info.min < 0, info.bits
    start = np.random.default_rng(abs(value) % 997).integers(info.min, info.max, B, dtype=dtype, endpoint=True)
    v = _wrap(value, signed, bits)
    for kind, op in _OPS.items():
        want = [_wrap(op(int(e), v), signed, bits) for e in start]
        with tl.backend(target):
            cells = tl.to_device(start.copy())
            atomics[(1,)](cells, value, kind, B=B)
            assert [int(e) for e in cells.numpy()] == want, kind
