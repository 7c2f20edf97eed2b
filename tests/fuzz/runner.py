"""Run one fuzz case on the NumPy reference and on the emulated CUDA, and compare.

The kernel's source is written to a file and imported (the front end reads a kernel's source).
Files go to a fixed folder, private to the user and checked (what it holds is imported), so the
emulator's g++ cache (keyed by the generated code, ``#line`` paths included) is reused across runs
of the same seeds.
"""

from __future__ import annotations

import enum
import importlib.util
import linecache
import os
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import dtypes, registry
from tile_lang.dtypes import DType
from tile_lang.errors import KernelError, OutOfResources

from tests.compiler.emulator import NAME, EmuBackend, private_dir
from tests.fuzz.case import Case, Data, Init
from tests.fuzz.generator import generate

KERNEL_DIR = Path(tempfile.gettempdir()) / f"tile_lang_fuzz-{os.getuid()}"
_EMU = EmuBackend()
_SENTINELS: dict[DType, int | bool] = {dtypes.I32: -123456789, dtypes.I64: -(2**50) - 7, dtypes.U32: 0xDEADBEEF,
                                       dtypes.BOOL: True}


class Verdict(enum.Enum):
    AGREE = "agree"                      # same outputs
    BOTH_REJECTED = "both rejected"      # a KernelError on both backends
    MISMATCH = "mismatch"                # different outputs
    REJECT_MISMATCH = "reject mismatch"  # a KernelError on one backend only
    CHECKED = "checked"                  # the reference stopped a signed overflow the GPU wraps silently,
    #                                      or the launch needs more shared memory than the device has
    CRASH = "crash"                      # an exception that is not a KernelError

    @property
    def failed(self) -> bool:
        return self in (Verdict.MISMATCH, Verdict.REJECT_MISMATCH, Verdict.CRASH)


@dataclass(frozen=True)
class Outcome:
    seed: int
    verdict: Verdict
    detail: str
    source: str
    invalid: bool


def unavailable_reason() -> str | None:
    return _EMU.unavailable_reason()


def host_inputs(case: Case) -> list[np.ndarray[Any, Any]]:
    """Random inputs (never zeros): floats away from 0, small ints with a few large ones, i8
    over its whole range; :attr:`Data.GRID` buffers hold multiples of 1/4 (ints: -8 to 8)."""
    rng = np.random.default_rng(case.seed)
    arrays = []
    for buf in case.inputs:
        x: np.ndarray[Any, Any]
        if buf.data is Data.GRID:
            x = rng.integers(1, 9, buf.size) * rng.choice((-1, 1), buf.size)
            x = x / 4 if buf.dtype.is_float else x
        elif buf.dtype == dtypes.I8:
            x = rng.integers(-128, 128, buf.size)
        elif buf.dtype.is_float:
            x = rng.standard_normal(buf.size) * 2
            x = np.where(np.abs(x) < 0.05, 0.5, x)
        elif buf.dtype.is_bool:
            x = rng.random(buf.size) < 0.5
        else:
            low = 0 if buf.dtype == dtypes.U32 else -50
            x = rng.integers(low, 50, buf.size)
            big = rng.random(buf.size) < 0.1
            x = np.where(big, rng.integers(low, 2**20, buf.size) * (2**12 if buf.dtype == dtypes.I64 else 1), x)
        arrays.append(np.asarray(x).astype(buf.dtype.numpy))
    return arrays


def initial_outputs(case: Case) -> list[np.ndarray[Any, Any]]:
    """Poisoned outputs (NaN or a sentinel) and random ones for atomics."""
    rng = np.random.default_rng(case.seed + 1)
    arrays = []
    for out in case.outputs:
        dtype, size = out.buffer.dtype, out.buffer.size
        if out.init is Init.RANDOM:
            x = rng.standard_normal(size) if dtype.is_float else rng.integers(0, 100, size)
        else:
            x = np.full(size, np.nan if dtype.is_float else _SENTINELS[dtype])
        arrays.append(x.astype(dtype.numpy))
    return arrays


def load(name: str, source: str) -> Any:
    """Write a kernel's source to ``KERNEL_DIR/name.py`` and import it; the object called ``name``."""
    path = private_dir(KERNEL_DIR) / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        path.write_text(source)
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(f"tile_lang_fuzz_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def execute(case: Case, kernel: Any, backend: str) -> list[np.ndarray[Any, Any]]:
    """One launch on ``backend``; the outputs on the host."""
    with tl.backend(backend):
        ins = [tl.to_device(a) for a in host_inputs(case)]  # dtypes from the host arrays
        outs = [tl.to_device(a) for a in initial_outputs(case)]
        scalars = [v for _, v in case.scalars]
        options = tl.Options(num_warps=case.num_warps, num_stages=case.num_stages)
        kernel[(case.grid,), options](*ins, *outs, *scalars, **dict(case.constexprs))
        return [o.numpy() for o in outs]


def run_case(case: Case, device: str = NAME) -> Outcome:
    """The case on the NumPy reference and on ``device`` (the emulated CUDA, or "cupy" on a GPU)."""
    registry.register(_EMU)
    _EMU.arch = case.arch
    results: dict[str, list[np.ndarray[Any, Any]] | BaseException] = {}
    kernel = load(case.name, case.source)
    for backend in ("numpy", device):
        try:
            results[backend] = execute(case, kernel, backend)
        except Exception as exc:  # noqa: BLE001 (any failure is a finding)
            results[backend] = exc
    verdict, detail = judge(case, results["numpy"], results[device], device)
    return Outcome(case.seed, verdict, detail, case.source, case.invalid)


def judge(case: Case, ref: list[np.ndarray[Any, Any]] | BaseException,
          got: list[np.ndarray[Any, Any]] | BaseException, device: str = NAME) -> tuple[Verdict, str]:
    if isinstance(got, OutOfResources) and not isinstance(ref, BaseException):
        return Verdict.CHECKED, str(got)  # the device's limits: the reference has none
    for side, result in (("numpy", ref), (device, got)):
        if isinstance(result, BaseException) and not isinstance(result, KernelError):
            text = "".join(traceback.format_exception(result))
            return Verdict.CRASH, f"{side} raised {type(result).__name__}:\n{text[-3000:]}"
    if isinstance(ref, BaseException) or isinstance(got, BaseException):
        if isinstance(ref, BaseException) and isinstance(got, BaseException):
            return Verdict.BOTH_REJECTED, str(ref)
        which, exc = ("numpy", ref) if isinstance(ref, BaseException) else (device, got)
        if which == "numpy" and "would silently wrap" in str(exc):
            return Verdict.CHECKED, str(exc)  # a run-time check of the reference's, not a typing rule
        return Verdict.REJECT_MISMATCH, f"only {which} rejected the kernel:\n{exc}"
    problems = [p for out, r, g in zip(case.outputs, ref, got)
                if (p := differs(out.buffer.name, _compared_as(out.buffer.dtype, case.precision), out.exact, r, g,
                                 device))]
    return (Verdict.MISMATCH, "\n".join(problems)) if problems else (Verdict.AGREE, "")


_RTOL = {dtypes.F16: (1e-3, 2e-2), dtypes.BF16: (8e-3, 3e-2), dtypes.F32: (1e-6, 1e-4)}  # (exact, not exact)


def _compared_as(dtype: DType, precision: DType) -> DType:
    """The dtype whose tolerance a float output gets: its own, or the case's least precise result
    (an f32 output computed from a bf16 dot's result is only as close as bf16)."""
    if not dtype.is_float or dtype not in _RTOL or _RTOL[precision][1] <= _RTOL[dtype][1]:
        return dtype
    return precision


def differs(name: str, dtype: DType, exact: bool, ref: np.ndarray[Any, Any], got: np.ndarray[Any, Any],
             device: str) -> str | None:
    """Why ``got`` does not match ``ref``: ints exactly, floats within a dtype-aware tolerance:
    an exact value within its last bit, any other within a small share of the output's scale
    (a value from another row or column of a dot is off by about the scale itself)."""
    if not dtype.is_float:
        bad = ref != got
    else:
        rtol = _RTOL[dtype][0 if exact else 1]
        r, g = ref.astype(np.float64), got.astype(np.float64)
        finite = np.isfinite(r)
        scale = max(1.0, float(np.max(np.abs(r[finite])))) if finite.any() else 1.0
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(r - g) <= rtol * np.abs(r) + (0.0 if exact else rtol * scale)
        bad = ~(close | (np.isnan(r) & np.isnan(g)) | (r == g))
    if not bad.any():
        return None
    where = np.flatnonzero(bad)[:6]
    return (f"{name}: {int(bad.sum())} of {bad.size} elements differ at {where.tolist()}: "
            f"numpy {ref[where].tolist()} vs {device} {got[where].tolist()}")


def run_seed(seed: int, device: str = NAME) -> Outcome:
    try:
        case = generate(seed)
    except Exception:  # noqa: BLE001 (the generator's own bug: reported as a crash, the run goes on)
        return Outcome(seed, Verdict.CRASH, "generating the kernel failed:\n" + traceback.format_exc()[-3000:], "",
                       False)
    try:
        return run_case(case, device)
    except Exception:  # noqa: BLE001 (a failure to even load the kernel is a finding too)
        return Outcome(seed, Verdict.CRASH, traceback.format_exc()[-3000:], case.source, case.invalid)


def run_many(seeds: Iterable[int], jobs: int, keep_going: Callable[[], bool] = lambda: True) -> Iterator[Outcome]:
    """The seeds' outcomes as they finish, on ``jobs`` worker processes (g++ is the bottleneck);
    no new seed starts once ``keep_going()`` is false."""
    todo = iter(seeds)
    if jobs <= 1:
        for seed in todo:
            if not keep_going():
                return
            yield run_seed(seed)
        return
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        running: set[Future[Outcome]] = set()
        while True:
            while len(running) < 2 * jobs and keep_going() and (next_seed := next(todo, None)) is not None:
                running.add(pool.submit(run_seed, next_seed))
            if not running:
                return
            done, running = wait(running, return_when=FIRST_COMPLETED)
            yield from (f.result() for f in done)
