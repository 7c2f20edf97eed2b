"""Accesses of one layout to one buffer through differently computed pointers, and passes whose
analyses are keyed by the original nodes: each compared with NumPy on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, registry
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import Op


@tl.kernel
def reverse_in_place(q: Pointer[f32], B: constexpr) -> None:
    """One layout walks both accesses, but ``q[j]`` is lane j of the load and lane B-1-j of the store."""
    offs = tl.arange(0, B)
    y = tl.load(q + offs)
    tl.store(q + (B - 1 - offs), y * 2)


@tl.kernel
def scale_in_place(q: Pointer[f32], B: constexpr) -> None:
    """``q + offs`` written twice: the same lanes, no barrier needed."""
    offs = tl.arange(0, B)
    y = tl.load(q + offs)
    tl.store(q + offs, y * 2)


@tl.kernel
def rows_then_head(q: Pointer[f32], out: Pointer[f32], B: constexpr) -> None:
    """A reversed row read (``q[0]`` is lane B-1's), then ``q[0]`` written by thread 0 alone: on a
    GPU warp 0 may run ahead of the last warp's read (the emulator's schedule does not show it)."""
    offs = tl.arange(0, B)
    y = tl.load(q + (B - 1 - offs))
    tl.store(q, tl.load(q + 1) * 3)
    tl.store(out + offs, y)


@tl.kernel
def reverse_after_loop(p: Pointer[f32], q: Pointer[f32], B: constexpr) -> None:
    """A loop given a barrier is a new node, and so is the reversed store that reads its result."""
    s = tl.zeros([1], tl.float32)
    for _ in range(2):
        x = tl.load(p + tl.arange(0, 1))
        tl.store(p + tl.arange(0, 1), x * 2)
        s += x
    offs = tl.arange(0, B)
    y = tl.load(q + offs)
    tl.store(q + (B - 1 - offs), y + s)


def _barriers_before_stores(kernel: object, consts: dict[str, int]) -> list[bool]:
    fn = compile_ir(kernel, static_spec(kernel, consts))
    body = list(fn.body.body)
    return [i > 0 and body[i - 1].op is Op.BARRIER for i, n in enumerate(body) if n.op is Op.STORE]


def test_only_pointers_computed_alike_are_ordered_without_a_barrier() -> None:
    assert _barriers_before_stores(reverse_in_place, {"B": 1024}) == [True]
    assert _barriers_before_stores(scale_in_place, {"B": 1024}) == [False]
    assert _barriers_before_stores(reverse_after_loop, {"B": 1024}) == [True]
    assert _barriers_before_stores(rows_then_head, {"B": 1024}) == [True, False]


@pytest.mark.parametrize("n", [256, 1024])
def test_in_place_reversals_match_numpy(backend: str, n: int) -> None:
    rng = np.random.default_rng(n)
    src = rng.standard_normal(n).astype(np.float32)
    head = rng.standard_normal(4).astype(np.float32)
    with registry.backend(backend):
        q = tl.to_device(src.copy())
        reverse_in_place[(1,)](q, B=n)
        np.testing.assert_array_equal(q.numpy(), src[::-1] * 2)
        q = tl.to_device(src.copy())
        scale_in_place[(1,)](q, B=n)
        np.testing.assert_array_equal(q.numpy(), src * 2)
        q, out = tl.to_device(src.copy()), tl.to_device(np.full(n, np.nan, np.float32))
        rows_then_head[(1,)](q, out, B=n)
        np.testing.assert_array_equal(out.numpy(), src[::-1])
        np.testing.assert_array_equal(q.numpy()[0], src[1] * 3)
        p, q = tl.to_device(head.copy()), tl.to_device(src.copy())
        reverse_after_loop[(1,)](p, q, B=n)
        s = np.float64(head[0]) + np.float64(head[0]) * 2
        np.testing.assert_allclose(q.numpy(), src[::-1] + s, rtol=1e-6)
        np.testing.assert_array_equal(p.numpy()[0], head[0] * 4)
