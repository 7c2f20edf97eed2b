"""Launches on torch tensors, checked only where torch is installed (tests/test_typing.py): a tensor
is taken for any ``Pointer[D]`` parameter (its dtype is checked when the launch runs), while a Buffer
of the wrong dtype and a tensor for a scalar stay errors. Markers as in bad_kernels.py."""

from __future__ import annotations

from typing import TypeVar

import torch

import tile_lang as tl
from tile_lang import Float, Pointer, constexpr, f16, f32

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def axpy(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 2.0 * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tl.kernel
def double(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def launch_on_tensors(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, out_buffer: tl.Buffer[f32]) -> None:
    """The correct launches: tensors for every pointer, mixed with a Buffer, with a launch option."""
    n = x.numel()
    grid = (tl.cdiv(n, 64),)
    axpy[grid](x, y, out, n, BLOCK=64)
    double[grid](out, out_buffer, n, BLOCK=64, num_warps=4)


def mistakes(x: torch.Tensor, half: tl.Buffer[f16], out: tl.Buffer[f32]) -> None:
    axpy[(1,)](half, x, out, 8, BLOCK=64)  # E: arg-type Argument 1 to "axpy" has incompatible type "Buffer[Float[W16]]"
    double[(1,)](half, out, 8, BLOCK=64)  # E: misc Cannot infer value of type parameter "W"
    axpy[(1,)](x, x, x, x, BLOCK=64)  # E: arg-type Argument 4 to "axpy" has incompatible type "Tensor"; expected "int"
    axpy[(1,)](8, x, x, 8, BLOCK=64)  # E: arg-type Argument 1 to "axpy" has incompatible type "int"
