"""A fourth set of hand-written kernels in the idioms of real Triton code, probing conversions,
masked accesses (predicated from 16 bytes a thread), reductions, scans and shape ops: each runs on
the NumPy reference and on the generated CUDA under the CPU emulator (sm_80 and sm_90), outputs
poisoned first, against NumPy in float64. Tests named for a wrong result kept it, reduced; the
others cover an idea the code generator must keep right."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, f64, i8, i32, i64, registry

from tests.compiler.emulator import EMULATOR, NAME as EMU

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
TARGETS = [("numpy", 80), (EMU, 80), (EMU, 90)]  # the reference, then the emulated CUDA of each target


@pytest.fixture(params=TARGETS, ids=["numpy", "emu-sm80", "emu-sm90"])
def target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A backend to run on, the emulator generating code for the parametrised target."""
    name, arch = request.param
    registry.register(EMULATOR)
    monkeypatch.setattr(EMULATOR, "arch", arch)
    return str(name)


# ---------------------------------------------------------------- conversions that must round once

@tl.kernel
def rounded_once(i_ptr: Pointer[i32], l_ptr: Pointer[i64], d_ptr: Pointer[f64], b_ptr: Pointer[tl.bfloat16],
                 e_ptr: Pointer[tl.float8e4nv], g_ptr: Pointer[tl.float8e5], B: constexpr) -> None:
    """Integers wider than float's 24 bits to bf16 (FlagGems' casts of index sums), and f64 to fp8:
    each rounds once, from the exact value."""
    offs = tl.arange(0, B)
    i = tl.load(i_ptr + offs)
    tl.store(b_ptr + offs, i.to(tl.bfloat16))
    tl.store(b_ptr + B + offs, i.to(tl.uint32).to(tl.bfloat16))
    tl.store(b_ptr + 2 * B + offs, tl.load(l_ptr + offs).to(tl.bfloat16))
    tl.store(e_ptr + offs, tl.load(d_ptr + offs).to(tl.float8e4nv))
    tl.store(g_ptr + offs, tl.load(d_ptr + B + offs).to(tl.float8e5))


def test_wide_integers_to_bf16_and_f64_to_fp8_round_once(target: str) -> None:
    """Through f32 first, the CUDA rounded twice: a value just past halfway between two neighbours
    (2**25 + 2**17 + 1 for bf16) fell to the even one below: 45 of 96 bf16 elements, 17 of 32 e4m3
    and 17 of 32 e5m2 ones wrong on the emulator."""
    rng = np.random.default_rng(4)
    base = rng.integers(1 << 24, 1 << 30, 32)
    ulp = np.exp2(np.floor(np.log2(base)) - 7).astype(np.int64)  # bf16's spacing at each value
    wide = (base // ulp) * ulp + ulp // 2 + rng.integers(1, 4, 32) * np.sign(rng.standard_normal(32)).astype(np.int64)
    ints = (wide * rng.choice([-1, 1], 32)).astype(np.int32)
    longs = wide * (1 << 20)
    # halfway points between neighbours in [1, 2) (e4m3's 1/8 apart, e5m2's 1/4), nudged up or down
    halves = np.concatenate([rng.integers(8, 16, 32) / 8 + 1 / 16, rng.integers(4, 8, 32) / 4 + 1 / 8])
    doubles = (halves + rng.choice([1.0, -1.0], 64) * 2.0**-40) * rng.choice([1.0, -1.0], 64)
    bf = ml_dtypes.bfloat16
    with tl.backend(target):
        b = tl.to_device(np.full(96, np.nan, bf))
        e, g = tl.to_device(np.zeros(32, ml_dtypes.float8_e4m3fn)), tl.to_device(np.zeros(32, ml_dtypes.float8_e5m2))
        rounded_once[(1,)](tl.to_device(ints), tl.to_device(longs), tl.to_device(doubles), b, e, g, B=32)
        got = b.numpy().astype(np.float64)
        np.testing.assert_array_equal(got[:32], ints.astype(np.float64).astype(bf).astype(np.float64))
        np.testing.assert_array_equal(got[32:64], (ints.astype(np.int64) % 2**32).astype(np.float64).astype(bf))
        np.testing.assert_array_equal(got[64:], longs.astype(np.float64).astype(bf).astype(np.float64))
        np.testing.assert_array_equal(e.numpy().view(np.uint8), doubles[:32].astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
        np.testing.assert_array_equal(g.numpy().view(np.uint8), doubles[32:].astype(ml_dtypes.float8_e5m2).view(np.uint8))
