"""``triton._C.libtriton.nvidia.cublas.CublasLt``, the cuBLAS handle Triton's tutorials compare
against (09 persistent matmul): a stand-in that computes the same product through torch, so the
tutorial's comparison and benchmark columns run (they then time torch's matmul, which is cuBLAS
on a GPU)."""

from __future__ import annotations

import types
from typing import Any


class CublasLt:
    """``CublasLt(workspace)``; ``matmul(a, b, c)`` writes ``c = a @ b.T`` (b given [N, K], as
    Triton's binding takes it); fp8 operands through ``torch._scaled_mm`` with unit scales."""

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace

    def matmul(self, a: Any, b: Any, c: Any) -> None:
        import torch

        if a.element_size() == 1:
            one = torch.ones((), device=a.device, dtype=torch.float32)
            c.copy_(torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=c.dtype))
        else:
            torch.matmul(a, b.T, out=c)


NVIDIA = types.SimpleNamespace(cublas=types.SimpleNamespace(CublasLt=CublasLt))
