"""``tl.autotune`` and ``tl.heuristics``: on the NumPy reference every config runs and must agree
with the first (the first is used, the inputs are restored between configs); on a timed backend
(here a NumPy backend under another name, timed by the wall clock) the fastest config is chosen
and cached on disk; bad decorations and launches fail naming the kernel."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr, registry
from tile_lang.diskcache import CacheWarning
from tile_lang.kernel import Launch
from tile_lang_numpy import NumpyBackend

from tests.compiler.conftest import recorded_launches

REPO = Path(__file__).resolve().parents[1]
W = TypeVar("W", bound=Width)
BLOCKS = [tl.Config({"BLOCK": b}, num_warps=w) for b, w in ((32, 1), (64, 2), (128, 4), (256, 4))]


@tl.kernel
def scale(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, factor: float, BLOCK: constexpr = 64) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


@tl.kernel
def bump(x_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr = 64) -> None:
    """In place: x += 1 (run once per config, it would add len(configs) without restores)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@tl.kernel
def unmasked(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr = 64) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)  # right only when BLOCK divides n


@tl.kernel
def drops_tail(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr = 64) -> None:
    """One program walking n in BLOCK steps, forgetting the last partial block."""
    for start in range(0, n // BLOCK * BLOCK, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@pytest.fixture
def launches() -> Iterator[list[Launch]]:
    """Every launch the NumPy backend runs during the test, in order."""
    with recorded_launches() as seen:
        yield seen


def _data(n: int, seed: int = 0) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _run_scale(tuned: Any, n: int, seed: int = 0) -> np.ndarray[Any, Any]:
    x = _data(n, seed)
    out = tl.to_device(np.full(n, np.nan, dtype=np.float32), tl.f32)
    tuned[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](tl.to_device(x, tl.f32), out, n, 1.5)
    np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 1.5, rtol=1e-6)
    return out.numpy()


def test_reference_runs_every_config_once_per_key_then_the_first(launches: list[Launch]) -> None:
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(scale)
    _run_scale(tuned, 1000)
    assert [launch.constexprs["BLOCK"] for launch in launches] == [32, 64, 128, 256]
    assert [launch.options.num_warps for launch in launches] == [1, 2, 4, 4]
    _run_scale(tuned, 1000, seed=1)                  # same key: only the first config
    assert [launch.constexprs["BLOCK"] for launch in launches[4:]] == [32]
    _run_scale(tuned, 777)                           # a new key: all again
    assert len(launches) == 9


@tl.kernel
def doubled(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr = 64) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@pytest.mark.parametrize("native", [False, True])
def test_arguments_of_another_dtype_tune_again(launches: list[Launch], native: bool) -> None:
    """Triton's autotuner keys on every argument's dtype besides ``key``: the same size in f16
    after f32 tunes again (tutorial 03's fp8 matmul ran the config its f16 run chose: 887 TFLOP/s
    against 1183 for Triton, whose fp8 run tuned anew), the same dtypes again do not."""
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(doubled)
    for dtype, runs in ((np.float32, 4), (np.float16, 4), (np.float32, 1), (np.float16, 1)):
        _run_doubled(tuned, dtype, native)
        assert len(launches) == runs, (dtype, runs)
        launches.clear()


def _run_doubled(tuned: Any, dtype: Any, native: bool, n: int = 300) -> None:
    """One launch of ``doubled`` on ``dtype`` arrays (NumPy's own or Buffers), checked."""
    x: Any = _data(n).astype(dtype)
    out: Any = np.full(n, np.nan, dtype)
    if not native:
        x, out = tl.to_device(x), tl.to_device(out)
    tuned[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, out, n)
    got = out if native else out.numpy()
    np.testing.assert_allclose(got, _data(n).astype(dtype).astype(np.float64) * 2, rtol=1e-3)


def test_best_config_is_the_last_keys_choice(launches: list[Launch]) -> None:
    """Triton's ``best_config``: None before a launch, then the config the last launch's key chose (the
    first config on the reference)."""
    configs = BLOCKS[2:] + BLOCKS[:2]
    tuned = tl.autotune(configs=configs, key=["n"])(scale)
    assert tuned.best_config is None
    _run_scale(tuned, 1000)
    assert tuned.best_config is configs[0]
    _run_scale(tuned, 1000, seed=1)  # the same key: the chosen config alone runs
    assert tuned.best_config is configs[0] and launches[-1].constexprs["BLOCK"] == configs[0].kwargs["BLOCK"]


def test_inputs_restored_between_configs_and_no_second_run() -> None:
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(bump)
    x = _data(300)
    buf = tl.to_device(x, tl.f32)
    tuned[lambda meta: (tl.cdiv(300, meta["BLOCK"]),)](buf, 300)
    np.testing.assert_array_equal(buf.numpy(), x + np.float32(1.0))


def test_native_arrays_are_restored_too() -> None:
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(bump)
    x = _data(200)
    native = x.copy()
    tuned[lambda meta: (tl.cdiv(200, meta["BLOCK"]),)](native, 200)  # type: ignore[arg-type]  # a native array, adopted at launch
    np.testing.assert_array_equal(native, x + np.float32(1.0))


def test_config_breaking_the_masks_is_found_on_the_reference() -> None:
    tuned = tl.autotune(configs=[tl.Config({"BLOCK": 32}), tl.Config({"BLOCK": 48 + 16})], key=["n"])(unmasked)
    x = tl.to_device(_data(96), tl.f32)
    out = tl.empty(96, tl.f32)
    with pytest.raises(tl.KernelError, match=r"autotune config \{BLOCK: 64, num_warps: 4, num_stages: 3\}") as info:
        tuned[lambda meta: (tl.cdiv(96, meta["BLOCK"]),)](x, out, 96)
    assert "tl.load(x_ptr + offs)" in str(info.value)  # the kernel's line, with a caret


def test_disagreeing_config_is_reported_with_the_worst_elements() -> None:
    tuned = tl.autotune(configs=[tl.Config({"BLOCK": 16}), tl.Config({"BLOCK": 64})], key=["n"])(drops_tail)
    x = _data(80)
    out = tl.to_device(np.full(80, np.nan, dtype=np.float32), tl.f32)
    with pytest.raises(tl.KernelError) as info:
        tuned[(1,)](tl.to_device(x, tl.f32), out, 80)
    text = str(info.value)
    assert "config {BLOCK: 64, num_warps: 4, num_stages: 3} disagrees with config {BLOCK: 16" in text
    assert "on 'out_ptr'" in text and "16 of 80 elements differ" in text and "index (64,)" in text


@tl.kernel
def block_partials(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr = 16) -> None:
    """One partial sum per BLOCK elements, at the program's index: how many there are, and what each
    holds, depend on the config (the host reads them back through ``best_config``)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


def test_agreement_check_can_be_turned_off_for_config_dependent_results(monkeypatch: pytest.MonkeyPatch,
                                                                       launches: list[Launch]) -> None:
    """With TILE_LANG_AUTOTUNE_CHECK=0 the reference runs the first config that fits and nothing else;
    results that depend on the config by design are then read through ``best_config``."""
    configs = [tl.Config({"BLOCK": 16}), tl.Config({"BLOCK": 32})]
    x = _data(80)

    def launch() -> Any:
        tuned = tl.autotune(configs=configs, key=["n"])(block_partials)
        out = tl.to_device(np.full(5, np.nan, dtype=np.float32), tl.f32)
        tuned[lambda meta: (tl.cdiv(80, meta["BLOCK"]),)](tl.to_device(x, tl.f32), out, 80)
        return tuned, out.numpy()

    with pytest.raises(tl.KernelError, match="disagrees with config"):
        launch()
    monkeypatch.setenv("TILE_LANG_AUTOTUNE_CHECK", "0")
    del launches[:]
    tuned, out = launch()
    assert [launch.constexprs["BLOCK"] for launch in launches] == [16]
    count = tl.cdiv(80, tuned.best_config.kwargs["BLOCK"])
    np.testing.assert_allclose(out[:count].astype(np.float64).sum(), x.astype(np.float64).sum(), rtol=1e-5)


def test_heuristics_alone_and_under_autotune(launches: list[Launch]) -> None:
    by_rule = tl.heuristics({"BLOCK": lambda args: 128 if args["n"] > 500 else 32})(scale)
    _run_scale(by_rule, 1000)
    _run_scale(by_rule, 100)
    assert [launch.constexprs["BLOCK"] for launch in launches] == [128, 32]

    @tl.kernel
    def two(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, factor: float,
            BLOCK: constexpr = 64, HALF: constexpr = 32) -> None:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.static_assert(HALF * 2 == BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)

    tuned = tl.autotune(configs=BLOCKS[:2], key=["n"])(tl.heuristics({"HALF": lambda a: a["BLOCK"] // 2})(two))
    _run_scale(tuned, 300)
    assert [launch.constexprs["HALF"] for launch in launches[2:]] == [16, 32]


def test_prune_configs_by(launches: list[Launch]) -> None:
    seen: list[int] = []

    def early(configs: list[tl.Config], named: dict[str, Any]) -> list[tl.Config]:
        seen.append(named["n"])
        return [c for c in configs if c.kwargs["BLOCK"] <= named["n"]]

    def model(**meta: Any) -> float:
        return float(abs(meta["BLOCK"] - 100))       # 128 first, then 64

    tuned = tl.autotune(configs=BLOCKS, key=["n"],
                        prune_configs_by={"early_config_prune": early, "perf_model": model, "top_k": 2})(scale)
    _run_scale(tuned, 200)
    assert seen == [200]
    assert [launch.constexprs["BLOCK"] for launch in launches] == [128, 64]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: tl.autotune(configs=[tl.Config({"BLOK": 32})], key=["n"])(scale),
     "a config sets 'BLOK', which is not a constexpr parameter of kernel scale"),
    (lambda: tl.autotune(configs=BLOCKS, key=["m"])(scale), "autotune key 'm' is not a parameter of kernel scale"),
    (lambda: tl.autotune(configs=BLOCKS, key=["n"], reset_to_zero=["n"])(scale), "'n' (reset_to_zero/restore_value)"),
    (lambda: tl.autotune(configs=[], key=["n"])(scale), "autotune needs at least one config"),
    (lambda: tl.heuristics({"n": lambda a: 1})(scale), "heuristics sets 'n', which is not a constexpr"),
])
def test_bad_decorations_point_at_the_kernel(make: Any, message: str) -> None:
    with pytest.raises(tl.KernelError, match=r"test_autotune\.py:\d+:1: in kernel scale") as info:
        make()
    assert message in str(info.value)


def test_bad_launches() -> None:
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(scale)
    x = tl.to_device(_data(10), tl.f32)
    with pytest.raises(tl.LaunchError, match="kernel scale: BLOCK set by autotune/heuristics; do not pass them"):
        tuned[(1,)](x, x, 10, 1.0, BLOCK=32)
    with pytest.raises(tl.LaunchError, match="num_warps set by the autotune configs"):
        tuned[(1,)](x, x, 10, 1.0, num_warps=8)  # type: ignore[call-arg]
    with pytest.raises(tl.LaunchError, match="parameter out_ptr"):
        tuned[(1,)](x, x.numpy().astype(np.float64), 10, 1.0)  # type: ignore[arg-type]


class TimedBackend(NumpyBackend):
    """The NumPy backend under another name: the autotuner times it (wall clock) and caches."""

    name = "timed_numpy"


@pytest.fixture
def timed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Launch]]:
    monkeypatch.setenv("TILE_LANG_CACHE_DIR", str(tmp_path))
    backend = TimedBackend()
    registry.register(backend)
    with recorded_launches(backend) as seen, tl.backend(backend.name):
        yield seen


def test_timed_backend_picks_the_fastest_and_caches_it_on_disk(timed: list[Launch], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILE_LANG_PRINT_AUTOTUNING", "1")
    tuned = tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=3)(scale)
    _run_scale(tuned, 4096)
    files = list(tmp_path.glob("autotune-scale-*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())
    assert sorted(stored["timings"]) == sorted(map(str, BLOCKS))
    best = min(stored["timings"], key=stored["timings"].get)
    assert stored["config"] == best
    assert str(timed[-1].constexprs["BLOCK"]) in best  # the final, real launch used the winner
    assert f"kernel scale, key {{'n': 4096}}: {best}" in capsys.readouterr().out
    assert str(tuned.best_config) == best

    again = tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=3)(scale)  # a new process, in effect
    before = len(timed)
    _run_scale(again, 4096)
    assert len(timed) == before + 1 and str(again.best_config) == best  # the winner read from the disk

    files[0].write_text("{not json")                          # a damaged entry is re-tuned, not trusted
    with pytest.warns(CacheWarning, match="corrupt entry"):
        _run_scale(tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=3)(scale), 4096)
    assert len(timed) > before + 2 and json.loads(files[0].read_text())["config"] in map(str, BLOCKS)


def test_timed_backend_restores_and_zeroes(timed: list[Launch]) -> None:
    @tl.kernel
    def accumulate(x_ptr: Pointer[tl.f32], total_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr = 64) -> None:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        values = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(x_ptr + offs, values + 1.0, mask=offs < n)
        tl.atomic_add(total_ptr, tl.sum(values, axis=0))

    tuned = tl.autotune(configs=BLOCKS, key=["n"], reset_to_zero=["total_ptr"], restore_value=["x_ptr"],
                        warmup=1, rep=2, cache_results=False)(accumulate)
    x = _data(1000)
    buf, total = tl.to_device(x, tl.f32), tl.to_device(np.zeros(1, np.float32), tl.f32)
    tuned[lambda meta: (tl.cdiv(1000, meta["BLOCK"]),)](buf, total, 1000)
    np.testing.assert_array_equal(buf.numpy(), x + np.float32(1.0))
    np.testing.assert_allclose(total.numpy()[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)
    y = _data(1000, seed=1)  # the key tuned: the launch alone, and the accumulator zeroed before it
    before = len(timed)
    tuned[lambda meta: (tl.cdiv(1000, meta["BLOCK"]),)](tl.to_device(y, tl.f32), total, 1000)
    assert len(timed) == before + 1
    np.testing.assert_allclose(total.numpy()[0], y.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)


def test_tuned_launches_keep_the_kernel_signature_under_mypy(tmp_path: Path) -> None:
    """The kernel's parameters are checked at a tuned launch; the constexprs the configs and the
    heuristic set need no default (tile_lang_mypy makes them optional)."""
    mypy_api = pytest.importorskip("mypy.api", reason="mypy is not installed (pip install -e '.[dev]')")
    source = tmp_path / "tuned_launch.py"
    source.write_text(
        "import tile_lang as tl\n"
        "from tile_lang import Pointer, constexpr\n"
        "@tl.autotune(configs=[tl.Config({'BLOCK': 32})], key=['n'])\n"
        "@tl.heuristics({'HALF': lambda args: args['BLOCK'] // 2})\n"
        "@tl.kernel\n"
        "def k(x_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr, HALF: constexpr) -> None:\n"
        "    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), dtype=tl.f32))\n"
        "def launch(x: tl.Buffer[tl.f32], y: tl.Buffer[tl.f16]) -> None:\n"
        "    k[(1,)](x, 10)\n"
        "    k[lambda meta: (meta['BLOCK'],), tl.Options(stream=None)](x, n=10)\n"
        "    k[(1,)](y, 10)\n"
        "    k[(1,)](x, 1.5)\n")
    out, err, status = mypy_api.run(["--config-file", str(REPO / "pyproject.toml"), "--strict", "--no-incremental",
                                     "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent", str(source)])
    errors = [line.split(": error: ")[0].rsplit(":", 1)[1] for line in out.splitlines() if ": error: " in line]
    assert errors == ["11", "12"], out + err


def test_configs_the_device_cannot_hold_are_skipped(timed: list[Launch]) -> None:
    """A config whose launch is OutOfResources (a block needing more shared memory than the
    device gives one) is timed as infinite and passed over; the others still race, and the
    launch runs with one of them, right."""
    backend = registry.get("timed_numpy")
    real = backend.launch

    def small_blocks_only(launch: Launch) -> None:
        if launch.constexprs["BLOCK"] > 128:
            raise tl.OutOfResources(f"kernel {launch.kernel.name}: a block needs too much shared memory")
        real(launch)

    setattr(backend, "launch", small_blocks_only)
    tuned = tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=2, cache_results=False)(scale)
    _run_scale(tuned, 1000)  # NaN-poisoned output checked against float64 there
    assert timed[-1].constexprs["BLOCK"] <= 128


@pytest.mark.parametrize("entry", [
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"BLOCK": 64',  # truncated
    '[1, 2]', '{"config": 64, "timings": {}}', '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3"}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": [["a", 1.0]]}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"BLOCK: 64, num_warps: 2, num_stages: 3": "x"}}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"BLOCK: 64, num_warps: 2, num_stages: 3": -1}}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"BLOCK: 64, num_warps: 2, num_stages: 3": NaN}}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"BLOCK: 64, num_warps: 2, num_stages: 3": true}}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", "timings": {"other": 1.0}}',
    '{"config": "BLOCK: 64, num_warps: 2, num_stages: 3", '
    '"timings": {"BLOCK: 64, num_warps: 2, num_stages: 3": Infinity}}'])
def test_a_malformed_disk_entry_warns_and_is_retuned(timed: list[Launch], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    """Truncated JSON, wrong types, times out of range: one CacheWarning, the configs timed again,
    the right result, and the entry rewritten (the docs promise a rebuild, not an error)."""
    monkeypatch.setenv("TILE_LANG_PRINT_AUTOTUNING", "1")  # prints the winner's time: it must be a number
    _run_scale(tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=2)(scale), 4096)
    path, = tmp_path.glob("autotune-scale-*.json")
    path.write_text(entry)
    before = len(timed)
    with pytest.warns(CacheWarning, match="corrupt entry") as record:
        _run_scale(tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=2)(scale), 4096, seed=1)
    assert len(record) == 1 and str(path) in str(record[0].message)
    assert len(timed) > before + len(BLOCKS)  # every config timed again
    stored = json.loads(path.read_text())
    assert stored["config"] in map(str, BLOCKS) and sorted(stored["timings"]) == sorted(map(str, BLOCKS))


@tl.kernel
def wide_only(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, factor: float, BLOCK: constexpr = 64) -> None:
    """``scale``, refusing blocks under 64 at compile time (as Triton kernels refuse configs)."""
    tl.static_assert(BLOCK >= 64, "BLOCK must be at least 64")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


def test_configs_failing_a_static_assert_are_skipped_on_the_reference() -> None:
    """As in Triton, a config whose compile fails a ``tl.static_assert`` is passed over (the
    first that fits is the choice, the others checked against it); when none fits, the launch
    raises the first config's error, as Triton's does."""
    tuned = tl.autotune(configs=BLOCKS, key=["n"])(wide_only)
    _run_scale(tuned, 300)  # NaN-poisoned output checked against float64 there
    assert tuned.best_config is BLOCKS[1]
    narrow = tl.autotune(configs=BLOCKS[:1], key=["n"])(wide_only)
    with pytest.raises(tl.KernelError, match=r"autotune config \{BLOCK: 32, .*\}: static_assert failed: BLOCK must be at"):
        _run_scale(narrow, 300)


def test_configs_failing_a_static_assert_are_skipped_when_timed(timed: list[Launch]) -> None:
    tuned = tl.autotune(configs=BLOCKS, key=["n"], warmup=1, rep=2, cache_results=False)(wide_only)
    _run_scale(tuned, 1000)
    assert tuned.best_config is not None and tuned.best_config.kwargs["BLOCK"] >= 64
    assert timed[-1].constexprs["BLOCK"] >= 64  # the launch after the timing runs the winner
    narrow = tl.autotune(configs=[tl.Config({"BLOCK": 16}), BLOCKS[0]], key=["n"], warmup=1, rep=2,
                         cache_results=False)(wide_only)
    with pytest.raises(tl.KernelError, match="static_assert failed: BLOCK must be at least 64"):
        _run_scale(narrow, 1000)  # none fits: the first config's own error


def test_a_config_pre_hook_sees_each_launch_of_its_config(launches: list[Launch]) -> None:
    """``Config(pre_hook=)`` is called before every launch of that config with the launch's
    arguments by name and the config's constexprs and options (Triton's ``nargs``)."""
    seen: list[dict[str, Any]] = []
    hooked = tl.Config({"BLOCK": 128}, num_warps=2, pre_hook=lambda nargs: seen.append(dict(nargs)))
    tuned = tl.autotune(configs=[BLOCKS[0], hooked], key=["n"])(scale)
    _run_scale(tuned, 300)
    _run_scale(tuned, 300, seed=1)  # the cached choice (BLOCKS[0]): the hook's config does not run
    assert len(launches) == 3 and len(seen) == 1
    assert {k: v for k, v in seen[0].items() if k not in ("x_ptr", "out_ptr")} == {
        "n": 300, "factor": 1.5, "BLOCK": 128, "num_warps": 2, "num_stages": 3, "num_ctas": 1}
    assert isinstance(seen[0]["out_ptr"], tl.Buffer)
