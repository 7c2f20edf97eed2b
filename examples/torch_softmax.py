"""Softmax as a PyTorch op with autograd, from the tile_lang forward and backward kernels of
examples/softmax.py: ``tile_lang::softmax`` is a ``torch.library`` custom op (with a fake
implementation for meta tensors), and its backward launches ``softmax_backward``. On CPU tensors
it runs on the NumPy reference, so ``torch.autograd.gradcheck`` checks it in float64. The
backward is an op too (``tile_lang::softmax_grad``), so autograd can trace it.

Needs torch (the ``torch`` extra), so it is not in ``python -m examples``; tests/test_torch.py
runs it. ``python -m examples.torch_softmax`` checks the op and its gradient.
"""

from __future__ import annotations

from typing import Any

import torch

import tile_lang as tl
from tile_lang.torch import custom_op, tensor_args

from examples._common import next_pow2
from examples.softmax import softmax_backward, softmax_forward


def _softmax_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@custom_op("tile_lang::softmax", fake=_softmax_fake)
def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor."""
    (x,) = tensor_args(x)
    y = torch.empty_like(x)
    rows, cols = x.shape
    softmax_forward[(rows,)](tl.wrap(x), tl.wrap(y), rows, cols, BLOCK_SIZE=next_pow2(cols))
    return y


def _setup(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    ctx.save_for_backward(output)


def _grad_fake(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(y)


@custom_op("tile_lang::softmax_grad", fake=_grad_fake)
def softmax_grad(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """dx from dy and the forward's output (an op too, so autograd can trace the backward)."""
    dy, y = tensor_args(dy, y)
    dx = torch.empty_like(y)
    rows, cols = y.shape
    softmax_backward[(rows,)](tl.wrap(dy), tl.wrap(y), tl.wrap(dx), rows, cols, BLOCK_SIZE=next_pow2(cols))
    return dx


def _backward(ctx: Any, dy: torch.Tensor) -> torch.Tensor:
    (y,) = ctx.saved_tensors
    dx: torch.Tensor = softmax_grad(dy, y)
    return dx


softmax.register_autograd(_backward, setup_context=_setup)


def run(seed: int = 0) -> None:
    gen = torch.Generator().manual_seed(seed)
    with tl.backend("numpy"):
        x = torch.randn(7, 33, dtype=torch.float64, generator=gen, requires_grad=True)
        torch.testing.assert_close(softmax(x), torch.softmax(x, dim=-1))
        assert torch.autograd.gradcheck(softmax, (x,), eps=1e-6, atol=1e-7)


if __name__ == "__main__":
    run()
    print("torch_softmax: forward matches torch.softmax, gradcheck passed")
