"""Finding backends: shipped ones without scanning entry points (a first launch does not pay for
the scan), other packages' through the ``tile_lang.backends`` entry-point group."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from typing import Any

import pytest

from tile_lang import registry

FOREIGN = importlib.metadata.EntryPoint("other", "tile_lang_numpy:NumpyBackend", registry.ENTRY_POINT_GROUP)
SHADOW = importlib.metadata.EntryPoint("numpy", "no_such_module:Backend", registry.ENTRY_POINT_GROUP)


def _entry_points(calls: list[str]) -> Any:
    def entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
        calls.append(group)
        return [FOREIGN, SHADOW]

    return entry_points


def test_a_shipped_backend_is_found_without_the_entry_point_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points(calls))
    assert registry._target("numpy") == "tile_lang_numpy:NumpyBackend"
    assert registry._target("cupy") == "tile_lang_cupy:CupyBackend"
    assert calls == []


def test_other_packages_backends_come_from_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points(calls))
    assert registry._target("other") == "tile_lang_numpy:NumpyBackend"
    assert calls == [registry.ENTRY_POINT_GROUP]
    targets = registry._targets()
    assert targets["numpy"] == "tile_lang_numpy:NumpyBackend"  # an entry point cannot shadow a shipped name
    assert set(targets) == {"numpy", "cupy", "other"}
    with pytest.raises(ValueError, match=r"unknown tile_lang backend 'nope' \(registered: cupy, numpy, other\)"):
        registry._target("nope")


def test_importing_tile_lang_and_launching_on_numpy_skip_importlib_metadata() -> None:
    code = ("import sys, numpy as np, tile_lang as tl\n"
            "from tests.compiler.kernels import add_kernel\n"
            "x = np.arange(64, dtype=np.float32); out = np.full(64, np.nan, np.float32)\n"
            "add_kernel[(1,)](tl.to_device(x), tl.to_device(2 * x), o := tl.to_device(out), 64, BLOCK=64)\n"
            "assert (o.numpy() == 3 * x).all()\n"
            "print('importlib.metadata' in sys.modules)")
    env = {**os.environ, registry.ENV_VAR: "numpy"}  # CuPy itself imports importlib.metadata
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.strip() == "False"
