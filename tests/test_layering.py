"""The import graph is acyclic: the language (``tile_lang``) never imports a backend; backends are
reached only through the registry. Each check runs in a fresh interpreter with CuPy blocked, so it
holds on a GPU machine too."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tile_lang import registry
from tile_lang.errors import BackendError, TileLangError

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("tile_lang_cupy", "tile_lang_numpy")

# Makes ``import cupy`` fail as it does where CuPy is not installed.
BLOCK_CUPY = textwrap.dedent("""
    import importlib.abc, sys

    class NoCupy(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] == "cupy":
                raise ModuleNotFoundError("No module named 'cupy' (blocked by the test)", name="cupy")
            return None

    sys.meta_path.insert(0, NoCupy())
""")


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter with CuPy blocked; its stdout (it must succeed)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "backends")])}
    env.pop("TILE_LANG_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", BLOCK_CUPY + textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_no_language_module_imports_a_backend() -> None:
    found = json.loads(run_python("""
        import importlib, json, pkgutil, sys
        import tile_lang

        names = ["tile_lang"] + [m.name for m in pkgutil.walk_packages(tile_lang.__path__, "tile_lang.")]
        missing = {}
        for name in names:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:  # an optional third-party dependency (torch)
                missing[name] = exc.name
        loaded = sorted(m for m in sys.modules if m.partition(".")[0] in ("tile_lang_cupy", "tile_lang_numpy"))
        print(json.dumps({"names": names, "missing": missing, "loaded": loaded}))
    """))
    assert len(found["names"]) > 40  # every module was walked, not just the package
    assert found["loaded"] == [], f"importing tile_lang's modules imported backend modules {found['loaded']}"
    own = {name: dep for name, dep in found["missing"].items() if dep.partition(".")[0] in ("tile_lang", *BACKENDS)}
    assert own == {}, "a tile_lang module needs a module of its own project that is missing"
    assert set(found["missing"]) <= {"tile_lang.torch"}, found["missing"]


def test_no_language_source_names_a_backend_module() -> None:
    """Also the imports the test above cannot see: inside functions and under TYPE_CHECKING."""
    found = []
    for path in sorted((ROOT / "tile_lang").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n.partition(".")[0] in BACKENDS]
    assert found == []


def test_cuda_source_needs_neither_cupy_nor_a_gpu() -> None:
    out = run_python("""
        import sys
        from tests.compiler.kernels import add_kernel
        from tile_lang import registry

        print(add_kernel.cuda_source(BLOCK=256))
        cupy = {row.name: row for row in registry.backends()}["cupy"]
        print("cupy backend:", cupy.available, "cupy" in sys.modules)
    """)
    assert 'extern "C" __global__' in out and "add_kernel" in out
    assert out.rstrip().endswith("cupy backend: False False")  # unavailable here, and CuPy never imported


def test_a_backend_without_source_generation_is_named() -> None:
    with pytest.raises(BackendError, match="backend 'numpy' does not generate source code") as info:
        registry.source_generator("numpy")
    assert isinstance(info.value, TileLangError)
