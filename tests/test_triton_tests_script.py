"""scripts/triton_tests.py's command line and the environment it gives Triton's tests: the NumPy
reference through Triton's interpreter paths on CPU tensors, or the CUDA backend compiling them on
CUDA tensors (that run needs a GPU; here only what it would be handed is checked)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, TracebackType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "triton_tests.py"


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    """The script as a module (in sys.modules while it runs, as its dataclass needs)."""
    spec = importlib.util.spec_from_file_location("triton_tests_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


@pytest.mark.parametrize(("argv", "backend", "device", "interpret"), [
    ([], "numpy", "cpu", "1"),
    (["--backend", "numpy"], "numpy", "cpu", "1"),
    (["--backend", "cupy"], "cupy", "cuda", None),
    # the baseline, Triton's interpreter on CPU tensors: no tile_lang backend named (its pytest plugin,
    # installed with the package, would refuse "triton"), also where the shell named one
    (["--backend", "triton"], None, "cpu", "1"),
])
def test_backend_sets_device_and_interpreter(script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             argv: list[str], backend: str | None, device: str,
                                             interpret: str | None) -> None:
    args = script.parse([str(tmp_path), "test_core.py", "--sample", "3", *argv])
    base = {"TRITON_INTERPRET": "1", "TILE_LANG_BACKEND": "numpy", "PYTHONPATH": "elsewhere", "HOME": "/home/me"}
    env = script.environment(args, tmp_path / "results.json", base)
    assert env.get("TILE_LANG_BACKEND") == backend and env.get("TRITON_INTERPRET") == interpret
    assert env["TILE_LANG_OVERFLOW"] == "wrap" and env["HOME"] == "/home/me"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(SCRIPT.parent), "elsewhere"]
    assert base["TRITON_INTERPRET"] == "1"  # the caller's environment is left as it was
    settings = json.loads(env[script.ENV])
    assert settings["device"] == device and settings["sample"] == 3
    assert settings["helpers"] == str(tmp_path.resolve() / "_internal_testing.py")
    monkeypatch.setenv(script.ENV, env[script.ENV])
    assert script._settings()["device"] == device  # what the plugin's `device` fixture returns


def test_unknown_backend_is_a_usage_error(script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        script.parse([str(tmp_path), "--backend", "gpu"])
    assert "invalid choice: 'gpu' (choose from" in capsys.readouterr().err


def test_compare_counts_the_baselines_passes_and_times(script: ModuleType) -> None:
    """--compare: the share of the baseline's passes that pass here, the time on the cases both
    passed, the cases under 10x faster among those the baseline took over 100 ms, and what was lost."""
    def case(test: str, outcome: str, seconds: float, cause: str = "", message: str = "") -> dict[str, str]:
        return {"test": test, "outcome": outcome, "cause": cause, "type": "KernelError" if cause else "",
                "message": message, "seconds": f"{seconds}"}
    base = [case("a", "passed", 2.0), case("b", "passed", 0.5), case("c", "passed", 0.05),
            case("d", "failed", 1.0, "host error"), case("e", "passed", 1.0), case("gone", "passed", 9.0)]
    here = [case("a", "passed", 0.1), case("b", "passed", 0.2), case("c", "passed", 0.04),
            case("d", "passed", 0.1), case("e", "failed", 0.1, "unsupported", "tl.foo 12 is not supported yet")]
    text = script.compare(here, base, "interp.json")
    assert "Of the 4 cases interp.json passed (and this run selected), 3 passed here (75.0%)." in text
    assert "0.3 s here, 2.5 s there (7.5x)" in text
    assert "1 were less than 10x faster here" in text and "- b: 0.500 s there, 0.200 s here" in text
    assert "- a:" not in text and "- c:" not in text  # 20x faster; under 100 ms on the baseline
    assert "- 1 x unsupported: KernelError: tl.foo N is not supported yet" in text


def test_outcomes_are_read_from_every_process_file_and_a_cut_line_is_dropped(script: ModuleType, tmp_path: Path) -> None:
    """Each process appends one line a finished case; the driver reads all (the last line of a
    test wins) and drops a line the budget's kill cut short, so a stopped run keeps its cases."""
    (tmp_path / "results.gw0.jsonl").write_text(
        json.dumps({"test": "a", "outcome": "failed"}) + "\n" + json.dumps({"test": "a", "outcome": "passed"}) + "\n")
    (tmp_path / "results.gw1.jsonl").write_text(json.dumps({"test": "b", "outcome": "skipped"}) + '\n{"test": "c", "outc')
    assert script._read_outcomes(tmp_path) == {"a": {"test": "a", "outcome": "passed"},
                                               "b": {"test": "b", "outcome": "skipped"}}


def _failure(exc: BaseException) -> tuple[BaseException, TracebackType]:
    """An exception as a failing test hands it over, with its traceback, raised in a file outside
    this repository (as Triton's tests are; inside it, an exception counts as tile_lang's)."""
    try:
        exec(compile("raise exc", "/elsewhere/test_core.py", "exec"), {"exc": exc})
    except BaseException as caught:
        assert caught.__traceback__ is not None
        return caught, caught.__traceback__
    raise AssertionError("the exception was not raised")


def test_cause_sorts_failures_also_where_tile_lang_is_not_installed(script: ModuleType,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline runs in a Python with Triton and no tile_lang: a failure there is sorted (host
    error, wrong value) instead of ending the pytest session with an ImportError."""
    from tile_lang.errors import Unsupported

    assert script.cause(*_failure(Unsupported("tl.foo")), None) == "missing name"
    monkeypatch.setitem(sys.modules, "tile_lang.errors", None)  # `import tile_lang.errors` now fails
    assert script.cause(*_failure(TypeError("not a scalar")), None) == "host error"
    assert script.cause(*_failure(AssertionError("Arrays are not equal")), None) == "wrong value"
    assert script.cause(*_failure(ModuleNotFoundError("triton.foo")), None) == "missing name"


def test_dtype_parameters_get_the_ids_they_have_under_triton(script: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A case parametrized by a dtype is named by the argument and its index, as Triton's dtype
    objects are (``in_dtype0``), not by the marker's ``Float``, so --compare finds it in the baseline."""
    from _pytest.mark.structures import ParameterSet
    from _pytest.python import IdMaker

    import tile_lang as tl

    def ids(argnames: list[str], values: list[tuple[object, ...]]) -> list[object]:
        sets = [ParameterSet.param(*v) for v in values]
        return list(IdMaker(argnames, sets, None, None, None, None).make_unique_parameterset_ids())

    monkeypatch.setattr(IdMaker, "_idval_from_value", IdMaker._idval_from_value)  # undone after the test
    assert ids(["in_dtype"], [(tl.f8e4b15,), (tl.f8e5m2,)]) == ["Float0", "Float1"]
    script._triton_ids()
    assert ids(["in_dtype"], [(tl.f8e4b15,), (tl.f8e5m2,)]) == ["in_dtype0", "in_dtype1"]
    assert ids(["dtype", "n"], [(tl.i8, 2), ("float32", 3)]) == ["dtype0-2", "float32-3"]  # others as before
