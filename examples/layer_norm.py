"""LayerNorm forward (training: also saves mean and rstd) and a race-free backward
(book: in-a-model/backward.md; nn/norm/layernorm.rs).

y = (x - mean) * rstd * w + b with rstd = 1 / sqrt(var + eps), biased variance (divide by N).
One program per row, looping over the row in BLOCK_N tiles so N need not fit one block.

Backward. dx needs only its own row, so it stays one program per row. The Rust backward also
accumulates dweight/dbias with a plain load + store from every row's program, a race between
programs when M > 1. Here the column sums dw = sum_rows dy * xhat, db = sum_rows dy run in a
second kernel, one program per BLOCK_N columns looping over the rows: every output element has
exactly one writer, so it is race-free and deterministic (no atomics needed).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang import Pointer, constexpr

from examples._common import host, poisoned, rng


@tl.kernel
def layer_norm_forward(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32],
                       b_ptr: Pointer[tl.f32], mean_ptr: Pointer[tl.f32], rstd_ptr: Pointer[tl.f32],
                       M: int, N: int, eps: float, BLOCK_N: constexpr) -> None:
    row = tl.program_id(0)
    base = row * N
    # mean: accumulate a BLOCK_N-wide partial sum, reduce it once at the end
    acc = tl.zeros((BLOCK_N,), dtype=tl.f32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + base + cols, mask=cols < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    # variance, two-pass: padding lanes would contribute (0 - mean)^2, so zero them
    acc = tl.zeros((BLOCK_N,), dtype=tl.f32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    # normalise and apply the affine transform
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, (x - mean) * rstd * w + b, mask=mask)


@tl.kernel
def layer_norm_backward_dx(dy_ptr: Pointer[tl.f32], x_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32],
                           mean_ptr: Pointer[tl.f32], rstd_ptr: Pointer[tl.f32], dx_ptr: Pointer[tl.f32],
                           M: int, N: int, BLOCK_N: constexpr) -> None:
    """dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w, xhat = (x - mean) * rstd."""
    row = tl.program_id(0)
    base = row * N
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    acc_g = tl.zeros((BLOCK_N,), dtype=tl.f32)
    acc_gx = tl.zeros((BLOCK_N,), dtype=tl.f32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dy * w                                        # 0 on padding lanes (dy and w load 0)
        acc_g += g
        acc_gx += g * xhat
    c1 = tl.sum(acc_g, axis=0) / N
    c2 = tl.sum(acc_gx, axis=0) / N
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        xhat = (x - mean) * rstd
        tl.store(dx_ptr + base + cols, (dy * w - c1 - xhat * c2) * rstd, mask=mask)


@tl.kernel
def layer_norm_backward_dwdb(dy_ptr: Pointer[tl.f32], x_ptr: Pointer[tl.f32], mean_ptr: Pointer[tl.f32],
                             rstd_ptr: Pointer[tl.f32], dw_ptr: Pointer[tl.f32], db_ptr: Pointer[tl.f32],
                             M: int, N: int, BLOCK_M: constexpr, BLOCK_N: constexpr) -> None:
    """Column sums over all rows; one writer per output column."""
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    dw = tl.zeros((BLOCK_N,), dtype=tl.f32)
    db = tl.zeros((BLOCK_N,), dtype=tl.f32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        row_mask = rows < M
        mask = row_mask[:, None] & col_mask[None, :]
        offs = rows[:, None] * N + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
        mean = tl.load(mean_ptr + rows, mask=row_mask, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0.0)
        xhat = (x - mean[:, None]) * rstd[:, None]        # padding rows have rstd 0 -> xhat 0
        dw += tl.sum(dy * xhat, axis=0)
        db += tl.sum(dy, axis=0)
    tl.store(dw_ptr + cols, dw, mask=col_mask)
    tl.store(db_ptr + cols, db, mask=col_mask)


def _forward_ref(x: npt.NDArray[np.float64], w: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
                 eps: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(x.var(axis=1) + eps)
    y = (x - mean[:, None]) * rstd[:, None] * w + b
    return y, mean, rstd


def run(seed: int = 0) -> None:
    gen = rng(seed)
    M, N, eps = 23, 200, 1e-5            # 200 columns: 3 full 64-wide tiles and a ragged one
    block_n = 64
    x = gen.uniform(-2.0, 2.0, (M, N)).astype(np.float32)
    w = gen.uniform(0.5, 1.5, N).astype(np.float32)
    b = gen.uniform(-0.5, 0.5, N).astype(np.float32)
    dy = gen.uniform(-1.0, 1.0, (M, N)).astype(np.float32)
    x64, w64, b64, dy64 = (a.astype(np.float64) for a in (x, w, b, dy))
    y_ref, mean_ref, rstd_ref = _forward_ref(x64, w64, b64, eps)

    x_dev, w_dev, dy_dev = tl.to_device(x, tl.f32), tl.to_device(w, tl.f32), tl.to_device(dy, tl.f32)
    y = poisoned((M, N), tl.f32)
    mean, rstd = poisoned(M, tl.f32), poisoned(M, tl.f32)
    layer_norm_forward[(M,)](x_dev, y, w_dev, tl.to_device(b, tl.f32), mean, rstd, M, N, eps, BLOCK_N=block_n)
    np.testing.assert_allclose(host(mean), mean_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(rstd), rstd_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(y), y_ref, rtol=1e-5, atol=1e-5)

    # backward reference: xhat = (x - mean) * rstd, g = dy * w
    xhat = (x64 - mean_ref[:, None]) * rstd_ref[:, None]
    g = dy64 * w64
    dx_ref = rstd_ref[:, None] * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    dx = poisoned((M, N), tl.f32)
    layer_norm_backward_dx[(M,)](dy_dev, x_dev, w_dev, mean, rstd, dx, M, N, BLOCK_N=block_n)
    np.testing.assert_allclose(host(dx), dx_ref, rtol=1e-4, atol=1e-5)

    dw, db = poisoned(N, tl.f32), poisoned(N, tl.f32)
    block_cols = 32
    layer_norm_backward_dwdb[(tl.cdiv(N, block_cols),)](dy_dev, x_dev, mean, rstd, dw, db, M, N,
                                                        BLOCK_M=8, BLOCK_N=block_cols)
    np.testing.assert_allclose(host(dw), (dy64 * xhat).sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(host(db), dy64.sum(axis=0), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    run()
