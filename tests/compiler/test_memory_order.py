"""Loads keep their place against stores: the passes that move a load down to its reader (a
permuted load, a dot operand's copy into shared memory) or issue it iterations early (the
pipeliner) must not carry it past a write to the memory it reads, and a scalar the program wrote
reads back on every thread. Found by hand-written kernels
(the fuzzer never stores between a load and its reader); each runs on the NumPy reference and on
the emulated CUDA, against float64 NumPy, outputs poisoned first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32

from tests.compiler.emulator import EMULATOR

Array = np.ndarray[Any, Any]


@pytest.fixture(params=[80, 90])
def arch(request: pytest.FixtureRequest) -> Iterator[int]:
    """The target the emulated CUDA is generated for (mma.sync, or Hopper's wgmma and bulk copies)."""
    EMULATOR.arch = int(request.param)
    try:
        yield EMULATOR.arch
    finally:
        EMULATOR.arch = 80


@tl.kernel
def transposed_after_overwrite(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, R: constexpr, C: constexpr) -> None:
    """A block loaded, its memory overwritten, then the block transposed; a second block loaded
    before a loop that transposes it while overwriting its memory each iteration."""
    rows, cols = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
    t_rows, t_cols = tl.arange(0, C)[:, None], tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    tl.debug_barrier()
    tl.store(x_ptr + rows * C + cols, (rows * C + cols).to(tl.float32))
    tl.debug_barrier()
    tl.store(o_ptr + t_rows * R + t_cols, tl.trans(x))
    w = tl.load(x_ptr + R * C + rows * C + cols)
    acc = tl.zeros((C, R), tl.float32)
    for i in range(n):
        acc += tl.trans(w)
        tl.debug_barrier()
        tl.store(x_ptr + R * C + rows * C + cols, (rows + cols + i).to(tl.float32))
        tl.debug_barrier()
    tl.store(o_ptr + R * C + t_rows * R + t_cols, acc)


@pytest.mark.parametrize("n", [0, 3])
def test_a_permuted_load_reads_before_the_store_that_follows_it(backend: str, n: int) -> None:
    """Was the stored values on the CUDA path (permute_loads moved the load down to ``tl.trans``,
    past the store; the second block was reloaded inside the loop, seeing each iteration's store)."""
    r, c = 8, 16
    x = np.random.default_rng(14).standard_normal((2, r, c)).astype(np.float32)
    want = np.concatenate([x[0].T.ravel(), (n * x[1].astype(np.float64)).T.ravel()])
    with tl.backend(backend):
        out = tl.to_device(np.full(2 * r * c, np.nan, np.float32), tl.f32)
        transposed_after_overwrite[(1,)](tl.to_device(x, tl.f32), out, n, R=r, C=c)
        got = out.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@tl.kernel
def dot_after_overwrite(a_ptr: Pointer[f16], b_ptr: Pointer[f16], o_ptr: Pointer[f32], M: constexpr, K: constexpr,
                        FORM: constexpr) -> None:
    """Dot operands loaded, their memory overwritten, then the dot: written after the stores
    ("late"), before them but folded into the later ``x + dot`` ("folded"), or before them."""
    rows, ks, k_rows = tl.arange(0, M)[:, None], tl.arange(0, K)[None, :], tl.arange(0, K)[:, None]
    a = tl.load(a_ptr + rows * K + ks)
    b = tl.load(b_ptr + k_rows * K + ks)
    x = tl.load(o_ptr + rows * K + ks)
    d = tl.zeros((M, K), tl.float32) if FORM == "late" else tl.dot(a, b)
    tl.debug_barrier()
    tl.store(a_ptr + rows * K + ks, (rows + ks).to(tl.float16))
    tl.store(b_ptr + k_rows * K + ks, (k_rows - ks).to(tl.float16))
    tl.debug_barrier()
    if FORM == "late":
        d = tl.dot(a, b)
    if FORM == "folded":
        d = x + d
    tl.store(o_ptr + rows * K + ks, d)


@pytest.mark.parametrize("form", ["late", "folded", "early"])
def test_dot_operands_read_before_the_stores_that_follow_their_loads(backend: str, arch: int, form: str) -> None:
    """Was the dot of the stored values on the CUDA path, 256 of 256 elements (the operands' loads
    became copies into shared memory where the dot stands, after the stores; ``x + dot`` moved the
    dot there first)."""
    m, k = 16, 16
    rng = np.random.default_rng(15)
    a = (rng.integers(-2, 3, (m, k)) * 0.5).astype(np.float16)
    b = (rng.integers(-2, 3, (k, k)) * 0.25).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64) + (0.5 if form == "folded" else 0.0)
    with tl.backend(backend):
        out = tl.to_device(np.full((m, k), 0.5, np.float32), tl.f32)  # the folded form adds it
        dot_after_overwrite[(1,)](tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), out, M=m, K=k, FORM=form)
        got = out.numpy()
    np.testing.assert_array_equal(got, want)  # multiples of 1/8: exact in any order


@tl.kernel
def iterated_product(a_ptr: Pointer[f16], w_ptr: Pointer[f16], o_ptr: Pointer[f32], n: int, M: constexpr,
                     K: constexpr) -> None:
    """``a[i + 1] = a[i] @ w``: each iteration stores the block the next one loads as its operand."""
    rows, ks, k_rows = tl.arange(0, M)[:, None], tl.arange(0, K)[None, :], tl.arange(0, K)[:, None]
    w = tl.load(w_ptr + k_rows * K + ks)
    acc = tl.zeros((M, K), tl.float32)
    for i in range(n):
        acc = tl.dot(tl.load(a_ptr + (i * M + rows) * K + ks), w)
        tl.debug_barrier()
        tl.store(a_ptr + ((i + 1) * M + rows) * K + ks, acc.to(tl.float16))
        tl.debug_barrier()
    tl.store(o_ptr + rows * K + ks, acc)


@pytest.mark.parametrize("stages", [1, 3])
def test_a_pipelined_loop_reads_what_earlier_iterations_stored(backend: str, arch: int, stages: int) -> None:
    """Was the original blocks on the CUDA path with 3 stages, 255 of 256 elements (the pipeliner
    copied iteration i + 1's operand before iteration i stored it)."""
    m, k, n = 16, 16, 4
    rng = np.random.default_rng(7)
    a = (rng.integers(-2, 3, ((n + 1) * m, k)) * 0.5).astype(np.float16)
    w = (rng.integers(-2, 3, (k, k)) * 0.25).astype(np.float16)
    blocks = [a[:m].astype(np.float64)]
    for _ in range(n):
        blocks.append((blocks[-1] @ w.astype(np.float64)).astype(np.float16).astype(np.float64))
    with tl.backend(backend):
        a_dev = tl.to_device(a, tl.f16)
        out = tl.to_device(np.full((m, k), np.nan, np.float32), tl.f32)
        iterated_product[(1,), tl.Options(num_stages=stages)](a_dev, tl.to_device(w, tl.f16), out, n, M=m, K=k)
        got, rows = out.numpy(), a_dev.numpy().astype(np.float64)
    want = blocks[n - 1] @ w.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(rows[m:], np.concatenate(blocks[1:]))


@tl.kernel
def scalar_round_trips(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, ATOMIC: constexpr, B: constexpr) -> None:
    """A scalar written (stored, or added to atomically) and read back, ``n`` times; then read and
    overwritten with what was read plus one."""
    offs = tl.arange(0, B)
    acc = tl.zeros((B,), tl.float32)
    for i in range(n):
        if ATOMIC:
            tl.atomic_add(x_ptr, 1.0)
        else:
            tl.store(x_ptr, i * 1.0)
        acc += tl.load(x_ptr)
    c = tl.load(x_ptr + 1)
    tl.store(x_ptr + 1, c + 1.0)
    tl.store(o_ptr + offs, acc + c)


@pytest.mark.parametrize("atomic", [False, True])
def test_a_scalar_reads_back_what_the_program_wrote(backend: str, atomic: bool) -> None:
    """Was the old value on most threads of the CUDA path (296 of 1024 lanes for one store: thread
    0 writes a scalar, every thread loads it, with no barrier between)."""
    b, n = 1024, 20
    want = sum(1.0 + k for k in range(n)) if atomic else float(sum(range(n)))
    with tl.backend(backend):
        x = tl.to_device(np.array([0.0, 5.0], np.float32), tl.f32)
        out = tl.to_device(np.full(b, np.nan, np.float32), tl.f32)
        scalar_round_trips[(1,), tl.Options(num_warps=8)](x, out, n, ATOMIC=atomic, B=b)
        got, cells = out.numpy(), x.numpy()
    np.testing.assert_array_equal(got, np.full(b, want + 5.0, np.float32))
    np.testing.assert_array_equal(cells, [n if atomic else n - 1, 6.0])
