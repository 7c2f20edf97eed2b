"""Miscompiles found by probing and fuzzing, each kept as a regression test: the generated CUDA
runs on the CPU emulator and must match a float64 NumPy reference (outputs poisoned first)."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, registry

from tests.compiler.emulator import NAME, EmuBackend

_BACKEND = EmuBackend()
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))
BACKENDS = ("numpy", NAME)


@tl.kernel
def loop_with_dead_value(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    for i in range(n):
        unused = tl.load(x_ptr + offs) * 3.0  # noqa: F841 (dead: must not take the loop with it)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + i)


@tl.kernel
def loop_with_early_return(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, stop: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    acc = tl.zeros((B,), tl.f32)
    for i in range(n):
        if i == stop:
            tl.store(o_ptr + offs, acc)
            return
        acc = acc + tl.load(x_ptr + offs) * (i + 1)  # carried past the returning `if`
    tl.store(o_ptr + offs, acc - 1.0)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    registry.register(_BACKEND)
    name: str = request.param
    return name


def _poisoned(n: int) -> tl.Buffer[f32]:
    return tl.to_device(np.full(n, np.nan, np.float32), tl.f32)


def test_loop_holding_a_dead_value_keeps_its_stores(backend: str) -> None:
    x = np.random.default_rng(1).random(32, dtype=np.float32)
    with tl.backend(backend):
        out = _poisoned(32)
        loop_with_dead_value[(1,)](tl.to_device(x, tl.f32), out, 4, B=32)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + 3, rtol=1e-6)


@pytest.mark.parametrize("n, stop", [(8, 5), (3, 5), (6, 0)])
def test_early_return_keeps_updates_made_after_the_if(backend: str, n: int, stop: int) -> None:
    x = np.random.default_rng(2).random(32, dtype=np.float32)
    steps = min(n, stop)
    want = x.astype(np.float64) * sum(range(1, steps + 1)) - (0.0 if stop < n else 1.0)
    with tl.backend(backend):
        out = _poisoned(32)
        loop_with_early_return[(1,)](tl.to_device(x, tl.f32), out, n, stop, B=32)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
