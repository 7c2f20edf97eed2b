"""A launch that raises leaves every buffer exactly as it was: no partial outputs, no
half-updated in-place inputs, whichever group or write path (strided, gathered, atomic) ran."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32


@tl.kernel
def scale_in_place_then_fault(x: Pointer[f32], out: Pointer[f32], count: Pointer[i32], n: int,
                              BLOCK: constexpr) -> None:
    """Writes all of out, scales x in place, counts atomically; the last program reads past x."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.store(out + offs, v + 1.0, mask=m)
    tl.store(x + offs, v * 2.0, mask=m)
    tl.atomic_add(count + offs % 7, 1, mask=m)
    tl.store(out + (offs // 2) * 2 + offs % 2, v, mask=m)  # a gathered store too
    bad = tl.load(x + offs + pid // (tl.num_programs(0) - 1) * n)  # unmasked: the last program reads past the end
    tl.store(out + offs, bad, mask=m)


@pytest.mark.parametrize("n, block", [(100_000, 64), (100_000, 4096), (1000, 8)])
def test_a_failing_launch_writes_nothing(n: int, block: int) -> None:
    with tl.backend("numpy"):
        rng = np.random.default_rng(n + block)
        host_x = rng.standard_normal(n).astype(np.float32)
        host_out = rng.standard_normal(n).astype(np.float32)
        host_count = rng.integers(-5, 5, 7).astype(np.int32)
        x, out, count = tl.to_device(host_x, tl.f32), tl.to_device(host_out, tl.f32), tl.to_device(host_count, tl.i32)
        with pytest.raises(tl.KernelError, match="out-of-bounds load through x"):
            scale_in_place_then_fault[(tl.cdiv(n, block),)](x, out, count, n, BLOCK=block)
        assert x.numpy().tobytes() == host_x.tobytes()
        assert out.numpy().tobytes() == host_out.tobytes()
        assert count.numpy().tobytes() == host_count.tobytes()


@tl.kernel
def diverge_then_fault(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """Programs disagree on a branch (the reference reruns them one by one), then the last faults."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    if pid % 3 == 0:
        v = v * 4.0
    tl.store(x + offs, v)
    tl.store(out + offs, v)
    tl.device_assert(v == v, "unreachable")
    tl.device_assert(pid < tl.num_programs(0) - 1, "last program")


def test_a_failing_divergent_launch_writes_nothing() -> None:
    with tl.backend("numpy"):
        rng = np.random.default_rng(3)
        host_x = rng.standard_normal(64 * 40).astype(np.float32)
        host_out = np.full(64 * 40, np.nan, np.float32)
        x, out = tl.to_device(host_x, tl.f32), tl.to_device(host_out, tl.f32)
        with pytest.raises(tl.KernelError, match="last program"):
            diverge_then_fault[(40,)](x, out, 64 * 40, BLOCK=64)
        assert x.numpy().tobytes() == host_x.tobytes()
        assert out.numpy().tobytes() == host_out.tobytes()


@tl.kernel
def scale_in_place(x: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 3.0, mask=offs < n)


def test_undo_copies_reused_from_earlier_launches_restore_the_right_values() -> None:
    """The journal's copies are pooled between launches: a failing launch that copies into
    buffers an earlier launch filled still restores its own old values."""
    n, block = 100_000, 4096
    with tl.backend("numpy"):
        rng = np.random.default_rng(11)
        first = tl.to_device(rng.standard_normal(n).astype(np.float32), tl.f32)
        expected = first.numpy().astype(np.float64) * 9.0
        for _ in range(2):
            scale_in_place[(tl.cdiv(n, block),)](first, n, BLOCK=block)
        np.testing.assert_allclose(first.numpy(), expected, rtol=1e-6)
        host_x, host_out = rng.standard_normal(n).astype(np.float32), np.full(n, np.nan, np.float32)
        host_count = rng.integers(-5, 5, 7).astype(np.int32)
        x, out, count = tl.to_device(host_x, tl.f32), tl.to_device(host_out, tl.f32), tl.to_device(host_count, tl.i32)
        with pytest.raises(tl.KernelError, match="out-of-bounds load through x"):
            scale_in_place_then_fault[(tl.cdiv(n, block),)](x, out, count, n, BLOCK=block)
        assert x.numpy().tobytes() == host_x.tobytes()
        assert out.numpy().tobytes() == host_out.tobytes()


def test_launches_from_several_threads_share_the_copy_pool() -> None:
    """The pool of undo copies is shared by every launch of the process: launches from 8 threads
    at once (each a failing launch that rolls back, then a good one) keep each their own values."""
    import sys
    import threading

    n, block = 8 * 4096, 4096
    failures: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            for _ in range(6):
                host = rng.standard_normal(n).astype(np.float32)
                x = tl.to_device(host, tl.f32)
                count = tl.to_device(rng.integers(-5, 5, 7).astype(np.int32), tl.i32)
                with pytest.raises(tl.KernelError, match="out-of-bounds load"):
                    scale_in_place_then_fault[(tl.cdiv(n, block),)](x, x, count, n, BLOCK=block)
                assert x.numpy().tobytes() == host.tobytes()
                scale_in_place[(tl.cdiv(n, block),)](x, n, BLOCK=block)
                np.testing.assert_allclose(x.numpy(), host.astype(np.float64) * 3.0, rtol=1e-6)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so pool accesses interleave
    try:
        with tl.backend("numpy"):
            threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[0]
