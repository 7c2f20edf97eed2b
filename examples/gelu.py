"""GELU forward and backward, tanh approximation (book: in-a-model/backward.md;
nn/activation/gelu.rs).

y = 0.5 x (1 + tanh(c (x + a x^3))), c = sqrt(2/pi), a = 0.044715. There is no tanh builtin
(neither in the Rust trait nor here), so, as the Rust kernels do, tanh(u) = 2 sigmoid(2u) - 1,
and y = x sigmoid(2u). The backward takes the saved *input* x, not y.
Elementwise, one program per BLOCK_SIZE slice, generic over the float width (Rust: `D: Float`).
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr

from examples._common import host, poisoned, rng

W = TypeVar("W", bound=tl.Width)

# Kernels read their constants as local literals; the host reference uses the same values.
COEFF = 0.044715


@tl.kernel
def gelu_forward(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n_elements: int,
                 BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    c = 0.7978845608028654                                            # sqrt(2/pi); Rust: D::from_f64(..)
    a = 0.044715
    inner = c * (x + a * x * x * x)
    tl.store(y_ptr + offs, x * tl.sigmoid(2.0 * inner), mask=mask)    # == 0.5 x (1 + tanh(inner))


@tl.kernel
def gelu_backward(dy_ptr: Pointer[Float[W]], x_ptr: Pointer[Float[W]], dx_ptr: Pointer[Float[W]],
                  n_elements: int, BLOCK_SIZE: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    c = 0.7978845608028654
    a = 0.044715
    inner = c * (x + a * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0                           # tanh(inner)
    dinner = c * (1.0 + 3.0 * a * x * x)
    dx = dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)
    tl.store(dx_ptr + offs, dx, mask=mask)


def _reference(x: npt.NDArray[np.float64], dy: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64],
                                                                                 npt.NDArray[np.float64]]:
    c = math.sqrt(2.0 / math.pi)
    inner = c * (x + COEFF * x**3)
    t = np.tanh(inner)
    y = 0.5 * x * (1.0 + t)
    dx = dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * COEFF * x * x))
    return y, dx


def run(seed: int = 0) -> None:
    gen = rng(seed)
    n, block = 1000, 128
    x = gen.uniform(-5.0, 5.0, n).astype(np.float32)
    dy = gen.uniform(-2.0, 2.0, n).astype(np.float32)
    y_ref, dx_ref = _reference(x.astype(np.float64), dy.astype(np.float64))
    grid = (tl.cdiv(n, block),)
    x_dev = tl.to_device(x, tl.f32)

    y = poisoned(n, tl.f32)
    gelu_forward[grid](x_dev, y, n, BLOCK_SIZE=block)
    np.testing.assert_allclose(host(y), y_ref, rtol=1e-5, atol=1e-5)

    dx = poisoned(n, tl.f32)
    gelu_backward[grid](tl.to_device(dy, tl.f32), x_dev, dx, n, BLOCK_SIZE=block)
    # 1 - t*t cancels near |x| = 5, as in the book's kernel: its test uses atol 2e-5
    np.testing.assert_allclose(host(dx), dx_ref, rtol=1e-5, atol=2e-5)


if __name__ == "__main__":
    run()
