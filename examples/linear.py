"""Fused epilogue: Y = act(X @ W^T + b), a linear layer with bias and ReLU/SiLU fused into the
matmul's epilogue (book: patterns/fusion.md; nn/mlp/linear.rs, nn/fused/conv2d_bn_silu_gemm.rs).

The bias and activation are applied to the f32 accumulator in registers, before the single
store: the fusion saves a round trip of Y through memory per epilogue op. The epilogue is a
``@tl.func`` shared by two versions of the main loop:

- ``linear_forward``: pointer blocks advanced along K with masks, the Triton-tutorial form.
  W has PyTorch's [N, K] layout; its tile is read transposed, as [BLOCK_K, BLOCK_N], simply by
  swapping the strides, so no ``tl.trans`` is needed.
- ``linear_forward_tma``: as the Rust kernel, tiles come through tensor descriptors
  (``tl.make_tensor_descriptor``, the TMA path): out-of-bounds reads are zero and out-of-bounds
  writes are dropped, so there are no masks; the [BLOCK_N, BLOCK_K] W tile goes through
  ``tl.trans``. Descriptor strides but the last must be multiples of 16 bytes: K, N % 4 == 0.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang import Constexpr, Pointer, R1, R2, Tensor, constexpr

from examples._common import host, poisoned, rng


@tl.func
def epilogue(acc: Tensor[tl.f32, R2], b_ptr: Pointer[tl.f32], offs_n: Tensor[tl.i32, R1], N: int, use_bias: bool,
             activation: str) -> Tensor[tl.f32, R2]:
    """Bias and activation on the accumulator (``use_bias``/``activation`` are the caller's constexprs,
    so the branches are resolved at compile time and the bias is only loaded when it is used)."""
    if use_bias:
        bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias[None, :]                          # Rust: broadcast_to(expand_dims(bias, 0), ..)
    if activation == "relu":
        acc = tl.maximum(acc, 0.0)
    elif activation == "silu":
        acc = acc * tl.sigmoid(acc)                        # z * sigmoid(z), as the conv+BN+SiLU kernel
    return acc


@tl.kernel
def linear_forward(x_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32],
                   M: int, N: int, K: int, stride_xm: int, stride_xk: int, stride_wn: int, stride_wk: int,
                   stride_ym: int, stride_yn: int,
                   BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr,
                   USE_BIAS: Constexpr[bool], ACTIVATION: Constexpr[str]) -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk    # [BLOCK_M, BLOCK_K]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn    # W^T tile [BLOCK_K, BLOCK_N]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < K - k) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc, input_precision="ieee")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    acc = epilogue(acc, b_ptr, offs_n, N, USE_BIAS, ACTIVATION)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def linear_forward_tma(x_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32],
                       M: int, N: int, K: int,
                       BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr,
                       USE_BIAS: Constexpr[bool], ACTIVATION: Constexpr[str]) -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_desc = tl.make_tensor_descriptor(x_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    w_desc = tl.make_tensor_descriptor(w_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])          # Rust: T::load_tensor_descriptor(x_desc, &[..])
        w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(x, tl.trans(w), acc, input_precision="ieee")
    acc = epilogue(acc, b_ptr, pid_n * BLOCK_N + tl.arange(0, BLOCK_N), N, USE_BIAS, ACTIVATION)
    y_desc = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


def _reference(x: npt.NDArray[np.float64], w: npt.NDArray[np.float64], b: npt.NDArray[np.float64] | None,
               activation: str) -> npt.NDArray[np.float64]:
    z = x @ w.T + (b if b is not None else 0.0)
    if activation == "relu":
        return np.maximum(z, 0.0)
    if activation == "silu":
        return np.asarray(z / (1.0 + np.exp(-z)), dtype=np.float64)
    return np.asarray(z, dtype=np.float64)


def run(seed: int = 0) -> None:
    gen = rng(seed)
    M, N, K = 50, 44, 52                    # ragged against 32x32x16 tiles; K, N multiples of 4
    bm, bn, bk = 32, 32, 16
    x = gen.uniform(-1.0, 1.0, (M, K)).astype(np.float32)
    w = gen.uniform(-1.0, 1.0, (N, K)).astype(np.float32)
    b = gen.uniform(-0.5, 0.5, N).astype(np.float32)
    x_dev, w_dev, b_dev = tl.to_device(x, tl.f32), tl.to_device(w, tl.f32), tl.to_device(b, tl.f32)
    grid = (tl.cdiv(M, bm), tl.cdiv(N, bn))
    for use_bias, activation in ((True, "relu"), (True, "silu"), (False, "none")):
        expected = _reference(x.astype(np.float64), w.astype(np.float64),
                              b.astype(np.float64) if use_bias else None, activation)
        what = f"bias={use_bias} activation={activation}"
        y = poisoned((M, N), tl.f32)
        linear_forward[grid](x_dev, w_dev, b_dev, y, M, N, K, x_dev.stride(0), x_dev.stride(1), w_dev.stride(0),
                             w_dev.stride(1), y.stride(0), y.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                             USE_BIAS=use_bias, ACTIVATION=activation)
        np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-5, err_msg=f"linear_forward {what}")
        y = poisoned((M, N), tl.f32)
        linear_forward_tma[grid](x_dev, w_dev, b_dev, y, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                 USE_BIAS=use_bias, ACTIVATION=activation)
        np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-5, err_msg=f"linear_forward_tma {what}")


if __name__ == "__main__":
    run()
