"""One error model: every ``raise`` in ``tile_lang/`` and ``backends/`` raises a TileLangError
(or re-raises what it caught), read from the source; bad host calls are UsageErrors naming the
function and value; a compiler failure is a CompilerBug chained from it, a user's mistake a
KernelError at the user's line."""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr
from tile_lang.as_triton.shim import next_power_of_2
from tile_lang.check import check
from tile_lang.compiler.builder import Builder
from tile_lang.errors import DEBUG_ENV_VAR, CompilerBug, KernelError, TileLangError, UsageError
from tile_lang.ops.forms import Form
from tile_lang.semantics.dispatch import apply

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"tile_lang": ROOT / "tile_lang", "tile_lang_cupy": ROOT / "backends" / "tile_lang_cupy",
            "tile_lang_numpy": ROOT / "backends" / "tile_lang_numpy"}
CUPY_ONLY = ("tile_lang_cupy.launch", "tile_lang_cupy.memory", "tile_lang_cupy.backend")

# Raises that stay builtin exceptions, with why: (module, function's qualname, class).
ALLOWED = {
    ("tile_lang.testing", "assert_close", "AssertionError"): "a test assertion, as pytest reports it",
    ("tile_lang_numpy.checked", "read", "UnboundLocalError"): "Python's own error for the kernel's Python",
    ("tile_lang_numpy.rewrite", "*", "AssertionError"): "an unreachable case: a CompilerBug if hit",
    ("tile_lang.pytest_plugin", "*", "UsageError"): "pytest's own error for its command line",
    ("tile_lang.cli", "*", "ArgumentTypeError"): "argparse's protocol for a bad option value",
    ("tile_lang.cli", "*", "_Usage"): "the command line's exit with a usage message",
    ("tile_lang.cli", "<module>", "SystemExit"): "the command line's exit status",
    ("tile_lang.compiler.verifier", "*", "VerifyError"): "the verifier of the compiler's own IR (a bug if raised)",
    ("tile_lang_numpy.engine", "Stale.fail", "engine.error or Stale.error"): "re-raises the SemanticError it keeps",
    ("tile_lang_numpy.*", "*", "Divergent"): "the reference's signal to re-run a group lane by lane, caught",
    ("tile_lang.torch", "*", "ModuleNotFoundError"): "an optional dependency missing, as Python reports it",
    ("tile_lang.as_triton", "*", "ModuleNotFoundError"): "the import hook's answer for a missing module",
    ("tile_lang.as_triton", "Namespace.__getattr__", "AttributeError"): "__getattr__'s protocol (hasattr)",
}

@dataclass(frozen=True)
class Raise:
    """One ``raise`` statement: where it is and what it raises."""

    module: str
    function: str
    line: int
    raised: str


def modules() -> Iterator[tuple[str, Path]]:
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join((package, *parts))
            yield name.removesuffix(".__init__"), path


def functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """Every function with its qualname and the class it is a method of."""
    def walk(body: list[ast.stmt], prefix: str, cls: str | None) -> Iterator[Any]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{prefix}{node.name}", node, cls
                yield from walk(node.body, f"{prefix}{node.name}.<locals>.", cls)  # a closure may use self
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.", f"{prefix}{node.name}")
            elif isinstance(node, (ast.If, ast.Try)):
                yield from walk(node.body, prefix, cls)
    yield from walk(tree.body, "", None)


def caught_names(fn: ast.AST) -> set[str]:
    return {h.name for h in ast.walk(fn) if isinstance(h, ast.ExceptHandler) and h.name}


@dataclass
class Scope:
    """What a raise inside one function can be resolved against."""

    module: types.ModuleType
    fn: object  # the function object (None: not reachable by its qualname)
    cls: type | None
    values: dict[str, ast.expr]  # locals bound once by ``name = value``
    imports: dict[str, str]  # locals bound by a function-level ``from M import name``: M
    annotated: dict[str, str]  # locals declared ``name: T``, and the parameters


def scope_of(module: types.ModuleType, qualname: str, node: ast.AST, cls: str | None) -> Scope:
    holder: object = module
    for part in qualname.split("."):
        holder = getattr(holder, part, None)
    owner: object = module
    for part in (cls or "").split(".") if cls else ():
        owner = getattr(owner, part, None)
    found: dict[str, list[ast.expr]] = {}
    imports: dict[str, str] = {}
    annotated: dict[str, str] = {}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        annotated.update({a.arg: ast.unparse(a.annotation) for a in every if a.annotation is not None})
    for n in ast.walk(node):
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            annotated[n.target.id] = ast.unparse(n.annotation)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            found.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, ast.ImportFrom) and n.module:
            imports.update({a.asname or a.name: n.module for a in n.names})
    return Scope(module, holder, owner if isinstance(owner, type) else None,
                 {name: v[0] for name, v in found.items() if len(v) == 1}, imports, annotated)


@functools.cache
def checking_names(module_name: str) -> dict[str, Any]:
    """The names a module imports only under ``if TYPE_CHECKING:`` (``engine: Engine``'s class)."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    found: dict[str, Any] = {}
    if path is None:
        return found
    for node in ast.parse(Path(path).read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module:
                    source = importlib.import_module(imp.module)
                    found.update({a.asname or a.name: getattr(source, a.name, None) for a in imp.names})
    return found


def hints(obj: object) -> dict[str, Any]:
    if obj is None:
        return {}
    try:
        return typing.get_type_hints(obj, localns=checking_names(getattr(obj, "__module__", "")))
    except Exception:
        return {}


def exception_classes(hint: object) -> tuple[type, ...] | None:
    """The exception classes a type names (``KernelError | None``: KernelError), or None."""
    members = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    classes = tuple(m for m in members if m is not type(None))
    return classes if classes and all(isinstance(c, type) and issubclass(c, BaseException) for c in classes) else None


def classes_of(value: object) -> tuple[type, ...] | None:
    """The exceptions ``value`` is or makes: a class, or a factory by its return annotation."""
    if isinstance(value, type):
        return (value,) if issubclass(value, BaseException) else None
    return exception_classes(hints(value).get("return")) if callable(value) else None


def type_of(expr: ast.expr, scope: Scope) -> object:
    """The static type of ``expr``: ``self``, an annotated parameter, a local made by a call,
    an annotated attribute of one of these (None when unknown)."""
    if isinstance(expr, ast.Name):
        if expr.id == "self":
            return scope.cls
        if expr.id in scope.annotated:
            return annotation(expr.id, scope)
        value = scope.values.get(expr.id)
        if isinstance(value, ast.Call):
            made = hints(value_of(value.func, scope)).get("return")
            members = [m for m in typing.get_args(made) if m is not type(None)] if isinstance(made, types.UnionType) else [made]
            return members[0] if len(members) == 1 else None
        return None
    if isinstance(expr, ast.Attribute):
        owner = type_of(expr.value, scope)
        if not isinstance(owner, type):
            return None
        # a class annotation, or an attribute __init__ sets from its parameter of that name
        return hints(owner).get(expr.attr, hints(vars(owner).get("__init__")).get(expr.attr))
    return None


def annotation(name: str, scope: Scope) -> object:
    """The type a local or parameter is declared with (None where it does not evaluate)."""
    try:
        return eval(scope.annotated[name], {**checking_names(scope.module.__name__), **vars(scope.module)})  # noqa: S307
    except Exception:
        return None


def value_of(expr: ast.expr, scope: Scope) -> object:
    """The object a name or a dotted name stands for (a class, a function, a bound method's function)."""
    if isinstance(expr, ast.Name):
        if expr.id in scope.imports:
            return getattr(importlib.import_module(scope.imports[expr.id]), expr.id, None)
        return getattr(scope.module, expr.id, getattr(builtins, expr.id, None))
    if isinstance(expr, ast.Attribute):
        if isinstance(expr.value, ast.Name) and isinstance(getattr(scope.module, expr.value.id, None), types.ModuleType):
            return getattr(getattr(scope.module, expr.value.id), expr.attr, None)
        owner = type_of(expr.value, scope)
        return getattr(owner, expr.attr, None) if isinstance(owner, type) else None
    return None


def resolve(expr: ast.expr, scope: Scope) -> tuple[str, tuple[type, ...] | None]:
    """What the raised expression makes: a name for the report and its exception classes."""
    if isinstance(expr, ast.IfExp):
        (a, made_a), (b, made_b) = resolve(expr.body, scope), resolve(expr.orelse, scope)
        return f"{a} or {b}", None if made_a is None or made_b is None else made_a + made_b
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Name) and target.id in scope.annotated:
        return target.id, exception_classes(annotation(target.id, scope))
    if isinstance(target, ast.Name) and target.id in scope.values and target.id not in scope.imports:
        return resolve(scope.values[target.id], scope)
    value = value_of(target, scope)
    if value is apply and isinstance(expr, ast.Call) and expr.args:  # a form's rule, applied by the dispatcher
        form = value_of(expr.args[0], scope)
        if isinstance(form, Form):
            return f"apply({form!r})", classes_of(form.rule)
    classes = classes_of(value)
    name = getattr(value, "__qualname__", ast.unparse(target))
    return (classes[0].__name__ if isinstance(value, type) and classes else name), classes


def matches(pattern: str, text: str) -> bool:
    return pattern == "*" or pattern == text or (pattern.endswith("*") and text.startswith(pattern[:-1]))


def listed(table: dict[tuple[str, str, str], str], site: Raise) -> tuple[str, str, str] | None:
    return next((key for key in table if matches(key[0], site.module) and matches(key[1], site.function)
                 and key[2] == site.raised), None)


def imported(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        if name.startswith(CUPY_ONLY) or name in ("tile_lang.torch", "tile_lang_mypy.plugin", "tile_lang_mypy.choices"):
            return None  # needs CuPy, torch or mypy, which this machine may lack (a GPU host without the dev extras)
        raise


def raises(fn: ast.AST) -> Iterator[ast.Raise]:
    """The raise statements of ``fn``'s own body (not of functions nested in it)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Raise):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def failures() -> tuple[list[Raise], set[tuple[str, str, str]]]:
    """The raises of a non-TileLangError that ALLOWED does not list, and its entries used."""
    bad: list[Raise] = []
    used: set[tuple[str, str, str]] = set()
    for name, path in modules():
        module = imported(name)
        if module is None:  # not scanned here: its entries count as used
            used.update(key for key in ALLOWED if matches(key[0], name))
            continue
        tree = ast.parse(path.read_text())
        for qualname, fn, cls in [("<module>", tree, None), *functions(tree)]:
            scope, caught = scope_of(module, qualname, fn, cls), caught_names(fn)
            for node in raises(fn):
                if node.exc is None or isinstance(node.exc, ast.Name) and node.exc.id in caught:
                    continue  # re-raising what was caught
                made, classes = resolve(node.exc, scope)
                if classes is not None and all(issubclass(c, TileLangError) for c in classes):
                    continue
                site = Raise(name, qualname, node.lineno, made)
                key = listed(ALLOWED, site)
                if key is None:
                    bad.append(site)
                else:
                    used.add(key)
    return bad, used


def test_every_raise_is_a_tile_lang_error() -> None:
    bad, used = failures()
    assert not bad, "raises of a non-TileLangError:\n" + "\n".join(
        f"  {s.module}:{s.line} in {s.function}: {s.raised}" for s in bad)
    stale = ALLOWED.keys() - used
    assert not stale, f"entries that match no raise any more (delete them): {sorted(stale)}"


def test_the_scan_tells_a_builtin_raise_from_a_re_raise_and_a_tile_lang_error() -> None:
    tree = ast.parse("def f(x):\n    try:\n        g()\n    except KeyError as exc:\n        raise exc\n"
                     "    if x:\n        raise ValueError('x')\n    raise UsageError('y')\n")
    module = types.ModuleType("probe")
    setattr(module, "UsageError", UsageError)
    (qualname, fn, cls), = functions(tree)
    scope, caught = scope_of(module, qualname, fn, cls), caught_names(fn)
    made = {resolve(n.exc, scope) for n in raises(fn) if not (isinstance(n.exc, ast.Name) and n.exc.id in caught)
            and n.exc is not None}
    assert made == {("ValueError", (ValueError,)), ("UsageError", (UsageError,))}


# ------------------------------------------------------------------------------------ behaviour

@pytest.fixture(autouse=True)
def no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEBUG_ENV_VAR, raising=False)


@tl.kernel
def doubled(x: Pointer[tl.f32], out: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    y = tl.load(x + offs) * 2.0
    tl.store(out + offs, y)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: tl.empty((-1,), tl.f32), r"empty: shape=\(-1,\) is not a shape; give ints >= 0"),
    (lambda: tl.empty((2.5,), tl.f32), r"empty: shape=\(2.5,\) is not a shape"),  # type: ignore[arg-type]
    (lambda: tl.empty(4, "f32"), r"empty: dtype='f32' is not a tile_lang dtype \(expected e.g. tl.f32"),  # type: ignore[arg-type]
    (lambda: tl.to_device([1.0], "f32"), r"to_device: dtype='f32' is not a tile_lang dtype"),  # type: ignore[call-overload]
    (lambda: tl.to_device(np.zeros(2, np.float32), tl.f32, device=-1), r"to_device: device=-1 is negative"),
    (lambda: tl.backend("nope").__enter__(), r"unknown tile_lang backend 'nope' \(registered: .*numpy"),
    (lambda: tl.load(None), r"tl.load can only be called inside a @tl.kernel"),  # type: ignore[call-overload]
    (lambda: tl.to_device(np.zeros(2, np.complex64)), r"NumPy dtype complex64 has no tile_lang equivalent"),
    (lambda: tl.constexpr([1]), r"tl.constexpr takes an int, float, bool, str, None, a dtype .*got list"),
    (lambda: doubled(None, None, BLOCK=8), r"kernel doubled is not called directly: launch it with doubled\[grid\]"),  # type: ignore[operator]
    (lambda: check("/no/such/kernels.py"), r"no such file or directory: '/no/such/kernels.py'"),
    (lambda: next_power_of_2(-1), r"next_power_of_2 takes an int >= 0, got -1"),
])
def test_a_bad_host_call_is_a_usage_error_naming_function_and_value(call: Any, message: str) -> None:
    with tl.backend("numpy"), pytest.raises(tl.UsageError, match=message) as info:
        call()
    assert tl.UsageError is UsageError and isinstance(info.value, TileLangError)
    assert isinstance(info.value, (TypeError, ValueError))  # what these calls raised before: still caught


def line(text: str) -> int:
    lines, first = inspect.getsourcelines(doubled.fn)
    return first + next(i for i, source in enumerate(lines) if text in source)


def test_an_internal_error_of_the_builder_is_a_compiler_bug_chained_from_it(monkeypatch: pytest.MonkeyPatch) -> None:
    cause = IndexError("list index out of range")

    def broken(self: Builder, start: int, end: int) -> Any:
        raise cause

    monkeypatch.setattr(Builder, "arange", broken)
    with pytest.raises(CompilerBug, match="internal compiler error in the front end: IndexError") as info:
        doubled.inspect(BLOCK=16)
    assert info.value.__cause__ is cause
    assert (info.value.kernel, info.value.lineno) == ("doubled", line("tl.arange"))


def test_a_rule_broken_in_the_kernel_is_a_kernel_error_at_its_line() -> None:
    with pytest.raises(KernelError, match=r"tl.arange\(0, 12\): the extent 12 must be a positive power of two") as info:
        doubled.inspect(BLOCK=12)
    assert not isinstance(info.value, CompilerBug)
    assert (info.value.kernel, info.value.lineno) == ("doubled", line("tl.arange"))
    with tl.backend("numpy"):
        x = tl.to_device(np.random.default_rng(1).standard_normal(12).astype(np.float32))
        out = tl.to_device(np.full(12, np.nan, np.float32))
        with pytest.raises(KernelError, match=r"the extent 12 must be a positive power of two") as ran:
            doubled[(1,)](x, out, BLOCK=12)
    assert ran.value.lineno == line("tl.arange")
    assert np.isnan(out.numpy()).all()  # nothing ran


@tl.kernel
def misspelt(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, masks=None))  # type: ignore[call-overload]


def test_a_builtin_call_that_does_not_bind_is_a_kernel_error_on_both_backends() -> None:
    """The binder's UsageError, raised in the kernel, reads as the user's line and the message
    alone (not 'UsageError: ...'), as the compiler reports it."""
    lines, first = inspect.getsourcelines(misspelt.fn)
    at = first + next(i for i, source in enumerate(lines) if "masks=None" in source)
    message = r"got an unexpected keyword argument 'masks'"  # the reference's also names tl.load
    with pytest.raises(KernelError, match=message) as compiled:
        misspelt.inspect(BLOCK=8)
    with tl.backend("numpy"):
        host = np.random.default_rng(2).standard_normal(8).astype(np.float32)
        x = tl.to_device(host)
        with pytest.raises(KernelError, match=message) as ran:
            misspelt[(1,)](x, BLOCK=8)
        assert x.numpy().tobytes() == host.tobytes()
    assert compiled.value.lineno == ran.value.lineno == at
    assert "UsageError" not in str(ran.value)


@tl.kernel
def str_operand(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.where(offs > 2, "a", tl.load(x + offs)))  # type: ignore[call-overload]


def test_an_operand_neither_tensor_nor_number_is_one_kernel_error_on_both_backends() -> None:
    """The rule (semantics.base.not_an_operand) the builder and the reference share: not a
    CompilerBug although the builder meets it, and nothing is written."""
    lines, first = inspect.getsourcelines(str_operand.fn)
    at = first + next(i for i, source in enumerate(lines) if '"a"' in source)
    message = "in kernel str_operand: expected a tensor or a scalar, got str"
    with pytest.raises(KernelError, match=message) as compiled:
        str_operand.inspect(BLOCK=8)
    assert not isinstance(compiled.value, CompilerBug)
    with tl.backend("numpy"):
        host = np.random.default_rng(3).standard_normal(8).astype(np.float32)
        x = tl.to_device(host)
        with pytest.raises(KernelError, match=message) as ran:
            str_operand[(1,)](x, BLOCK=8)
        assert x.numpy().tobytes() == host.tobytes()
    assert compiled.value.lineno == ran.value.lineno == at


@tl.kernel
def other_widens(x: Pointer[tl.f32], out: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    cols = tl.arange(0, BLOCK)[None, :]
    rows = tl.arange(0, 2)[:, None]
    fill = rows.to(tl.f32) * 10.0 + cols.to(tl.f32)
    wide = tl.load(x + cols, mask=cols < n, other=fill)  # pointers [1, BLOCK] broadcast to other's [2, BLOCK]
    tl.store(out + rows * BLOCK + cols, wide)


def test_a_load_broadcasts_its_pointers_with_other_on_both_backends(backend: str) -> None:
    """A block ``other`` wider than the pointers widens the load, as in Triton and the reference
    (the compiler broadcast ``other`` down to the pointers: a failed internal assert)."""
    rng = np.random.default_rng(4)
    host = rng.standard_normal(16).astype(np.float32)
    n = 11
    cols, rows = np.arange(16), np.arange(2)
    fill = rows[:, None] * 10.0 + cols[None, :]
    expected = np.where(cols[None, :] < n, host.astype(np.float64)[None, :], fill)
    with tl.backend(backend):
        out = tl.to_device(np.full(32, np.nan, np.float32))
        other_widens[(1,)](tl.to_device(host), out, n, BLOCK=16)
        np.testing.assert_array_equal(out.numpy().reshape(2, 16), expected.astype(np.float32))


SIZES = (4, 8)
TABLE = {"scale": 2.0}


@tl.kernel
def past_the_tuple(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * SIZES[BLOCK // 8])


@tl.kernel
def missing_key(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * TABLE["shift"])


@tl.kernel
def by_zero(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * (BLOCK // (BLOCK - 16)))


@tl.kernel
def unknown_name(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * undefined_scale)  # type: ignore[name-defined]  # noqa: F821


@pytest.mark.parametrize(("kernel", "message"), [
    (past_the_tuple, "IndexError: tuple index out of range"),
    (missing_key, "KeyError: 'shift'"),
    (by_zero, "ZeroDivisionError: integer division or modulo by zero"),  # the builder's constant folding
    (unknown_name, "NameError: name 'undefined_scale' is not defined"),
])
def test_pythons_error_on_a_compile_time_value_is_one_kernel_error_on_both_backends(kernel: Any,
                                                                                     message: str) -> None:
    """Python's own error where the front end evaluates the kernel's values is the kernel's (a
    SemanticError naming it), not a CompilerBug: the message the reference gives, at the line."""
    lines, first = inspect.getsourcelines(kernel.fn)
    at = first + next(i for i, source in enumerate(lines) if "tl.store" in source)
    with pytest.raises(KernelError, match=f"in kernel {kernel.name}: {message}") as compiled:
        kernel.inspect(BLOCK=16)
    assert not isinstance(compiled.value, CompilerBug)
    with tl.backend("numpy"):
        host = np.random.default_rng(5).standard_normal(16).astype(np.float32)
        x = tl.to_device(host)
        with pytest.raises(KernelError, match=f"in kernel {kernel.name}: {message}") as ran:
            kernel[(1,)](x, BLOCK=16)
        assert x.numpy().tobytes() == host.tobytes()  # nothing ran
    assert compiled.value.lineno == ran.value.lineno == at


@tl.kernel
def unknown_constraint(x: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=q,r", [tl.load(x + offs)], dtype=tl.f32, is_pure=True, pack=1)
    tl.store(x + offs, y)


def test_a_capability_the_cuda_backend_lacks_is_a_kernel_error_at_its_line() -> None:
    """The code generator's BackendError (an inline-asm constraint it does not know), not a CompilerBug."""
    lines, first = inspect.getsourcelines(unknown_constraint.fn)
    at = first + next(i for i, source in enumerate(lines) if "inline_asm" in source)
    with pytest.raises(KernelError, match="inline asm constraint '=q' is not supported by the CUDA backend") as info:
        unknown_constraint.cuda_source(BLOCK=16)
    assert not isinstance(info.value, CompilerBug)
    assert info.value.lineno == at
