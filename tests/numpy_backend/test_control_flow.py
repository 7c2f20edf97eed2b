"""Python control flow in kernels: uniform branches, per-program branches, loops, early return."""

from __future__ import annotations

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32


@tl.kernel
def branchy(x: Pointer[f32], out: Pointer[f32], n: int, FLAG: constexpr, BLOCK: constexpr) -> None:
    """Rows of BLOCK values: odd programs negate, program 0 doubles; FLAG adds one."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    if pid % 2 == 1:
        v = -v
    elif pid == 0:
        v = v * 2.0
    if FLAG:
        v = v + 1.0
    tl.store(out + offs, v, mask=m)


@tl.kernel
def loop_sum(x: Pointer[f32], out: Pointer[f32], rows: Pointer[i32], n_cols: int, BLOCK: constexpr) -> None:
    """Each program sums the first rows[pid] rows of x (a per-program loop bound)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.f32)
    count = tl.load(rows + pid)
    i = 0
    while i < count:
        acc += tl.load(x + i * n_cols + cols, mask=cols < n_cols, other=0.0)
        i += 1
    tl.store(out + pid * n_cols + cols, acc, mask=cols < n_cols)


def expected_branchy(x: np.ndarray, block: int, flag: bool) -> np.ndarray:
    out = x.astype(np.float64).copy()
    for pid in range(-(-x.size // block)):
        seg = slice(pid * block, (pid + 1) * block)
        out[seg] = -out[seg] if pid % 2 == 1 else out[seg] * 2 if pid == 0 else out[seg]
    return out + (1.0 if flag else 0.0)


def test_divergent_branches_and_early_return(tile_backend: str) -> None:
    rng = np.random.default_rng(0)
    n, block = 1000, 64
    x = rng.standard_normal(n).astype(np.float32)
    for flag in (0, 1):
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        branchy[(tl.cdiv(n, block) + 3,)](tl.to_device(x, tl.f32), out, n, FLAG=flag, BLOCK=block)
        np.testing.assert_allclose(out.numpy(), expected_branchy(x, block, bool(flag)), rtol=1e-6)


def test_per_program_while_loop(tile_backend: str) -> None:
    rng = np.random.default_rng(1)
    programs, n_rows, n_cols = 7, 9, 50
    x = rng.standard_normal((n_rows, n_cols)).astype(np.float32)
    counts = rng.integers(0, n_rows + 1, programs).astype(np.int32)
    out = tl.to_device(np.full((programs, n_cols), np.nan, np.float32), tl.f32)
    loop_sum[(programs,)](tl.to_device(x, tl.f32), out, tl.to_device(counts, tl.i32), n_cols, BLOCK=64)
    expected = np.stack([x[:c].astype(np.float64).sum(axis=0) for c in counts])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


@tl.kernel
def affine(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * 3.0 - 1.0, mask=m)


def test_large_grid_runs_in_groups() -> None:
    """More programs than one group holds: every element still written exactly once."""
    with tl.backend("numpy"):
        n, block = (1 << 23) + 123, 512
        x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        affine[(tl.cdiv(n, block),)](tl.wrap(x, tl.f32), out, n, BLOCK=block)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 3.0 - 1.0, rtol=1e-6, atol=1e-6)
