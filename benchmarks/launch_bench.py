"""Launch overhead: host time per launch of an already-compiled tiny kernel (8 arguments, 1 element).

    python benchmarks/launch_bench.py          # on a GPU: tile_lang's CUDA backend, Triton, a bare CuPy RawKernel
    python benchmarks/launch_bench.py --cpu    # anywhere: the Python side alone, the driver call a no-op

Each row is the median over ``--repeats`` batches of ``--count`` back-to-back launches in one
process, per launch; on the GPU the device is synchronised before each batch and at its end, and
every kernel's result is checked once against NumPy first. ``--cpu`` runs the CUDA backend's own
code (adoption, checks, the fast path, argument packing, the runner) against a stand-in CuPy whose
``cuLaunchKernel`` does nothing, so it times everything but CuPy's driver call and the driver.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import tile_lang as tl
from tests import gradual_kernels
from tests.compiler import kernels
from tile_lang import Pointer, constexpr, f32, registry
from tile_lang.errors import BackendError
from tile_lang.kernel import Launch

N_INPUTS = 6
BLOCK = 32


@tl.kernel
def add8(a: Pointer[f32], b: Pointer[f32], c: Pointer[f32], d: Pointer[f32], e: Pointer[f32], f: Pointer[f32],
         out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    total = tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask) + tl.load(c + offs, mask=mask)
    total += tl.load(d + offs, mask=mask) + tl.load(e + offs, mask=mask) + tl.load(f + offs, mask=mask)
    tl.store(out + offs, total, mask=mask)


TRITON_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def add8(a, b, c, d, e, f, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    total = tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask) + tl.load(c + offs, mask=mask)
    total += tl.load(d + offs, mask=mask) + tl.load(e + offs, mask=mask) + tl.load(f + offs, mask=mask)
    tl.store(out + offs, total, mask=mask)
'''

CUDA_SOURCE = r'''
extern "C" __global__ void add8(const float* a, const float* b, const float* c, const float* d, const float* e,
                                const float* f, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i] + c[i] + d[i] + e[i] + f[i];
}
'''


def per_launch_us(launch: Callable[[], Any], count: int, repeats: int, sync: Callable[[], None],
                  clock: Callable[[], float] = time.perf_counter) -> float:
    """Median microseconds per launch over ``repeats`` batches of ``count`` launches, ``sync``
    before each batch and inside its timing at the end, by ``clock``. The warm-up (compiles,
    loads, fast-path entries) runs a quarter of a second at least: the first row of a run, timed
    after 100 launches, read 13.7 us where the same launches read 9.8 us later in the process."""
    start = time.perf_counter()
    while time.perf_counter() - start < 0.25:
        for _ in range(max(10, count // 10)):
            launch()
    times = []
    for _ in range(repeats):
        sync()
        start = clock()
        for _ in range(count):
            launch()
        sync()
        times.append((clock() - start) / count * 1e6)
    return statistics.median(times)


def table(rows: dict[str, float], base: str) -> str:
    """Rows of microseconds per launch, each with its ratio to row ``base``."""
    width = max(map(len, rows))
    lines = [f"{'':{width}}  us/launch  vs {base}"]
    lines += [f"{name:{width}}  {us:9.2f}  {us / rows[base]:5.2f}x" for name, us in rows.items()]
    return "\n".join(lines)


def python_path(kernel: tl.Kernel[Any]) -> tl.Kernel[Any]:
    """A copy of ``kernel`` whose launches are never remembered by the CUDA backend's express lane:
    every repeat takes the Python fast path (``tile_lang.launch_cache``)."""
    copy = tl.kernel(kernel.fn)
    copy._lane_tries = 1 << 30
    return copy


# ---- the Python side alone: a stand-in CuPy ---------------------------------------------------


@dataclass
class FakeMemory:
    ptr: int
    device_id: int = 0


@dataclass
class FakeArray:
    """What the CUDA backend reads of a ``cupy.ndarray``: dtype, shape, strides, contiguity and memory."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    data: FakeMemory

    _c_contiguous: bool = field(init=False, repr=False)  # CuPy's flag, kept as CuPy keeps it

    def __post_init__(self) -> None:
        step, self._c_contiguous = self.dtype.itemsize, True
        for n, stride in reversed(list(zip(self.shape, self.strides))):  # row-major over extents above one
            self._c_contiguous &= n <= 1 or stride == step
            step *= n


class FakeDevice:
    compute_capability = "90"

    def __init__(self, index: int = 0) -> None:
        self.id = index

    def __enter__(self) -> FakeDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def no_driver(*args: int) -> None:
    """``cupy.cuda.driver.launchKernel`` with nothing behind it."""


def fake_cupy() -> types.ModuleType:
    """A module standing in for ``cupy``, with just what a launch of the CUDA backend touches."""
    stream = types.SimpleNamespace(ptr=0)

    class Stream:  # cupy.cuda.Stream and ExternalStream: nothing passes one here
        pass

    cupy = types.ModuleType("cupy")
    cupy.ndarray = FakeArray  # type: ignore[attr-defined]
    cupy.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        runtime=types.SimpleNamespace(getDevice=lambda: 0, getDeviceCount=lambda: 1), Device=FakeDevice,
        driver=types.SimpleNamespace(launchKernel=no_driver), get_current_stream=lambda: stream,
        Stream=Stream, ExternalStream=Stream)
    return cupy


def fake_array(index: int) -> Any:
    """A 1-element f32 device array at a 256-byte aligned fake address (typed Any: a launch takes it)."""
    return FakeArray(np.dtype(np.float32), (1,), (4,), FakeMemory((1 << 32) + 256 * index))


@contextmanager
def without_driver() -> Iterator[registry.Backend]:
    """The CUDA backend, selected, over the stand-in CuPy; kernels load without compiling, as
    their launch metadata says (pointers, then each scalar's type), with the no-op driver call."""
    from tile_lang_cupy import express
    from tile_lang_cupy import launch as launching
    from tile_lang_cupy.backend import CupyBackend

    ext = express.extension()
    noop = ext.noop_address() if ext is not None else None  # the express lane launches through a no-op

    def load(launch: Launch, spec_text: str | None, capability: int) -> launching.Compiled:
        params = tuple(None if a.dtype.is_pointer else a.dtype.numpy.str for a in map(launching.arg_spec, launch.args))
        return launching.Compiled(32 * launch.options.num_warps, 0, params, 0, types.SimpleNamespace(ptr=1),
                                  lambda: 0, launch_address=noop)

    class NoDriverCupy(CupyBackend):
        name = "cupy-no-driver"

    saved = {name: getattr(launching, name) for name in ("load", "compute_capability")}
    held = sys.modules.get("cupy")
    sys.modules["cupy"] = fake_cupy()
    launching.load, launching.compute_capability = load, lambda: 90
    backend = NoDriverCupy()
    registry.register(backend)
    try:
        with tl.backend(backend.name):
            yield backend
    finally:
        for name, value in saved.items():
            setattr(launching, name, value)
        if held is None:
            del sys.modules["cupy"]
        else:
            sys.modules["cupy"] = held


def cpu_rows(count: int, repeats: int) -> dict[str, float]:
    """The Python side of launches on the CUDA backend, the driver call a no-op, in this thread's
    CPU time (other processes on a shared machine then slow it less than they slow the wall clock)."""
    from tile_lang_cupy.launch import Compiled

    def per_launch(launch: Callable[[], Any]) -> float:
        return per_launch_us(launch, count, repeats, lambda: None, time.thread_time)

    rows: dict[str, float] = {}
    with without_driver():
        arrays = [fake_array(i) for i in range(N_INPUTS + 1)]
        a, b, c, d, e, f, out = arrays
        for path, add in [("", add8), (", Python path", python_path(add8))]:
            rows[f"tile_lang add8 (CuPy arrays){path}"] = per_launch(lambda: add[(1,)](a, b, c, d, e, f, out, 1,
                                                                                           BLOCK=BLOCK))
        for name, kernel in [("annotated", kernels.add_kernel), ("unannotated", gradual_kernels.add_kernel)]:
            for path, k in [("", kernel), (", Python path", python_path(kernel))]:
                rows[f"tile_lang 4-argument add, {name}{path}"] = per_launch(lambda: k[(1,)](a, b, out, 1, BLOCK=BLOCK))
        compiled = Compiled(32, 0, (None,) * (N_INPUTS + 1) + ("<i4",), 0, types.SimpleNamespace(ptr=1),
                            lambda: 0)
        run, raw = compiled.runner(None), tuple(a.data.ptr for a in arrays) + (1,)
        rows["its runner alone (packing, no-op driver)"] = per_launch(lambda: run((1, 1, 1), raw))
    rows["a Python call of 11 ints (the floor)"] = per_launch(lambda: no_driver(1, 1, 1, 1, 32, 1, 1, 0, 0, 1, 0))
    return rows


# ---- on the GPU ---------------------------------------------------------------------------------


def gpu_rows(count: int, repeats: int) -> dict[str, float]:
    """Launches of the same kernel through tile_lang, Triton (if importable), a CuPy RawKernel and
    cuLaunchKernel straight from Python, each checked once against NumPy."""
    import cupy

    rng = np.random.default_rng(0)
    host = [rng.standard_normal(1).astype(np.float32) for _ in range(N_INPUTS)]
    expected = np.sum([h.astype(np.float64) for h in host], axis=0)
    inputs = [cupy.asarray(h) for h in host]
    out = cupy.full(1, np.nan, np.float32)
    sync = cupy.cuda.runtime.deviceSynchronize

    def checked(name: str, launch: Callable[[], Any], result: Callable[[], np.ndarray[Any, Any]]) -> float:
        out.fill(np.nan)
        launch()
        sync()
        np.testing.assert_allclose(result(), expected, rtol=1e-5, err_msg=name)
        return per_launch_us(launch, count, repeats, sync)

    rows: dict[str, float] = {}
    result = lambda: cupy.asnumpy(out)  # noqa: E731
    a, b, c, d, e, f = inputs
    with tl.backend("cupy"):
        for path, add in [("", add8), (", Python path", python_path(add8))]:
            rows[f"tile_lang (CuPy arrays){path}"] = checked("tile_lang", lambda: add[(1,)](a, b, c, d, e, f, out, 1,
                                                                                            BLOCK=BLOCK), result)
        raw = cupy.RawKernel(CUDA_SOURCE, "add8")
        n = np.int32(1)
        rows["CuPy RawKernel"] = checked("RawKernel", lambda: raw((1,), (BLOCK,), (*inputs, out, n)), result)
        rows["cuLaunchKernel from Python"] = checked("driver", _driver_launch(raw, [*inputs, out]), result)
        rows.update(_triton_rows(host, expected, count, repeats))
    return rows


def _driver_launch(raw: Any, arrays: list[Any]) -> Callable[[], None]:
    """The floor of a launch from Python: cupy.cuda.driver.launchKernel with prebuilt parameters."""
    import cupy

    values = (ctypes.c_uint64 * (len(arrays) + 1))(*(a.data.ptr for a in arrays), 1)
    base = ctypes.addressof(values)
    pointers = (ctypes.c_void_p * len(values))(*range(base, base + 8 * len(values), 8))
    handle, params, launch = raw.kernel.ptr, ctypes.addressof(pointers), cupy.cuda.driver.launchKernel

    def run() -> None:
        launch(handle, 1, 1, 1, BLOCK, 1, 1, 0, cupy.cuda.get_current_stream().ptr, params, 0)
        _ = values, pointers  # held for the launches

    return run


def _triton_rows(host: list[np.ndarray[Any, Any]], expected: np.ndarray[Any, Any], count: int,
                 repeats: int) -> dict[str, float]:
    """Triton's launch of the same kernel on torch tensors, and tile_lang's on the same tensors."""
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as exc:
        print(f"(no Triton rows: {exc})")
        return {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "launch_bench_triton.py"
        path.write_text(TRITON_SOURCE)
        spec = importlib.util.spec_from_file_location("launch_bench_triton", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        a, b, c, d, e, f = (torch.from_numpy(h).cuda() for h in host)
        out = torch.full((1,), float("nan"), device="cuda")
        rows = {}
        slow = python_path(add8)
        launches: list[tuple[str, Callable[[], Any]]] = [
            ("Triton (torch tensors)", lambda: module.add8[(1,)](a, b, c, d, e, f, out, 1, BLOCK=BLOCK)),
            ("tile_lang (torch tensors)", lambda: add8[(1,)](a, b, c, d, e, f, out, 1, BLOCK=BLOCK)),
            ("tile_lang (torch tensors), Python path", lambda: slow[(1,)](a, b, c, d, e, f, out, 1, BLOCK=BLOCK))]
        for name, launch in launches:
            out.fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-5, err_msg=name)
            rows[name] = per_launch_us(launch, count, repeats, torch.cuda.synchronize)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="the Python side only, with a no-op driver call")
    parser.add_argument("--count", type=int, default=1000, help="launches per batch")
    parser.add_argument("--repeats", type=int, default=21, help="batches; the median is shown")
    args = parser.parse_args()
    if args.cpu:
        print(table(cpu_rows(args.count, args.repeats), "tile_lang add8 (CuPy arrays)"))
        return
    try:
        registry.get("cupy")  # CuPy imports and sees a device, or the reason it does not
    except BackendError as exc:
        sys.exit(f"launch_bench: no GPU here: {exc}; run with --cpu for the Python side alone")
    print(table(gpu_rows(args.count, args.repeats), "CuPy RawKernel"))


if __name__ == "__main__":
    main()
