"""Correct launches (a ``# GAP:`` line is a correct one mypy rejects: a known gap), plus the Triton spellings whose static types involve ``Any`` (grid
lambdas' ``meta``, list-shaped tensor descriptors, inline asm arguments).

Checked under ``mypy --strict`` by tests/test_typing.py, which also imports it; never run.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

import tile_lang as tl
from tests.typing_cases.good_kernels import (
    add_kernel, aliases_kernel, atomic_kernel, attn_fwd, block_ptr_kernel, descriptor_kernel, dropout_kernel,
    generic_scan_kernel, layer_norm_fwd, matmul_acc_kernel, matmul_kernel, ops_kernel, reduce2d_kernel, softmax_kernel,
    softplus_kernel,
)
from tests.typing_cases.good_tutorials import softmax_persistent
from tile_lang import Float, Pointer, Tensor, constexpr, f16, f32

W = TypeVar("W", bound=tl.Width)
F = TypeVar("F", bound=Float[tl.Width])


@tl.kernel
def triton_spelling_kernel(a_ptr: Pointer[f16], out_ptr: Pointer[f32], M: int, N: int,
                           BLOCK_M: constexpr, BLOCK_N: constexpr) -> None:
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    tile = desc.load([pid * BLOCK_M, 0])
    desc.store([pid * BLOCK_M, 0], tile)
    x = tile.to(tl.f32)
    y: Tensor[f32, tl.R2] = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.f32, is_pure=True,
                                                       pack=1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], y)


def launch_all(n: int) -> None:
    """Every launch form: positional and keyword arguments, Options, grid lambdas."""
    x = tl.to_device(np.ones(n, dtype=np.float32), tl.f32)
    y = tl.to_device(np.zeros(n, dtype=np.float32), tl.f32)
    out = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    wide = tl.empty((64, 64), tl.f16)
    ints = tl.empty(4, tl.i32)
    small = tl.empty(n, tl.i8)
    words = tl.empty(n, tl.u32)
    half_dtype: type[tl.f16] = half.dtype  # a buffer's dtype is its element type, precisely
    assert half_dtype is tl.f16 and tl.to_device(np.zeros(n, dtype=np.float32), x.dtype).dtype is tl.f32

    add_kernel[(tl.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    add_kernel[(tl.cdiv(n, 1024),), tl.Options(num_warps=8)](x, y, out, n, BLOCK=1024)
    add_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=256)
    add_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK"]), 1), tl.Options(num_warps=2, num_stages=2)](
        x, y, out, n, BLOCK=256)
    add_kernel[(1, 1, 1)](x_ptr=x, y_ptr=y, out_ptr=out, n=n, BLOCK=64)
    add_kernel[(1,)](x, y, out, n, BLOCK=1024, num_warps=8, num_stages=3)  # options as keywords: tile_lang_mypy
    add_kernel[(1,), tl.Options(num_warps=2)](x, y, out, n, BLOCK=64, num_stages=2, stream=None)
    softmax_persistent[(4,)](out, x, n, n, 1, n, BLOCK_SIZE=64, num_stages=2, num_warps=8)  # a parameter num_stages

    softmax_kernel[(n,)](out, x, 1, 1, BLOCK=1)
    matmul_kernel[(4, 4)](wide, wide, wide, x, 64, 64, 64, wide.stride(0), 1, 64, 1, 64, 1,
                          BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, ALPHA=0.5)
    matmul_kernel[(4, 4)](wide, wide, wide, x, 64, 64, 64, 64, 1, 64, 1, 64, 1,
                          BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, ALPHA=1)
    matmul_acc_kernel[(1,)](half, half, out, 64, BLOCK=16)
    softplus_kernel[(tl.cdiv(n, 256),)](x, out, n, 1.0, BLOCK=256)
    softplus_kernel[(tl.cdiv(n, 256),)](half, half, n, 2, BLOCK=256)
    block_ptr_kernel[(4,)](half, half, 64, 64, 64, BLOCK_M=16, BLOCK_K=16)
    descriptor_kernel[(4,)](half, half, 64, 64, BLOCK_M=16, BLOCK_N=16)
    atomic_kernel[(4,)](x, out, ints, ints, n, BLOCK=128)
    dropout_kernel[(4,)](x, out, n, 0.1, 1234, BLOCK=128)
    aliases_kernel[(1,)](x, y, out, ints, n, BLOCK=128, UNROLL=2)
    ops_kernel[(1,)](x, half, ints, small, words, n, 42, BLOCK=16)
    reduce2d_kernel[(1,)](x, out, ints, BLOCK=16)
    generic_scan_kernel[(1,)](half, half, BLOCK=16)
    triton_spelling_kernel[(4,)](wide, out, 64, 64, BLOCK_M=16, BLOCK_N=16)
    layer_norm_fwd[(64,)](x, half, x, x, y, y, 64, 64, 1e-5, BLOCK_SIZE=64)
    attn_fwd[(4,)](wide, wide, wide, wide, 0.125, 64, 64, BLOCK_M=16, BLOCK_N=16, HEAD_DIM=64)
    assert out.numpy().shape == (n,)


# ---------------------------------------------------------------- autotuned constexprs need no default


def _block_configs() -> list[tl.Config]:
    return [tl.Config({"BLOCK": b, "VEC": 1}) for b in (128, 256)]


@tl.autotune(configs=[tl.Config({"BLOCK": 128}, num_warps=4), tl.Config({"BLOCK": 256}, num_warps=8)], key=["n"])
@tl.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tl.kernel
def tuned_scale_kernel(x_ptr: Pointer[f32], n: int, SCALE: constexpr, BLOCK: constexpr, EVEN: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n if not EVEN else None
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


@tl.autotune(configs=_block_configs(), key=["n"])  # built by a function: every bare constexpr optional
@tl.kernel
def tuned_copy_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr, VEC: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK * VEC + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def copy_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr, VEC: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK * VEC + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch_tuned(n: int) -> tl.Config | None:
    """The configs' and the heuristic's constexprs are left out; the others are passed."""
    x = tl.empty(n, tl.f32)
    tuned_scale_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, n, SCALE=2)
    tuned_copy_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, x, n)
    tuned = tl.autotune(configs=_block_configs(), key=["n"])(copy_kernel)  # applied by a call, not a decorator
    tuned[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, x, n)
    return tuned_scale_kernel.best_config


def softplus_any_width(x: tl.Buffer[Float[W]], out: tl.Buffer[Float[W]], n: int) -> None:
    """A host function generic over the width meets a kernel generic over it: ``Buffer[Float[W]]``."""
    softplus_kernel[(tl.cdiv(n, 256),)](x, out, n, 1.0, BLOCK=256)


def softplus_any_float(x: tl.Buffer[F], n: int) -> None:
    """Generic over the whole dtype: mypy does not solve ``Float[W]`` from ``F``'s bound."""
    softplus_kernel[(tl.cdiv(n, 256),)](x, x, n, 1.0, BLOCK=256)  # GAP: arg-type
