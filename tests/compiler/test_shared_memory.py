"""Shared memory is reused (codegen/shared.py): blocks reserved first-fit among the live ones,
a staged block released after its last reader and what a loop or a branch stages after it,
its bytes handed out again behind a barrier; a kernel of two phases needs its larger phase, and
computes what float64 NumPy does on the reference and the emulated CUDA."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, registry
from tile_lang.compiler import compile_ir
from tile_lang_cupy.codegen import generate
from tile_lang_cupy.codegen.shared import SharedMemory

from tests.compiler.test_tensor_cores import _aligned_spec


def test_first_fit_reuse_behind_a_barrier() -> None:
    smem = SharedMemory(512)
    a, fence = smem.reserve(1000, 1024)
    assert (a, fence) == (1024, False) and smem.peak == 2032  # 1000 rounded up to 16
    b, _ = smem.reserve(100, 16)
    assert b == 512 and smem.peak == 2032  # the first gap it fits: below the aligned block
    smem.release(a)
    c, fence = smem.reserve(500, 16)  # bytes the released block held: a barrier first
    assert c == 624 and fence
    d, fence = smem.reserve(400, 16)  # more of them, after that barrier
    assert d == 1136 and not fence
    mark = smem.mark()
    e, _ = smem.reserve(64, 16)
    smem.release_since(mark)
    assert e not in smem.live and set(smem.live) == {b, c, d} and smem.peak == 2032


@tl.kernel
def two_phases(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], d_ptr: Pointer[tl.f32],
               K: int, BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """C = A @ B over a K loop, then D = B^T @ A^T's first tile rows (a second loop staging
    other blocks), and C's first tile once more from blocks staged before the loops."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a0 = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b0 = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    first = tl.dot(a0, b0)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                     tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
    acc_t = tl.zeros((BN, BM), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc_t = tl.dot(tl.trans(b), tl.trans(a), acc_t)
    tl.store(d_ptr + rn[:, None] * BM + rm[None, :], acc_t + tl.trans(first))


def test_two_phases_need_the_larger_one_and_compute_float64(backend: str) -> None:
    spec = _aligned_spec(two_phases, 64, 4, 1, dtypes.F16, pointees={"c_ptr": dtypes.F32, "d_ptr": dtypes.F32},
                         BM=32, BN=32, BK=16)
    kernel = generate(compile_ir(two_phases, replace(spec, arch=80)))
    staged = 2 * 32 * 16 * 2  # one phase's dot operands
    assert kernel.smem_bytes < 1024 + 4 * staged, kernel.smem_bytes  # the phases' blocks share bytes
    assert "its readers are done" in kernel.source
    rng = np.random.default_rng(5)
    m, n, k = 32, 32, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    with registry.backend(backend):
        c, d = tl.to_device(np.full((m, n), np.nan, np.float32)), tl.to_device(np.full((n, m), np.nan, np.float32))
        two_phases[(1,)](tl.to_device(a), tl.to_device(b), c, d, k, BM=32, BN=32, BK=16)
        got_c, got_d = c.numpy(), d.numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(got_c, a64 @ b64, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got_d, (a64 @ b64).T + (a64[:, :16] @ b64[:16]).T, rtol=1e-3, atol=1e-3)


def test_no_barrier_follows_another_with_nothing_between() -> None:
    """A reused buffer's barrier and the next copy's used to be emitted back to back, with only
    the buffer's pointer declaration between (attention's dq: 14 barriers, 2 of them redundant)."""
    import re

    from examples import flash_attention as A

    config = A.hopper_config(128)
    for kernel, tiles in ((A.attention_dq, config.dq), (A.attention_dkdv, config.dkdv)):
        source = kernel.cuda_source(num_warps=tiles.warps, arch="90a", num_stages=config.stages, divisible=("seq",),
                                    BM=tiles.bm, BN=tiles.bn, HEAD=128, CAUSAL=False)
        statements = [line.strip() for line in source.splitlines()
                      if not re.match(r"\s*(#line |\S+\* s\d+ = reinterpret_cast<)", line)]
        pairs = [i for i in range(len(statements) - 1)
                 if statements[i].startswith("__syncthreads();") and statements[i + 1].startswith("__syncthreads();")]
        assert not pairs, [statements[i - 2:i + 3] for i in pairs]
        assert source.count("__syncthreads();") >= 10  # the kernel's own barriers are all there
