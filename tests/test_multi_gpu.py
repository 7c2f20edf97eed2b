"""Several GPUs (docs/tools.md, "Several GPUs").

Without a GPU: ``device=`` parsing, allocation on a device of a fake two-device backend, the
LaunchError for buffers of two devices (on the checked and the fast path, before anything runs),
and the device keys of the compiled-kernel cache, the fast path and the runner's device switch.
On a machine with two GPUs (marked ``gpu``; skipped with the reason elsewhere): kernels on each
device from either current device, CuPy arrays and torch tensors on ``cuda:1``, mixed devices
refused before running, and a two-process ``torch.distributed`` job over NCCL whose ranks each
launch a kernel on their own GPU before an all-reduce.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from benchmarks.noop_backend import Handle, NoopBackend, null_stream, read_params
from tile_lang import registry
from tile_lang.buffer import Buffer
from tile_lang.dtypes import DType
from tile_lang.host import device_index
from tile_lang.kernel import Launch
from tile_lang_cupy import launch as launching
from tile_lang_cupy.memory import Foreign
from tests.compiler.kernels import add_kernel
from tests.test_launch import copy_kernel

N = 5000
BLOCK = 256
F = TypeVar("F", bound=Callable[..., Any])


def _two_gpus_missing() -> str | None:
    """Why the GPU tests cannot run here, or None."""
    cupy_backend = {b.name: b for b in registry.backends()}["cupy"]
    if not cupy_backend.available:
        return f"cupy backend unavailable: {cupy_backend.reason}"
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    return None if count >= 2 else f"needs 2 CUDA devices, found {count}"


_MISSING = _two_gpus_missing()


def two_gpus(test: F) -> F:
    """Mark a test ``gpu`` and skip it, with the reason, where two GPUs are not usable."""
    marked: F = pytest.mark.gpu(pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")(test))
    return marked


def inputs(seed: int) -> tuple[np.ndarray[Any, np.dtype[np.float32]], np.ndarray[Any, np.dtype[np.float32]]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def expected_sum(xh: np.ndarray[Any, Any], yh: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The float64 reference of the vector add."""
    total: np.ndarray[Any, np.dtype[np.float64]] = xh.astype(np.float64) + yh.astype(np.float64)
    return total


def poisoned() -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.full(N, np.nan, np.float32)


# ---- device= parsing -------------------------------------------------------------------------


@pytest.mark.parametrize(("device", "index"), [(None, None), (0, 0), (1, 1), (np.int64(3), 3), ("cuda", None),
                                               ("cuda:0", 0), ("cuda:12", 12)])
def test_device_names_parse(device: Any, index: int | None) -> None:
    assert device_index("empty", device) == index


@pytest.mark.parametrize(("device", "error", "message"), [
    (-1, ValueError, "empty: device=-1 is negative"),
    (True, TypeError, r"empty: device must be an int index, a string like 'cuda:1', or None; got True \(bool\)"),
    (1.0, TypeError, r"got 1.0 \(float\)"),
    ("cuda:", ValueError, "empty: device='cuda:' is not a device"),
    ("cpu", ValueError, "device='cpu' is not a device"),
    ("cuda:-1", ValueError, "device='cuda:-1' is not a device"),
    ("cuda:1 ", ValueError, "device='cuda:1 ' is not a device"),
    ("gpu1", ValueError, "device='gpu1' is not a device"),
])
def test_bad_device_names_are_refused(device: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        device_index("empty", device)


def test_numpy_backend_has_device_zero_only() -> None:
    xh, _ = inputs(1)
    with tl.backend("numpy"):
        for device in (None, 0, "cuda", "cuda:0"):
            x = tl.to_device(xh, tl.f32, device=device)
            assert x.device == 0 and np.array_equal(x.numpy(), xh)
            assert tl.empty((2, 3), tl.f32, device=device).shape == (2, 3)
        with pytest.raises(ValueError, match="empty: backend 'numpy' has one device, 0; got device=1"):
            tl.empty(4, tl.f32, device=1)
        with pytest.raises(ValueError, match="to_device: backend 'numpy' has one device, 0; got device='cuda:1'"):
            tl.to_device(xh, tl.f32, device="cuda:1")
        with pytest.raises(TypeError, match="to_device: device must be an int index"):
            tl.to_device(xh, tl.f32, device=1.5)  # type: ignore[call-overload]


# ---- a fake backend with two devices ---------------------------------------------------------


class TwoDevices(NoopBackend):
    """The no-op backend with two devices: ``on_device`` sets where ``empty`` allocates, each
    buffer at a fresh fake address."""

    name = "two-devices"

    def __init__(self) -> None:
        super().__init__()
        self.current = 0
        self.next_address = 1 << 20

    def device_count(self) -> int:
        return 2

    @contextlib.contextmanager
    def on_device(self, index: int) -> Iterator[None]:
        before, self.current = self.current, index
        try:
            yield
        finally:
            self.current = before

    def empty(self, shape: tuple[int, ...], dtype: DType) -> Buffer[Any]:
        buffer = super().empty(shape, dtype)
        buffer.device, buffer.data = self.current, Foreign(self.next_address, buffer.data.owner)
        self.next_address += 1 << 20
        return buffer


@pytest.fixture
def two() -> Iterator[TwoDevices]:
    backend = TwoDevices()
    registry.register(backend)
    with tl.backend(backend.name):
        yield backend


def test_buffers_are_allocated_on_the_device_asked_for(two: TwoDevices) -> None:
    assert [tl.empty(8, tl.f32, device=d).device for d in (None, 0, 1, "cuda:1", "cuda")] == [0, 0, 1, 1, 0]
    with two.on_device(1):
        assert tl.empty(8, tl.f32).device == 1 and tl.empty(8, tl.f32, device=0).device == 0
    assert tl.to_device(np.zeros(3, np.float32), tl.f32, device=1).device == 1
    with pytest.raises(ValueError, match=r"empty: device=2 does not exist; backend 'two-devices' has 2 device\(s\), "
                                         "0 to 1"):
        tl.empty(8, tl.f32, device=2)


def test_buffers_of_two_devices_fail_before_running(two: TwoDevices) -> None:
    src0, dst0 = tl.empty(100, tl.f32, device=0), tl.empty(100, tl.f32, device=0)
    src1, dst1 = tl.empty(100, tl.f32, device=1), tl.empty(100, tl.f32, device=1)
    mixed = r"kernel copy_kernel: its buffers are on different devices \(src on device 0, dst on device 1\)"
    with pytest.raises(tl.LaunchError, match=mixed):
        copy_kernel[(1,)](src0, dst1, 100, BLOCK=64)
    assert two.calls.count == 0 and two.runners == 0
    for _ in range(3):  # the first launch is checked, the repeats take the fast path
        copy_kernel[(1,)](src0, dst0, 100, BLOCK=64)
    assert two.calls.count == 3 and two.runners == 1
    with pytest.raises(tl.LaunchError, match=mixed):  # a new device is a new fast-path key: checked again
        copy_kernel[(1,)](src0, dst1, 100, BLOCK=64)
    with pytest.raises(tl.LaunchError, match=r"\(src on device 1, dst on device 0\)"):
        copy_kernel[(1,)](src1, dst0, 100, BLOCK=64)
    assert two.calls.count == 3
    for _ in range(2):
        copy_kernel[(1,)](src1, dst1, 100, BLOCK=64)
    assert two.calls.count == 5 and two.runners == 2  # device 1 has its own runner


def test_compiled_kernels_are_cached_per_device(two: TwoDevices, monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[int] = []

    def fake_load(launch: Any, spec_text: str | None, capability: int) -> launching.Compiled:
        loads.append(len(loads))
        return launching.Compiled(128, 0, (), len(loads), None, lambda: 0)

    monkeypatch.setattr(launching, "load", fake_load)
    monkeypatch.setattr(launching, "compute_capability", lambda: 90)
    src, dst = tl.empty(100, tl.f32), tl.empty(100, tl.f32)
    launch = copy_kernel[(1,)].prepare((src, dst, 100), {"BLOCK": 64}, two)
    cache = launching.KernelCache()
    on0, on1 = cache.get(launch, 0), cache.get(launch, 1)
    assert on0 is not on1 and cache.get(launch, 0) is on0 and cache.get(launch, 1) is on1 and len(loads) == 2


def test_runner_makes_its_device_current_for_the_launch() -> None:
    current = [0]
    entered: list[int] = []
    seen: list[tuple[int, tuple[Any, ...]]] = []

    @contextlib.contextmanager
    def use_device(index: int) -> Iterator[None]:
        entered.append(index)
        before, current[0] = current[0], index
        try:
            yield
        finally:
            current[0] = before

    def driver(*call: int) -> None:  # cuLaunchKernel's arguments; the kernel parameters at call[9]
        seen.append((current[0], read_params((None, "int32"), call[9])))

    compiled = launching.Compiled(128, 0, (None, "int32"), 1, Handle(0), lambda: current[0], use_device,
                                  launch_kernel=driver, current_stream=null_stream)
    run = compiled.runner(None)
    run((1, 1, 1), (4096, 7))
    assert entered == [1] and seen == [(1, (4096, np.int32(7)))] and current == [0]
    current[0] = 1
    run((1, 1, 1), (4096, 8))
    assert entered == [1] and seen[-1] == (1, (4096, np.int32(8)))  # already current: no switch


def test_a_kernel_with_tensor_maps_gets_their_memory_on_its_stream_at_each_launch() -> None:
    """A kernel with bulk copies takes, last, memory for its tensor maps: its bytes per program
    times the grid's programs, allocated for every launch on the launch's stream."""
    seen: list[tuple[Any, ...]] = []
    asked: list[tuple[int, Any]] = []

    def driver(*call: int) -> None:  # cuLaunchKernel's arguments; the kernel parameters at call[9]
        seen.append(read_params((None, "int32", None), call[9]))

    def scratch(nbytes: int, stream: Any) -> tuple[object, int]:
        asked.append((nbytes, stream))
        return object(), 1000 * len(asked)

    compiled = launching.Compiled(128, 0, (None, "int32"), 0, Handle(0), lambda: 0, map_bytes=256,
                                  scratch=scratch, launch_kernel=driver, current_stream=null_stream)
    run = compiled.runner(None)
    run((3, 2, 1), (4096, 7))
    run((5, 1, 1), (4096, 8))
    assert seen == [(4096, np.int32(7), 1000), (4096, np.int32(8), 2000)]
    assert asked == [(256 * 6, None), (256 * 5, None)]


@tl.kernel
def print_kernel(n: int, BLOCK: tl.constexpr) -> None:
    tl.device_print("n", n)


def test_a_launch_without_buffers_runs_on_the_current_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from tile_lang_cupy.backend import CupyBackend

    backend, current, ran = CupyBackend(), [0], []

    def compiled(launch: Launch) -> launching.Compiled:  # as loaded on the current device
        return launching.Compiled(32, 0, ("int32",), current[0], Handle(0), lambda: current[0],
                                  launch_kernel=lambda *call: ran.append((current[0], read_params(("int32",), call[9]))),
                                  current_stream=null_stream)

    monkeypatch.setattr(backend, "_compiled", compiled)
    run = backend.runner(Launch(print_kernel, (1, 1, 1), (5,), {"BLOCK": 32}))
    run((1, 1, 1), (5,))
    current[0] = 1
    run((1, 1, 1), (6,))
    assert ran == [(0, (np.int32(5),)), (1, (np.int32(6),))]


# ---- two GPUs --------------------------------------------------------------------------------


@two_gpus
@pytest.mark.parametrize("current", [0, 1])
def test_kernels_run_on_the_device_of_their_buffers(current: int) -> None:
    import cupy

    with tl.backend("cupy") as backend, cupy.cuda.Device(current):
        for attempt in range(2):  # the second round takes the fast path
            for device in (0, 1):
                xh, yh = inputs(10 * attempt + device)
                x, y = tl.to_device(xh, tl.f32, device=device), tl.to_device(yh, tl.f32, device=f"cuda:{device}")
                out = tl.to_device(poisoned(), tl.f32, device=device)
                add_kernel[(tl.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK)
                assert out.device == device and out.data.device.id == device
                np.testing.assert_allclose(out.numpy(), expected_sum(xh, yh), rtol=1e-6, atol=1e-6)
                assert cupy.cuda.runtime.getDevice() == current
        loaded: Any = getattr(backend, "_kernels")
        assert {c.device for key, c in loaded.loaded.items() if key[0] is add_kernel} == {0, 1}


@two_gpus
def test_cupy_arrays_on_device_1_are_adopted_there() -> None:
    import cupy

    xh, yh = inputs(3)
    with cupy.cuda.Device(1):
        x, y, out = cupy.asarray(xh), cupy.asarray(yh), cupy.asarray(poisoned())
    untyped: Any = add_kernel
    assert out.device.id == 1 and x.data.device_id == 1
    with tl.backend("cupy"):
        assert tl.wrap(out).device == 1
        untyped[(tl.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK)
    np.testing.assert_allclose(cupy.asnumpy(out), expected_sum(xh, yh), rtol=1e-6, atol=1e-6)


@two_gpus
def test_torch_tensors_on_cuda_1() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    xh, yh = inputs(4)
    x, y = torch.from_numpy(xh).to("cuda:1"), torch.from_numpy(yh).to("cuda:1")
    out = torch.full((N,), float("nan"), device="cuda:1")
    with tl.backend("cupy"):
        wrapped = tl.wrap(out, tl.f32)
        assert wrapped.device == 1
        add_kernel[(tl.cdiv(N, BLOCK),)](tl.wrap(x, tl.f32), tl.wrap(y, tl.f32), wrapped, N, BLOCK=BLOCK)
    torch.cuda.synchronize(1)
    np.testing.assert_allclose(out.cpu().numpy(), expected_sum(xh, yh), rtol=1e-6, atol=1e-6)


@two_gpus
def test_mixing_devices_fails_before_running() -> None:
    import cupy

    xh, yh = inputs(5)
    with tl.backend("cupy"):
        x0, y0, out0 = (tl.to_device(a, tl.f32, device=0) for a in (xh, yh, poisoned()))
        add_kernel[(tl.cdiv(N, BLOCK),)](x0, y0, out0, N, BLOCK=BLOCK)  # warm: later launches may take the fast path
        y1 = tl.to_device(yh, tl.f32, device=1)
        with cupy.cuda.Device(1):
            native_y1 = cupy.asarray(yh)
        out = tl.to_device(poisoned(), tl.f32, device=0)
        untyped: Any = add_kernel
        for y in (y1, native_y1):
            with pytest.raises(tl.LaunchError, match=r"kernel add_kernel: its buffers are on different devices "
                                                     r"\(x_ptr on device 0, y_ptr on device 1, out_ptr on device 0\)"):
                untyped[(tl.cdiv(N, BLOCK),)](x0, y, out, N, BLOCK=BLOCK)
        cupy.cuda.Device(0).synchronize()
        assert np.isnan(out.numpy()).all()
        count = cupy.cuda.runtime.getDeviceCount()
        with pytest.raises(ValueError, match=f"empty: device={count} does not exist"):
            tl.empty(4, tl.f32, device=count)


# ---- torch.distributed over NCCL, one GPU per rank -------------------------------------------

WORLD = 2


def _rank_main(rank: int, port: int) -> None:
    """One rank: a kernel on its own GPU into a torch tensor, then all-reduce; rank 0 checks."""
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        xh, yh = inputs(100 + rank)
        x, y = torch.from_numpy(xh).cuda(), torch.from_numpy(yh).cuda()
        out = torch.full((N,), float("nan"), device=f"cuda:{rank}")
        with tl.backend("cupy"):
            options = tl.Options(stream=torch.cuda.current_stream())  # ordered with torch's work, NCCL's too
            add_kernel[(tl.cdiv(N, BLOCK),), options](tl.wrap(x, tl.f32), tl.wrap(y, tl.f32), tl.wrap(out, tl.f32),
                                                      N, BLOCK=BLOCK)
        dist.all_reduce(out, op=dist.ReduceOp.SUM)
        if rank == 0:
            expected = sum(expected_sum(*inputs(100 + r)) for r in range(WORLD))
            np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-5, atol=1e-5)
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@two_gpus
def test_all_reduce_of_kernel_results_across_two_processes() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        pytest.skip("this torch has no NCCL backend for torch.distributed")
    context = torch.multiprocessing.spawn(_rank_main, args=(_free_port(),), nprocs=WORLD, join=False)
    deadline = time.monotonic() + 150
    while not context.join(timeout=5):  # raises if a rank failed (rank 0's assertion included)
        if time.monotonic() > deadline:
            for process in context.processes:
                process.terminate()
            pytest.fail("the two ranks did not finish within 150 s")
