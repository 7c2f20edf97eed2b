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
