"""Reading a local variable that a program never bound (a name bound in a branch it did not take)
is Python's UnboundLocalError, a KernelError at the line of the read naming the variable, on the
reference's checked path and when programs run together (SIMT), even where other programs of the
launch did bind it; a name only a runtime loop bound (its body's, or its variable with no earlier
binding) is the shared rule's error there, whatever each program's trip count. Outputs are
poisoned and stay untouched by a failed launch (all or nothing); where every program bound the
variable, its value is Python's."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.errors import KernelError
from tile_lang.ops import forms
from tile_lang.semantics.dispatch import apply
from tile_lang_numpy import simt

from tests.numpy_backend._support import poisoned

STEP = 3
X_SIZE = 64


@pytest.fixture(autouse=True)
def reference() -> Any:
    with tl.backend("numpy"):
        yield


@tl.kernel
def index_after(starts: Pointer[i32], trips: Pointer[i32], x: Pointer[f32], out_i: Pointer[i32], out_v: Pointer[f32],
                S: constexpr) -> None:
    """Program ``pid`` runs ``trips[pid]`` trips from ``starts[pid]`` by ``S`` (a negative count
    returns first), then stores the loop variable and a value only the body binds."""
    pid = tl.program_id(0)
    start = tl.load(starts + pid)
    n = tl.load(trips + pid)
    if n < 0:
        return
    for i in range(start, start + n * S, S):
        v = tl.load(x + i)
        w = v * 2.0 + 1.0
    tl.store(out_i + pid, i)  # read: i
    tl.store(out_v + pid, w)


@tl.kernel
def value_after(starts: Pointer[i32], trips: Pointer[i32], x: Pointer[f32], out_i: Pointer[i32], out_v: Pointer[f32],
                S: constexpr) -> None:
    """As index_after, the body's value read first."""
    pid = tl.program_id(0)
    start = tl.load(starts + pid)
    n = tl.load(trips + pid)
    for i in range(start, start + n * S, S):
        w = tl.load(x + i) * 2.0 + 1.0
    w += 0.0  # read: w
    tl.store(out_v + pid, w)
    tl.store(out_i + pid, i)


@tl.kernel
def bound_before(starts: Pointer[i32], trips: Pointer[i32], x: Pointer[f32], out_i: Pointer[i32], out_v: Pointer[f32],
                 S: constexpr) -> None:
    """As index_after, the loop variable and the body's value bound before the loop."""
    pid = tl.program_id(0)
    start = tl.load(starts + pid)
    n = tl.load(trips + pid)
    if n < 0:
        return
    i = -1
    w = tl.load(x) * 0.0 - 1.0
    for i in range(start, start + n * S, S):
        v = tl.load(x + i)
        w = v * 2.0 + 1.0
    tl.store(out_i + pid, i)
    tl.store(out_v + pid, w)


@tl.kernel
def branch_bound(flags: Pointer[i32], out: Pointer[i32], BOTH: constexpr) -> None:
    """A tuple target and a static_range's variable bound where ``flags[pid] > 50``, and
    otherwise (BOTH) by the other side."""
    pid = tl.program_id(0)
    f = tl.load(flags + pid)
    if f > 50:
        a, b = f * 2, f + pid
        for k in tl.static_range(3):
            a += k
    elif BOTH:
        a, b, k = f - 1, f * 0 + pid, 7
    tl.store(out + 2 * pid, k)  # read: k
    tl.store(out + 2 * pid + 1, a + b)


def _line(kernel: Any, marker: str) -> int:
    """The line of ``kernel``'s source holding ``marker``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


Args = tuple[tl.Buffer[i32], tl.Buffer[i32], tl.Buffer[f32], tl.Buffer[i32], tl.Buffer[f32]]


def _args(starts: np.ndarray, trips: np.ndarray, x: np.ndarray) -> Args:
    """The kernels' buffers, the outputs (the last two) poisoned."""
    return (tl.to_device(starts.astype(np.int32), tl.i32), tl.to_device(trips.astype(np.int32), tl.i32),
            tl.to_device(x, tl.f32), poisoned(len(trips), tl.i32), poisoned(len(trips), tl.f32))


def _untouched(args: Args) -> None:
    np.testing.assert_array_equal(args[3].numpy(), poisoned(len(args[3].numpy()), tl.i32).numpy())
    assert np.isnan(args[4].numpy()).all()


def _python(starts: np.ndarray, trips: np.ndarray, x: np.ndarray) -> tuple[list[int], list[float]]:
    """Python's values of ``i`` and ``w`` after each program's loop in bound_before."""
    last_i, last_w = [], []
    for start, n in zip(starts.tolist(), trips.tolist()):
        i, w = -1, -1.0
        for i in range(start, start + n * STEP, STEP):
            w = float(x[i]) * 2.0 + 1.0
        last_i.append(i)
        last_w.append(w)
    return last_i, last_w


def _loop_local(kernel: Any, name: str) -> str:
    """The shared rule's error for reading ``name`` after ``kernel``'s loop."""
    return str(apply(forms.loop_local, name, _line(kernel, "for i in range")))


def _inputs(rng: np.random.Generator, programs: int, low: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    starts = rng.integers(0, 20, programs)
    trips = rng.integers(low, 9, programs)
    return starts, trips, rng.standard_normal(X_SIZE).astype(np.float32)


@pytest.mark.parametrize(("kernel", "name"), [(index_after, "i"), (value_after, "w")])
@pytest.mark.parametrize("seed", range(4))
def test_a_name_only_the_loop_bound_is_not_read_after_it(kernel: Any, name: str, seed: int) -> None:
    """Random trip counts, some zero (seed 3: none), the programs running together: the error
    names the variable at its read's line, for the programs that ran trips too; they stored
    nothing (all or nothing)."""
    rng = np.random.default_rng(seed)
    starts, trips, x = _inputs(rng, 37, 0 if seed < 3 else 1)
    if seed < 3:
        trips[rng.choice(37, 1 + seed, replace=False)] = 0
    args = _args(starts, trips, x)
    with pytest.raises(KernelError) as caught:
        kernel[(37,)](*args, S=STEP)
    assert caught.value.message == _loop_local(kernel, name)
    assert (caught.value.kernel, caught.value.lineno) == (kernel.fn.__name__, _line(kernel, f"# read: {name}"))
    _untouched(args)


@pytest.mark.parametrize(("kernel", "name"), [(index_after, "i"), (value_after, "w")])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("programs", [1, 5])
def test_no_program_ran_a_trip(kernel: Any, name: str, masked: bool, programs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every program runs no trip: the same error on the checked path (the programs agree) and
    masked (a kernel that diverged before runs its SIMT version from the first group), not a
    complaint about the reference's placeholder for an unbound name."""
    message = _loop_local(kernel, name)
    fresh = tl.kernel(kernel.fn)
    rng = np.random.default_rng(programs)
    starts, trips, x = _inputs(rng, programs + 1, 0)
    if masked:  # trips differ: the launch diverges (and fails)
        trips[0], trips[1] = 0, 3
        with pytest.raises(KernelError) as diverged:
            fresh[(programs + 1,)](*_args(starts, trips, x), S=STEP)
        assert diverged.value.message == message
    ran = []
    real = simt.function

    def counted() -> simt.Frame:  # a SIMT version starts by making its frame (returned before the error)
        ran.append(True)
        return real()

    monkeypatch.setattr(simt, "function", counted)
    args = _args(np.full(programs, starts[0]), np.zeros(programs, np.int64), x)
    with pytest.raises(KernelError) as caught:
        fresh[(programs,)](*args, S=STEP)
    assert (caught.value.message, caught.value.lineno) == (message, _line(kernel, f"# read: {name}"))
    assert "got Unbound" not in str(caught.value)
    assert bool(ran) == masked
    _untouched(args)


@pytest.mark.parametrize(("seed", "low"), [(0, 1), (1, 1), (2, 0)])
def test_names_bound_before_the_loop(seed: int, low: int) -> None:
    """Random trip counts differing between programs (seed 2: some zero): Python's last values,
    or the earlier bindings after no trip (programs with a negative count return before the loop
    and store nothing)."""
    rng = np.random.default_rng(seed)
    starts, trips, x = _inputs(rng, 45, low)
    leaving = rng.choice(45, 6, replace=False)
    trips[leaving] = -1
    args = _args(starts, trips, x)
    bound_before[(45,)](*args, S=STEP)
    got_i, got_v = args[3].numpy(), args[4].numpy()
    staying = np.setdiff1d(np.arange(45), leaving)
    want_i, want_w = _python(starts[staying], trips[staying], x)
    np.testing.assert_array_equal(got_i[staying], want_i)
    np.testing.assert_allclose(got_v[staying], want_w, rtol=1e-6)
    np.testing.assert_array_equal(got_i[leaving], poisoned(len(leaving), tl.i32).numpy())


def test_a_name_bound_in_a_branch_some_programs_skipped() -> None:
    """Branch-bound names (a tuple target, a static_range's variable), programs taking either
    side: Python's values where both sides bind them, an error naming the first read where the
    programs of one side have none."""
    rng = np.random.default_rng(4)
    flags = rng.integers(1, 100, 30)
    flags[:2] = 10, 90  # both sides taken
    pid = np.arange(30)
    want = np.stack([np.where(flags > 50, 2, 7), np.where(flags > 50, 3 * flags + pid + 3, flags - 1 + pid)], 1).reshape(-1)
    for both in (True, False):
        out = poisoned(60, tl.i32)
        with contextlib.nullcontext() if both else pytest.raises(KernelError, match="local variable 'k' where") as caught:
            branch_bound[(30,)](tl.to_device(flags.astype(np.int32), tl.i32), out, BOTH=both)
        if both:
            np.testing.assert_array_equal(out.numpy(), want)
        else:
            assert caught is not None and caught.value.lineno == _line(branch_bound, "# read: k")
            np.testing.assert_array_equal(out.numpy(), poisoned(60, tl.i32).numpy())
