"""Triton idioms found running an operator library unmodified (FlagGems, 2026-12-03), each in a
kernel of our own, on the NumPy reference and on the generated CUDA (CPU emulator) alike:
``.value`` of a constexpr (a dtype passed to a helper), ``and``/``or`` in a combine function and
on a one-element block beside a larger one, and a pointer used as a condition. Outputs are
poisoned first; values come from seeded random inputs, checked against NumPy float64."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import tile_lang as tl

from tests.compiler.emulator import EMULATOR
from tests.fuzz.runner import load

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


def _module(name: str, source: str) -> Any:
    """The kernel ``name`` of a file written as Triton code is (helpers, untyped constants),
    imported so that mypy does not see it."""
    header = "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n"
    return load(name, header + textwrap.dedent(source).lstrip())


# ---------------------------------------------------------------- .value of a constexpr

lowest_clamped = _module("lowest_clamped", """
    @tl.func
    def lowest(kind: constexpr, offset: constexpr) -> float:
        d = kind.value  # a constexpr's value, as Triton's tl.constexpr has it
        if d.is_floating():
            return -1.0e30 + offset.value
        return -(2 ** (d.int_bitwidth - 1)) + offset.value


    @tl.kernel
    def lowest_clamped(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        offs = tl.program_id(0) * B + tl.arange(0, B)
        x = tl.load(x_ptr + offs, mask=offs < n, other=lowest(x_ptr.dtype.element_ty, 0))
        floor = lowest(x_ptr.dtype.element_ty, B)
        tl.store(o_ptr + offs, tl.maximum(x, floor), mask=offs < n)
        tl.store(o_ptr + n + tl.program_id(0), tl.max(x, axis=0))
""")


def test_value_of_a_constexpr_dtype_and_int(backend: str) -> None:
    """``dtype.value`` and ``n.value`` in a helper given a dtype and an int constexpr: the value
    itself (Triton passes constexprs as ``tl.constexpr``; FlagGems' ``get_dtype_min``)."""
    n, b = 45, 16
    grid = (n + b - 1) // b
    x = _rng(11).standard_normal(n).astype(np.float32) * 100
    want_max = [x[p * b:(p + 1) * b].astype(np.float64).max() for p in range(grid)]
    with tl.backend(backend):
        out = tl.to_device(np.full(n + grid, np.nan, np.float32), tl.f32)
        lowest_clamped[(grid,)](tl.to_device(x, tl.f32), out, n, B=b)
        got = out.numpy()
    np.testing.assert_allclose(got[:n], x.astype(np.float64), rtol=1e-7)
    np.testing.assert_allclose(got[n:], want_max, rtol=1e-7)


# ---------------------------------------------------------------- and / or

logical_reductions = _module("logical_reductions", """
    @tl.func
    def both(a, b):
        return a and b


    @tl.func
    def either(a, b):
        return a or b


    @tl.kernel
    def logical_reductions(x_ptr: Pointer[tl.f32], all_ptr: Pointer[tl.i32], any_ptr: Pointer[tl.i32],
                           band_ptr: Pointer[tl.i32], R: constexpr, C: constexpr, LOW: constexpr) -> None:
        rows = tl.arange(0, R)[:, None]
        cols = tl.arange(0, C)[None, :]
        positive = tl.load(x_ptr + rows * C + cols) > 0.0
        tl.store(all_ptr + tl.arange(0, R), tl.reduce(positive, 1, both).to(tl.int32))
        tl.store(any_ptr + tl.arange(0, R), tl.reduce(positive, 1, either).to(tl.int32))
        row = tl.program_id(0) + tl.zeros((1, 1), tl.int32)  # a block of one element
        band = row < 1 and cols >= LOW  # broadcast to [1, C], element by element
        tl.store(band_ptr + cols + row * 0, band.to(tl.int32))
""")


def test_and_or_in_a_combine_function_and_on_a_one_element_block(backend: str) -> None:
    """``return a and b`` as a combine function reduces bools element by element (Triton's
    ``logical_and``; FlagGems' ``all``/``any``), and ``one_element_block and block`` broadcasts
    (FlagGems' ``triu`` with a [1, 1] row mask) instead of branching on the first operand."""
    r, c, low = 8, 16, 5
    x = _rng(12).standard_normal((r, c)).astype(np.float32)
    x[2] = np.abs(x[2]) + 0.5  # a row all positive
    x[5] = -np.abs(x[5]) - 0.5  # a row all negative
    with tl.backend(backend):
        outs = [tl.to_device(np.full(n, -7, np.int32), tl.i32) for n in (r, r, c)]
        logical_reductions[(1,)](tl.to_device(x, tl.f32), *outs, R=r, C=c, LOW=low)
        got_all, got_any, got_band = (o.numpy() for o in outs)
    np.testing.assert_array_equal(got_all, (x > 0).all(axis=1))
    np.testing.assert_array_equal(got_any, (x > 0).any(axis=1))
    np.testing.assert_array_equal(got_band, np.arange(c) >= low)


# ---------------------------------------------------------------- a pointer as a condition

optional_affine = _module("optional_affine", """
    @tl.kernel
    def optional_affine(x_ptr, w_ptr, b_ptr, o_ptr, n: int, B: constexpr) -> None:
        offs = tl.program_id(0) * B + tl.arange(0, B)
        mask = offs < n
        y = tl.load(x_ptr + offs, mask=mask)
        if w_ptr:  # a pointer's truth: not null (None folds to False)
            y = y * tl.load(w_ptr + offs, mask=mask)
        if b_ptr:
            y = y + tl.load(b_ptr + offs, mask=mask)
        tl.store(o_ptr + offs, y, mask=mask)
""")


@pytest.mark.parametrize("given", ["both", "weight", "bias"])
def test_a_pointer_is_a_condition(backend: str, given: str) -> None:
    """``if w_ptr:`` on a pointer argument is true (Triton casts a pointer to int1 as ``ptr != 0``;
    FlagGems' batch_norm), and on None a compile-time False."""
    n, b = 37, 16
    rng = _rng(13)
    x, w, bias = (rng.standard_normal(n) for _ in range(3))
    want = x * (w if given != "bias" else 1.0) + (bias if given != "weight" else 0.0)
    with tl.backend(backend):
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        dev = [tl.to_device(v.astype(np.float32), tl.f32) for v in (x, w, bias)]
        optional_affine[((n + b - 1) // b,)](dev[0], dev[1] if given != "bias" else None,
                                             dev[2] if given != "weight" else None, out, n, B=b)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
