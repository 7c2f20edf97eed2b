"""The reference's race detector: plain accesses to one element by two programs with no atomic
between them are an error naming both programs, both lines, the buffer and the offset; atomics,
disjoint accesses and lock- or counter-synchronised accesses are not flagged."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.builtin import builtin_of
from tile_lang_numpy.engine import IMPLS


@tl.kernel
def load_add_store(cell: Pointer[f32]) -> None:
    v = tl.load(cell)
    tl.store(cell, v + 1.0)


@tl.kernel
def atomic_count(cell: Pointer[f32]) -> None:
    tl.atomic_add(cell, 1.0)


@tl.kernel
def each_stores_row(out: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, offs.to(tl.float32) + tl.program_id(0))


@tl.kernel
def neighbour_read(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Program p doubles its row of x in place, then reads one element of the next row."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * 2.0)
    nxt = (offs + BLOCK) % n
    tl.store(out + offs, tl.load(x + nxt))


@tl.kernel
def disjoint(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """In place and gathered, every program on its own elements: no race (the barrier orders
    one lane's store before another lane's load of it)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(x + offs, v * 3.0, mask=m)
    tl.debug_barrier()
    rev = pid * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))
    tl.store(out + rev, tl.load(x + rev, mask=rev < n, other=0.0), mask=rev < n)


@tl.kernel
def last_one_sums(partial: Pointer[f32], counter: Pointer[i32], total: Pointer[f32], x: Pointer[f32],
                  BLOCK: constexpr) -> None:
    """Split reduction: each program stores its partial sum, counts itself in atomically; the
    program that counts last reads every partial (synchronised through the counter)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial + pid, tl.sum(tl.load(x + offs), axis=0))
    done = tl.atomic_add(counter, 1)
    if done == tl.num_programs(0) - 1:
        tl.store(total, tl.sum(tl.load(partial + tl.arange(0, 8)), axis=0))


@tl.kernel
def store_then_read_next(out: Pointer[f32], seen: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Program p stores its row of out (a fresh output), then reads the next program's row."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, offs.to(tl.float32), mask=offs < n)
    nxt = (offs + BLOCK) % n
    tl.store(seen + offs, tl.load(out + nxt, mask=offs < n), mask=offs < n)


@tl.kernel
def wrapping_rows(out: Pointer[f32], rows: int, BLOCK: constexpr) -> None:
    """Program p stores row p % rows: programs rows apart store the same row."""
    offs = (tl.program_id(0) % rows) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, offs.to(tl.float32) + tl.program_id(0), mask=offs < rows * BLOCK)


def _programs_on_line(message: str, kernel: tl.Kernel[Any], first: int, second: int) -> bool:
    """Both lines, counted from the kernel's ``def``, appear in the message."""
    start = kernel.fn.__code__.co_firstlineno + 1
    return f"line {start + first} of test_races.py" in message and f"line {start + second} of test_races.py" in message


def test_load_add_store_of_one_cell_is_a_race() -> None:
    with tl.backend("numpy"):
        cell = tl.to_device(np.array([5.0], np.float32), tl.f32)
        with pytest.raises(tl.KernelError) as info:
            load_add_store[(8,)](cell)
        message = str(info.value)
        assert "data race on cell[0]: program (0,) stores it (lane 0" in message
        assert "and program (7,) loads it" in message
        assert _programs_on_line(message, load_add_store, 2, 1)
        assert info.value.lineno == load_add_store.fn.__code__.co_firstlineno + 3
        assert cell.numpy().tolist() == [5.0]  # all or nothing


def test_atomics_on_one_cell_are_not_a_race() -> None:
    with tl.backend("numpy"):
        cell = tl.to_device(np.array([5.0], np.float32), tl.f32)
        atomic_count[(8,)](cell)
        assert cell.numpy().tolist() == [13.0]


def test_programs_storing_one_row_is_a_race_not_a_numpy_error() -> None:
    with tl.backend("numpy"):
        out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match=r"data race on out\[0\]: program \(1,\) stores it .* and program "
                                                 r"\(0,\) stores it"):
            each_stores_row[(8,)](out, BLOCK=16)


def test_reading_what_another_program_stored_is_a_race() -> None:
    with tl.backend("numpy"):
        n, block = 256, 32
        x = tl.to_device(np.random.default_rng(0).standard_normal(n).astype(np.float32), tl.f32)
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        with pytest.raises(tl.KernelError) as info:
            neighbour_read[(n // block,)](x, out, n, BLOCK=block)
        message = str(info.value)
        assert "data race on x[32]: program (0,) loads it (lane 0" in message
        assert "and program (1,) stores it" in message
        assert _programs_on_line(message, neighbour_read, 5, 3)


def test_a_fresh_store_entered_late_still_meets_a_later_load() -> None:
    """A store to elements nothing touched yet is entered lazily; a later load by another
    program of those elements is still a race."""
    with tl.backend("numpy"):
        n, block = 256, 32
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        seen = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        with pytest.raises(tl.KernelError) as info:
            store_then_read_next[(tl.cdiv(n, block),)](out, seen, n, BLOCK=block)
        message = str(info.value)
        assert "data race on out[32]: program (0,) loads it (lane 0" in message
        assert "and program (1,) stores it" in message
        assert _programs_on_line(message, store_then_read_next, 6, 4)
        assert np.isnan(out.numpy()).all() and np.isnan(seen.numpy()).all()  # all or nothing


@pytest.mark.parametrize("rows", [64, 3])
def test_a_fresh_store_entered_late_still_meets_a_later_store(rows: int) -> None:
    """Rows stored by the first group are entered lazily; a later group storing one again races."""
    with tl.backend("numpy"):
        out = tl.to_device(np.full(rows * 16, np.nan, np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match=rf"data race on out\[0\]: program \({rows},\) stores it .* and "
                                                 r"program \(0,\) stores it"):
            wrapping_rows[(200,)](out, rows, BLOCK=16)
        assert np.isnan(out.numpy()).all()


def test_the_check_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILE_LANG_RACE_CHECK", "0")
    with tl.backend("numpy"):
        cell = tl.to_device(np.array([5.0], np.float32), tl.f32)
        load_add_store[(8,)](cell)
        assert cell.numpy().tolist() == [6.0]  # the lockstep answer: every program read 5


@pytest.mark.parametrize("n, block", [(1000, 64), (100_000, 1024)])
def test_disjoint_in_place_and_gathered_accesses_are_not_flagged(n: int, block: int) -> None:
    with tl.backend("numpy"):
        host = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        x = tl.to_device(host, tl.f32)
        out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
        disjoint[(tl.cdiv(n, block),)](x, out, n, BLOCK=block)
        np.testing.assert_array_equal(x.numpy(), host * 3.0)
        np.testing.assert_array_equal(out.numpy(), host * 3.0)


def test_accesses_ordered_by_an_atomic_counter_are_not_flagged() -> None:
    with tl.backend("numpy"):
        host = np.random.default_rng(4).standard_normal(8 * 16).astype(np.float32)
        partial = tl.to_device(np.full(8, np.nan, np.float32), tl.f32)
        total = tl.to_device(np.full(1, np.nan, np.float32), tl.f32)
        counter = tl.to_device(np.zeros(1, np.int32), tl.i32)
        last_one_sums[(8,)](partial, counter, total, tl.to_device(host, tl.f32), BLOCK=16)
        np.testing.assert_allclose(partial.numpy(), host.astype(np.float64).reshape(8, 16).sum(axis=1), rtol=1e-5)
        np.testing.assert_allclose(total.numpy()[0], host.astype(np.float64).sum(), rtol=1e-4, atol=1e-5)


@tl.kernel
def python_mistake(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, v * tl.sum(v, axis=0))


def test_failures_inside_the_reference_are_kernel_errors_at_the_users_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """An internal failure (here a sum implementation that breaks) is a KernelError at the
    kernel's line, with the original exception chained."""
    op = builtin_of(tl.sum)
    assert op is not None

    def broken(engine: object, args: object) -> object:
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setitem(IMPLS, op, broken)
    with tl.backend("numpy"):
        host = np.random.default_rng(5).standard_normal(16).astype(np.float32)
        x = tl.to_device(host, tl.f32)
        with pytest.raises(tl.KernelError) as info:
            python_mistake[(1,)](x, BLOCK=16)
        assert info.value.filename.endswith("test_races.py")
        assert info.value.lineno == python_mistake.fn.__code__.co_firstlineno + 4
        assert "ValueError: operands could not be broadcast together" in str(info.value)
        assert isinstance(info.value.__cause__, ValueError)
        assert x.numpy().tobytes() == host.tobytes()


@tl.kernel
def doubled(x: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * 2.0)


def test_a_checked_launch_leaves_no_cycle_holding_its_blocks() -> None:
    """The logged loads of a read-only input (their lane makers hold the engine, which holds
    the race state) are dropped when the launch closes, so its blocks are freed at once rather
    than at the next garbage collection (until then the heap grows and fresh pages fault)."""
    xh = np.random.default_rng(7).standard_normal(4096).astype(np.float32)
    outh = np.full(4096, np.nan, np.float32)
    x, out = tl.wrap(xh, tl.f32), tl.wrap(outh, tl.f32)
    with tl.backend("numpy"):
        doubled[(4,)](x, out, BLOCK=1024)  # warm: the first launch fills caches
        gc.collect()
        gc.disable()
        try:
            doubled[(4,)](x, out, BLOCK=1024)
            unreachable = gc.collect()
        finally:
            gc.enable()
    assert unreachable == 0
    np.testing.assert_array_equal(outh, xh * np.float32(2.0))


@tl.kernel
def stats_into(x: Pointer[f32], stats: Pointer[f32], BLOCK: constexpr) -> None:
    """Every program sums all of x; program p writes its sum to stats[p]."""
    total = tl.sum(tl.load(x + tl.arange(0, BLOCK)), axis=0)
    tl.store(stats + tl.program_id(0), total)


def test_one_array_passed_for_two_parameters_is_one_memory_to_the_race_check() -> None:
    """FlagGems' batch_norm passes its input as its running statistics: the statistics a program
    stores are elements other programs load. Adopted twice (a NumPy array, or a view of all of
    it, given for both parameters), the two arguments are still one memory, so the race is
    found and named by both parameters; distinct arrays are not."""
    host = np.random.default_rng(3).standard_normal(8).astype(np.float32)
    with tl.backend("numpy"):
        for aliased in (host, host[:], tl.wrap(host, tl.f32)):
            with pytest.raises(tl.KernelError, match=r"data race on x/stats\[\d\]: program \(\d,\) stores it"):
                stats_into[(8,)](host, aliased, BLOCK=8)  # type: ignore[arg-type]
        out = np.full(8, np.nan, np.float32)
        stats_into[(8,)](host, out, BLOCK=8)  # type: ignore[arg-type]
        np.testing.assert_allclose(out, np.full(8, host.astype(np.float64).sum()), rtol=1e-5)


def test_an_in_place_kernel_given_one_array_twice_runs() -> None:
    """The same array as input and output of an elementwise kernel: each program reads and
    writes its own elements, which is no race."""
    host = np.random.default_rng(4).standard_normal(4096).astype(np.float32)
    want = host.astype(np.float64) * 2.0
    with tl.backend("numpy"):
        doubled[(4,)](host, host, BLOCK=1024)  # type: ignore[arg-type]
    np.testing.assert_allclose(host, want, rtol=1e-6)
