"""A load read through ``tl.trans`` loads the transposed addresses (passes/permute_loads.py): the
same values on the reference and the generated CUDA (masked, with ``other``), and a matmul with B
given as [N, K] copies both operands into the wgmma rings, B in K-major panels."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, registry
from tile_lang.compiler import compile_ir
from tile_lang.compiler.ir import Computed, Op, walk
from tile_lang_cupy.codegen import generate

from tests.compiler.test_tensor_cores import _aligned_spec


@tl.kernel
def transpose_tile(src: Pointer[tl.f32], dst: Pointer[tl.f32], M: int, N: int, BM: constexpr, BN: constexpr) -> None:
    """dst[N, M] = src[M, N].T, a BM x BN tile a program, edges masked and filled with -1."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load(src + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=-1.0)
    tl.store(dst + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=(rn[:, None] < N) & (rm[None, :] < M))


@tl.kernel
def mm_b_by_rows(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
                 BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """C = A @ B.T, B stored [N, K] (a linear layer's weight), its tile transposed after the load."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :], mask=(rn[:, None] < N) & ((k + rk)[None, :] < K),
                    other=0.0)
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize(("m", "n"), [(64, 32), (50, 37)])
def test_a_transposed_tile_keeps_its_values_and_fill(backend: str, m: int, n: int) -> None:
    rng = np.random.default_rng(m * n)
    src = rng.standard_normal((m, n)).astype(np.float32)
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full((n, m), np.nan, np.float32))
        transpose_tile[(-(-m // 32), -(-n // 16))](s, d, m, n, BM=32, BN=16)
        np.testing.assert_array_equal(d.numpy(), src.T)


@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 64), (70, 45, 100)])
def test_a_matmul_with_b_by_rows_matches_float64(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    with registry.backend(backend):
        c = tl.to_device(np.full((m, n), np.nan, np.float32))
        mm_b_by_rows[(-(-m // 32), -(-n // 32))](tl.to_device(a), tl.to_device(b), c, m, n, k, BM=32, BN=32, BK=32)
        np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b.astype(np.float64).T, rtol=2e-3, atol=2e-2)


def test_b_by_rows_is_copied_into_k_major_panels_on_sm90() -> None:
    """Both operands go to shared memory by cp.async (no 2-D load through registers), B into the
    K-major layout wgmma reads a transposed B from."""
    spec = replace(_aligned_spec(mm_b_by_rows, 4096, 8, 3, dtypes.F16, pointees={"c_ptr": dtypes.F32},
                                 BM=128, BN=256, BK=64), arch=90)
    fn = compile_ir(mm_b_by_rows, spec)
    nodes = walk(fn.body)
    assert len([n for n in nodes if n.op is Op.ASYNC_COPY]) == 2
    assert not [n for n in nodes if n.op is Op.LOAD and len(n.ty.shape) == 2]
    assert all(isinstance(n.layout, Computed) for n in nodes if n.op is Op.PERMUTE)  # addresses and masks only
    source = generate(fn).source
    assert "wgmma" in source and "_kb(" in source  # B read K-major
