"""tile_lang.testing: do_bench's statistics, assert_close's tolerances and report, perf_report's
table, CSV and plot."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import registry, testing


def test_do_bench_measures_wall_clock_on_numpy() -> None:
    ms = testing.do_bench(lambda: time.sleep(0.002), warmup=2, rep=20)
    assert 1.9 <= ms < 10
    low, mid, high = testing.do_bench(lambda: time.sleep(0.001), warmup=1, rep=10, quantiles=[0.2, 0.5, 0.8])
    assert 0.9 <= low <= mid <= high
    every = testing.do_bench(lambda: None, warmup=1, rep=1, return_mode="all")
    assert len(every) >= 1 and min(every) >= 0


def test_do_bench_resets_the_gradients_named_before_each_call() -> None:
    """Triton's ``grad_to_none`` (tutorial 05 times a backward with it): each call sees ``.grad`` None."""
    class Leaf:
        grad: object = None
    leaves, seen = [Leaf(), Leaf()], []

    def backward() -> None:
        seen.append(all(leaf.grad is None for leaf in leaves))
        for leaf in leaves:
            leaf.grad = 1.0
    testing.do_bench(backward, warmup=1, rep=2, grad_to_none=leaves)
    assert len(seen) > 5 and all(seen)


_CLOCK = [0.0]  # a virtual clock in ms: the tests below count calls, so no load on the machine changes them


class _Event:
    """A CUDA event stood in for by the virtual clock (CuPy's and torch's spellings)."""

    def record(self) -> None:
        self.at = _CLOCK[0]

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: _Event) -> float:
        return end.at - self.at


def _slow_flush(*args: object, **kwargs: object) -> SimpleNamespace:
    """A stand-in for the L2 flush buffer whose every flush takes 2 ms of the virtual clock."""
    def flush(value: object = 0) -> None:
        _CLOCK[0] += 2.0
    return SimpleNamespace(fill=flush, zero_=flush)


@pytest.mark.parametrize("events", ["cupy", "torch"])
def test_do_bench_on_cuda_repeats_a_call_by_its_cost_with_the_flush(monkeypatch: pytest.MonkeyPatch,
                                                                    events: str) -> None:
    """As Triton's: a call much shorter than the L2 flush before it is repeated about
    ``rep / (call + flush)`` times, not ``rep / call`` (tutorial 02's benchmark ran for minutes);
    each call's time still leaves the flush out. Timed with torch's events where torch has CUDA
    started (Triton times on torch's current stream), else CuPy's."""
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(empty=_slow_flush, cuda=SimpleNamespace(
        Event=_Event, get_elapsed_time=_Event.elapsed_time)))
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(empty=_slow_flush, int32=None, cuda=SimpleNamespace(
        is_initialized=lambda: events == "torch", Event=lambda enable_timing: _Event())))
    if events == "torch":  # the CuPy path would fail
        monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr(registry, "current_name", lambda: "cupy")
    calls: list[int] = []

    def call() -> None:  # 0.01 ms
        calls.append(1)
        _CLOCK[0] += 0.01
    ms = testing.do_bench(call, warmup=10, rep=40)
    assert 6 + 10 // 3 + 40 // 3 <= len(calls) <= 6 + 10 // 2 + 40 // 2
    assert ms == pytest.approx(0.01)


def test_do_bench_leaves_a_first_call_out_of_its_estimate() -> None:
    """As Triton's: the first call (a compile, an autotuner's search) runs before the estimate, so
    the repetitions come from what later calls cost, not from one slow call (tutorial 03's
    autotuned matmul was timed once)."""
    calls: list[int] = []

    def first_slow() -> None:
        time.sleep(0.2 if not calls else 0.001)
        calls.append(1)

    every = testing.do_bench(first_slow, warmup=5, rep=20, return_mode="all")
    assert len(every) >= 3 and max(every) < 100  # one slow call estimated in would give 1 (2 ms: about 20)


def test_do_bench_times_a_launch() -> None:
    from examples.vector_add import vector_add

    x = tl.to_device(np.ones(4096, np.float32), tl.f32)
    ms = testing.do_bench(lambda: vector_add[(4,)](x, x, x, 4096, BLOCK_SIZE=1024), warmup=1, rep=5,
                          return_mode="min")
    assert 0 < ms < 1000


def test_assert_close_passes_within_dtype_tolerance() -> None:
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((20, 30))
    testing.assert_close(expected.astype(np.float32), expected)              # f32 rounding: within defaults
    testing.assert_close(tl.to_device(expected.astype(np.float16)), expected)  # f16 defaults are looser
    with pytest.raises(AssertionError):
        testing.assert_close(expected.astype(np.float16), expected, rtol=1e-6, atol=0.0)
    testing.assert_close(np.array([np.nan, np.inf, 1.0]), np.array([np.nan, np.inf, 1.0]))
    with pytest.raises(AssertionError, match="shapes differ"):
        testing.assert_close(np.zeros(3), np.zeros(4))


def test_assert_close_reports_the_worst_elements() -> None:
    rng = np.random.default_rng(1)
    expected = rng.standard_normal((8, 8)).astype(np.float32)
    actual = expected.copy()
    actual[2, 3] += 0.5
    actual[5, 1] += 2.0
    actual[7, 7] = np.nan
    with pytest.raises(AssertionError) as info:
        testing.assert_close(actual, expected)
    lines = str(info.value).splitlines()
    assert lines[0].startswith("3 of 64 elements differ")
    assert lines[1].startswith("  index (7, 7): actual nan")                 # NaN where a number is expected
    assert lines[2].startswith("  index (5, 1)") and "error 2" in lines[2]
    assert lines[3].startswith("  index (2, 3)") and "error 0.5" in lines[3]
    with pytest.raises(AssertionError, match="1 of 3 elements"):
        testing.assert_close(np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32))  # ints: exact


@pytest.mark.filterwarnings("ignore:perf_report. no plot drawn")  # the plot is optional here
def test_perf_report_table_csv_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[int, str, int]] = []

    @testing.perf_report(testing.Benchmark(
        x_names=["N"], x_vals=[128, 256], line_arg="provider", line_vals=["fast", "slow"],
        line_names=["Fast", "Slow"], plot_name="demo", args={"scale": 3}, ylabel="ms"))
    def bench(N: int, provider: str, scale: int) -> tuple[float, float, float]:
        calls.append((N, provider, scale))
        ms = N * scale / (1000 if provider == "fast" else 100)
        return ms, ms * 0.9, ms * 1.1

    tables = bench.run(print_data=True, save_path=tmp_path)
    assert calls == [(128, "fast", 3), (128, "slow", 3), (256, "fast", 3), (256, "slow", 3)]
    table = tables[0]
    assert table.columns == ("N", "Fast", "Fast (min)", "Fast (max)", "Slow", "Slow (min)", "Slow (max)")
    assert table.rows[1][0] == 256 and table.rows[1][4] == pytest.approx(7.68)
    csv = (tmp_path / "demo.csv").read_text().splitlines()
    assert csv[0] == "N,Fast,Fast (min),Fast (max),Slow,Slow (min),Slow (max)" and csv[2].startswith("256,0.768,")
    assert "demo:" in capsys.readouterr().out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return  # the plot is the optional 'plot' extra
    assert (tmp_path / "demo.png").read_bytes()[:4] == b"\x89PNG"


def test_perf_report_without_matplotlib_warns_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plot asked for without matplotlib: the CSV is still written, and one warning says how to
    install it (not one a benchmark)."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    testing._warn_no_matplotlib.cache_clear()

    @testing.perf_report([testing.Benchmark(x_names=["N"], x_vals=[4], line_arg="p", line_vals=[1], line_names=["P"],
                                            plot_name=name) for name in ("one", "two")])
    def bench(N: int, p: int) -> float:
        return float(N * p)

    with pytest.warns(UserWarning, match=r"pip install matplotlib") as caught:
        bench.run(save_path=tmp_path)
    assert len(caught) == 1 and (tmp_path / "one.csv").exists() and (tmp_path / "two.csv").exists()
    assert not (tmp_path / "one.png").exists()
