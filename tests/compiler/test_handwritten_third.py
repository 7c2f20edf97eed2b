"""A third set of hand-written kernels in the idioms of real Triton code, probing the recent passes
(fragment stores staged through shared memory, rows reloaded onto fragments, views hoisted out of
loops, barriers between accesses): each runs on the NumPy reference and on the generated CUDA under
the CPU emulator (sm_80, and sm_90 where its fragments differ), outputs poisoned first, against
NumPy in float64. Tests named for a wrong result kept it, reduced; the others cover an idea the
passes must keep right."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32, registry

from tests.compiler.emulator import EMULATOR, NAME as EMU

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
TARGETS = [("numpy", 80), (EMU, 80), (EMU, 90)]  # the reference, then the emulated CUDA of each target


@pytest.fixture(params=TARGETS, ids=["numpy", "emu-sm80", "emu-sm90"])
def target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A backend to run on, the emulator generating code for the parametrised target."""
    name, arch = request.param
    registry.register(EMULATOR)
    monkeypatch.setattr(EMULATOR, "arch", arch)
    return str(name)


# ---------------------------------------------------------------- a block of one element, updated in place

@tl.kernel
def scaled_by_counter(c_ptr: Pointer[f32], x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """A one-element block read, doubled in place, and the read value scaling a block: every
    thread holds its copy of ``c`` and thread 0 stores the new one."""
    one = tl.arange(0, 1)
    offs = tl.arange(0, B)
    c = tl.load(c_ptr + one)
    tl.store(c_ptr + one, c * 2.0)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) * c)


def test_a_one_element_block_reads_before_its_store(target: str) -> None:
    """No barrier ordered the threads' loads of ``c`` before thread 0's store over it (the pass took
    the one-element block for a block walked by thread 0 alone): 1019 of 1024 lanes of ``x * c``
    used the doubled value on the emulator (8 warps)."""
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    with tl.backend(target):
        counter, out = tl.to_device(np.array([3.0], np.float32)), tl.to_device(np.full(1024, np.nan, np.float32))
        scaled_by_counter[(1,), tl.Options(num_warps=8)](counter, tl.to_device(x), out, B=1024)
        np.testing.assert_array_equal(counter.numpy(), [6.0])
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 3.0, rtol=1e-6)


@tl.kernel
def shifted_by_ticket(t_ptr: Pointer[f32], x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """A ticket taken with a one-element atomic (its old value) shifts a block."""
    one = tl.arange(0, 1)
    offs = tl.arange(0, B)
    old = tl.atomic_add(t_ptr + one, tl.full([1], 1.0, tl.float32))
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) + old)


def test_a_one_element_atomic_gives_every_thread_its_old_value(target: str) -> None:
    """Thread 0 alone ran the atomic and every other thread read its own zeroed copy of the old
    value: 254 of 256 lanes shifted by 0 instead of 3 on the emulator."""
    x = np.random.default_rng(6).standard_normal(256).astype(np.float32)
    with tl.backend(target):
        ticket, out = tl.to_device(np.array([3.0], np.float32)), tl.to_device(np.full(256, np.nan, np.float32))
        shifted_by_ticket[(1,), tl.Options(num_warps=4)](ticket, tl.to_device(x), out, B=256)
        np.testing.assert_array_equal(ticket.numpy(), [4.0])
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + 3.0, rtol=1e-6)


# ---------------------------------------------------------------- a fragment store masked by a row's maximum

@tl.kernel
def rows_above(a_ptr: Pointer[f16], b_ptr: Pointer[f16], c_ptr: Pointer[f32], M: constexpr, N: constexpr,
               K: constexpr) -> None:
    """``A @ B`` shifted by each row's maximum, stored only for the rows whose maximum passes 1: the
    mask is the maximum's row broadcast, held on the fragments."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    top = tl.max(acc, 1)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc - top[:, None], mask=(top > 1.0)[:, None])


@pytest.mark.parametrize("m, n, k, warps", [(64, 64, 32, 4), (32, 32, 16, 4)])
def test_a_fragment_store_masked_on_the_fragments(target: str, m: int, n: int, k: int, warps: int) -> None:
    """The store was staged through shared memory to go out 16 bytes a thread from the default
    layout while its mask stayed on the fragments: an internal compiler error at 64x64 (rows split
    over the 4 warps)."""
    rng = np.random.default_rng(m)
    a, b = (rng.standard_normal(shape).astype(np.float16) for shape in ((m, k), (k, n)))
    before = rng.standard_normal((m, n)).astype(np.float32)
    c = a.astype(np.float64) @ b.astype(np.float64)
    top = c.max(axis=1, keepdims=True)
    with tl.backend(target):
        out = tl.to_device(before)
        rows_above[(1,), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), out, M=m, N=n, K=k)
        np.testing.assert_allclose(out.numpy(), np.where(top > 1.0, c - top, before), rtol=1e-3, atol=1e-3)
