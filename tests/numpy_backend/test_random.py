"""Philox random numbers against Triton 3.6 on an H200 (bit-exact randint4x/randint/rand, randn
within 1e-5) and against an independent pure-Python Philox for other widths and round counts.

tests/data/triton36_h200_philox.npz holds 192 offsets per case of the golden file recorded on
the GPU: keys ``s{seed}_{int32|int64}_{off,0..5}``; 0-3 are the randint4x lanes (as int32 bit
patterns), 4 is rand, 5 is randn. The int64 offsets cross 2**32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Int, Pointer, UInt, constexpr, f32, u32

IntT = TypeVar("IntT", bound=Int[Any] | UInt[Any])
GOLDEN = Path(__file__).resolve().parent.parent / "data" / "triton36_h200_philox.npz"
SEEDS = [0, 42, -1, 2**31 + 5, 2**40 + 3]
BLOCK = 64


@tl.kernel
def philox_kernel(seed: int, offsets: Pointer[IntT], words: Pointer[u32], first: Pointer[u32],
                  uniform: Pointer[f32], normal: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Every random builtin at the loaded offsets; randint4x's four lanes go to four rows of words."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    o = tl.load(offsets + offs, mask=m, other=0)
    c0, c1, c2, c3 = tl.randint4x(seed, o)
    tl.store(words + offs, c0, mask=m)
    tl.store(words + n + offs, c1, mask=m)
    tl.store(words + 2 * n + offs, c2, mask=m)
    tl.store(words + 3 * n + offs, c3, mask=m)
    tl.store(first + offs, tl.randint(seed, o), mask=m)
    tl.store(uniform + offs, tl.rand(seed, o), mask=m)
    tl.store(normal + offs, tl.randn(seed, o), mask=m)


@tl.kernel
def constexpr_seed_kernel(words: Pointer[u32], SEED: constexpr, ROUNDS: constexpr, BLOCK: constexpr) -> None:
    """randint4x with a literal seed and round count over a 2-D block of offsets 0..4*BLOCK-1."""
    rows = tl.arange(0, 4)
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * BLOCK + cols[None, :]
    c0, c1, c2, c3 = tl.randint4x(SEED, offs, ROUNDS)
    tl.store(words + offs, c0)
    tl.store(words + 4 * BLOCK + offs, c1)
    tl.store(words + 8 * BLOCK + offs, c2)
    tl.store(words + 12 * BLOCK + offs, c3)


def run_philox(seed: int, offsets: np.ndarray[Any, Any], dtype: Any) -> dict[str, np.ndarray[Any, Any]]:
    n = offsets.size
    words = tl.to_device(np.zeros(4 * n, np.uint32), tl.u32)
    first = tl.to_device(np.zeros(n, np.uint32), tl.u32)
    uniform = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
    normal = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
    philox_kernel[(tl.cdiv(n, BLOCK),)](seed, tl.to_device(offsets, dtype), words, first, uniform, normal, n,
                                        BLOCK=BLOCK)
    return {"words": words.numpy().reshape(4, n), "first": first.numpy(), "uniform": uniform.numpy(),
            "normal": normal.numpy()}


def python_philox(seed: int, counter: tuple[int, int, int, int], rounds: int) -> tuple[int, ...]:
    """Random123 philox4x32 on Python ints: an implementation independent of the backend's."""
    mask = 0xFFFFFFFF
    k0, k1 = seed & mask, (seed >> 32) & mask
    c0, c1, c2, c3 = counter
    for _ in range(rounds):
        p0, p2 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p2 >> 32) ^ c1 ^ k0, p2 & mask, (p0 >> 32) ^ c3 ^ k1, p0 & mask
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return c0, c1, c2, c3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("offset_type", ["int32", "int64"])
def test_matches_triton_on_gpu(tile_backend: str, seed: int, offset_type: str) -> None:
    golden = np.load(GOLDEN)
    key = f"s{seed}_{offset_type}"
    got = run_philox(seed, golden[f"{key}_off"], tl.i32 if offset_type == "int32" else tl.i64)
    for lane in range(4):
        assert np.array_equal(got["words"][lane].view(np.int32), golden[f"{key}_{lane}"]), f"randint4x lane {lane}"
    assert np.array_equal(got["first"].view(np.int32), golden[f"{key}_0"])
    assert np.array_equal(got["uniform"].view(np.uint32), golden[f"{key}_4"].view(np.uint32))
    np.testing.assert_allclose(got["normal"], golden[f"{key}_5"], rtol=0, atol=1e-5)


@pytest.mark.parametrize("seed,rounds", [(-1, 10), (2**40 + 3, 7), (123, 0)])
def test_literal_seed_rounds_and_2d_offsets(tile_backend: str, seed: int, rounds: int) -> None:
    words = tl.to_device(np.zeros(16 * BLOCK, np.uint32), tl.u32)
    constexpr_seed_kernel[(1,)](words, SEED=seed, ROUNDS=rounds, BLOCK=BLOCK)
    got = words.numpy().reshape(4, 4 * BLOCK)
    want = np.array([python_philox(seed & (2**64 - 1), (i, 0, 0, 0), rounds) for i in range(4 * BLOCK)]).T
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype,values", [
    (tl.i8, [-128, -1, 0, 5, 127]),
    (tl.i16, [-32768, -7, 0, 32767, 12]),
    (tl.u32, [0, 1, 2**31, 2**32 - 1, 77]),
    (tl.u64, [0, 2**32, 2**63 + 9, 2**64 - 1, 5]),
    (tl.i64, [-1, -(2**40), 2**33 + 1, 0, 3]),
])
def test_offset_widths(tile_backend: str, dtype: Any, values: list[int]) -> None:
    """Narrow offsets are sign-extended then truncated to u32; 64-bit offsets give the high word."""
    host = np.zeros(BLOCK, tl.dtypes.dtype_of(dtype).numpy)
    host[: len(values)] = np.array(values, dtype=host.dtype)
    got = run_philox(42, host, dtype)["words"]
    wide = 64 if dtype in (tl.i64, tl.u64) else 32
    for i, v in enumerate(host.tolist()):
        word = v & (2**64 - 1)
        hi = (word >> 32) & 0xFFFFFFFF if wide == 64 else 0
        assert tuple(got[:, i]) == python_philox(42, (word & 0xFFFFFFFF, hi, 0, 0), 10), (dtype, v)


def test_rand_is_in_unit_interval(tile_backend: str) -> None:
    offsets = np.arange(1 << 14, dtype=np.int32)
    got = run_philox(7, offsets, tl.i32)
    u = got["uniform"].astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.01
    z = got["normal"].astype(np.float64)
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.05
