"""Installing as the README says gives an environment where ``mypy --strict`` checks a user's
kernel file in another directory (it sees tile_lang's types, so a bad launch is an error), and
where the kernel and the ``tile-lang`` command run from that directory, while the repository's own
``tests``, ``examples``, ``benchmarks`` and ``scripts`` stay off the path; from the repository root
``python -m examples`` and ``tile-lang inspect examples...`` run, as the README says.

Slow (a fresh venv and a pip install): marked ``slow``, run by ``pytest -m slow`` (.ci/run does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

KERNEL = '''
import numpy as np
import tile_lang as tl
from tile_lang import Pointer, constexpr, f32

@tl.kernel
def scale(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, factor: float, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)

x = np.random.default_rng(0).standard_normal(300).astype(np.float32)
out = tl.to_device(np.full(300, np.nan, dtype=np.float32), tl.f32)
scale[(tl.cdiv(300, 128),)](tl.to_device(x, tl.f32), out, 300, 2.5, BLOCK=128)
np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 2.5, rtol=1e-6)
print("kernel ok")
'''

BAD_LAUNCH = "\nscale[(1,)](out, out, 300, 'two', BLOCK=128)\n"

FOUND = """
import importlib.util, pathlib
import tile_lang
print(sorted(n for n in ("tile_lang", "tile_lang_mypy", "tile_lang_numpy", "tile_lang_cupy", "examples",
                         "tests", "benchmarks", "scripts", "backends") if importlib.util.find_spec(n)))
print(pathlib.Path(tile_lang.__file__).resolve().parent)
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MYPYPATH")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_readme_install_lets_mypy_and_python_find_tile_lang_anywhere(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    assert made.returncode == 0, made.stderr
    python = str(venv / "bin" / "python")
    installed = _run([python, "-m", "pip", "install", "-q", "-e", f"{REPO}[dev]"], tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    work = tmp_path / "user"
    work.mkdir()
    (work / "my_kernel.py").write_text(KERNEL)
    checked = _run([python, "-m", "mypy", "--strict", "--no-incremental", "my_kernel.py"], work)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (work / "plugin.ini").write_text("[mypy]\nplugins = tile_lang_mypy\n")  # the README's plugin line, anywhere
    with_plugin = _run([python, "-m", "mypy", "--strict", "--no-incremental", "--config-file", "plugin.ini",
                        "my_kernel.py"], work)
    assert with_plugin.returncode == 0, with_plugin.stdout + with_plugin.stderr
    (work / "bad_launch.py").write_text(KERNEL + BAD_LAUNCH)
    rejected = _run([python, "-m", "mypy", "--strict", "--no-incremental", "bad_launch.py"], work)
    line = (KERNEL + BAD_LAUNCH).splitlines().index(BAD_LAUNCH.strip()) + 1
    assert rejected.returncode == 1 and f'bad_launch.py:{line}: error: Argument 4 to "__call__"' in rejected.stdout, \
        rejected.stdout + rejected.stderr

    (work / "uses_tests.py").write_text("import tests\n")  # the repository's tests are not a package of this install
    unseen = _run([python, "-m", "mypy", "--strict", "--no-incremental", "uses_tests.py"], work)
    assert unseen.returncode == 1 and 'uses_tests.py:1: error: Cannot find implementation or library stub for ' \
        'module named "tests"' in unseen.stdout, unseen.stdout + unseen.stderr

    ran = _run([python, "my_kernel.py"], work)
    assert ran.returncode == 0 and "kernel ok" in ran.stdout, ran.stdout + ran.stderr
    found = _run([python, "-c", FOUND], work)
    assert found.returncode == 0, found.stdout + found.stderr
    assert found.stdout.splitlines() == [str(["tile_lang", "tile_lang_cupy", "tile_lang_mypy", "tile_lang_numpy"]),
                                         str(REPO / "tile_lang")], found.stdout  # the checkout's files: no reinstall
    for package in ("tests", "examples"):
        unseen = _run([python, "-c", f"import {package}"], work)
        assert unseen.returncode == 1 and f"No module named '{package}'" in unseen.stderr, unseen.stdout + unseen.stderr

    cli = _run([str(venv / "bin" / "tile-lang"), "inspect", "my_kernel:scale", "--constexpr", "BLOCK=256", "--cuda"],
               work)  # the README's line for a user's module: tile-lang imports from the current directory
    assert cli.returncode == 0 and "__global__" in cli.stdout, cli.stdout + cli.stderr
    examples = _run([python, "-m", "examples", "vector_add"], REPO)  # the README's repository-root lines
    assert examples.returncode == 0 and "1 passed" in examples.stdout, examples.stdout + examples.stderr
    cli = _run([str(venv / "bin" / "tile-lang"), "inspect", "examples.vector_add:vector_add",
                "--constexpr", "BLOCK_SIZE=256", "--cuda"], REPO)
    assert cli.returncode == 0 and "__global__" in cli.stdout, cli.stdout + cli.stderr
