"""Differential testing on a GPU: random shapes and block sizes, NumPy reference vs CUDA
(cupy backend), outputs poisoned before every run. Skipped where the cupy backend is unavailable."""

from __future__ import annotations

import typing
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import tile_lang as tl
from examples import EXAMPLES, load
from tile_lang import registry

from tests.compiler.kernels import (
    Precision, add_kernel, debug_kernel, layernorm_kernel, matmul_kernel, softmax_kernel, sum_kernel,
)

_CUPY = {b.name: b for b in registry.backends()}["cupy"]
pytestmark = pytest.mark.skipif(not _CUPY.available, reason=f"cupy backend unavailable: {_CUPY.reason}")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BLOCKS = st.sampled_from([32, 64, 128, 256, 512, 1024])
WARPS = st.sampled_from([1, 2, 4, 8])


def _both(run: Any, outputs: list[tuple[int, ...]], *inputs: np.ndarray[Any, Any]) -> list[Any]:
    """Run ``run(*buffers)`` on each backend with fresh NaN-poisoned outputs; the host results."""
    results = []
    for name in ("numpy", "cupy"):
        with tl.backend(name):
            ins = [tl.to_device(x) for x in inputs]
            outs = [tl.to_device(np.full(shape, np.nan, dtype=np.float32)) for shape in outputs]
            run(*ins, *outs)
            results.append([o.numpy() for o in outs])
    return results


@SETTINGS
@given(n=st.integers(1, 5000), block=BLOCKS, warps=WARPS, seed=st.integers(0, 2**16))
def test_add(n: int, block: int, warps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    ref, got = _both(lambda a, b, o: add_kernel[(tl.cdiv(n, block),), tl.Options(num_warps=warps)](
        a, b, o, n, BLOCK=block), [(n,)], x, y)
    np.testing.assert_array_equal(got[0], ref[0])


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 1024), warps=WARPS, seed=st.integers(0, 2**16))
def test_softmax(rows: int, cols: int, warps: int, seed: int) -> None:
    block = 1 << max(0, (cols - 1).bit_length())
    x = np.random.default_rng(seed).standard_normal((rows, cols), dtype=np.float32) * 4
    ref, got = _both(lambda i, o: softmax_kernel[(rows,), tl.Options(num_warps=warps)](
        o, i, cols, cols, BLOCK=block), [(rows, cols)], x)
    np.testing.assert_allclose(got[0], ref[0], rtol=2e-6, atol=1e-7)


@SETTINGS
@given(rows=st.integers(1, 8), cols=st.integers(1, 2000), block=st.sampled_from([128, 512, 1024]), seed=st.integers(0, 2**16))
def test_layernorm(rows: int, cols: int, block: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    w, b = rng.standard_normal(cols, dtype=np.float32), rng.standard_normal(cols, dtype=np.float32)
    ref, got = _both(lambda xi, wi, bi, y: layernorm_kernel[(rows,)](xi, y, wi, bi, cols, cols, 1e-5, BLOCK=block),
                     [(rows, cols)], x, w, b)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-4, atol=1e-4)


@SETTINGS
@given(n=st.integers(1, 20000), block=BLOCKS, seed=st.integers(0, 2**16))
def test_atomic_sum(n: int, block: int, seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal(n, dtype=np.float32)

    for name in ("numpy", "cupy"):
        with tl.backend(name):
            out = tl.to_device(np.zeros(1, dtype=np.float32))
            sum_kernel[(tl.cdiv(n, block),)](tl.to_device(x), out, n, BLOCK=block)
            np.testing.assert_allclose(out.numpy()[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)


@settings(max_examples=50, deadline=None)
@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 70),
       precision=st.sampled_from(list(typing.get_args(Precision))), seed=st.integers(0, 2**16))
def test_matmul(m: int, n: int, k: int, precision: Precision, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    grid = (tl.cdiv(m, 32), tl.cdiv(n, 32))
    ref, got = _both(lambda ai, bi, c: matmul_kernel[grid](ai, bi, c, m, n, k, k, n, n, BLOCK_M=32, BLOCK_N=32,
                                                           BLOCK_K=16, PRECISION=precision),
                     [(m, n)], a, b)
    tol = 1e-5 if precision != "tf32" else 3e-3
    np.testing.assert_allclose(got[0], ref[0], rtol=tol, atol=tol * np.sqrt(k))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 200), n=st.integers(1, 200), k=st.integers(1, 200), warps=st.sampled_from([4, 8]),
       bn=st.sampled_from([64, 128, 256]), stages=st.sampled_from([1, 2, 3, 4]), seed=st.integers(0, 2**16))
def test_tensor_core_matmul(m: int, n: int, k: int, warps: int, bn: int, stages: int, seed: int) -> None:
    """f16 dots on tensor cores with a fused epilogue: wgmma on Hopper (16 rows a warp, K
    64), from async copies when the shapes are aligned and from registers when they are not,
    pipelined 1 to 4 stages deep; ragged edges on every side."""
    from tests.compiler.test_tensor_cores import mm_epilogue

    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    bias = rng.standard_normal(n).astype(np.float32)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    results = []
    for name in ("numpy", "cupy"):
        with tl.backend(name):
            out = tl.to_device(np.full((m, n), np.nan, np.float16), tl.f16)
            mm_epilogue[(tl.cdiv(m, 16 * warps), tl.cdiv(n, bn)), tl.Options(num_warps=warps, num_stages=stages)](
                tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(bias, tl.f32), out, m, n, k,
                BM=16 * warps, BN=bn, BK=64)
            results.append(out.numpy().astype(np.float64))
    np.testing.assert_allclose(results[1], want, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(results[1], results[0], rtol=2e-3, atol=2e-3)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 300), n16=st.integers(1, 20), k16=st.integers(1, 20), warps=st.sampled_from([4, 8]),
       bn=st.sampled_from([64, 128, 256]), bk=st.sampled_from([64, 128]), stages=st.sampled_from([1, 2, 3, 4]),
       block_ptr=st.booleans(), seed=st.integers(0, 2**16))
def test_tma_matmul(m: int, n16: int, k16: int, warps: int, bn: int, bk: int, stages: int, block_ptr: bool,
                    seed: int) -> None:
    """Operands read through tensor descriptors or block pointers: on Hopper bulk tensor copies
    (TMA; N and K multiples of 16 so the row strides are 16-byte multiples), ragged against
    every tile, zeros outside the tensor, 1 to 4 stages."""
    from tests.compiler.test_tensor_cores import mm_descriptors

    n, k, bm = 16 * n16, 16 * k16, 16 * warps
    assume(max(stages, 1) * (bm + bn) * bk * 2 <= 200 * 1024)  # the rings fit in the H200's 227 KB a block
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    want = a.astype(np.float64) @ b.astype(np.float64)
    ref, got = _both(lambda x, y, o: mm_descriptors[(tl.cdiv(m, bm), tl.cdiv(n, bn)),
                                                     tl.Options(num_warps=warps, num_stages=stages)](
        x, y, o, m, n, k, BM=bm, BN=bn, BK=bk, BLOCK_PTR=block_ptr), [(m, n)], a, b)
    np.testing.assert_allclose(got[0], want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got[0], ref[0], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("seed", range(1000, 1060))
def test_fuzzed_kernels_on_the_gpu(seed: int) -> None:
    """The fuzzer's random kernels (tests/fuzz): the NumPy reference and the GPU agree, and both
    reject the ill-typed ones."""
    from tests.fuzz.runner import Verdict, run_seed

    outcome = run_seed(seed, "cupy")
    assert not outcome.verdict.failed, f"seed {seed}: {outcome.verdict.value}\n{outcome.detail}\n{outcome.source}"
    assert outcome.verdict is Verdict.BOTH_REJECTED or not outcome.invalid


def test_debug_ops(capfd: pytest.CaptureFixture[str]) -> None:
    """device_assert that holds, device_print and inline PTX (packed u8 and f32) on the GPU
    (the NumPy reference has no inline asm, so this one is checked against NumPy directly)."""
    n = 100
    x = np.abs(np.random.default_rng(3).standard_normal(n)).astype(np.float32) * 4
    with tl.backend("cupy"):
        buf = tl.to_device(x)
        debug_kernel[(2,)](buf, n, BLOCK=64)
        got = buf.numpy()
    np.testing.assert_array_equal(got, 2 * x + (x.astype(np.uint8) + 1).astype(np.float32))
    lines = capfd.readouterr().out.splitlines()
    assert "pid (0, 0, 0) idx (5) x: %.9g 5" % x[5] in lines
    assert "pid (1, 0, 0) n: 0x64" in lines


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_example_on_both_backends(name: str, seed: int) -> None:
    """Every ported example, on each backend in turn; each run poisons its outputs and checks
    them against its float64 NumPy reference."""
    run = load(name)
    for backend in ("numpy", "cupy"):
        with tl.backend(backend):
            run(seed)
