"""``tile-lang check``: every kernel of a module or package compiled through the front end and
passes without a GPU; each error at its line with the kernel's name, exit status 1 if any."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tile_lang.check import Outcome, check
from tile_lang.cli import main

CASES = Path(__file__).resolve().parent / "check_cases"
FAULTY = CASES / "faulty.py"
_CHECK = re.compile(r"#\s*CHECK:\s*(?P<fragment>.+)$")


def _expected(path: Path) -> list[tuple[int, str]]:
    """(line, message fragment) of each ``# CHECK:`` comment."""
    return [(number, match["fragment"].strip()) for number, text in enumerate(path.read_text().splitlines(), 1)
            if (match := _CHECK.search(text))]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["check", *argv])
    return status, capsys.readouterr().out


def test_a_clean_module_exits_0_having_compiled_each_declared_specialisation(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(capsys, "tests.check_cases.clean", "-v")
    assert status == 0, out
    assert "checked as: BLOCK=128, num_warps=4" in out
    assert "checked as: BLOCK=256, x_ptr=f16, out_ptr=f16, num_warps=8" in out
    assert "kernel copy_with_default: clean" in out  # its constexpr has a default
    assert "3 kernel(s), 3 check(s): 0 error(s), 1 kernel(s) not checked" in out


def test_a_kernel_without_values_is_reported_as_not_checked(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(capsys, "tests.check_cases.clean")
    line = next(n for n, text in enumerate((CASES / "clean.py").read_text().splitlines(), 1)
                if "def needs_block" in text) - 1  # the decorator's line, where the kernel is defined
    assert status == 0 and f"clean.py:{line}: kernel needs_block not checked: needs BLOCK" in out
    assert _run(capsys, "tests.check_cases.clean", "--fail-unchecked")[0] == 1
    status, out = _run(capsys, "tests.check_cases.clean", "--constexpr", "BLOCK=32")
    assert status == 0 and "0 kernel(s) not checked" in out and "5 check(s)" in out  # scale at BLOCK=32 too


def test_every_error_of_a_faulty_module_is_reported_at_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(capsys, str(FAULTY))
    assert status == 1
    expected = _expected(FAULTY)
    assert len(expected) == 5
    for line, fragment in expected:
        at = [block for block in out.split("\n/") if f"faulty.py:{line}:" in block]
        assert at and fragment in at[0], f"line {line}: {fragment!r} not reported in\n{out}"
    assert "in kernel odd_block" in out and "in kernel builtin_abs" in out and "in kernel runtime_arange" in out
    assert "checked as: BLOCK=100" in out and "checked as: BLOCK=64" not in out  # the clean one passes silently
    assert "5 error(s)" in out


def test_reports_carry_the_kernel_and_specialisation() -> None:
    reports = check("tests.check_cases.faulty")
    errors = [r for r in reports if r.outcome is Outcome.ERROR]
    assert sorted(r.kernel for r in errors) == ["block_as_condition", "builtin_abs", "odd_block", "runtime_arange",
                                                "wrong_declaration"]
    odd = [r for r in reports if r.kernel == "odd_block"]
    assert [(r.outcome, r.specialization and r.specialization.values["BLOCK"]) for r in odd] == [
        (Outcome.CLEAN, 64), (Outcome.ERROR, 100)]


@pytest.mark.parametrize("target", ["tests.check_cases", "tests/check_cases"])
def test_a_package_is_walked(capsys: pytest.CaptureFixture[str], target: str) -> None:
    status, out = _run(capsys, target, "-v")
    assert status == 1  # faulty.py is in it
    for kernel in ("scale", "copy_with_default", "fill_one", "odd_block"):
        assert f"kernel {kernel}" in out, kernel
    assert "kernel fill_one: clean" in out  # in nested/inner.py, one package down


def test_command_line_values_apply_to_the_kernels_having_those_names(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(capsys, "tests.check_cases.faulty", "--constexpr", "BLOCK=256", "-v")
    assert status == 1 and "kernel odd_block: clean\n    checked as: BLOCK=256" in out
    status, out = _run(capsys, "tests.check_cases.clean", "--dtype", "x_ptr=bf16", "--dtype", "out_ptr=bf16",
                       "--constexpr", "BLOCK=16", "-v")
    assert status == 0 and "checked as: BLOCK=16, x_ptr=bf16, out_ptr=bf16" in out  # scale is generic
    assert "kernel copy_with_default: clean\n    checked as: BLOCK=16, num_warps" in out  # its x_ptr is f32


@pytest.mark.parametrize("argv", [["no_such.module"], ["no_such_file.py"], ["tests/check_cases/faulty.py", "--dtype",
                                                                           "x_ptr"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = main(["check", *argv])
    except SystemExit as exc:  # argparse rejects the option itself
        status = int(str(exc.code))
    assert status == 2
    assert "tile-lang" in capsys.readouterr().err


def test_the_command_prints_no_traceback() -> None:
    run = subprocess.run([sys.executable, "-m", "tile_lang.cli", "check", str(FAULTY)], capture_output=True,
                         text=True, check=False, cwd=CASES.parents[1])
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert "faulty.py:19:12: in kernel odd_block" in run.stdout
