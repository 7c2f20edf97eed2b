"""``tile-lang check``: compile every kernel of a module or package through the compiler's front end
and pass pipeline (no CUDA, no GPU), so CI reports each kernel's errors at their lines.

A module names the specialisations to check in a module-level ``TILE_LANG_CHECK`` list of
:class:`Specialization`; an autotuned kernel's configs are checked too, and the command line adds
constexprs and pointee dtypes that apply to every kernel having those names.
"""

from __future__ import annotations

import enum
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.autotune import Autotuner, Wrapper
from tile_lang.errors import CompilerBug, KernelError, LaunchError, TileLangError, UsageError, at_line
from tile_lang.kernel import Kernel
from tile_lang.progress import progress
from tile_lang.signature import NO_DEFAULT

CHECK_LIST = "TILE_LANG_CHECK"
"""The module-level name of a module's ``Sequence[Specialization]``."""


@dataclass(frozen=True)
class Specialization:
    """One compile of a kernel for ``tile-lang check``: constexpr values and generic pointers'
    pointee dtypes by name (``{"BLOCK": 128, "x_ptr": tl.f16}``, as ``kernel.inspect`` takes them),
    and the launch options the compiler reads."""

    kernel: Kernel[Any] | Wrapper[Any]
    values: Mapping[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    arch: str = "80"

    def describe(self) -> str:
        values = [f"{name}={_show(value)}" for name, value in self.values.items()]
        return ", ".join([*values, f"num_warps={self.num_warps}", f"num_stages={self.num_stages}", f"arch={self.arch}"])


def _show(value: Any) -> str:
    """A value as the command line spells it: ``f16`` for a dtype, ``128`` for an int."""
    try:
        return dtypes.dtype_of(value).name
    except TypeError:
        return repr(value)


class Outcome(enum.Enum):
    CLEAN = "clean"
    ERROR = "error"
    NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class Report:
    """What checking one specialisation (or importing one module) found; ``message`` starts at
    the faulty ``file:line``."""

    outcome: Outcome
    message: str = ""
    kernel: str = ""
    specialization: Specialization | None = None


class TargetNotFound(UsageError):
    """The module, package or file named on the command line does not exist (a usage error)."""


def check(target: str, values: Mapping[str, Any] | None = None, num_warps: int = 4, num_stages: int = 3,
          arch: str = "80") -> list[Report]:
    """Import ``target`` (a ``.py`` file, a package directory or a dotted module name; a package's
    modules are walked) and check every kernel it defines. ``values`` and the options are the
    command line's: each value applies to the kernels that have that name."""
    values = dict(values or {})
    reports: list[Report] = []
    modules = list(_import_all(target, reports))
    declared = _declared(modules, reports)
    kernels = [found for module in modules for found in _kernels_of(module)]
    for found in progress(kernels, "tile-lang check", lambda found: _kernel(found).name):
        kernel = _kernel(found)
        if kernel.unannotated:
            reports.append(_unannotated(kernel))
            continue
        from_line = Specialization(kernel, _for_kernel(kernel, values), num_warps, num_stages, arch)
        bases = [*declared.get(id(kernel), []), *_configs(found)]
        reports += [_check_one(spec) for spec in _specializations(bases, from_line)]
        if not bases and not _resolves(from_line):
            reports.append(_not_checked(from_line))
    return reports


def _not_checked(spec: Specialization) -> Report:
    """A kernel with a constexpr that nothing gives a value: said, not skipped silently."""
    kernel = _kernel(spec.kernel)
    needs = [p.name for p in kernel.constexpr_params if p.default is NO_DEFAULT and p.name not in spec.values]
    return Report(Outcome.NOT_CHECKED, f"{kernel.filename}:{kernel.lineno}: kernel {kernel.name} not checked: needs "
                  f"{', '.join(needs)} (list a Specialization in {CHECK_LIST} or pass --constexpr {needs[0]}=...)",
                  kernel.name)


def _unannotated(kernel: Kernel[Any]) -> Report:
    """A kernel typed only by its launches' arguments: said, not skipped silently."""
    names = ", ".join(p.name for _, p in kernel.unannotated)
    return Report(Outcome.NOT_CHECKED, f"{kernel.filename}:{kernel.lineno}: kernel {kernel.name} not checked: {names} "
                  "have no annotation (a launch types them from its arguments); annotate them (Pointer[D], int, "
                  "float, bool or constexpr) to check it without a launch, or test it by launching it", kernel.name)


def _kernel(found: Kernel[Any] | Wrapper[Any]) -> Kernel[Any]:
    return found.kernel if isinstance(found, Wrapper) else found


def _specializations(bases: Sequence[Specialization], from_line: Specialization) -> list[Specialization]:
    """The declared ones and an autotuner's configs, the command line filling the names they leave
    out; and the command line's own when it resolves every constexpr. Duplicates once."""
    specs = [replace(s, values={**from_line.values, **s.values}) for s in bases]
    if _resolves(from_line):
        specs.append(from_line)
    unique: dict[str, Specialization] = {}
    for spec in specs:
        unique.setdefault(repr(sorted(spec.values.items(), key=lambda kv: kv[0])) + spec.describe(), spec)
    return list(unique.values())


def _configs(found: Kernel[Any] | Wrapper[Any]) -> Iterator[Specialization]:
    """Each config of every ``autotune`` around the kernel, as a specialisation."""
    while isinstance(found, Wrapper):
        if isinstance(found, Autotuner):
            for config in found.configs:
                yield Specialization(found.kernel, dict(config.kwargs), config.num_warps, config.num_stages)
        found = found.inner


def _for_kernel(kernel: Kernel[Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The command line's values that name a constexpr of ``kernel``, or a generic pointer parameter
    whose pattern the dtype fits (``--dtype x_ptr=f16`` passes over a kernel whose x_ptr is f32)."""
    names = {p.name for p in kernel.constexpr_params}
    chosen = {name: value for name, value in values.items() if name in names}
    for name, value in values.items():
        try:
            if name not in names and kernel.split_pointees({name: value})[0]:
                chosen[name] = value
        except LaunchError:  # a pointer whose pattern the dtype does not fit
            pass
    return chosen


def _resolves(spec: Specialization) -> bool:
    """Whether every constexpr of the kernel has a value or a default."""
    return all(p.name in spec.values or p.default is not NO_DEFAULT for p in _kernel(spec.kernel).constexpr_params)


def _check_one(spec: Specialization) -> Report:
    """Build the IR of one specialisation and run the pass pipeline: every check the compiler makes."""
    kernel = _kernel(spec.kernel)
    try:
        kernel.inspect(spec.num_warps, True, spec.arch, spec.num_stages, **spec.values)
    except LaunchError as exc:  # the specialisation does not fit the kernel: at its definition
        message = at_line(str(exc).removeprefix(f"kernel {kernel.name}: "), kernel.filename, kernel.lineno,
                          kernel=kernel.name)
        return Report(Outcome.ERROR, message, kernel.name, spec)
    except TileLangError as exc:  # a KernelError at the kernel's line, or a compiler bug that says so
        return Report(Outcome.ERROR, str(exc), kernel.name, spec)
    return Report(Outcome.CLEAN, "", kernel.name, spec)


def _kernels_of(module: ModuleType) -> list[Kernel[Any] | Wrapper[Any]]:
    """The kernels ``module`` defines (not those it imports), outermost wrapper first, each once."""
    found: dict[int, Kernel[Any] | Wrapper[Any]] = {}
    for value in vars(module).values():
        if isinstance(value, (Kernel, Wrapper)) and getattr(_kernel(value).fn, "__module__", None) == module.__name__:
            kernel = _kernel(value)
            if id(kernel) not in found or isinstance(value, Wrapper):
                found[id(kernel)] = value
    return list(found.values())


def _declared(modules: Sequence[ModuleType], reports: list[Report]) -> dict[int, list[Specialization]]:
    """Every module's ``TILE_LANG_CHECK`` entries, by kernel; a malformed list is reported."""
    by_kernel: dict[int, list[Specialization]] = {}
    for module in modules:
        listed = getattr(module, CHECK_LIST, ())
        entries = list(listed) if isinstance(listed, (list, tuple)) else [listed]
        for entry in entries:
            if not isinstance(entry, Specialization):
                reports.append(Report(Outcome.ERROR, f"{module.__file__}: {CHECK_LIST} must be a list of "
                                      f"tile_lang.check.Specialization, got {type(entry).__name__} {entry!r}"))
                continue
            by_kernel.setdefault(id(_kernel(entry.kernel)), []).append(entry)
    return by_kernel


def _import_all(target: str, reports: list[Report]) -> Iterator[ModuleType]:
    """The module ``target`` names and, for a package, every module below it; a module that fails
    to import is reported at the failing line and skipped."""
    name = _module_name(target)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise TargetNotFound(f"cannot import {target!r} ({exc})") from None
        reports.append(_import_failure(name, exc))
        return
    except (Exception, SystemExit) as exc:
        reports.append(_import_failure(name, exc))
        return
    yield module
    if hasattr(module, "__path__"):
        def failed(sub: str) -> None:
            exc = sys.exc_info()[1]
            reports.append(_import_failure(sub, exc if isinstance(exc, Exception) else Exception(sub)))
        found = pkgutil.walk_packages(module.__path__, name + ".", onerror=failed)
        for sub in sorted(info.name for info in found if not info.name.endswith(".__main__")):  # a script, not run
            try:
                yield importlib.import_module(sub)
            except (Exception, SystemExit) as exc:  # a module that exits on import is reported, not obeyed
                reports.append(_import_failure(sub, exc))


def _module_name(target: str) -> str:
    """A dotted name for ``target``; a file or package directory is imported from the directory
    above its outermost package (which goes first on ``sys.path``)."""
    path = Path(target)
    if not (target.endswith(".py") or path.is_dir() or path.exists()):
        if "" not in sys.path:
            sys.path.insert(0, "")  # as ``python -m``: modules of the working directory
        return target
    if not path.exists():
        raise TargetNotFound(f"no such file or directory: {target!r}")
    path = path.resolve()
    if path.is_dir() and not (path / "__init__.py").exists():
        raise TargetNotFound(f"{target!r} is a directory without __init__.py, not a package")
    parts = [path.stem if path.is_file() else path.name]
    root = path.parent
    while (root / "__init__.py").exists():
        parts.insert(0, root.name)
        root = root.parent
    sys.path.insert(0, str(root))
    return ".".join(parts)


def _import_failure(name: str, exc: BaseException) -> Report:
    """A module that failed to import, at the line that raised in it (a KernelError's own line)."""
    if isinstance(exc, (KernelError, CompilerBug)):
        return Report(Outcome.ERROR, str(exc))
    if isinstance(exc, ModuleNotFoundError) and exc.name is not None and \
            exc.name.partition(".")[0] != name.partition(".")[0]:  # an optional dependency absent here
        return Report(Outcome.NOT_CHECKED, f"{_raised_at(exc)}{name} not checked: it needs module {exc.name!r}, "
                      "which is not installed")
    if isinstance(exc, SyntaxError):
        return Report(Outcome.ERROR, at_line(f"syntax error: {exc.msg}", exc.filename or name, exc.lineno or 0,
                                             (exc.offset or 1) - 1))
    return Report(Outcome.ERROR, f"{_raised_at(exc)}importing {name} failed: {type(exc).__name__}: {exc}")


def _raised_at(exc: BaseException) -> str:
    """``file:line: `` of the innermost frame in a source file outside tile_lang that raised
    ``exc`` (the user's line that called into tile_lang, as a LaunchError's message names no line)."""
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [f for f in frames if not f.filename.startswith(_LIBRARY)] or frames
    return f"{outside[-1].filename}:{outside[-1].lineno}: " if outside else ""


_HERE = Path(__file__).resolve().parent  # the checkout's tile_lang/ (an editable install links to it)
_LIBRARY = (str(Path(__file__).parent) + os.sep, str(_HERE) + os.sep, str(_HERE.parent / "backends") + os.sep,
            "<")  # and generated code: a dataclass's __init__ is "<string>"
