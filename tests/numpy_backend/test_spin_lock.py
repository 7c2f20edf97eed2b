"""A spin lock serialising programs (Triton's test_atomic_cas form) on the reference: it runs
them one at a time in grid order, each critical section seeing the one before; plain accesses
the lock orders race with nothing, and those it does not order are still races (between
programs, or between lanes of one program). Programs holding different locks (tutorial 05's
layer-norm backward) run together, as many at a time as got through the loop together, and
the race check of a holder's one-run accesses (through a shadow's uniform stretch) gives the
verdicts of the lane-by-lane check."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang_numpy import DivergenceWarning, executor, races

from tests.numpy_backend._support import poisoned

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


# ------------------------------------------------------------------------------ Triton's test_atomic_cas form


@tl.kernel
def serialized_add(data: Pointer[f32], lock: Pointer[i32], seen: Pointer[f32], SEM: constexpr) -> None:
    """test_atomic_cas's kernel (annotated), also keeping what each holder left in ``seen``."""
    offs = tl.arange(0, 128)
    ptrs = data + offs
    while tl.atomic_cas(lock, 0, 1, SEM) == 1:  # type: ignore[call-overload]  # SEM: an ordering or None
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.store(seen + tl.program_id(0) * 128 + offs, tl.load(ptrs))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@tl.kernel
def serialized_add_as_triton(data, Lock, seen, SEM: tl.constexpr):  # type: ignore[no-untyped-def]
    """The same as Triton's test writes it: no annotations."""
    offs = tl.arange(0, 128)
    ptrs = data + offs
    while tl.atomic_cas(Lock, 0, 1, SEM) == 1:  # type: ignore[call-overload]
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.store(seen + tl.program_id(0) * 128 + offs, tl.load(ptrs))
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@pytest.mark.parametrize("annotated", [True, False])
@pytest.mark.parametrize("sem", [None, "acquire", "release", "acq_rel", "relaxed"])
def test_triton_atomic_cas_form_is_exact(sem: str | None, annotated: bool) -> None:
    n = 300
    start = np.random.default_rng(3).standard_normal(128).astype(np.float32) * 100
    data, lock = tl.to_device(start.copy(), tl.f32), tl.to_device(np.zeros(1, np.int32), tl.i32)
    seen = tl.to_device(np.full((n, 128), np.nan, np.float32), tl.f32)
    ordering: dict[str, Any] = {"SEM": sem}  # None too, as Triton's test passes it
    (serialized_add if annotated else serialized_add_as_triton)[(n,)](data, lock, seen, **ordering)
    want = np.empty((n, 128), np.float32)
    acc = start.copy()
    for k in range(n):  # each holder adds 1.0 in f32 to what the one before left
        acc = acc + np.float32(1.0)
        want[k] = acc
    np.testing.assert_array_equal(seen.numpy(), want)
    np.testing.assert_array_equal(data.numpy(), want[-1])
    np.testing.assert_allclose(data.numpy(), start.astype(np.float64) + n, rtol=1e-6)
    assert lock.numpy().tolist() == [0]


# ------------------------------------------------------------------------------ a lock per group of programs


@tl.kernel
def grouped_sums(x: Pointer[f32], y: Pointer[f32], sums: Pointer[f32], locks: Pointer[i32], n: int,
                 GROUPS: constexpr, BLOCK: constexpr) -> None:
    """Tutorial 05's layer-norm backward lock: row r's y = 2x, then x is added into partial row
    r % GROUPS under that row's lock; its first holder stores (the count beside the locks says)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    xs = tl.load(x + row * n + cols, mask=mask, other=0.0)
    tl.store(y + row * n + cols, xs * 2.0, mask=mask)
    lock = locks + row % GROUPS
    count = lock + GROUPS
    partial = sums + (row % GROUPS) * n + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        xs += tl.load(partial, mask=mask)
    tl.store(partial, xs, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


def _grouped(rows: int, groups: int, n: int = 40) -> tuple[np.ndarray, tl.Buffer[Any], tl.Buffer[Any], tl.Buffer[Any]]:
    xh = np.random.default_rng(rows).standard_normal((rows, n)).astype(np.float32)
    y, sums = poisoned((rows, n), tl.f32), poisoned((groups, n), tl.f32)
    locks = tl.to_device(np.zeros(2 * groups, np.int32), tl.i32)
    grouped_sums[(rows,)](tl.to_device(xh, tl.f32), y, sums, locks, n, GROUPS=groups, BLOCK=64)
    return xh, y, sums, locks


@pytest.fixture
def group_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Each group the reference executes: its programs and whether it ran through (a group that
    raises, as one whose programs wait on each other in a spin loop, is rolled back and rerun)."""
    runs: list[tuple[int, bool]] = []
    execute = executor._execute

    def recorded(engine: Any, *rest: Any) -> None:
        try:
            execute(engine, *rest)
        except BaseException:
            runs.append((engine.nprograms, False))
            raise
        runs.append((engine.nprograms, True))

    monkeypatch.setattr(executor, "_execute", recorded)
    return runs


def test_programs_holding_different_locks_run_together(group_runs: list[tuple[int, bool]]) -> None:
    rows, groups = 300, 16
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)  # nothing runs one program at a time
        xh, y, sums, locks = _grouped(rows, groups)
    np.testing.assert_array_equal(y.numpy(), xh * np.float32(2.0))
    want = np.stack([functools.reduce(np.add, xh[k::groups]) for k in range(groups)])  # f32 sums in grid order
    np.testing.assert_array_equal(sums.numpy(), want)
    np.testing.assert_allclose(sums.numpy(), np.stack([xh[k::groups].astype(np.float64).sum(axis=0)
                                                       for k in range(groups)]), rtol=1e-5, atol=1e-5)
    assert locks.numpy().tolist() == [0] * groups + [1] * groups
    done = [programs for programs, ran in group_runs if ran]
    assert sum(done) == rows and 1 not in done  # every program ran once, none alone
    assert done[0] == groups and set(done[1:]) <= {groups, rows % groups}  # after one failed attempt: a lock each


def test_a_lock_per_program_runs_in_one_group(group_runs: list[tuple[int, bool]]) -> None:
    xh, y, sums, locks = _grouped(40, 64)  # more locks than programs: no program waits
    assert group_runs == [(40, True)]
    np.testing.assert_array_equal(sums.numpy()[:40], xh)
    assert np.isnan(sums.numpy()[40:]).all()  # the partial rows no program took stay as they were


def test_a_single_lock_still_runs_one_program_at_a_time(group_runs: list[tuple[int, bool]]) -> None:
    xh, _, sums, _ = _grouped(70, 1)
    assert [ran for _, ran in group_runs].count(False) >= 1  # the lockstep attempt, rolled back
    assert [programs for programs, ran in group_runs if ran] == [1] * 70
    np.testing.assert_array_equal(sums.numpy()[0], functools.reduce(np.add, xh))


@tl.kernel
def two_locks_one_block(locks: Pointer[i32], acc: Pointer[f32], BLOCK: constexpr) -> None:
    """Programs take lock pid % 2 but all update one block: the two locks do not order them."""
    offs = tl.arange(0, BLOCK)
    lock = locks + tl.program_id(0) % 2
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


def test_programs_under_different_locks_still_race() -> None:
    locks, acc = tl.to_device(np.zeros(2, np.int32), tl.i32), tl.to_device(np.zeros(BLOCK, np.float32), tl.f32)
    with pytest.raises(tl.KernelError, match=r"data race on acc\[0\]: program \(0,\) stores it .* and program "
                                             r"\(1,\) loads it"):  # the two holders run together
        two_locks_one_block[(10,)](locks, acc, BLOCK=BLOCK)
    assert (acc.numpy() == 0).all() and locks.numpy().tolist() == [0, 0]


# ------------------------------------------------------------------------------ the race check's stretches


@tl.kernel
def one_skips_the_lock(lock: Pointer[i32], acc: Pointer[f32], SKIP: constexpr, BLOCK: constexpr) -> None:
    """Program SKIP updates the block without taking the lock."""
    offs = tl.arange(0, BLOCK)
    if tl.program_id(0) != SKIP:
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    tl.debug_barrier()
    if tl.program_id(0) != SKIP:
        tl.atomic_xchg(lock, 0)


@tl.kernel
def one_rereads(lock: Pointer[i32], acc: Pointer[f32], out: Pointer[f32], WHO: constexpr, BARRIER: constexpr,
                BLOCK: constexpr) -> None:
    """Program WHO reads the upper half of the block it stored with the lower half of its lanes
    (each element by another lane than stored it), after a barrier or not."""
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    if BARRIER:
        tl.debug_barrier()
    if tl.program_id(0) == WHO:
        half = tl.arange(0, BLOCK // 2)
        tl.store(out + half, tl.load(acc + BLOCK // 2 + half))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@tl.kernel
def late_reader(lock: Pointer[i32], acc: Pointer[f32], out: Pointer[f32], WHO: constexpr, BLOCK: constexpr) -> None:
    """Holders store a second block around updating the first; program WHO reads the second after
    releasing the lock (its first reader), so the next holder's first store races with that read."""
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + BLOCK + offs, tl.full((BLOCK,), 100.0, tl.f32) + tl.program_id(0))  # not what is there
    tl.store(acc + offs, tl.load(acc + offs) + 1.0)
    tl.store(acc + BLOCK + offs, tl.full((BLOCK,), 2.0, tl.f32) + tl.program_id(0))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)
    if tl.program_id(0) == WHO:
        tl.store(out + offs, tl.load(acc + BLOCK + offs))


@tl.kernel
def partly_masked(lock: Pointer[i32], acc: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    """Each holder adds to a prefix of the block that grows with its id, then reads all of it."""
    offs = tl.arange(0, BLOCK)
    pid = tl.program_id(0)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + 1.0, mask=offs < pid)
    tl.store(out + pid * BLOCK + offs, tl.load(acc + offs))
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


def _outcome(case: str) -> tuple[str, list[float]]:
    """What a launch of ``case`` raises (or "ok") and what its buffers then hold."""
    lock = tl.to_device(np.zeros(1, np.int32), tl.i32)
    acc = tl.to_device(np.arange(2 * BLOCK, dtype=np.float32), tl.f32)
    out = tl.to_device(np.full(12 * BLOCK, np.nan, np.float32), tl.f32)
    try:
        if case == "skip":
            one_skips_the_lock[(12,)](lock, acc, SKIP=7, BLOCK=BLOCK)
        elif case.startswith("reread"):
            one_rereads[(12,)](lock, acc, out, WHO=5, BARRIER=case.endswith("barrier"), BLOCK=BLOCK)
        elif case == "late reader":
            late_reader[(12,)](lock, acc, out, WHO=6, BLOCK=BLOCK)
        else:
            partly_masked[(12,)](lock, acc, out, BLOCK=BLOCK)
        raised = "ok"
    except tl.KernelError as exc:
        raised = str(exc)
    return raised, [*acc.numpy().tolist(), *out.numpy().tolist(), *lock.numpy().tolist()]


@pytest.mark.parametrize("case", ["skip", "reread", "reread after a barrier", "late reader", "masked"])
def test_stretches_give_the_general_check_verdict(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _outcome(case)
    monkeypatch.setattr(races, "stretch_of", lambda *_: None)  # every access lane by lane
    slow = _outcome(case)
    assert repr(fast) == repr(slow)  # repr: NaN equals NaN
    first_store = late_reader.fn.__code__.co_firstlineno + 7  # the next holder's first store races
    expected = {"skip": r"data race on acc\[0\]: program \(7,\) loads it .* and program \(6,\) stores it",
                "reread": r"data race on acc\[8\]: lane 0 of program \(5,\) loads it .* and lane 8 of the same "
                          r"program stores it",
                "late reader": rf"data race on acc\[16\]: program \(7,\) stores it \(lane 0, line {first_store} .* "
                               r"and program \(6,\) loads it"}
    if case in expected:
        assert re.search(expected[case], fast[0]), fast[0]
    else:
        assert fast[0] == "ok"


@tl.kernel
def add_signed_zeros(x: Pointer[f32], out: Pointer[f32]) -> None:
    v = tl.load(x)
    tl.store(out, v + 0.0)
    tl.store(out + 1, v + -0.0)
    tl.store(out + 2, v * 0.0)
    tl.store(out + 3, v * -0.0)


def test_constants_that_compare_equal_stay_apart() -> None:
    out = poisoned(4, tl.f32)
    add_signed_zeros[(1,)](tl.to_device(np.array([-0.0], np.float32), tl.f32), out)
    assert np.signbit(out.numpy()).tolist() == [False, True, True, False]
