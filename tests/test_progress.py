"""Progress of long CPU work (tile_lang.progress): nothing when stderr is not a terminal (tests, CI
logs), one line a step on a terminal without tqdm; used by the autotuner on every backend and by
``tile-lang check``."""

from __future__ import annotations

import io
import sys
import types

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr
from tile_lang.check import check
from tile_lang.progress import progress

CONFIGS = [tl.Config({"BLOCK": b}, num_warps=w) for b, w in ((32, 1), (64, 2), (128, 4))]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def on_terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr a terminal, tqdm not importable: the plain lines. Called in the test's body (pytest puts
    its own stderr back between a fixture's setup and the test)."""
    out = Terminal()
    monkeypatch.setattr(sys, "stderr", out)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # ``from tqdm import tqdm`` raises ImportError
    return out


@tl.kernel
def scale(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def _tune(n: int) -> None:
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = tl.to_device(np.full(n, np.nan, np.float32), tl.f32)
    tuned = tl.autotune(configs=CONFIGS, key=["n"])(scale)
    tuned[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](tl.to_device(x, tl.f32), out, n)
    np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 3.0, rtol=1e-6)


def test_nothing_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress([1, 2, 3], "work")) == [1, 2, 3]
    _tune(300)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_one_line_a_step_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = on_terminal(monkeypatch)
    assert list(progress([5, 6], "work", lambda n: f"item {n}")) == [5, 6]
    assert list(progress(iter("ab"), "more")) == ["a", "b"]  # no length: no total
    assert terminal.getvalue().splitlines() == ["work 1/2: item 5", "work 2/2: item 6", "more 1", "more 2"]


def test_a_tqdm_bar_when_tqdm_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """tqdm gets the items, the label and the total (a stand-in module records them)."""
    terminal = on_terminal(monkeypatch)
    bars: list[tuple[list[object], dict[str, object]]] = []

    def tqdm(items: list[object], **options: object) -> list[object]:
        bars.append((list(items), options))
        return bars[-1][0]

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=tqdm))
    assert list(progress(["a", "b"], "work")) == ["a", "b"]
    assert bars == [(["a", "b"], {"desc": "work", "total": 2, "leave": False})] and terminal.getvalue() == ""


def test_autotuning_on_the_reference_shows_each_config(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = on_terminal(monkeypatch)
    _tune(500)
    assert terminal.getvalue().splitlines() == [
        f"autotuning scale (checking configs agree) {i}/3: {config}" for i, config in enumerate(CONFIGS, start=1)]


def test_check_shows_each_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = on_terminal(monkeypatch)
    reports = check("tests.compiler.kernels")
    lines = terminal.getvalue().splitlines()
    kernels = sorted({r.kernel for r in reports if r.kernel})
    assert len(lines) >= len(kernels) > 3 and lines[0].startswith(f"tile-lang check 1/{len(lines)}: ")
    assert sorted({line.rpartition(": ")[2] for line in lines}) == kernels
