"""``x.shape`` and ``desc.block_shape`` equal a tuple and a list of the same ints, and differ from
other ints, on the NumPy reference and on the generated CUDA (CPU emulator), as in Triton 3.6
(where ``desc.block_shape == (BM, BN)`` and ``== [BM, BN]`` both hold). Each answer is stored
into a poisoned output and compared with Python's answer on tuples."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import constexpr

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


@tl.kernel
def shapes(o_ptr, t_ptr, BM: constexpr, BN: constexpr, P: constexpr, Q: constexpr):  # type: ignore[no-untyped-def]
    x = tl.zeros((BM, BN), tl.float32)
    d = tl.make_tensor_descriptor(t_ptr, shape=[8, 8], strides=[8, 1], block_shape=[BM, BN])
    tl.store(o_ptr + 0, x.shape == (P, Q))
    tl.store(o_ptr + 1, x.shape == [P, Q])
    tl.store(o_ptr + 2, d.block_shape == (P, Q))
    tl.store(o_ptr + 3, d.block_shape == [P, Q])
    tl.store(o_ptr + 4, [P, Q] == d.block_shape)
    tl.store(o_ptr + 5, d.block_shape != (P, Q))


@pytest.mark.parametrize("other", [(4, 8), (4, 4), (8, 4)])
def test_shapes_equal_tuples_and_lists_of_their_ints(target: str, other: tuple[int, int]) -> None:
    same = other == (4, 8)
    with tl.backend(target):
        out = tl.to_device(np.full(6, 7, np.int32))
        shapes[(1,)](out, tl.to_device(np.zeros(64, np.float32)), 4, 8, *other)
        assert out.numpy().tolist() == [same] * 5 + [not same]
