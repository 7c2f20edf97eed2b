"""Atomics on random inputs with heavy address collisions, against a sequential reference.

The numpy backend applies atomics in program order, then lane order; the old values it returns
must be exactly those of that order, and masked-off lanes return poison (NaN, or 0xA5 bytes for
integers). On any backend, order-independent results (integer sums and bit ops, max, min) must
be exact and float sums must match a float64 reference.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Float, Int, Pointer, UInt, constexpr, f32, i32

NumT = TypeVar("NumT", bound=Float[Any] | Int[Any] | UInt[Any])
N = 300
BLOCK = 64
SLOTS = 5  # few addresses, so every slot is hit by many lanes and programs
POISON_I32 = np.array(0xA5A5A5A5, dtype=np.uint32).view(np.int32)


@tl.kernel
def rmw_kernel(mem: Pointer[NumT], slot: Pointer[i32], val: Pointer[NumT], old: Pointer[NumT], n: int, OP: Constexpr[str],
               BLOCK: constexpr) -> None:
    """Lane i applies atomic OP of val[i] to mem[slot[i]] where i < n and i % 3 != 1; old[i] gets the result."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    live = inside & (offs % 3 != 1)
    s = tl.load(slot + offs, mask=inside, other=0)
    v = tl.load(val + offs, mask=inside)
    if OP == "add":
        o = tl.atomic_add(mem + s, v, mask=live)
    elif OP == "max":
        o = tl.atomic_max(mem + s, v, mask=live)
    elif OP == "min":
        o = tl.atomic_min(mem + s, v, mask=live)
    elif OP == "and":
        o = tl.atomic_and(mem + s, v, mask=live)  # type: ignore[type-var]
    elif OP == "or":
        o = tl.atomic_or(mem + s, v, mask=live)  # type: ignore[type-var]
    elif OP == "xor":
        o = tl.atomic_xor(mem + s, v, mask=live)  # type: ignore[type-var]
    else:
        o = tl.atomic_xchg(mem + s, v, mask=live)
    tl.store(old + offs, o, mask=inside)


def float_max(a: float, b: float) -> float:
    """max with -0.0 < +0.0, as the GPU's float atomic_max orders them."""
    return max(a, b, key=lambda x: (x, math.copysign(1.0, x)))


def float_min(a: float, b: float) -> float:
    return min(a, b, key=lambda x: (x, math.copysign(1.0, x)))


COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "max": max, "min": min, "xchg": lambda a, b: b,
}


def sequential(op: str, mem: np.ndarray[Any, Any], slot: np.ndarray[Any, Any], val: np.ndarray[Any, Any]
               ) -> tuple[np.ndarray[Any, Any], list[Any]]:
    """Lane by lane in launch order, in the element dtype: final memory and each live lane's old value."""
    mem = mem.copy()
    olds = []
    combine = COMBINE[op]
    if mem.dtype.kind == "f" and op in ("max", "min"):
        combine = float_max if op == "max" else float_min
    for i in range(len(slot)):
        if i % 3 == 1:
            continue
        olds.append(mem[slot[i]])
        mem[slot[i]] = wrap(combine(to_python(mem[slot[i]]), to_python(val[i])), mem.dtype)
    return mem, olds


def to_python(x: Any) -> Any:
    """Integers as Python ints (exact); floats stay NumPy scalars so arithmetic rounds in their dtype."""
    return int(x) if isinstance(x, np.integer) else x


def wrap(x: Any, dtype: np.dtype[Any]) -> Any:
    """A result stored into an element of ``dtype`` (integers wrap around)."""
    if isinstance(x, int):
        return np.array(x % 2 ** (8 * dtype.itemsize), dtype=f"u{dtype.itemsize}").view(dtype)
    return np.array(x).astype(dtype)


def launch(op: str, mem_h: np.ndarray[Any, Any], slot_h: np.ndarray[Any, Any], val_h: np.ndarray[Any, Any]
           ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    mem = tl.to_device(mem_h)
    old = tl.to_device(np.zeros_like(val_h))
    rmw_kernel[(tl.cdiv(len(slot_h), BLOCK),)](mem, tl.to_device(slot_h, tl.i32), tl.to_device(val_h), old,
                                                len(slot_h), OP=op, BLOCK=BLOCK)
    return mem.numpy(), old.numpy()


def random_ints(rng: np.random.Generator, dtype: Any, n: int) -> np.ndarray[Any, Any]:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("op", ["add", "max", "min", "and", "or", "xor", "xchg"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_integer_ops_match_sequential_order(tile_backend: str, op: str, dtype: Any) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{op} {np.dtype(dtype).name}".encode()))
    slot = rng.integers(0, SLOTS, N).astype(np.int32)
    val = random_ints(rng, dtype, N)
    mem_h = random_ints(rng, dtype, SLOTS)
    got_mem, got_old = launch(op, mem_h, slot, val)
    want_mem, want_old = sequential(op, mem_h, slot, val)
    live = np.arange(N) % 3 != 1
    if op != "xchg" or tile_backend == "numpy":
        assert np.array_equal(got_mem, want_mem)
    if tile_backend == "numpy":
        assert np.array_equal(got_old[live], np.array(want_old, dtype=dtype))
        poison = np.frombuffer(b"\xa5" * np.dtype(dtype).itemsize, dtype=dtype)[0]
        assert np.all(got_old[~live] == poison)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_float_add_accumulates_in_order_in_the_element_dtype(tile_backend: str, dtype: Any) -> None:
    rng = np.random.default_rng(5)
    slot = rng.integers(0, SLOTS, N).astype(np.int32)
    val = rng.standard_normal(N).astype(dtype)
    mem_h = rng.standard_normal(SLOTS).astype(dtype)
    got_mem, got_old = launch("add", mem_h, slot, val)
    want_mem, want_old = sequential("add", mem_h, slot, val)
    live = np.arange(N) % 3 != 1
    if tile_backend == "numpy":
        assert np.array_equal(got_mem, want_mem)
        assert np.array_equal(got_old[live], np.array(want_old, dtype=dtype))
        assert np.all(np.isnan(got_old[~live].astype(np.float32)))
    exact = mem_h.astype(np.float64) + np.bincount(slot[live], val[live].astype(np.float64), minlength=SLOTS)
    tolerance = {np.float64: 1e-12, np.float32: 1e-4}.get(dtype, 0.5)
    np.testing.assert_allclose(got_mem.astype(np.float64), exact, rtol=0, atol=tolerance)


@pytest.mark.parametrize("op", ["max", "min", "xchg"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_max_min_xchg(tile_backend: str, op: str, dtype: Any) -> None:
    """Signed zeros included: the GPU orders -0.0 below +0.0."""
    rng = np.random.default_rng(11)
    slot = rng.integers(0, SLOTS, N).astype(np.int32)
    val = rng.standard_normal(N).astype(dtype)
    val[::7] = 0.0
    val[3::7] = -0.0
    mem_h = np.array([-0.0, 0.0, -5.0, 5.0, -np.inf], dtype=dtype)
    got_mem, got_old = launch(op, mem_h, slot, val)
    want_mem, want_old = sequential(op, mem_h, slot, val)
    live = np.arange(N) % 3 != 1
    if op != "xchg" or tile_backend == "numpy":
        assert np.array_equal(got_mem.view(np.uint8), want_mem.view(np.uint8))
    if tile_backend == "numpy":
        assert np.array_equal(got_old[live].view(np.uint8), np.array(want_old, dtype=dtype).view(np.uint8))


@tl.kernel
def ticket_kernel(counter: Pointer[i32], tickets: Pointer[i32]) -> None:
    """Every program takes a ticket from one counter: a shared scalar atomic runs once per program."""
    pid = tl.program_id(0)
    tl.store(tickets + pid, tl.atomic_add(counter, 1))


def test_scalar_atomic_runs_once_per_program(tile_backend: str) -> None:
    counter = tl.to_device(np.zeros(1, np.int32), tl.i32)
    tickets = tl.to_device(np.full(100, -1, np.int32), tl.i32)
    ticket_kernel[(100,)](counter, tickets)
    assert counter.numpy()[0] == 100
    assert np.array_equal(np.sort(tickets.numpy()), np.arange(100))


@tl.kernel
def cas_chain_kernel(cell: Pointer[i32], old: Pointer[i32], BLOCK: constexpr) -> None:
    """Every lane of every program tries cell: i -> i + 1 for its own i; only in-order lanes succeed."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    o = tl.atomic_cas(cell + i * 0, i, i + 1)
    tl.store(old + i, o)


def test_cas_with_duplicate_addresses_is_sequential() -> None:
    with tl.backend("numpy"):  # lanes of one program hit the cell in an unspecified order on a GPU
        cell = tl.to_device(np.zeros(1, np.int32), tl.i32)
        old = tl.to_device(np.full(4 * BLOCK, -1, np.int32), tl.i32)
        cas_chain_kernel[(4,)](cell, old, BLOCK=BLOCK)
    assert cell.numpy()[0] == 4 * BLOCK
    assert np.array_equal(old.numpy(), np.arange(4 * BLOCK))


@tl.kernel
def lock_kernel(lock: Pointer[i32], owner: Pointer[i32]) -> None:
    """Each program tries to take the lock once; the winner records itself."""
    pid = tl.program_id(0)
    got = tl.atomic_cas(lock, 0, pid + 1, sem="acquire", scope="gpu")
    tl.store(owner + pid, got)


def test_cas_lock_taken_once(tile_backend: str) -> None:
    lock = tl.to_device(np.zeros(1, np.int32), tl.i32)
    owner = tl.to_device(np.full(8, -7, np.int32), tl.i32)
    lock_kernel[(8,)](lock, owner)
    winner = int(lock.numpy()[0])
    want = np.full(8, winner, np.int32)
    want[winner - 1] = 0
    assert np.array_equal(owner.numpy(), want)


@tl.kernel
def float_cas_kernel(x: Pointer[f32], old: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(old + offs, tl.atomic_cas(x + offs, 0.0, 1.0))


def test_float_cas_compares_bits(tile_backend: str) -> None:
    """-0.0 does not match a 0.0 comparand (the GPU compares bit patterns)."""
    start = np.array([0.0, -0.0, 2.0, 0.0], np.float32)
    x = tl.to_device(start, tl.f32)
    old = tl.to_device(np.full(4, np.nan, np.float32), tl.f32)
    float_cas_kernel[(1,)](x, old, BLOCK=4)
    assert x.numpy().tolist() == [1.0, -0.0, 2.0, 1.0] and np.signbit(x.numpy()[1])
    assert np.array_equal(old.numpy().view(np.uint32), start.view(np.uint32))


@tl.kernel
def divergent_kernel(counter: Pointer[f32], out: Pointer[f32]) -> None:
    """An atomic before control flow that differs per program: the group is rolled back and rerun."""
    pid = tl.program_id(0)
    tl.atomic_add(counter, 1.0)
    if pid % 2 == 0:
        tl.store(out + pid, 1.0)
    else:
        tl.store(out + pid, 2.0)


def test_atomics_are_rolled_back_when_a_group_diverges(tile_backend: str) -> None:
    counter = tl.to_device(np.zeros(1, np.float32), tl.f32)
    out = tl.to_device(np.full(10, np.nan, np.float32), tl.f32)
    divergent_kernel[(10,)](counter, out)
    assert counter.numpy()[0] == 10.0
    assert np.array_equal(out.numpy(), np.tile([1.0, 2.0], 5))


@tl.kernel
def bad_sem_kernel(x: Pointer[f32], SEM: Constexpr[str]) -> None:
    tl.atomic_add(x, 1.0, sem=SEM)  # type: ignore[call-overload]


@tl.kernel
def f32_and_kernel(x: Pointer[f32]) -> None:
    tl.atomic_and(x, 1)  # type: ignore[type-var]


@tl.kernel
def oob_kernel(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_max(x + offs, 1.0, mask=offs < BLOCK)


def test_misuse_is_a_kernel_error() -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.zeros(4, np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match="sem must be one of") as info:
            bad_sem_kernel[(1,)](x, SEM="seq_cst")
        assert "tl.atomic_add(x, 1.0, sem=SEM)" in str(info.value)
        with pytest.raises(tl.KernelError, match=r"atomic_and does not support tl\.f32"):
            f32_and_kernel[(1,)](x)
        with pytest.raises(tl.KernelError, match="out-of-bounds tl.atomic_max through x"):
            oob_kernel[(1,)](x, BLOCK=8)
