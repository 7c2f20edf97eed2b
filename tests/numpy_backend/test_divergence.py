"""Control flow that differs between the programs of a group runs masked (SIMT), not one program
at a time: each kernel is checked against NumPy float64 on random inputs with NaN-poisoned
outputs, with a DivergenceWarning (the sign of the per-program fallback) made an error."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang_numpy import DivergenceWarning

from benchmarks.reference_bench import maxpool2d_kernel, np_maxpool2d, reflect_pad_kernel, reflect_pad_rows_kernel
from tests.numpy_backend._support import poisoned


@pytest.fixture(autouse=True)
def masked_only() -> Iterator[None]:
    """Every test here runs on the reference and must not fall back to one program at a time
    (unless it says so with pytest.warns)."""
    with tl.backend("numpy"), warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        yield


def f32s(rng: np.random.Generator, *shape: int) -> tl.Buffer[f32]:
    return tl.to_device(rng.standard_normal(shape).astype(np.float32), tl.f32)


# ------------------------------------------------------------------------------ if / else


@tl.kernel
def signs(x: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    """Per program: scale by a factor chosen with if/elif/else on pid; a Python int merged too."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    shift = 0
    if pid % 3 == 0:
        v = v * 2.0
        shift = 1
    elif pid % 3 == 1:
        v = -v
    else:
        v = v + 10.0
        shift = 5
    tl.store(out + offs, v + shift)


def test_if_elif_else_on_pid() -> None:
    rng = np.random.default_rng(0)
    programs, block = 13, 16
    x = f32s(rng, programs * block)
    out = poisoned(programs * block, tl.f32)
    signs[(programs,)](x, out, BLOCK=block)
    rows = x.numpy().astype(np.float64).reshape(programs, block)
    pid = np.arange(programs)[:, None]
    want = np.where(pid % 3 == 0, rows * 2 + 1, np.where(pid % 3 == 1, -rows, rows + 15))
    np.testing.assert_allclose(out.numpy(), want.reshape(-1), rtol=1e-6)


# ------------------------------------------------------------------------------ loops


@tl.kernel
def strided_sums(x: Pointer[f32], starts: Pointer[i32], stops: Pointer[i32], out: Pointer[f32], n_cols: int,
                 BLOCK: constexpr) -> None:
    """Program p sums rows starts[p], starts[p] + 2, ... below stops[p], weighted by the row."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.f32)
    for r in range(tl.load(starts + pid), tl.load(stops + pid), 2):
        acc += tl.load(x + r * n_cols + cols, mask=cols < n_cols, other=0.0) * r
    tl.store(out + pid * n_cols + cols, acc, mask=cols < n_cols)


def test_per_program_loop_bounds() -> None:
    rng = np.random.default_rng(1)
    programs, rows, cols = 11, 20, 30
    x = f32s(rng, rows, cols)
    starts = rng.integers(0, rows, programs).astype(np.int32)
    stops = rng.integers(0, rows + 1, programs).astype(np.int32)
    out = poisoned((programs, cols), tl.f32)
    strided_sums[(programs,)](x, tl.to_device(starts, tl.i32), tl.to_device(stops, tl.i32), out, cols, BLOCK=32)
    xs = x.numpy().astype(np.float64)
    want = np.stack([sum((xs[r] * r for r in range(s, e, 2)), np.zeros(cols)) for s, e in zip(starts, stops)])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@tl.kernel
def first_above(x: Pointer[f32], out: Pointer[i32], total: Pointer[f32], n: int, limit: float) -> None:
    """From its own start, each program adds up x until the sum passes limit (a while loop with a
    data-dependent exit); it stores how many it took and the sum."""
    pid = tl.program_id(0)
    i: int = pid
    acc = tl.full((), 0.0, tl.f32)
    while acc <= limit and i < n:
        acc += tl.load(x + i)
        i += 1
    tl.store(out + pid, i - pid)
    tl.store(total + pid, acc)


def test_while_with_a_data_dependent_exit() -> None:
    rng = np.random.default_rng(2)
    n = 200
    xh = rng.random(n).astype(np.float32)
    taken, total = poisoned(n, tl.i32), poisoned(n, tl.f32)
    first_above[(n,)](tl.to_device(xh, tl.f32), taken, total, n, 3.0)
    want_count, want_sum = [], []
    for p in range(n):
        acc, i = np.float32(0), p
        while acc <= 3.0 and i < n:
            acc, i = np.float32(acc + xh[i]), i + 1
        want_count.append(i - p)
        want_sum.append(acc)
    assert taken.numpy().tolist() == want_count
    np.testing.assert_allclose(total.numpy(), want_sum, rtol=1e-6)


# ------------------------------------------------------------------------------ return (break and continue are refused, as by the compiler)


@tl.kernel
def jumps(x: Pointer[f32], counts: Pointer[i32], out: Pointer[f32], n_rows: int, BLOCK: constexpr) -> None:
    """Programs past n_rows return at once; the others add rows 0..counts[pid], skipping rows
    whose first element is negative, until the first row whose first element exceeds 1.5."""
    pid = tl.program_id(0)
    if pid >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.f32)
    stopped = tl.full((), 0, tl.i32) > 0
    for r in range(tl.load(counts + pid)):
        head = tl.load(x + r * BLOCK)
        stopped = stopped | (head > 1.5)
        if not stopped and head >= 0.0:
            acc += tl.load(x + r * BLOCK + cols)
    tl.store(out + pid * BLOCK + cols, acc)


def test_nested_branches_in_per_program_loops_and_early_return() -> None:
    rng = np.random.default_rng(3)
    n_rows, block, programs = 12, 8, 16
    xh = rng.standard_normal((n_rows, block)).astype(np.float32)
    counts = rng.integers(0, n_rows + 1, programs).astype(np.int32)
    out = poisoned((programs, block), tl.f32)
    jumps[(programs,)](tl.to_device(xh, tl.f32), tl.to_device(counts, tl.i32), out, n_rows, BLOCK=block)
    want = np.full((programs, block), np.nan)
    for p in range(n_rows):
        acc = np.zeros(block)
        for r in range(counts[p]):
            if xh[r, 0] < 0:
                continue
            if xh[r, 0] > 1.5:
                break
            acc += xh[r]
        want[p] = acc
    got = out.numpy()
    np.testing.assert_allclose(got[:n_rows], want[:n_rows], rtol=1e-5, atol=1e-6)
    assert np.isnan(got[n_rows:]).all()  # the programs that returned wrote nothing


# ------------------------------------------------------------------------------ nested, and @tl.func


@tl.func
def clamp_index(i: int, n: int) -> int:
    """Returns early, differently per program."""
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@tl.kernel
def nested(x: Pointer[f32], out: Pointer[f32], n: int, K: constexpr) -> None:
    """Program p: for j in 0..p % 5, for k in 0..K, while below the row sum, add x[clamp(p + j - k)],
    every other j skipped when p is odd."""
    pid = tl.program_id(0)
    acc = tl.full((), 0.0, tl.f32)
    for j in range(pid % 5):
        if not (pid % 2 == 1 and j % 2 == 1):
            for k in range(K):
                v = tl.load(x + clamp_index(pid + j - k, n))
                steps = 0
                while steps < 3 and (v > 0.0 or steps == 0):
                    acc += v
                    v = v - 0.5
                    steps += 1
    tl.store(out + pid, acc)


def test_nested_constructs_and_a_func_that_returns_early() -> None:
    rng = np.random.default_rng(4)
    n, K = 40, 3
    xh = rng.standard_normal(n).astype(np.float32)
    out = poisoned(n, tl.f32)
    nested[(n,)](tl.to_device(xh, tl.f32), out, n, K=K)
    want = np.zeros(n)
    for p in range(n):
        for j in range(p % 5):
            if p % 2 == 1 and j % 2 == 1:
                continue
            for k in range(K):
                v = float(xh[min(max(p + j - k, 0), n - 1)])
                steps = 0
                while steps < 3 and (v > 0 or steps == 0):
                    want[p] += v
                    v -= 0.5
                    steps += 1
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@tl.kernel
def short_circuits(x: Pointer[f32], out: Pointer[f32], n: int) -> None:
    """`and` guards a load that would be out of bounds; `or`, `not`, comparisons joined by `&` and
    a conditional expression, all per program."""
    pid = tl.program_id(0)
    ok = pid < n and tl.load(x + pid) > 0.0
    edge = pid == 0 or not pid < n - 1
    middle = (2 < pid) & (pid < 6)
    value = 1.0 if ok else -1.0
    tl.store(out + pid, value + 10.0 * edge + 100.0 * middle)


def test_boolean_operators_and_conditional_expressions() -> None:
    rng = np.random.default_rng(5)
    n = 9
    xh = rng.standard_normal(n).astype(np.float32)
    out = poisoned(n + 3, tl.f32)
    short_circuits[(n + 3,)](tl.to_device(xh, tl.f32), out, n)
    pid = np.arange(n + 3)
    ok = (pid < n) & (np.concatenate([xh, np.zeros(3)]) > 0)
    want = np.where(ok, 1.0, -1.0) + 10.0 * ((pid == 0) | (pid >= n - 1)) + 100.0 * ((pid > 2) & (pid < 6))
    np.testing.assert_array_equal(out.numpy(), want)


# ------------------------------------------------------------------------------ masked-off programs


@tl.kernel
def guarded(x: Pointer[f32], out: Pointer[f32], hits: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    """Programs past the data load, store and count with no mask of their own: masked off by the if."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid * BLOCK < n:
        tl.store(out + offs, tl.load(x + offs) * 3.0)
        tl.atomic_add(hits + pid, 1)
    else:
        tl.atomic_add(hits + pid * 1000, 1)  # out of bounds for every program but the last


def test_masked_off_programs_never_fault_write_or_count() -> None:
    rng = np.random.default_rng(6)
    block, full = 16, 5
    x = f32s(rng, full * block)
    out = poisoned(full * block, tl.f32)
    hits = tl.to_device(np.zeros(6 * 1000, np.int32), tl.i32)
    with pytest.raises(tl.KernelError, match=r"out-of-bounds tl.atomic_add through hits: program \(6,\)"):
        guarded[(7,)](x, out, hits, full * block, BLOCK=block)
    assert np.isnan(out.numpy()).all() and not hits.numpy().any()  # all or nothing
    guarded[(6,)](x, out, hits, full * block, BLOCK=block)
    np.testing.assert_allclose(out.numpy(), x.numpy().astype(np.float64) * 3.0, rtol=1e-6)
    want = np.zeros(6000, np.int32)
    want[:full] = 1
    want[5000] = 1
    assert np.array_equal(hits.numpy(), want)


@tl.kernel
def one_writer(out: Pointer[f32], cell: Pointer[f32], BLOCK: constexpr) -> None:
    """Program 0 stores the shared cell; the others store their own rows (no race)."""
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(cell, 1.0)
    else:
        tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.f32) + pid)


@tl.kernel
def two_writers(cell: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    if pid % 4 == 1:
        tl.store(cell, pid * 1.0)


def test_masked_off_programs_do_not_count_for_the_race_check() -> None:
    out, cell = poisoned((8, 4), tl.f32), poisoned(1, tl.f32)
    one_writer[(8,)](out, cell, BLOCK=4)
    assert cell.numpy().tolist() == [1.0]
    np.testing.assert_array_equal(out.numpy()[1:], np.arange(1, 8)[:, None] * np.ones(4))
    with pytest.raises(tl.KernelError, match=r"data race on cell\[0\]: program \(5,\) stores it .* program \(1,\) "
                                             r"stores it"):
        two_writers[(8,)](cell)
    assert cell.numpy().tolist() == [1.0]


# ------------------------------------------------------------------------------ the fallback


@tl.kernel
def spin_lock_sum(lock: Pointer[i32], total: Pointer[f32], x: Pointer[f32]) -> None:
    """Each program takes a spin lock, adds its value to total, and releases the lock."""
    pid = tl.program_id(0)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(total, tl.load(total) + tl.load(x + pid))
    tl.atomic_xchg(lock, 0)


def test_a_spin_lock_falls_back_with_one_warning() -> None:
    rng = np.random.default_rng(7)
    n = 6
    xh = rng.standard_normal(n).astype(np.float32)
    x = tl.to_device(xh, tl.f32)
    line = spin_lock_sum.fn.__code__.co_firstlineno + 4
    for launch in range(2):
        total, lock = tl.to_device(np.zeros(1, np.float32), tl.f32), tl.to_device(np.zeros(1, np.int32), tl.i32)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DivergenceWarning)
            spin_lock_sum[(n,)](lock, total, x)
        np.testing.assert_allclose(total.numpy()[0], xh.astype(np.float64).sum(), rtol=1e-5)
        assert lock.numpy().tolist() == [0]
        messages = [str(w.message) for w in caught if w.category is DivergenceWarning]
        if launch == 0:
            assert len(messages) == 1 and caught[0].lineno == line
            assert messages[0].startswith("kernel spin_lock_sum: tl.atomic_cas in a while loop that some programs "
                                          "of the group have left")
            assert f"(line {line})" in messages[0] and "run one at a time" in messages[0]
        else:
            assert messages == []  # once per kernel and line


# ------------------------------------------------------------------------------ the benchmark kernels


def test_rust_shaped_maxpool2d() -> None:
    rng = np.random.default_rng(8)
    planes, h, w, k, stride, pad = 3, 11, 9, 3, 2, 1
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    x = f32s(rng, planes, h, w)
    out = poisoned((planes, oh, ow), tl.f32)
    maxpool2d_kernel[(ow, oh, planes)](x, out, h, w, oh, ow, K=k, STRIDE=stride, PAD=pad)
    np.testing.assert_array_equal(out.numpy(), np_maxpool2d(x.numpy().astype(np.float64), k, stride, pad))


@pytest.mark.parametrize("rows", [False, True])
def test_reflection_pad(rows: bool) -> None:
    rng = np.random.default_rng(9)
    planes, h, w, pad = 2, 7, 10, 3
    x = f32s(rng, planes, h, w)
    out = poisoned((planes, h + 2 * pad, w + 2 * pad), tl.f32)
    if rows:
        reflect_pad_rows_kernel[(h + 2 * pad, planes)](x, out, h, w, PAD=pad, BLOCK=16)
    else:
        reflect_pad_kernel[(w + 2 * pad, h + 2 * pad, planes)](x, out, h, w, PAD=pad)
    want = np.pad(x.numpy().astype(np.float64), ((0, 0), (pad, pad), (pad, pad)), mode="reflect")
    np.testing.assert_array_equal(out.numpy(), want)
