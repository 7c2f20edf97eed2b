"""Autotuned configs compile together before any is timed: the autotuner hands a backend with
the ``Precompiler`` capability every config's checked launch (the CUDA backend then runs NVRTC
for them side by side); the CUDA backend's kernel cache keeps the ones that compiled and leaves
a failed one to its own launch, which raises its error."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import tile_lang as tl
from benchmarks.launch_bench import without_driver
from tests.test_autotune import BLOCKS, TimedBackend, _run_scale, scale
from tests.test_fast_launch import device_array
from tile_lang import registry
from tile_lang.errors import OutOfResources
from tile_lang.kernel import Launch
from tile_lang_numpy import NumpyBackend


class PrecompilingBackend(TimedBackend):
    """A timed NumPy backend that records what it is asked to precompile, and every launch."""

    name = "precompiling_numpy"

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, tuple[Any, ...]]] = []

    def precompile(self, launches: Sequence[Launch]) -> None:
        self.events.append(("precompile", tuple(launch.constexprs["BLOCK"] for launch in launches)))

    def launch(self, launch: Launch) -> None:
        self.events.append(("launch", (launch.constexprs["BLOCK"],)))
        NumpyBackend.launch(self, launch)


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrecompilingBackend]:
    monkeypatch.setenv("TILE_LANG_CACHE_DIR", str(tmp_path))
    found = PrecompilingBackend()
    registry.register(found)
    with tl.backend(found.name):
        yield found


def test_every_config_is_precompiled_before_any_is_timed(backend: PrecompilingBackend) -> None:
    assert isinstance(backend, registry.Precompiler)
    tuned = tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=2, cache_results=False)(scale)
    _run_scale(tuned, 1000)  # the result checked against float64 there
    assert backend.events[0] == ("precompile", tuple(c.kwargs["BLOCK"] for c in BLOCKS))
    assert all(kind == "launch" for kind, _ in backend.events[1:]) and len(backend.events) > len(BLOCKS)
    events = len(backend.events)
    _run_scale(tuned, 1000)  # the key tuned already: one launch, nothing compiled ahead
    assert backend.events[events:] == [("launch", (backend.events[-1][1][0],))]


def test_heuristics_under_autotune_are_applied_to_the_precompiled_launches(backend: PrecompilingBackend) -> None:
    seen: list[int] = []

    def half(args: dict[str, Any]) -> int:
        seen.append(args["BLOCK"])
        return int(args["BLOCK"])

    tuned = tl.autotune(configs=BLOCKS[:2], key=["n"], warmup=1, rep=2, cache_results=False)(
        tl.heuristics({"BLOCK": half})(scale))
    _run_scale(tuned, 300)
    assert backend.events[0] == ("precompile", (32, 64)) and seen[:2] == [32, 64]


def test_a_config_whose_launch_does_not_check_is_left_to_its_timed_run(backend: PrecompilingBackend) -> None:
    configs = [tl.Config({"BLOCK": 64}), tl.Config({"BLOCK": 64}, num_warps=3)]  # 3 warps: a LaunchError
    tuned = tl.autotune(configs=configs, key=["n"], warmup=1, rep=2, cache_results=False)(scale)
    with pytest.raises(tl.LaunchError, match="num_warps"):
        _run_scale(tuned, 300)
    assert backend.events[0] == ("precompile", (64,))


def test_the_cuda_kernel_cache_keeps_what_compiled_and_leaves_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    from tile_lang_cupy import launch as launching

    calls: list[tuple[int, ...]] = []
    misfit = OutOfResources("kernel scale: a block needs too much shared memory")

    def load_all(launches: Sequence[tuple[Launch, str | None]], capability: int, keep_errors: bool = False) -> list[Any]:
        assert keep_errors
        calls.append(tuple(launch.constexprs["BLOCK"] for launch, _ in launches))
        return [misfit if launch.constexprs["BLOCK"] > 64 else
                launching.Compiled(32, 0, (), 0, None, lambda: 0) for launch, _ in launches]

    def load(launch: Launch, spec_text: str | None, capability: int) -> launching.Compiled:
        calls.append((launch.constexprs["BLOCK"],))
        if launch.constexprs["BLOCK"] > 64:
            raise misfit
        return launching.Compiled(32, 0, (), 0, None, lambda: 0)

    monkeypatch.setattr(launching, "load_all", load_all)
    monkeypatch.setattr(launching, "load", load)
    monkeypatch.setattr(launching, "compute_capability", lambda: 90)
    with without_driver() as cuda:
        x = device_array()
        launches = [scale[(1,)].prepare((x, x, 8, 1.0), {"BLOCK": b}, cuda) for b in (32, 64, 128)]
    cache = launching.KernelCache()
    cache.load(launches + launches[:1], 0)  # a repeat is compiled once
    assert calls == [(32, 64, 128)]
    first = cache.get(launches[0], 0)
    assert cache.get(launches[1], 0) is not first and calls == [(32, 64, 128)]  # both kept: no new compile
    with pytest.raises(OutOfResources, match="shared memory"):
        cache.get(launches[2], 0)  # left out: its own launch compiles it again and raises
    assert calls == [(32, 64, 128), (128,)]
    cache.load(launches, 0)
    assert calls[-1] == (128,)  # only the one still missing
