"""The reference's fast path of repeat launches (tile_lang.launch_cache.LastLaunch): a launch
like the last one skips the checks, and every launch the checks would reject still fails
before anything runs."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32
from tests.test_launch import copy_kernel, launch_untyped
from tests.bad_launches import BAD_ARGUMENTS


@tl.kernel
def scale_kernel(src: Pointer[f32], dst: Pointer[f32], alpha: float, n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * alpha, mask=offs < n)


def poisoned(n: int) -> tuple[np.ndarray[Any, Any], tl.Buffer[f32]]:
    host = np.full(n, np.nan, np.float32)
    return host, tl.wrap(host, tl.f32)


def test_repeats_skip_the_checks_and_take_new_scalars_and_grids(checked: list[int]) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(300, dtype=np.float32)
    src = tl.wrap(x, tl.f32)
    out, dst = poisoned(300)
    for n, grid, alpha in [(300, (5,), 1.5), (300, (5,), 1.5), (130, (3,), -2.0), (64, (1,), 3), (300, (5,), 0.25)]:
        out[:] = np.nan
        scale_kernel[grid](src, dst, alpha, n, BLOCK=64)
        np.testing.assert_allclose(out[:n], x[:n].astype(np.float64) * alpha, rtol=1e-6)
        assert np.isnan(out[n:]).all()
    assert checked[0] == 1


def test_a_float_parameter_keeps_its_sign_and_an_int_becomes_a_float(checked: list[int]) -> None:
    src = tl.wrap(np.ones(64, np.float32), tl.f32)
    out, dst = poisoned(64)
    scale_kernel[(1,)](src, dst, 0.0, 64, BLOCK=64)
    assert not np.signbit(out).any()
    scale_kernel[(1,)](src, dst, -0.0, 64, BLOCK=64)
    assert np.signbit(out).all() and (out == 0).all()
    scale_kernel[(1,)](src, dst, 2, 64, BLOCK=64)
    assert (out == 2).all() and checked[0] == 1


def test_what_the_checks_depend_on_takes_the_checked_path(checked: list[int]) -> None:
    x = np.random.default_rng(4).standard_normal(100, dtype=np.float32)
    src = tl.wrap(x, tl.f32)
    out, dst = poisoned(100)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    assert checked[0] == 1
    copy_kernel[(2,)](tl.wrap(x, tl.f32), dst, 100, BLOCK=64)  # another Buffer object
    copy_kernel[(4,)](src, dst, 100, BLOCK=32)  # another constexpr
    copy_kernel[(2,)](src, dst=dst, n=100, BLOCK=64)  # another binding
    copy_kernel[(2,), tl.Options(num_warps=8)](src, dst, 100, BLOCK=64)  # other options
    launch_untyped(copy_kernel, (2,), src, dst, np.int64(100), BLOCK=64)  # a NumPy integer
    assert checked[0] == 6
    launch_untyped(copy_kernel, (2,), x, out, 100, BLOCK=64)  # arrays are adopted at every launch
    launch_untyped(copy_kernel, (2,), x, out, 100, BLOCK=64)
    assert checked[0] == 8
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("f16", "dst", 100), {"BLOCK": 64}, "parameter src (Pointer[Float[W32]]): got a buffer of Float[W16]"),
        ((object(), "dst", 100), {"BLOCK": 64}, "expected a tile_lang Buffer or a numpy array, got object"),
        (("src", "dst", 100), {"BLOCK": 64, "num_warps": 3}, "num_warps must be an int power of two"),
        *BAD_ARGUMENTS,
    ],
)
def test_bad_launch_after_a_good_one_still_fails(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    x = np.random.default_rng(5).standard_normal(100, dtype=np.float32)
    src = tl.wrap(x, tl.f32)
    out, dst = poisoned(100)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    out[:] = np.nan
    named = {"src": src, "dst": dst, "f16": tl.wrap(np.zeros(100, np.float16), tl.f16)}
    real = tuple(named.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(tl.LaunchError, match="copy_kernel") as info:
        launch_untyped(copy_kernel, (2,), *real, **kwargs)
    assert message in str(info.value)
    assert np.isnan(out).all()  # nothing ran


@pytest.mark.parametrize("grid", [(1, 1, 1, 1), (-1,), (2.0,), (), (2**31,), (True,)])
def test_bad_grid_after_a_good_launch(grid: Any) -> None:
    src, dst = tl.wrap(np.ones(100, np.float32), tl.f32), tl.empty(100, tl.f32)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="grid"):
        launch_untyped(copy_kernel, grid, src, dst, 100, BLOCK=64)


def test_a_freed_buffer_is_not_taken_for_a_new_one() -> None:
    """Buffers are remembered weakly: a new buffer (maybe at the freed one's address) is checked."""
    src, dst = tl.wrap(np.ones(100, np.float32), tl.f32), tl.empty(100, tl.f32)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    del src
    gc.collect()
    wrong = tl.wrap(np.ones(100, np.float16), tl.f16)
    with pytest.raises(tl.LaunchError, match="got a buffer of Float"):
        launch_untyped(copy_kernel, (2,), wrong, dst, 100, BLOCK=64)


def test_zero_grid_after_a_good_launch_runs_nothing() -> None:
    x = np.random.default_rng(6).standard_normal(100, dtype=np.float32)
    src = tl.wrap(x, tl.f32)
    out, dst = poisoned(100)
    copy_kernel[(2,)](src, dst, 100, BLOCK=64)
    out[:] = np.nan
    copy_kernel[(0,)](src, dst, 100, BLOCK=64)
    copy_kernel[(2, 0)](src, dst, 100, BLOCK=64)
    assert np.isnan(out).all()
