"""``tl.dot`` on tensor cores (mma.sync): the layouts pass gives dot results the fragment layout,
the generated code runs on the CPU emulator (whose ldmatrix and mma follow their PTX
definitions) against float64 NumPy on random data, and nvcc's PTX holds ``mma.sync``."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, registry
from tile_lang.dtypes import DType
from tile_lang.errors import OutOfResources
from tile_lang.compiler import build, compile_ir, static_spec
from tile_lang.compiler.ir import DotAttr, LoopAttr, MemAttr, Mma, MmaRows, Node, Op, Shared, box_of, walk
from tile_lang.compiler.spec import Spec, int_spec, pointer_spec
from tile_lang.compiler.passes.layouts import operand_pad
from tile_lang_cupy.codegen import generate
from tile_lang_cupy.codegen.ctypes_ import ctype
from tile_lang_cupy.headers import INCLUDE_DIR

from tests.compiler.conftest import NVCC, sm90a_report
from tests.compiler.emulator import NAME, EmuBackend
from tests.compiler.kernels import Precision, matmul_kernel

_BACKEND = EmuBackend()
_EMULATED = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None, reason=str(_BACKEND.unavailable_reason()))


@tl.kernel
def mm_epilogue(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], bias_ptr: Pointer[tl.f32], c_ptr: Pointer[tl.f16],
                M: int, N: int, K: int, BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """A fused matmul + bias + relu, f16 out, with ragged masked edges (the epilogue runs on
    the accumulator fragments)."""
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :], mask=(om[:, None] < M) & ((k + ok)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :], mask=((k + ok)[:, None] < K) & (on[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + on, mask=on < N, other=0.0)
    out = tl.maximum(acc + bias[None, :], 0.0).to(tl.f16)
    tl.store(c_ptr + om[:, None] * N + on[None, :], out, mask=(om[:, None] < M) & (on[None, :] < N))


@tl.kernel
def mm_bf16(a_ptr: Pointer[tl.bf16], b_ptr: Pointer[tl.bf16], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
            BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :], mask=(om[:, None] < M) & ((k + ok)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :], mask=((k + ok)[:, None] < K) & (on[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))


def _mma_nodes(kernel: Any, warps: int, **constexprs: Any) -> list[Mma]:
    fn = compile_ir(kernel, static_spec(kernel, constexprs, warps), verify_each=True)
    return [n.layout for n in walk(fn.body) if n.op is Op.DOT and isinstance(n.layout, Mma)]


@pytest.mark.parametrize("bm, bn, warps, expect", [
    (128, 256, 8, Mma(2, 4, 4, 8)),   # 64x64 warp tiles
    (64, 64, 4, Mma(2, 2, 2, 4)),
    (16, 8, 4, Mma(1, 1, 1, 1)),      # one instruction tile: three warps hold copies
    (32, 128, 4, Mma(1, 4, 2, 4)),
])
def test_warps_split_the_block_into_square_tiles(bm: int, bn: int, warps: int, expect: Mma) -> None:
    assert _mma_nodes(mm_epilogue, warps, BM=bm, BN=bn, BK=32) == [expect]


def test_dots_tensor_cores_cannot_run_stay_on_cuda_cores() -> None:
    assert _mma_nodes(matmul_kernel, 4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, PRECISION="ieee") == []
    assert _mma_nodes(matmul_kernel, 4, BLOCK_M=8, BLOCK_N=32, BLOCK_K=16, PRECISION="tf32") == []  # M < 16
    assert len(_mma_nodes(matmul_kernel, 4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, PRECISION="tf32")) == 1
    assert len(_mma_nodes(matmul_kernel, 4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, PRECISION="tf32x3")) == 3


@pytest.mark.parametrize("dtype, cols, which, pad", [
    (dtypes.F16, 64, 0, 8), (dtypes.F16, 16, 0, 8), (dtypes.F16, 8, 1, 0), (dtypes.F16, 24, 0, 0),
    (dtypes.F32, 32, 0, 4), (dtypes.F32, 32, 1, 8), (dtypes.F32, 8, 1, 0),
    (dtypes.I8, 128, 0, 16), (dtypes.I8, 256, 1, 16), (dtypes.I8, 48, 1, 0),
])
def test_operand_rows_are_padded_to_an_odd_count_of_bank_units(dtype: DType, cols: int, which: int, pad: int) -> None:
    assert operand_pad(dtype, cols, which) == pad


def _on_emulator(launch: Any, arch: int = 80) -> None:
    registry.register(_BACKEND)
    _BACKEND.arch = arch
    try:
        with registry.backend(NAME):
            launch()
    finally:
        _BACKEND.arch = 80


@tl.kernel
def column_sums(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], d_ptr: Pointer[tl.f16], out_ptr: Pointer[tl.f32],
                K: int, N: int, BM: constexpr, BN: constexpr, BK: constexpr, TWO: constexpr) -> None:
    """Column sums of A @ B (plus, with ``TWO``, those of A @ D): pipelined loops each followed by a
    reduction that stages its accumulator through shared memory where the loop's rings were (the
    second loop's rings then reuse the first reduction's buffer)."""
    om = tl.arange(0, BM)
    on = tl.program_id(0) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :])
        acc = tl.dot(a, tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :]), acc)
    sums = tl.sum(acc, 0)
    if TWO:
        acc2 = tl.zeros((BM, BN), tl.f32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :])
            acc2 = tl.dot(a, tl.load(d_ptr + (k + ok)[:, None] * N + on[None, :]), acc2)
        sums += tl.sum(acc2, 0)
    tl.store(out_ptr + on, sums)


def test_code_after_a_pipelined_loop_reuses_its_rings() -> None:
    """The benchmark tile (128x256x64, 3 stages) with column sums: the staged accumulators
    (128 KB) go where the rings (144 KB) were, within the H200's 227 KB a block, rather than
    beside them (279 KB: a launch error)."""
    spec = _aligned_spec(column_sums, 4096, 8, 3, dtypes.F16, (), {"out_ptr": dtypes.F32},
                         BM=128, BN=256, BK=64, TWO=False)
    cuda = generate(compile_ir(column_sums, replace(spec, arch=90)))
    rings = 3 * (128 * 64 + 64 * 256) * 2
    assert rings <= cuda.smem_bytes < rings + 4096
    assert f"// 256 threads a block, {cuda.smem_bytes} bytes of dynamic shared memory." in cuda.source  # inspect --cuda


@_EMULATED
@pytest.mark.parametrize("arch, warps, stages", [(80, 4, 2), (90, 4, 3), (90, 8, 2)])
def test_two_pipelined_loops_and_their_reductions_match_float64(arch: int, warps: int, stages: int) -> None:
    rng = np.random.default_rng(arch + warps + stages)
    bm, bn, bk, n, k = 16 * warps, 64, 32, 128, 96
    a = rng.standard_normal((bm, k)).astype(np.float16)
    b, d = (rng.standard_normal((k, n)).astype(np.float16) for _ in range(2))
    out = np.full(n, np.nan, np.float32)

    def launch() -> None:
        dev = tl.to_device(out, tl.f32)
        column_sums[(n // bn,), tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(d, tl.f16), dev, k, n, BM=bm, BN=bn, BK=bk,
            TWO=True)
        out[...] = dev.numpy()

    _on_emulator(launch, arch=arch)
    a64 = a.astype(np.float64)
    want = (a64 @ b.astype(np.float64)).sum(0) + (a64 @ d.astype(np.float64)).sum(0)
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)


@_EMULATED
@pytest.mark.parametrize("bm, bn, bk, warps", [(32, 32, 16, 4), (64, 32, 32, 2), (16, 8, 16, 4), (32, 16, 32, 1)])
def test_fused_epilogue_on_fragments_matches_float64(bm: int, bn: int, bk: int, warps: int) -> None:
    rng = np.random.default_rng(bm * 7 + bn + warps)
    m, n, k = 40, 24, 48  # ragged against every block shape
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    bias = rng.standard_normal(n).astype(np.float32)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    c = np.full((m, n), np.nan, np.float16)

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        mm_epilogue[(tl.cdiv(m, bm), tl.cdiv(n, bn)), tl.Options(num_warps=warps)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(bias, tl.f32), out, m, n, k,
            BM=bm, BN=bn, BK=bk)
        c[...] = out.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-3)


@_EMULATED
@pytest.mark.parametrize("arch, warps, bm, bn", [(80, 4, 32, 64), (90, 4, 64, 64), (90, 8, 128, 32)])
@pytest.mark.parametrize("kernel", [mm_epilogue, mm_bf16])
def test_fragment_stores_are_staged_in_shared_memory_and_stored_16_bytes_a_thread(kernel: Any, arch: int, warps: int,
                                                                                 bm: int, bn: int) -> None:
    """A store from accumulator fragments (two adjacent columns a thread: 4-byte stores of f16,
    8-byte of f32) goes through shared memory and out 16 bytes a thread where the pointers allow
    it, as Triton converts its mma layout first: an f16 epilogue (bias, relu) and an f32 one,
    M and N ragged against the block (N a multiple of 16: each vector masked as one), poisoned."""
    f16_out = kernel is mm_epilogue
    width = 8 if f16_out else 4
    spec = _aligned_spec(kernel, 48, warps, 2, BM=bm, BN=bn, BK=32)
    fn = compile_ir(kernel, replace(spec, arch=arch), verify_each=True)
    (store,) = [n for n in walk(fn.body) if n.op is Op.STORE]
    assert store.args[1].op is Op.CONVERT and isinstance(store.attr, MemAttr) and store.attr.vector == width
    assert f"tl::load<{width}>(t, &s" in generate(fn).source

    import ml_dtypes

    in_dtype, np_in = (tl.f16, np.float16) if f16_out else (tl.bf16, ml_dtypes.bfloat16)
    out_dtype, np_out = (tl.f16, np.float16) if f16_out else (tl.f32, np.float32)
    rng = np.random.default_rng(arch + warps + bm + bn + width)
    m, n, k = bm + 40, 2 * bn + 16, 80
    a, b = (rng.standard_normal(s).astype(np_in) for s in ((m, k), (k, n)))
    bias = rng.standard_normal(n).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if f16_out:
        want = np.maximum(want + bias, 0.0)
    c = np.full((m, n), np.nan, np_out)

    def launch() -> None:
        out = tl.to_device(c, out_dtype)
        ops = (tl.to_device(a, in_dtype), tl.to_device(b, in_dtype)) + ((tl.to_device(bias, tl.f32),) if f16_out else ())
        kernel[(tl.cdiv(m, bm), tl.cdiv(n, bn)), tl.Options(num_warps=warps, num_stages=2)](
            *ops, out, m, n, k, BM=bm, BN=bn, BK=32)
        c[...] = out.numpy()

    _on_emulator(launch, arch=arch)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-2, atol=2e-2)


@tl.kernel
def mm_scaled_columns(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], s_ptr: Pointer[tl.f32], c_ptr: Pointer[tl.f32],
                      K: int, N: int, BM: constexpr, BN: constexpr, BK: constexpr, SCRIBBLE: constexpr) -> None:
    """C = sum over K blocks of (A_k @ B_k) * s_k[None, :]: a row loaded every iteration meets the
    dot result (attention backward's ``lse[None, :]``); with SCRIBBLE the kernel stores to the
    row's buffer between the load and its use."""
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :])
        b = tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :])
        s = tl.load(s_ptr + k // BK * N + on)
        if SCRIBBLE:
            tl.store(s_ptr + k // BK * N + on, s, mask=on < 0)
        acc += tl.dot(a, b) * s[None, :]
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc)


@_EMULATED
@pytest.mark.parametrize("arch, warps, bm", [(80, 4, 32), (90, 4, 64), (90, 4, 128)])
@pytest.mark.parametrize("scribble", [False, True])
def test_a_row_broadcast_onto_fragments_is_loaded_there_unless_written_between(arch: int, warps: int, bm: int,
                                                                               scribble: bool) -> None:
    """``s[None, :]`` of a row loaded in the loop, meeting a dot result: loaded again in the
    fragments' layout rather than staged through shared memory behind two barriers, as Triton
    loads it in the slice of its mma layout, each thread each of its columns once (with two row
    tiles a warp, bm 128, a quarter of its registers); a store to memory between the load and
    the use keeps the staging. All match float64 on the emulator."""
    bn, bk, m, n, k = 32, 16, 2 * bm, 64, 48
    spec = _aligned_spec(mm_scaled_columns, 64, warps, 2, dtypes.F16, (), {"s_ptr": dtypes.F32, "c_ptr": dtypes.F32},
                         BM=bm, BN=bn, BK=bk, SCRIBBLE=scribble)
    fn = compile_ir(mm_scaled_columns, replace(spec, arch=arch), verify_each=True)
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    inside = walk(loop.regions[0])
    rows = [n for n in inside if n.op is Op.LOAD and n.ty.shape == (bm, bn)]
    staged = [n for n in inside if n.op is Op.CONVERT and n.ty.shape == (1, bn)]
    assert (len(rows), len(staged)) == ((0, 1) if scribble else (1, 0))
    if not scribble:
        assert isinstance(rows[0].layout, Mma) and (bm != 128 or rows[0].layout.tiles_m == 2)
        assert generate(fn).source.count("!= (unsigned)k) {") == 1  # the registers of a loaded column copy it

    rng = np.random.default_rng(arch + bm + scribble)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    scales = rng.standard_normal((k // bk, n)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = sum(a64[:, j * bk:(j + 1) * bk] @ b64[j * bk:(j + 1) * bk] * scales[j] for j in range(k // bk))
    c = np.full((m, n), np.nan, np.float32)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        mm_scaled_columns[(m // bm, n // bn), tl.Options(num_warps=warps, num_stages=2)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(scales, tl.f32), out, k, n,
            BM=bm, BN=bn, BK=bk, SCRIBBLE=scribble)
        c[...] = out.numpy()

    _on_emulator(launch, arch=arch)
    np.testing.assert_allclose(c, want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("arch", [80, 90])
def test_a_row_broadcast_onto_large_fragments_stays_staged(arch: int) -> None:
    """At 128x256 a thread holds 128 accumulator registers: a reloaded row would hold as many
    beside them, so it is staged in shared memory and read there at each use."""
    from tile_lang.compiler.passes.layouts import RELOADED_REGISTERS

    spec = _aligned_spec(mm_scaled_columns, 64, 8, 3, dtypes.F16, (), {"s_ptr": dtypes.F32, "c_ptr": dtypes.F32},
                         BM=128, BN=256, BK=64, SCRIBBLE=False)
    fn = compile_ir(mm_scaled_columns, replace(spec, arch=arch), verify_each=True)
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    inside = walk(loop.regions[0])
    (dot,) = [n for n in inside if n.op is Op.DOT]
    assert isinstance(dot.layout, Mma) and dot.layout.per_thread > RELOADED_REGISTERS
    assert not [n for n in inside if n.op is Op.LOAD and n.ty.shape == (128, 256)]
    assert [n.ty.shape for n in inside if n.op is Op.CONVERT and n.ty.dtype == dtypes.F32] == [(1, 256)]


@_EMULATED
def test_bf16_accumulating_sum_of_dots_matches_float64() -> None:
    import ml_dtypes

    rng = np.random.default_rng(5)
    m, n, k = 32, 48, 64
    a, b = (rng.standard_normal(s).astype(ml_dtypes.bfloat16) for s in ((m, k), (k, n)))
    want = a.astype(np.float64) @ b.astype(np.float64)
    c = np.full((m, n), np.nan, np.float32)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        mm_bf16[(2, 3), tl.Options(num_warps=4)](tl.to_device(a, tl.bf16), tl.to_device(b, tl.bf16), out, m, n, k,
                                                 BM=16, BN=16, BK=32)
        c[...] = out.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@_EMULATED
@pytest.mark.parametrize("precision, tol", [("tf32", 2e-2), ("tf32x3", 1e-4)])
def test_tf32_dots_match_the_reference_backend(precision: Precision, tol: float) -> None:
    rng = np.random.default_rng(6)
    m, n, k = 48, 40, 72
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n)))
    want = a.astype(np.float64) @ b.astype(np.float64)
    results = []
    for name in ("numpy", NAME):
        registry.register(_BACKEND)
        with registry.backend(name):
            out = tl.to_device(np.full((m, n), np.nan, np.float32), tl.f32)
            matmul_kernel[(2, 2), tl.Options(num_warps=4)](tl.to_device(a, tl.f32), tl.to_device(b, tl.f32), out,
                                                           m, n, k, k, n, n, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16,
                                                           PRECISION=precision)
            results.append(out.numpy())
    reference, emulated = results
    np.testing.assert_allclose(emulated, want, atol=tol * np.sqrt(k))
    np.testing.assert_allclose(emulated, reference, atol=1e-4)  # both truncate operands to tf32


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: the PTX cannot be generated")
def test_ptx_uses_mma_sync_and_ldmatrix(tmp_path: Path) -> None:
    fn = compile_ir(mm_epilogue, static_spec(mm_epilogue, {"BM": 64, "BN": 64, "BK": 32}, 4), verify_each=True)
    src = tmp_path / "k.cu"
    src.write_text(generate(fn).source)
    assert NVCC is not None
    subprocess.run([NVCC, "--ptx", "-arch=sm_80", "-std=c++17", f"-I{INCLUDE_DIR}", str(src), "-o",
                    str(tmp_path / "k.ptx")], check=True, capture_output=True)
    ptx = (tmp_path / "k.ptx").read_text()
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: the PTX cannot be generated")
def test_ptx_of_a_pipelined_loop_uses_cp_async(tmp_path: Path) -> None:
    fn = compile_ir(mm_epilogue, _aligned_spec(mm_epilogue, 4096, 4, 3, BM=64, BN=64, BK=32))
    src = tmp_path / "k.cu"
    src.write_text(generate(fn).source)
    assert NVCC is not None
    subprocess.run([NVCC, "--ptx", "-arch=sm_80", "-std=c++17", f"-I{INCLUDE_DIR}", str(src), "-o",
                    str(tmp_path / "k.ptx")], check=True, capture_output=True)
    ptx = (tmp_path / "k.ptx").read_text()
    assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group 1" in ptx


def _aligned_spec(kernel: Any, ints: int, warps: int, stages: int, pointee: DType = dtypes.F32,
                  ones: tuple[str, ...] = (), pointees: dict[str, DType] | None = None, **constexprs: Any) -> Spec:
    """A launch's specialisation with 16-byte aligned pointers (generic ones to ``pointee``, or
    by name in ``pointees``) and ints divisible by 16 (1 for those named in ``ones``)."""
    static = static_spec(kernel, constexprs, warps, pointee, pointees=pointees)
    args = tuple(pointer_spec(p.ty.dtype.element, 0) if p.ty.dtype.is_pointer and p.ty.dtype.element
                 else int_spec(1 if getattr(p.attr, "name", None) in ones else ints)
                 for p in compile_ir(kernel, static).params)
    return Spec(args, tuple(sorted(constexprs.items())), warps, stages)


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_dot_operands_copy_asynchronously_and_loops_pipeline(stages: int) -> None:
    fn = compile_ir(mm_epilogue, _aligned_spec(mm_epilogue, 48, 4, stages, BM=64, BN=64, BK=32), verify_each=True)
    nodes = walk(fn.body)
    copies = [n for n in nodes if n.op is Op.ASYNC_COPY]
    assert len(copies) == 2 and all(isinstance(c.attr, MemAttr) and c.attr.vector == 8 for c in copies)
    # no operand through registers: the one 2-D load is bias[None, :], loaded onto the fragments
    assert [n.args[0].op for n in nodes if n.op is Op.LOAD and len(n.ty.shape) == 2] == [Op.BROADCAST]
    (loop,) = [n for n in nodes if n.op is Op.FOR]
    assert isinstance(loop.attr, LoopAttr) and loop.attr.stages == stages


@_EMULATED
@pytest.mark.parametrize("stages, k", [(2, 48), (3, 16), (3, 48), (4, 80)])
def test_pipelined_matmul_matches_float64_for_any_trip_count(stages: int, k: int) -> None:
    """Trip counts below, at and above the pipeline depth (the prologue's guards)."""
    rng = np.random.default_rng(stages * 100 + k)
    m, n = 32, 48
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    bias = rng.standard_normal(n).astype(np.float32)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    c = np.full((m, n), np.nan, np.float16)

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        mm_epilogue[(2, 3), tl.Options(num_warps=4, num_stages=stages)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(bias, tl.f32), out, m, n, k,
            BM=16, BN=16, BK=16)
        c[...] = out.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-3)


@_EMULATED
@pytest.mark.parametrize("causal, bm", [(False, 32), (True, 32), (False, 64), (True, 64)])
def test_flash_attention_with_transposed_keys_matches_float64(causal: bool, bm: int) -> None:
    """``tl.dot(q, k.T)`` reads keys stored column by column (copied along the head dimension),
    ``q`` is converted once before the loop, and the online softmax runs on the fragments: with
    a warp per 16 rows (bm=64, 4 warps) its row maxima and sums are shuffles, with no trip
    through shared memory but the operand ``p``."""
    from benchmarks.dot_kernels import attention

    fn = compile_ir(attention, _aligned_spec(attention, 64, 4, 3, BLOCK_M=bm, BLOCK_N=16, HEAD=32, CAUSAL=causal))
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    copies = [n for n in walk(loop.regions[0]) if n.op is Op.ASYNC_COPY]
    assert [isinstance(c.layout, Shared) and c.layout.transposed for c in copies] == [True, False]
    assert not [n for n in loop.regions[0].body if n.op is Op.CONVERT and n.args[0].op is Op.LOAD]  # q hoisted
    converts = [n for n in loop.regions[0].body if n.op is Op.CONVERT]
    if bm == 64:
        assert [c.ty.dtype for c in converts] == [dtypes.F16]  # only p, the second dot's operand
        assert [n.layout for n in loop.regions[0].body if n.op is Op.REDUCE] == [MmaRows(4, 1, 1)] * 2
    rng = np.random.default_rng(7)
    z, s, h = 2, 64, 32
    q, k, v = (rng.standard_normal((z, s, h)).astype(np.float16) for _ in range(3))
    scores = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * 0.125
    if causal:
        scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    out = np.full((z, s, h), np.nan, np.float16)

    def launch() -> None:
        o = tl.to_device(out, tl.f16)
        attention[(s // bm, z), tl.Options(num_warps=4)](tl.to_device(q, tl.f16), tl.to_device(k, tl.f16),
                                                         tl.to_device(v, tl.f16), o, s, 0.125,
                                                         BLOCK_M=bm, BLOCK_N=16, HEAD=h, CAUSAL=causal)
        out[...] = o.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(out.astype(np.float64), want, atol=2e-3)


@tl.kernel
def row_stats(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], max_ptr: Pointer[tl.f32], sum_ptr: Pointer[tl.f32],
              BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """Row maxima and sums of a product: tl.max(x, 1) of a dot stores one value per row, each
    once (four lanes and any copies of a warp hold it)."""
    om, on, ok = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    x = tl.dot(tl.load(a_ptr + om[:, None] * BK + ok[None, :]), tl.load(b_ptr + ok[:, None] * BN + on[None, :]))
    tl.store(max_ptr + om, tl.max(x, 1))
    tl.store(sum_ptr + om, tl.sum(x - tl.max(x, 1)[:, None], 1))


@_EMULATED
@pytest.mark.parametrize("warps", [2, 4, 8])
def test_row_reductions_of_fragments_store_each_row_once(warps: int) -> None:
    rng = np.random.default_rng(warps)
    a, b = rng.standard_normal((32, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    x = a.astype(np.float64) @ b.astype(np.float64)
    assert MmaRows(2, 1, 1) in [n.layout for n in walk(compile_ir(row_stats, static_spec(
        row_stats, {"BM": 32, "BN": 16, "BK": 16}, 2)).body)]
    outs = [np.full(32, np.nan, np.float32) for _ in range(2)]

    def launch() -> None:
        m, s = (tl.to_device(o, tl.f32) for o in outs)
        row_stats[(1,), tl.Options(num_warps=warps)](tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), m, s,
                                                      BM=32, BN=16, BK=16)
        outs[0][...], outs[1][...] = m.numpy(), s.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(outs[0], x.max(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1], (x - x.max(1, keepdims=True)).sum(1), rtol=1e-4, atol=1e-4)


def test_hopper_dots_use_wgmma_on_swizzled_operands(tmp_path: Path) -> None:
    """On sm_90 a dot with K = 64 and 16 rows per warp runs as wgmma: both operands are copied
    into 128-byte swizzled shared memory, the accumulator is one m64 row per warpgroup, and the
    PTX for sm_90a holds wgmma.mma_async with its fences (whether it computes the right numbers
    needs the GPU: ``benchmarks/dot_bench.py`` and the differential tests check that)."""
    from benchmarks.dot_kernels import matmul

    spec = _aligned_spec(matmul, 4096, 8, 3, dtypes.F16, ("stride_bn",), BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                         GROUP_M=8)
    fn = compile_ir(matmul, replace(spec, arch=90), verify_each=True)
    nodes = walk(fn.body)
    assert [n.layout for n in nodes if n.op is Op.DOT] == [Mma(8, 1, 1, 32)]
    assert [n.layout for n in nodes if n.op is Op.ASYNC_COPY] == [Shared(swizzle=128)] * 2
    assert [n.layout for n in walk(compile_ir(matmul, spec).body) if n.op is Op.DOT] == [Mma(2, 4, 4, 8)]  # sm_80
    if NVCC is None:
        pytest.skip("nvcc is not installed: the PTX cannot be generated")
    src = tmp_path / "k.cu"
    src.write_text(generate(fn).source)
    subprocess.run([NVCC, "--ptx", "-gencode=arch=compute_90a,code=compute_90a", "-std=c++17", f"-I{INCLUDE_DIR}",
                    str(src), "-o", str(tmp_path / "k.ptx")], check=True, capture_output=True)
    ptx = (tmp_path / "k.ptx").read_text()
    for instruction in ("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "wgmma.fence.sync.aligned",
                        "wgmma.commit_group.sync.aligned", "cp.async.cg.shared"):
        assert instruction in ptx, instruction
    # operands written by cp.async need no proxy fence before wgmma (stores from registers do)
    assert "fence.proxy.async" not in ptx


@pytest.mark.parametrize("warps, bn, linear_b", [(8, 256, True), (4, 64, True), (4, 256, False)])
def test_pipelined_copies_write_through_one_shared_register_where_the_swizzle_repeats(warps: int, bn: int,
                                                                                      linear_b: bool) -> None:
    """A thread's runs of a swizzled copy sit a constant apart when they are a multiple of 8 rows
    apart (the 128-byte swizzle's period): one register a copy and a constant a run; 4 warps
    copying 256-wide rows of B step 4 rows a run, so B keeps an offset a run (and the emulator
    test above runs that case)."""
    from benchmarks.dot_kernels import matmul

    spec = _aligned_spec(matmul, 64, warps, 2, dtypes.F16, ("stride_bn",), BLOCK_M=64 * (warps // 4), BLOCK_N=bn,
                         BLOCK_K=64, GROUP_M=2)
    source = generate(compile_ir(matmul, replace(spec, arch=90))).source
    one_register = re.findall(r"const unsigned (at\d+) = ", source)
    arrays = re.findall(r"unsigned (at\d+)\[\d+\];", source)
    assert (len(one_register), len(arrays)) == ((2, 0) if linear_b else (1, 1))
    for name in one_register:
        assert re.search(rf"\+ {name}\)\[k / 8 \* \d+\]", source), name


_I8_TILES = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, GROUP_M=8)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: ptxas cannot report")
@pytest.mark.parametrize("name, arch, warps, pointee, one, constexprs", [
    ("matmul", 90, 8, dtypes.F16, "stride_bn", dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)),
    ("matmul", 90, 8, dtypes.F8E4M3, "stride_bk", dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, GROUP_M=8)),
    ("attention", 90, 4, dtypes.F16, "", dict(BLOCK_M=128, BLOCK_N=64, HEAD=64, CAUSAL=False)),
    ("attention", 90, 8, dtypes.F16, "", dict(BLOCK_M=128, BLOCK_N=32, HEAD=128, CAUSAL=True)),
    ("matmul_i8", 90, 8, dtypes.I8, "stride_bn", _I8_TILES), ("matmul_i8", 90, 8, dtypes.I8, "stride_bk", _I8_TILES),
    ("matmul_i8", 80, 8, dtypes.I8, "stride_bn", _I8_TILES), ("matmul_i8", 80, 8, dtypes.I8, "stride_bk", _I8_TILES)])
def test_ptxas_keeps_the_benchmark_wgmma_asynchronous(tmp_path: Path, name: str, arch: int, warps: int,
                                                       pointee: DType, one: str, constexprs: dict[str, Any]) -> None:
    """ptxas serialises wgmma (each waiting for the one before: a sixth of the matmul's speed
    lost) or injects its own fences and waits when anything it cannot prove safe touches the
    accumulators or A's registers around an instruction in flight; it says so (C75xx), and
    the benchmark kernels must not make it say so, nor spill (the i8 matmul's mma.sync code
    neither, for sm_80 and sm_90a: its 128x256 i32 accumulator takes 128 registers a thread);
    attention d=64 keeps to the registers of three blocks an SM."""
    import benchmarks.dot_kernels as kernels

    assert NVCC is not None
    kernel = getattr(kernels, name)
    spec = _aligned_spec(kernel, 4096, warps, 3, pointee, (one,), {"c_ptr": dtypes.F16}, **constexprs)
    src = tmp_path / "k.cu"
    src.write_text(generate(compile_ir(kernel, replace(spec, arch=arch))).source)
    target = f"{arch}a" if arch == 90 else str(arch)
    report = subprocess.run([NVCC, "-cubin", f"-gencode=arch=compute_{target},code=sm_{target}", "-std=c++17",
                             f"-I{INCLUDE_DIR}", "-Xptxas", "-v", str(src), "-o", str(tmp_path / "k.cubin")],
                            check=True, capture_output=True, text=True).stderr
    assert "(C75" not in report, report
    assert " 0 bytes spill stores" in report, report
    if name == "attention" and warps == 4:  # three 4-warp blocks an SM: 65,536 / 384, in steps of 8
        used = re.search(r"Used (\d+) registers", report)
        assert used is not None and int(used[1]) <= 168, report  # its staged output store once took 206


@_EMULATED
@pytest.mark.parametrize("warps, bm, bn, bk, stages", [(4, 64, 64, 64, 3), (8, 128, 128, 64, 2), (4, 64, 256, 64, 1),
                                                    (4, 128, 64, 128, 2), (4, 64, 256, 64, 2)])
def test_hopper_wgmma_matmul_on_the_emulator_matches_float64(warps: int, bm: int, bn: int, bk: int, stages: int) -> None:
    """The sm_90a code (wgmma from swizzled shared memory through descriptors, accumulating in
    place across a pipelined loop) on the emulator, whose wgmma follows the PTX definitions of
    the descriptors, the swizzle and the fragments: ragged M, N and K, any trip count, two m64
    tiles a warpgroup, K in two 64-element panels."""
    from benchmarks.dot_kernels import matmul

    rng = np.random.default_rng(warps * 1000 + bn + stages + bk)
    m, n, k = bm + 24, bn + 48, 3 * bk + 32  # strides divisible by 16, as the spec
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    c = np.full((m, n), np.nan, np.float16)
    spec = _aligned_spec(matmul, 64, warps, stages, dtypes.F16, ("stride_bn",), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                         GROUP_M=2)
    assert "wgmma" in generate(compile_ir(matmul, replace(spec, arch=90))).source

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        grid = (tl.cdiv(m, bm) * tl.cdiv(n, bn),)
        matmul[grid, tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), out, m, n, k, k, n, 1, n,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=90)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=2e-2, atol=2e-2)


@_EMULATED
@pytest.mark.parametrize("descriptors", [False, True])
@pytest.mark.parametrize("head, bn, warps, causal", [(64, 64, 4, False), (64, 64, 4, True), (128, 32, 8, False),
                                                     (128, 32, 8, True)])
def test_hopper_flash_attention_on_the_emulator_matches_float64(head: int, bn: int, warps: int, causal: bool,
                                                                descriptors: bool) -> None:
    """The benchmark's attention for sm_90a, both dots on wgmma: with 4 warps two m64 tiles per
    warpgroup (interleaved fragments); keys K-major from a transposed swizzled copy (two
    panels of K for d=128), ``q`` copied once, ``p`` passed from its registers (K = 32 or 64);
    the online softmax on the fragments. Written with tensor descriptors (Triton's tutorial:
    ``k_desc.load(...).T``), k and v land with bulk tensor copies, k's box as B's K-major panels
    (q, copied once before the loop, stays on cp.async)."""
    from benchmarks.dot_kernels import attention, attention_tma

    kernel = attention_tma if descriptors else attention
    heads, seq, bm = 2, 256, 128
    spec = _aligned_spec(kernel, 256, warps, 3, dtypes.F16, BLOCK_M=bm, BLOCK_N=bn, HEAD=head, CAUSAL=causal)
    fn = compile_ir(kernel, replace(spec, arch=90))
    tiles = bm // (16 * warps)
    nodes = walk(fn.body)
    dots = [n for n in nodes if n.op is Op.DOT]
    assert [d.layout for d in dots] == [Mma(warps, 1, tiles, n // 8, interleaved=tiles > 1) for n in (bn, head)]
    assert isinstance(dots[1].args[0].layout, Mma)  # p stays in its registers
    bulk = [n.layout for n in nodes if n.op is Op.ASYNC_COPY and box_of(n) is not None]
    assert bulk == ([Shared(swizzle=128, transposed=True), Shared(swizzle=128)] if descriptors else [])
    rng = np.random.default_rng(7 + head + causal)
    q, k, v = (rng.standard_normal((heads, seq, head)).astype(np.float16) for _ in range(3))
    o = np.full(q.shape, np.nan, np.float16)
    scale = head ** -0.5

    def launch() -> None:
        out = tl.to_device(o, tl.f16)
        kernel[(seq // bm, heads), tl.Options(num_warps=warps, num_stages=3)](
            tl.to_device(q, tl.f16), tl.to_device(k, tl.f16), tl.to_device(v, tl.f16), out, seq, scale,
            BLOCK_M=bm, BLOCK_N=bn, HEAD=head, CAUSAL=causal)
        o[...] = out.numpy()

    _BACKEND.loaded.clear()
    _on_emulator(launch, arch=90)
    assert ("tl::tma_load_2d(" in _BACKEND.last_source) == descriptors
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("hqk,hkd->hqd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(o.astype(np.float64), want, rtol=2e-2, atol=2e-2)


@tl.kernel
def dot_then_add(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], n: int,
                 BLOCK: constexpr) -> None:
    """``acc * s + tl.dot(a, b)`` in a loop (foldable), and a dot outside the loop added to
    inside it (not foldable: the dot would run every iteration)."""
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    a = tl.load(a_ptr + tile)
    outside = tl.dot(a, tl.load(b_ptr + tile))
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    for i in range(n):
        acc = acc * 0.5 + tl.dot(a, tl.load(b_ptr + (i + 1) * BLOCK * BLOCK + tile))
        acc = acc + outside
    tl.store(c_ptr + tile, acc)


def test_an_added_dot_accumulates_onto_the_addend() -> None:
    """``x + tl.dot(a, b)`` is one dot accumulating onto ``x`` (Triton's fold): the loop's dot
    takes ``acc * 0.5`` as its accumulator; the dot before the loop stays there, unfolded."""
    from tile_lang.compiler.passes.accumulate import fold_accumulate

    spec = _aligned_spec(dot_then_add, 3, 4, 1, dtypes.F16, BLOCK=16)
    fn = fold_accumulate(build(dot_then_add, spec))
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    inner = [n for n in loop.regions[0].body if n.op is Op.DOT]
    assert len(inner) == 1 and inner[0].args[2].op is Op.BINARY  # acc * 0.5
    outer = [n for n in fn.body.body if n.op is Op.DOT]
    assert len(outer) == 1 and outer[0].args[2].op is not Op.BINARY


@_EMULATED
def test_folded_dots_match_float64() -> None:
    rng = np.random.default_rng(5)
    n, block = 3, 16
    a = rng.standard_normal((block, block)).astype(np.float16)
    b = rng.standard_normal((n + 1, block, block)).astype(np.float16)
    c = np.full((block, block), np.nan, np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.zeros((block, block))
    for i in range(n):
        want = want * 0.5 + a64 @ b64[i + 1] + a64 @ b64[0]

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        dot_then_add[(1,)](tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), out, n, BLOCK=block)
        c[...] = out.numpy()

    _on_emulator(launch)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


@_EMULATED
@pytest.mark.parametrize("fp8, warps, bn", [(tl.f8e4m3, 4, 64), (tl.f8e5m2, 8, 32)])
def test_hopper_fp8_matmul_on_the_emulator_matches_float64(fp8: Any, warps: int, bn: int) -> None:
    """fp8 dots run on wgmma (m64nNk32) only, both operands K-major in 128-byte swizzled panels of
    128 elements: B stored as its transpose (stride_bk = 1), copied with cp.async along K. The
    operands are rounded to fp8 on the host, so the float64 product of what was stored is exact
    up to the f32 accumulation and the f16 output."""
    from benchmarks.dot_kernels import matmul

    rng = np.random.default_rng(warps + bn)
    bm, m, n, k = 16 * warps, 16 * warps + 24, bn + 48, 2 * 128 + 64
    dtype = dtypes.dtype_of(fp8)
    a = rng.standard_normal((m, k)).astype(dtype.numpy)
    bt = rng.standard_normal((n, k)).astype(dtype.numpy)  # B's transpose, row-major: B is K-major
    c = np.full((m, n), np.nan, np.float16)
    spec = _aligned_spec(matmul, 64, warps, 3, dtype, ("stride_bk",), {"c_ptr": dtypes.F16},
                         BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=128, GROUP_M=2)
    fn = compile_ir(matmul, replace(spec, arch=90), verify_each=True)
    (dot,) = [node for node in walk(fn.body) if node.op is Op.DOT]
    assert isinstance(dot.layout, Mma) and dot.args[1].layout == Shared(swizzle=128, transposed=True)
    assert [n.op for n in walk(fn.body) if n.op is Op.ASYNC_COPY] == [Op.ASYNC_COPY] * 2
    assert f"k32.f32.{dtype.name[2:]}.{dtype.name[2:]}" in generate(fn).source

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        grid = (tl.cdiv(m, bm) * tl.cdiv(n, bn),)
        matmul[grid, tl.Options(num_warps=warps, num_stages=3)](
            tl.to_device(a, fp8), tl.to_device(bt, fp8), out, m, n, k, k, 1, k, n,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=128, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=90)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-2, atol=5e-2)


@_EMULATED
def test_k_major_copies_hold_their_wrapped_addresses_and_match_float64() -> None:
    """Tutorial 03's fp8 path (``mm_grouped``, B passed as ``b.T``: K-major, copied column by
    column into wgmma's K-major panels): both operands' ``% M`` / ``% N`` addresses are held in
    registers from before the loop, the K-major one walked in its copy's column order (recomputed
    each iteration, the 64x256x128 config ran at 237 TFLOP/s against Triton's 1174 on the H200)."""
    from benchmarks.form_kernels import mm_grouped

    rng = np.random.default_rng(3)
    bm, bn, bk, m, n, k = 64, 64, 128, 104, 88, 3 * 128 + 64
    fp8 = dtypes.F8E5M2
    a = rng.standard_normal((m, k)).astype(fp8.numpy)
    bt = rng.standard_normal((n, k)).astype(fp8.numpy)  # B's transpose row-major: B is K-major
    c = np.full((m, n), np.nan, np.float16)
    spec = _aligned_spec(mm_grouped, 16, 4, 3, fp8, ("stride_ak", "stride_bk", "stride_cn"),
                         {"c_ptr": dtypes.F16}, BM=bm, BN=bn, BK=bk, GROUP_M=2)
    fn = compile_ir(mm_grouped, replace(spec, arch=90), verify_each=True)
    copies = [node for node in walk(fn.body) if node.op is Op.ASYNC_COPY]
    assert [c.layout.transposed for c in copies if isinstance(c.layout, Shared)] == [False, True]
    assert all(isinstance(c.attr, MemAttr) and c.attr.hold for c in copies)
    loop = next(line for line in generate(fn).source.splitlines() if "cp_async<16>" in line and "slot" in line)
    assert "tl::mod" not in loop  # no modulo in the loop's copies

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        grid = (tl.cdiv(m, bm) * tl.cdiv(n, bn),)
        mm_grouped[grid, tl.Options(num_warps=4, num_stages=3)](
            tl.to_device(a, tl.f8e5m2), tl.to_device(bt, tl.f8e5m2), out, m, n, k, k, 1, 1, k, n, 1,
            BM=bm, BN=bn, BK=bk, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=90)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-2, atol=5e-2)


def _small_k_matmul(dtype: DType, bk: int, transposed: bool, warps: int, bm: int, bn: int = 64) -> None:
    """``benchmarks.dot_kernels.matmul`` at ``BLOCK_K = bk`` on the sm_90a emulator against
    float64: ragged M and N, three K blocks and a ragged fourth, B K-major or N-major."""
    from benchmarks.dot_kernels import matmul

    rng = np.random.default_rng(bk + transposed + warps + bn)
    m, n, k = bm + 16, bn + 32, 3 * bk + bk // 2
    a = rng.standard_normal((m, k)).astype(dtype.numpy)
    b = rng.standard_normal((k, n)).astype(dtype.numpy)
    held = np.ascontiguousarray(b.T) if transposed else b  # K-major: B's transpose row-major
    strides = (1, k) if transposed else (n, 1)
    c = np.full((m, n), np.nan, np.float16)
    fp8: Any = dtypes.marker_of(dtype)

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        grid = (tl.cdiv(m, bm) * tl.cdiv(n, bn),)
        matmul[grid, tl.Options(num_warps=warps, num_stages=3)](
            tl.to_device(a, fp8), tl.to_device(held, fp8), out, m, n, k, k, *strides, n,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=90)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-2, atol=5e-2)


def _small_k_source(dtype: DType, bk: int, transposed: bool, warps: int, bm: int, arch: int = 90, bn: int = 64) -> str:
    from benchmarks.dot_kernels import matmul

    spec = _aligned_spec(matmul, 16, warps, 3, dtype, ("stride_bk",) if transposed else ("stride_bn",),
                         {"c_ptr": dtypes.F16}, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2)
    return generate(compile_ir(matmul, replace(spec, arch=arch), verify_each=True)).source


@_EMULATED
@pytest.mark.parametrize("dtype, bk, transposed, swizzle", [
    (dtypes.F16, 32, False, 64), (dtypes.F16, 32, True, 64), (dtypes.BF16, 16, True, 32),
    (dtypes.F8E5M2, 32, True, 32), (dtypes.F8E4M3, 64, True, 64), (dtypes.F8E5M2, 64, False, 64)])
def test_dots_under_a_128_byte_panel_run_on_wgmma_and_match_float64(dtype: DType, bk: int, transposed: bool,
                                                                    swizzle: int) -> None:
    """K rows under 128 bytes (``BLOCK_K`` 32 of f16, 32 or 64 of fp8: tutorial 03's configs) run
    on wgmma from 64- or 32-byte swizzled panels, as Triton's do (they ran on mma.sync, 0.3-0.5x
    of Triton on the H200); an N-major B, where its N allows, keeps 128-byte panels."""
    source = _small_k_source(dtype, bk, transposed, 4, 64)
    assert "wgmma.mma_async" in source and "tl::mma_block" not in source
    assert f"u, {8 * swizzle}u, {swizzle}u)" in source  # the descriptors' swizzle
    _small_k_matmul(dtype, bk, transposed, 4, 64)


@_EMULATED
@pytest.mark.parametrize("dtype, bn, swizzle", [(dtypes.F16, 32, 64), (dtypes.BF16, 16, 32), (dtypes.BF16, 32, 64)])
def test_n_major_b_under_64_columns_reads_narrower_panels_and_matches_float64(dtype: DType, bn: int,
                                                                           swizzle: int) -> None:
    """An N-major B whose rows of N are under 128 bytes is read by wgmma from a 64- or 32-byte
    MN-major panel; it went through registers into a K-major layout (tutorial 03's f16
    128x32x64: 0.42x of Triton)."""
    source = _small_k_source(dtype, 64, False, 4, 64, bn=bn)
    assert "wgmma.mma_async" in source and f"u, {8 * swizzle}u, {swizzle}u)" in source
    _small_k_matmul(dtype, 64, False, 4, 64, bn=bn)


@_EMULATED
@pytest.mark.parametrize("fp8, transposed", [(dtypes.F8E5M2, True), (dtypes.F8E4M3, False)])
def test_fp8_dots_wgmma_cannot_take_run_on_mma_sync_and_match_float64(fp8: DType, transposed: bool) -> None:
    """An fp8 dot wgmma cannot take (2 warps: no warpgroup) runs on mma.sync m16n8k32 (sm_89 on:
    int8's fragments, f32 sums), B K-major or N-major, not on CUDA cores (about 70x slower on the
    H200); sm_80 has no fp8 tensor cores."""
    source = _small_k_source(fp8, 64, transposed, 2, 32)
    assert f"tl::mma_block<{ctype(fp8)}" in source and "wgmma.mma_async" not in source
    assert "tl::mma_block" not in _small_k_source(fp8, 64, transposed, 2, 32, arch=80)  # sm_80: CUDA cores
    _small_k_matmul(fp8, 64, transposed, 2, 32)


@pytest.mark.skipif(NVCC is None, reason="needs nvcc (the CUDA toolkit) to compile for sm_90a")
def test_ptxas_takes_the_fp8_mma_sync(tmp_path: Path) -> None:
    """ptxas (sm_90a) accepts the fp8 m16n8k32 mma.sync of a dot wgmma cannot take, unspilled."""
    from benchmarks.dot_kernels import matmul

    spec = _aligned_spec(matmul, 16, 2, 3, dtypes.F8E5M2, ("stride_bk",), {"c_ptr": dtypes.F16},
                         BLOCK_M=32, BLOCK_N=64, BLOCK_K=64, GROUP_M=2)
    source = generate(compile_ir(matmul, replace(spec, arch=90))).source
    sm90a_report(source, tmp_path)
    (tmp_path / "k.cu").write_text(source)
    assert NVCC is not None
    subprocess.run([NVCC, "--ptx", "-arch=sm_90a", "-std=c++17", f"-I{INCLUDE_DIR}", str(tmp_path / "k.cu"), "-o",
                    str(tmp_path / "k.ptx")], check=True, capture_output=True)
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32" in (tmp_path / "k.ptx").read_text()


@pytest.mark.parametrize("stages, fits", [(3, True), (5, False)])
def test_blocks_needing_more_shared_memory_than_the_device_gives_are_a_launch_error(stages: int, fits: bool) -> None:
    """The benchmark matmul's 128x256x64 f16 tiles take 48 KB of shared memory a stage: 3 stages
    fit the 227 KB an H200 gives a block; 5 do not, and the launch says so, naming the kernel,
    its options and what to change, before any CUDA call (not a CUDA error code at launch)."""
    from benchmarks.dot_kernels import matmul
    from tile_lang.kernel import Launch
    from tile_lang_cupy.launch import check_shared_memory

    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
    spec = _aligned_spec(matmul, 4096, 8, stages, dtypes.F16, ("stride_bn",), None, **consts)
    needed = generate(compile_ir(matmul, replace(spec, arch=90))).smem_bytes
    launch = Launch(matmul, (1, 1, 1), (), consts, tl.Options(num_warps=8, num_stages=stages))
    h200 = 232448  # cudaDevAttrMaxSharedMemoryPerBlockOptin on an H200
    if fits:
        check_shared_memory(launch, needed, h200)
        return
    with pytest.raises(tl.LaunchError, match=rf"kernel matmul: a block needs {needed} bytes of shared memory with "
                                             rf"num_warps=8, num_stages=5, BLOCK_K=64.*at most {h200}: lower num_stages"):
        check_shared_memory(launch, needed, h200)


@_EMULATED
@pytest.mark.parametrize("seed", range(12))  # 80 seeds passed once, 2026-12-01
def test_random_tensor_core_matmuls_on_the_emulator(seed: int) -> None:
    """The benchmark matmul in random configurations on the emulator of the generated code:
    sm_80 (mma.sync) or sm_90a (wgmma), f16, bf16 or fp8, B row-major or K-major, one to three
    m64 tiles a warpgroup, 1-3 stages, ragged M, N and K; against float64 of what was stored."""
    from benchmarks.dot_kernels import matmul

    rng = np.random.default_rng(seed)
    arch = int(rng.choice([80, 90]))
    fp8 = arch == 90 and rng.random() < 0.3
    dtype: Any = tl.f8e4m3 if fp8 else (tl.f16, tl.bf16)[int(rng.integers(2))]  # picked at run time
    host = dtypes.dtype_of(dtype).numpy
    warps = int(rng.choice([4, 8]))
    bm = 16 * warps * int(rng.integers(1, 3)) if arch == 90 else int(rng.choice([32, 64]))
    bn = int(rng.choice([64, 128])) if not fp8 else int(rng.choice([32, 64]))
    bk = 128 if fp8 else int(rng.choice([64, 128]) if arch == 90 else rng.choice([16, 32, 64]))
    k_major = fp8 or rng.random() < 0.3
    stages = int(rng.integers(1, 4))
    m, n, k = bm + 16 * int(rng.integers(1, 4)), bn + 16 * int(rng.integers(1, 4)), bk * int(rng.integers(1, 4)) + 16
    a = rng.standard_normal((m, k)).astype(host)
    b = rng.standard_normal((n, k) if k_major else (k, n)).astype(host)
    c = np.full((m, n), np.nan, np.float16)
    strides = (1, k) if k_major else (n, 1)

    def launch() -> None:
        out = tl.to_device(c, tl.f16)
        matmul[(tl.cdiv(m, bm) * tl.cdiv(n, bn),), tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, dtype), tl.to_device(b, dtype), out, m, n, k, k, *strides, n,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=arch)
    b64 = b.astype(np.float64)
    want = a.astype(np.float64) @ (b64.T if k_major else b64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-2, atol=6e-2,
                               err_msg=f"arch {arch}, {dtype}, {warps} warps, {bm}x{bn}x{bk}, k-major {k_major}")


@tl.kernel
def mm_i8(a_ptr: Pointer[tl.i8], b_ptr: Pointer[tl.i8], bias_ptr: Pointer[tl.i32], c_ptr: Pointer[tl.i32],
          M: int, N: int, K: int, stride_bk: int, stride_bn: int,
          BM: constexpr, BN: constexpr, BK: constexpr, TRANS: constexpr, ADD: constexpr) -> None:
    """An i8 matmul masked on every side, plus an i32 bias on the fragments: B read through its
    strides (row-major or K-major), or with ``TRANS`` loaded as its [BN, BK] transpose and
    turned back with ``tl.trans``; with ``ADD`` the product is added to the accumulator
    (``acc += tl.dot(a, b)``) instead of accumulating onto it."""
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.i32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :], mask=(om[:, None] < M) & ((k + ok)[None, :] < K),
                    other=0)
        if TRANS:
            bt = tl.load(b_ptr + on[:, None] * stride_bn + (k + ok)[None, :] * stride_bk,
                         mask=(on[:, None] < N) & ((k + ok)[None, :] < K), other=0)
            b = tl.trans(bt)
        else:
            b = tl.load(b_ptr + (k + ok)[:, None] * stride_bk + on[None, :] * stride_bn,
                        mask=((k + ok)[:, None] < K) & (on[None, :] < N), other=0)
        if ADD:
            acc += tl.dot(a, b, out_dtype=tl.i32)
        else:
            acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + on, mask=on < N, other=0)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc + bias[None, :], mask=(om[:, None] < M) & (on[None, :] < N))


_POISON = np.iinfo(np.int32).min  # no product of int8 matrices this small reaches it


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("one", ["stride_bn", "stride_bk"])
def test_int8_dots_run_on_mma_sync(arch: int, one: str) -> None:
    """i8 x i8 -> i32 dots run on tensor cores (mma.sync m16n8k32, on sm_90 too: wgmma is not
    used for them), both operands copied asynchronously: A row-major, B as it lies in memory
    (row-major, read byte by byte into fragments; or K-major, through ldmatrix)."""
    from benchmarks.dot_kernels import matmul_i8
    from tile_lang.compiler.printer import dot_unit

    spec = _aligned_spec(matmul_i8, 4096, 8, 3, dtypes.I8, (one,), BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, GROUP_M=8)
    fn = compile_ir(matmul_i8, replace(spec, arch=arch), verify_each=True)
    (dot,) = [n for n in walk(fn.body) if n.op is Op.DOT]
    assert dot.layout == Mma(2, 4, 4, 8) and dot.ty.dtype == dtypes.I32 and dot_unit(dot) == "tensor cores: mma.sync"
    k_major = one == "stride_bk"
    assert [n.layout for n in walk(fn.body) if n.op is Op.ASYNC_COPY] == [
        Shared(16), Shared(16, transposed=True) if k_major else Shared(16)]
    source = generate(fn).source
    assert f"tl::mma_block<signed char, 2, 4, 4, 8, 128, 144, {144 if k_major else 272}, {str(k_major).lower()}>" in source
    assert "wgmma" not in source


def test_an_added_int8_dot_accumulates_onto_the_addend() -> None:
    """``acc += tl.dot(a, b)`` on i8 folds as on floats (integer sums are exact in any order):
    one dot accumulating onto the loop's carried i32 fragments."""
    fn = compile_ir(mm_i8, static_spec(mm_i8, dict(BM=64, BN=64, BK=32, TRANS=False, ADD=True), 4))
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    (dot,) = [n for n in loop.regions[0].body if n.op is Op.DOT]
    assert dot.args[2] is loop.regions[0].params[1] and isinstance(dot.layout, Mma)
    assert not [n for n in loop.regions[0].body if n.op is Op.BINARY and n.ty.shape == (64, 64)]


@_EMULATED
@pytest.mark.parametrize("seed", range(8))  # 60 seeds passed once, 2026-12-01
def test_random_int8_matmuls_on_the_emulator_are_exact(seed: int) -> None:
    """i8 matmuls on the emulator (whose mma m16n8k32 follows the PTX fragment layouts) in random
    configurations: sm_80 or sm_90a code, 1-8 warps, 1-3 stages, B row-major, K-major or
    transposed with ``tl.trans``, folded or added accumulation, ragged masked edges; operands
    over the whole int8 range, against NumPy's exact integer product."""
    rng = np.random.default_rng(seed)
    arch = int(rng.choice([80, 90]))
    warps = int(rng.choice([1, 2, 4, 8]))
    bm, bn, bk = int(rng.choice([16, 32, 64])), int(rng.choice([8, 16, 32, 64])), int(rng.choice([32, 64, 128]))
    stages = int(rng.integers(1, 4))
    trans, k_major, add = bool(rng.random() < 0.3), bool(rng.random() < 0.5), bool(rng.random() < 0.5)
    m, n, k = bm + int(rng.integers(1, 40)), bn + int(rng.integers(1, 40)), bk * int(rng.integers(1, 3)) + 16
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (n, k) if k_major else (k, n), dtype=np.int8)
    bias = rng.integers(-2**20, 2**20, n, dtype=np.int32)
    strides = (1, k) if k_major else (n, 1)  # stride_bk, stride_bn
    b_kn = b.T if k_major else b
    want = a.astype(np.int64) @ b_kn.astype(np.int64) + bias
    c = np.full((m, n), _POISON, np.int32)
    what = (f"arch {arch}, {warps} warps, {bm}x{bn}x{bk}, {stages} stages, k-major {k_major}, trans {trans}, "
            f"add {add}")
    consts = dict(BM=bm, BN=bn, BK=bk, TRANS=trans, ADD=add)
    spec = static_spec(mm_i8, consts, warps)
    dots = [n for n in walk(compile_ir(mm_i8, replace(spec, arch=arch)).body) if n.op is Op.DOT]
    assert [isinstance(d.layout, Mma) for d in dots] == [True], what

    def launch() -> None:
        out = tl.to_device(c, tl.i32)
        mm_i8[(tl.cdiv(m, bm), tl.cdiv(n, bn)), tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, tl.i8), tl.to_device(b, tl.i8), tl.to_device(bias, tl.i32), out, m, n, k, *strides,
            **consts)
        c[...] = out.numpy()

    _on_emulator(launch, arch=arch)
    np.testing.assert_array_equal(c, want, err_msg=what)


@_EMULATED
@pytest.mark.parametrize("arch, warps, bm, bn, bk, stages, k_major", [
    (80, 4, 64, 64, 64, 3, False), (80, 8, 64, 128, 128, 2, True), (90, 8, 128, 64, 32, 3, False),
    (90, 4, 32, 32, 128, 1, True)])
def test_benchmark_int8_matmul_on_the_emulator_is_exact(arch: int, warps: int, bm: int, bn: int, bk: int,
                                                         stages: int, k_major: bool) -> None:
    """The benchmark's i8 matmul (B row-major or K-major, pipelined copies with 16-byte
    alignment as on the GPU, ragged K) against NumPy's exact product."""
    from benchmarks.dot_kernels import matmul_i8

    rng = np.random.default_rng(bm + bn + bk + stages)
    m, n, k = 2 * bm, 3 * bn, 2 * bk + 48
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (n, k) if k_major else (k, n), dtype=np.int8)
    want = a.astype(np.int64) @ (b.T if k_major else b).astype(np.int64)
    c = np.full((m, n), _POISON, np.int32)
    strides = (1, k) if k_major else (n, 1)
    copies = [x for x in walk(compile_ir(matmul_i8, replace(_aligned_spec(
        matmul_i8, 16, warps, stages, dtypes.I8, ("stride_bk" if k_major else "stride_bn",), BLOCK_M=bm, BLOCK_N=bn,
        BLOCK_K=bk, GROUP_M=2), arch=arch)).body) if x.op is Op.ASYNC_COPY]
    assert len(copies) == 2

    def launch() -> None:
        out = tl.to_device(c, tl.i32)
        matmul_i8[(tl.cdiv(m, bm) * tl.cdiv(n, bn),), tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, tl.i8), tl.to_device(b, tl.i8), out, m, n, k, k, *strides, n,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2)
        c[...] = out.numpy()

    _on_emulator(launch, arch=arch)
    np.testing.assert_array_equal(c, want)


@tl.kernel
def mm_descriptors(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
                   BM: constexpr, BN: constexpr, BK: constexpr, BLOCK_PTR: constexpr) -> None:
    """A matmul reading its operands through tensor descriptors (or, with ``BLOCK_PTR``, block
    pointers checked on every dim): on sm_90 both copy with TMA; the ragged edges read zeros."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.f32)
    if BLOCK_PTR:
        a_blk = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
        b_blk = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
        for _ in range(0, tl.cdiv(K, BK)):
            a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
            b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
            acc = tl.dot(a, b, acc)
            a_blk = tl.advance(a_blk, (0, BK))
            b_blk = tl.advance(b_blk, (BK, 0))
    else:
        a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
        b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    c_desc.store([pid_m * BM, pid_n * BN], acc)


def _descriptor_spec(warps: int, stages: int, ints: int = 64, **constexprs: Any) -> Spec:
    return replace(_aligned_spec(mm_descriptors, ints, warps, stages, pointees={"a_ptr": dtypes.F16, "b_ptr": dtypes.F16},
                                 **constexprs), arch=90)


def _bulk_copies(spec: Spec) -> list[Node]:
    return [n for n in walk(compile_ir(mm_descriptors, spec, verify_each=True).body)
            if n.op is Op.ASYNC_COPY and box_of(n) is not None]


@pytest.mark.parametrize("block_ptr", [False, True])
def test_descriptor_and_block_pointer_operands_copy_with_tma_on_hopper(block_ptr: bool) -> None:
    """On sm_90 a descriptor's or block pointer's dot operand of a pipelined loop lands with one
    bulk tensor copy a 128-byte panel (its tensor map built on the device before the loop); on
    sm_80, with one stage (no loop to build the map ahead of), or when the row stride may not be a
    multiple of 16 bytes (TMA's rule), it stays on cp.async."""
    tiles = dict(BM=64, BN=128, BK=64, BLOCK_PTR=block_ptr)
    spec = _descriptor_spec(4, 3, **tiles)
    assert len(_bulk_copies(spec)) == 2
    loops = [n for n in walk(compile_ir(mm_descriptors, spec).body) if n.op is Op.FOR]
    assert [n.attr.stages for n in loops if isinstance(n.attr, LoopAttr)] == [3]
    source = generate(compile_ir(mm_descriptors, spec)).source
    assert source.count("tl::tma_load_2d(") == 1 + 2 + 2 * (1 + 2)  # A one panel, B two, in the prologue and loop
    assert "tl::cp_async<" not in source and "unsigned char* __restrict__ tl_maps" in source
    assert _bulk_copies(replace(spec, arch=80)) == []
    assert _bulk_copies(_descriptor_spec(4, 3, ints=8, **tiles)) == []  # K * 2 bytes may not be a multiple of 16
    assert _bulk_copies(_descriptor_spec(4, 1, **tiles)) == []


@_EMULATED
@pytest.mark.parametrize("block_ptr, warps, bm, bn, bk, stages", [
    (False, 4, 64, 64, 64, 3), (True, 4, 64, 128, 64, 2), (False, 8, 128, 64, 128, 4), (True, 4, 64, 64, 64, 2),
])
def test_tma_matmul_on_the_emulator_matches_float64(block_ptr: bool, warps: int, bm: int, bn: int, bk: int,
                                                    stages: int) -> None:
    """The bulk tensor copies on the emulator (its TMA zero-fills outside the tensor and writes
    the 128-byte swizzle, its mbarriers count bytes): ragged M, N and K, every trip count of the
    ring."""
    rng = np.random.default_rng(bm + bn + bk + stages + block_ptr)
    m, n, k = bm + 24, bn + 48, 3 * bk + 32  # K and N multiples of 16: the specialisation allows TMA
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    c = np.full((m, n), np.nan, np.float32)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        mm_descriptors[(tl.cdiv(m, bm), tl.cdiv(n, bn)), tl.Options(num_warps=warps, num_stages=stages)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), out, m, n, k, BM=bm, BN=bn, BK=bk, BLOCK_PTR=block_ptr)
        c[...] = out.numpy()

    _BACKEND.loaded.clear()
    _on_emulator(launch, arch=90)
    assert "tl::tma_load_2d(" in _BACKEND.last_source
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: the PTX cannot be generated")
def test_ptx_of_a_tma_matmul_holds_bulk_tensor_copies(tmp_path: Path) -> None:
    assert NVCC is not None
    src = tmp_path / "k.cu"
    src.write_text(generate(compile_ir(mm_descriptors, _descriptor_spec(4, 3, BM=64, BN=64, BK=64,
                                                                        BLOCK_PTR=False))).source)
    subprocess.run([NVCC, "--ptx", "-gencode=arch=compute_90a,code=compute_90a", "-std=c++17", f"-I{INCLUDE_DIR}",
                    str(src), "-o", str(tmp_path / "k.ptx")], check=True, capture_output=True)
    ptx = (tmp_path / "k.ptx").read_text()
    for instruction in ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                        "tensormap.replace.tile.global_address", "tensormap.cp_fenceproxy",
                        "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx", "wgmma.mma_async"):
        assert instruction in ptx, instruction


@tl.kernel
def mm_gathered(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], idx_ptr: Pointer[tl.i32], c_ptr: Pointer[tl.f32],
                M: int, N: int, K: int, BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    """C = sum over k of A's k-th column block (through a descriptor) times B's row block
    ``idx[k]`` (a gather: that copy cannot run ahead, so the loop is not pipelined and A's bulk
    copy builds its map, copies and waits in place each iteration)."""
    pid_m = tl.program_id(0)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    ok = tl.arange(0, BK)
    on = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, tl.cdiv(K, BK)):
        rows = tl.load(idx_ptr + k) * BK + ok
        b = tl.load(b_ptr + rows[:, None] * N + on[None, :], mask=rows[:, None] < K, other=0.0)
        acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b, acc)
    om = pid_m * BM + tl.arange(0, BM)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc, mask=om[:, None] < M)


@_EMULATED
def test_a_bulk_copy_in_a_loop_that_is_not_pipelined_copies_in_place() -> None:
    rng = np.random.default_rng(5)
    m, n, k, bm, bk = 88, 64, 192, 64, 64
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    idx = rng.permutation(k // bk).astype(np.int32)
    c = np.full((m, n), np.nan, np.float32)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        mm_gathered[(tl.cdiv(m, bm),), tl.Options(num_warps=4, num_stages=3)](
            tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), tl.to_device(idx, tl.i32), out, m, n, k, BM=bm, BN=n,
            BK=bk)
        c[...] = out.numpy()

    _BACKEND.loaded.clear()
    _on_emulator(launch, arch=90)
    assert "tl::tma_load_2d(" in _BACKEND.last_source and "phase" not in _BACKEND.last_source
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = sum(a64[:, j * bk:(j + 1) * bk] @ b64[i * bk:(i + 1) * bk] for j, i in enumerate(idx))
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


@_EMULATED
def test_the_emulator_refuses_blocks_the_device_could_not_hold() -> None:
    """A block needing more shared memory than an H200 gives one (4 stages of 256x64 and 64x256
    f16 tiles: 256 KB) is the same OutOfResources on the emulator as on the GPU, not a run with
    wgmma descriptors whose address fields wrapped (a fuzzed kernel found this)."""
    a = np.zeros((256, 256), np.float16)

    def launch() -> None:
        mm_descriptors[(1, 1), tl.Options(num_warps=8, num_stages=4)](
            tl.to_device(a, tl.f16), tl.to_device(a, tl.f16), tl.to_device(np.zeros((256, 256), np.float32), tl.f32),
            256, 256, 256, BM=256, BN=256, BK=64, BLOCK_PTR=False)

    with pytest.raises(OutOfResources, match="mm_descriptors"):
        _on_emulator(launch, arch=90)


def test_cuda_source_shows_bulk_copies_for_ints_named_divisible() -> None:
    """Without a launch an int's divisibility is unknown, so a descriptor's row stride may not be a
    multiple of 16 bytes and its loads stay on cp.async; naming the ints ``divisible`` (as a
    launch with such values specialises them) shows the TMA code, in Python and on the command
    line."""
    from benchmarks.dot_kernels import matmul_tma
    from tile_lang import cli

    tiles: dict[str, Any] = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, a_ptr=tl.f16, b_ptr=tl.f16,
                                 c_ptr=tl.f16)
    assert "tl::tma_load_2d(" not in matmul_tma.cuda_source(8, "90a", **tiles)
    assert "tl::tma_load_2d(" in matmul_tma.cuda_source(8, "90a", divisible=("K", "N"), **tiles)
    with pytest.raises(tl.LaunchError, match="divisible names 'X', which is not an int parameter"):
        matmul_tma.cuda_source(8, "90a", divisible=("X",), **tiles)
    args = ["inspect", "benchmarks.dot_kernels:matmul_tma", "--num-warps", "8", "--arch", "90a", "--cuda",
            "--divisible", "K", "--divisible", "N", "--dtype", "a_ptr=f16", "--dtype", "b_ptr=f16", "--dtype",
            "c_ptr=f16", *(f"--constexpr={k}={v}" for k, v in tiles.items() if k.isupper())]
    assert cli.main(args) == 0


def test_cuda_source_shows_the_vector_copies_of_ints_named_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """A unit stride is known at a launch that passes 1, not without one: the grouped matmul's
    copies read A and B two bytes at a time through registers unless ``ones`` names its inner
    strides, as a contiguous launch specialises them; in Python and on the command line."""
    from benchmarks.form_kernels import mm_grouped
    from tile_lang import cli

    tiles: dict[str, Any] = dict(BM=128, BN=128, BK=64, GROUP_M=8, a_ptr=tl.f16, b_ptr=tl.f16, c_ptr=tl.f16)
    strides = ("stride_ak", "stride_bn", "stride_cn")
    plain = mm_grouped.cuda_source(8, "90a", divisible=("M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
                                   **tiles)
    unit = mm_grouped.cuda_source(8, "90a", divisible=("M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
                                  ones=strides, **tiles)
    assert "tl::cp_async<16>" not in plain and plain.count("p_stride_ak") > 1
    assert "tl::cp_async<16>" in unit and unit.count("p_stride_ak") == 1  # in the signature, nowhere in the body
    with pytest.raises(tl.LaunchError, match="ones names 'X', which is not an int parameter"):
        mm_grouped.cuda_source(8, "90a", ones=("X",), **tiles)
    args = ["inspect", "benchmarks.form_kernels:mm_grouped", "--num-warps", "8", "--arch", "90a", "--cuda",
            *(f"--divisible={n}" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")),
            *(f"--one={n}" for n in strides), "--dtype", "a_ptr=f16", "--dtype", "b_ptr=f16", "--dtype", "c_ptr=f16",
            *(f"--constexpr={k}={v}" for k, v in tiles.items() if k.isupper())]
    assert cli.main(args) == 0
    assert "tl::cp_async<16>" in capsys.readouterr().out


@tl.kernel
def dots_in_and_out_of_a_branch(q_ptr: Pointer[tl.f16], w_ptr: Pointer[tl.f16], k_ptr: Pointer[tl.f16],
                                c_ptr: Pointer[tl.f32], K: int, BM: constexpr, BN: constexpr, BD: constexpr) -> None:
    """sum over blocks kt of q @ kt, plus q @ w every other block: the loop's first wgmma sits in
    a branch, so the copies of later iterations go under the second one, which runs every
    iteration (under the first they would be skipped every other iteration)."""
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    od = tl.arange(0, BD)
    q = tl.load(q_ptr + om[:, None] * BD + od[None, :])
    w = tl.load(w_ptr + od[:, None] * BN + on[None, :])
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(0, K, BN):
        kt = tl.load(k_ptr + od[:, None] * K + (k + on)[None, :])
        if k % (2 * BN) == 0:
            acc += tl.dot(q, w)
        acc += tl.dot(q, kt)
    tl.store(c_ptr + om[:, None] * BN + on[None, :], acc)


@_EMULATED
def test_copies_are_issued_under_a_wgmma_that_runs_every_iteration() -> None:
    rng = np.random.default_rng(9)
    bm, bn, bd, k = 64, 64, 64, 320
    q, w = rng.standard_normal((bm, bd)).astype(np.float16), rng.standard_normal((bd, bn)).astype(np.float16)
    kt = rng.standard_normal((bd, k)).astype(np.float16)
    c = np.full((bm, bn), np.nan, np.float32)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        dots_in_and_out_of_a_branch[(1,), tl.Options(num_warps=4, num_stages=3)](
            tl.to_device(q, tl.f16), tl.to_device(w, tl.f16), tl.to_device(kt, tl.f16), out, k, BM=bm, BN=bn, BD=bd)
        c[...] = out.numpy()

    _BACKEND.loaded.clear()
    _on_emulator(launch, arch=90)
    assert "wgmma" in _BACKEND.last_source and "slot" in _BACKEND.last_source  # pipelined, on wgmma
    q64, w64, k64 = q.astype(np.float64), w.astype(np.float64), kt.astype(np.float64)
    want = q64 @ k64.reshape(bd, k // bn, bn).sum(1) + len(range(0, k, 2 * bn)) * (q64 @ w64)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=2e-3)


@tl.kernel
def fp8_chunked_matmul(a_ptr: Pointer[tl.f8e4m3], bt_ptr: Pointer[tl.f8e4m3], c_ptr: Pointer[tl.f32], K: int,
                       stride_a: int, stride_b: int, stride_c: int, BM: constexpr, BN: constexpr, BK: constexpr,
                       CHUNK: constexpr) -> None:
    """One [BM, BN] tile of ``a @ bt.T``, its fp8 dots adding their partial sums into the f32
    accumulator every ``CHUNK`` elements of K (``max_num_imprecise_acc``; -1 for Triton's default, none)."""
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * stride_a + (k + ks)[None, :])
        b = tl.load(bt_ptr + cols[None, :] * stride_b + (k + ks)[:, None])  # B K-major: bt row-major
        acc = tl.dot(a, b, acc=acc, max_num_imprecise_acc=None if CHUNK < 0 else CHUNK)
    tl.store(c_ptr + rows[:, None] * stride_c + cols[None, :], acc)


def _chunked_spec(chunk: int, bk: int = 128, warps: int = 4) -> Spec:
    """BK = 128 runs on wgmma; BK = 64 (under wgmma's fp8 panel) on mma.sync's m16n8k32."""
    return replace(_aligned_spec(fp8_chunked_matmul, 256, warps, 3, BM=64, BN=64, BK=bk, CHUNK=chunk), arch=90)


@_EMULATED
@pytest.mark.parametrize("chunk, bk, warps", [(-1, 128, 4), (0, 128, 4), (32, 128, 4), (64, 128, 4), (128, 128, 4),
                                              (-1, 64, 8), (32, 64, 8), (64, 64, 8)])
def test_fp8_partial_sums_added_every_chunk_match_float64(chunk: int, bk: int, warps: int) -> None:
    """``max_num_imprecise_acc``: each fp8 wgmma chunk accumulates into zeroed registers that are
    then added into the f32 accumulator (Hopper's fp8 tensor cores keep fewer accumulator bits)."""
    rng = np.random.default_rng(chunk + 2)
    k = 256
    a = rng.standard_normal((64, k)).astype(dtypes.F8E4M3.numpy)
    bt = rng.standard_normal((64, k)).astype(dtypes.F8E4M3.numpy)
    c = np.full((64, 64), np.nan, np.float32)
    (dot,) = [n for n in walk(compile_ir(fp8_chunked_matmul, _chunked_spec(chunk, bk, warps)).body) if n.op is Op.DOT]
    assert isinstance(dot.layout, Mma) and isinstance(dot.attr, DotAttr)
    assert dot.attr.imprecise == (None if chunk < 0 else chunk)

    def launch() -> None:
        out = tl.to_device(c, tl.f32)
        fp8_chunked_matmul[(1,), tl.Options(num_warps=warps)](tl.to_device(a, tl.f8e4m3), tl.to_device(bt, tl.f8e4m3),
                                                               out, k, k, k, 64, BM=64, BN=64, BK=bk, CHUNK=chunk)
        c[...] = out.numpy()

    _on_emulator(launch, arch=90)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("chunk, bk, warps, adds", [(-1, 128, 4, 0), (32, 128, 4, 4), (64, 128, 4, 2),
                                                    (128, 128, 4, 1), (-1, 64, 8, 0), (32, 64, 8, 2), (64, 64, 8, 1)])
def test_ptx_adds_each_partial_sum_once_per_accumulator_element(tmp_path: Path, chunk: int, bk: int, warps: int,
                                                                adds: int) -> None:
    """Triton's own count: an f32 ``add`` per accumulator element a thread holds (64 * 64 over the
    threads) for every chunk of a dot's K, and no other f32 add in the kernel."""
    if NVCC is None:
        pytest.skip("nvcc is not installed: the PTX cannot be generated")
    src = tmp_path / "k.cu"
    src.write_text(generate(compile_ir(fp8_chunked_matmul, _chunked_spec(chunk, bk, warps))).source)
    subprocess.run([NVCC, "--ptx", "-gencode=arch=compute_90a,code=compute_90a", "-std=c++17", f"-I{INCLUDE_DIR}",
                    str(src), "-o", str(tmp_path / "k.ptx")], check=True, capture_output=True)
    ptx = (tmp_path / "k.ptx").read_text()
    assert ("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" if bk == 128 else
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") in ptx
    assert ptx.count("add.f32") == 64 * 64 // (32 * warps) * adds


@pytest.mark.parametrize("backend", ["numpy", "compiler"])
@pytest.mark.parametrize("chunk, message", [
    (256, r"max_num_imprecise_acc \(256\) must be <= K \(128\)"),
    (1.5, "tl.dot: max_num_imprecise_acc must be an int >= 0 or None, got 1.5"),
])
def test_a_bad_max_num_imprecise_acc_is_refused_on_both_backends(backend: str, chunk: Any, message: str) -> None:
    if backend == "compiler":
        with pytest.raises(tl.KernelError, match=message):
            compile_ir(fp8_chunked_matmul, _chunked_spec(chunk))
        return
    a = tl.to_device(np.zeros((64, 128), dtypes.F8E4M3.numpy), tl.f8e4m3)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=message):
        fp8_chunked_matmul[(1,)](a, a, tl.empty((64, 64), tl.f32), 128, 128, 128, 64, BM=64, BN=64, BK=128,
                                 CHUNK=chunk)
