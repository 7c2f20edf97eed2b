"""Fused epilogue: Y = act(X @ W^T + b), a linear layer with bias and ReLU/SiLU fused into the
matmul's epilogue (book: patterns/fusion.md; nn/mlp/linear.rs, nn/fused/conv2d_bn_silu_gemm.rs).

Like the Rust kernel, the tiles come through tensor descriptors (``tl.make_tensor_descriptor``,
the TMA path): out-of-bounds reads are zero and out-of-bounds writes are dropped, so the K loop
and the ragged M/N edges need no masks. W has PyTorch's [N, K] layout, so its tile is transposed
into the dot. The bias and activation are applied to the f32 accumulator in registers, before
the single store: the fusion saves a round trip of Y through memory per epilogue op.
Descriptor strides (all but the last) must be multiples of 16 bytes: K and N are multiples of 4.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr

from examples._common import host, poisoned, rng


@tl.kernel
def linear_forward(x_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32],
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

    # ---- epilogue, on the accumulator in registers ----
    if USE_BIAS:
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias[None, :]                                  # Rust: broadcast_to(expand_dims(bias, 0), ..)
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACTIVATION == "silu":
        acc = acc * tl.sigmoid(acc)                                # z * sigmoid(z), as the conv+BN+SiLU kernel

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
        y = poisoned((M, N), tl.f32)
        linear_forward[grid](x_dev, w_dev, b_dev, y, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                             USE_BIAS=use_bias, ACTIVATION=activation)
        expected = _reference(x.astype(np.float64), w.astype(np.float64),
                              b.astype(np.float64) if use_bias else None, activation)
        np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-5,
                                   err_msg=f"bias={use_bias} activation={activation}")


if __name__ == "__main__":
    run()
