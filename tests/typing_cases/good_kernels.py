# mypy: disallow-any-expr
"""Correct kernels that must check cleanly under ``mypy --strict``.

No casts or ignores, and (through the ``disallow-any-expr`` line above) no expression whose
type contains ``Any``: every value in these kernels has a precise static dtype and rank.
Checked by tests/test_typing.py, which also imports the module; the kernels are never run.
"""

from __future__ import annotations

from typing import TypeVar
from typing_extensions import assert_type

import tile_lang as tl
from tile_lang.extra.cuda import libdevice
from tile_lang import R0, R1, R2, Constexpr, Float, Pointer, Tensor, Tensor0, constexpr, f16, f32, i8, i32, u32

W = TypeVar("W", bound=tl.Width)


# ---------------------------------------------------------------- vector add


@tl.kernel
def add_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr.add_offsets(offs), mask=mask, other=0.0)
    out: Tensor[f32, R1] = x + y
    tl.store(out_ptr + offs, out, mask=mask)
    (out_ptr + offs).store(out, mask=mask)


# ---------------------------------------------------------------- softmax, reduce, scan


@tl.func
def add_combine(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a + b


@tl.func
def max_combine(a: Tensor[f32, R0], b: Tensor[f32, R0]) -> Tensor[f32, R0]:
    return tl.maximum(a, b)


@tl.kernel
def softmax_kernel(out_ptr: Pointer[f32], in_ptr: Pointer[f32], row_stride: int, n_cols: int,
                   BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * row_stride + cols, y, mask=mask)
    total: Tensor0[f32] = tl.reduce(x, 0, add_combine)
    running = tl.associative_scan(x, 0, max_combine)
    tl.store(out_ptr + cols, tl.where(mask, running / total, 0.0), mask=mask)
    tl.store(out_ptr + cols, tl.softmax(x), mask=mask)
    tl.store(out_ptr + cols, x, mask=row == 0)  # a scalar mask broadcasts


# ---------------------------------------------------------------- tiled matmul with fused epilogue


@tl.kernel
def matmul_kernel(
    a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f16], bias_ptr: Pointer[f32],
    M: int, N: int, K: int,
    stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
    BLOCK_M: constexpr, BLOCK_N: constexpr, BLOCK_K: constexpr, ALPHA: Constexpr[float],
) -> None:
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.f32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc * ALPHA + bias[None, :]
    acc = tl.where(acc > 0.0, acc, 0.0)
    c = acc.to(tl.f16)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def matmul_acc_kernel(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], K: int,
                      BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a_ptrs = a_ptr + offs[:, None] * K + offs[None, :]
    b_ptrs = b_ptr.add_offsets(offs[:, None] * BLOCK + offs[None, :])
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    for _ in tl.range(0, K, BLOCK, num_stages=3):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs = a_ptrs.add_offsets(BLOCK)
        b_ptrs += BLOCK * BLOCK
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


# ---------------------------------------------------------------- dtype-generic kernel


@tl.kernel
def softplus_kernel(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, beta: float,
                    BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.log(tl.exp(x * beta) + 1.0) / beta
    tl.store(out_ptr + offs, y, mask=mask)
    (out_ptr + offs).store(tl.sigmoid(y), mask=mask)


# ---------------------------------------------------------------- block pointers, descriptors


@tl.kernel
def block_ptr_kernel(a_ptr: Pointer[f16], out_ptr: Pointer[f16], M: int, K: int, stride_m: int,
                     BLOCK_M: constexpr, BLOCK_K: constexpr) -> None:
    pid = tl.program_id(0)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_m, 1), offsets=(pid * BLOCK_M, 0),
                                block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    o_block = tl.make_block_ptr(out_ptr, (M, K), (stride_m, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_K), tl.f32)
    for _ in range(0, K, BLOCK_K):
        tile = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        acc += tile.to(tl.f32)
        tl.store(o_block, tile, boundary_check=(0, 1))
        a_block = tl.advance(a_block, (0, BLOCK_K))
        o_block = tl.advance(o_block, (0, BLOCK_K))
    row = tl.make_block_ptr(out_ptr, (K,), (1,), (0,), (BLOCK_K,), (0,))
    tl.store(row, tl.sum(acc, axis=0).to(tl.f16), boundary_check=(0,))


@tl.kernel
def descriptor_kernel(a_ptr: Pointer[f16], out_ptr: Pointer[f16], M: int, N: int,
                      BLOCK_M: constexpr, BLOCK_N: constexpr) -> None:
    pid = tl.program_id(0)
    src = tl.make_tensor_descriptor(a_ptr, shape=(M, N), strides=(N, 1), block_shape=(BLOCK_M, BLOCK_N))
    dst = tl.make_tensor_descriptor(out_ptr, shape=(M, N), strides=(N, 1), block_shape=(BLOCK_M, BLOCK_N))
    tile = src.load([pid * BLOCK_M, 0])
    dst.store([pid * BLOCK_M, 0], tile)
    tile2: Tensor[f16, R2] = dst.load((pid * BLOCK_M, 0))
    dst.store((pid * BLOCK_M, 0), tile2 * 2.0)


# ---------------------------------------------------------------- atomics, random numbers


@tl.kernel
def atomic_kernel(x_ptr: Pointer[f32], sum_ptr: Pointer[f32], count_ptr: Pointer[i32], lock_ptr: Pointer[i32],
                  n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    old: Tensor[f32, R1] = tl.atomic_add(sum_ptr + offs % 4, x, mask=mask)
    tl.atomic_max(sum_ptr + offs % 4, old, mask=mask, sem="relaxed")
    tl.atomic_add(count_ptr, 1)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.atomic_xchg(lock_ptr, 0)
    ready = tl.load(count_ptr) > 0
    tl.atomic_add(sum_ptr + offs % 4, x, mask=ready)
    tl.store(x_ptr + offs, x, mask=mask & ready)
    tl.atomic_or(count_ptr + offs * 0, offs, mask=mask)


@tl.kernel
def dropout_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, p: float, seed: int,
                   BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    noise = tl.randn(seed, offs)
    tl.store(out_ptr + offs, tl.where(keep, x / (1.0 - p), 0.0) + noise * 0.01, mask=mask)


# ---------------------------------------------------------------- Rust-book aliases, loops


@tl.kernel
def aliases_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], idx_ptr: Pointer[i32],
                   n: int, BLOCK: constexpr, UNROLL: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs.lt(n))
    y = tl.load(y_ptr + offs, mask=tl.lt_scalar(offs, n))
    smaller = x.lt(y)
    best = tl.where_(smaller, x, y)
    best = tl.where_(tl.gt(x, y), best, 0.0)
    top, where_top = tl.max_with_indices(best, 0)
    acc = tl.zeros((BLOCK,), tl.f32)
    for i in tl.static_range(UNROLL):
        acc += best * float(i)
    for j in tl.range(0, n, BLOCK):
        acc = acc + tl.load(x_ptr + j + offs, mask=tl.lt_scalar(offs, n - j), other=0.0)
    tl.store(out_ptr + offs, acc - top)
    tl.store(idx_ptr, where_top)


# ---------------------------------------------------------------- the wider tl.* surface


@tl.kernel
def ops_kernel(x_ptr: Pointer[f32], h_ptr: Pointer[f16], i_ptr: Pointer[i32], q_ptr: Pointer[i8],
               u_ptr: Pointer[u32], n: int, seed: int, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    npid = tl.num_programs(0)
    pid_m, _ = tl.swizzle2d(pid, pid, npid, npid, 8)
    offs = tl.max_contiguous(tl.multiple_of(pid_m * BLOCK + tl.arange(0, BLOCK), 16), BLOCK)
    mask = (offs < n) & (offs >= 0)
    tl.static_assert(BLOCK >= 16, "BLOCK too small")
    tl.device_assert(offs >= 0, "negative offset")
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, cache_modifier=".cg", eviction_policy="evict_last")
    i = tl.load(i_ptr + offs, mask=mask, other=0)
    # float math
    y = tl.clamp(tl.fma(x, x, x), 0.0, 1.0)
    y = tl.sqrt(y) + tl.rsqrt(y + 1.0) + tl.log2(y + 1.0) + tl.exp2(y) + tl.erf(y) + tl.sin(y) * tl.cos(y)
    y = tl.where(mask, y, tl.zeros_like(y))
    y = tl.maximum(y, 0.0) - tl.minimum(y, x)
    y = tl.abs(-y) + tl.floor(y) + tl.ceil(y)
    y = 1.0 - (y * 2 + 1 - 0.5 / y)
    y = tl.fdiv(y, x + 1.0) + tl.div_rn(y, 3.0)
    # integer math
    j = i * 3 + 1
    j = (j // 2) % 7 + (j << 1) + (j >> 1) + (j & 3) + (j | 1) + (j ^ 5)
    j = -j + ~j
    j = tl.cdiv(j, 4) + tl.umulhi(j, j)
    j = j + tl.where(mask, 1, 0)
    y = y * tl.where(mask, 1.0, 0.5) + tl.where_(mask, 0.0, 1.0)
    # reductions and scans
    s0: Tensor[f32, R0] = tl.sum(y)
    s1 = tl.sum(y, axis=0) + tl.max(y, axis=-1) + tl.min(y, 0)
    sk = tl.sum(y, axis=0, keep_dims=True)
    am = tl.argmax(y, axis=0)
    ai = tl.argmin(y, 0, tie_break_left=False)
    cs = tl.cumsum(y, axis=0) + tl.cumprod(y, 0, reverse=True)
    so = tl.sort(y) + tl.flip(y)
    xs = tl.xor_sum(j, axis=0)
    hist = tl.histogram(j, 16, mask=mask)
    g = tl.gather(y, j, axis=0)
    # shapes
    y2 = tl.reshape(y, (BLOCK // 2, 2))
    y3 = tl.expand_dims(y2, 0)
    a, b = tl.split(y2)
    jn = tl.join(a, b)
    y1 = tl.ravel(tl.trans(y2)) + tl.interleave(a, b) + tl.cat(a, b) + tl.view(y2, (BLOCK,))
    yb = tl.broadcast_to(y[None, :], (BLOCK, BLOCK))
    yy, xx = tl.broadcast(y[:, None], y[None, :])
    row_max = tl.max(yb)
    full_sum = tl.sum(yb, axis=1, keep_dims=True) + tl.max(yb, 1, keep_dims=True)
    # random bits, casts, dots
    r1, r2, r3, r4 = tl.randint4x(seed, offs)
    u = (tl.load(u_ptr + offs) ^ tl.randint(seed, offs)) + r1 + r2 + r3 + r4
    bits = y.to(tl.i32, bitcast=True)
    h = tl.cast(y, tl.f16)
    hh = tl.load(h_ptr + offs[:, None] * BLOCK + offs[None, :])
    c32 = tl.dot(hh, hh)
    c16 = tl.dot(hh, hh, out_dtype=tl.f16)
    c32 = tl.dot(hh, hh, acc=c32, input_precision="ieee")
    q = tl.load(q_ptr + offs[:, None] * BLOCK + offs[None, :])
    ci = tl.dot(q, q)
    z = tl.full((BLOCK, BLOCK), 1.5, tl.f32) + c32 + yb + yy + xx + tl.sum(y3, axis=0) + full_sum
    z = z + c16.to(tl.f32) + ci.to(tl.f32) - row_max
    # scalar pointers and control flow
    ptr0 = x_ptr + pid
    tl.store(ptr0, tl.load(ptr0) + s0 + s1)
    if pid == 0:
        tl.store(x_ptr, 0.0)
    k = 0
    while k < n:
        k += BLOCK
    tl.store(x_ptr + offs, y + sk + cs + so + g + y1 + tl.softmax(y), mask=mask)
    tl.store(i_ptr + offs, j + am + ai + xs + hist + bits + tl.full((), 0, tl.i32), mask=mask)
    tl.store(u_ptr + offs, u)
    tl.store(h_ptr + offs, h)
    tl.store(x_ptr + offs[:, None] * BLOCK + offs[None, :], z)
    tl.store(i_ptr + offs[:, None] * BLOCK + offs[None, :], jn.to(tl.i32))
    tl.debug_barrier()
    tl.device_print("x", x)


@tl.kernel
def reduce2d_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], idx_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    rows = tl.reduce(x, 1, add_combine)
    everything: Tensor[f32, R0] = tl.reduce(x, None, add_combine)
    kept: Tensor[f32, R2] = tl.reduce(x, 1, max_combine, keep_dims=True)
    scanned = tl.associative_scan(x, 1, add_combine, reverse=True)
    best, where_best = tl.max(x, 1, return_indices=True)
    tl.store(out_ptr + offs, rows + best - everything)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], scanned - kept)
    tl.store(idx_ptr + offs, where_best)
    tl.store(idx_ptr + offs[:, None] + offs[None, :] * 0, tl.argmax(x, 1, keep_dims=True))


@tl.kernel
def generic_scan_kernel(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    # A combine function over the kernel's own dtype variable is declared inside the kernel:
    # a module-level generic @tl.func cannot be used (a Func instance cannot stay generic).
    @tl.func
    def add(a: Tensor[Float[W], R0], b: Tensor[Float[W], R0]) -> Tensor[Float[W], R0]:
        return a + b

    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, add) / tl.reduce(x, 0, add))


# ---------------------------------------------------------------- real-world shapes: layer norm, attention


@tl.kernel
def layer_norm_fwd(X: Pointer[f32], Y: Pointer[f16], Wt: Pointer[f32], B: Pointer[f32], Mean: Pointer[f32],
                   Rstd: Pointer[f32], stride: int, N: int, eps: float, BLOCK_SIZE: constexpr) -> None:
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tl.zeros((BLOCK_SIZE,), dtype=tl.f32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.f32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros((BLOCK_SIZE,), dtype=tl.f32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.f32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(Wt + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.f32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y.to(tl.f16), mask=mask)


@tl.kernel
def attn_fwd(Q: Pointer[f16], K: Pointer[f16], V: Pointer[f16], Out: Pointer[f16], sm_scale: float,
             N_CTX: int, stride_m: int, BLOCK_M: constexpr, BLOCK_N: constexpr, HEAD_DIM: constexpr) -> None:
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros((BLOCK_M,), dtype=tl.f32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), dtype=tl.f32) + 1.0
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.f32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(K + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.f16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    causal = offs_m[:, None] >= offs_n[None, :]
    acc = tl.where(causal, acc, 0.0)
    tl.store(Out + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.f16))


# ---------------------------------------------------------------- issue 8 part 4: accepted spellings


@tl.kernel
def generic_f32_compute(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    """Load W, compute in f32, store W: the element type named through ``x.dtype``."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32) + x.to(tl.float32) * 2.0
    tl.store(out_ptr + offs, acc.to(x.dtype), mask=offs < n)


@tl.kernel
def generic_through_pointer_dtype(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int,
                                  BLOCK: constexpr) -> None:
    """The element type named as Triton names it: ``ptr.dtype.element_ty``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.f32)
    tl.store(out_ptr + offs, tl.exp(x).to(out_ptr.dtype.element_ty), mask=offs < n)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=x_ptr.dtype.element_ty), mask=offs >= n)


@tl.kernel
def reflected_and_pointer_sub(x_ptr: Pointer[i32], out_ptr: Pointer[i32], seed_ptr: Pointer[i32],
                              BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    last = tl.load(x_ptr + BLOCK - 1 - offs)
    shifted = tl.load((x_ptr + 1 + offs) - 1)
    noise = tl.rand(tl.load(seed_ptr), offs)
    tl.store(out_ptr + offs, (4 ^ x) + (1 & x) + (1 | last) + shifted + (noise < 2.0).to(tl.int32))


@tl.kernel
def transpose_tile(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    r = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], tile.T)


@tl.kernel
def reduce_along_constexpr_axis(x_ptr: Pointer[f32], out_ptr: Pointer[f32], idx_ptr: Pointer[i32], AXIS: constexpr,
                                BLOCK: constexpr) -> None:
    """An axis given as a constexpr (its value unknown to mypy): the result has one dim less."""
    r = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(out_ptr + r, tl.sum(tile, axis=AXIS) + tl.max(tile, AXIS) + tl.min(tile, axis=AXIS))
    tl.store(idx_ptr + r, tl.argmax(tile, AXIS))
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], tl.sum(tile, AXIS, keep_dims=True) + tile)


# ---------------------------------------------------------------- other people's kernels: axes, scaled formats


@tl.kernel
def scans_along_each_axis(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """Scans and kept-dims reductions along an axis the block has, counted from either end."""
    r = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    scanned = tl.cumsum(tile, axis=1) + tl.cumprod(tile, -1) + tl.cumsum(tile, -2, reverse=True)
    kept = tl.sum(tile, axis=1, keep_dims=True) + tl.max(tile, -2, keep_dims=True)
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], scanned + kept)
    tl.store(out_ptr + r, tl.cumsum(tl.load(x_ptr + r), 0))


@tl.kernel
def scaled_matmul(a_ptr: Pointer[tl.f8e4m3], b_ptr: Pointer[tl.bf16], s_ptr: Pointer[tl.u8], out_ptr: Pointer[f32],
                  B_FORMAT: constexpr, BLOCK: constexpr) -> None:
    """``tl.dot_scaled`` with a format named literally and one passed as a constexpr."""
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    scale = tl.load(s_ptr + r[:, None] * (BLOCK // 32) + tl.arange(0, BLOCK // 32)[None, :])
    acc = tl.dot_scaled(a, scale, "e4m3", b, None, B_FORMAT)
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], acc)


@tl.kernel
def masked_sum_with_bias(x_ptr: Pointer[f32], bias_ptr: Pointer[f32] | None, out_ptr: Pointer[f32], n: int,
                         BLOCK: constexpr) -> None:
    """An optional pointer a launch may pass None for (the branch folds away), and a mask used as
    data through ``.to``: ``out = (x + bias) * mask + count``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=mask, other=0.0)
    kept = mask.to(tl.float32)
    tl.store(out_ptr + offs, x * kept + tl.sum(kept, axis=0), mask=mask)


def launch_with_and_without_bias(x: tl.Buffer[f32], bias: tl.Buffer[f32], out: tl.Buffer[f32], n: int) -> None:
    masked_sum_with_bias[(1,)](x, bias, out, n, BLOCK=64)
    masked_sum_with_bias[(1,)](x, None, out, n, BLOCK=64)


# ---------------------------------------------------------------- libdevice functions, as FlagGems calls them


@tl.kernel
def libdevice_calls(x_ptr: Pointer[f32], n_ptr: Pointer[i32], o_ptr: Pointer[f32], s_ptr: Pointer[i32],
                    BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    n = tl.load(n_ptr + offs)
    finite = tl.where(libdevice.isinf(x) | libdevice.isnan(x), 0.0, x)
    powers: Tensor[f32, R1] = libdevice.pow(finite, 2.0) + libdevice.pow(finite, n) + libdevice.pow(finite, 3)
    special = libdevice.j0(finite) + libdevice.erfinv(finite * 0.5) + libdevice.lgamma(finite) + libdevice.round(finite)
    stepped = libdevice.nextafter(libdevice.fmod(finite, 1.5), 0.0) + libdevice.ldexp(finite, n)
    tl.store(o_ptr + offs, powers + special + stepped)
    tl.store(s_ptr + offs, libdevice.signbit(x) + libdevice.popc(n))


# ---------------------------------------------------------------- Triton 3.6's result types of 16-bit arithmetic


@tl.kernel
def sixteen_bit_results(h_ptr: Pointer[f16], g_ptr: Pointer[tl.bf16], o_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    h, g = tl.load(h_ptr + offs), tl.load(g_ptr + offs)
    assert_type(h / 3.0, Tensor[f32, R1])  # / and % of f16 or bf16: computed in f32, returned as f32
    assert_type(2.0 / g, Tensor[f32, R1])
    assert_type(g % g, Tensor[f32, R1])
    assert_type(h * 3.0, Tensor[f16, R1])  # the other operators keep the type
    assert_type(tl.max(h, 0), Tensor[f32, R0])  # max and min of a float narrower than 32 bits: f32
    assert_type(tl.min(g, 0, return_indices=True), tuple[Tensor[f32, R0], Tensor[i32, R0]])
    assert_type(tl.max(h, 0, return_indices=True), tuple[Tensor[f16, R0], Tensor[i32, R0]])
    assert_type(tl.cumsum(g, 0), Tensor[f32, R1])  # bf16 scans: f32
    assert_type(tl.cumsum(h, 0, dtype=tl.float32), Tensor[f32, R1])
    assert_type(tl.sum(h, 0, dtype=tl.float32), Tensor[f32, R0])  # sum's dtype= too
    assert_type(tl.maximum(g, 0.0), Tensor[f32, R1])  # bf16 compares in f32
    assert_type(tl.maximum(h, 0.0), Tensor[f32, R1])  # the Python float is an f32 tensor first
    assert_type(tl.fma(h, 2.0, 1.0), Tensor[f32, R1])
    assert_type(tl.maximum(h, h), Tensor[f16, R1])
    assert_type(max(h, 0.0), Tensor[f32, R1])  # Python's max on a block: tl.maximum
    assert_type(tl.broadcast_to(tl.load(o_ptr), (BLOCK,)), Tensor[f32, R1])  # a scalar splats
    tl.store(o_ptr + offs, h / 3.0 + tl.cumsum(g, 0) + tl.max(h, 0))
    tl.store(h_ptr + offs, (h / 3.0).to(tl.float16))  # back to f16: an explicit conversion


@tl.kernel
def triton_standard_forms(h_ptr: Pointer[f16], o_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    h, x = tl.load(h_ptr + offs), tl.load(o_ptr + offs)
    assert_type(tl.softmax(h), Tensor[f32, R1])  # a narrow float's softmax is f32, as its max
    assert_type(h.softmax(), Tensor[f32, R1])
    assert_type(tl.softmax(x[None, :], dim=1, keep_dims=True), Tensor[f32, R2])
    assert_type(max(x, x * 2.0, 0.5), Tensor[f32, R1])  # Python's max of three values
    assert_type(tl.broadcast_to(x[None, :], 4, BLOCK), Tensor[f32, R2])  # the shape as ints
    assert_type(tl.broadcast_to(tl.load(o_ptr), 4, BLOCK), Tensor[f32, R2])
    tl.store(o_ptr + offs, tl.softmax(h) + max(x, x * 2.0, 0.5))
