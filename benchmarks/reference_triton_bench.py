"""The NumPy reference on kernels shaped like Triton's slowest interpreter tests, in one process.

    python -m benchmarks.reference_triton_bench [--repeats 5] [--programs 2000]

Prints the median wall and CPU seconds of each case (CPU time is steadier on a shared machine)
and the CPU microseconds per program of the locked ones: a spin lock serialising ``--programs``
programs (test_atomic_cas's form: every program waits on ``tl.atomic_cas``, adds to a 128-element
block, releases with ``tl.atomic_xchg``; the reference runs them one at a time), as annotated and
as Triton writes it (no annotations, ``SEM`` a constexpr); tutorial 05's layer-norm backward
lock (``GROUP_SIZE_M`` locks, a count beside them, 1151 rows of 1000 columns; programs of
different locks run together); ``tl.rand`` and ``tl.randint`` over 100000 elements (test_rand's
form), and one small elementwise launch (the fixed cost of a launch). Results are checked.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32, u32
from tile_lang_numpy import DivergenceWarning

N_RANDOM = 100_000


@tl.kernel
def serialized_add(data: Pointer[f32], lock: Pointer[i32], BLOCK: constexpr) -> None:
    """Each program takes the lock, adds 1 to every element of the block, releases it."""
    ptrs = data + tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@tl.kernel
def serialized_add_as_triton(data, Lock, SEM: tl.constexpr):  # type: ignore[no-untyped-def]
    """test_atomic_cas's kernel as Triton's test writes it: unannotated, the ordering a constexpr."""
    ptrs = data + tl.arange(0, 128)
    while tl.atomic_cas(Lock, 0, 1, SEM) == 1:  # type: ignore[call-overload]  # SEM: an ordering or None
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@tl.kernel
def layer_norm_bwd_dx(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,  # type: ignore[no-untyped-def]
                      GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    """Tutorial 05's ``_layer_norm_bwd_dx_fused``: dx per row, then dw and db summed into one of
    ``GROUP_SIZE_M`` partial rows under its lock (its first holder stores, the later ones add)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@tl.kernel
def rand_kernel(x: Pointer[f32], n: int, seed: int, BLOCK: constexpr) -> None:
    offset = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offset, tl.rand(seed, offset), mask=offset < n)


@tl.kernel
def randint_kernel(x: Pointer[u32], n: int, seed: int, BLOCK: constexpr) -> None:
    offset = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offset, tl.randint(seed, offset), mask=offset < n)


@tl.kernel
def add_one(x: Pointer[f32], y: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


def spin_lock(programs: int, as_triton: bool = False) -> Callable[[], None]:
    def run() -> None:
        data, lock = tl.to_device(np.zeros(128, np.float32), tl.f32), tl.to_device(np.zeros(1, np.int32), tl.i32)
        if as_triton:
            serialized_add_as_triton[(programs,)](data, lock, SEM="acquire")
        else:
            serialized_add[(programs,)](data, lock, BLOCK=128)
        assert (data.numpy() == programs).all() and lock.numpy()[0] == 0
    return run


def layer_norm_backward(rows: int = 1151, cols: int = 1000, locks: int = 64) -> Callable[[], None]:
    """Tutorial 05's backward dx kernel over ``rows`` programs sharing ``locks`` locks."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((rows, cols), np.float32), rng.standard_normal((rows, cols), np.float32)
    w = rng.standard_normal(cols, np.float32)
    mean = x.mean(axis=1, dtype=np.float32)
    rstd = (1 / np.sqrt(x.var(axis=1) + 1e-5)).astype(np.float32)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    want_db = np.stack([dy[k::locks].astype(np.float64).sum(axis=0) for k in range(locks)])
    want_dw = np.stack([(dy[k::locks] * xhat[k::locks]).sum(axis=0) for k in range(locks)])

    def run() -> None:
        dx = np.full((rows, cols), np.nan, np.float32)
        dw, db = np.zeros((locks, cols), np.float32), np.zeros((locks, cols), np.float32)
        lock = np.zeros(2 * locks, np.int32)
        layer_norm_bwd_dx[(rows,)](dx, dy, dw, db, x, w, mean, rstd, lock, cols, cols, GROUP_SIZE_M=locks,
                                   BLOCK_SIZE_N=1024)
        assert not np.isnan(dx).any() and (lock[:locks] == 0).all() and (lock[locks:] == 1).all()
        np.testing.assert_allclose(db, want_db, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=1e-3)
    return run


def random_words(integers: bool) -> Callable[[], None]:
    """``tl.randint`` (``integers``) or ``tl.rand`` over ``N_RANDOM`` elements, 1024 a program."""
    grid = (tl.cdiv(N_RANDOM, 1024),)
    if integers:
        words = tl.to_device(np.zeros(N_RANDOM, np.uint32), tl.u32)
        return lambda: randint_kernel[grid](words, N_RANDOM, 42, BLOCK=1024)
    uniform = tl.to_device(np.zeros(N_RANDOM, np.float32), tl.f32)
    return lambda: rand_kernel[grid](uniform, N_RANDOM, 42, BLOCK=1024)


def small_launch() -> Callable[[], None]:
    x = tl.to_device(np.random.default_rng(0).random(100, dtype=np.float32), tl.f32)
    y = tl.to_device(np.zeros(100, np.float32), tl.f32)

    def run() -> None:
        add_one[(1,)](x, y, 100, BLOCK=128)
    return run


def median_seconds(fn: Callable[[], None], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``fn`` after one warm-up call."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--programs", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DivergenceWarning)  # the spin lock runs one program at a time, as meant
    locked = max(1, args.repeats // 2)
    cases: list[tuple[str, Callable[[], None], int, int]] = [  # name, run, repeats, programs (0: not per program)
        (f"spin lock, {args.programs} programs", spin_lock(args.programs), locked, args.programs),
        (f"spin lock as Triton writes it, {args.programs}", spin_lock(args.programs, True), locked, args.programs),
        ("layer-norm backward lock, 1151 x 1000, 64 locks", layer_norm_backward(), locked, 1151),
        (f"tl.rand, {N_RANDOM} elements", random_words(False), args.repeats, 0),
        (f"tl.randint, {N_RANDOM} elements", random_words(True), args.repeats, 0),
        ("small elementwise launch (1 program)", small_launch(), 20 * args.repeats, 0),
    ]
    print(f"{'case':50} {'wall s':>10} {'cpu s':>10} {'cpu us/program':>15}")
    for name, fn, repeats, programs in cases:
        wall, cpu = median_seconds(fn, repeats)
        per = f"{cpu / programs * 1e6:15.1f}" if programs else ""
        print(f"{name:50} {wall:10.4f} {cpu:10.4f} {per}")


if __name__ == "__main__":
    main()
