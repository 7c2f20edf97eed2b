"""The kernel forms of ``benchmarks/forms_bench.py``: one algorithm written the ways tutorials and
projects write it (grids, pointer increments or offsets from k, masks, block pointers, batched,
split-K, fused epilogues, persistent, 4-D attention, row kernels); ``benchmarks/triton_kernels.py`` holds
each one's Triton twin (``tt_`` + the same name), statement for statement."""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr

W = TypeVar("W", bound=Width)
V = TypeVar("V", bound=Width)


@tl.kernel
def mm_tutorial(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], K: int,
                stride_am: int, stride_bk: int, stride_cm: int,
                BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """(a) C = A @ B on a 2-D grid (M/BM, N/BN), unit inner strides, pointers stepped by a K
    block each iteration, no masks (M, N, K multiples of the tiles)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@tl.kernel
def mm_grouped(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[V]], M: int, N: int, K: int,
               stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int, stride_cn: int,
               BM: constexpr, BN: constexpr, BK: constexpr, GROUP_M: constexpr) -> None:
    """(b) C = A @ B on a 1-D grid swizzled GROUP_M tile rows at a time (the index arithmetic
    written out), rows and columns wrapped modulo M and N, offsets widened to int64 before the
    strides multiply, the K loop masked for a ragged last block; all six strides passed; C of its
    own float type (fp8 operands, an f16 C: tutorial 03)."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    in_group = GROUP_M * num_n
    first_m = pid // in_group * GROUP_M
    group_rows = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows
    offs_am = ((pid_m * BM + tl.arange(0, BM)) % M).to(tl.i64)
    offs_bn = ((pid_n * BN + tl.arange(0, BN)) % N).to(tl.i64)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + offs_cm[:, None].to(tl.i64) * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@tl.kernel
def mm_offsets_from_k(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], K: int,
                      stride_am: int, stride_bk: int, stride_cm: int,
                      BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """(c) ``mm_tutorial`` with the operands' addresses recomputed from k every iteration
    instead of pointers carried and stepped through the loop."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@tl.kernel
def mm_bt(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], K: int,
          stride_am: int, stride_bn: int, stride_cm: int,
          BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """(d) C = A @ B.T with B given as [N, K] row-major (a linear layer's weight): its [BN, BK]
    tile is loaded as stored and transposed in registers (``tl.trans``) for the dot."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :]
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.trans(tl.load(b_ptrs)))
        a_ptrs += BK
        b_ptrs += BK
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@tl.kernel
def mm_batched(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], K: int,
               stride_ab: int, stride_am: int, stride_bb: int, stride_bk: int, stride_cb: int, stride_cm: int,
               BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """(e) C[z] = A[z] @ B[z] on a 3-D grid (M/BM, N/BN, batch): each operand's base moved to
    its batch by the batch stride, then ``mm_tutorial``'s loop."""
    z = tl.program_id(2)
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + z * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + z * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + z * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@tl.kernel
def mm_split_k(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[tl.f32], K: int,
               stride_am: int, stride_bk: int, stride_cm: int,
               BM: constexpr, BN: constexpr, BK: constexpr, SPLIT_K: constexpr) -> None:
    """(f) C += A @ B with K cut in SPLIT_K slices, one a program along grid axis 2, each slice's
    partial product added into the f32 C with ``tl.atomic_add`` (C must hold its start value)."""
    pid_k = tl.program_id(2)
    k_slice = K // SPLIT_K
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = pid_k * k_slice + tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, k_slice, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.atomic_add(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


@tl.kernel
def mm_bias_act(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], bias_ptr: Pointer[Float[W]],
                c_ptr: Pointer[Float[W]], M: int, N: int, K: int, stride_am: int, stride_bk: int, stride_cm: int,
                BM: constexpr, BN: constexpr, BK: constexpr, LEAKY: constexpr) -> None:
    """(g) act(A @ B + bias) with every edge masked (any M, N, K); act is ReLU, or with LEAKY
    leaky ReLU of slope 0.01; the bias is added in f32 to the f32 accumulator."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.f32)[None, :]
    if LEAKY:
        acc = tl.where(acc > 0.0, acc, acc * 0.01)
    else:
        acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def mm_block_ptr(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], M: int, N: int,
                 K: int, stride_am: int, stride_bk: int, stride_cm: int,
                 BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """(h) C = A @ B through block pointers on a 2-D grid: A's and B's tiles loaded with both
    dims bounds-checked (zero padding) and moved by ``tl.advance``; C stored through one too."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (stride_am, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.f32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, (BK, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@tl.kernel
def mm_persistent(a_ptr: Pointer[Float[W]], b_ptr: Pointer[Float[W]], c_ptr: Pointer[Float[W]], M: int, N: int,
                  K: int, stride_am: int, stride_ak: int, stride_bk: int, stride_bn: int, stride_cm: int,
                  stride_cn: int, BM: constexpr, BN: constexpr, BK: constexpr, GROUP_M: constexpr,
                  NUM_SMS: constexpr) -> None:
    """(k) Persistent C = A @ B: NUM_SMS programs, each walking the tiles ``pid, pid + NUM_SMS, ...``
    in the grouped order with ``tl.range(..., flatten=True)``; rows and columns past M and N read
    row or column 0 under contiguity hints, the K loop masked (tutorial 09's persistent matmul: the
    hints hold where M and N are multiples of the tiles)."""
    start_pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_m * num_n
    in_group = GROUP_M * num_n
    offs_k = tl.arange(0, BK)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        first_m = tile_id // in_group * GROUP_M
        group_rows = min(num_m - first_m, GROUP_M)
        pid_m = first_m + tile_id % in_group % group_rows
        pid_n = tile_id % in_group // group_rows
        offs_am = pid_m * BM + tl.arange(0, BM)
        offs_bn = pid_n * BN + tl.arange(0, BN)
        offs_am = tl.max_contiguous(tl.multiple_of(tl.where(offs_am < M, offs_am, 0), BM), BM)
        offs_bn = tl.max_contiguous(tl.multiple_of(tl.where(offs_bn < N, offs_bn, 0), BN), BN)
        acc = tl.zeros((BM, BN), tl.f32)
        for ki in range(k_tiles):
            offs_kk = ki * BK + offs_k
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_kk[None, :] * stride_ak,
                        mask=offs_k[None, :] < K - ki * BK, other=0.0)
            b = tl.load(b_ptr + offs_kk[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                        mask=offs_k[:, None] < K - ki * BK, other=0.0)
            acc = tl.dot(a, b, acc)
        offs_cm = pid_m * BM + tl.arange(0, BM)
        offs_cn = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@tl.kernel
def attention_4d(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], o_ptr: Pointer[tl.f16],
                 stride_z: int, stride_h: int, stride_s: int, H: int, seq: int, scale: float,
                 BM: constexpr, BN: constexpr, HEAD: constexpr, CAUSAL: constexpr) -> None:
    """(i) Flash attention forward over [B, H, S, HEAD] tensors of one layout (unit stride
    along HEAD): grid (S/BM, B*H), the batch and head split from axis 1 and reached by their
    strides; online softmax in base 2; CAUSAL stops at the diagonal block and masks it."""
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    base = (zh // H) * stride_z + (zh % H) * stride_h
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :])
    m_i = tl.zeros((BM,), tl.f32) - float("inf")
    l_i = tl.zeros((BM,), tl.f32)
    acc = tl.zeros((BM, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BM if CAUSAL else seq
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None])
        qk = tl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.f16), v)
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], (acc / l_i[:, None]).to(tl.f16))


@tl.kernel
def softmax_rows(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], stride: int, n_cols: int,
                 BLOCK: constexpr) -> None:
    """(j) Row softmax of a 16-bit matrix, one row a program held whole in registers (n_cols
    <= BLOCK), computed in f32 and stored back in the input's dtype."""
    row = tl.program_id(0).to(tl.i64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.f32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


@tl.kernel
def layer_norm_rows(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], w_ptr: Pointer[Float[W]],
                    b_ptr: Pointer[Float[W]], mean_ptr: Pointer[tl.f32], rstd_ptr: Pointer[tl.f32], stride: int,
                    n_cols: int, eps: float, BLOCK: constexpr) -> None:
    """(j) Layer norm forward of a 16-bit matrix, one row a program held whole (n_cols <=
    BLOCK): f32 statistics, the row's mean and 1/std saved for a backward pass."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.i64) * stride + cols, mask=mask, other=0.0).to(tl.f32)
    mean = tl.sum(x, 0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.f32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.f32)
    tl.store(y_ptr + row.to(tl.i64) * stride + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
