"""The reference's race check inside one program, and what it costs: a load, store or atomic by
one lane of an element another lane of the same program stored is an error naming both lanes,
both lines, the buffer and the offset, unless a tl.debug_barrier() separates them; stores of
the value already there race with nothing; the check holds no memory for masked-off lanes."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32, registry

from tests.compiler.emulator import NAME, EmuBackend
from tile_lang_numpy import shadows

_EMU = EmuBackend()


def _line(kernel: tl.Kernel[Any], offset: int) -> str:
    """``line N of this file`` for the line ``offset`` lines below the kernel's ``def``."""
    return f"line {kernel.fn.__code__.co_firstlineno + 1 + offset} of test_races_in_program.py"


def _poisoned(n: int) -> tl.Buffer[f32]:
    return tl.to_device(np.full(n, np.nan, np.float32), tl.f32)


# ------------------------------------------------------------------------------ a row, then a fix-up at one element


@tl.kernel
def margin_grad(x: Pointer[f32], target: Pointer[i32], dx: Pointer[f32], n: int, BARRIER: constexpr,
                BLOCK: constexpr) -> None:
    """Per row: dx = 1 where x > x[target], then (atomically) minus the count at the target
    (a hinge-loss gradient in two steps, as teenygrad's multi_margin_loss_backward writes it)."""
    row = tl.program_id(0) * n
    cols = tl.arange(0, BLOCK)
    x_row = tl.load(x + row + cols, mask=cols < n, other=0.0)
    t = tl.load(target + tl.program_id(0) + tl.arange(0, 1))
    x_t = tl.load(x + row + t)
    active = tl.where((x_row > x_t) & (cols < n), 1.0, 0.0)
    tl.store(dx + row + cols, active, mask=cols < n)
    if BARRIER:
        tl.debug_barrier()
    tl.atomic_add(dx + row + t, -tl.sum(active, axis=0) + tl.zeros((1,), tl.f32))


def _margin_inputs(rows: int, n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(rows * n)
    x = rng.standard_normal((rows, n)).astype(np.float32)
    target = rng.integers(1, n, rows).astype(np.int32)  # never lane 0, the atomic's own lane
    want = (x.astype(np.float64) > x[np.arange(rows), target][:, None].astype(np.float64)).astype(np.float64)
    want[np.arange(rows), target] -= want.sum(axis=1)
    return x, target, want


def test_a_store_then_an_atomic_by_another_lane_is_a_race() -> None:
    x, target, _ = _margin_inputs(6, 20)
    with tl.backend("numpy"):
        dx = _poisoned(6 * 20)
        with pytest.raises(tl.KernelError) as info:
            margin_grad[(6,)](tl.to_device(x, tl.f32), tl.to_device(target, tl.i32), dx, 20, BARRIER=0, BLOCK=32)
        message = str(info.value)
        assert f"data race on dx[{target[0]}]: lane 0 of program (0,) atomically updates it " \
               f"({_line(margin_grad, 13)}) and lane {target[0]} of the same program stores it " \
               f"({_line(margin_grad, 10)}), with no tl.debug_barrier() between them" in message
        assert np.isnan(dx.numpy()).all()  # all or nothing


@pytest.mark.parametrize("backend", ["numpy", NAME])
def test_a_barrier_between_the_store_and_the_atomic_makes_it_fine(backend: str) -> None:
    if backend == NAME:
        if _EMU.unavailable_reason() is not None:
            pytest.skip(str(_EMU.unavailable_reason()))
        registry.register(_EMU)
    x, target, want = _margin_inputs(6, 20)
    with tl.backend(backend):
        dx = _poisoned(6 * 20)
        margin_grad[(6,)](tl.to_device(x, tl.f32), tl.to_device(target, tl.i32), dx, 20, BARRIER=1, BLOCK=32)
        np.testing.assert_allclose(dx.numpy().reshape(6, 20), want, rtol=1e-6)


# ------------------------------------------------------------------------------ loads and stores of other lanes


@tl.kernel
def shift_in_place(x: Pointer[f32], out: Pointer[f32], BARRIER: constexpr, STORE: constexpr, BLOCK: constexpr) -> None:
    """Double a row in place, then read (or overwrite) it one lane to the left."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * 2.0)
    mine = tl.load(x + offs)  # a lane re-reading what it stored: fine
    if BARRIER:
        tl.debug_barrier()
    left = tl.program_id(0) * BLOCK + (tl.arange(0, BLOCK) + 1) % BLOCK
    if STORE:
        tl.store(x + left, mine + 1.0)
    else:
        tl.store(out + offs, tl.load(x + left) - mine)


@pytest.mark.parametrize("store, access", [(0, "loads"), (1, "stores")])
def test_another_lane_touching_a_stored_element_is_a_race(store: int, access: str) -> None:
    host = np.random.default_rng(3).standard_normal(4 * 16).astype(np.float32)
    with tl.backend("numpy"):
        x, out = tl.to_device(host, tl.f32), _poisoned(4 * 16)
        with pytest.raises(tl.KernelError) as info:
            shift_in_place[(4,)](x, out, BARRIER=0, STORE=store, BLOCK=16)
        message = str(info.value)
        assert f"data race on x[1]: lane 0 of program (0,) {access} it ({_line(shift_in_place, 9 if store else 11)}) " \
               f"and lane 1 of the same program stores it ({_line(shift_in_place, 3)})" in message
        assert x.numpy().tobytes() == host.tobytes()


def test_with_a_barrier_other_lanes_may_read_and_overwrite() -> None:
    host = np.random.default_rng(4).standard_normal(4 * 16).astype(np.float32)
    doubled = host.astype(np.float64).reshape(4, 16) * 2.0
    with tl.backend("numpy"):
        x, out = tl.to_device(host, tl.f32), _poisoned(4 * 16)
        shift_in_place[(4,)](x, out, BARRIER=1, STORE=0, BLOCK=16)
        np.testing.assert_allclose(out.numpy().reshape(4, 16), np.roll(doubled, -1, axis=1) - doubled, rtol=1e-6)
        shift_in_place[(4,)](x, out, BARRIER=1, STORE=1, BLOCK=16)
        np.testing.assert_allclose(x.numpy().reshape(4, 16), np.roll(doubled * 2.0 + 1.0, 1, axis=1), rtol=1e-6)


@tl.kernel
def barrier_in_a_branch(x: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    """Only even programs pass the barrier before reading their neighbour lane."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) + 1.0)
    if tl.program_id(0) % 2 == 0:
        tl.debug_barrier()
    tl.store(out + offs, tl.load(x + tl.program_id(0) * BLOCK + (tl.arange(0, BLOCK) + 1) % BLOCK))


def test_a_barrier_counts_only_for_the_programs_that_pass_it() -> None:
    with tl.backend("numpy"):
        x, out = tl.to_device(np.random.default_rng(5).standard_normal(4 * 8).astype(np.float32), tl.f32), _poisoned(32)
        with pytest.raises(tl.KernelError, match=r"data race on x\[9\]: lane 0 of program \(1,\) loads it"):
            barrier_in_a_branch[(4,)](x, out, BLOCK=8)


# ------------------------------------------------------------------------------ one store, several lanes at one element


@tl.kernel
def broadcast_store(cell: Pointer[f32], out: Pointer[f32], value: float, SAME: constexpr, BLOCK: constexpr) -> None:
    """Every lane stores to cell[pid] (one value, or its own), then every lane reads it back."""
    lanes = tl.arange(0, BLOCK)
    at = cell + tl.program_id(0) + lanes * 0
    tl.store(at, tl.zeros((BLOCK,), tl.f32) + value if SAME else lanes.to(tl.float32) + value)
    tl.store(out + tl.program_id(0) * BLOCK + lanes, tl.load(at))


def test_lanes_storing_one_value_to_one_element_is_a_broadcast() -> None:
    value = float(np.random.default_rng(6).standard_normal())
    with tl.backend("numpy"):
        cell, out = _poisoned(3), _poisoned(3 * 8)
        broadcast_store[(3,)](cell, out, value, SAME=1, BLOCK=8)
        np.testing.assert_array_equal(cell.numpy(), np.float32(value))
        np.testing.assert_array_equal(out.numpy(), np.float32(value))


def test_lanes_storing_different_values_to_one_element_race() -> None:
    with tl.backend("numpy"):
        cell, out = _poisoned(3), _poisoned(3 * 8)
        with pytest.raises(tl.KernelError) as info:
            broadcast_store[(3,)](cell, out, 0.5, SAME=0, BLOCK=8)
        assert f"data race on cell[0]: lane 1 of program (0,) stores it ({_line(broadcast_store, 4)}) and lane 0 " \
               f"of the same program stores it ({_line(broadcast_store, 4)})" in str(info.value)


# ------------------------------------------------------------------------------ programs storing one value


@tl.kernel
def everyone_stores(flag: Pointer[f32], x: Pointer[f32], out: Pointer[f32], value: float, n: int,
                    OWN: constexpr, BLOCK: constexpr) -> None:
    """Every program stores one scalar (``value``, or with OWN its own id) to one flag."""
    if OWN:
        tl.store(flag, tl.program_id(0).to(tl.float32))
    else:
        tl.store(flag, value)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n)


def test_programs_storing_the_same_value_to_one_element_do_not_race() -> None:
    n, block = 200 * 16 - 5, 16  # 200 programs: several groups
    host = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    with tl.backend("numpy"):
        flag, out = _poisoned(1), _poisoned(n)
        everyone_stores[(200,)](flag, tl.to_device(host, tl.f32), out, 1.5, n, OWN=0, BLOCK=block)
        assert flag.numpy().tolist() == [1.5]
        np.testing.assert_array_equal(out.numpy(), host.astype(np.float64) * 2.0)


def test_programs_storing_different_values_to_one_element_race() -> None:
    with tl.backend("numpy"):
        flag, out = _poisoned(1), _poisoned(64)
        with pytest.raises(tl.KernelError) as info:
            everyone_stores[(4,)](flag, tl.to_device(np.ones(64, np.float32), tl.f32), out, 0.0, 64, OWN=1, BLOCK=16)
        message = str(info.value)
        assert "data race on flag[0]: program (1,) stores it (lane 0, " in message
        assert f"and program (0,) stores it ({_line(everyone_stores, 4)})" in message
        assert np.isnan(flag.numpy()).all()


# ------------------------------------------------------------------------------ memory


@tl.kernel
def masked_add(x: Pointer[f32], y: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _peak(monkeypatch: pytest.MonkeyPatch, check: str, run: Any) -> int:
    """The traced peak of ``run()`` with the race check on ("1") or off ("0")."""
    monkeypatch.setenv("TILE_LANG_RACE_CHECK", check)
    run()  # warm: caches and pools
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_check_of_a_masked_vector_add_costs_little_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ragged tail sends the last group through the masked path; its lanes are kept as runs,
    not as per-element arrays (which once cost 7-13x the array)."""
    n = (1 << 22) - 77
    rng = np.random.default_rng(8)
    xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    outh = np.full(n, np.nan, np.float32)
    with tl.backend("numpy"):
        x, y, out = tl.wrap(xh, tl.f32), tl.wrap(yh, tl.f32), tl.wrap(outh, tl.f32)

        def run() -> None:
            masked_add[(tl.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

        on, off = _peak(monkeypatch, "1", run), _peak(monkeypatch, "0", run)
    np.testing.assert_array_equal(outh, xh + yh)
    assert on - off < outh.nbytes // 2, (on, off)


@tl.kernel
def mostly_masked(out: Pointer[f32], limit: int) -> None:
    pid = tl.program_id(0)
    tl.store(out + pid % 4, tl.load(out + pid % 4, mask=pid < limit, other=0.0) + 1.0, mask=pid < limit)


def test_masked_off_programs_cost_the_check_no_more_than_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept accesses past ``HELD_BYTES`` are scanned into runs; masked-off lanes make none."""
    with tl.backend("numpy"):
        out = tl.to_device(np.zeros(4, np.float32), tl.f32)

        def run() -> None:
            mostly_masked[(1 << 22,)](out, 1)

        on, off = _peak(monkeypatch, "1", run), _peak(monkeypatch, "0", run)
        assert out.numpy().tolist() == [4.0, 0.0, 0.0, 0.0]
    assert on - off < shadows.HELD_BYTES + (1 << 22), (on, off)  # the budget, and under a byte per program
