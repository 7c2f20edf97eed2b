"""The shortcuts that keep a small launch cheap give the same answers and errors as the general
paths: argument binding of builtins by keyword, position and default; one-program launches
(no race bookkeeping) and 1-D grids (loads as plain arrays); a scalar pointer plus a block."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import builtin
from tile_lang.builtin import Builtin
from tile_lang import Pointer, constexpr, f32
from tile_lang.errors import KernelError

from tests.numpy_backend._support import poisoned


@tl.kernel
def scaled_add(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(pointer=x_ptr + offs, other=0.0, mask=mask)  # keywords in another order than declared
    y = tl.load(y_ptr + offs, mask)  # mask by position, other by default
    tl.store(out_ptr + offs, x * 2.0 + y, mask=mask)


@tl.kernel
def last_lane_wins(out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """One program storing lanes 0..BLOCK-1 to four elements: a race between its lanes (GPU
    threads); without the race check later lanes win."""
    lanes = tl.arange(0, BLOCK)
    tl.store(out_ptr + lanes % 4, lanes.to(tl.float32))


@pytest.mark.parametrize("programs, n", [(1, 1024), (1, 1000), (2, 2048), (3, 2900), (5, 4097)])
def test_small_launches_match_numpy(programs: int, n: int) -> None:
    rng = np.random.default_rng(programs * 10_000 + n)
    xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = poisoned(programs * 1024, tl.f32)
    with tl.backend("numpy"):
        scaled_add[(programs,)](tl.to_device(xh, tl.f32), tl.to_device(yh, tl.f32), out, n, BLOCK=1024)
    got = out.numpy()
    np.testing.assert_allclose(got[:n], xh.astype(np.float64) * 2 + yh, rtol=1e-6)
    assert np.isnan(got[n:]).all()  # masked-off lanes are never written


@dataclass
class Recorder:
    """An engine that returns the arguments a builtin was bound to."""

    def call(self, op: Builtin, args: Mapping[str, Any]) -> Any:
        return dict(args)


def test_binding_by_keyword_position_and_default_agree() -> None:
    load: Callable[..., Any] = tl.load
    with builtin.engine(Recorder()):
        by_keyword = load(other=0.5, mask="m", pointer="p")
        by_position = load("p", "m", 0.5)
        with_defaults = load("p", mask="m", other=0.5, volatile=False)
        with pytest.raises(TypeError, match=r"tl\.load: .*multiple values for argument 'pointer'"):
            load("p", pointer="q")
        with pytest.raises(TypeError, match=r"tl\.load: .*unexpected keyword argument 'masks'"):
            load("p", masks="m")
        with pytest.raises(TypeError, match=r"tl\.load: .*missing a required argument: 'pointer'"):
            load(mask="m")
    assert by_keyword == by_position == with_defaults
    assert by_keyword["cache_modifier"] == "" and by_keyword["volatile"] is False


def test_one_program_duplicate_lanes_are_a_race_between_its_lanes() -> None:
    out = poisoned(8, tl.f32)
    with tl.backend("numpy"), pytest.raises(KernelError, match=r"data race on out_ptr\[0\]: lane 4 of program \(0,\) "
                                                               r"stores it .* and lane 0 of the same program stores it"):
        last_lane_wins[(1,)](out, BLOCK=16)
    assert np.isnan(out.numpy()).all()


def test_one_program_duplicate_lanes_keep_the_last_without_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILE_LANG_RACE_CHECK", "0")
    out = poisoned(8, tl.f32)
    with tl.backend("numpy"):
        last_lane_wins[(1,)](out, BLOCK=16)
    expected = np.full(8, np.nan, np.float32)
    expected[:4] = [12.0, 13.0, 14.0, 15.0]
    np.testing.assert_array_equal(out.numpy(), expected)


def test_two_programs_duplicate_lanes_are_still_a_race() -> None:
    out = poisoned(8, tl.f32)
    with tl.backend("numpy"), pytest.raises(KernelError, match=r"data race on out_ptr.*line \d+ of test_launch_fast_paths"):
        last_lane_wins[(2,)](out, BLOCK=16)
    assert np.isnan(out.numpy()).all()


@tl.kernel
def shared_scalar_ops(out_ptr: Pointer[tl.i32], k_arg: int) -> None:
    """A scalar every program shares (``k``, and ``program_id`` in a one-program launch) with
    Python ints: taken in Python arithmetic, it must give what the general NumPy path gives."""
    pid, k = tl.program_id(0), tl.full((), k_arg, tl.int32)
    sums = (k + 7, k - 7, k * 3, 7 + k, 3 * k)
    flags = (k < 5, 5 < k, k >= 5, 5 >= k, k == 9, k != 9, k > -3)
    for i in tl.static_range(5):
        tl.store(out_ptr + pid * 13 + i, sums[i])
    for j in tl.static_range(7):
        tl.store(out_ptr + pid * 13 + 5 + j, tl.where(flags[j], 1, 0))
    tl.store(out_ptr + pid * 13 + 12, pid * 5 - 2)


def _shared_expected(k: int, programs: int) -> np.ndarray[Any, Any]:
    row = [k + 7, k - 7, k * 3, 7 + k, 3 * k, k < 5, 5 < k, k >= 5, 5 >= k, k == 9, k != 9, k > -3]
    return np.array([[*row, pid * 5 - 2] for pid in range(programs)], np.int32).reshape(-1)


@pytest.mark.parametrize("programs", [1, 3])
def test_shared_scalar_arithmetic_matches_python(programs: int) -> None:
    rng = np.random.default_rng(programs)
    for k in [5, 9, 0, -1, 2**31 - 8, -(2**31) + 7, *rng.integers(-10**6, 10**6, 6).tolist()]:
        k = int(k)
        if not -(2**31) <= 3 * k < 2**31:
            continue
        out = tl.to_device(np.full(13 * programs, -99, np.int32), tl.i32)
        with tl.backend("numpy"):
            shared_scalar_ops[(programs,)](out, k)
        np.testing.assert_array_equal(out.numpy(), _shared_expected(k, programs))


@pytest.mark.parametrize("k", [2**30, 2**31 - 7, -(2**31) + 6])
def test_shared_scalar_overflow_is_still_an_error(k: int) -> None:
    out = tl.to_device(np.full(13, -99, np.int32), tl.i32)
    with tl.backend("numpy"), pytest.raises(KernelError, match="signed integer overflow"):
        shared_scalar_ops[(1,)](out, k)
    assert (out.numpy() == -99).all()


@tl.kernel
def unsigned_shared(out_ptr: Pointer[tl.u32], k_ptr: Pointer[tl.u32]) -> None:
    k = tl.load(k_ptr)
    tl.store(out_ptr, k + 5)
    tl.store(out_ptr + 1, k * 3)


def test_shared_unsigned_arithmetic_wraps() -> None:
    out = tl.to_device(np.zeros(2, np.uint32), tl.u32)
    with tl.backend("numpy"):
        unsigned_shared[(1,)](out, tl.to_device(np.array([2**32 - 2], np.uint32), tl.u32))
    np.testing.assert_array_equal(out.numpy(), np.array([3, (3 * (2**32 - 2)) % 2**32], np.uint32))


def test_a_launch_reuses_the_previous_launchs_undo_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal's copies of overwritten memory go back to a pool: the next launch of the same
    size copies into the same buffers (fresh ones made 2^22-element launches fault in new pages
    each time, 5x slower), and the results stay right."""
    from tile_lang_numpy import journal

    monkeypatch.setattr(journal, "_SPARE", {})
    monkeypatch.setattr(journal, "_spare_bytes", 0)
    n = 1 << 16
    rng = np.random.default_rng(16)
    xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = tl.to_device(xh, tl.f32), tl.to_device(yh, tl.f32)
    with tl.backend("numpy"):
        out = poisoned(n, tl.f32)
        scaled_add[(n // 1024,)](x, y, out, n, BLOCK=1024)
        kept = [a.ctypes.data for a in journal._SPARE[(n, np.dtype(np.float32))]]
        out = poisoned(n, tl.f32)
        scaled_add[(n // 1024,)](x, y, out, n, BLOCK=1024)
        again = [a.ctypes.data for a in journal._SPARE[(n, np.dtype(np.float32))]]
    assert len(kept) == 1 and again == kept
    np.testing.assert_allclose(out.numpy(), xh.astype(np.float64) * 2 + yh, rtol=1e-6)


@tl.kernel
def per_program_int_ops(out_ptr: Pointer[tl.i32], k_ptr: Pointer[tl.i32], SHIFT: constexpr) -> None:
    """A per-program i32 scalar with Python ints (the int takes the block's dtype): run on the
    block's array, it must give what Python's arithmetic gives."""
    pid = tl.program_id(0)
    k = tl.load(k_ptr + pid)
    results = (k + 7, k - 7, k * 3, 7 - k, 3 * k, k >> SHIFT, k & 5, (k < 5).to(tl.int32), (5 <= k).to(tl.int32))
    for i in tl.static_range(9):
        tl.store(out_ptr + pid * 9 + i, results[i])


def test_per_program_scalars_with_python_ints_match_python() -> None:
    ks = np.random.default_rng(9).integers(-10**8, 10**8, 96).astype(np.int32)
    out = tl.to_device(np.full(9 * ks.size, -99, np.int32), tl.i32)
    with tl.backend("numpy"):
        per_program_int_ops[(ks.size,)](out, tl.to_device(ks, tl.i32), SHIFT=3)
    k = ks.astype(np.int64)[:, None]
    want = np.concatenate([k + 7, k - 7, k * 3, 7 - k, 3 * k, k >> 3, k & 5, k < 5, 5 <= k], axis=1)
    np.testing.assert_array_equal(out.numpy(), want.reshape(-1))


@pytest.mark.parametrize("big, match", [(2**30, "signed integer overflow: .* \\* 3 does not fit in i32"),
                                        (-(2**31) + 5, "signed integer overflow: .* - 7 does not fit in i32")])
def test_per_program_scalars_with_python_ints_still_overflow(big: int, match: str) -> None:
    ks = np.zeros(64, np.int32)
    ks[37] = big
    out = tl.to_device(np.full(9 * ks.size, -99, np.int32), tl.i32)
    with tl.backend("numpy"), pytest.raises(KernelError, match=match):
        per_program_int_ops[(ks.size,)](out, tl.to_device(ks, tl.i32), SHIFT=3)
    assert (out.numpy() == -99).all()


@tl.kernel
def below_count(x_ptr: Pointer[f32], k_ptr: Pointer[tl.i32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """Lanes below a per-program count read forward and mirrored (row 0's mirrored lanes past
    the start of ``x`` are masked off), the rest poison; and a choice between the two."""
    row = tl.program_id(0)
    k = tl.load(k_ptr + row)
    lanes = tl.arange(0, BLOCK)
    ahead = tl.load(x_ptr + row * BLOCK + lanes, mask=lanes < k)
    back = tl.load(x_ptr + row * BLOCK - lanes, mask=lanes < k)
    chosen = tl.where(lanes % 3 == 0, ahead, back)
    tl.store(out_ptr + row * 3 * BLOCK + lanes, ahead)
    tl.store(out_ptr + (row * 3 + 1) * BLOCK + lanes, back)
    tl.store(out_ptr + (row * 3 + 2) * BLOCK + lanes, chosen)


@pytest.mark.parametrize("rows, block, most", [(8, 16, 16), (512, 256, 3), (512, 256, 256), (300, 512, 40)])
def test_loads_below_a_per_program_count_are_poison_beyond_it(rows: int, block: int, most: int) -> None:
    """Narrow counts (a few lanes live: only those read), wide ones, and blocks past the size
    from which a masked load fills its copy in place and ``tl.where`` selects by copies."""
    rng = np.random.default_rng(rows + block + most)
    xh = rng.standard_normal(rows * block).astype(np.float32)
    ks = rng.integers(0, most + 1, rows).astype(np.int32)
    ks[0] = min(ks[0], 1)  # row 0 mirrored: lane i > 0 would read x[-i]
    out = poisoned(3 * rows * block, tl.f32)
    with tl.backend("numpy"):
        below_count[(rows,)](tl.to_device(xh, tl.f32), tl.to_device(ks, tl.i32), out, BLOCK=block)
    lanes, starts = np.arange(block), np.arange(rows)[:, None] * block
    live = lanes < ks[:, None]
    ahead = np.where(live, xh[np.where(live, starts + lanes, 0)], np.nan)
    back = np.where(live, xh[np.where(live, starts - lanes, 0)], np.nan)
    chosen = np.where(lanes % 3 == 0, ahead, back)
    np.testing.assert_array_equal(out.numpy().reshape(rows, 3, block), np.stack([ahead, back, chosen], axis=1))


def test_a_live_lane_before_memory_is_still_out_of_bounds() -> None:
    ks = np.zeros(512, np.int32)
    ks[0] = 3
    out = poisoned(3 * 512 * 256, tl.f32)
    with tl.backend("numpy"), pytest.raises(KernelError, match=r"out-of-bounds load through x_ptr: program \(0,\), lane 1, offset -1"):
        below_count[(512,)](tl.to_device(np.ones(512 * 256, np.float32), tl.f32), tl.to_device(ks, tl.i32), out,
                            BLOCK=256)
