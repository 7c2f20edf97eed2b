"""Launch checks: bad launches fail before anything runs, naming kernel and parameter."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr, f16, f32

W = TypeVar("W", bound=Width)


@tl.kernel
def copy_kernel(src: Pointer[f32], dst: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def generic_copy(src: Pointer[Float[W]], dst: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def odd_arange(dst: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.zeros((BLOCK,), tl.f32))


def buffers(n: int = 100) -> tuple[tl.Buffer[f32], tl.Buffer[f32]]:
    return tl.to_device(np.random.default_rng(1).random(n, dtype=np.float32), tl.f32), tl.empty(n, tl.f32)


def launch_untyped(kernel: tl.Kernel[Any], grid: Any, *args: Any, **kwargs: Any) -> None:
    """Launch bypassing static checks, to test the run-time ones."""
    kernel[grid](*args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1, 2, 100), {"BLOCK": 64}, "parameter src (Pointer[Float[W32]]): expected a tile_lang Buffer"),
        (("f16", "dst", 100), {"BLOCK": 64}, "parameter src (Pointer[Float[W32]]): got a buffer of Float[W16]"),
        (("src", "dst", 1.5), {"BLOCK": 64}, "parameter n: expected int, got float"),
        (("src", "dst", 100), {}, "missing argument(s) BLOCK"),
        (("src", "dst", 100), {"BLOCKK": 64}, "has no parameter 'BLOCKK'"),
        (("src", "dst", 100), {"BLOCK": [64]}, "constexpr BLOCK must be an int, float, bool, str, None, a dtype or a tuple of these, got list"),
    ],
)
def test_bad_launch_names_kernel_and_parameter(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    src, dst = buffers()
    named = {"src": src, "dst": dst, "f16": tl.empty(100, tl.f16)}
    real = tuple(named.get(a, a) if isinstance(a, str) else a for a in args)
    before = dst.numpy().copy()
    with pytest.raises(tl.LaunchError, match="copy_kernel") as info:
        launch_untyped(copy_kernel, (2,), *real, **kwargs)
    assert message in str(info.value)
    np.testing.assert_array_equal(dst.numpy(), before)


@pytest.mark.parametrize("grid", [(1, 1, 1, 1), (-1,), (2.0,), ()])
def test_bad_grid(grid: Any) -> None:
    src, dst = buffers()
    with pytest.raises(tl.LaunchError, match="copy_kernel"):
        launch_untyped(copy_kernel, grid, src, dst, 100, BLOCK=64)


def test_zero_grid_launches_nothing() -> None:
    src, _ = buffers()
    dst = tl.to_device(np.full(100, np.nan, np.float32), tl.f32)
    copy_kernel[(0,)](src, dst, 100, BLOCK=64)
    assert np.isnan(dst.numpy()).all()


def test_grid_callable_and_options() -> None:
    src, dst = buffers(1000)
    copy_kernel[lambda meta: (tl.cdiv(1000, meta["BLOCK"]),), tl.Options(num_warps=8)](src, dst, 1000, BLOCK=128)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    launch_untyped(copy_kernel, (8,), src, tl.empty(1000, tl.f32), 1000, BLOCK=128, num_warps=2, num_stages=2)
    with pytest.raises(tl.LaunchError, match="num_warps"):
        tl.Options(num_warps=3)


def test_generic_kernel_binds_width_consistently() -> None:
    src16 = tl.to_device(np.arange(10, dtype=np.float16), tl.f16)
    dst16 = tl.to_device(np.full(10, np.nan, np.float16), tl.f16)
    generic_copy[(1,)](src16, dst16, 10, BLOCK=16)
    np.testing.assert_array_equal(dst16.numpy(), src16.numpy())
    with pytest.raises(tl.LaunchError, match=r"parameter dst \(Pointer\[Float\[W\]\]\): got a buffer of Float\[W32\]"):
        launch_untyped(generic_copy, (1,), src16, tl.empty(10, tl.f32), 10, BLOCK=16)
    with pytest.raises(tl.LaunchError, match="got a buffer of Int"):
        launch_untyped(generic_copy, (1,), tl.empty(10, tl.i32), tl.empty(10, tl.i32), 10, BLOCK=16)


def test_non_power_of_two_arange_names_the_line() -> None:
    with pytest.raises(tl.KernelError, match=r"test_launch.py:\d+:.*odd_arange.*power of two") as info:
        odd_arange[(1,)](tl.empty(12, tl.f32), BLOCK=12)
    assert "offs = tl.arange(0, BLOCK)" in str(info.value)


def test_to_device_checks_dtype_and_buffers_round_trip() -> None:
    with pytest.raises(TypeError, match="float64"):
        tl.to_device(np.zeros(3), tl.f32)
    host = np.arange(12, dtype=np.int16).reshape(3, 4)
    buf = tl.to_device(host)
    assert buf.shape == (3, 4) and buf.dtype == tl.i16 and buf.stride(0) == 4 and buf.stride(1) == 1
    np.testing.assert_array_equal(buf.numpy(), host)
    assert tl.empty((2, 3), tl.bf16).numpy().shape == (2, 3)


def test_registry_reports_backends() -> None:
    rows = {b.name: b for b in tl.backends()}
    assert rows["numpy"].available and rows["numpy"].reason is None
    assert "cupy" in rows
    if not rows["cupy"].available:
        assert rows["cupy"].reason
    with pytest.raises(ValueError, match="unknown tile_lang backend 'nope'"):
        with tl.backend("nope"):
            pass


def test_func_capturing_a_local_is_rejected_when_decorated() -> None:
    scale = 2.0

    def scaled(x: tl.Tensor0[f32]) -> tl.Tensor0[f32]:
        return x * scale

    with pytest.raises(TypeError, match="captures local variable"):
        tl.func(scaled)


def test_out_of_bounds_store_reports_program_lane_and_offset() -> None:
    dst = tl.to_device(np.zeros(100, np.float32), tl.f32)
    with pytest.raises(tl.KernelError) as info:
        odd_arange[(1,)](dst, BLOCK=128)
    text = str(info.value)
    assert "out-of-bounds store through dst: program (0,), lane 100, offset 100" in text
    assert "tl.store(dst + offs" in text
    np.testing.assert_array_equal(dst.numpy(), np.zeros(100, np.float32))


def test_f16_buffer_typed() -> None:
    buf: tl.Buffer[f16] = tl.empty(4, tl.f16)
    assert buf.dtype == tl.f16


@tl.kernel
def scaled_copy(src: Pointer[f32], dst: Pointer[f32], n: int, scale: float = 2.0, BLOCK: constexpr = 64) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * scale, mask=offs < n)


def test_parameters_with_defaults_may_be_omitted() -> None:
    """As in Python and Triton: a launch, inspect and cuda_source use a parameter's default."""
    x = np.random.default_rng(4).standard_normal(100).astype(np.float32)
    src = tl.to_device(x, tl.f32)
    for kwargs, factor in (({}, 2.0), ({"scale": -0.5}, -0.5), ({"BLOCK": 32}, 2.0)):
        out = tl.to_device(np.full(100, np.nan, np.float32), tl.f32)
        scaled_copy[(4,)](src, out, 100, **kwargs)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * factor, rtol=1e-6)
    assert "const[64]" in scaled_copy.inspect() and "const[32]" in scaled_copy.inspect(BLOCK=32)


def test_inspect_takes_the_pointee_of_generic_pointers() -> None:
    """``cuda_source``/``inspect`` specialise a generic ``Pointer[Float[W]]`` to the dtype given by
    the parameter's name (f32 when none is), checked against its pattern as a launch would be."""
    assert "__half" in generic_copy.cuda_source(src=tl.f16, dst=tl.f16, BLOCK=64)
    assert "__half" not in generic_copy.cuda_source(BLOCK=64)
    assert "Pointer[tl.bf16]" in generic_copy.inspect(src=tl.bf16, dst=tl.bf16, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="dst is Pointer.*tl.f32.*does not fit"):
        generic_copy.cuda_source(src=tl.f16, dst=tl.f32, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="src takes a dtype here"):
        generic_copy.inspect(src=3, BLOCK=64)


def test_annotations_may_name_an_alias_the_kernel_captures() -> None:
    """A kernel made inside a function, under ``from __future__ import annotations``, may name an
    alias imported there (``import tile_lang as tl`` in a test): its string annotations resolve in
    its module and in the variables its body captures."""
    import tile_lang as tlx

    @tlx.kernel
    def shift(x_ptr: tlx.Pointer[tlx.f32], out_ptr: tlx.Pointer[tlx.f32], BLOCK: tlx.constexpr) -> None:
        offs = tlx.arange(0, BLOCK)
        tlx.store(out_ptr + offs, tlx.load(x_ptr + offs) + 1.0)

    x = np.random.default_rng(7).standard_normal(16).astype(np.float32)
    out = tl.to_device(np.full(16, np.nan, np.float32))
    shift[(1,)](tl.to_device(x), out, BLOCK=16)
    np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + 1.0, rtol=1e-6)
    assert [p.kind.name for p in shift.params] == ["POINTER", "POINTER", "CONSTEXPR"]
