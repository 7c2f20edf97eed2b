"""Cross-entropy forward and backward, with atomics (book: patterns/atomics.md; nn/loss/nll.rs).

loss[n] = logsumexp(x[n]) - x[n, t[n]]; dx[n] = dy[n] * (softmax(x[n]) - onehot(t[n])).

Forward: besides the per-row loss, every program ``tl.atomic_add``s loss / n_rows into one f32
scalar (the batch mean, as reduction="mean") and 1 into an i32 counter when the row's argmax
is the target (the batch accuracy). Atomic float sums are order-dependent, hence the tolerance.

Backward: the Rust kernel stores dy * softmax and then ``atomic_add``s -dy at the target column,
a store and an atomic to the same address from one program with no ordering guarantee between
the threads doing them. This port subtracts the one-hot in registers (``tl.where_``) and does a
single masked store: race-free.

Fused: ``cross_entropy_fused`` is the usual training step for reduction="mean": one pass that
``atomic_add``s the mean loss and stores the gradient of that mean, (softmax - onehot) / n_rows,
so the logits are read once.

Targets are i32 and used as data-dependent offsets (``x_ptr + base + tgt``), the Rust kernels'
second ``AddOffsets`` bound.
"""

from __future__ import annotations

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr

from examples._common import host, next_pow2, poisoned, rng


@tl.kernel
def cross_entropy_forward(x_ptr: Pointer[tl.f32], t_ptr: Pointer[tl.i32], loss_ptr: Pointer[tl.f32],
                          mean_loss_ptr: Pointer[tl.f32], n_correct_ptr: Pointer[tl.i32],
                          n_rows: int, n_cols: int, BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    base = row * n_cols
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
    tgt = tl.load(t_ptr + row)                              # rank-0 i32
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    x_t = tl.load(x_ptr + base + tgt)                       # gather the target logit
    loss = lse - x_t
    tl.store(loss_ptr + row, loss)
    tl.atomic_add(mean_loss_ptr, loss / n_rows)             # Rust: T::atomic_add(p, v, None, None, None)
    hit = tl.argmax(x, 0) == tgt
    tl.atomic_add(n_correct_ptr, hit.to(tl.i32), sem="relaxed")


@tl.kernel
def cross_entropy_backward(dy_ptr: Pointer[tl.f32], x_ptr: Pointer[tl.f32], t_ptr: Pointer[tl.i32],
                           dx_ptr: Pointer[tl.f32], n_rows: int, n_cols: int, BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    base = row * n_cols
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
    dy = tl.load(dy_ptr + row)
    tgt = tl.load(t_ptr + row)
    sm = tl.softmax(x)
    grad = tl.where_(cols == tgt, sm - 1.0, sm)             # Rust name of tl.where
    tl.store(dx_ptr + base + cols, dy * grad, mask=mask)


@tl.kernel
def cross_entropy_fused(x_ptr: Pointer[tl.f32], t_ptr: Pointer[tl.i32], mean_loss_ptr: Pointer[tl.f32],
                        dx_ptr: Pointer[tl.f32], n_rows: int, n_cols: int, BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    base = row * n_cols
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
    tgt = tl.load(t_ptr + row)
    is_target = cols == tgt
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)                                       # 0 on padding lanes
    s = tl.sum(e, axis=0)
    x_t = tl.sum(tl.where(is_target, x, 0.0), axis=0)       # the target logit without a second load
    tl.atomic_add(mean_loss_ptr, (m + tl.log(s) - x_t) / n_rows)
    sm = e / s
    tl.store(dx_ptr + base + cols, tl.where(is_target, sm - 1.0, sm) / n_rows, mask=mask)


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n_rows, n_cols = 45, 23
    block = next_pow2(n_cols)
    x = gen.uniform(-3.0, 3.0, (n_rows, n_cols)).astype(np.float32)
    t = gen.integers(0, n_cols, n_rows).astype(np.int32)
    dy = gen.uniform(0.5, 1.5, n_rows).astype(np.float32)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    m = x64.max(axis=1, keepdims=True)
    e = np.exp(x64 - m)
    softmax = e / e.sum(axis=1, keepdims=True)
    loss_ref = (m[:, 0] + np.log(e.sum(axis=1))) - x64[np.arange(n_rows), t]
    onehot = np.zeros_like(x64)
    onehot[np.arange(n_rows), t] = 1.0
    dx_ref = dy64[:, None] * (softmax - onehot)

    x_dev, t_dev = tl.to_device(x, tl.f32), tl.to_device(t, tl.i32)
    loss = poisoned(n_rows, tl.f32)
    mean_loss = tl.to_device(np.zeros(1, np.float32), tl.f32)   # atomic accumulators start at 0
    n_correct = tl.to_device(np.zeros(1, np.int32), tl.i32)
    cross_entropy_forward[(n_rows,)](x_dev, t_dev, loss, mean_loss, n_correct, n_rows, n_cols, BLOCK_SIZE=block)
    np.testing.assert_allclose(host(loss), loss_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(host(mean_loss)[0], loss_ref.mean(), rtol=1e-5)
    assert int(n_correct.numpy()[0]) == int((x.argmax(axis=1) == t).sum()), "accuracy counter"

    dx = poisoned((n_rows, n_cols), tl.f32)
    cross_entropy_backward[(n_rows,)](tl.to_device(dy, tl.f32), x_dev, t_dev, dx, n_rows, n_cols, BLOCK_SIZE=block)
    np.testing.assert_allclose(host(dx), dx_ref, rtol=1e-5, atol=1e-6)

    mean_loss = tl.to_device(np.zeros(1, np.float32), tl.f32)
    dx = poisoned((n_rows, n_cols), tl.f32)
    cross_entropy_fused[(n_rows,)](x_dev, t_dev, mean_loss, dx, n_rows, n_cols, BLOCK_SIZE=block)
    np.testing.assert_allclose(host(mean_loss)[0], loss_ref.mean(), rtol=1e-5)
    np.testing.assert_allclose(host(dx), (softmax - onehot) / n_rows, rtol=1e-5, atol=1e-7)


if __name__ == "__main__":
    run()
