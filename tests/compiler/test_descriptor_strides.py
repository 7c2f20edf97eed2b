"""An int argument equal to 1 is specialised to the constant 1 (as in Triton): a tensor
descriptor whose last stride is a run-time 1 compiles, block pointers and pointer blocks with
such a stride vectorise, and the same parameter passed 3 gets its own specialisation."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, registry
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import Function, MemAttr, Op, walk
from tile_lang.compiler.spec import Spec

from tests.compiler.emulator import EMULATOR, NAME

_BACKEND = EMULATOR
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))
M, N, BM, BN = 24, 40, 8, 16


@tl.kernel
def descriptor_scale(x_ptr: Pointer[f32], o_ptr: Pointer[f32], m: int, n: int, row: int, col: int,
                     BM: constexpr, BN: constexpr) -> None:
    """o = 2x + 1 block by block; x's strides are run-time arguments (Triton's ``[stride, 1]``)."""
    src = tl.make_tensor_descriptor(x_ptr, [m, n], [row, col], [BM, BN])
    dst = tl.make_tensor_descriptor(o_ptr, [m, n], [n, 1], [BM, BN])
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([i, j], src.load([i, j]) * 2.0 + 1.0)


@tl.kernel
def descriptor_attributes(x_ptr: Pointer[f16], o_ptr: Pointer[f16], m: int, n: int, BM: constexpr, BN: constexpr) -> None:
    """o = 2x + 1 accumulated in f32 and converted back by ``acc.to(src.dtype)``, the block's origin
    from ``dst.block_shape`` (Triton's descriptor attributes; FlagGems' Hopper matmul uses the first)."""
    src = tl.make_tensor_descriptor(x_ptr, [m, n], [n, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(o_ptr, [m, n], [n, 1], [BM, BN])
    i, j = tl.program_id(0) * dst.block_shape[0], tl.program_id(1) * dst.block_shape[1]
    acc = src.load([i, j]).to(tl.float32) * 2.0 + 1.0
    dst.store([i, j], acc.to(src.dtype))


def test_descriptor_dtype_and_block_shape(backend: str) -> None:
    source = np.random.default_rng(5).standard_normal((M, N)).astype(np.float16)
    want = (source.astype(np.float64) * 2 + 1).astype(np.float16)
    with tl.backend(backend):
        out = tl.to_device(np.full((M, N), np.nan, np.float16), tl.f16)
        descriptor_attributes[(M // BM, -(-N // BN))](tl.to_device(source, tl.f16), out, M, N, BM=BM, BN=BN)
        np.testing.assert_array_equal(out.numpy(), want)


@tl.kernel
def block_pointer_scale(x_ptr: Pointer[f32], o_ptr: Pointer[f32], m: int, n: int, row: int, col: int,
                        BM: constexpr, BN: constexpr) -> None:
    """o = 2x + 1 where x[i, j] lies at ``i * row + j * col``; o is row-major m x n."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    src = tl.make_block_ptr(x_ptr, (m, n), (row, col), (i, j), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(o_ptr, (m, n), (n, 1), (i, j), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1)) * 2.0 + 1.0, boundary_check=(0, 1))


def _run(kernel: tl.Kernel[Any], backend: str, col: int, seed: int) -> None:
    """Launch over an m x n view of a random tensor whose columns lie ``col`` apart; the
    poisoned output must be the view's float64 2x + 1."""
    source = np.random.default_rng(seed).standard_normal((M, N * col)).astype(np.float32)
    want = source[:, ::col].astype(np.float64) * 2 + 1
    with tl.backend(backend):
        out = tl.to_device(np.full((M, N), np.nan, np.float32), tl.f32)
        kernel[(M // BM, -(-N // BN))](tl.to_device(source, tl.f32), out, M, N, N * col, col, BM=BM, BN=BN)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_descriptor_with_a_runtime_unit_last_stride_runs_on_both_backends(backend: str) -> None:
    _run(descriptor_scale, backend, 1, seed=11)


def test_descriptor_with_a_runtime_last_stride_other_than_one_is_refused_by_both() -> None:
    registry.register(_BACKEND)
    x = np.random.default_rng(12).standard_normal((M, N * 3)).astype(np.float32)
    for name in ("numpy", NAME):
        with tl.backend(name), pytest.raises(tl.KernelError, match="last stride of a tensor descriptor must be 1"):
            out = tl.to_device(np.full((M, N), np.nan, np.float32), tl.f32)
            descriptor_scale[(M // BM, 3)](tl.to_device(x, tl.f32), out, M, N, N * 3, 3, BM=BM, BN=BN)
        assert np.isnan(out.numpy()).all()


def test_an_int_passed_one_then_three_compiles_two_correct_specialisations(backend: str) -> None:
    for seed, col in enumerate((1, 3, 1)):
        _run(block_pointer_scale, backend, col, seed=20 + seed)
    if backend == NAME:  # 1 and 3 have their own code; the second 1 reuses the first's
        keys = sorted(key for kernel, key in _BACKEND.loaded if kernel is block_pointer_scale)
        assert len(keys) == 2 and keys[0] != keys[1].replace(":1", ""), keys


def _one(spec: Spec, index: int) -> Spec:
    """``spec`` with its ``index``-th argument an int launched as 1."""
    return replace(spec, args=tuple(replace(a, equals_one=i == index) for i, a in enumerate(spec.args)))


def _widths(fn: Function) -> list[int]:
    return [n.attr.vector for n in walk(fn.body) if n.op in (Op.LOAD, Op.STORE) and isinstance(n.attr, MemAttr)]


@pytest.mark.parametrize("kernel", [descriptor_scale, block_pointer_scale])
def test_a_unit_stride_specialised_from_an_argument_vectorises(kernel: tl.Kernel[Any]) -> None:
    """The loads through the runtime unit stride are 128-bit, as the stores with a literal 1."""
    spec = static_spec(kernel, {"BM": 16, "BN": 64}, divisible=("n", "row"))  # 8 elements a thread
    assert _widths(compile_ir(kernel, _one(spec, 5))) == [4, 4]
    if kernel is block_pointer_scale:  # an unknown column stride: one element at a time
        assert _widths(compile_ir(kernel, spec)) == [1, 4]
