"""Masked vector accesses as Triton issues them: a load's fill (``other``, else 0) written first,
then a predicated ``ld.global`` over it, a store a predicated ``st.global``, with no branch; and
16-bit float constants spelt as their bits, so that they fold. As branches, with fills made by conversion instructions, a layer norm's masked
weight and bias loads kept 8 more registers a thread live (48 against 40: one block fewer an SM)."""

from __future__ import annotations

import re
import shutil

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, f16, f32
from tile_lang.dtypes import DType

from tests.compiler.emulator import EMULATOR
from tile_lang_cupy.codegen.ctypes_ import literal


@tl.kernel
def row_norm(x_ptr: Pointer[f16], y_ptr: Pointer[f16], w_ptr: Pointer[f16], b_ptr: Pointer[f16], rstd_ptr: Pointer[f32],
             stride: int, n: int, eps: float, BLOCK: constexpr) -> None:
    """Layer norm of one row a program, as Triton's tutorial writes it: ``w`` and ``b`` masked with no
    ``other``, ``x`` with ``other=0.0``."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.f32)
    mean = tl.sum(x, 0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.f32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.f32)
    tl.store(y_ptr + row * stride + cols, (d * rstd * w + b).to(tl.f16), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@tl.kernel
def masked_fills(x_ptr: Pointer[f16], fill_ptr: Pointer[f16], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Three masked loads of one row: filled with -inf (a max's identity), with a block, and with a
    converted f16 constant; their sums stored, so every masked-off element counts."""
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    top = tl.max(tl.load(x_ptr + cols, mask=mask, other=float("-inf")).to(tl.f32), 0)
    fill = tl.load(fill_ptr + cols)
    mixed = tl.load(x_ptr + cols, mask=mask, other=fill).to(tl.f32)
    halves = tl.load(x_ptr + cols, mask=mask, other=0.5).to(tl.f32)
    tl.store(out_ptr + cols, mixed + halves + top)


_EMULATED = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None, reason=str(EMULATOR.unavailable_reason()))




@_EMULATED
@pytest.mark.parametrize("n", [4000, 4096, 24])
def test_a_masked_layer_norm_matches_float64(target: str, n: int) -> None:
    rows, block = 3, 4096
    rng = np.random.default_rng(n)
    x = rng.standard_normal((rows, block)).astype(np.float16)
    w, b = (rng.standard_normal(block).astype(np.float16) for _ in range(2))
    x64, w64, b64 = x[:, :n].astype(np.float64), w[:n].astype(np.float64), b[:n].astype(np.float64)
    d = x64 - x64.mean(1, keepdims=True)
    rstd = 1 / np.sqrt((d * d).mean(1) + 1e-5)
    with tl.backend(target):
        y, r = tl.to_device(np.full((rows, block), np.nan, np.float16)), tl.to_device(np.full(rows, np.nan, np.float32))
        row_norm[(rows,), tl.Options(num_warps=8)](tl.to_device(x), y, tl.to_device(w), tl.to_device(b), r,
                                                    block, n, 1e-5, BLOCK=block)
        out = y.numpy()
        np.testing.assert_allclose(out[:, :n], d * rstd[:, None] * w64 + b64, rtol=2e-2, atol=2e-2)
        assert np.isnan(out[:, n:]).all()  # masked off: never written
        np.testing.assert_allclose(r.numpy(), rstd, rtol=1e-4)


@_EMULATED
@pytest.mark.parametrize("n", [1000, 8, 0])
def test_masked_off_elements_hold_their_fill(target: str, n: int) -> None:
    block = 1024
    rng = np.random.default_rng(n + 1)
    x, fill = (rng.standard_normal(block).astype(np.float16) for _ in range(2))
    live = np.arange(block) < n
    top = x[:n].astype(np.float64).max() if n else -np.inf
    want = np.where(live, x, fill).astype(np.float64) + np.where(live, x, 0.5) + top
    with tl.backend(target):
        out = tl.to_device(np.full(block, np.nan, np.float32))
        masked_fills[(1,), tl.Options(num_warps=4)](tl.to_device(x), tl.to_device(fill), out, n, BLOCK=block)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("dtype, numpy", [(dtypes.F16, np.float16), (dtypes.BF16, ml_dtypes.bfloat16)])
@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, -1.5, 0.1, 65504.0, 65520.0, 1e6, 3e-8, 1e-40,
                                   float("inf"), float("-inf"), 1 + 2**-11, 1 + 3 * 2**-11])
def test_16_bit_constants_are_the_bits_of_the_f32_rounded_value(dtype: DType, numpy: type, value: float) -> None:
    """Rounded to f32 first (the C++ literal ``1.0f``), then to nearest even, as ``tl::cvt`` does."""
    with np.errstate(over="ignore"):
        bits = int(np.array(np.float32(value)).astype(numpy).view(np.uint16))
    assert literal(value, dtype) == f"tl::from_bits<{'__half' if dtype is dtypes.F16 else '__nv_bfloat16'}>({bits:#06x})"


def test_a_16_bit_nan_constant_is_converted() -> None:
    assert literal(float("nan"), dtypes.F16) == "tl::cvt<__half>(__int_as_float(0x7fc00000))"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: ptxas cannot report")
def test_a_masked_layer_norm_is_predicated_and_fits_six_blocks_an_sm() -> None:
    """Six 8-warp blocks an SM need at most 40 registers a thread (65,536 / 1,536, in steps of 8);
    as branches the masked accesses took 48, and the stores alone 4."""
    compiled = row_norm.compile(num_warps=8, arch="90a", divisible=("stride", "n"), BLOCK=4096)
    ptx = compiled.asm["ptx"]
    assert len(re.findall(r"@q ld\.global\.v4\.b32", ptx)) == 6  # x, w and b: two vectors each
    assert len(re.findall(r"@q st\.global\.v4\.b32", ptx)) == 2  # y
    assert compiled.n_spills == 0
    assert compiled.n_regs <= 40, compiled.n_regs
