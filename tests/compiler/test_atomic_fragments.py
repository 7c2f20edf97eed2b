"""An atomic on a dot's result runs on the dot's fragments (layouts' ``_atomic_fragment``): split-K
partial products added into C, masked ragged edges, the old values returned and stored, on the
reference and the generated CUDA against float64."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, registry
from tile_lang.compiler import compile_ir
from tile_lang.compiler.ir import AtomicAttr, Mma, Op, walk
from tile_lang_cupy.codegen import generate

from tests.compiler.conftest import NVCC, sm90a_report
from tests.compiler.emulator import EMULATOR, NAME as EMU
from tests.compiler.test_tensor_cores import _aligned_spec


@tl.kernel
def split_k_add(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], old_ptr: Pointer[tl.f32],
                M: int, N: int, K: int, BM: constexpr, BN: constexpr, BK: constexpr, SPLIT: constexpr) -> None:
    """C += A[:, slice] @ B[slice, :] for K slice ``program_id(2)``; the values C held before each
    slice's add land in old[slice]."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    part = tl.program_id(2)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(part * BK, K, SPLIT * BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    old = tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=inside)
    tl.store(old_ptr + part * M * N + rm[:, None] * N + rn[None, :], old, mask=inside)


@pytest.mark.parametrize(("m", "n", "k"), [(32, 32, 64), (45, 37, 70)])
def test_split_k_adds_every_slice_and_returns_the_old_values(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    start = rng.standard_normal((m, n)).astype(np.float32)
    split, bk = 2, 16
    with registry.backend(backend):
        c, old = tl.to_device(start.copy()), tl.to_device(np.full((split, m, n), np.nan, np.float32))
        split_k_add[(-(-m // 32), -(-n // 32), split)](tl.to_device(a), tl.to_device(b), c, old, m, n, k,
                                                       BM=32, BN=32, BK=bk, SPLIT=split)
        got, olds = c.numpy(), old.numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    parts = [sum(a64[:, s:s + bk] @ b64[s:s + bk] for s in range(p * bk, k, split * bk)) for p in range(split)]
    np.testing.assert_allclose(got, start + parts[0] + parts[1], rtol=1e-3, atol=1e-3)
    for p in range(split):  # each slice saw the start, or the start plus the other slice's part
        assert np.all(np.isclose(olds[p], start, atol=1e-3) | np.isclose(olds[p], start + parts[1 - p], atol=1e-3))


def test_the_atomic_takes_the_dot_fragments() -> None:
    spec = _aligned_spec(split_k_add, 4096, 8, 3, dtypes.F16, pointees={"c_ptr": dtypes.F32, "old_ptr": dtypes.F32},
                         BM=128, BN=128, BK=64, SPLIT=2)
    for arch in (80, 90):
        fn = compile_ir(split_k_add, replace(spec, arch=arch))
        (atomic,) = [n for n in walk(fn.body) if n.op is Op.ATOMIC]
        assert isinstance(atomic.layout, Mma)
        assert not [n for n in walk(fn.body) if n.op is Op.CONVERT and n.args[0].op is Op.DOT]


@tl.kernel
def vector_adds(x: Pointer[tl.f16], y: Pointer[tl.bf16], z: Pointer[tl.f32], BLOCK: constexpr) -> None:
    """Atomic adds of f16, bf16 (masked) and f32 (old values stored) blocks, contiguous."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(x + offs, tl.load(x + offs))
    tl.atomic_add(y + offs, tl.load(y + offs), mask=offs < 1000)
    old = tl.atomic_add(z + offs, tl.load(z + offs))
    tl.store(z + offs, old)


def _atomic_widths(arch: int) -> tuple[list[int], str]:
    spec = replace(_aligned_spec(vector_adds, 4096, 4, 1, dtypes.F16, BLOCK=1024), arch=arch)
    fn = compile_ir(vector_adds, spec)
    widths = [n.attr.vector for n in walk(fn.body) if n.op is Op.ATOMIC and isinstance(n.attr, AtomicAttr)]
    return widths, generate(fn).source


def test_hopper_adds_several_contiguous_elements_with_one_atom() -> None:
    """16 bytes an ``atom`` on sm_90 (f16/bf16 .v8, f32 .v4; a mask constant over 8 elements
    allows it), one element before sm_90; split-K's fragments hold column pairs: .v2."""
    widths, source = _atomic_widths(90)
    assert widths == [8, 8, 4]
    assert ".add.noftz.v8.f16 " in source and ".add.noftz.v8.bf16 " in source and ".add.v4.f32 " in source
    assert _atomic_widths(80)[0] == [1, 1, 1]
    spec = _aligned_spec(split_k_add, 4096, 8, 3, dtypes.F16, pointees={"c_ptr": dtypes.F32, "old_ptr": dtypes.F32},
                         BM=128, BN=128, BK=64, SPLIT=2)
    (atomic,) = [n for n in walk(compile_ir(split_k_add, replace(spec, arch=90)).body) if n.op is Op.ATOMIC]
    assert isinstance(atomic.attr, AtomicAttr) and atomic.attr.vector == 2


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: ptxas cannot check the sm_90a code")
def test_hopper_vector_atomics_pass_ptxas(tmp_path: Path) -> None:
    sm90a_report(_atomic_widths(90)[1], tmp_path)


@pytest.mark.skipif(EMULATOR.unavailable_reason() is not None, reason=str(EMULATOR.unavailable_reason()))
def test_hopper_vector_atomics_on_the_sm90_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    """The .v8/.v4/.v2 atomics the sm_90 code issues, run by the emulator (each element added
    atomically), masked and unmasked, old values returned, against NumPy."""
    registry.register(EMULATOR)
    monkeypatch.setattr(EMULATOR, "arch", 90)
    rng = np.random.default_rng(9)
    n = 4096
    x = rng.standard_normal(n).astype(np.float16)
    z = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    with registry.backend(EMU):
        bx, by, bz = tl.to_device(x), tl.to_device(y), tl.to_device(z)
        vector_adds[(n // 1024,)](bx, by, bz, BLOCK=1024)
        want_y = y.astype(np.float32)
        want_y[:1000] *= 2
        np.testing.assert_array_equal(bx.numpy(), (x.astype(np.float32) * 2).astype(np.float16))
        np.testing.assert_array_equal(by.numpy().astype(np.float32),
                                      want_y.astype(ml_dtypes.bfloat16).astype(np.float32))
        np.testing.assert_array_equal(bz.numpy(), z)  # the old values, stored over the sums
    test_split_k_adds_every_slice_and_returns_the_old_values(EMU, 45, 37, 70)
