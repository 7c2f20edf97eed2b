"""Values that depend on only some grid axes stay compact on the reference (tile_lang_numpy.tiled):
program-per-element kernels over 2-D and 3-D grids, with masked branches and per-program loop
bounds, must give NumPy's answer, and the checks (overflow, division, bounds, races) must name
the same program as one program at a time would."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32

from benchmarks.reference_bench import maxpool2d_kernel as window_max
from benchmarks.reference_bench import reflect_pad_kernel as reflect_pad


@pytest.mark.parametrize(("planes", "h", "w", "pad"), [(3, 9, 13, 2), (1, 17, 5, 3), (5, 4, 40, 1), (2, 70, 3, 2)])
def test_reflect_pad_per_element_matches_numpy(planes: int, h: int, w: int, pad: int) -> None:
    rng = np.random.default_rng(planes * h * w)
    x = rng.standard_normal((planes, h, w)).astype(np.float32)
    out = tl.to_device(np.full((planes, h + 2 * pad, w + 2 * pad), np.nan, np.float32), tl.f32)
    with tl.backend("numpy"):
        reflect_pad[(w + 2 * pad, h + 2 * pad, planes)](tl.to_device(x, tl.f32), out, h, w, PAD=pad)
        reflect_pad[(w + 2 * pad, h + 2 * pad, planes)](tl.to_device(x, tl.f32), out, h, w, PAD=pad)  # masked from the start
    np.testing.assert_array_equal(out.numpy(), np.pad(x, ((0, 0), (pad, pad), (pad, pad)), mode="reflect"))


@pytest.mark.parametrize(("planes", "h", "w", "k", "stride", "pad"), [(3, 11, 14, 3, 2, 1), (2, 9, 9, 4, 3, 2)])
def test_window_max_with_per_program_loop_bounds_matches_numpy(planes: int, h: int, w: int, k: int, stride: int,
                                                               pad: int) -> None:
    rng = np.random.default_rng(h * w + k)
    x = rng.standard_normal((planes, h, w)).astype(np.float32)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = tl.to_device(np.full((planes, oh, ow), np.nan, np.float32), tl.f32)
    with tl.backend("numpy"):
        window_max[(ow, oh, planes)](tl.to_device(x, tl.f32), out, h, w, oh, ow, K=k, STRIDE=stride, PAD=pad)
    padded = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))[:, ::stride, ::stride]
    np.testing.assert_array_equal(out.numpy(), windows[:, :oh, :ow].max(axis=(3, 4)))


@tl.kernel
def scaled_row(out_ptr: Pointer[i32], SCALE: constexpr, ONLY: constexpr) -> None:
    """``pid_y * SCALE`` for every program, or only for programs with ``pid_x == ONLY`` (a masked branch)."""
    x, y = tl.program_id(0), tl.program_id(1)
    v = x * 0
    if ONLY < 0:
        v = y * SCALE
    elif x == ONLY:
        v = y * SCALE
    tl.store(out_ptr + y * tl.num_programs(0) + x, v)


def test_overflow_names_the_first_program_of_a_compact_value() -> None:
    out = tl.to_device(np.zeros(3 * 10, np.int32), tl.i32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=r"signed integer overflow: 8 \* 268435456 does not "
                                            r"fit in i32 \(program \(0, 8\), lane 0\)"):
        scaled_row[(3, 10)](out, SCALE=1 << 28, ONLY=-1)
    assert (out.numpy() == 0).all()


def test_overflow_under_a_mask_names_an_executing_program() -> None:
    out = tl.to_device(np.zeros(3 * 10, np.int32), tl.i32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=r"signed integer overflow: 8 \* 268435456 does not "
                                            r"fit in i32 \(program \(2, 8\), lane 0\)"):
        scaled_row[(3, 10)](out, SCALE=1 << 28, ONLY=2)
    with tl.backend("numpy"):
        scaled_row[(3, 7)](out, SCALE=1 << 28, ONLY=2)  # no program executing the product overflows
    expected = np.zeros((7, 3), np.int64)
    expected[:, 2] = np.arange(7) << 28
    np.testing.assert_array_equal(out.numpy()[:21], expected.reshape(-1))


@tl.kernel
def divide_where_nonzero(out_ptr: Pointer[i32], N: int) -> None:
    """Program (x, y) stores N // x when x > 0: the division by zero of x == 0 is masked off."""
    x, y = tl.program_id(0), tl.program_id(1)
    q = x * 0 - 1
    if x > 0:
        q = (N + y) // x
    tl.store(out_ptr + y * tl.num_programs(0) + x, q)


def test_division_by_zero_is_masked_off_for_compact_values() -> None:
    out = tl.to_device(np.zeros(5 * 6, np.int32), tl.i32)
    with tl.backend("numpy"):
        divide_where_nonzero[(5, 6)](out, 100)
    x, y = np.meshgrid(np.arange(5), np.arange(6))
    expected = np.where(x > 0, (100 + y) // np.maximum(x, 1), -1)
    np.testing.assert_array_equal(out.numpy(), expected.reshape(-1))


@tl.kernel
def column_of(out_ptr: Pointer[f32], x_ptr: Pointer[f32], W: int) -> None:
    """Program (x, y) copies x_ptr[y * W + x] when x is even, else x_ptr[y]."""
    x, y = tl.program_id(0), tl.program_id(1)
    src = y + 0
    if x % 2 == 0:
        src = y * W + x
    tl.store(out_ptr + y * W + x, tl.load(x_ptr + src))


def test_bounds_check_names_the_program_and_offset_of_a_compact_pointer() -> None:
    xs = tl.to_device(np.arange(8 * 6, dtype=np.float32), tl.f32)
    out = tl.to_device(np.full(8 * 6, np.nan, np.float32), tl.f32)
    with tl.backend("numpy"):
        column_of[(8, 6)](out, xs, 8)
        got = out.numpy().reshape(6, 8)
        expected = np.where(np.arange(8)[None, :] % 2 == 0, np.arange(48).reshape(6, 8), np.arange(6)[:, None])
        np.testing.assert_array_equal(got, expected)
        small = tl.to_device(np.arange(40, dtype=np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match=r"out-of-bounds load through x_ptr: program \(0, 5\), lane 0, offset "
                           r"40, but x_ptr has 40 elements"):
            column_of[(8, 6)](out, small, 8)


@tl.kernel
def row_sums(out_ptr: Pointer[f32], x_ptr: Pointer[f32], W: int) -> None:
    """Every program of row y stores to out[y]: programs of one row race."""
    x, y = tl.program_id(0), tl.program_id(1)
    tl.store(out_ptr + y, tl.load(x_ptr + y * W + x))


def test_race_on_a_compact_pointer_names_both_programs() -> None:
    xs = tl.to_device(np.arange(4 * 3, dtype=np.float32), tl.f32)
    out = tl.to_device(np.full(3, np.nan, np.float32), tl.f32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=r"data race on out_ptr\[0\]: program \(\d, 0\) stores "
                                            r"it \(lane 0, line \d+ of test_tiled.py\) and program \(\d, 0\) stores it"):
        row_sums[(4, 3)](out, xs, 4)
    assert np.isnan(out.numpy()).all()


def test_program_ids_of_a_multi_axis_group_are_compact() -> None:
    """White box: the mechanism itself, so a regression to one value per program is seen here
    and not only as a slower benchmark."""
    from tile_lang_numpy import tiled
    from tile_lang_numpy.affine import Tiles
    from tile_lang_numpy.engine import Engine

    engine = Engine(kernel="k", ids=lambda: np.zeros((0, 3), np.int32), grid=(8, 6, 4),
                    origin=(0, 0, 1), box=(8, 6, 3))
    pid_y = tiled.program_id(engine, 1)
    assert isinstance(pid_y.handle, Tiles) and pid_y.handle.compact.shape == (1, 6, 1)
    np.testing.assert_array_equal(pid_y.handle.materialize(), np.tile(np.repeat(np.arange(6), 8), 3))
    planes = tiled.program_id(engine, 2).handle
    assert isinstance(planes, Tiles) and planes.compact.reshape(-1).tolist() == [1, 2, 3]
