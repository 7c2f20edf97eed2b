"""Tuples as Triton passes and builds them, on the NumPy reference and on the generated CUDA (CPU
emulator): a launch's tuple argument holding buffers (nested, with None and constants beside
them), ``tl.tuple``, tuple ``+`` and ``==``, and ``f(x, *values)`` with a tuple of values.
Poisoned outputs, float64 NumPy references, seeded inputs."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 16


@tl.func
def scaled_sum(x, a, b):  # type: ignore[no-untyped-def]
    return x * a + b


@tl.kernel
def through_tuples(srcs, dsts, extra, B: constexpr):  # type: ignore[no-untyped-def]
    x_ptr, (y_ptr, skip, scale) = srcs
    tl.static_assert(skip is None)
    offs = tl.arange(0, B)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    out0, out1 = dsts
    tl.store(out0 + offs, scaled_sum(x, *(scale, y)))
    both = tl.tuple((x, y)) + (extra,)
    tl.static_assert(len(both) == 3)
    tl.store(out1 + offs, both[0] - both[1] * both[2] + ((1, 2) == (1, 2)))


def test_a_tuple_argument_passes_its_buffers_and_keeps_its_constants(target: str) -> None:
    rng = np.random.default_rng(41)
    x, y = (rng.standard_normal(B).astype(np.float32) for _ in range(2))
    with tl.backend(target):
        out = [tl.to_device(np.full(B, np.nan, np.float32)) for _ in range(2)]
        for scale in (3.0, -0.5):  # a constant in the tuple specialises: each value its own kernel
            through_tuples[(1,)]((tl.to_device(x), (tl.to_device(y), None, scale)), tuple(out), 2.0, B=B)
            got = [o.numpy().astype(np.float64) for o in out]
            xd, yd = x.astype(np.float64), y.astype(np.float64)
            np.testing.assert_allclose(got[0], xd * scale + yd, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(got[1], xd - yd * 2.0 + 1, rtol=1e-6, atol=1e-6)


def test_a_tuple_of_non_buffers_is_refused_naming_its_part(target: str) -> None:
    @tl.kernel
    def first(ptrs, B: constexpr):  # type: ignore[no-untyped-def]
        p, q = ptrs
        tl.store(q + tl.arange(0, B), tl.load(p + tl.arange(0, B)))

    with tl.backend(target), pytest.raises(tl.LaunchError, match=r"parameter ptrs_item1"):
        first[(1,)]((tl.to_device(np.zeros(B, np.float32)), object()), B=B)


def test_a_splat_outside_a_call_is_refused_at_its_line(target: str) -> None:
    @tl.kernel
    def spread(o_ptr: Pointer[f32], B: constexpr) -> None:
        parts = (1.0, 2.0)
        both = [*parts]
        tl.store(o_ptr + tl.arange(0, B), both[0])

    with tl.backend(target), pytest.raises(tl.KernelError, match=r"\*parts is only allowed as a call's argument"):
        spread[(1,)](tl.to_device(np.zeros(B, np.float32)), B=B)


def test_a_splat_of_a_tensor_is_refused_alike(target: str) -> None:
    @tl.kernel
    def spread(o_ptr: Pointer[f32], B: constexpr) -> None:
        x = tl.arange(0, B).to(tl.float32)
        tl.store(o_ptr + tl.arange(0, B), scaled_sum(*x))

    with tl.backend(target), pytest.raises(tl.KernelError, match="tensor is not iterable"):
        spread[(1,)](tl.to_device(np.zeros(B, np.float32)), B=B)
