"""The fast path of repeat launches (tile_lang.launch_cache), on a backend that launches nothing and
on the CUDA backend over a stand-in CuPy: repeats skip the checks, every launch the checks would
reject still fails before running, with the same message, and the kernel receives the same bytes."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.launch_bench import FakeArray, FakeMemory, without_driver
from benchmarks.noop_backend import DeviceArray, Handle, NoopBackend, null_stream, read_params
from tile_lang import Pointer, constexpr, f32, registry
from tile_lang.kernel import Launch
from tile_lang.launch_cache import int_class, plain_grid
from tile_lang.signature import ParamKind, typed_by_class
from tile_lang_cupy import launch as launching
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
    assert int_class(16) != int_class(17) != int_class(1) and int_class(-16) != int_class(16)
    assert int_class(2**31) >> 3 == 2 and int_class(2**63) >> 3 == 3 and int_class(2**64) >> 3 == 0
    assert int_class(-(2**31)) >> 3 == 1 and int_class(-(2**63) - 1) >> 3 == 0
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


# ---- the CUDA backend's own launch path, over a stand-in CuPy (benchmarks/launch_bench.py) ---------


@tl.kernel
def scaled_copy(src: Pointer[f32], dst: Pointer[f32], n: int, alpha: float, negate: bool, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n) * alpha
    tl.store(dst + offs, tl.where(negate, -x, x), mask=offs < n)


@dataclass
class Driver:
    """Kernels loaded without compiling (each load a compile: ``loads`` holds their disk keys), and
    what each ``cuLaunchKernel`` got: the grid and the arguments read back from its parameters."""

    layouts: list[tuple[str | None, ...]] = field(default_factory=list)
    loads: list[str | None] = field(default_factory=list)
    seen: list[tuple[tuple[int, int, int], tuple[Any, ...]]] = field(default_factory=list)
    streams: list[int] = field(default_factory=list)

    def load(self, launch: Launch, spec_text: str | None, capability: int) -> launching.Compiled:
        self.layouts.append(tuple(None if a.dtype.is_pointer else a.dtype.numpy.str
                                  for a in map(launching.arg_spec, launch.args)))
        self.loads.append(spec_text)
        return launching.Compiled(32 * launch.options.num_warps, 0, self.layouts[-1], 0,
                                  Handle(len(self.layouts) - 1), lambda: 0)

    def launch_kernel(self, function: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,
                      stream: int, params: int, extra: int) -> None:
        self.seen.append(((gx, gy, gz), read_params(self.layouts[function], params)))
        self.streams.append(stream)


@contextmanager
def stand_in(load: Callable[[Launch, str | None, int], launching.Compiled],
             launch_kernel: Callable[..., None]) -> Iterator[None]:
    """The CUDA backend selected over a stand-in CuPy, kernels loaded by ``load`` and CuPy's
    ``cuLaunchKernel`` call made to ``launch_kernel``."""
    with without_driver(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(launching, "load", load)
        sys.modules["cupy"].cuda.driver.launchKernel = launch_kernel
        yield


@pytest.fixture
def cuda() -> Iterator[Driver]:
    """The CUDA backend selected, its CuPy a stand-in and its driver call recorded."""
    driver = Driver()
    with stand_in(driver.load, driver.launch_kernel):
        yield driver


def device_array(dtype: Any = np.float32, address: int = 1 << 32, shape: tuple[int, ...] = (100,),
                 strides: tuple[int, ...] | None = None) -> Any:
    itemsize = np.dtype(dtype).itemsize
    return FakeArray(np.dtype(dtype), shape, strides or (itemsize,), FakeMemory(address))


def test_the_kernel_receives_each_argument_in_its_width(cuda: Driver, checked: list[int]) -> None:
    rng = np.random.default_rng(7)
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    for n in [100, 101, 2**40 + 3, 2**63 + 5]:
        alpha = float(rng.standard_normal())
        for _ in range(2):  # the second takes the fast path
            launch_untyped(scaled_copy, (3, 2), src, dst, n, alpha, True, BLOCK=64)
        width = np.int32 if n < 2**31 else np.int64 if n < 2**63 else np.uint64
        for grid, args in cuda.seen[-2:]:
            assert grid == (3, 2, 1) and args == (1 << 32, (1 << 32) + 4096, width(n), np.float32(alpha), True)
            assert type(args[2]) is width and type(args[3]) is np.float32
    assert checked[0] == len(cuda.loads) == 3  # 100 and 101 share a specialisation and its fast-path entry


def test_the_fast_and_checked_paths_pass_the_same_arguments(cuda: Driver, checked: list[int]) -> None:
    """A NumPy int for an ``int`` takes the checked path at every launch; the fast path must pass what it passes."""
    src, dst = device_array(), device_array()
    alpha = float(np.random.default_rng(8).standard_normal())
    for n in [77, np.int64(77), 77, np.int64(77)]:
        launch_untyped(scaled_copy, (1,), src, dst, n, alpha, False, BLOCK=64)
    assert checked[0] == 3 and len({args for _, args in cuda.seen}) == 1 and len(cuda.loads) == 1


def test_a_float_beyond_f32_passes_as_infinity_on_both_paths(cuda: Driver, checked: list[int]) -> None:
    src, dst = device_array(), device_array()
    for alpha in [1e300, 1e300, np.float64(-1e300)]:
        with pytest.warns(RuntimeWarning, match="overflow"):  # as NumPy converts it
            launch_untyped(scaled_copy, (1,), src, dst, 10, alpha, False, BLOCK=64)
    assert [args[3] for _, args in cuda.seen] == [np.inf, np.inf, -np.inf] and checked[0] == 2


def test_a_changed_specialisation_fact_takes_a_new_compile(cuda: Driver, checked: list[int]) -> None:
    """An int becoming 1 or a multiple of 16, or wider than i32, a pointer's alignment, a dtype:
    each is a new specialisation, compiled, never a stale fast-path entry; repeats compile nothing."""
    aligned, shifted = device_array(), device_array(address=(1 << 32) + 4)
    calls: list[tuple[tl.Kernel[Any], Any, int]] = [
        (copy_kernel, aligned, 100), (copy_kernel, aligned, 1), (copy_kernel, aligned, 96),
        (copy_kernel, aligned, 2**31), (copy_kernel, shifted, 100), (generic_copy, aligned, 100),
        (generic_copy, device_array(np.float16), 100)]
    for kernel, buffer, n in calls * 2:
        launch_untyped(kernel, (1,), buffer, buffer, n, BLOCK=64)
    assert len(cuda.loads) == len(calls) and checked[0] == len(calls)
    assert len(set(cuda.loads[:5])) == 5 and cuda.loads[6] != cuda.loads[5]
    launch_untyped(copy_kernel, (1,), aligned, aligned, 97, BLOCK=64)  # as 100: neither 1 nor a multiple of 16
    assert len(cuda.loads) == checked[0] == len(calls) and cuda.seen[-1][1][2] == np.int32(97)


@pytest.mark.parametrize("on", ["noop", "cuda"])
@pytest.mark.parametrize(("args", "kwargs", "message"), BAD_ARGUMENTS)
def test_bad_arguments_fail_alike_before_and_after_a_fast_path(on: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                                               message: str, request: pytest.FixtureRequest) -> None:
    """The same error, word for word, from a kernel never launched and from one whose fast path is warm."""
    request.getfixturevalue("noop" if on == "noop" else "cuda")
    src, dst = (array(), array()) if on == "noop" else (device_array(), device_array())
    real = tuple({"src": src, "dst": dst}.get(a, a) if isinstance(a, str) else a for a in args)
    errors = []
    for warm in [False, True]:
        fresh: tl.Kernel[Any] = tl.kernel(copy_kernel.fn)
        if warm:
            for _ in range(2):
                fresh[(2,)](src, dst, 100, BLOCK=64)
        with pytest.raises(tl.LaunchError) as info:
            launch_untyped(fresh, (2,), *real, **kwargs)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and message in errors[0]


def test_a_view_with_a_negative_stride_is_checked_at_each_shape(cuda: Driver) -> None:
    """A negative stride on a dimension of one element never steps, so adoption takes it; the same
    stride on a longer view is refused, though a fast-path entry exists for the first."""
    dst = device_array()
    single = device_array(shape=(1,), strides=(-4,))
    for _ in range(2):
        copy_kernel[(1,)](single, dst, 1, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="negative strides"):
        copy_kernel[(1,)](device_array(shape=(5,), strides=(-4,)), dst, 1, BLOCK=64)
    assert len(cuda.seen) == 2


@pytest.mark.parametrize("on", ["numpy", "noop", "cuda"])
def test_launch_cooperative_grid_false_is_accepted_and_true_refused(on: str, request: pytest.FixtureRequest) -> None:
    if on == "numpy":
        scope: Any = tl.backend("numpy")
        scope.__enter__()
        request.addfinalizer(lambda: scope.__exit__(None, None, None))
        src, dst = tl.empty(100, tl.f32), tl.empty(100, tl.f32)
    else:
        request.getfixturevalue("noop" if on == "noop" else "cuda")
        src, dst = (array(), array()) if on == "noop" else (device_array(), device_array())
    for _ in range(2):
        launch_untyped(copy_kernel, (1,), src, dst, 100, BLOCK=64, launch_cooperative_grid=False)
        copy_kernel[(1,), tl.Options(launch_cooperative_grid=False)](src, dst, 100, BLOCK=64)
    refused = "kernel copy_kernel: launch_cooperative_grid=True: cooperative launches .* are not supported yet"
    with pytest.raises(tl.LaunchError, match=refused):
        launch_untyped(copy_kernel, (1,), src, dst, 100, BLOCK=64, launch_cooperative_grid=True)
    with pytest.raises(tl.LaunchError, match=refused):
        copy_kernel[(1,), tl.Options(launch_cooperative_grid=True)](src, dst, 100, BLOCK=64)
    with pytest.raises(tl.LaunchError, match="kernel copy_kernel: launch_cooperative_grid must be a bool, got 'no'"):
        launch_untyped(copy_kernel, (1,), src, dst, 100, BLOCK=64, launch_cooperative_grid="no")
    with pytest.raises(tl.LaunchError, match="kernel copy_kernel: num_ctas=2: clusters are not supported yet"):
        launch_untyped(copy_kernel, (1,), src, dst, 100, BLOCK=64, num_ctas=2)


def test_unannotated_parameters_are_typed_by_class_except_dtype_markers() -> None:
    """Kinds found by the arguments' classes, but for a class whose instances may be dtype
    markers (``tl.f32`` is a class): there each value is typed again."""
    from tests.gradual_kernels import add_kernel

    def kinds(value: Any) -> list[ParamKind]:
        return [p.kind for p in add_kernel.specialised((value, value, value, 4), {"BLOCK": 64}).params]

    assert kinds(array()) == [ParamKind.POINTER] * 3 + [ParamKind.SCALAR, ParamKind.CONSTEXPR]
    assert kinds(tl.f32)[:3] == [ParamKind.CONSTEXPR] * 3  # a dtype: a compile-time constant
    assert kinds(DeviceArray)[:3] == [ParamKind.POINTER] * 3  # a class, not a dtype: a pointer (adoption refuses it)
    assert kinds(tl.f16)[:3] == [ParamKind.CONSTEXPR] * 3
    assert not typed_by_class(type) and typed_by_class(DeviceArray) and typed_by_class(int)


def test_threads_launching_one_runner_each_pass_their_own_arguments() -> None:
    """The driver reads a launch's arguments without the GIL, so each thread packs into memory of
    its own: here the stand-in driver yields before reading, letting the other thread pack meanwhile."""
    seen: list[tuple[int, int]] = []

    def driver(*call: int) -> None:  # cuLaunchKernel's arguments; the kernel parameters at call[9]
        time.sleep(0.0005)
        address, n = read_params((None, "<i4"), call[9])
        seen.append((address, int(n)))

    run = launching.Compiled(32, 0, (None, "<i4"), 0, Handle(0), lambda: 0, launch_kernel=driver,
                             current_stream=null_stream).runner(None)
    start = threading.Barrier(2)

    def launches(thread: int) -> None:
        start.wait()
        for n in range(40):
            run((1, 1, 1), (4096 * (thread + 1), 1000 * thread + n))

    workers = [threading.Thread(target=launches, args=(t,)) for t in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(seen) == sorted((4096 * (t + 1), 1000 * t + n) for t in range(2) for n in range(40))


def test_a_repeated_warmup_finds_its_compile_without_the_checks(noop: NoopBackend, checked: list[int],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's ``fn.warmup(...)`` repeated for one specialisation (tutorial 02 warms up before every
    launch it times) finds the compile by the fast path's key: no checks, the same handle inside;
    another specialisation (a new constexpr) is checked and compiled anew."""
    import tile_lang.as_triton.device as device
    import tile_lang.as_triton.shim as shim

    monkeypatch.setattr(device, "facts", lambda index=None: device.STAND_IN)
    warm = shim.JITFunction(copy_kernel.fn).warmup
    first = warm(array(), array(address=2 << 20), 100, BLOCK=64, grid=(1,)).compiled
    before = checked[0]
    assert warm(array(address=3 << 20), array(address=4 << 20), 100, BLOCK=64, grid=(1,)).compiled is first
    assert checked[0] == before
    assert warm(array(), array(), 100, BLOCK=128, grid=(1,)).compiled is not first
    assert checked[0] == before + 1


def test_a_launch_given_no_stream_runs_on_cupys_then_torchs_current_stream(cuda: Driver,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """On the stream the code made current in CuPy; else on torch's current stream where torch has
    CUDA started, as Triton launches (tutorial 02 benchmarks on a torch stream of its own, which
    does not wait for the default stream); else on the default stream. Repeats take the fast path."""
    from types import SimpleNamespace

    src, dst = device_array(), device_array()
    for _ in range(2):
        launch_untyped(scaled_copy, (1,), src, dst, 100, 1.0, False, BLOCK=64)
    asked: list[int] = []

    def current_raw_stream(device: int) -> int:
        asked.append(device)
        return 0x7000

    torch = SimpleNamespace(cuda=SimpleNamespace(is_initialized=lambda: True),
                            _C=SimpleNamespace(_cuda_getCurrentRawStream=current_raw_stream))
    monkeypatch.setitem(sys.modules, "torch", torch)
    for _ in range(2):
        launch_untyped(scaled_copy, (1,), src, dst, 100, 1.0, False, BLOCK=64)
    monkeypatch.setattr(sys.modules["cupy"].cuda.get_current_stream(), "ptr", 0x5000)
    launch_untyped(scaled_copy, (1,), src, dst, 100, 1.0, False, BLOCK=64)
    assert cuda.streams == [0, 0, 0x7000, 0x7000, 0x5000] and asked == [0, 0]


def test_a_parameter_named_like_an_option_takes_the_fast_path(noop: NoopBackend, checked: list[int]) -> None:
    """``num_stages=`` naming both a constexpr parameter and the option (tutorial 02) repeats on the
    fast path, each value its own entry; a launch binding it twice still fails."""
    from tests.test_option_names import staged_copy

    src, dst = array(), array(address=2 << 20)
    for stages in (2, 2, 3, 3, 2):
        staged_copy[(1,)](src, dst, 50, BLOCK=64, num_stages=stages)
    assert checked[0] == 2 and noop.runners == 2 and noop.calls.count == 5
    with pytest.raises(tl.LaunchError, match="given twice"):
        launch_untyped(staged_copy, (1,), src, dst, 50, 64, 2, num_stages=2)


@tl.kernel
def scaled_by(src: Pointer[f32], dst: Pointer[f32], n: int, SCALE: constexpr, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * SCALE, mask=offs < n)


def test_constexprs_equal_under_eq_take_entries_of_their_own(noop: NoopBackend, checked: list[int]) -> None:
    """0.0 and -0.0, 1, 1.0 and True, (1, 2) and (1.0, 2.0) compare equal but compile differently:
    each is checked once, then repeats on its own entry."""
    src, dst = array(), array()
    scales: list[Any] = [0.0, -0.0, 1, 1.0, True, (1, 2), (1.0, 2.0)]
    for scale in scales * 2:
        scaled_by[(1,)](src, dst, 100, SCALE=scale, BLOCK=64)
    assert checked[0] == noop.runners == len(scales) and noop.calls.count == 2 * len(scales)


def test_pointers_of_another_class_than_the_first_launchs_repeat_too(noop: NoopBackend, checked: list[int]) -> None:
    """The key of a call shape reads its first launch's pointer classes directly, any other through
    the backend's probes: both repeat on the fast path."""
    buffers, arrays = (tl.empty(100, tl.f32), tl.empty(100, tl.f32)), (array(), array(address=2 << 20))
    for src, dst in [arrays, buffers, arrays, buffers, (arrays[0], buffers[1])] * 2:
        copy_kernel[(1,)](src, dst, 100, BLOCK=64)
    assert checked[0] == 3 and noop.calls.count == 10


def test_a_constant_grid_reuses_its_launcher_and_a_callable_one_is_not_held(noop: NoopBackend) -> None:
    import gc
    import weakref

    grid = (2,)
    assert copy_kernel[grid] is copy_kernel[grid] and copy_kernel[(3,)] is not copy_kernel[grid]
    options = tl.Options(num_warps=8)
    assert copy_kernel[grid, options].options is options

    def by_block(meta: dict[str, Any]) -> tuple[int]:
        return (tl.cdiv(100, meta["BLOCK"]),)

    held = weakref.ref(by_block)
    copy_kernel[by_block](array(), array(), 100, BLOCK=64)
    del by_block
    gc.collect()
    assert held() is None


def test_a_backend_registered_again_under_its_name_takes_the_launches(checked: list[int]) -> None:
    """A kernel finds the backend it launched on by name, unless another was registered under it since."""
    src, dst = array(), array()
    first, second = NoopBackend(), NoopBackend()
    registry.register(first)
    with tl.backend("noop"):
        for _ in range(2):
            copy_kernel[(1,)](src, dst, 100, BLOCK=64)
        registry.register(second)
        for _ in range(2):
            copy_kernel[(1,)](src, dst, 100, BLOCK=64)
    assert (first.calls.count, first.runners, second.calls.count, second.runners, checked[0]) == (2, 1, 2, 1, 2)


def test_unannotated_kernels_are_found_by_positional_classes_and_keywords_alike(noop: NoopBackend) -> None:
    """An unannotated kernel's typed specialisation is found by its positional arguments' classes, or
    by the specialising ones when some come by keyword: the same one, and a new class a new one."""
    from tests.gradual_kernels import add_kernel

    x, y, out = array(), array(), array()
    found = {add_kernel.specialised((x, y, out, 4), {"BLOCK": 64}) for _ in range(2)}
    found.add(add_kernel.specialised((x, y), {"out_ptr": out, "n": 4, "BLOCK": 64}))
    assert len(found) == 1
    assert add_kernel.specialised((x, y, out, 4.0), {"BLOCK": 64}) not in found


def test_arguments_are_packed_again_whenever_one_changes(cuda: Driver) -> None:
    """A runner keeps the last arguments it packed and skips packing equal ones, but for a kernel
    taking a float: 0.0 == -0.0, and the kernel must get -0.0's sign."""
    a, b = device_array(), device_array(address=(1 << 32) + 4096)
    for src, dst, n in [(a, b, 100), (a, b, 100), (b, a, 100), (b, a, 101), (b, a, 101)]:
        copy_kernel[(1,)](src, dst, n, BLOCK=64)
    assert [args for _, args in cuda.seen] == [(a.data.ptr, b.data.ptr, 100)] * 2 + [(b.data.ptr, a.data.ptr, 100)] + [
        (b.data.ptr, a.data.ptr, 101)] * 2
    for alpha in [0.0, -0.0, -0.0, 0.0]:
        launch_untyped(scaled_copy, (1,), a, b, 100, alpha, False, BLOCK=64)
    assert [np.signbit(args[3]) for _, args in cuda.seen[-4:]] == [False, True, True, False]
