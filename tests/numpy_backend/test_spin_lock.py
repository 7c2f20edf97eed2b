"""A spin lock serialising programs (Triton's test_atomic_cas form) on the reference: it runs
them one at a time in grid order, each critical section seeing the one before; plain accesses
the lock orders race with nothing, and those it does not order are still races (between
programs, or between lanes of one program)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang_numpy import DivergenceWarning

BLOCK = 16


@tl.kernel
def locked_log(lock: Pointer[i32], count: Pointer[i32], log: Pointer[i32], acc: Pointer[f32], x: Pointer[f32],
               BLOCK: constexpr) -> None:
    """Under the lock: log the program's linear id at the next slot, add its row of x to acc."""
    pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    slot = tl.load(count)
    tl.store(log + slot, pid)
    tl.store(count, slot + 1)
    tl.store(acc + offs, tl.load(acc + offs) + tl.load(x + pid * BLOCK + offs))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@tl.kernel
def store_before_lock(lock: Pointer[i32], acc: Pointer[f32], BLOCK: constexpr) -> None:
    """Stores the shared block before taking the lock: nothing orders it after the last holder."""
    offs = tl.arange(0, BLOCK)
    tl.store(acc + offs, tl.full((BLOCK,), 1.0, tl.f32) + tl.program_id(0))
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.atomic_xchg(lock, 0)


@tl.kernel
def load_after_release(lock: Pointer[i32], acc: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    """Reads the shared block after releasing the lock: the next holder's store races with it."""
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)
    tl.store(out + tl.program_id(0) * BLOCK + offs, tl.load(acc + offs))


@tl.kernel
def reversed_without_barrier(lock: Pointer[i32], acc: Pointer[f32], BLOCK: constexpr) -> None:
    """Under the lock, lane j stores acc[j] and then acc[BLOCK - 1 - j], which another lane stored."""
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    tl.store(acc + (BLOCK - 1 - offs), tl.full((BLOCK,), 5.0, tl.f32) + tl.program_id(0))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.simplefilter("ignore", DivergenceWarning)  # the lock runs programs one at a time, as documented


@pytest.mark.parametrize("grid", [(1, 1), (7, 1), (37, 3), (130, 1)])
def test_a_lock_serialises_programs_in_grid_order(grid: tuple[int, int]) -> None:
    n = grid[0] * grid[1]
    rng = np.random.default_rng(n)
    xh = rng.standard_normal((n, BLOCK)).astype(np.float32)
    acc0 = rng.standard_normal(BLOCK).astype(np.float32)
    lock, count = tl.to_device(np.zeros(1, np.int32), tl.i32), tl.to_device(np.zeros(1, np.int32), tl.i32)
    log = tl.to_device(np.full(2 * n + 3, -7, np.int32), tl.i32)  # a sentinel past the last slot too
    acc = tl.to_device(acc0.copy(), tl.f32)
    for _ in range(2):  # a second launch of the same kernel starts one program at a time
        locked_log[grid](lock, count, log, acc, tl.to_device(xh, tl.f32), BLOCK=BLOCK)
    assert lock.numpy().tolist() == [0] and count.numpy().tolist() == [2 * n]
    got = log.numpy()
    assert got[:2 * n].tolist() == 2 * list(range(n)) and got[2 * n:].tolist() == [-7, -7, -7]
    want = acc0.copy()
    for row in np.concatenate([xh, xh]):  # f32 additions in grid order, as the programs ran
        want = want + row
    np.testing.assert_array_equal(acc.numpy(), want)
    np.testing.assert_allclose(acc.numpy(), acc0.astype(np.float64) + 2 * xh.astype(np.float64).sum(axis=0),
                               rtol=1e-4, atol=1e-4)


def test_a_store_before_the_lock_races() -> None:
    lock, acc = tl.to_device(np.zeros(1, np.int32), tl.i32), tl.to_device(np.full(BLOCK, np.nan, np.float32), tl.f32)
    with pytest.raises(tl.KernelError, match=r"data race on acc\[0\]: program \(1,\) stores it .* and program "
                                             r"\(0,\) stores it .* with no atomic between them"):
        store_before_lock[(5,)](lock, acc, BLOCK=BLOCK)
    assert np.isnan(acc.numpy()).all() and lock.numpy().tolist() == [0]  # all or nothing


def test_a_load_after_the_release_races() -> None:
    lock, acc = tl.to_device(np.zeros(1, np.int32), tl.i32), tl.to_device(np.zeros(BLOCK, np.float32), tl.f32)
    out = tl.to_device(np.full(4 * BLOCK, np.nan, np.float32), tl.f32)
    with pytest.raises(tl.KernelError, match=r"data race on acc\[0\]: program \(1,\) stores it .* and program "
                                             r"\(0,\) loads it"):
        load_after_release[(4,)](lock, acc, out, BLOCK=BLOCK)
    assert (acc.numpy() == 0).all() and np.isnan(out.numpy()).all()
    load_after_release[(1,)](lock, acc, out, BLOCK=BLOCK)  # one program: its own load after its store
    assert (acc.numpy() == 1).all() and (out.numpy()[:BLOCK] == 1).all()


def test_lanes_of_one_holder_still_race() -> None:
    lock, acc = tl.to_device(np.zeros(1, np.int32), tl.i32), tl.to_device(np.zeros(BLOCK, np.float32), tl.f32)
    with pytest.raises(tl.KernelError, match=r"data race on acc\[15\]: lane 0 of program \(0,\) stores it .* and "
                                             r"lane 15 of the same program stores it"):
        reversed_without_barrier[(3,)](lock, acc, BLOCK=BLOCK)
    assert (acc.numpy() == 0).all()
