"""The rules' results are kept by what they saw (``tile_lang.semantics.dispatch._MADE``): a call
that meets the same Blocks and constants again reuses them, and the verdicts do not change."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.semantics import dispatch


@tl.kernel
def typed_constants(x_ptr: Pointer[i32], as_int: Pointer[i32], as_float_bits: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(as_int + offs, x + 1)  # i32
    y = x + 1.0  # type: ignore[operator]  # i32 + a float: f32 at run time, as in Triton
    tl.store(as_float_bits + offs, y.to(tl.int32, bitcast=True))  # 1.0 == 1, but its own rule


def test_equal_constants_of_other_types_keep_their_own_rules(tile_backend: str) -> None:
    x = np.array([-3, 0, 7, 2**20], np.int32)
    as_int, bits = tl.empty(4, tl.i32), tl.empty(4, tl.i32)
    for _ in range(2):  # the second launch meets every rule result again
        typed_constants[(1,)](tl.to_device(x, tl.i32), as_int, bits, BLOCK=4)
        np.testing.assert_array_equal(as_int.numpy(), x + 1)
        np.testing.assert_array_equal(bits.numpy(), (x.astype(np.float64) + 1.0).astype(np.float32).view(np.int32))


@tl.kernel
def shapes(x_ptr: Pointer[f32], out_ptr: Pointer[f32], A: constexpr, B: constexpr) -> None:
    a = tl.load(x_ptr + tl.arange(0, A))
    b = tl.load(x_ptr + tl.arange(0, B))
    tl.store(out_ptr + tl.arange(0, A), a + b)


def test_a_rule_error_is_raised_every_time() -> None:
    x, out = tl.to_device(np.arange(8, dtype=np.float32), tl.f32), tl.empty(8, tl.f32)
    shapes[(1,)](x, out, A=8, B=8)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(8, dtype=np.float32))
    for _ in range(2):
        with pytest.raises(tl.KernelError, match="8.*4|4.*8"):
            shapes[(1,)](x, out, A=8, B=4)
    shapes[(1,)](x, out, A=4, B=4)  # and the good case still runs
    np.testing.assert_array_equal(out.numpy()[:4], 2 * np.arange(4, dtype=np.float32))


def test_keys_tell_constants_apart_and_skip_other_values() -> None:
    parts = [dispatch._part(v) for v in (1, 1.0, True, 0.0, -0.0)]
    assert len(set(parts)) == 5
    assert dispatch._part([1, 2]) is None and dispatch._part((1, [2])) is None
    assert dispatch._part((1, 2.0)) == (tuple, ((int, 1), (float, (2.0).hex())))
    assert not dispatch._immutable({"shape": [1, 2]}) and dispatch._immutable({"shape": (1, 2)})


@tl.kernel
def masked_bits(x_ptr: Pointer[i32], out_ptr: Pointer[i32], FLOAT: constexpr) -> None:
    offs = tl.arange(0, 4)
    x = tl.load(x_ptr + offs)
    if FLOAT:
        tl.store(out_ptr + offs, x & 1.0)  # type: ignore[operator]  # the rule's error, not a result
    else:
        tl.store(out_ptr + offs, x & 1)


def test_a_rule_refusing_a_float_refuses_it_after_the_int() -> None:
    x, out = tl.to_device(np.arange(4, dtype=np.int32), tl.i32), tl.empty(4, tl.i32)
    masked_bits[(1,)](x, out, FLOAT=False)
    np.testing.assert_array_equal(out.numpy(), np.arange(4) & 1)
    with pytest.raises(tl.KernelError, match="invalid operands of type tl.f32 for operator &"):
        masked_bits[(1,)](x, out, FLOAT=True)
