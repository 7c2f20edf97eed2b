# mypy: ignore-errors
"""The benchmark kernels written in Triton, line for line the same as tests/compiler/kernels.py
(Triton rejects non-constexpr globals in annotations, so these carry none; mypy skips the file)."""

import triton
import triton.language as ttl


@triton.jit
def tt_add(x_ptr, y_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=mask) + ttl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def tt_softmax(out_ptr, in_ptr, row_stride, n_cols, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    x = ttl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = x - ttl.max(x, axis=0)
    num = ttl.exp(z)
    ttl.store(out_ptr + row * row_stride + cols, num / ttl.sum(num, axis=0), mask=mask)


@triton.jit
def tt_layernorm(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps,
                 BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    x_row = x_ptr + row * stride
    acc = ttl.zeros((BLOCK,), ttl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        acc += ttl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = ttl.sum(acc, axis=0) / n_cols
    var_acc = ttl.zeros((BLOCK,), ttl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        x = ttl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        d = ttl.where(cols < n_cols, x - mean, 0.0)
        var_acc += d * d
    rstd = 1.0 / ttl.sqrt(ttl.sum(var_acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + ttl.arange(0, BLOCK)
        mask = cols < n_cols
        x = ttl.load(x_row + cols, mask=mask, other=0.0)
        w = ttl.load(w_ptr + cols, mask=mask)
        b = ttl.load(b_ptr + cols, mask=mask)
        ttl.store(y_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def tt_sum(x_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    x = ttl.load(x_ptr + offs, mask=offs < n, other=0.0)
    ttl.atomic_add(out_ptr, ttl.sum(x, axis=0))


@triton.jit
def tt_grouped_tile(M, N, BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr, GROUP_M: ttl.constexpr):
    pid = ttl.program_id(0)
    num_m = ttl.cdiv(M, BLOCK_M)
    num_n = ttl.cdiv(N, BLOCK_N)
    return ttl.swizzle2d(pid // num_n, pid % num_n, num_m, num_n, GROUP_M)


@triton.jit
def tt_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_bn, stride_cm,
              BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr, BLOCK_K: ttl.constexpr, GROUP_M: ttl.constexpr):
    pid_m, pid_n = tt_grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + ttl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + ttl.arange(0, BLOCK_N)
    offs_k = ttl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = ttl.zeros((BLOCK_M, BLOCK_N), ttl.float32)
    for k in range(0, ttl.cdiv(K, BLOCK_K)):
        a = ttl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = ttl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = ttl.dot(a, b, acc, input_precision="tf32")
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    ttl.store(c_ptrs, acc.to(c_ptrs.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))



@triton.jit
def tt_matmul_tma(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr, BLOCK_K: ttl.constexpr, GROUP_M: ttl.constexpr):
    pid_m, pid_n = tt_grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_desc = ttl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = ttl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = ttl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    acc = ttl.zeros((BLOCK_M, BLOCK_N), ttl.float32)
    for k in range(0, ttl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = ttl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def tt_matmul_i8(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_bn, stride_cm,
                 BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr, BLOCK_K: ttl.constexpr, GROUP_M: ttl.constexpr):
    pid_m, pid_n = tt_grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + ttl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + ttl.arange(0, BLOCK_N)
    offs_k = ttl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = ttl.zeros((BLOCK_M, BLOCK_N), ttl.int32)
    for k in range(0, ttl.cdiv(K, BLOCK_K)):
        a = ttl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
        b = ttl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        acc = ttl.dot(a, b, acc, out_dtype=ttl.int32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    ttl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

@triton.jit
def tt_matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                        BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr, BLOCK_K: ttl.constexpr):
    offs_m = ttl.program_id(0) * BLOCK_M + ttl.arange(0, BLOCK_M)
    offs_n = ttl.program_id(1) * BLOCK_N + ttl.arange(0, BLOCK_N)
    offs_k = ttl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = ttl.zeros((BLOCK_M, BLOCK_N), ttl.float32)
    for k in range(0, ttl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = ttl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = ttl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = ttl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    bias = ttl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = ttl.maximum(acc + bias[None, :], 0.0)
    ttl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], out.to(ttl.float16),
              mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def tt_attention(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr,
                 HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0)
    base = ttl.program_id(1) * seq * HEAD
    offs_m = start_m * BLOCK_M + ttl.arange(0, BLOCK_M)
    offs_n = ttl.arange(0, BLOCK_N)
    offs_d = ttl.arange(0, HEAD)
    q = ttl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :])
    m_i = ttl.zeros((BLOCK_M,), ttl.float32) - float("inf")
    l_i = ttl.zeros((BLOCK_M,), ttl.float32)
    acc = ttl.zeros((BLOCK_M, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BLOCK_M if CAUSAL else seq
    for start_n in range(0, end, BLOCK_N):
        kt = ttl.load(k_ptr + base + (start_n + offs_n)[None, :] * HEAD + offs_d[:, None])
        qk = ttl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = ttl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_new = ttl.maximum(m_i, ttl.max(qk, 1))
        p = ttl.exp2(qk - m_new[:, None])
        alpha = ttl.exp2(m_i - m_new)
        l_i = l_i * alpha + ttl.sum(p, 1)
        v = ttl.load(v_ptr + base + (start_n + offs_n)[:, None] * HEAD + offs_d[None, :])
        acc = acc * alpha[:, None] + ttl.dot(p.to(ttl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    ttl.store(o_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], out.to(ttl.float16))


@triton.jit
def tt_attention_tma(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, BLOCK_M: ttl.constexpr, BLOCK_N: ttl.constexpr,
                     HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0)
    rows = ttl.num_programs(1) * seq
    row0 = ttl.program_id(1) * seq
    q_desc = ttl.make_tensor_descriptor(q_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_M, HEAD])
    k_desc = ttl.make_tensor_descriptor(k_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_N, HEAD])
    v_desc = ttl.make_tensor_descriptor(v_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_N, HEAD])
    o_desc = ttl.make_tensor_descriptor(o_ptr, [rows, HEAD], [HEAD, 1], [BLOCK_M, HEAD])
    offs_m = start_m * BLOCK_M + ttl.arange(0, BLOCK_M)
    offs_n = ttl.arange(0, BLOCK_N)
    q = q_desc.load([row0 + start_m * BLOCK_M, 0])
    m_i = ttl.zeros((BLOCK_M,), ttl.float32) - float("inf")
    l_i = ttl.zeros((BLOCK_M,), ttl.float32)
    acc = ttl.zeros((BLOCK_M, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BLOCK_M if CAUSAL else seq
    for start_n in range(0, end, BLOCK_N):
        k = k_desc.load([row0 + start_n, 0]).T
        qk = ttl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = ttl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_new = ttl.maximum(m_i, ttl.max(qk, 1))
        p = ttl.exp2(qk - m_new[:, None])
        alpha = ttl.exp2(m_i - m_new)
        l_i = l_i * alpha + ttl.sum(p, 1)
        v = v_desc.load([row0 + start_n, 0])
        acc = acc * alpha[:, None] + ttl.dot(p.to(ttl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    o_desc.store([row0 + start_m * BLOCK_M, 0], out.to(ttl.float16))


# The twins of benchmarks/form_kernels.py (forms_bench.py), statement for statement.


@triton.jit
def tt_mm_tutorial(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                   BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = ttl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = ttl.zeros((BM, BN), ttl.float32)
    for _ in range(0, K, BK):
        acc += ttl.dot(ttl.load(a_ptrs), ttl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    ttl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def tt_mm_grouped(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr, GROUP_M: ttl.constexpr):
    pid = ttl.program_id(0)
    num_m = ttl.cdiv(M, BM)
    num_n = ttl.cdiv(N, BN)
    in_group = GROUP_M * num_n
    first_m = pid // in_group * GROUP_M
    group_rows = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows
    offs_am = ((pid_m * BM + ttl.arange(0, BM)) % M).to(ttl.int64)
    offs_bn = ((pid_n * BN + ttl.arange(0, BN)) % N).to(ttl.int64)
    offs_k = ttl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = ttl.zeros((BM, BN), ttl.float32)
    for k in range(0, ttl.cdiv(K, BK)):
        a = ttl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = ttl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = ttl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    offs_cm = pid_m * BM + ttl.arange(0, BM)
    offs_cn = pid_n * BN + ttl.arange(0, BN)
    c_ptrs = c_ptr + offs_cm[:, None].to(ttl.int64) * stride_cm + offs_cn[None, :] * stride_cn
    ttl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def tt_mm_offsets_from_k(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                         BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = ttl.arange(0, BK)
    acc = ttl.zeros((BM, BN), ttl.float32)
    for k in range(0, K, BK):
        a = ttl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :])
        b = ttl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :])
        acc += ttl.dot(a, b)
    ttl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def tt_mm_bt(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bn, stride_cm,
             BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = ttl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :]
    acc = ttl.zeros((BM, BN), ttl.float32)
    for _ in range(0, K, BK):
        acc += ttl.dot(ttl.load(a_ptrs), ttl.trans(ttl.load(b_ptrs)))
        a_ptrs += BK
        b_ptrs += BK
    ttl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def tt_mm_batched(a_ptr, b_ptr, c_ptr, K, stride_ab, stride_am, stride_bb, stride_bk, stride_cb, stride_cm,
                  BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    z = ttl.program_id(2)
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = ttl.arange(0, BK)
    a_ptrs = a_ptr + z * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + z * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = ttl.zeros((BM, BN), ttl.float32)
    for _ in range(0, K, BK):
        acc += ttl.dot(ttl.load(a_ptrs), ttl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + z * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :]
    ttl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def tt_mm_split_k(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                  BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr, SPLIT_K: ttl.constexpr):
    pid_k = ttl.program_id(2)
    k_slice = K // SPLIT_K
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = pid_k * k_slice + ttl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = ttl.zeros((BM, BN), ttl.float32)
    for _ in range(0, k_slice, BK):
        acc += ttl.dot(ttl.load(a_ptrs), ttl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    ttl.atomic_add(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


@triton.jit
def tt_mm_bias_act(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr, LEAKY: ttl.constexpr):
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_n = ttl.program_id(1) * BN + ttl.arange(0, BN)
    offs_k = ttl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = ttl.zeros((BM, BN), ttl.float32)
    for k in range(0, ttl.cdiv(K, BK)):
        k_left = K - k * BK
        a = ttl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = ttl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = ttl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    acc += ttl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(ttl.float32)[None, :]
    if LEAKY:
        acc = ttl.where(acc > 0.0, acc, acc * 0.01)
    else:
        acc = ttl.maximum(acc, 0.0)
    ttl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
              mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def tt_mm_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                    BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    pid_m = ttl.program_id(0)
    pid_n = ttl.program_id(1)
    a_blk = ttl.make_block_ptr(a_ptr, (M, K), (stride_am, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_blk = ttl.make_block_ptr(b_ptr, (K, N), (stride_bk, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = ttl.zeros((BM, BN), ttl.float32)
    for _ in range(0, ttl.cdiv(K, BK)):
        a = ttl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = ttl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = ttl.dot(a, b, acc)
        a_blk = ttl.advance(a_blk, (0, BK))
        b_blk = ttl.advance(b_blk, (BK, 0))
    c_blk = ttl.make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    ttl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def tt_mm_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr, GROUP_M: ttl.constexpr,
                     NUM_SMS: ttl.constexpr):
    start_pid = ttl.program_id(0)
    num_m = ttl.cdiv(M, BM)
    num_n = ttl.cdiv(N, BN)
    k_tiles = ttl.cdiv(K, BK)
    num_tiles = num_m * num_n
    in_group = GROUP_M * num_n
    offs_k = ttl.arange(0, BK)
    for tile_id in ttl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        first_m = tile_id // in_group * GROUP_M
        group_rows = min(num_m - first_m, GROUP_M)
        pid_m = first_m + tile_id % in_group % group_rows
        pid_n = tile_id % in_group // group_rows
        offs_am = pid_m * BM + ttl.arange(0, BM)
        offs_bn = pid_n * BN + ttl.arange(0, BN)
        offs_am = ttl.max_contiguous(ttl.multiple_of(ttl.where(offs_am < M, offs_am, 0), BM), BM)
        offs_bn = ttl.max_contiguous(ttl.multiple_of(ttl.where(offs_bn < N, offs_bn, 0), BN), BN)
        acc = ttl.zeros((BM, BN), ttl.float32)
        for ki in range(k_tiles):
            offs_kk = ki * BK + offs_k
            a = ttl.load(a_ptr + offs_am[:, None] * stride_am + offs_kk[None, :] * stride_ak,
                         mask=offs_k[None, :] < K - ki * BK, other=0.0)
            b = ttl.load(b_ptr + offs_kk[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                         mask=offs_k[:, None] < K - ki * BK, other=0.0)
            acc = ttl.dot(a, b, acc)
        offs_cm = pid_m * BM + ttl.arange(0, BM)
        offs_cn = pid_n * BN + ttl.arange(0, BN)
        ttl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                  mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def tt_attention_4d(q_ptr, k_ptr, v_ptr, o_ptr, stride_z, stride_h, stride_s, H, seq, scale,
                    BM: ttl.constexpr, BN: ttl.constexpr, HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0)
    zh = ttl.program_id(1)
    base = (zh // H) * stride_z + (zh % H) * stride_h
    offs_m = start_m * BM + ttl.arange(0, BM)
    offs_n = ttl.arange(0, BN)
    offs_d = ttl.arange(0, HEAD)
    q = ttl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :])
    m_i = ttl.zeros((BM,), ttl.float32) - float("inf")
    l_i = ttl.zeros((BM,), ttl.float32)
    acc = ttl.zeros((BM, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BM if CAUSAL else seq
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = ttl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None])
        qk = ttl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = ttl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_new = ttl.maximum(m_i, ttl.max(qk, 1))
        p = ttl.exp2(qk - m_new[:, None])
        alpha = ttl.exp2(m_i - m_new)
        l_i = l_i * alpha + ttl.sum(p, 1)
        v = ttl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :])
        acc = acc * alpha[:, None] + ttl.dot(p.to(ttl.float16), v)
        m_i = m_new
    ttl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], (acc / l_i[:, None]).to(ttl.float16))


@triton.jit
def tt_softmax_rows(x_ptr, y_ptr, stride, n_cols, BLOCK: ttl.constexpr):
    row = ttl.program_id(0).to(ttl.int64)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    x = ttl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(ttl.float32)
    e = ttl.exp(x - ttl.max(x, 0))
    ttl.store(y_ptr + row * stride + cols, (e / ttl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def tt_layer_norm_rows(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    x = ttl.load(x_ptr + row.to(ttl.int64) * stride + cols, mask=mask, other=0.0).to(ttl.float32)
    mean = ttl.sum(x, 0) / n_cols
    d = ttl.where(mask, x - mean, 0.0)
    rstd = 1.0 / ttl.sqrt(ttl.sum(d * d, 0) / n_cols + eps)
    w = ttl.load(w_ptr + cols, mask=mask).to(ttl.float32)
    b = ttl.load(b_ptr + cols, mask=mask).to(ttl.float32)
    ttl.store(y_ptr + row.to(ttl.int64) * stride + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    ttl.store(mean_ptr + row, mean)
    ttl.store(rstd_ptr + row, rstd)


@triton.jit
def tt_attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq, scale, BM: ttl.constexpr, BN: ttl.constexpr,
                     HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0)
    base = ttl.program_id(1) * seq * HEAD
    offs_m = start_m * BM + ttl.arange(0, BM)
    offs_n = ttl.arange(0, BN)
    offs_d = ttl.arange(0, HEAD)
    rows = offs_m[:, None] < seq
    q = ttl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    m_i = ttl.zeros((BM,), ttl.float32) - float("inf")
    l_i = ttl.zeros((BM,), ttl.float32)
    acc = ttl.zeros((BM, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BM if CAUSAL else seq  # keys past seq: masked as past the diagonal
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = ttl.load(k_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        qk = ttl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = ttl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        else:
            qk = ttl.where(cols[None, :] < seq, qk, float("-inf"))
        m_new = ttl.maximum(m_i, ttl.max(qk, 1))
        p = ttl.exp2(qk - m_new[:, None])
        alpha = ttl.exp2(m_i - m_new)
        l_i = l_i * alpha + ttl.sum(p, 1)
        v = ttl.load(v_ptr + base + cols[:, None] * HEAD + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + ttl.dot(p.to(ttl.float16), v)
        m_i = m_new
    ttl.store(o_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], (acc / l_i[:, None]).to(ttl.float16), mask=rows)
    ttl.store(lse_ptr + ttl.program_id(1) * seq + offs_m, m_i + ttl.log2(l_i), mask=offs_m < seq)


@triton.jit
def tt_attention_preprocess(o_ptr, do_ptr, delta_ptr, seq, BM: ttl.constexpr, HEAD: ttl.constexpr):
    offs_m = ttl.program_id(0) * BM + ttl.arange(0, BM)
    offs_d = ttl.arange(0, HEAD)
    rows = offs_m < seq
    at = ttl.program_id(1) * seq * HEAD + offs_m[:, None] * HEAD + offs_d[None, :]
    o = ttl.load(o_ptr + at, mask=rows[:, None], other=0.0).to(ttl.float32)
    do = ttl.load(do_ptr + at, mask=rows[:, None], other=0.0).to(ttl.float32)
    ttl.store(delta_ptr + ttl.program_id(1) * seq + offs_m, ttl.sum(o * do, 1), mask=rows)


@triton.jit
def tt_attention_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, seq, scale, BM: ttl.constexpr,
                      BN: ttl.constexpr, HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_n = ttl.program_id(0) * BN
    row0 = ttl.program_id(1) * seq
    base = row0 * HEAD
    offs_n = start_n + ttl.arange(0, BN)
    offs_m = ttl.arange(0, BM)
    offs_d = ttl.arange(0, HEAD)
    keys = offs_n[:, None] < seq
    k = ttl.load(k_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    v = ttl.load(v_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    dk = ttl.zeros((BN, HEAD), ttl.float32)
    dv = ttl.zeros((BN, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    begin = start_n // BM * BM if CAUSAL else 0
    for start_m in range(begin, seq, BM):
        rows = start_m + offs_m
        qt = ttl.load(q_ptr + base + rows[None, :] * HEAD + offs_d[:, None], mask=rows[None, :] < seq, other=0.0)
        lse = ttl.load(lse_ptr + row0 + rows, mask=rows < seq, other=0.0)
        pt = ttl.exp2(ttl.dot(k, qt) * qk_scale - lse[None, :])
        if CAUSAL:
            pt = ttl.where(rows[None, :] >= offs_n[:, None], pt, 0.0)
        do = ttl.load(do_ptr + base + rows[:, None] * HEAD + offs_d[None, :], mask=rows[:, None] < seq, other=0.0)
        dv += ttl.dot(pt.to(ttl.float16), do)
        do_t = ttl.load(do_ptr + base + rows[None, :] * HEAD + offs_d[:, None], mask=rows[None, :] < seq, other=0.0)
        delta = ttl.load(delta_ptr + row0 + rows, mask=rows < seq, other=0.0)
        dst = pt * (ttl.dot(v, do_t) - delta[None, :])
        q = ttl.load(q_ptr + base + rows[:, None] * HEAD + offs_d[None, :], mask=rows[:, None] < seq, other=0.0)
        dk += ttl.dot(dst.to(ttl.float16), q)
    ttl.store(dk_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], (dk * scale).to(ttl.float16), mask=keys)
    ttl.store(dv_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], dv.to(ttl.float16), mask=keys)


@triton.jit
def tt_attention_dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seq, scale, BM: ttl.constexpr,
                    BN: ttl.constexpr, HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0) * BM
    row0 = ttl.program_id(1) * seq
    base = row0 * HEAD
    offs_m = start_m + ttl.arange(0, BM)
    offs_n = ttl.arange(0, BN)
    offs_d = ttl.arange(0, HEAD)
    rows = offs_m[:, None] < seq
    q = ttl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    do = ttl.load(do_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    lse = ttl.load(lse_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    delta = ttl.load(delta_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    dq = ttl.zeros((BM, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = start_m + BM if CAUSAL else seq
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = ttl.load(k_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        p = ttl.exp2(ttl.dot(q, kt) * qk_scale - lse[:, None])
        if CAUSAL:
            p = ttl.where(offs_m[:, None] >= cols[None, :], p, 0.0)
        vt = ttl.load(v_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        ds = p * (ttl.dot(do, vt) - delta[:, None])
        k = ttl.load(k_ptr + base + cols[:, None] * HEAD + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        dq += ttl.dot(ds.to(ttl.float16), k)
    ttl.store(dq_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], (dq * scale).to(ttl.float16), mask=rows)


# The backward as Triton's tutorial loads its operands: q, do (dk/dv) and k (dq) loaded once and
# used transposed as well (tl.trans); tile_lang's twins above load them twice, since a block used
# both ways is staged through registers by our compiler (docs/performance.md). A benchmark column.


@triton.jit
def tt_attention_dkdv_trans(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, seq, scale,
                            BM: ttl.constexpr, BN: ttl.constexpr, HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_n = ttl.program_id(0) * BN
    row0 = ttl.program_id(1) * seq
    base = row0 * HEAD
    offs_n = start_n + ttl.arange(0, BN)
    offs_m = ttl.arange(0, BM)
    offs_d = ttl.arange(0, HEAD)
    keys = offs_n[:, None] < seq
    k = ttl.load(k_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    v = ttl.load(v_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    dk = ttl.zeros((BN, HEAD), ttl.float32)
    dv = ttl.zeros((BN, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    begin = start_n // BM * BM if CAUSAL else 0
    for start_m in range(begin, seq, BM):
        rows = start_m + offs_m
        qt = ttl.load(q_ptr + base + rows[None, :] * HEAD + offs_d[:, None], mask=rows[None, :] < seq, other=0.0)
        lse = ttl.load(lse_ptr + row0 + rows, mask=rows < seq, other=0.0)
        pt = ttl.exp2(ttl.dot(k, qt) * qk_scale - lse[None, :])
        if CAUSAL:
            pt = ttl.where(rows[None, :] >= offs_n[:, None], pt, 0.0)
        do = ttl.load(do_ptr + base + rows[:, None] * HEAD + offs_d[None, :], mask=rows[:, None] < seq, other=0.0)
        dv += ttl.dot(pt.to(ttl.float16), do)
        delta = ttl.load(delta_ptr + row0 + rows, mask=rows < seq, other=0.0)
        dst = pt * (ttl.dot(v, ttl.trans(do)) - delta[None, :])
        dk += ttl.dot(dst.to(ttl.float16), ttl.trans(qt))
    ttl.store(dk_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], (dk * scale).to(ttl.float16), mask=keys)
    ttl.store(dv_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], dv.to(ttl.float16), mask=keys)


@triton.jit
def tt_attention_dq_trans(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seq, scale, BM: ttl.constexpr,
                          BN: ttl.constexpr, HEAD: ttl.constexpr, CAUSAL: ttl.constexpr):
    start_m = ttl.program_id(0) * BM
    row0 = ttl.program_id(1) * seq
    base = row0 * HEAD
    offs_m = start_m + ttl.arange(0, BM)
    offs_n = ttl.arange(0, BN)
    offs_d = ttl.arange(0, HEAD)
    rows = offs_m[:, None] < seq
    q = ttl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    do = ttl.load(do_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    lse = ttl.load(lse_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    delta = ttl.load(delta_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    dq = ttl.zeros((BM, HEAD), ttl.float32)
    qk_scale = scale * 1.44269504
    end = start_m + BM if CAUSAL else seq
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = ttl.load(k_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        p = ttl.exp2(ttl.dot(q, kt) * qk_scale - lse[:, None])
        if CAUSAL:
            p = ttl.where(offs_m[:, None] >= cols[None, :], p, 0.0)
        vt = ttl.load(v_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        ds = p * (ttl.dot(do, vt) - delta[:, None])
        dq += ttl.dot(ds.to(ttl.float16), ttl.trans(kt))
    ttl.store(dq_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], (dq * scale).to(ttl.float16), mask=rows)
