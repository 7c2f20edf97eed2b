"""Atomics whose old values nothing reads are ``red``s (passes/atomics.py): which are (unused,
an operation and element type ``red`` takes, and no acquire that could order a later access),
their PTX, and the same sums on the reference and the emulated CUDA (sm_80 scalars, sm_90
vectors) against float64."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, registry
from tile_lang.compiler import compile_ir
from tile_lang.compiler.ir import AtomicAttr, Op, walk
from tile_lang_cupy.codegen import generate

from tests.compiler.conftest import NVCC, sm90a_report
from tests.compiler.emulator import EMULATOR, NAME as EMU
from tests.compiler.test_tensor_cores import _aligned_spec


@tl.kernel
def accumulate(x: Pointer[tl.f32], i: Pointer[tl.i32], h: Pointer[tl.bf16], old_out: Pointer[tl.f32],
               BLOCK: constexpr) -> None:
    """Each program adds into x and i; program 0 also into h, and stores what x held before one add."""
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(x + offs, 1.0, sem="relaxed")                  # unused, relaxed: a red
    old = tl.atomic_add(x + offs, 2.0, sem="relaxed")            # read: stays an atom
    tl.store(old_out + tl.program_id(0) * BLOCK + offs, old)
    tl.atomic_max(i + offs, offs * tl.program_id(0), sem="release")  # int max, release: a red
    tl.atomic_xchg(i + BLOCK + offs, offs, sem="relaxed")         # an exchange has no red
    tl.atomic_add(h + offs, 1.0, mask=tl.program_id(0) == 0)      # bf16 adds by compare-and-swap
    for _ in range(2):
        tl.atomic_add(x + offs, 0.5)                             # acq_rel, memory after it: an atom
    tl.atomic_add(x + offs, 4.0)                                 # acq_rel, nothing after it: a red


@tl.kernel
def add_in_branch(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    if tl.program_id(0) % 2 == 0:
        tl.atomic_add(x + offs, 1.0)  # the last access on this path: a red
    else:
        tl.atomic_add(x + offs, 3.0)
        tl.store(x + BLOCK + offs, tl.full((BLOCK,), 7.0, tl.f32))  # memory after it: an atom


def _decisions(kernel: object, arch: int, **constexprs: Any) -> list[tuple[str, str, bool]]:
    spec = replace(_aligned_spec(kernel, 4096, 4, 1, dtypes.F32, **constexprs), arch=arch)
    fn = compile_ir(kernel, spec)
    return [(n.attr.fn.value, n.attr.sem.value, n.attr.discard) for n in walk(fn.body)
            if n.op is Op.ATOMIC and isinstance(n.attr, AtomicAttr)]


def test_which_atomics_are_discarded() -> None:
    for arch in (80, 90):
        assert _decisions(accumulate, arch, BLOCK=64) == [
            ("add", "relaxed", True), ("add", "relaxed", False), ("max", "release", True),
            ("exch", "relaxed", False), ("add", "acq_rel", False), ("add", "acq_rel", False), ("add", "acq_rel", True)]
        assert _decisions(add_in_branch, arch, BLOCK=64) == [("add", "acq_rel", True), ("add", "acq_rel", False)]


def _source(kernel: object, arch: int, **constexprs: Any) -> str:
    spec = replace(_aligned_spec(kernel, 4096, 4, 1, dtypes.F32, **constexprs), arch=arch)
    return generate(compile_ir(kernel, spec)).source


def test_a_discarded_acquire_is_a_release_red_and_the_rest_keep_their_semantics() -> None:
    source = _source(accumulate, 90, BLOCK=64)
    assert "red.global.gpu.relaxed.add.f32 [%0]" in source  # no old value
    assert "red.global.gpu.release.max.s32 [%0]" in source
    assert "red.global.gpu.release.add.f32 [%0]" in source  # acq_rel's acquire half dropped
    assert "atom.global.gpu.relaxed.add.f32 %0" in source and "atom.global.gpu.acq_rel.add.f32 %0" in source
    assert "atom.global.gpu.relaxed.exch" in source and "atom.global.acq_rel.gpu.cas.b16" in source


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: ptxas cannot check the sm_90a code")
def test_reds_pass_ptxas(tmp_path: Path) -> None:
    sm90a_report(_source(accumulate, 90, BLOCK=64), tmp_path)


def _run(backend: str, programs: int, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(programs)
    x0 = rng.standard_normal(block).astype(np.float32)
    i0 = rng.integers(-50, 50, 2 * block).astype(np.int32)
    h0 = rng.standard_normal(block).astype(np.float32)
    with registry.backend(backend):
        x, i = tl.to_device(x0), tl.to_device(i0)
        h = tl.to_device(h0.astype(ml_dtypes.bfloat16))
        olds = tl.to_device(np.full(programs * block, np.nan, np.float32))
        accumulate[(programs,)](x, i, h, olds, BLOCK=block)
        return x.numpy(), i.numpy(), h.numpy().astype(np.float32), x0


def test_the_sums_are_those_of_atoms(backend: str) -> None:
    programs, block = 5, 64
    x, i, h, x0 = _run(backend, programs, block)
    np.testing.assert_allclose(x, x0.astype(np.float64) + programs * (1 + 2 + 0.5 + 0.5 + 4), rtol=1e-5, atol=1e-5)
    offs = np.arange(block)
    rng = np.random.default_rng(programs)
    rng.standard_normal(block)
    i0 = rng.integers(-50, 50, 2 * block)
    np.testing.assert_array_equal(i[:block], np.maximum(i0[:block], offs * (programs - 1)))
    np.testing.assert_array_equal(i[block:], offs)
    h0 = rng.standard_normal(block).astype(np.float32)
    want_h = (h0.astype(ml_dtypes.bfloat16).astype(np.float32) + 1).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(h, want_h)


@tl.kernel
def split_k_sum(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], M: int, N: int, K: int,
                BM: constexpr, BN: constexpr, BK: constexpr, SPLIT: constexpr) -> None:
    """C += A[:, slice] @ B[slice, :] for K slice ``program_id(2)``, its add the last access."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.f32)
    for k in range(tl.program_id(2) * BK, K, SPLIT * BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.skipif(EMULATOR.unavailable_reason() is not None, reason=str(EMULATOR.unavailable_reason()))
def test_split_k_adds_with_vector_reds_on_the_sm90_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split-K's final add from the dot's fragments: a ``red ... add.v2.f32`` on sm_90, each
    element added atomically, every slice's part landing, ragged edges masked."""
    spec = _aligned_spec(split_k_sum, 4096, 4, 1, dtypes.F16, pointees={"c_ptr": dtypes.F32}, BM=32, BN=32, BK=16,
                         SPLIT=3)
    assert "red.global.gpu.release.add.v2.f32 [%0]" in generate(compile_ir(split_k_sum, replace(spec, arch=90))).source
    registry.register(EMULATOR)
    monkeypatch.setattr(EMULATOR, "arch", 90)
    m, n, k = 45, 37, 70
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    start = rng.standard_normal((m, n)).astype(np.float32)
    with registry.backend(EMU):
        c = tl.to_device(start.copy())
        split_k_sum[(-(-m // 32), -(-n // 32), 3)](tl.to_device(a), tl.to_device(b), c, m, n, k, BM=32, BN=32, BK=16,
                                                   SPLIT=3)
        got = c.numpy()
    np.testing.assert_allclose(got, start + a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
