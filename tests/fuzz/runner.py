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
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
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
    CHECKED = "checked"                  # the reference stopped what the GPU does silently (a signed
    #                                      overflow, a race, a zero step: _RUN_TIME_CHECKS), or the
    #                                      launch needs more shared memory than the device has
    UNCHECKED = "unchecked"              # the reference ran a kernel it must stop (Case.expect)
    CRASH = "crash"                      # an exception that is not a KernelError, or a worker killed
    HANG = "hang"                        # no outcome within the seed's time limit

    @property
    def failed(self) -> bool:
        return self in (Verdict.MISMATCH, Verdict.REJECT_MISMATCH, Verdict.UNCHECKED, Verdict.CRASH, Verdict.HANG)


_RUN_TIME_CHECKS = ("would silently wrap", "data race", "must not be zero")  # the reference's, not typing rules
SEED_TIMEOUT = 60.0  # seconds for one seed's build and both runs (a build takes a few on a busy machine)


@dataclass(frozen=True)
class Outcome:
    seed: int
    verdict: Verdict
    detail: str
    source: str
    invalid: bool
    hazard: str = ""  # the case's (Case.hazard)


def unavailable_reason() -> str | None:
    return _EMU.unavailable_reason()


def host_inputs(case: Case) -> list[np.ndarray[Any, Any]]:
    """Random inputs (never zeros): floats away from 0, small ints with a few large ones, i8
    over its whole range; :attr:`Data.GRID` buffers hold multiples of 1/4 (ints: -8 to 8);
    :attr:`Data.EDGE` and :attr:`Data.NAN` ones what :func:`_edges` gives."""
    rng = np.random.default_rng(case.seed)
    arrays = []
    for buf in case.inputs:
        x: np.ndarray[Any, Any]
        if buf.data in (Data.EDGE, Data.NAN):
            x = _edges(rng, buf.dtype, buf.size, buf.data)
        elif buf.data is Data.GRID:
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


def _edges(rng: np.random.Generator, dtype: DType, size: int, data: Data) -> np.ndarray[Any, Any]:
    """Edge values: a dtype's extremes, -1, 0 and shift amounts about its width (ints); +-0,
    +-inf and small numbers (floats); or normal floats, a third NaN at random and the first third
    all NaN (:attr:`Data.NAN`), so some blocks, rows or columns hold nothing else."""
    if data is Data.NAN:
        x = rng.standard_normal(size) * 2
        x[rng.random(size) < 0.3] = np.nan
        x[:size // 3] = np.nan
        return x
    if dtype.is_float:
        return rng.choice(np.array([0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, 1.5, -2.0]), size)
    info, bits = np.iinfo(dtype.numpy), dtype.bits
    edges = [info.min, info.min + 1, info.max, -1, 0, 1, 2, bits - 1, bits, bits + 1, 2 * bits - 1]
    return rng.choice(np.array([v for v in edges if info.min <= v <= info.max], dtype.numpy), size)  # no -1 in u32


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


def run_case(case: Case, device: str = NAME, checked: Callable[[str], None] = lambda _: None) -> Outcome:
    """The case on the NumPy reference and on ``device`` (the emulated CUDA, or "cupy" on a GPU);
    ``checked`` hears of a run-time check the reference stopped at before the device runs."""
    registry.register(_EMU)
    _EMU.arch = case.arch
    results: dict[str, list[np.ndarray[Any, Any]] | BaseException] = {}
    kernel = load(case.name, case.source)
    for backend in ("numpy", device):
        try:
            results[backend] = execute(case, kernel, backend)
        except Exception as exc:  # noqa: BLE001 (any failure is a finding)
            results[backend] = exc
        if backend == "numpy" and _run_time_check(results[backend]):
            checked(str(results[backend]))
    verdict, detail = judge(case, results["numpy"], results[device], device)
    return Outcome(case.seed, verdict, detail, case.source, case.invalid, case.hazard)


def judge(case: Case, ref: list[np.ndarray[Any, Any]] | BaseException,
          got: list[np.ndarray[Any, Any]] | BaseException, device: str = NAME) -> tuple[Verdict, str]:
    if isinstance(got, OutOfResources) and not isinstance(ref, BaseException):
        return Verdict.CHECKED, str(got)  # the device's limits: the reference has none
    for side, result in (("numpy", ref), (device, got)):
        if isinstance(result, BaseException) and not isinstance(result, KernelError):
            text = "".join(traceback.format_exception(result))
            return Verdict.CRASH, f"{side} raised {type(result).__name__}:\n{text[-3000:]}"
    if isinstance(ref, BaseException) and isinstance(got, BaseException):
        return Verdict.BOTH_REJECTED, str(ref)
    if _run_time_check(ref):
        return Verdict.CHECKED, str(ref)  # a run-time check of the reference's, not a typing rule
    if case.expect and not isinstance(ref, BaseException):
        return Verdict.UNCHECKED, f"the reference ran without reporting a {case.expect}"
    if isinstance(ref, BaseException) or isinstance(got, BaseException):
        which, exc = ("numpy", ref) if isinstance(ref, BaseException) else (device, got)
        return Verdict.REJECT_MISMATCH, f"only {which} rejected the kernel:\n{exc}"
    problems = [p for out, r, g in zip(case.outputs, ref, got)
                if (p := differs(out.buffer.name, _compared_as(out.buffer.dtype, case.precision), out.exact, r, g,
                                 device))]
    for side, arrays in (("numpy", ref), (device, got)):
        problems += [f"on {side}, {p}" for a, b in case.twins
                     if (p := differs(f"{case.outputs[a].buffer.name} (twin of {case.outputs[b].buffer.name})",
                                      case.outputs[a].buffer.dtype, True, arrays[b], arrays[a], "constexpr",
                                      "literal"))]
    return (Verdict.MISMATCH, "\n".join(problems)) if problems else (Verdict.AGREE, "")


def _run_time_check(result: object) -> bool:
    """Whether the reference's result is an error of a run-time check (:data:`_RUN_TIME_CHECKS`)."""
    return isinstance(result, KernelError) and any(check in str(result) for check in _RUN_TIME_CHECKS)


_RTOL = {dtypes.F16: (1e-3, 2e-2), dtypes.BF16: (8e-3, 3e-2), dtypes.F32: (1e-6, 1e-4)}  # (exact, not exact)


def _compared_as(dtype: DType, precision: DType) -> DType:
    """The dtype whose tolerance a float output gets: its own, or the case's least precise result
    (an f32 output computed from a bf16 dot's result is only as close as bf16)."""
    if not dtype.is_float or dtype not in _RTOL or _RTOL[precision][1] <= _RTOL[dtype][1]:
        return dtype
    return precision


def differs(name: str, dtype: DType, exact: bool, ref: np.ndarray[Any, Any], got: np.ndarray[Any, Any],
            device: str, reference: str = "numpy") -> str | None:
    """Why ``got`` does not match ``ref``: ints exactly, floats within a dtype-aware tolerance:
    an exact value within its last bit (and a zero's sign), any other within a small share of the
    output's scale (a value from another row or column of a dot is off by about the scale itself)."""
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
        if exact:
            bad |= (r == 0) & (g == 0) & (np.signbit(r) != np.signbit(g))
    if not bad.any():
        return None
    where = np.flatnonzero(bad)[:6]
    return (f"{name}: {int(bad.sum())} of {bad.size} elements differ at {where.tolist()}: "
            f"{reference} {ref[where].tolist()} vs {device} {got[where].tolist()}")


def run_seed(seed: int, device: str = NAME, checked: Callable[[str], None] = lambda _: None) -> Outcome:
    try:
        case = generate(seed)
    except Exception:  # noqa: BLE001 (the generator's own bug: reported as a crash, the run goes on)
        return Outcome(seed, Verdict.CRASH, "generating the kernel failed:\n" + traceback.format_exc()[-3000:], "",
                       False)
    try:
        return run_case(case, device, checked)
    except Exception:  # noqa: BLE001 (a failure to even load the kernel is a finding too)
        return Outcome(seed, Verdict.CRASH, traceback.format_exc()[-3000:], case.source, case.invalid, case.hazard)


class _Worker:
    """A process running the seeds it is sent, one at a time: one that hangs or dies (a kernel's
    infinite loop, a signal such as x86's trap on INT_MIN / -1) costs only its seed. A worker
    that dies after the reference stopped at a run-time check (a device trap, as the CUDA code's
    on a zero step) is ``checked``."""

    def __init__(self) -> None:
        context = get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.seed: int | None = None
        self.deadline = 0.0
        self.checked = ""  # the reference's run-time check on this seed, sent before the device runs

    def give(self, seed: int, timeout: float) -> None:
        self.conn.send(seed)
        self.seed, self.deadline, self.checked = seed, time.monotonic() + timeout, ""

    def outcome(self, timeout: float) -> Outcome | None:
        """The seed's outcome if it is in, a hang or crash outcome if it never will be, else None."""
        seed = self.seed
        assert seed is not None
        try:
            while self.conn.poll():
                result: Outcome | str = self.conn.recv()
                if isinstance(result, Outcome):
                    self.seed = None
                    return result
                self.checked = result
        except (EOFError, OSError):
            pass
        alive = self.process.is_alive()
        if alive and time.monotonic() < self.deadline:
            return None
        self.seed = None
        self.stop()
        if alive:
            return _lost(seed, Verdict.HANG, f"no outcome within {timeout:.0f} s (an endless loop?)")
        died = f"the worker process died (exit code {self.process.exitcode})"
        if self.checked:
            return _lost(seed, Verdict.CHECKED, f"{died} after the reference stopped:\n{self.checked}")
        return _lost(seed, Verdict.CRASH, died)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


def _serve(conn: Connection) -> None:
    while True:
        try:
            seed = conn.recv()
        except EOFError:
            return
        conn.send(run_seed(seed, checked=conn.send))


def _lost(seed: int, verdict: Verdict, why: str) -> Outcome:
    """An outcome for a seed whose worker never answered, with the kernel's source regenerated."""
    try:
        case = generate(seed)
    except Exception:  # noqa: BLE001 (run_seed reported it; here only the source is wanted)
        return Outcome(seed, verdict, why, "", False)
    return Outcome(seed, verdict, why, case.source, case.invalid, case.hazard)


def run_many(seeds: Iterable[int], jobs: int, keep_going: Callable[[], bool] = lambda: True,
             timeout: float = SEED_TIMEOUT) -> Iterator[Outcome]:
    """The seeds' outcomes as they finish, on ``jobs`` worker processes (g++ is the bottleneck),
    each seed given ``timeout`` seconds; no new seed starts once ``keep_going()`` is false."""
    todo = iter(seeds)
    workers = [_Worker() for _ in range(max(1, jobs))]
    try:
        while True:
            for worker in workers:
                if worker.seed is None and keep_going() and (seed := next(todo, None)) is not None:
                    worker.give(seed, timeout)
            busy = [w for w in workers if w.seed is not None]
            if not busy:
                return
            first = min(w.deadline for w in busy) - time.monotonic()
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=max(0.0, first))
            for i, worker in enumerate(workers):
                if worker.seed is not None and (outcome := worker.outcome(timeout)) is not None:
                    if worker.process.exitcode is not None:
                        workers[i] = _Worker()
                    yield outcome
    finally:
        for worker in workers:
            worker.stop()
