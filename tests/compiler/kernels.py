"""Kernels the compiler tests build: the benchmark shapes (add, softmax, layernorm, atomic sum)
and coverage of control flow, reductions, dot, scans, atomics, random numbers, shared-memory ops
(user combines, sort, gather, histogram), shape ops, block pointers and descriptors, debugging."""

from __future__ import annotations

from typing import Any, Literal

import tile_lang as tl
from tile_lang import Pointer, constexpr

Precision = Literal["ieee", "tf32", "tf32x3"]


@tl.kernel
def add_kernel(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int,
               BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tl.kernel
def softmax_kernel(out_ptr: Pointer[tl.f32], in_ptr: Pointer[tl.f32], row_stride: int, n_cols: int,
                   BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@tl.kernel
def layernorm_kernel(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], w_ptr: Pointer[tl.f32],
                     b_ptr: Pointer[tl.f32], stride: int, n_cols: int, eps: float, BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    acc = tl.zeros((BLOCK,), tl.f32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    var_acc = tl.zeros((BLOCK,), tl.f32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        var_acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(var_acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


@tl.kernel
def sum_kernel(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@tl.kernel
def matmul_kernel(a_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
                  stride_am: int, stride_bk: int, stride_cm: int, BLOCK_M: constexpr, BLOCK_N: constexpr,
                  BLOCK_K: constexpr, PRECISION: tl.Constexpr[Precision] = "ieee") -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.func
def _scaled(x: tl.Tensor[tl.f32, tl.R1], factor: float) -> tl.Tensor[tl.f32, tl.R1]:
    return x * factor


@tl.kernel
def control_kernel(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, limit: int, SCALE: constexpr,
                   FLAG: constexpr) -> None:
    pid = tl.program_id(0)
    if pid >= limit:
        return
    offs = pid * 64 + tl.arange(0, 64)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if FLAG:
        x = _scaled(x, SCALE * 0.5)
    total = tl.sum(x, axis=0) * 0.0
    i = 0
    while i < 3:
        total += tl.sum(x, axis=0)
        i += 1
    for j in tl.static_range(2):
        x = x + j
    if total > 0.0:
        y = x * 2.0
    else:
        y = x - 1.0
    tl.store(out_ptr + offs, y + total, mask=offs < n)


@tl.kernel
def reduce2d_kernel(x_ptr: Pointer[tl.f32], sum_ptr: Pointer[tl.f32], arg_ptr: Pointer[tl.i32],
                    cum_ptr: Pointer[tl.f32], ROWS: constexpr, COLS: constexpr) -> None:
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    tl.store(sum_ptr + rows, tl.sum(x, axis=1))
    tl.store(arg_ptr + cols, tl.argmax(x, axis=0))
    tl.store(cum_ptr + rows[:, None] * COLS + cols[None, :], tl.cumsum(x, axis=1))
    t = tl.trans(x)
    tl.store(cum_ptr + ROWS * COLS + cols[:, None] * ROWS + rows[None, :], t - tl.max(x, axis=0)[:, None])


@tl.kernel
def mixed_kernel(x_ptr: Pointer[tl.f16], y_ptr: Pointer[tl.bf16], out_ptr: Pointer[tl.f32], n: int, seed: int,
                 BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    r = tl.rand(seed, offs)
    q = (offs // 3) % 7 - (offs >> 1)
    tl.store(out_ptr + offs, x.to(tl.f32) * y.to(tl.f32) + r + q.to(tl.f32), mask=mask)


@tl.func
def _compose(p: tl.Tensor[tl.u32, tl.R0], q: tl.Tensor[tl.u32, tl.R0]) -> tl.Tensor[tl.u32, tl.R0]:
    """Associative, not commutative: the combine order shows in the result."""
    return (((p >> 16) * (q >> 16)) << 16) | (((q >> 16) * (p & 0xFFFF) + (q & 0xFFFF)) & 0xFFFF)


@tl.kernel
def cooperative_kernel(x_ptr: Pointer[tl.u32], out_ptr: Pointer[tl.u32], h_ptr: Pointer[tl.i32], n: int,
                       ROWS: constexpr, COLS: constexpr) -> None:
    """Ops computed through shared memory: user reductions and scans, sort, flip, gather, histogram."""
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * COLS + cols[None, :]
    x = tl.load(x_ptr + offs, mask=offs < n, other=1 << 16)
    tl.store(out_ptr + rows, tl.reduce(x, 1, _compose))
    tl.store(out_ptr + ROWS + cols[None, :], tl.reduce(x, 0, _compose, keep_dims=True))
    tl.store(out_ptr + 2 * ROWS * COLS + offs, tl.associative_scan(x, 1, _compose, reverse=True))
    tl.store(out_ptr + 3 * ROWS * COLS + offs, tl.sort(x, descending=True) + tl.flip(x, 0))
    tl.store(out_ptr + 4 * ROWS * COLS + offs, tl.gather(x, (x % COLS).to(tl.i32), 1))
    flat = tl.ravel(x)
    tl.store(h_ptr + tl.arange(0, 32), tl.histogram((flat % 40).to(tl.i32), 32, mask=flat > 3))
    tl.store(out_ptr, tl.reduce(x, None, _compose))


@tl.kernel
def shapes_kernel(x_ptr: Pointer[tl.f16], out_ptr: Pointer[tl.f16], seed: int, BLOCK: constexpr) -> None:
    """join/split/interleave/cat (on values and on pointers) and randint4x."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x * 2.0
    a, b = tl.split(tl.join(x, y))
    tl.store(out_ptr + tl.arange(0, 2 * BLOCK), tl.interleave(a, b) + tl.cat(x, y, can_reorder=True))
    lo, hi = tl.split(tl.reshape(out_ptr + 2 * BLOCK + tl.arange(0, 2 * BLOCK), (BLOCK, 2)))
    tl.store(tl.join(hi, lo), tl.join(x, y))
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(out_ptr + 4 * BLOCK + offs, ((r0 ^ r1 ^ r2 ^ r3) >> 20).to(tl.f16))


@tl.kernel
def blocks_kernel(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], M: int, N: int, stride_m: int,
                  BM: constexpr, BN: constexpr) -> None:
    """Block pointers advanced in a loop (carried through it) and tensor descriptors."""
    pm = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (stride_m, 1), (pm * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, N, BN):
        acc += tl.load(src, boundary_check=(0, 1), padding_option="zero")
        src = tl.advance(src, (0, BN))
    out = tl.make_tensor_descriptor(y_ptr, [M, BN], [BN, 1], [BM, BN])
    back = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    out.store([pm * BM, 0], acc + back.load([pm * BM, 0]))


@tl.kernel
def atomics_kernel(f_ptr: Pointer[tl.f32], d_ptr: Pointer[tl.f64], h_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.bf16],
                   i_ptr: Pointer[tl.i16], BLOCK: constexpr) -> None:
    """Float max/min through the integer bit trick, f16/bf16 add, 16-bit compare-and-swap."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(f_ptr + offs)
    one_address: Any = f_ptr + 4  # a scalar pointer with a block of values: every lane updates it
    old = tl.atomic_max(f_ptr + offs % 4, v) + tl.atomic_min(one_address, v, sem="relaxed", scope="cta")
    d = tl.atomic_max(d_ptr + offs % 2, v.to(tl.f64)) + tl.atomic_min(d_ptr, 1.0)
    h = tl.atomic_add(h_ptr + offs % 8, v.to(tl.f16)) + tl.atomic_cas(h_ptr, 0.0, 1.0)
    b = tl.atomic_add(b_ptr + offs % 8, v.to(tl.bf16), mask=offs < 3)
    tl.atomic_cas(i_ptr + offs, offs.to(tl.i16), (offs + 1).to(tl.i16))
    tl.store(f_ptr + BLOCK + offs, old + d.to(tl.f32) + h.to(tl.f32) + b.to(tl.f32))


@tl.kernel
def debug_kernel(x_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    """device_assert (at this file's line), device_print and inline PTX (packed and not)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x >= 0.0, "x must be non-negative", mask=offs < n)
    tl.device_assert(n > 0, "n must be positive")
    tl.device_print("x", x, offs)
    tl.device_print("n", n, hex=True)
    doubled = tl.inline_asm_elementwise("add.f32 $0, $1, $1;", "=f,f", [x], dtype=tl.f32, is_pure=True, pack=1)
    small = x.to(tl.u8)
    bumped = tl.inline_asm_elementwise("add.u32 $0, $1, 0x01010101;", "=r,r", [small], dtype=tl.u8, is_pure=True,
                                       pack=4)
    tl.store(x_ptr + offs, doubled + bumped.to(tl.f32), mask=offs < n)


@tl.kernel
def scaled_dot_kernel(a_ptr: Pointer[tl.u8], sa_ptr: Pointer[tl.u8], b_ptr: Pointer[tl.bf16], c_ptr: Pointer[tl.f32],
                      BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    rm, rn, rk, rg = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK), tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (BK // 32) + rg[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot_scaled(a, sa, "e4m3", b, None, "bf16"))


KERNELS: dict[str, tuple[tl.Kernel[...], dict[str, Any]]] = {
    "add": (add_kernel, {"BLOCK": 1024}),
    "softmax": (softmax_kernel, {"BLOCK": 1024}),
    "layernorm": (layernorm_kernel, {"BLOCK": 1024}),
    "sum": (sum_kernel, {"BLOCK": 1024}),
    "matmul": (matmul_kernel, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}),
    "matmul_tf32x3": (matmul_kernel, {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": "tf32x3"}),
    "control": (control_kernel, {"SCALE": 3, "FLAG": True}),
    "reduce2d": (reduce2d_kernel, {"ROWS": 16, "COLS": 32}),
    "mixed": (mixed_kernel, {"BLOCK": 256}),
    "cooperative": (cooperative_kernel, {"ROWS": 8, "COLS": 32}),
    "shapes": (shapes_kernel, {"BLOCK": 64}),
    "blocks": (blocks_kernel, {"BM": 16, "BN": 32}),
    "atomics": (atomics_kernel, {"BLOCK": 128}),
    "debug": (debug_kernel, {"BLOCK": 256}),
    "scaled_dot": (scaled_dot_kernel, {"BM": 16, "BN": 16, "BK": 64}),
}

