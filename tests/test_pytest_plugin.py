"""The pytest plugin summarises skips once per reason (count and files), not once per location;
a backend's skips are summarised without ``-rs`` too, and an unknown backend is one usage error."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import tile_lang as tl

CASES = '''
import pytest

NO_GPU = pytest.mark.skipif(True, reason="no GPU here")

@NO_GPU
def test_a() -> None: ...

@NO_GPU
def test_b() -> None: ...

def test_c() -> None:
    pytest.skip("no GPU here")

def test_d() -> None:
    pytest.skip("something else")

def test_e() -> None:
    assert True
'''


BACKEND_CASES = '''
def test_one(tile_backend: str) -> None: ...

def test_two(tile_backend: str) -> None: ...
'''


def _pytest(tmp_path: Path, cases: str, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest on ``cases`` in a subprocess. (The plugin loads through its pytest11 entry point where
    tile_lang is installed, and is named with -p where it is only on PYTHONPATH, as on the GPU machines.)"""
    (tmp_path / "test_cases.py").write_text(cases)
    installed = any(e.value == "tile_lang.pytest_plugin" for e in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "tile_lang.pytest_plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *options,
                           "test_cases.py"], cwd=tmp_path, capture_output=True, text=True, check=False)


def test_unknown_backend_is_one_usage_error(tmp_path: Path) -> None:
    result = _pytest(tmp_path, BACKEND_CASES, "--tile-backend=nump")
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error, no test run
    assert "--tile-backend: unknown tile_lang backend(s) 'nump'; registered: " in result.stderr
    assert "ERROR" not in result.stdout


@pytest.mark.skipif(any(b.name == "cupy" and b.available for b in tl.backends()), reason="cupy runs here")
def test_backend_skips_are_summarised_without_rs(tmp_path: Path) -> None:
    result = _pytest(tmp_path, BACKEND_CASES, "--tile-backend=numpy,cupy")
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(lines) == 1 and lines[0].startswith("SKIPPED [2] tile_lang backend 'cupy' is not available here: "), \
        result.stdout
    assert "2 passed, 2 skipped" in result.stdout


def test_skips_are_summarised_once_per_reason(tmp_path: Path) -> None:
    result = _pytest(tmp_path, CASES, "-rs")
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert lines == ["SKIPPED [3] no GPU here (test_cases.py)", "SKIPPED [1] something else (test_cases.py)"], \
        result.stdout + result.stderr
    assert "1 passed, 4 skipped" in result.stdout
