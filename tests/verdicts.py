"""One verdict per kernel across the whole test suite (``pytest --same-verdict=REPORT.json``):
every launch the suite makes on the NumPy reference is also compiled, for the same
specialisation, by the compiler's front end, passes and code generator (no GPU), and the two
verdicts are compared. The reference running a kernel the compiler refuses, or both refusing it
with different messages or lines, is a disagreement; the reference refusing what the compiler
compiles is listed apart, since most such refusals are run-time checks the compiler cannot make
(bounds, races, overflow, device assertions). The report lists each by kernel and test."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from tile_lang import dtypes
from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, int_spec
from tile_lang.errors import CompilerBug, KernelError, LaunchError
from tile_lang.launch import Launch

OPTION = "--same-verdict"


@dataclass(frozen=True)
class Verdict:
    """A backend's verdict on one launch: "runs", or the error's class, message and line."""

    outcome: str
    message: str = ""
    lineno: int = 0

    @staticmethod
    def of(error: BaseException | None) -> Verdict:
        if error is None:
            return Verdict("runs")
        if isinstance(error, KernelError):
            return Verdict("KernelError", error.message, error.lineno)
        return Verdict(type(error).__name__, str(error).splitlines()[0] if str(error) else "")


@dataclass(frozen=True)
class Case:
    kernel: str
    where: str  # the kernel's file and line
    spec: str
    test: str
    reference: Verdict
    compiler: Verdict

    @property
    def kind(self) -> str:
        ref, comp = self.reference, self.compiler
        if comp.outcome == "CompilerBug":
            return "compiler bug"
        if ref == comp or ref.outcome == comp.outcome == "runs":
            return "agree"
        if ref.outcome == "runs":
            return "only the compiler refuses"
        if comp.outcome == "runs":
            return "only the reference refuses"
        return "both refuse, differently"


def _arg_spec(value: Any) -> ArgSpec:
    """What the CUDA backend specialises a launch argument as (its alignment taken as 16 bytes)."""
    if isinstance(value, Buffer):
        return ArgSpec(value.type.pointer_to(), True)
    if isinstance(value, bool):
        return ArgSpec(dtypes.BOOL)
    if isinstance(value, int):
        return int_spec(value)
    return ArgSpec(dtypes.F32)


def _compiled(launch: Launch) -> tuple[str, Verdict] | None:
    """The compiler's verdict on the launch's specialisation (None when it has no source)."""
    from tile_lang.compiler import compile_ir
    from tile_lang_cupy.codegen import generate

    spec = Spec(tuple(_arg_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                launch.options.num_warps, launch.options.num_stages, 80)
    try:
        generate(compile_ir(launch.kernel, spec))
    except (KernelError, CompilerBug, LaunchError) as exc:
        return spec.key(), Verdict.of(exc)
    except Exception as exc:  # noqa: BLE001 (a crash is a verdict too: reported, never raised into the test)
        return spec.key(), Verdict(f"crash: {type(exc).__name__}", str(exc)[:200])
    return spec.key(), Verdict.of(None)


class Recorder:
    """Wraps the reference's launch: its verdict, then the compiler's, once a specialisation."""

    def __init__(self, report: Path) -> None:
        self.report = report
        self.cases: dict[tuple[int, str], Case] = {}
        self.test = ""

    def install(self) -> None:
        from tile_lang_numpy import NumpyBackend

        original = NumpyBackend.launch
        recorder = self

        def launch(backend: Any, launch: Launch) -> None:
            error: BaseException | None = None
            try:
                original(backend, launch)
            except BaseException as exc:
                error = exc
                raise
            finally:
                recorder.record(launch, error)

        setattr(NumpyBackend, "launch", launch)

    def record(self, launch: Launch, error: BaseException | None) -> None:
        if error is not None and not isinstance(error, KernelError):
            return  # a launch or host error: not the kernel's verdict
        kernel = launch.kernel
        try:
            compiled = _compiled(launch)
        except Exception:  # noqa: BLE001
            return
        if compiled is None:
            return
        spec, verdict = compiled
        key = (id(kernel.fn), spec)
        if key not in self.cases:
            code = kernel.fn.__code__
            self.cases[key] = Case(kernel.name, f"{code.co_filename}:{code.co_firstlineno}", spec, self.test,
                                   Verdict.of(error), verdict)

    def write(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for case in self.cases.values():
            counts[case.kind] = counts.get(case.kind, 0) + 1
        cases = [{**asdict(c), "kind": c.kind} for c in self.cases.values() if c.kind != "agree"]
        self.report.write_text(json.dumps({"counts": counts, "cases": cases}, indent=1))
        return counts


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, metavar="REPORT", default=None,
                     help="compile every reference launch too and write where the verdicts differ to REPORT")


def pytest_configure(config: pytest.Config) -> None:
    report = config.getoption(OPTION)
    if report:
        recorder = Recorder(Path(report))
        recorder.install()
        config.pluginmanager.register(_Hooks(recorder), "tile_lang_verdicts")


class _Hooks:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        self.recorder.test = item.nodeid
        yield

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        counts = self.recorder.write()
        terminalreporter.write_line(f"same verdict: {counts} (report: {self.recorder.report})")
