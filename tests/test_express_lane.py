"""The CUDA backend's express lane (backends/tile_lang_cupy/express.c) over a stand-in CuPy: a repeat
launch like one the fast path made is launched from C with the same arguments, bytes and stream;
any changed fact (class, dtype, alignment, int width, constexpr, device, backend, a hook, a failed
launch) takes the Python path, which checks it as before."""

from __future__ import annotations

import ctypes
import gc
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.noop_backend import Handle, read_params
from tile_lang import registry
from tile_lang.kernel import LAUNCH_HOOKS, Launch, Launcher
from tile_lang_cupy import express
from tile_lang_cupy import launch as launching
from tests.test_fast_launch import device_array, scaled_copy, stand_in
from tests.test_launch import launch_untyped

pytestmark = pytest.mark.skipif(express.extension() is None,
                                reason=f"no express lane here: {express.unavailable_reason()}")

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)
"""cuLaunchKernel's C signature."""


@dataclass
class Driver:
    """Kernels loaded without compiling; what each launch got, by the Python runner (``python``)
    and by the lane through a C-callable stand-in for cuLaunchKernel (``lane``)."""

    layouts: list[tuple[str | None, ...]] = field(default_factory=list)
    python: list[tuple[Any, ...]] = field(default_factory=list)
    lane: list[tuple[Any, ...]] = field(default_factory=list)
    status: int = 0  # what the lane's launches return (0: CUDA_SUCCESS)
    device: int = 0  # the current device, as cupy.cuda.runtime.getDevice says

    def __post_init__(self) -> None:
        self.callback = LAUNCH(self._lane_launch)
        self.address = ctypes.cast(self.callback, ctypes.c_void_p).value

    def load(self, launch: Launch, spec_text: str | None, capability: int) -> launching.Compiled:
        self.layouts.append(tuple(None if a.dtype.is_pointer else a.dtype.numpy.str
                                  for a in map(launching.arg_spec, launch.args)))
        return launching.Compiled(32 * launch.options.num_warps, 128, self.layouts[-1], 0,
                                  Handle(len(self.layouts) - 1), lambda: self.device, self.use_device,
                                  launch_address=self.address)

    @contextmanager
    def use_device(self, index: int) -> Iterator[None]:
        held, self.device = self.device, index
        try:
            yield
        finally:
            self.device = held

    def python_launch(self, function: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,
                      stream: int, params: int, extra: int) -> None:
        self.python.append((function, (gx, gy, gz), bx, smem, stream, read_params(self.layouts[function], params)))

    def _lane_launch(self, function: int | None, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,
                     stream: int | None, params: int, extra: int | None) -> int:
        f = function or 0
        self.lane.append((f, (gx, gy, gz), bx, smem, stream or 0, read_params(self.layouts[f], params)))
        return self.status


@pytest.fixture
def cuda() -> Iterator[Driver]:
    """The CUDA backend over a stand-in CuPy, both launch paths recorded, the kernel's lane new."""
    driver = Driver()
    scaled_copy.lane, scaled_copy._lane_tries, scaled_copy._last_launcher = None, 0, None  # a new lane, none bound
    with stand_in(driver.load, driver.python_launch):
        yield driver


def launch(*args: Any, grid: Any = (3, 2), **kwargs: Any) -> None:
    launch_untyped(scaled_copy, grid, *args, **({"BLOCK": 64} | kwargs))


def test_repeats_launch_from_c_with_the_pythons_arguments(cuda: Driver, checked: list[int]) -> None:
    rng = np.random.default_rng(3)
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    for step in range(6):
        n, alpha = int(rng.integers(1, 1000)), float(rng.standard_normal())
        launch(src, dst, n, alpha, step % 2 == 0)
        want = (0, (3, 2, 1), 128, 128, 0, (1 << 32, (1 << 32) + 4096, np.int32(n), np.float32(alpha), step % 2 == 0))
        assert (cuda.python + cuda.lane)[-1] == want
    assert checked[0] == 1 and len(cuda.python) == 2 and len(cuda.lane) == 4  # checked, fast path (remembers), lane


@pytest.mark.parametrize("change", ["dtype", "alignment", "wide int", "int one", "bool for int", "constexpr",
                                    "constexpr type", "keyword order", "another class", "strides", "device",
                                    "hook", "registry", "failed launch", "float beyond f32"])
def test_a_changed_fact_takes_the_python_path(cuda: Driver, change: str) -> None:
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    args: list[Any] = [src, dst, 100, 0.5, True]
    kwargs: dict[str, Any] = {"BLOCK": 64}
    for _ in range(3):
        launch(*args, **kwargs)
    assert len(cuda.lane) == 1
    held: Any = None
    if change == "dtype":
        args[0] = device_array(np.float16)
    elif change == "alignment":
        args[1] = device_array(address=(1 << 32) + 4100)
    elif change == "wide int":
        args[2] = 2**40
    elif change == "int one":
        args[2] = 1
    elif change == "bool for int":
        args[2] = True
    elif change == "constexpr":
        kwargs["BLOCK"] = 128
    elif change == "constexpr type":
        kwargs["BLOCK"] = 64.0
    elif change == "keyword order":
        args, kwargs = args[:4], {"negate": True, "BLOCK": 64}
    elif change == "another class":
        args[0] = types.SimpleNamespace(**vars(src))
    elif change == "strides":
        args[0] = device_array(strides=(8,))
    elif change == "device":
        cuda.device = 1
    elif change == "hook":
        held = hook = lambda launcher, a, k: None
        LAUNCH_HOOKS.append(hook)
    elif change == "registry":
        registry.register(registry.get(registry.current_name()))  # the same backend again: remembered launches go
    elif change == "failed launch":
        cuda.status = 1
    elif change == "float beyond f32":
        args[3] = 1e39
    before = len(cuda.python)
    try:
        launch(*args, **kwargs)
        assert len(cuda.python) == before + 1  # launched by the Python path
    except tl.TileLangError:  # or refused by its checks
        assert change in ("dtype", "another class", "constexpr type", "bool for int")
    finally:
        if held is not None:
            LAUNCH_HOOKS.remove(held)
    assert len(cuda.lane) == 1 + (change == "failed launch"), "the lane launched a call it should not have"


def test_a_bad_launch_after_lane_launches_fails_with_the_checked_message(cuda: Driver) -> None:
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    for _ in range(4):
        launch(src, dst, 100, 0.5, True)
    with pytest.raises(tl.TileLangError, match="parameter src"):
        launch(device_array(np.int32), dst, 100, 0.5, True)
    with pytest.raises(tl.TileLangError, match="missing argument"):
        launch_untyped(scaled_copy, (3, 2), src, dst, 100, 0.5)
    assert len(cuda.lane) == 2


def test_a_callable_grid_is_called_with_the_constexprs_and_a_zero_grid_launches_nothing(cuda: Driver) -> None:
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    seen: list[dict[str, Any]] = []

    def grid(meta: dict[str, Any]) -> tuple[int, ...]:
        seen.append(meta)
        return (-(-size // meta["BLOCK"]),)

    for size in [640, 6400, 0, 64]:
        for _ in range(3):
            launch(src, dst, size, 0.5, True, grid=grid)
    assert all(meta == {"BLOCK": 64} for meta in seen)
    assert [c[1] for c in cuda.python] == [(10, 1, 1)] * 2  # checked, then the fast path; a zero grid: nothing
    assert [c[1] for c in cuda.lane] == [(10, 1, 1)] + [(100, 1, 1)] * 3 + [(1, 1, 1)] * 3


def test_the_lane_launches_on_cupys_then_torchs_current_stream(cuda: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    current = types.SimpleNamespace(ptr=0)
    sys.modules["cupy"].cuda.get_current_stream = lambda: current
    for _ in range(3):
        launch(src, dst, 100, 0.5, True)
    current.ptr = 0xABC0
    launch(src, dst, 100, 0.5, True)
    current.ptr = 0
    streams = iter([0x5000, 0x6000])
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=lambda: True),
                                  _C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: next(streams)))
    monkeypatch.setitem(sys.modules, "torch", torch)
    launch(src, dst, 100, 0.5, True)
    launch(src, dst, 100, 0.5, True)
    assert [c[4] for c in cuda.lane] == [0, 0xABC0, 0x5000, 0x6000]


def test_another_backend_scope_or_options_take_the_python_path(cuda: Driver) -> None:
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    for _ in range(3):
        launch(src, dst, 100, 0.5, True)
    launch_untyped(scaled_copy, ((3, 2), tl.Options(num_warps=4)), src, dst, 100, 0.5, True, BLOCK=64)
    with tl.backend("numpy"), pytest.raises(tl.TileLangError):
        launch(src, dst, 100, 0.5, True)  # the reference does not take a CuPy array
    assert len(cuda.lane) == 1


def test_without_the_extension_every_launch_takes_the_python_path(cuda: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(express, "_built", lambda: (None, "disabled for this test"))
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    for _ in range(4):
        launch(src, dst, 100, 0.5, True)
    assert len(cuda.python) == 4 and not cuda.lane and scaled_copy.lane is None


def test_kernel_grid_with_a_lane_stands_in_for_its_launcher(cuda: Driver) -> None:
    """``kernel[grid]`` is then the lane bound to the grid: calls try it first, attributes are the
    launcher's, and a launcher held from before the lane existed reaches it too."""
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    held = scaled_copy[(3, 2)]
    for _ in range(3):
        held(src, dst, 100, 0.5, True, BLOCK=64)
    bound = scaled_copy[(5,)]
    assert isinstance(bound, Launcher) and type(bound) is not Launcher and "scaled_copy" in repr(bound.kernel)
    assert bound.options is tl.launch.DEFAULT_OPTIONS and bound.grid == (5,)
    bound(src, dst, 100, 0.5, True, BLOCK=64)
    assert [c[1] for c in cuda.lane] == [(3, 2, 1), (5, 1, 1)]
    with pytest.raises(tl.TileLangError, match="missing argument"):
        launch_untyped(scaled_copy, (5,), src, dst, 100, 0.5)


def test_a_bound_lane_takes_part_in_garbage_collection(cuda: Driver) -> None:
    """kernel -> its last launcher (bound) -> launcher -> kernel is a cycle: the collector must see
    the bound lane's references to free it (the backend's compile cache holds kernels regardless)."""
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    grid = (2,)
    for _ in range(4):
        scaled_copy[grid](src, dst, 100, 0.5, True, BLOCK=64)
    bound = scaled_copy[grid]
    assert type(bound) is not Launcher and gc.is_tracked(bound)
    referents = gc.get_referents(bound)
    assert scaled_copy.lane in referents and grid in referents and any(type(r) is Launcher for r in referents)


def test_a_grid_function_remembering_other_calls_leaves_the_launch_intact(cuda: Driver) -> None:
    """A callable grid runs Python inside the lane's launch; there it may make the lane remember
    other calls and drop the entry being launched (four are kept): the launch still goes out right."""
    src, dst = device_array(), device_array(address=(1 << 32) + 4096)
    inner = [1, 16, 17, 2**40, -3]  # five int classes: five more entries
    outer = [True]

    def grid(meta: dict[str, Any]) -> tuple[int, ...]:
        if outer[0] and scaled_copy.lane is not None:  # inside the lane's launch
            outer[0] = False
            for n in inner:
                for _ in range(2):
                    launch(src, dst, n, 0.25, False)
        return (7,)

    for _ in range(3):
        launch(src, dst, 100, 0.5, True, grid=grid)
    assert cuda.lane[-1] == (0, (7, 1, 1), 128, 128, 0,
                             (1 << 32, (1 << 32) + 4096, np.int32(100), np.float32(0.5), True))
    assert scaled_copy.lane is not None and scaled_copy.lane.entries() == 4


@pytest.mark.parametrize("flag", [True, False], ids=["CuPy's contiguity flag", "strides alone"])
def test_cupy_arrays_repeat_by_their_layout(cuda: Driver, monkeypatch: pytest.MonkeyPatch, flag: bool) -> None:
    """A C-contiguous CuPy array is adopted whatever its shape, so any other such array takes the
    lane (read by CuPy's flag; a CuPy without it compares strides); a view with gaps repeats only
    with the same strides, and a contiguous array after one takes the Python path."""
    if not flag:
        monkeypatch.setattr(type(device_array()), "__post_init__", lambda self: None)  # arrays without the flag
    dst = device_array(address=(1 << 32) + 4096)
    for _ in range(3):
        launch(device_array(), dst, 100, 0.5, True)
    assert len(cuda.lane) == 1
    launch(device_array(shape=(10, 10), strides=(40, 4)), dst, 100, 0.5, True)
    assert len(cuda.lane) == 1 + flag  # the same strides would be needed without the flag
    gapped = device_array(shape=(50,), strides=(8,))
    for _ in range(3):
        launch(gapped, dst, 100, 0.5, True)
    assert len(cuda.lane) == 2 + flag and cuda.lane[-1][-1][0] == 1 << 32
    before = len(cuda.python)
    launch(device_array(shape=(50,), strides=(12,)), dst, 100, 0.5, True)
    assert len(cuda.python) == before + 1
