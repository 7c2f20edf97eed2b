"""The fast path of repeat launches (tile_lang.launch_cache), on a backend that launches nothing:
repeats skip the checks, and every launch the checks would reject still fails before running."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.noop_backend import DeviceArray, NoopBackend
from tile_lang import registry
from tile_lang.launch_cache import int_class, plain_grid
from tests.test_launch import copy_kernel, generic_copy, launch_untyped
from tests.bad_launches import BAD_ARGUMENTS


@pytest.fixture
def noop() -> Iterator[NoopBackend]:
    backend = NoopBackend()
    registry.register(backend)
    with tl.backend("noop"):
        yield backend
    backend.calls.record = False


def array(dtype: Any = np.float32, address: int = 1 << 20) -> Any:
    return DeviceArray(np.dtype(dtype), address, (100,))


def test_repeat_launches_skip_the_checks(noop: NoopBackend, checked: list[int]) -> None:
    src, dst = array(), array(address=2 << 20)
    noop.calls.record = True
    for grid in [(2,), (3,), (4, 5)]:
        launch_untyped(copy_kernel, grid, src, dst, 100, BLOCK=64)
    assert checked[0] == 1 and noop.runners == 1
    grids = [seen[0] for seen in noop.calls.seen]
    assert grids == [(2, 1, 1), (3, 1, 1), (4, 5, 1)]
    _, block, args = noop.calls.seen[-1]
    assert block == (128, 1, 1) and args[:2] == (1 << 20, 2 << 20)
    assert type(args[2]) is np.int32 and args[2] == 100


def test_each_specialisation_is_checked_once(noop: NoopBackend, checked: list[int]) -> None:
    src, dst = array(), array()
    calls = [(100, 64, 4), (100, 64, 4), (96, 64, 4), (1, 64, 4), (100, 32, 4), (100, 64, 8)]
    for n, block, warps in calls * 2:
        copy_kernel[(1,), tl.Options(num_warps=warps)](src, dst, n, BLOCK=block)
    assert checked[0] == 5 and noop.runners == 5
    copy_kernel[(1,)](src, array(address=(1 << 20) + 4), 100, BLOCK=64)  # a misaligned pointer
    launch_untyped(copy_kernel, (1,), src, dst, 100, BLOCK=64, num_warps=2)
    copy_kernel[(1,)](src, n=100, dst=dst, BLOCK=64)
    assert checked[0] == 8


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((array(np.float16), "dst", 100), {"BLOCK": 64}, "parameter src (Pointer[Float[W32]]): got a buffer of Float[W16]"),
        ((object(), "dst", 100), {"BLOCK": 64}, "expected a tile_lang Buffer or a noop array, got object"),
        *BAD_ARGUMENTS,
    ],
)
def test_bad_launch_after_a_good_one_still_fails(noop: NoopBackend, args: tuple[Any, ...], kwargs: dict[str, Any],
                                                 message: str) -> None:
    src, dst = array(), array()
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    real = tuple({"src": src, "dst": dst}.get(a, a) if isinstance(a, str) else a for a in args)
    before = noop.calls.count
    with pytest.raises(tl.LaunchError, match="copy_kernel") as info:
        launch_untyped(copy_kernel, (2,), *real, **kwargs)
    assert message in str(info.value)
    assert noop.calls.count == before


@pytest.mark.parametrize("grid", [(1, 1, 1, 1), (-1,), (2.0,), ()])
def test_bad_grid_after_a_good_launch(noop: NoopBackend, grid: Any) -> None:
    src, dst = array(), array()
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="grid"):
        launch_untyped(copy_kernel, grid, src, dst, 100, BLOCK=64)


def test_buffer_of_another_backend_is_rejected(noop: NoopBackend) -> None:
    src, dst = tl.empty(100, tl.f32), tl.empty(100, tl.f32)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    with tl.backend("numpy"):
        foreign = tl.empty(100, tl.f32)
    with pytest.raises(tl.LaunchError, match="lives on backend 'numpy'"):
        copy_kernel[(2,)](src, foreign, 100, BLOCK=64)


def test_type_variables_stay_bound_across_parameters(noop: NoopBackend) -> None:
    f16 = array(np.float16)
    generic_copy[(1,)](f16, f16, 10, BLOCK=16)
    generic_copy[(1,)](f16, f16, 10, BLOCK=16)
    with pytest.raises(tl.LaunchError, match=r"parameter dst \(Pointer\[Float\[W\]\]\): got a buffer of Float\[W32\]"):
        launch_untyped(generic_copy, (1,), f16, array(np.float32), 10, BLOCK=16)


def test_callable_and_zero_grids(noop: NoopBackend, checked: list[int]) -> None:
    src, dst = array(), array()
    seen: list[dict[str, Any]] = []

    def grid(meta: dict[str, Any]) -> tuple[int]:
        seen.append(meta)
        return (tl.cdiv(1000, meta["BLOCK"]),)

    noop.calls.record = True
    for _ in range(3):
        copy_kernel[grid](src, dst, 1000, BLOCK=128)
    assert [s[0] for s in noop.calls.seen] == [(8, 1, 1)] * 3 and checked[0] == 1
    assert all(meta == {"BLOCK": 128} for meta in seen)
    copy_kernel[(0,)](src, dst, 1000, BLOCK=128)
    copy_kernel[(2, 0)](src, dst, 1000, BLOCK=128)
    assert noop.calls.count == 3


def test_a_failing_probe_takes_the_checked_path(noop: NoopBackend) -> None:
    src, dst = array(), array()
    copy_kernel[(1,)](src, dst, 100, BLOCK=64)
    broken = array()
    del broken.ptr
    with pytest.raises(AttributeError, match="ptr"):  # raised by the checked path's adoption
        copy_kernel[(1,)](src, broken, 100, BLOCK=64)


def test_streams_key_the_cache(noop: NoopBackend) -> None:
    src, dst = array(), array()
    for stream in [1, 2, 1, 2]:
        copy_kernel[(1,), tl.Options(stream=stream)](src, dst, 100, BLOCK=64)
    assert noop.runners == 2


def test_int_class_and_plain_grid() -> None:
    assert int_class(16) != int_class(17) != int_class(1)
    assert int_class(2**31) >> 2 == 2 and int_class(2**63) >> 2 == 3 and int_class(2**64) >> 2 == 0
    assert int_class(-(2**31)) >> 2 == 1 and int_class(-(2**63) - 1) >> 2 == 0
    assert plain_grid((3,), {}) == (3, 1, 1) and plain_grid((1, 2, 3), {}) == (1, 2, 3)
    assert plain_grid(lambda meta: (meta["B"], 2), {"B": 4}) == (4, 2, 1)
    assert plain_grid((2**31 - 1, 65535, 65535), {}) == (2**31 - 1, 65535, 65535)
    for bad in [(), (1, 2, 3, 4), (-1,), (2.0,), [2], 2, (np.int64(2),), (True,), (2**31,), (1, 65536), (1, 1, 65536)]:
        assert plain_grid(bad, {}) is None


def test_pointer_alignment_keys_the_cache(noop: NoopBackend, checked: list[int]) -> None:
    """A specialisation checked with a pointer at one offset from 16 bytes is never reused for
    another: an adoption that refuses a misaligned element is never bypassed."""
    src = array()
    for offset in [0, 4, 4, 8, 0, 8]:
        copy_kernel[(1,)](src, array(address=(1 << 20) + offset), 100, BLOCK=64)
    assert checked[0] == 3 and noop.runners == 3
