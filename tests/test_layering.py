"""The import graph is acyclic: no two of tile_lang's modules import each other, even through
imports inside functions or under ``TYPE_CHECKING`` (docs/compiler.md, "Layering"); the language
(``tile_lang``) never imports a backend; backends are reached only through the registry. The checks
that import run in a fresh interpreter with CuPy blocked, so they hold on a GPU machine too."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Set
from pathlib import Path

import pytest

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


def module_names(package: Path) -> dict[str, Path]:
    """Each module of ``package`` (a folder) by dotted name; a package is its ``__init__.py``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: Set[str]) -> set[str]:
    """The modules of ``modules`` that ``node`` names: ``import a.b`` names ``a.b``; ``from a import
    b`` names ``a``, and ``a.b`` too where that is a module. The parent packages Python imports
    first are not counted: importing ``a.b`` does not make ``a.b`` depend on what ``a`` imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & modules
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    source = (node.module or "") if not node.level else ".".join(filter(None, (base, node.module)))
    return ({source} | {f"{source}.{alias.name}" for alias in node.names}) & modules


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports anywhere: at module level, inside functions
    and under ``if TYPE_CHECKING:`` alike."""
    modules = module_names(package)
    graph = {}
    for name, path in modules.items():
        nodes = [n for n in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(n, (ast.Import, ast.ImportFrom))]
        found = set().union(*(imported(name, path.name == "__init__.py", n, modules.keys()) for n in nodes))
        graph[name] = found - {name}
    return graph


def cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan's
    algorithm, iterative), as the modules in import order with the first repeated at the end."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, successors = work[-1]
            step = next((s for s in successors if s not in index or s in stack), None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    if len(component) > 1:
                        found.append(cycle_in(graph, set(component)))
            elif step in index:
                low[node] = min(low[node], index[step])
            else:
                index[step] = low[step] = len(index)
                stack.append(step)
                work.append((step, iter(sorted(graph[step]))))
    return found


def cycle_in(graph: Mapping[str, Set[str]], component: set[str]) -> list[str]:
    """A shortest cycle from the first module of ``component`` back to it (breadth first)."""
    start = min(component)
    came_from: dict[str, str] = {}  # module -> the module it was first reached from
    frontier = [start]
    while start not in came_from:
        reached = []
        for node in frontier:
            for successor in sorted(graph[node] & component - came_from.keys()):
                came_from[successor] = node
                reached.append(successor)
        frontier = reached
    path = [start]
    while len(path) == 1 or path[-1] != start:
        path.append(came_from[path[-1]])
    return path[::-1]


def test_no_module_of_tile_lang_imports_itself_through_others() -> None:
    graph = import_graph(ROOT / "tile_lang")
    assert len(graph) > 80 and "tile_lang.as_triton.shim" in graph  # every module, tile_lang.as_triton's too
    assert graph["tile_lang.compiler.frontend"] >= {"tile_lang.compiler.lowering", "tile_lang.legality"}
    found = cycles(graph)
    assert found == [], "import cycles among tile_lang's modules (imports in functions and under TYPE_CHECKING " \
                        "count; docs/compiler.md, Layering):\n" + "\n".join(" -> ".join(c) for c in found)


LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("tile_lang.errors", "tile_lang.dtypes", "tile_lang.operators", "tile_lang.seen", "tile_lang.builtin",
              "tile_lang.func", "tile_lang.reads", "tile_lang.unsupported", "tile_lang.progress", "tile_lang.diskcache",
              "tile_lang.compiler.ir")),
    ("types", ("tile_lang.tensor",)),
    ("op declarations", ("tile_lang.ops", "tile_lang.signature", "tile_lang.descriptor", "tile_lang.packing", "tile_lang.math",
                         "tile_lang.extra", "tile_lang.target_info")),
    ("rules", ("tile_lang.semantics", "tile_lang.legality")),
    ("backend contract", ("tile_lang.launch", "tile_lang.buffer", "tile_lang.registry", "tile_lang.host",
                          "tile_lang.launch_cache", "tile_lang.compiled")),
    ("compiler", ("tile_lang.compiler",)),
    ("user surface", ("tile_lang",)),
)
"""tile_lang's layers, bottom first (docs/compiler.md, Layering). A name places a module and its
submodules, the longest name deciding; anything not listed is user surface, the top."""


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer."""
    placed = [(len(name), i) for i, (_, names) in enumerate(LAYERS) for name in names
              if module == name or module.startswith(name + ".")]
    return max(placed)[1]


def test_each_module_imports_only_its_layer_and_those_below() -> None:
    graph = import_graph(ROOT / "tile_lang")
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
              for m, targets in sorted(graph.items()) for t in sorted(targets) if layer_of(t) > layer_of(m)]
    assert upward == [], "imports from a higher layer (move the definition down, or place the module in LAYERS):\n" \
                         + "\n".join(upward)
    assert LAYERS[layer_of("tile_lang.compiler.lowering_base")][0] == "compiler"
    assert LAYERS[layer_of("tile_lang.semantics.elementwise")][0] == "rules"


def test_the_cycle_check_sees_lazy_type_checking_and_package_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import A\n",  # the facade: every module below must not import it
        "a.py": "from pkg.sub import b\nA = 1\n",
        "sub/__init__.py": "",
        "sub/b.py": "def f():\n    from pkg import c\n",  # lazy, and `from pkg import c` is pkg and pkg.c
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..pkg import a\n",
        "d.py": "import pkg.a\n",  # importing a.b does not count the parent package a
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph(package)
    assert graph["pkg.sub.b"] == {"pkg", "pkg.c"} and graph["pkg.d"] == {"pkg.a"}
    assert cycles(graph) == [["pkg", "pkg.a", "pkg.sub.b", "pkg"]]
    del graph["pkg.sub.b"]
    assert cycles({m: s - {"pkg.sub.b"} for m, s in graph.items()}) == []


def test_mypy_analyses_no_compiler_module_for_a_file_importing_tile_lang() -> None:
    """mypy analyses each module an import statement names, inside functions and under TYPE_CHECKING
    too, and the packages above it: what ``tile_lang/__init__.py`` reaches so is analysed for every
    file importing tile_lang. The compiler (whose package imports all of it) and ml_dtypes' stubs
    stay out, about 1.3 s of each cold run (docs/typing.md); the kernel reaches the compiler by name."""
    graph = import_graph(ROOT / "tile_lang")
    modules = module_names(ROOT / "tile_lang")
    reached: set[str] = set()
    todo = ["tile_lang"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [*graph[name], *(name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1))]
    assert len(reached) > 30 and "tile_lang.kernel" in reached and "tile_lang.compiled" in reached
    assert sorted(m for m in reached if m.startswith("tile_lang.compiler")) == []
    third = {f"{m}: {alias.name if isinstance(node, ast.Import) else node.module}" for m in reached
             for node in ast.walk(ast.parse(modules[m].read_text())) if isinstance(node, (ast.Import, ast.ImportFrom))
             for alias in node.names if "ml_dtypes" in (alias.name if isinstance(node, ast.Import) else node.module or "")}
    assert sorted(third) == []


DISPATCH_ENTRIES = frozenset({"apply", "checked", "lacking", "Capabilities"})
"""What a backend may import from :mod:`tile_lang.semantics`: the dispatcher's entries, no rule
(its types come from contract modules: ``tile_lang.errors``, ``tile_lang.seen``, ``tile_lang.ops.forms``)."""


def rule_uses(source: str, filename: str) -> list[str]:
    """Where ``source`` reaches a rule of ``tile_lang.semantics`` other than through the
    dispatcher's entries: an import of a semantics module or of a name from one, an attribute
    ``.semantics``, or a form's ``.rule`` called by hand (as ``file:line: what``)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("tile_lang.semantics")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tile_lang.semantics.dispatch":
                names = [f"{node.module}.{a.name}" for a in node.names if a.name not in DISPATCH_ENTRIES]
            elif node.module.startswith("tile_lang.semantics"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif node.module == "tile_lang":
                names = [f"tile_lang.{a.name}" for a in node.names if a.name == "semantics"]
        elif isinstance(node, ast.Attribute) and node.attr in ("semantics", "rule"):
            names = [ast.unparse(node)]
        found += [f"{filename}:{node.lineno}: {name}" for name in names if isinstance(node, (ast.stmt, ast.expr))]
    return found


def test_no_backend_applies_a_rule_but_through_the_dispatcher() -> None:
    """No ``semantics.`` call inside ``backends/``: each rule is applied by the dispatcher
    (``checked`` for a builtin, ``apply`` for a form), so no backend can skip or reorder one."""
    paths = sorted((ROOT / "backends").rglob("*.py"))
    assert len(paths) > 40
    found = [use for path in paths for use in rule_uses(path.read_text(), str(path.relative_to(ROOT)))]
    assert found == [], "a backend reaches tile_lang.semantics other than through the dispatcher " \
                        "(apply a form or a builtin's rule with tile_lang.semantics.dispatch):\n" + "\n".join(found)


def test_the_rule_check_sees_each_way_to_reach_a_rule() -> None:
    source = textwrap.dedent("""
        import tile_lang.semantics.operators
        from tile_lang.semantics import operators as rules
        from tile_lang.semantics.dispatch import apply, checked, RULES
        from tile_lang import semantics, dtypes
        from tile_lang.ops import forms

        def f(x):
            tl.semantics.base.broadcast(x, x)
            forms.condition.rule(x)
            return apply(forms.condition, x)
    """)
    assert sorted(use.partition(": ")[2] for use in rule_uses(source, "b.py")) == sorted([
        "tile_lang.semantics.operators", "tile_lang.semantics.operators", "tile_lang.semantics.dispatch.RULES",
        "tile_lang.semantics", "tl.semantics", "forms.condition.rule"])


def test_every_form_has_its_rule() -> None:
    """Each form's rule is registered once, by the semantics module that holds it."""
    import tile_lang.semantics.dispatch  # noqa: F401 (registers every rule)
    from tile_lang.ops.forms import FORMS

    assert len(FORMS) > 20 and len({f.name for f in FORMS}) == len(FORMS)
    assert [f.name for f in FORMS if f.rule is None or not f.rule.__module__.startswith("tile_lang.semantics.")] == []


def test_tensor_methods_are_the_ops_that_register_them() -> None:
    """``tile_lang.tensor`` imports no op: each ops module registers the ops behind tensor methods."""
    import tile_lang as tl
    from tile_lang.tensor import FORWARDED_METHODS, member

    for name in sorted(FORWARDED_METHODS | {"cast", "trans", "store", "abs"}):
        assert member(name) is getattr(tl, name), name


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


def test_ml_dtypes_is_imported_on_the_first_bf16_or_fp8_numpy_dtype() -> None:
    """1.25 s of ``import tile_lang`` before: ``tile_lang.dtypes`` imports it by name when a DType's
    ``numpy`` is first read, and an ml_dtypes array's dtype is found once ml_dtypes is loaded."""
    out = run_python("""
        import sys
        import numpy as np
        import tile_lang as tl
        from tile_lang import dtypes

        print("ml_dtypes" in sys.modules, dtypes.F32.numpy, "ml_dtypes" in sys.modules)
        print(dtypes.BF16.numpy, "ml_dtypes" in sys.modules)
        import ml_dtypes
        print(dtypes.from_numpy(np.zeros(2, ml_dtypes.float8_e5m2).dtype), tl.to_device(np.ones(2, ml_dtypes.bfloat16)).type)
    """)
    assert out.split("\n")[:3] == ["False float32 False", "bfloat16 True", "tl.f8e5m2 tl.bf16"]


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
    from tile_lang.compiler.inspect import source_generator

    with pytest.raises(BackendError, match="backend 'numpy' does not generate source code") as info:
        source_generator("numpy")
    assert isinstance(info.value, TileLangError)
