"""The typing gate: correct kernels check cleanly under ``mypy --strict``, and each kernel
mistake is reported with the exact error code on the exact line.

The cases live in tests/typing_cases/ (excluded from the repo-wide mypy run): good_*.py must
produce no error at all, and bad_kernels.py must produce exactly the errors its
``# E: <code> [message fragment]`` comments announce. All of them go through one in-process
``mypy.api.run`` with the repo's configuration and a fresh cache, so the result does not
depend on the machine's mypy cache.
"""

from __future__ import annotations

import collections
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import tile_lang as tl
from tile_lang.signature import ParamKind

if sys.version_info >= (3, 11):
    import tomllib

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "typing_cases"
GOOD = (CASES / "good_kernels.py", CASES / "good_host.py")
BAD = CASES / "bad_kernels.py"

_REPORT_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")
_MARKER = re.compile(r"#\s*E:\s*(?P<code>[a-z][a-z-]*)(?P<fragment>.*?)(?=\s*#\s*E:|$)")


@dataclass(frozen=True)
class Diagnostic:
    """One mypy error."""

    path: Path
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: [{self.code}] {self.message}"


@dataclass(frozen=True)
class Expected:
    """One ``# E:`` marker: the line, the error code and an optional message fragment."""

    line: int
    code: str
    fragment: str
    source: str

    def __str__(self) -> str:
        return f"{BAD.name}:{self.line}: [{self.code}] {self.fragment!r} at `{self.source}`"


def _markers(path: Path) -> list[Expected]:
    """Parse ``# E: code [fragment]`` markers; a line may hold several."""
    found = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        source = text.partition("#")[0].strip()
        for marker in _MARKER.finditer(text):
            found.append(Expected(number, marker["code"], marker["fragment"].strip(), source))
    return found


EXPECTED = _markers(BAD)


@pytest.fixture(scope="module")
def diagnostics(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """Run mypy once over every case file; the errors it reports."""
    api = pytest.importorskip("mypy.api")
    cache = tmp_path_factory.mktemp("mypy-cache")
    args = [
        "--config-file", str(REPO / "pyproject.toml"),
        "--strict",
        "--cache-dir", str(cache),
        "--show-error-codes", "--no-pretty", "--no-color-output", "--no-error-summary", "--show-absolute-path",
        *(str(p) for p in GOOD), str(BAD),
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # mypy_path and the tile_lang package resolve against the repo root
        stdout, stderr, status = api.run(args)
    assert status in (0, 1) and not stderr, f"mypy failed to run (status {status}):\n{stderr}\n{stdout}"
    found = []
    for text in stdout.splitlines():
        match = _REPORT_LINE.match(text)
        assert match is not None, f"unparsed mypy output line: {text!r}"
        if match["severity"] == "error":
            found.append(Diagnostic(Path(match["path"]).resolve(), int(match["line"]), match["code"] or "",
                                    match["message"]))
    return found


def test_good_cases_check_cleanly(diagnostics: list[Diagnostic]) -> None:
    """No error in the good cases (errors inside tile_lang itself are the repo-wide gate's)."""
    good = {p.resolve() for p in GOOD}
    stray = [d for d in diagnostics if d.path in good]
    assert not stray, "correct code rejected:\n" + "\n".join(map(str, stray))


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: f"L{e.line}-{e.code}")
def test_bad_case_is_reported(diagnostics: list[Diagnostic], expected: Expected) -> None:
    """The marked line has an error with the marked code (and message fragment)."""
    here = [d for d in diagnostics if d.path == BAD.resolve() and d.line == expected.line]
    hits = [d for d in here if d.code == expected.code and expected.fragment in d.message]
    reported = "\n".join(str(d) for d in here) or "nothing"
    assert hits, f"expected {expected}\nmypy reported on that line:\n{reported}"


def test_bad_cases_report_nothing_else(diagnostics: list[Diagnostic]) -> None:
    """Exactly the marked (line, code) pairs: no extra error, no duplicate."""
    actual = collections.Counter((d.line, d.code) for d in diagnostics if d.path == BAD.resolve())
    wanted = collections.Counter((e.line, e.code) for e in EXPECTED)
    extra = actual - wanted
    missing = wanted - actual
    detail = [str(d) for d in diagnostics if d.path == BAD.resolve() and (d.line, d.code) in extra]
    assert not extra and not missing, f"unexpected: {detail}\nmissing: {sorted(missing)}"


def test_every_mistake_class_has_cases() -> None:
    """The bad file covers each mistake class of the issue, (a) to (f)."""
    text = BAD.read_text()
    for label in ("(a) dtype", "(b) non-bool mask", "(c) rank", "(d) combine_fn", "(e) op not defined", "(f) launch"):
        assert label in text
    assert len(EXPECTED) >= 20


def test_repo_gate_excludes_the_cases() -> None:
    """The repo-wide ``mypy`` run must not see the deliberately bad kernels."""
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "tests" in config["files"]
    assert any(re.search(pattern, "tests/typing_cases/bad_kernels.py") for pattern in config["exclude"])


# ---------------------------------------------------------------- run-time side of the surface


@pytest.fixture
def case_modules(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """Import the good case modules (decorators run; kernel bodies do not)."""
    monkeypatch.syspath_prepend(str(REPO))
    names = ("tests.typing_cases.good_kernels", "tests.typing_cases.good_host")
    try:
        yield {name.rpartition(".")[2]: importlib.import_module(name) for name in names}
    finally:
        for name in names:
            sys.modules.pop(name, None)


def test_good_cases_import(case_modules: dict[str, object]) -> None:
    """@tl.kernel and @tl.func accept every annotation the good cases use."""
    kernels = case_modules["good_kernels"]
    matmul = getattr(kernels, "matmul_kernel")
    assert isinstance(matmul, tl.Kernel)
    kinds = {p.name: (p.kind, p.annotation) for p in matmul.params}
    assert kinds["a_ptr"] == (ParamKind.POINTER, tl.f16)
    assert kinds["ALPHA"] == (ParamKind.CONSTEXPR, float)
    assert kinds["BLOCK_K"] == (ParamKind.CONSTEXPR, int)
    assert kinds["M"] == (ParamKind.SCALAR, int)
    generic = getattr(kernels, "softplus_kernel")
    assert [p.kind for p in generic.params][:2] == [ParamKind.POINTER, ParamKind.POINTER]
    assert isinstance(getattr(kernels, "add_combine"), tl.Func)


def test_func_capturing_a_local_is_rejected_at_decoration() -> None:
    """A closure cannot be a device function: mypy cannot see it, so @tl.func refuses it."""
    scale = 2.0

    def scaled_add(a: tl.Tensor0[tl.f32], b: tl.Tensor0[tl.f32]) -> tl.Tensor0[tl.f32]:
        return (a + b) * scale

    with pytest.raises(TypeError, match=r"captures local variable\(s\) scale"):
        tl.func(scaled_add)


def test_func_without_captures_is_accepted() -> None:
    """Module-level names and arguments are fine; only closures are refused."""

    def add(a: tl.Tensor0[tl.f32], b: tl.Tensor0[tl.f32]) -> tl.Tensor0[tl.f32]:
        return a + b

    assert isinstance(tl.func(add), tl.Func)


def test_accepted_spellings_run_on_the_reference(case_modules: dict[str, object]) -> None:
    """The newly accepted spellings (x.dtype, pid.to, .T, ptrs - 1, 4 ^ t, loaded seed) run."""
    import numpy as np

    kernels = case_modules["good_kernels"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100).astype(np.float16)
    out = tl.empty(100, tl.f16)
    getattr(kernels, "generic_f32_compute")[(4,)](tl.to_device(x, tl.f16), out, 100, BLOCK=32)
    np.testing.assert_allclose(out.numpy(), (x.astype(np.float32) * 2).astype(np.float16))
    t = rng.standard_normal((8, 8)).astype(np.float32)
    tout = tl.empty((8, 8), tl.f32)
    getattr(kernels, "transpose_tile")[(1,)](tl.to_device(t, tl.f32), tout, BLOCK=8)
    np.testing.assert_array_equal(tout.numpy(), t.T)
    ints = rng.integers(-50, 50, 17).astype(np.int32)
    iout = tl.empty(16, tl.i32)
    seed = tl.to_device(np.array([7], dtype=np.int32), tl.i32)
    getattr(kernels, "reflected_and_pointer_sub")[(1,)](tl.to_device(ints, tl.i32), iout, seed, BLOCK=16)
    a, last = ints[:16], ints[15::-1]
    np.testing.assert_array_equal(iout.numpy(), (4 ^ a) + (1 & a) + (1 | last) + a + 1)
