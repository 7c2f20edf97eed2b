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


FIRST_LAUNCHES = """
import sys, threading
import numpy as np
import tile_lang as tl
from tests.compiler.kernels import add_kernel
sys.setswitchinterval(1e-6)  # switch threads often: the race, when present, shows in most runs
THREADS, N = 8, 96
start = threading.Barrier(THREADS)
failures = []

def first_launch(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((2, N)).astype(np.float32)
    start.wait()
    try:
        out = tl.to_device(np.full(N, np.nan, np.float32))
        add_kernel[(2,)](tl.to_device(x), tl.to_device(y), out, N, BLOCK=64)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + y, rtol=1e-6)
    except Exception as exc:
        failures.append(f"{type(exc).__name__}: {exc}")

threads = [threading.Thread(target=first_launch, args=(seed,)) for seed in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(failures), failures[:1])
"""


def test_first_launches_from_eight_threads_in_a_fresh_process_all_succeed() -> None:
    """Backends are loaded on first use; threads making the first launches together get one
    backend object (without the registry's lock, 4 runs in 6 failed: a buffer made through one
    instance, refused by a launch through another of the same name)."""
    env = {**os.environ, registry.ENV_VAR: "numpy"}
    for _ in range(4):
        done = subprocess.run([sys.executable, "-c", FIRST_LAUNCHES], capture_output=True, text=True, check=False,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split(maxsplit=1)[0] == "0", done.stdout
