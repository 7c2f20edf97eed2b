"""Flash attention forward and backward kernels (FlashAttention-2's split of the backward): the
forward saves each row's log-sum-exp, ``attention_preprocess`` computes delta = rowsum(o * do),
``attention_dkdv`` runs one program per key block over the query blocks, and ``attention_dq`` one
program per query block over the key blocks, both recomputing p from q, k and the saved
log-sum-exp instead of storing it.

Tensors are [B, H, S, HEAD] contiguous f16 (``base`` moves to one (batch, head)); the
log-sum-exp and delta are [B, H, S] f32. Scores are kept in base 2 (exp2 with the scale folded
into log2(e)), so the saved log-sum-exp is log2 of the row's sum of exp2(q.k * scale * log2 e).
Rows and keys past ``seq`` are masked, so ``seq`` need not be a multiple of the blocks.
``examples/torch_attention.py`` wraps them as a torch autograd op; ``benchmarks/attention_bench.py``
times them against Triton's twins (``benchmarks/triton_kernels.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.kernel
def attention_fwd(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], o_ptr: Pointer[tl.f16],
                  lse_ptr: Pointer[tl.f32], seq: int, scale: float, BM: constexpr, BN: constexpr, HEAD: constexpr,
                  CAUSAL: constexpr) -> None:
    """One (query block, batch*head): online softmax over the key blocks; stores o and each
    row's base-2 log-sum-exp of the scaled scores."""
    start_m = tl.program_id(0)
    base = tl.program_id(1) * seq * HEAD
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD)
    rows = offs_m[:, None] < seq
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    m_i = tl.zeros((BM,), tl.f32) - float("inf")
    l_i = tl.zeros((BM,), tl.f32)
    acc = tl.zeros((BM, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    end = (start_m + 1) * BM if CAUSAL else seq  # keys past seq: masked as past the diagonal
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        qk = tl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        else:
            qk = tl.where(cols[None, :] < seq, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * HEAD + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.f16), v)
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], (acc / l_i[:, None]).to(tl.f16), mask=rows)
    tl.store(lse_ptr + tl.program_id(1) * seq + offs_m, m_i + tl.log2(l_i), mask=offs_m < seq)


@tl.kernel
def attention_preprocess(o_ptr: Pointer[tl.f16], do_ptr: Pointer[tl.f16], delta_ptr: Pointer[tl.f32], seq: int,
                         BM: constexpr, HEAD: constexpr) -> None:
    """delta = rowsum(o * do) in f32 for one (query block, batch*head)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, HEAD)
    rows = offs_m < seq
    at = tl.program_id(1) * seq * HEAD + offs_m[:, None] * HEAD + offs_d[None, :]
    o = tl.load(o_ptr + at, mask=rows[:, None], other=0.0).to(tl.f32)
    do = tl.load(do_ptr + at, mask=rows[:, None], other=0.0).to(tl.f32)
    tl.store(delta_ptr + tl.program_id(1) * seq + offs_m, tl.sum(o * do, 1), mask=rows)


@tl.kernel
def attention_dkdv(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], do_ptr: Pointer[tl.f16],
                   lse_ptr: Pointer[tl.f32], delta_ptr: Pointer[tl.f32], dk_ptr: Pointer[tl.f16],
                   dv_ptr: Pointer[tl.f16], seq: int, scale: float, BM: constexpr, BN: constexpr, HEAD: constexpr,
                   CAUSAL: constexpr) -> None:
    """dk and dv of one (key block, batch*head), over the query blocks (from the diagonal on when
    CAUSAL): p^T recomputed as exp2(k q^T * scale * log2 e - lse), dv += p^T do,
    ds^T = p^T * (v do^T - delta), dk += ds^T q."""
    start_n = tl.program_id(0) * BN
    row0 = tl.program_id(1) * seq
    base = row0 * HEAD
    offs_n = start_n + tl.arange(0, BN)
    offs_m = tl.arange(0, BM)
    offs_d = tl.arange(0, HEAD)
    keys = offs_n[:, None] < seq
    k = tl.load(k_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    v = tl.load(v_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], mask=keys, other=0.0)
    dk = tl.zeros((BN, HEAD), tl.f32)
    dv = tl.zeros((BN, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    begin = start_n // BM * BM if CAUSAL else 0
    for start_m in range(begin, seq, BM):
        rows = start_m + offs_m
        qt = tl.load(q_ptr + base + rows[None, :] * HEAD + offs_d[:, None], mask=rows[None, :] < seq, other=0.0)
        lse = tl.load(lse_ptr + row0 + rows, mask=rows < seq, other=0.0)
        pt = tl.exp2(tl.dot(k, qt) * qk_scale - lse[None, :])
        if CAUSAL:
            pt = tl.where(rows[None, :] >= offs_n[:, None], pt, 0.0)
        do = tl.load(do_ptr + base + rows[:, None] * HEAD + offs_d[None, :], mask=rows[:, None] < seq, other=0.0)
        dv += tl.dot(pt.to(tl.f16), do)
        do_t = tl.load(do_ptr + base + rows[None, :] * HEAD + offs_d[:, None], mask=rows[None, :] < seq, other=0.0)
        delta = tl.load(delta_ptr + row0 + rows, mask=rows < seq, other=0.0)
        dst = pt * (tl.dot(v, do_t) - delta[None, :])
        q = tl.load(q_ptr + base + rows[:, None] * HEAD + offs_d[None, :], mask=rows[:, None] < seq, other=0.0)
        dk += tl.dot(dst.to(tl.f16), q)
    tl.store(dk_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], (dk * scale).to(tl.f16), mask=keys)
    tl.store(dv_ptr + base + offs_n[:, None] * HEAD + offs_d[None, :], dv.to(tl.f16), mask=keys)


@tl.kernel
def attention_dq(q_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16], v_ptr: Pointer[tl.f16], do_ptr: Pointer[tl.f16],
                 lse_ptr: Pointer[tl.f32], delta_ptr: Pointer[tl.f32], dq_ptr: Pointer[tl.f16], seq: int,
                 scale: float, BM: constexpr, BN: constexpr, HEAD: constexpr, CAUSAL: constexpr) -> None:
    """dq of one (query block, batch*head), over the key blocks (up to the diagonal when CAUSAL):
    p recomputed from q k^T and lse, ds = p * (do v^T - delta), dq += ds k."""
    start_m = tl.program_id(0) * BM
    row0 = tl.program_id(1) * seq
    base = row0 * HEAD
    offs_m = start_m + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD)
    rows = offs_m[:, None] < seq
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    do = tl.load(do_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], mask=rows, other=0.0)
    lse = tl.load(lse_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    delta = tl.load(delta_ptr + row0 + offs_m, mask=offs_m < seq, other=0.0)
    dq = tl.zeros((BM, HEAD), tl.f32)
    qk_scale = scale * 1.44269504
    end = start_m + BM if CAUSAL else seq
    for start_n in range(0, end, BN):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        p = tl.exp2(tl.dot(q, kt) * qk_scale - lse[:, None])
        if CAUSAL:
            p = tl.where(offs_m[:, None] >= cols[None, :], p, 0.0)
        vt = tl.load(v_ptr + base + cols[None, :] * HEAD + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        ds = p * (tl.dot(do, vt) - delta[:, None])
        k = tl.load(k_ptr + base + cols[:, None] * HEAD + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        dq += tl.dot(ds.to(tl.f16), k)
    tl.store(dq_ptr + base + offs_m[:, None] * HEAD + offs_d[None, :], (dq * scale).to(tl.f16), mask=rows)


@dataclass(frozen=True)
class Tiles:
    """One kernel's blocks (rows of q by rows of k) and warps."""

    bm: int
    bn: int
    warps: int


@dataclass(frozen=True)
class Config:
    """The tiles of the forward, the dk/dv and the dq kernels (the preprocess takes dq's rows)."""

    fwd: Tiles
    dkdv: Tiles
    dq: Tiles
    stages: int = 3


def hopper_config(head: int) -> Config:
    """The benchmark's tiles on an H200 for HEAD 64 or 128 (the forward's as forms_bench's)."""
    if head == 64:
        return Config(Tiles(128, 64, 4), Tiles(32, 128, 4), Tiles(128, 32, 4))
    return Config(Tiles(128, 32, 8), Tiles(32, 128, 8), Tiles(128, 32, 8))


@dataclass(frozen=True)
class Shape:
    """[batch, heads, seq, head] of q, k, v and o."""

    batch: int
    heads: int
    seq: int
    head: int

    def grid(self, block: int) -> tuple[int, int]:
        """Blocks of ``block`` rows along the sequence by (batch, head) pairs."""
        return (tl.cdiv(self.seq, block), self.batch * self.heads)


F16 = tl.Buffer[tl.f16]
F32 = tl.Buffer[tl.f32]


def forward(q: F16, k: F16, v: F16, o: F16, lse: F32, shape: Shape, causal: bool, scale: float,
            config: Config) -> None:
    """o = softmax(q k^T * scale) v, and each row's base-2 log-sum-exp into ``lse``."""
    t = config.fwd
    attention_fwd[shape.grid(t.bm), tl.Options(num_warps=t.warps, num_stages=config.stages)](
        q, k, v, o, lse, shape.seq, scale, BM=t.bm, BN=t.bn, HEAD=shape.head, CAUSAL=causal)


def backward(q: F16, k: F16, v: F16, o: F16, do: F16, lse: F32, delta: F32, dq: F16, dk: F16, dv: F16,
             shape: Shape, causal: bool, scale: float, config: Config) -> None:
    """dq, dk and dv from the forward's inputs, its output and log-sum-exp, and do (``delta``
    is scratch: rowsum(o * do))."""
    t = config.dq
    attention_preprocess[shape.grid(t.bm), tl.Options(num_warps=t.warps)](o, do, delta, shape.seq, BM=t.bm,
                                                                           HEAD=shape.head)
    kv = config.dkdv
    attention_dkdv[shape.grid(kv.bn), tl.Options(num_warps=kv.warps, num_stages=config.stages)](
        q, k, v, do, lse, delta, dk, dv, shape.seq, scale, BM=kv.bm, BN=kv.bn, HEAD=shape.head, CAUSAL=causal)
    attention_dq[shape.grid(t.bm), tl.Options(num_warps=t.warps, num_stages=config.stages)](
        q, k, v, do, lse, delta, dq, shape.seq, scale, BM=t.bm, BN=t.bn, HEAD=shape.head, CAUSAL=causal)
