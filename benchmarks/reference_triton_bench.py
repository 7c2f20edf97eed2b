"""The NumPy reference on kernels shaped like Triton's slowest interpreter tests, in one process.

    python -m benchmarks.reference_triton_bench [--repeats 5] [--programs 2000]

Prints the median wall and CPU seconds of each case (CPU time is steadier on a shared machine):
a spin lock serialising ``--programs`` programs (test_atomic_cas's form: every program waits on
``tl.atomic_cas``, adds to a 128-element block, releases with ``tl.atomic_xchg``; the reference
runs them one at a time), ``tl.rand`` and ``tl.randint`` over 100000 elements (test_rand's form),
and one small elementwise launch (the fixed cost of a launch). Results are checked first.
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


def spin_lock(programs: int) -> Callable[[], None]:
    def run() -> None:
        data, lock = tl.to_device(np.zeros(128, np.float32), tl.f32), tl.to_device(np.zeros(1, np.int32), tl.i32)
        serialized_add[(programs,)](data, lock, BLOCK=128)
        assert (data.numpy() == programs).all() and lock.numpy()[0] == 0
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
    cases: list[tuple[str, Callable[[], None], int]] = [
        (f"spin lock, {args.programs} programs", spin_lock(args.programs), max(1, args.repeats // 2)),
        (f"tl.rand, {N_RANDOM} elements", random_words(False), args.repeats),
        (f"tl.randint, {N_RANDOM} elements", random_words(True), args.repeats),
        ("small elementwise launch (1 program)", small_launch(), 20 * args.repeats),
    ]
    print(f"{'case':40} {'wall s':>10} {'cpu s':>10}")
    for name, fn, repeats in cases:
        wall, cpu = median_seconds(fn, repeats)
        print(f"{name:40} {wall:10.4f} {cpu:10.4f}")


if __name__ == "__main__":
    main()
