"""Flash attention as a torch autograd op from the kernels of examples/flash_attention.py:
``attention(q, k, v, causal, sm_scale)`` on [B, H, S, D] f16 tensors, forward and backward
launched on the current tile_lang backend (torch CUDA tensors on the cupy backend, CPU tensors on
the NumPy reference, both without copies). The forward saves o and each row's log-sum-exp; the
backward recomputes the probabilities from them (FlashAttention-2).

Needs torch (the ``torch`` extra), so it is not in ``python -m examples``;
tests/test_attention_backward.py checks its gradients against SDPA's.
"""

from __future__ import annotations

from typing import Any

import torch

import tile_lang as tl
from tile_lang.torch import tensor_args

from examples import flash_attention as A


def _shape(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> A.Shape:
    """The [B, H, S, D] of three f16 tensors of one shape, else a ValueError saying what differs."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype != torch.float16 or t.dim() != 4:
            raise ValueError(f"attention: {name} must be a 4-D float16 tensor [B, H, S, D], got {t.dtype} "
                             f"of shape {tuple(t.shape)}")
    if not q.shape == k.shape == v.shape:
        raise ValueError(f"attention: q, k and v must have one shape, got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    batch, heads, seq, head = q.shape
    return A.Shape(batch, heads, seq, head)


def _config(head: int) -> A.Config:
    """The H200 tiles for the benchmark's head sizes; smaller tiles (one warp) for other sizes."""
    if head in (64, 128):
        return A.hopper_config(head)
    return A.Config(A.Tiles(16, 16, 1), A.Tiles(16, 32, 1), A.Tiles(32, 16, 1), stages=2)


def _f16(t: torch.Tensor) -> tl.Buffer[tl.f16]:
    return tl.wrap(t, tl.f16)


def _f32(t: torch.Tensor) -> tl.Buffer[tl.f32]:
    return tl.wrap(t, tl.f32)


class FlashAttention(torch.autograd.Function):
    """softmax(q k^T * sm_scale) v with its gradients, by the tile_lang kernels."""

    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                sm_scale: float) -> torch.Tensor:
        shape = _shape(q, k, v)
        q, k, v = tensor_args(q, k, v)
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
        A.forward(_f16(q), _f16(k), _f16(v), _f16(o), _f32(lse), shape, causal, sm_scale, _config(shape.head))
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal, ctx.sm_scale, ctx.shape = causal, sm_scale, shape
        # torch runs a CUDA backward in a thread of its own, outside the caller's `with tl.backend(...)`
        ctx.backend = tl.registry.current_name()
        return o

    @staticmethod
    def backward(ctx: Any, do: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None, None]:
        q, k, v, o, lse = ctx.saved_tensors
        (do,) = tensor_args(do.to(torch.float16))
        dq, dk, dv = (torch.empty_like(q) for _ in range(3))
        delta = torch.empty_like(lse)
        with tl.backend(ctx.backend):
            A.backward(_f16(q), _f16(k), _f16(v), _f16(o), _f16(do), _f32(lse), _f32(delta), _f16(dq), _f16(dk),
                       _f16(dv), ctx.shape, ctx.causal, ctx.sm_scale, _config(ctx.shape.head))
        return dq, dk, dv, None, None


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float) -> torch.Tensor:
    """Flash attention on [B, H, S, D] float16 tensors, differentiable in q, k and v."""
    out: torch.Tensor = FlashAttention.apply(q, k, v, causal, sm_scale)
    return out
