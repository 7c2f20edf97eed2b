"""One verdict per kernel across the whole test suite (``pytest --same-verdict=REPORT.json``):
every launch the suite makes on the NumPy reference is also compiled, for the same
specialisation, by the compiler's front end, passes and code generator (no GPU), and the two
verdicts are compared. The reference running a kernel the compiler refuses, or both refusing it
with different messages or lines, is a disagreement; the reference refusing what the compiler
compiles is listed apart, since most such refusals are run-time checks the compiler cannot make
(bounds, races, overflow, device assertions). The report lists each by kernel and test."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from tile_lang.buffer import Buffer
from tile_lang.compiler.spec import ArgSpec, Spec, argument_spec
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
    return argument_spec(value)


def _compiled(kernel: Any, spec: Spec) -> Verdict:
    """The compiler's verdict on a specialisation of ``kernel``."""
    from tile_lang.compiler import compile_ir
    from tile_lang_cupy.codegen import generate

    try:
        generate(compile_ir(kernel, spec))
    except (KernelError, CompilerBug, LaunchError) as exc:
        return Verdict.of(exc)
    except Exception as exc:  # noqa: BLE001 (a crash is a verdict too: reported, never raised into a test)
        return Verdict(f"crash: {type(exc).__name__}", str(exc)[:200])
    return Verdict.of(None)


class Recorder:
    """Wraps the reference's launch to note its verdict on each specialisation; the compiler's
    verdicts come after the session (so compiling never prints into, or allocates inside, a test)."""

    def __init__(self, report: Path) -> None:
        self.report = report
        self.seen: dict[tuple[int, str, Verdict], tuple[Any, Spec, str, Verdict]] = {}
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
        spec = Spec(tuple(_arg_spec(a) for a in launch.args), tuple(sorted(launch.constexprs.items())),
                    launch.options.num_warps, launch.options.num_stages, 80)
        verdict = Verdict.of(error)  # launches of one specialisation may differ here by their values
        key = (id(launch.kernel), spec.key(), verdict)
        if key not in self.seen:
            self.seen[key] = (launch.kernel, spec, self.test, verdict)

    def cases(self) -> list[Case]:
        out = []
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for kernel, spec, test, verdict in self.seen.values():
                code = kernel.fn.__code__
                out.append(Case(kernel.name, f"{code.co_filename}:{code.co_firstlineno}", spec.key(), test, verdict,
                                _compiled(kernel, spec)))
        return out

    def write(self) -> dict[str, int]:
        cases = self.cases()
        counts: dict[str, int] = {}
        for case in cases:
            counts[case.kind] = counts.get(case.kind, 0) + 1
        listed = [{**asdict(c), "kind": c.kind} for c in cases if c.kind != "agree"]
        self.report.write_text(json.dumps({"counts": counts, "cases": listed}, indent=1))
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
