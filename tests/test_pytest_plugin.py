"""The pytest plugin summarises skips once per reason (count and files), not once per location."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

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


def test_skips_are_summarised_once_per_reason(tmp_path: Path) -> None:
    """(The plugin loads through its pytest11 entry point where tile_lang is installed, and is
    named with -p where it is only on PYTHONPATH, as on the GPU machines.)"""
    (tmp_path / "test_cases.py").write_text(CASES)
    installed = any(e.value == "tile_lang.pytest_plugin" for e in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "tile_lang.pytest_plugin"]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *plugin, "test_cases.py"],
                            cwd=tmp_path, capture_output=True, text=True, check=False)
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert lines == ["SKIPPED [3] no GPU here (test_cases.py)", "SKIPPED [1] something else (test_cases.py)"], \
        result.stdout + result.stderr
    assert "1 passed, 4 skipped" in result.stdout
