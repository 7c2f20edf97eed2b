"""What a new user meets first: short launch errors, hints that say what to write, tools that
fail fast with a message (no GPU, no ncu, a closed pipe) instead of a traceback or silence."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
import types
from pathlib import Path

import numpy as np
import pytest

import tile_lang as tl
from tile_lang.check import check
from tile_lang.cli import main
from tile_lang.errors import DEBUG_ENV_VAR
from tile_lang_cupy.backend import CupyBackend

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = (str(ROOT / "tile_lang") + os.sep, str(ROOT / "backends") + os.sep)


@tl.kernel
def shifted_copy(x: tl.Pointer[tl.f32], out: tl.Pointer[tl.f32], shift: int, BLOCK: tl.constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs + shift, tl.load(x + offs))


@tl.kernel
def unannotated_block(x: tl.Pointer[tl.f32], BLOCK: int) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * 2.0)


def _failing_launch() -> tl.KernelError:
    x = tl.to_device(np.random.default_rng(0).standard_normal(16).astype(np.float32))
    out = tl.to_device(np.full(16, np.nan, np.float32))
    with tl.backend("numpy"), pytest.raises(tl.KernelError) as info:
        shifted_copy[(1,)](x, out, 1000, BLOCK=16)
    return info.value


def test_launch_error_traceback_has_no_library_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEBUG_ENV_VAR, raising=False)
    error = _failing_launch()
    frames = traceback.extract_tb(error.__traceback__)
    library = [f for f in frames if f.filename.startswith(LIBRARY)]
    # the one frame left in tile_lang is the launch boundary, the line that re-raises
    assert [(Path(f.filename).name, f.name) for f in library] == [("kernel.py", "__call__")], frames
    assert len(frames) <= 3
    text = "".join(traceback.format_exception(error))
    assert "During handling" not in text and "backends" not in text
    assert "tl.store(out + offs + shift, tl.load(x + offs))" in str(error)  # the kernel line and caret stay


def test_debug_env_var_keeps_library_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    frames = traceback.extract_tb(_failing_launch().__traceback__)
    assert any(f.filename.startswith(LIBRARY[1]) for f in frames), (LIBRARY, [(f.filename, f.name) for f in frames])


def test_calling_a_kernel_says_how_to_launch_it() -> None:
    with pytest.raises(TypeError, match=r"launch it with shifted_copy\[grid\]\(\.\.\.\)"):
        shifted_copy(1, 2, 3)  # type: ignore[operator]  # mypy reports this call too


def test_runtime_arange_bound_hints_constexpr() -> None:
    """Both backends give the hint: the reference at the launch, the compiler at compile time."""
    x = tl.to_device(np.full(16, np.nan, np.float32))
    hint = r"end must be a compile-time int, got a runtime value \(if it is a kernel parameter, annotate it `NAME: tl\.constexpr`"
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match=hint):
        unannotated_block[(1,)](x, 16)
    with pytest.raises(tl.KernelError, match=hint):
        unannotated_block.cuda_source()


def test_torch_module_without_torch_says_how_to_install() -> None:
    code = "import sys; sys.modules['torch'] = None; import tile_lang.torch"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "pip install torch" in result.stderr and "pip install -e '.[torch]'" in result.stderr, result.stderr


def test_inspect_into_a_closed_pipe_exits_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader (`| head`) has gone
    with open(write, "w", buffering=1) as stdout:
        monkeypatch.setattr(sys, "stdout", stdout)
        assert main(["inspect", "examples.vector_add:vector_add", "--constexpr", "BLOCK_SIZE=128", "--cuda"]) == 0


def test_check_names_the_line_of_an_import_error(tmp_path: Path) -> None:
    module = tmp_path / "bad_options.py"
    module.write_text("import tile_lang as tl\n\nOPTIONS = tl.Options(num_warps=3)\n")
    (report,) = check(str(module))
    assert report.message.startswith(f"{module}:3: importing bad_options failed: LaunchError: num_warps"), report.message


def test_cupy_without_a_driver_says_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_driver() -> int:
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_driver)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    reason = CupyBackend().unavailable_reason()
    assert reason is not None and reason.startswith("no CUDA GPU/driver found (CuPy: RuntimeError: cudaErrorInsufficientDriver")


def _cupy_available() -> bool:
    return any(b.name == "cupy" and b.available for b in tl.backends())


@pytest.mark.skipif(_cupy_available(), reason="a GPU is here: --bench would run")
def test_matmul_bench_without_gpu_exits_at_once() -> None:
    result = subprocess.run([sys.executable, "-m", "examples.matmul_autotune", "--bench", "4096"], cwd=ROOT,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 2 and "--bench times the cupy backend on a GPU" in result.stderr, result.stderr


def _fake_python(tmp_path: Path) -> Path:
    """A python3 on PATH that answers ``-c`` checks with the real one and fails every step, logging it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exec {sys.executable} "$@"\necho "$@" >> {tmp_path}/calls\nexit 3\n')
    fake.chmod(0o755)
    return bin_dir


def test_gpu_final_fails_when_a_step_fails_and_names_the_plugin_once(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{_fake_python(tmp_path)}:{os.environ['PATH']}", "OUT": str(tmp_path / "out")}
    result = subprocess.run(["bash", str(ROOT / "scripts/gpu_final.sh")], env=env, capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 1 and "gpu_final: failed: dot_bench (exit 3" in result.stderr, result.stderr
    pytest_calls = [c for c in (tmp_path / "calls").read_text().splitlines() if c.startswith("-m pytest")]
    assert len(pytest_calls) == 2
    from importlib.metadata import entry_points
    installed = bool(entry_points(group="pytest11", name="tile_lang"))
    assert all(("-p tile_lang.pytest_plugin" in c) is not installed for c in pytest_calls), pytest_calls


def test_dot_profile_without_ncu_exits_with_a_message(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", str(ROOT / "scripts/dot_profile.sh"), str(tmp_path / "out")], env=env,
                            capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 1 and "ncu not found" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()
