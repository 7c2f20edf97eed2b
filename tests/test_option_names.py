"""A kernel parameter named like a launch option: ``num_warps``/``num_stages`` passed by keyword set
both the parameter and the option (Triton's rule, which tutorial 02 relies on); ``stream`` is refused."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32


@tl.kernel
def staged_copy(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr, num_stages: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.f32)
    for _ in tl.range(0, num_stages, num_stages=num_stages):
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, acc, mask=offs < n)


def test_a_num_stages_parameter_takes_the_keyword_and_sets_the_option() -> None:
    x = np.random.default_rng(3).standard_normal(50).astype(np.float32)
    with tl.backend("numpy"):
        src, out = tl.to_device(x, tl.f32), tl.to_device(np.full(50, np.nan, np.float32), tl.f32)
        staged_copy[(1,)](src, out, 50, BLOCK=64, num_stages=2)
        np.testing.assert_allclose(out.numpy(), 2.0 * x.astype(np.float64), rtol=1e-6)
        launch = staged_copy[(1,)].prepare((src, out, 50), {"BLOCK": 64, "num_stages": 2})
    assert launch.constexprs["num_stages"] == 2 and launch.options.num_stages == 2


@tl.kernel
def scaled_copy(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def test_launch_option_keywords_type_check_and_set_the_options() -> None:
    """Triton's spelling, checked by tile_lang_mypy (no ignore here): the keywords are the launch's
    options, over those of a tl.Options next to the grid, and the kernel's arguments are unchanged."""
    x = np.random.default_rng(4).standard_normal(300).astype(np.float32)
    with tl.backend("numpy"):
        src, out = tl.to_device(x, tl.f32), tl.to_device(np.full(300, np.nan, np.float32), tl.f32)
        scaled_copy[(tl.cdiv(300, 128),)](src, out, 300, BLOCK=128, num_warps=8, num_stages=2)
        np.testing.assert_allclose(out.numpy(), 3.0 * x.astype(np.float64), rtol=1e-6)
        launch = scaled_copy[(1,), tl.Options(num_warps=2, num_stages=4)].prepare((src, out, 300),
                                                                                   {"BLOCK": 128, "num_warps": 8})
        assert (launch.options.num_warps, launch.options.num_stages) == (8, 4)
        assert dict(launch.constexprs) == {"BLOCK": 128}
        with pytest.raises(tl.LaunchError, match="kernel scaled_copy: num_warps must be an int power of two"):
            scaled_copy[(1,)](src, out, 300, BLOCK=128, num_warps=6)


def test_a_stream_parameter_is_a_kernel_error_naming_it() -> None:
    with pytest.raises(tl.KernelError, match="parameter 'stream' is the name of a launch option") as info:
        @tl.kernel
        def with_stream(x_ptr: Pointer[f32], stream: int) -> None:
            tl.store(x_ptr, tl.load(x_ptr))
    assert info.value.filename == __file__ and "with_stream" in str(info.value)
