"""Launch validation: grids past CUDA's limits, bad options and streams, ints and floats that do
not fit, unsupported dtypes, views a pointer cannot take. Each is a LaunchError naming the kernel
and the parameter, on the checked path (the NumPy backend) and on the fast path of repeat
launches (the no-op backend, after a good launch of the same shape); good inputs still run."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.noop_backend import DeviceArray, NoopBackend
from tile_lang import Pointer, constexpr, f32, i64, registry
from tile_lang.cli import main
from tile_lang.launch_cache import GRID_LIMITS
from tests.test_launch import copy_kernel, launch_untyped


@tl.kernel
def scale_kernel(src: Pointer[f32], dst: Pointer[f32], n: int, alpha: float, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask) * alpha, mask=mask)


@tl.kernel
def gather_kernel(src: Pointer[f32], dst: Pointer[f32], n: int, stride: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * stride, mask=mask), mask=mask)


@tl.kernel
def half_kernel(out: Pointer[i64], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.zeros((BLOCK,), tl.int64) + (n >> 1))


N = 100
RNG = np.random.default_rng(11)


@pytest.fixture
def noop() -> Iterator[NoopBackend]:
    backend = NoopBackend()
    registry.register(backend)
    with tl.backend("noop"):
        yield backend


def device(address: int = 1 << 20) -> Any:
    return DeviceArray(np.dtype(np.float32), address, (N,))


def random_f32(n: int = N) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(n).astype(np.float32)


def poisoned(n: int = N) -> tl.Buffer[f32]:
    return tl.to_device(np.full(n, np.nan, np.float32), tl.f32)


def native(host: np.ndarray[Any, Any]) -> Any:
    """A copy of ``host`` as the current backend's native array (CuPy on the cupy backend)."""
    if registry.current().name == "cupy":
        import cupy

        return cupy.asarray(host)
    return host.copy()


def rejects(message: str, kernel: str = "copy_kernel") -> Any:
    """``pytest.raises`` for a LaunchError naming ``kernel`` whose text holds ``message``."""
    return pytest.raises(tl.LaunchError, match=rf"kernel {kernel}\b.*{re.escape(message)}")


# ---------------------------------------------------------------- grids

BAD_GRIDS = [
    ((GRID_LIMITS[0] + 1,), "grid axis 0 is 2147483648, outside 0..2147483647"),
    ((1, 70000), "grid axis 1 is 70000, outside 0..65535"),
    ((1, 1, 65536), "grid axis 2 is 65536, outside 0..65535"),
    ((2, -1), "grid axis 1 is -1"),
    ((True,), "grid entries must be ints"),
    ((1, np.bool_(True)), "grid entries must be ints"),
    (True, "the grid must be a tuple"),
]


@pytest.mark.parametrize(("grid", "message"), BAD_GRIDS)
def test_grid_beyond_cuda_limits_is_refused(grid: Any, message: str) -> None:
    src, dst = tl.to_device(random_f32(), tl.f32), poisoned()
    with rejects(message):
        launch_untyped(copy_kernel, grid, src, dst, N, BLOCK=64)
    assert np.isnan(dst.numpy()).all()


@pytest.mark.parametrize(("grid", "message"), BAD_GRIDS)
def test_grid_beyond_cuda_limits_is_refused_after_a_good_launch(noop: NoopBackend, grid: Any, message: str) -> None:
    src, dst = device(), device()
    copy_kernel[(2, 3)](src, dst, N, BLOCK=64)
    copy_kernel[(2, 3)](src, dst, N, BLOCK=64)
    before = noop.calls.count
    with rejects(message):
        launch_untyped(copy_kernel, grid, src, dst, N, BLOCK=64)
    with rejects(message):
        launch_untyped(copy_kernel, lambda meta: grid, src, dst, N, BLOCK=64)
    assert noop.calls.count == before


def test_grid_at_cuda_limits_launches(noop: NoopBackend) -> None:
    noop.calls.record = True
    for grid in [GRID_LIMITS, GRID_LIMITS, (np.int64(5), 7)]:
        launch_untyped(copy_kernel, grid, device(), device(), N, BLOCK=64)
    assert [seen[0] for seen in noop.calls.seen] == [GRID_LIMITS, GRID_LIMITS, (5, 7, 1)]


# ---------------------------------------------------------------- options and streams

BAD_OPTIONS = [
    ("num_warps", value) for value in [0, 3, 64, 2**40, True, "4", 4.0, None, -4]
] + [
    ("num_stages", value) for value in [0, -1, True, 1.5, "3", None]
] + [
    ("stream", value) for value in [object(), "0", -1, 2**64, 1.5, True, [3], np.float32(0)]
]


@pytest.mark.parametrize(("name", "value"), BAD_OPTIONS)
def test_bad_option_is_refused(name: str, value: Any) -> None:
    with pytest.raises(tl.LaunchError, match=rf"^{name} must be"):
        tl.Options(**{name: value})
    src, dst = tl.to_device(random_f32(), tl.f32), poisoned()
    with rejects(f"{name} must be"):
        launch_untyped(copy_kernel, (2,), src, dst, N, BLOCK=64, **{name: value})
    assert np.isnan(dst.numpy()).all()


@pytest.mark.parametrize(("name", "value"), BAD_OPTIONS)
def test_bad_option_is_refused_after_a_good_launch(noop: NoopBackend, name: str, value: Any) -> None:
    good = {"num_warps": 4, "num_stages": 3, "stream": 0}[name]
    src, dst = device(), device()
    launch_untyped(copy_kernel, (2,), src, dst, N, BLOCK=64, **{name: good})
    launch_untyped(copy_kernel, (2,), src, dst, N, BLOCK=64, **{name: good})
    before = noop.calls.count
    with rejects(f"{name} must be"):
        launch_untyped(copy_kernel, (2,), src, dst, N, BLOCK=64, **{name: value})
    assert noop.calls.count == before


def test_good_options_run_and_are_normalised() -> None:
    warps: Any = np.int64(8)  # NumPy ints are accepted and stored as ints (mypy asks for int)
    stages: Any = np.int32(2)
    options = tl.Options(num_warps=warps, num_stages=stages, stream=2**64 - 1)
    assert type(options.num_warps) is int and options.num_warps == 8 and type(options.num_stages) is int
    assert hash(options) == hash(tl.Options(num_warps=8, num_stages=2, stream=2**64 - 1))
    host = random_f32(1000)
    for warps in [1, 2, 4, 8, 16, 32]:
        dst = poisoned(1000)
        copy_kernel[(8,), tl.Options(num_warps=warps, num_stages=1, stream=0)](tl.to_device(host, tl.f32), dst, 1000,
                                                                             BLOCK=128)
        np.testing.assert_array_equal(dst.numpy(), host)


# ---------------------------------------------------------------- scalars

@pytest.mark.parametrize(("value", "message"), [
    (True, "parameter n: expected int, got bool"),
    (np.bool_(False), "parameter n: expected int, got bool"),
    (2**64, "parameter n: 18446744073709551616 does not fit in i64 or u64"),
    (-(2**63) - 1, "parameter n: -9223372036854775809 does not fit in i64 or u64"),
    (np.float64(3.0), "parameter n: expected int, got float64"),
])
def test_int_that_does_not_fit_is_refused_on_both_paths(noop: NoopBackend, value: Any, message: str) -> None:
    with tl.backend("numpy"), rejects(message):
        launch_untyped(copy_kernel, (2,), tl.empty(N, tl.f32), tl.empty(N, tl.f32), value, BLOCK=64)
    src, dst = device(), device()
    for good in [5, 2**40, 2**63]:  # every width cached: the bad value must still miss
        copy_kernel[(2,)](src, dst, good, BLOCK=64)
    before = noop.calls.count
    with rejects(message):
        launch_untyped(copy_kernel, (2,), src, dst, value, BLOCK=64)
    assert noop.calls.count == before


def test_ints_are_passed_as_i32_i64_or_u64(noop: NoopBackend) -> None:
    noop.calls.record = True
    values: list[Any] = [5, -(2**31), 2**31, -(2**63), 2**63 - 1, 2**63, 2**64 - 1, np.uint64(2**63 + 5)]
    for value in values * 2:  # checked path, then fast path
        launch_untyped(copy_kernel, (1,), device(), device(), value, BLOCK=64)
    packed = [seen[2][2] for seen in noop.calls.seen]
    assert [type(p) for p in packed] == [np.int32, np.int32, np.int64, np.int64, np.int64, np.uint64, np.uint64,
                                         np.uint64] * 2
    assert [int(p) for p in packed] == [int(v) for v in values] * 2


@pytest.mark.parametrize("n", [5, -7, 2**40 + 3, -(2**40), 2**63 + 12345, 2**64 - 1, -(2**63)])
def test_ints_of_every_width_reach_the_kernel(tile_backend: str, n: int) -> None:
    out = tl.to_device(np.full(4, 99, np.int64), tl.i64)
    half_kernel[(1,)](out, n, BLOCK=4)
    np.testing.assert_array_equal(out.numpy(), np.full(4, n >> 1, np.int64))  # u64 shifts in zeros, i64 the sign


def test_float_that_does_not_fit_is_refused_on_both_paths(noop: NoopBackend) -> None:
    message = "parameter alpha: " + "1" + "0" * 400 + " does not fit in a float"
    with tl.backend("numpy"), rejects(message, "scale_kernel"):
        scale_kernel[(1,)](tl.empty(N, tl.f32), tl.empty(N, tl.f32), N, 10**400, BLOCK=128)
    src, dst = device(), device()
    for _ in range(2):
        scale_kernel[(1,)](src, dst, N, 3, BLOCK=128)  # an int for a float: cached by its type
    with rejects(message, "scale_kernel"):
        scale_kernel[(1,)](src, dst, N, 10**400, BLOCK=128)


def test_ints_and_floats_scale(tile_backend: str) -> None:
    host = random_f32()
    alphas: list[Any] = [3, -0.25, np.float32(1.5), 2**70]
    for alpha in alphas:
        dst = poisoned()
        scale_kernel[(1,)](tl.to_device(host, tl.f32), dst, N, alpha, BLOCK=128)
        np.testing.assert_allclose(dst.numpy(), host.astype(np.float64) * float(alpha), rtol=1e-6)


# ---------------------------------------------------------------- arrays: dtypes and layouts

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, object, "U3"])
def test_array_of_an_unsupported_dtype_names_kernel_parameter_and_dtype(tile_backend: str, dtype: Any) -> None:
    if tile_backend == "cupy" and np.dtype(dtype).kind in "OU":
        pytest.skip("CuPy has no object or string arrays")
    bad = native(np.ones(N, dtype=dtype))
    with rejects(f"parameter dst (Pointer[Float[W32]]): an array of {np.dtype(dtype)} elements"):
        launch_untyped(copy_kernel, (2,), tl.empty(N, tl.f32), bad, N, BLOCK=64)
    with pytest.raises(tl.LaunchError, match=f"wrap: an array of {np.dtype(dtype)} elements"):
        tl.wrap(bad)


def test_strided_views_are_passed_from_their_first_element(tile_backend: str) -> None:
    base = random_f32(3 * N + 2)
    held = native(base)
    dst = poisoned()
    contiguous = native(base[:N])
    gather_kernel[(1,)](contiguous, dst, N, 1, BLOCK=128)  # a contiguous launch first: the fast path has seen it
    np.testing.assert_array_equal(dst.numpy(), base[:N])
    view = held[2::3]
    assert tl.wrap(view, tl.f32).stride(0) == 3
    for _ in range(2):
        dst = poisoned()
        gather_kernel[(1,)](view, dst, N, 3, BLOCK=128)
        np.testing.assert_array_equal(dst.numpy(), base[2::3])


def test_negative_strides_are_refused_on_both_paths(tile_backend: str) -> None:
    host = random_f32()
    held = native(host)
    for _ in range(2):
        dst = poisoned()
        copy_kernel[(2,)](held, dst, N, BLOCK=64)
        np.testing.assert_array_equal(dst.numpy(), host)
    dst = poisoned()
    with rejects("parameter src (Pointer[Float[W32]]): a view with negative strides (-1,) cannot be passed as a "
                 "pointer"):
        copy_kernel[(2,)](held[::-1], dst, N, BLOCK=64)
    with pytest.raises(tl.LaunchError, match=r"wrap: a view with negative strides \(-1,\)"):
        tl.wrap(held[::-1])
    with rejects("parameter src (Pointer[Float[W32]]): a view with negative strides (-25, -1)"):
        copy_kernel[(1,)](native(np.ones((4, 25), np.float32))[::-1, ::-1], dst, N, BLOCK=128)
    assert np.isnan(dst.numpy()).all()


def test_unaligned_arrays_are_refused(tile_backend: str) -> None:
    raw = native(np.zeros(4 * N + 4, np.uint8))
    try:
        unaligned = raw[1:4 * N + 1].view(np.float32)
    except ValueError as exc:
        pytest.skip(f"this backend's arrays cannot be viewed unaligned: {exc}")
    dst = poisoned()
    with rejects("parameter src (Pointer[Float[W32]]): an array at address"):
        copy_kernel[(2,)](unaligned, dst, N, BLOCK=64)
    assert np.isnan(dst.numpy()).all()


def test_strides_that_split_elements_are_refused() -> None:
    raw = np.zeros(5 * N, np.uint8)
    packed = np.lib.stride_tricks.as_strided(raw[:4].view(np.float32), shape=(N,), strides=(5,))
    with rejects("parameter src (Pointer[Float[W32]]): a view with byte strides (5,), not multiples of its 4-byte"):
        launch_untyped(copy_kernel, (2,), packed, tl.empty(N, tl.f32), N, BLOCK=64)


def test_extent_one_and_broadcast_views_are_accepted() -> None:
    host = random_f32()
    row = np.lib.stride_tricks.as_strided(host, shape=(1, N), strides=(-4, 4))  # a step never taken
    dst = poisoned()
    launch_untyped(copy_kernel, (2,), row, dst, N, BLOCK=64)
    np.testing.assert_array_equal(dst.numpy(), host)
    assert tl.wrap(np.broadcast_to(host[:1], (N,))).stride(0) == 0


# ---------------------------------------------------------------- kernels without a source file

def _repl_kernel() -> tl.Kernel[Any]:
    namespace: dict[str, Any] = {}
    exec(  # noqa: S102 (a kernel defined as a REPL defines it: no file behind it)
        "import tile_lang as tl\n"
        "from tile_lang import Pointer, constexpr, f32\n"
        "@tl.kernel\n"
        "def repl_kernel(x: Pointer[f32], n: int, B: constexpr) -> None:\n"
        "    offs = tl.arange(0, B)\n"
        "    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n)\n",
        namespace)
    kernel: tl.Kernel[Any] = namespace["repl_kernel"]
    return kernel


_REPL: dict[str, Any] = {}
exec("import tile_lang as tl\n@tl.func\ndef doubled(x):\n    return x * 2.0\n", _REPL)  # noqa: S102
repl_doubled: Any = _REPL["doubled"]


@tl.kernel
def calls_repl_helper(x: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(x + offs, repl_doubled(tl.load(x + offs)))


def test_a_helper_without_source_is_reported_at_its_call() -> None:
    with pytest.raises(tl.KernelError, match=r"in kernel calls_repl_helper: could not get source code") as info:
        calls_repl_helper.cuda_source(B=8)
    assert "tl.store(x + offs, repl_doubled(tl.load(x + offs)))" in str(info.value)


def test_inspecting_a_kernel_without_source_is_a_kernel_error() -> None:
    kernel = _repl_kernel()
    with pytest.raises(tl.KernelError, match=r"in kernel repl_kernel: its source is unavailable .*\.py module"):
        kernel.inspect(B=8)
    with pytest.raises(tl.KernelError, match=r"in kernel repl_kernel: its source is unavailable .*\.py module"):
        kernel.cuda_source(B=8)
    host = random_f32(8)
    buf = tl.to_device(host, tl.f32)
    kernel[(1,)](buf, 8, B=8)  # the reference backend runs the function itself: no source needed
    np.testing.assert_array_equal(buf.numpy(), host * 2)


def test_inspect_checks_constexprs_and_num_warps() -> None:
    with rejects("has no constexpr 'BLOK' (its constexprs: BLOCK)"):
        copy_kernel.inspect(BLOK=64)
    with rejects("missing constexpr(s) BLOCK"):
        copy_kernel.cuda_source()
    with rejects("constexpr BLOCK must be an int, float, bool, str, None, a dtype or a tuple of these, got list"):
        copy_kernel.inspect(BLOCK=[64])
    with rejects("num_warps must be an int power of two"):
        copy_kernel.inspect(num_warps=3, BLOCK=64)
    assert "program_id" in copy_kernel.inspect(BLOCK=64)


# ---------------------------------------------------------------- tile-lang inspect

@pytest.mark.parametrize(("target", "extra", "message"), [
    ("missing.mod:k", [], "cannot import module 'missing.mod' (No module named 'missing')"),
    ("tests.test_launch:nope", [], "module tests.test_launch has no kernel 'nope' (its kernels: copy_kernel, "),
    ("tests.test_launch:buffers", [], "tests.test_launch:buffers is a function, not a @tl.kernel"),
    ("tests.test_launch", [], "expected MODULE:KERNEL"),
    ("tests.test_launch:copy_kernel", ["--constexpr", "BLOK=64"], "kernel copy_kernel has no constexpr 'BLOK'"),
    ("tests.test_launch:copy_kernel", [], "kernel copy_kernel: missing constexpr(s) BLOCK"),
    ("tests.test_launch:copy_kernel", ["--constexpr", "BLOCK=64", "--num-warps", "64"], "num_warps must be"),
])
def test_cli_usage_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], target: str, extra: list[str],
                                                  message: str) -> None:
    assert main(["inspect", target, *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("tile-lang: error: ") and message in err


def test_cli_prints_no_traceback() -> None:
    run = subprocess.run([sys.executable, "-m", "tile_lang.cli", "inspect", "missing.mod:k"], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr == "tile-lang: error: cannot import module 'missing.mod' (No module named 'missing')\n"
    good = subprocess.run([sys.executable, "-m", "tile_lang.cli", "inspect", "tests.test_launch:copy_kernel",
                           "--constexpr", "BLOCK=64", "--cuda"], capture_output=True, text=True, check=False)
    assert good.returncode == 0 and "__global__" in good.stdout
