"""Testing and benchmarking kernels, Triton's ``triton.testing`` spelling: ``do_bench`` times a
launch (CUDA events on the cupy backend, wall clock on NumPy), ``assert_close`` compares with
dtype-aware tolerances and reports the worst elements, ``perf_report``/``Benchmark`` sweep a
benchmark into a table, a CSV and (with matplotlib, the ``plot`` extra) a plot.
"""

from __future__ import annotations

import functools
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

import tile_lang.registry as registry
import tile_lang.fp8 as fp8
from tile_lang.buffer import Buffer
from tile_lang.dtypes import from_numpy

ReturnMode = Literal["min", "max", "mean", "median", "all"]

L2_FLUSH_BYTES = 256 * 1024 * 1024
"""Written between timed runs on CUDA so each starts with a cold L2 (an H200 has 60 MB)."""


# --- do_bench ------------------------------------------------------------------------------------

@overload
def do_bench(fn: Callable[[], object], warmup: float = ..., rep: float = ..., grad_to_none: Sequence[Any] | None = ...,
             quantiles: None = None, return_mode: Literal["min", "max", "mean", "median"] = ...) -> float: ...
@overload
def do_bench(fn: Callable[[], object], warmup: float = ..., rep: float = ..., grad_to_none: Sequence[Any] | None = ...,
             *, quantiles: Sequence[float], return_mode: ReturnMode = ...) -> list[float]: ...
@overload
def do_bench(fn: Callable[[], object], warmup: float = ..., rep: float = ..., grad_to_none: Sequence[Any] | None = ...,
             quantiles: None = None, *, return_mode: Literal["all"]) -> list[float]: ...
def do_bench(fn: Callable[[], object], warmup: float = 25, rep: float = 100, grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: ReturnMode = "median") -> float | list[float]:
    """Milliseconds per call of ``fn``: about ``warmup`` ms of untimed calls, then about ``rep`` ms
    of timed ones (budgets, as in Triton, not counts). On the cupy backend each call is timed
    with CUDA events after a 256 MB write that flushes L2; elsewhere by the wall clock.
    ``grad_to_none``: tensors whose ``.grad`` is reset before each call (a backward's benchmark);
    ``quantiles`` gives those quantiles of the times instead; ``return_mode`` picks the statistic."""
    timer, per_call = _cuda_timers() if registry.current_name() == "cupy" else (_wall_timer, _wall_per_call)
    if grad_to_none:
        fn = functools.partial(_without_grads, fn, grad_to_none)
    # as Triton: a first call (compiling, autotuning) is not part of the estimate; the counts come
    # from what a call costs with its L2 flush and the host's gaps, so a call much shorter than
    # the flush is not repeated thousands of times over the budget
    per_call(fn, 1)
    estimate = per_call(fn, 5) or 1e-6
    timer(fn, max(1, int(warmup / estimate)))
    times = timer(fn, max(1, int(rep / estimate)))
    if quantiles is not None:
        return [float(np.quantile(np.asarray(times), q)) for q in quantiles]
    if return_mode == "all":
        return times
    pick: dict[str, Callable[[list[float]], float]] = {
        "min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}
    return pick[return_mode](times)


def _without_grads(fn: Callable[[], object], tensors: Sequence[Any]) -> object:
    for t in tensors:
        t.grad = None
    return fn()


def _wall_timer(fn: Callable[[], object], n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def _wall_per_call(fn: Callable[[], object], n: int) -> float:
    return statistics.fmean(_wall_timer(fn, n))


Timer = Callable[[Callable[[], object], int], list[float]]
PerCall = Callable[[Callable[[], object], int], float]


def _cuda_timers() -> tuple[Timer, PerCall]:
    """CUDA-event timers: each of ``n`` calls after an L2 flush (the flush not counted), and the
    milliseconds a call takes over ``n`` calls with their flushes (what a repetition costs)."""
    (event, elapsed), flush = event_clock(), _l2_flush()

    def timer(fn: Callable[[], object], n: int) -> list[float]:
        starts = [event() for _ in range(n)]
        ends = [event() for _ in range(n)]
        for start, end in zip(starts, ends):
            flush()
            start.record()
            fn()
            end.record()
        ends[-1].synchronize()
        return [elapsed(s, e) for s, e in zip(starts, ends)]

    def per_call(fn: Callable[[], object], n: int) -> float:
        start, end = event(), event()
        start.record()
        for _ in range(n):
            flush()
            fn()
        end.record()
        end.synchronize()
        return elapsed(start, end) / n

    return timer, per_call


def _torch_cuda() -> Any:
    """torch, where it has CUDA started (then Triton's code times on its current stream), else None."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.cuda.is_initialized() else None


def event_clock() -> tuple[Callable[[], Any], Callable[[Any, Any], float]]:
    """(a new CUDA event, the milliseconds between two recorded ones), on torch's current stream
    where torch has CUDA started (as Triton times: tutorial 02 benchmarks on a stream of its own),
    else on CuPy's."""
    torch = _torch_cuda()
    if torch is not None:
        return (lambda: torch.cuda.Event(enable_timing=True)), (lambda s, e: float(s.elapsed_time(e)))
    import cupy

    return cupy.cuda.Event, (lambda s, e: float(cupy.cuda.get_elapsed_time(s, e)))


def _l2_flush() -> Callable[[], object]:
    """Writes :data:`L2_FLUSH_BYTES`, so a timed call starts with a cold L2, as Triton's do_bench does."""
    torch = _torch_cuda()
    if torch is not None:
        return torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda").zero_  # type: ignore[no-any-return]
    import cupy

    flush = cupy.empty(L2_FLUSH_BYTES // 4, dtype=np.int32)
    return lambda: flush.fill(0)


# --- assert_close --------------------------------------------------------------------------------

# (rtol, atol) by dtype name: about two units in the last place for floats, exact for the rest
_TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-7, 1e-7), "f32": (1.3e-6, 1e-5), "f16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5),
    "f8e4m3": (1.25e-1, 1e-2), "f8e5m2": (2.5e-1, 1e-2), "f8e4b8": (1.25e-1, 1e-2), "f8e5b16": (2.5e-1, 1e-2),
}


def default_tolerance(array: np.ndarray[Any, Any]) -> tuple[float, float]:
    """The (rtol, atol) ``assert_close`` uses for an array of this dtype (0, 0 for ints and bools)."""
    return _TOLERANCES.get(from_numpy(array.dtype).name, (0.0, 0.0))


def to_numpy(value: Any) -> np.ndarray[Any, Any]:
    """A host NumPy copy of a Buffer (a coded dtype's values decoded, :mod:`tile_lang.fp8`), a CuPy
    array, a torch tensor, or anything array-like."""
    if isinstance(value, Buffer):
        return fp8.decode_e4b15(value.numpy()) if value.type.coded else value.numpy()
    if hasattr(value, "detach"):  # torch: through float32 when NumPy has no such dtype (bf16)
        tensor = value.detach().cpu()
        try:
            return np.asarray(tensor.numpy())
        except TypeError:
            return np.asarray(tensor.float().numpy())
    if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):
        return np.asarray(value.get())
    return np.asarray(value)


def mismatch(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
             worst: int = 5) -> str | None:
    """None if ``actual`` is close to ``expected`` elementwise (``|a - e| <= atol + rtol * |e|``,
    NaN matching NaN, infinities exactly); else a report of the mismatch and its worst elements."""
    got, want = to_numpy(actual), to_numpy(expected)
    if got.shape != want.shape:
        return f"shapes differ: actual {got.shape}, expected {want.shape}"
    default = default_tolerance(got)
    rtol = default[0] if rtol is None else rtol
    atol = default[1] if atol is None else atol
    a, e = got.astype(np.float64), want.astype(np.float64)
    allowed = atol + rtol * np.abs(e)
    with np.errstate(invalid="ignore"):
        error = np.abs(a - e)
        ok = (error <= allowed) | (np.isnan(a) & np.isnan(e)) | (a == e)
    if ok.all():
        return None
    bad = np.flatnonzero(~ok)
    excess = np.nan_to_num((error / np.maximum(allowed, 1e-300)).ravel()[bad], nan=np.inf)
    order = bad[np.argsort(-excess, kind="stable")][:worst]
    lines = [f"{bad.size} of {a.size} elements differ ({100 * bad.size / a.size:.3g}%) beyond "
             f"rtol={rtol:g}, atol={atol:g}; the worst:"]
    for flat in order:
        index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
        lines.append(f"  index {index}: actual {got.ravel()[flat].item()!r}, expected {want.ravel()[flat].item()!r}, "
                     f"error {error.ravel()[flat]:.6g} (allowed {allowed.ravel()[flat]:.3g})")
    return "\n".join(lines)


def assert_close(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Raise AssertionError naming the worst elements (index, actual, expected, error) unless
    ``actual`` matches ``expected``; default tolerances follow ``actual``'s dtype."""
    report = mismatch(actual, expected, rtol, atol)
    if report is not None:
        raise AssertionError(report)


# --- perf_report ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Benchmark:
    """One sweep: each ``x_vals`` entry (bound to ``x_names``) times each ``line_vals`` entry
    (bound to ``line_arg``), with fixed ``args``; the function returns ms, or (ms, min, max)."""

    x_names: Sequence[str]
    x_vals: Sequence[Any]
    line_arg: str
    line_vals: Sequence[Any]
    line_names: Sequence[str]
    plot_name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = "ms"
    x_log: bool = False
    y_log: bool = False
    styles: Sequence[tuple[str, str]] | None = None  # (colour, line style) per line


@dataclass(frozen=True)
class Table:
    """A sweep's results: one row per x value, one column per x name and per line."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def to_csv(self) -> str:
        return "".join(",".join(str(v) for v in row) + "\n" for row in (self.columns, *self.rows))

    def __str__(self) -> str:
        cells = [[_cell(v) for v in row] for row in (self.columns, *self.rows)]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        return "\n".join([self.name + ":"] + ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells])


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Mark:
    """A benchmark function and its sweeps: ``.run()`` measures them."""

    fn: Callable[..., float | tuple[float, float, float]]
    benchmarks: tuple[Benchmark, ...]

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str | Path | None = None) -> list[Table]:
        """Run every sweep; print the tables, and write ``<plot_name>.csv`` (and ``.png`` when
        matplotlib is installed) under ``save_path``."""
        tables = [self._sweep(bench) for bench in self.benchmarks]
        for bench, table in zip(self.benchmarks, tables):
            if print_data:
                print(table)
            if save_path is not None:
                Path(save_path).mkdir(parents=True, exist_ok=True)
                Path(save_path, f"{bench.plot_name}.csv").write_text(table.to_csv())
            if save_path is not None or show_plots:
                _plot(bench, table, Path(save_path) if save_path is not None else None, show_plots)
        return tables

    def _sweep(self, bench: Benchmark) -> Table:
        columns = list(bench.x_names)
        rows = []
        for x in bench.x_vals:
            xs = dict(zip(bench.x_names, x if isinstance(x, (tuple, list)) else [x] * len(bench.x_names)))
            row: list[Any] = list(xs.values())
            for value in bench.line_vals:
                result = self.fn(**xs, **{bench.line_arg: value}, **bench.args)
                row.extend(result if isinstance(result, tuple) else (result,))
            rows.append(tuple(row))
        for name in bench.line_names:
            wide = rows and len(rows[0]) > len(bench.x_names) + len(bench.line_names)
            columns.extend((name, f"{name} (min)", f"{name} (max)") if wide else (name,))
        return Table(bench.plot_name, tuple(columns), tuple(rows))


def perf_report(benchmarks: Benchmark | Sequence[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorate a benchmark function with its sweeps: ``@perf_report(Benchmark(...))``."""
    sweeps = (benchmarks,) if isinstance(benchmarks, Benchmark) else tuple(benchmarks)
    return lambda fn: Mark(fn, sweeps)


def _plot(bench: Benchmark, table: Table, save_path: Path | None, show: bool) -> None:
    try:
        import matplotlib

        if not show:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _warn_no_matplotlib()  # plots are the optional 'plot' extra; the table and the CSV do not need them
        return
    fig, ax = plt.subplots()
    x = [row[0] for row in table.rows]
    stride = (len(table.columns) - len(bench.x_names)) // max(1, len(bench.line_names))
    for i, name in enumerate(bench.line_names):
        column = len(bench.x_names) + i * stride
        colour, style = bench.styles[i] if bench.styles else (None, "-")
        ax.plot(x, [row[column] for row in table.rows], label=name, color=colour, linestyle=style)
        if stride == 3:
            ax.fill_between(x, [r[column + 1] for r in table.rows], [r[column + 2] for r in table.rows],
                            alpha=0.2, color=colour)
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    ax.set_title(bench.plot_name)
    ax.legend()
    if save_path is not None:
        fig.savefig(save_path / f"{bench.plot_name}.png", bbox_inches="tight")  # not clipping the labels
    if show:
        plt.show()
    plt.close(fig)


@functools.cache
def _warn_no_matplotlib() -> None:
    """Say once a process that plots were asked for but matplotlib, which draws them, is missing."""
    warnings.warn("perf_report: no plot drawn, as matplotlib is not installed (pip install matplotlib, or the "
                  "'plot' extra); the table and CSV are written without it", stacklevel=4)


__all__ = ["Benchmark", "Mark", "Table", "assert_close", "default_tolerance", "do_bench", "mismatch",
           "perf_report", "to_numpy"]
