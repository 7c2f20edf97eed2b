"""The typing gate: correct kernels check cleanly under ``mypy --strict``, and each kernel
mistake is reported with the exact error code on the exact line.

The cases live in tests/typing_cases/ (excluded from the repo-wide mypy run): good_*.py must
produce no error except on lines marked ``# GAP: <code>`` (a correct spelling mypy rejects, a
known gap), and each bad_*.py must produce exactly the errors its
``# E: <code> [message fragment]`` comments announce and nothing on its ``# MISS:`` lines (a
mistake mypy does not catch yet). Both kinds of gap are counted against issue 8's targets. All of them go through one in-process
``mypy.api.run`` with the repo's configuration and a fresh cache, so the result does not
depend on the machine's mypy cache.
"""

from __future__ import annotations

import ast
import collections
import math
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang.signature import CONSTANT, ParamKind

if sys.version_info >= (3, 11):
    import tomllib

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "typing_cases"
GOOD = (CASES / "good_kernels.py", CASES / "good_host.py", CASES / "good_tutorials.py", CASES / "good_liger.py",
        CASES / "good_ported.py")
BAD = CASES / "bad_kernels.py"
BADS = (BAD, CASES / "bad_redefinition.py")  # the second under allow-redefinition, as ported kernels are checked
TORCH = CASES / "torch_launches.py"  # checked by its own run where torch is installed

_REPORT_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")
_MARKER = re.compile(r"#\s*E:\s*(?P<code>[a-z][a-z-]*)(?P<fragment>.*?)(?=\s*#\s*E:|$)")
_GAP = re.compile(r"#\s*GAP:\s*(?P<code>[a-z][a-z-]*)")
_MISS = re.compile(r"#\s*MISS:\s*[a-z`]")


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

    path: Path
    line: int
    code: str
    fragment: str
    source: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: [{self.code}] {self.fragment!r} at `{self.source}`"


def _markers(path: Path) -> list[Expected]:
    """Parse ``# E: code [fragment]`` markers; a line may hold several."""
    found = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        source = text.partition("#")[0].strip()
        for marker in _MARKER.finditer(text):
            found.append(Expected(path.resolve(), number, marker["code"], marker["fragment"].strip(), source))
    return found


EXPECTED = [expected for path in BADS for expected in _markers(path)]


def _lines_marked(path: Path, marker: re.Pattern[str]) -> set[tuple[int, str]]:
    """(line number, code or whole match) of each occurrence of ``marker``; a line may hold several."""
    return {(number, match.groupdict().get("code") or match[0])
            for number, text in enumerate(path.read_text().splitlines(), start=1) for match in marker.finditer(text)}


GAPS = {(path.resolve(), line, code) for path in GOOD for line, code in _lines_marked(path, _GAP)}
MISSES = sorted({(path.resolve(), line) for path in BADS for line, _ in _lines_marked(path, _MISS)})


def _run_mypy(paths: tuple[Path, ...], cache: Path) -> list[Diagnostic]:
    """Run mypy once over ``paths`` with the repo's configuration; the errors it reports."""
    api = pytest.importorskip("mypy.api")
    args = [
        "--config-file", str(REPO / "pyproject.toml"),
        "--strict",
        "--cache-dir", str(cache),
        "--show-error-codes", "--no-pretty", "--no-color-output", "--no-error-summary", "--show-absolute-path",
        *(str(p) for p in paths),
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


@pytest.fixture(scope="module")
def diagnostics(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """Run mypy once over every case file; the errors it reports."""
    return _run_mypy((*GOOD, *BADS), tmp_path_factory.mktemp("mypy-cache"))


def test_good_cases_check_cleanly(diagnostics: list[Diagnostic]) -> None:
    """No error in the good cases but the marked gaps (errors inside tile_lang are the repo-wide gate's)."""
    good = {p.resolve() for p in GOOD}
    stray = [d for d in diagnostics if d.path in good and (d.path, d.line, d.code) not in GAPS]
    assert not stray, "correct code rejected:\n" + "\n".join(map(str, stray))


def test_known_gaps_still_rejected(diagnostics: list[Diagnostic]) -> None:
    """Each ``# GAP:`` line is still rejected with its code; once accepted, drop the marker."""
    reported = {(d.path, d.line, d.code) for d in diagnostics}
    fixed = [f"{path.name}:{line} [{code}]" for path, line, code in sorted(GAPS - reported)]
    assert not fixed, f"now accepted, remove the GAP marker: {fixed}"


def test_missed_mistakes_stay_silent(diagnostics: list[Diagnostic]) -> None:
    """Each ``# MISS:`` line is still uncaught; once mypy reports it, turn the marker into ``# E:``."""
    caught = [str(d) for d in diagnostics if (d.path, d.line) in MISSES]
    assert not caught, f"now caught, mark these lines # E: {caught}"


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: f"{e.path.stem}-L{e.line}-{e.code}")
def test_bad_case_is_reported(diagnostics: list[Diagnostic], expected: Expected) -> None:
    """The marked line has an error with the marked code (and message fragment)."""
    here = [d for d in diagnostics if d.path == expected.path and d.line == expected.line]
    hits = [d for d in here if d.code == expected.code and expected.fragment in d.message]
    reported = "\n".join(str(d) for d in here) or "nothing"
    assert hits, f"expected {expected}\nmypy reported on that line:\n{reported}"


def test_bad_cases_report_nothing_else(diagnostics: list[Diagnostic]) -> None:
    """Exactly the marked (line, code) pairs: no extra error, no duplicate."""
    bad = {path.resolve() for path in BADS}
    actual = collections.Counter((d.path, d.line, d.code) for d in diagnostics if d.path in bad)
    wanted = collections.Counter((e.path, e.line, e.code) for e in EXPECTED)
    extra = actual - wanted
    missing = wanted - actual
    detail = [str(d) for d in diagnostics if (d.path, d.line, d.code) in extra]
    assert not extra and not missing, f"unexpected: {detail}\nmissing: {sorted(missing)}"


def test_torch_tensor_launches(tmp_path: Path) -> None:
    """With torch installed, a launch takes a torch tensor for any pointer parameter
    (torch_launches.py is clean but for its ``# E:`` lines, which are reported exactly: a Buffer of
    the wrong dtype still errors next to tensors); the dtype is checked when the launch runs."""
    torch = pytest.importorskip("torch", reason="torch_launches.py is checked only where torch is installed")
    found = _run_mypy((TORCH,), tmp_path)
    actual = collections.Counter((d.line, d.code) for d in found)
    markers = _markers(TORCH)
    assert actual == collections.Counter((e.line, e.code) for e in markers), "\n".join(map(str, found))
    for expected in markers:
        assert any(d.line == expected.line and expected.fragment in d.message for d in found), expected

    sys.path.insert(0, str(REPO))
    try:
        cases = importlib.import_module("tests.typing_cases.torch_launches")
    finally:
        sys.path.remove(str(REPO))
        sys.modules.pop("tests.typing_cases.torch_launches", None)
    gen = torch.Generator().manual_seed(4)
    x64, y64 = torch.randn(300, generator=gen, dtype=torch.float64), torch.randn(300, generator=gen, dtype=torch.float64)
    out = torch.full((300,), float("nan"))
    doubled = _nan(300)
    with tl.backend("numpy"):
        cases.launch_on_tensors(x64.float(), y64.float(), out, doubled)
        np.testing.assert_allclose(out.numpy(), (2 * x64 + y64).numpy(), rtol=1e-5, atol=1e-6)  # written in place
        np.testing.assert_allclose(doubled.numpy(), 2 * (2 * x64 + y64).numpy(), rtol=1e-5, atol=1e-6)
        with pytest.raises(tl.LaunchError, match=r"kernel axpy, parameter x_ptr .*got a buffer of Float\[W64\]"):
            cases.axpy[(5,)](x64, y64.float(), out, 300, BLOCK=64)


def test_every_mistake_class_has_cases() -> None:
    """The bad file covers each mistake class of the issue, (a) to (f)."""
    text = BAD.read_text()
    for label in ("(a) dtype", "(b) non-bool mask", "(c) rank", "(d) combine_fn", "(e) op not defined", "(f) launch"):
        assert label in text
    assert len(EXPECTED) >= 20


def _kernel_spans(path: Path) -> list[tuple[int, int]]:
    """(first line, last line) of each ``@tl.kernel`` function in a case file."""
    tree = ast.parse(path.read_text())
    return [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and any(ast.unparse(d) == "tl.kernel" for d in node.decorator_list)]


def corpus_counts() -> dict[str, int]:
    """Issue 8's corpus measures: wrong lines (caught at that line or missed), correct kernels (clean or not)."""
    spans = [(path.resolve(), span) for path in GOOD for span in _kernel_spans(path)]
    rejected = {(path, span) for path, span in spans for gap_path, line, _ in GAPS if gap_path == path
                and span[0] <= line <= span[1]}
    caught = {(e.path, e.line) for e in EXPECTED}
    return {"wrong": len(caught) + len(MISSES), "wrong_caught": len(caught),
            "correct": len(spans), "correct_clean": len(spans) - len(rejected)}


def test_corpus_meets_issue_targets() -> None:
    """At least 50 wrong and 30 correct cases; at least 90% of each handled as written."""
    counts = corpus_counts()
    assert counts["wrong"] >= 50 and counts["correct"] >= 30, counts
    assert counts["wrong_caught"] >= 0.9 * counts["wrong"], counts
    assert counts["correct_clean"] >= 0.9 * counts["correct"], counts


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
    names = ("tests.typing_cases.good_kernels", "tests.typing_cases.good_host", "tests.typing_cases.good_tutorials",
             "tests.typing_cases.good_ported")
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
    assert kinds["BLOCK_K"] == (ParamKind.CONSTEXPR, CONSTANT)  # a bare constexpr: an int, bool, float or str
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


@pytest.mark.parametrize("backend", ["numpy", "emu"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_optional_pointer_takes_none(case_modules: dict[str, object], backend: str, with_bias: bool) -> None:
    """``bias_ptr: Pointer[f32] | None`` takes a buffer or None at a launch on both backends (None
    folds the ``is not None`` branch away), and ``mask.to(tl.float32)`` counts the lanes kept."""
    from tests.compiler.emulator import NAME, EmuBackend

    emulator = EmuBackend()
    if backend == "emu":
        if emulator.unavailable_reason() is not None:
            pytest.skip(str(emulator.unavailable_reason()))
        tl.registry.register(emulator)
    kernel = getattr(case_modules["good_kernels"], "masked_sum_with_bias")
    rng = np.random.default_rng(2026)
    n = 50
    x, bias = rng.standard_normal(n), rng.standard_normal(n)
    with tl.backend(NAME if backend == "emu" else backend):
        out = _nan(64)
        kernel[(1,)](tl.to_device(x.astype(np.float32), tl.f32),
                     tl.to_device(bias.astype(np.float32), tl.f32) if with_bias else None, out, n, BLOCK=64)
    want = x + bias if with_bias else x
    np.testing.assert_allclose(out.numpy()[:n], want + n, rtol=1e-5)
    assert np.isnan(out.numpy()[n:]).all()


# ---------------------------------------------------------------- the spellings found porting others' kernels run


def test_ported_spellings_run(case_modules: dict[str, object], backend: str) -> None:
    """Each class good_ported.py accepts runs on the reference and the emulator and matches float64
    NumPy: dtype constructors, a float joined with a block, constexpr dtypes, mixed int widths,
    tl.cast of Python ints, x.shape and rank-0 zeros, atomics generic over a constrained width, local
    constexprs, a dtype for a helper's constexpr, a loaded extent, a bool block meeting an int in a where,
    widening int stores and wheres, scalar arithmetic converted with .to,
    offsets plus a pointer, tl.minimum of two ints, a combine function generic over the width, a constexpr out_dtype,
    cache hints from constexprs, a constexpr defaulting to a dtype."""
    cases = case_modules["good_ported"]
    rng = np.random.default_rng(17)
    x = rng.standard_normal(100).astype(np.float32)
    x64 = x.astype(np.float64)
    tile = rng.random((8, 8)).astype(np.float32)
    with tl.backend(backend):
        dx, out = tl.to_device(x, tl.f32), _nan(2)
        getattr(cases, "scalar_from_dtype")[(1,)](dx, out, 100, BLOCK=32)
        np.testing.assert_allclose(out.numpy()[0], x64.sum() + x64.max(), rtol=1e-5)
        out = _nan(2)
        getattr(cases, "python_float_then_block")[(1,)](dx, out, 100, BLOCK=32)
        lse = x64.max() + np.log(np.exp(x64 - x64.max()).sum())
        np.testing.assert_allclose(out.numpy(), [lse, np.exp(x64 - x64.max()).sum()], rtol=1e-5)
        half = tl.to_device(np.full(64, np.nan, np.float16), tl.f16)
        getattr(cases, "convert_to_constexpr_dtype")[(1,)](tl.to_device(x[:64].astype(np.float16), tl.f16), half, 64,
                                                           X_dtype=tl.float16, ACC_dtype=tl.float32, BLOCK=64)
        np.testing.assert_allclose(half.numpy(), 2 * x[:64].astype(np.float16).astype(np.float64), rtol=1e-3)
        out = _nan(100)
        getattr(cases, "mixed_int_widths")[(1,)](dx, tl.to_device(np.array([90], np.int64), tl.i64), out, BLOCK=128)
        np.testing.assert_allclose(out.numpy()[:90], x64[:90] + 0.5, rtol=1e-6)
        assert np.isnan(out.numpy()[90:]).all()
        best = tl.to_device(np.full(2, -1, np.int64), tl.i64)
        getattr(cases, "python_int_cast")[(1,)](dx, best, 100, BLOCK=32)
        np.testing.assert_array_equal(best.numpy(), [np.argmax(x64), 100])
        out = _nan((8, 8))
        getattr(cases, "shape_of_a_block")[(1,)](tl.to_device(tile, tl.f32), out, BLOCK=8)
        np.testing.assert_allclose(out.numpy(), np.where(tile > 0.5, tile, 0.0) + (tile > 0.5).sum(), rtol=1e-6)
        acc = tl.to_device(np.zeros(8, np.float32), tl.f32)
        getattr(cases, "generic_atomic_accumulate")[(4,)](dx, acc, 100, BLOCK=32)
        np.testing.assert_allclose(acc.numpy(), [x64[j::8].sum() for j in range(8)], rtol=1e-5, atol=1e-6)
        out = _nan(8)
        getattr(cases, "local_constexprs")[(1,)](dx, tl.to_device(np.array([5], np.int32), tl.i32), out,
                                                 TALL=True, FLAT=False, BLOCK=8)
        halves = np.where(np.arange(8) < 5, x[:8].astype(np.float16).astype(np.float64), 0.0)
        np.testing.assert_allclose(out.numpy(), 2 * np.log(2) * halves + 32, rtol=1e-6)
        out = _nan(32)
        getattr(cases, "scalar_arithmetic_converts")[(4,)](dx, out, 2, 16, BLOCK=8)
        np.testing.assert_allclose(out.numpy(), x64[:32] + np.repeat(2 * np.arange(4) + 1, 8), rtol=1e-6)
        out = _nan(128)
        getattr(cases, "offsets_first_and_scalar_extrema")[(4,)](dx, out, 100, BLOCK=32)
        np.testing.assert_allclose(out.numpy()[:100], 2 * x64, rtol=1e-6)
        assert np.isnan(out.numpy()[100:]).all()
        half = tl.to_device(np.full(64, np.nan, np.float16), tl.f16)
        getattr(cases, "reduce_with_a_generic_combine")[(1,)](tl.to_device(x[:64].astype(np.float16), tl.f16), half, BLOCK=64)
        x16 = x[:64].astype(np.float16).astype(np.float64)
        np.testing.assert_array_equal(half.numpy(), np.maximum.accumulate(x16) - x16.max())
        square = rng.standard_normal((16, 16)).astype(np.float16)
        out = _nan((16, 16))
        getattr(cases, "dot_into_constexpr_dtype")[(1,)](tl.to_device(square, tl.f16), out, ACC_DTYPE=tl.float32, BLOCK=16)
        np.testing.assert_allclose(out.numpy(), square.astype(np.float64) @ square.astype(np.float64), rtol=1e-2, atol=1e-2)
        out = _nan(32)
        getattr(cases, "cache_hints_from_constexprs")[(1,)](dx, out, LOAD_HINT=".ca", EVICTION="evict_last",
                                                            STORE_HINT=".cs", BLOCK=32)
        np.testing.assert_allclose(out.numpy(), x64[:32] + 1.0, rtol=1e-6)
        for acc_dtype, rounded in ((None, x64), (tl.float16, x.astype(np.float16).astype(np.float64))):
            out = _nan(100)
            chosen = {} if acc_dtype is None else {"ACC": acc_dtype}
            getattr(cases, "constexpr_dtype_default")[(4,)](dx, out, 100, BLOCK=32, **chosen)
            np.testing.assert_allclose(out.numpy(), 2 * rounded, rtol=1e-6)
        runs = np.array([1, 1, 2, 2, 2, 3, 1, 1, 4, 5], np.float32)
        counts = tl.to_device(np.full(16, -1, np.int64), tl.i64)
        totals = tl.to_device(np.concatenate([[100], np.full(16, -1)]).astype(np.int64), tl.i64)
        getattr(cases, "group_starts")[(1,)](tl.to_device(runs, tl.f32), counts, totals, 10, BLOCK=16)
        want = np.cumsum(np.concatenate([[1], runs[1:] != runs[:-1]]))
        np.testing.assert_array_equal(counts.numpy(), np.concatenate([want, np.full(6, -1)]))
        np.testing.assert_array_equal(totals.numpy(), np.concatenate([[100], want[:9], [100 + want[9]], np.full(6, -1)]))


def test_branch_chosen_dtypes_run(case_modules: dict[str, object], backend: str) -> None:
    """The dtypes chosen by a branch that good_ported.py types as choices run on the reference and the
    emulator and match float64 NumPy in every mode: rms_norm computed in the input's dtype or in f32, a
    compute dtype chosen by the input's, a dtype picked by the output pointer's, and ``ptr.type.element_ty``."""
    cases = case_modules["good_ported"]
    rng = np.random.default_rng(23)
    rows, cols = 3, 40
    x16 = rng.standard_normal((rows, cols)).astype(np.float16)
    w16 = rng.standard_normal(cols).astype(np.float16)
    x64, w64 = x16.astype(np.float64), w16.astype(np.float64)
    rstd64 = 1 / np.sqrt((x64 * x64).mean(1) + 1e-5)
    with tl.backend(backend):
        for mode, tolerance in ((0, 2e-2), (1, 2e-3)):
            y = tl.to_device(np.full((rows, cols), np.nan, np.float16), tl.f16)
            rstd = _nan(rows)
            getattr(cases, "rms_norm_by_mode")[(rows,)](tl.to_device(x16, tl.f16), tl.to_device(w16, tl.f16), y, rstd,
                                                        cols, 1e-5, MODE=mode, BLOCK=64)
            np.testing.assert_allclose(rstd.numpy(), rstd64, rtol=tolerance)
            np.testing.assert_allclose(y.numpy(), x64 * rstd64[:, None] * w64, rtol=tolerance, atol=tolerance)
        formats: tuple[tuple[type[tl.Dtype], Any], ...] = ((tl.f16, np.float16), (tl.f32, np.float32))
        for dtype, native in formats:
            x = rng.standard_normal(cols).astype(native)
            squares = tl.to_device(np.full(cols, np.nan, native), dtype)
            getattr(cases, "compute_dtype_by_branch")[(1,)](tl.to_device(x, dtype), squares, cols, BLOCK=64)
            xd = x.astype(np.float64)
            np.testing.assert_allclose(squares.numpy(), xd * xd + xd.sum(), rtol=2e-3, atol=2e-2)
        x32 = rng.standard_normal(32).astype(np.float32)
        halves: tuple[tuple[type[tl.Dtype], Any], ...] = ((tl.f16, np.float16), (tl.bf16, ml_dtypes.bfloat16))
        for dtype, half in halves:
            picked = tl.to_device(np.full(32, np.nan, half), dtype)
            getattr(cases, "dtype_picked_by_the_pointer")[(1,)](tl.to_device(x32, tl.f32), picked, BLOCK=32)
            np.testing.assert_allclose(picked.numpy().astype(np.float64), x32, rtol=1e-2)
            doubled = tl.to_device(np.full(32, np.nan, half), dtype)
            getattr(cases, "pointer_type_element")[(1,)](tl.to_device(x32, tl.f32), doubled, BLOCK=32)
            np.testing.assert_allclose(doubled.numpy().astype(np.float64), 2 * x32, rtol=1e-2)


def test_fourth_round_spellings_run(case_modules: dict[str, object], backend: str) -> None:
    """The classes issue 17's fourth round accepts run on the reference and the emulator and match float64
    NumPy: a branch's dtype standing for a kernel's second width, ``tl.dtype`` annotations, Python's
    ``range`` with ``tl.range``'s hints, ``.to(x.dtype)`` of a block whose dtype a branch chose, and a Python
    int joined with i32 indices stored into an i64 buffer, and unsigned offsets of a pointer."""
    cases = case_modules["good_ported"]
    rng = np.random.default_rng(41)
    x = rng.standard_normal(32).astype(np.float32)
    x64 = x.astype(np.float64)
    with tl.backend(backend):
        outputs: tuple[tuple[type[tl.Dtype], Any, float], ...] = (
            (tl.f16, np.float16, 1e-3), (tl.bf16, ml_dtypes.bfloat16, 1e-2), (tl.f32, np.float32, 1e-6))
        for dtype, native, tolerance in outputs:
            picked = tl.to_device(np.full(32, np.nan, native), dtype)
            getattr(cases, "choice_for_a_second_width")[(1,)](tl.to_device(x.astype(np.float16), tl.f16), picked,
                                                              BLOCK=32)
            np.testing.assert_allclose(picked.numpy().astype(np.float64), 3 * x.astype(np.float16).astype(np.float64),
                                       rtol=tolerance)
        y, z = (tl.to_device(np.full(32, np.nan, np.float16), tl.f16) for _ in range(2))
        getattr(cases, "dtype_annotations")[(1,)](tl.to_device(x, tl.f32), y, z, tl.float16, BLOCK=32)
        np.testing.assert_allclose(y.numpy().astype(np.float64), 2 * x64, rtol=1e-3)
        np.testing.assert_allclose(z.numpy().astype(np.float64), x64 - 1, rtol=1e-3, atol=1e-3)
        rows = rng.standard_normal((5, 8)).astype(np.float32)
        for flatten in (False, True):
            out = _nan(8)
            getattr(cases, "range_with_hints")[(1,)](tl.to_device(rows, tl.f32), out, 5, FLATTEN=flatten, BLOCK=8)
            np.testing.assert_allclose(out.numpy(), rows.astype(np.float64).sum(0) + rows[::2].astype(np.float64).sum(0),
                                       rtol=1e-5)
        for cast in (False, True):
            y = tl.to_device(np.full(32, np.nan, np.float16), tl.f16)
            getattr(cases, "dtype_of_a_choice")[(1,)](tl.to_device(x.astype(np.float16), tl.f16), y, CAST_FP32=cast, BLOCK=32)
            np.testing.assert_allclose(y.numpy().astype(np.float64), 2 * x.astype(np.float16).astype(np.float64) + 1,
                                       rtol=2e-3, atol=2e-3)
        best = tl.to_device(np.full(1, -1, np.int64), tl.i64)
        getattr(cases, "int_joined_with_indices_widens")[(1,)](tl.to_device(x, tl.f32), best, 32, BLOCK=8)
        assert best.numpy()[0] == np.argmax(x)
        out = _nan(8)
        getattr(cases, "unsigned_offsets")[(1,)](tl.to_device(x, tl.f32), out, BLOCK=8)
        np.testing.assert_allclose(out.numpy(), x64[:8] + 8 * x64[np.arange(8) // 2], rtol=1e-5)


def test_fifth_round_spellings_run(case_modules: dict[str, object], backend: str) -> None:
    """The classes issue 17's fifth round accepts run on the reference and the emulator and match float64
    NumPy: a local constexpr annotated in each branch (of a constexpr ``if``, and of a dtype helper ending
    in a ``raise`` no launch reaches), float constant expressions, and a descriptor's ``dtype`` and
    ``block_shape`` in a kernel generic over the width."""
    cases = case_modules["good_ported"]
    rng = np.random.default_rng(53)
    x = rng.standard_normal(20).astype(np.float32)
    with tl.backend(backend):
        for scaled, factor in ((True, np.log(2) / 4), (False, -np.log(2) * 2)):
            out = _nan(2)
            getattr(cases, "reannotated_constexprs")[(1,)](tl.to_device(x, tl.f32), tl.empty(1, tl.i16), out, 20,
                                                           SCALED=scaled, BLOCK=32)
            np.testing.assert_allclose(out.numpy(), [x.astype(np.float64).max() * factor, -2.0 ** 15], rtol=1e-6)
        formats: tuple[tuple[type[tl.Dtype], Any, float], ...] = ((tl.f16, np.float16, 1e-3), (tl.f32, np.float32, 1e-6))
        for dtype, native, tolerance in formats:
            source = rng.standard_normal((16, 32)).astype(native)
            y = tl.to_device(np.full((16, 32), np.nan, native), dtype)
            descs = [tl.HostTensorDescriptor(t, [16, 32], [32, 1], [8, 16])
                     for t in (tl.to_device(source, dtype), y)]
            getattr(cases, "descriptor_dtype")[(2, 2)](*descs, BM=8, BN=16)
            np.testing.assert_allclose(y.numpy().astype(np.float64), 2 * source.astype(np.float64) + 1, rtol=tolerance)



def test_sixth_round_spellings_run(case_modules: dict[str, object], backend: str) -> None:
    """The classes issue 17's sixth round accepts run on the reference and the emulator and match float64
    NumPy: a row accumulator started as a Python float (a join of rank 1) given to builtins, and ``tl.dot``
    and ``tl.where`` of two blocks converted by one constexpr (choices), in f16 and in f32."""
    cases = case_modules["good_ported"]
    rng = np.random.default_rng(67)
    rows = rng.standard_normal((5, 16)).astype(np.float32)
    sums = rows.astype(np.float64).sum(axis=0) * 0.125
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    with tl.backend(backend):
        out = _nan(32)
        getattr(cases, "row_accumulator_from_a_float")[(1,)](tl.to_device(rows, tl.f32), out, 5, BLOCK=16)
        expected = np.concatenate([np.exp(sums), np.where(np.arange(16) % 2 == 0, sums, sums.max()) * 8.0])
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
        for half in (True, False):  # f32 operands multiply as tf32 (Triton's default), with f16's 10-bit mantissa
            product = _nan((16, 16))
            getattr(cases, "choices_in_dot_and_where")[(1,)](tl.to_device(a, tl.f32), tl.to_device(b, tl.f32), product,
                                                             HALF=half, BLOCK=16)
            rounded = [x.astype(np.float16).astype(np.float64) if half else x.astype(np.float64) for x in (a, b)]
            reference = np.where(a > 0, rounded[0], rounded[1]) @ rounded[1]
            np.testing.assert_allclose(product.numpy(), reference, rtol=2e-2, atol=5e-2)


def test_seventh_round_spellings_run(case_modules: dict[str, object], backend: str) -> None:
    """The classes issue 17's seventh round accepts run on the reference and the emulator and match float64
    NumPy: bare constexprs defaulting to a str and a float, kept or passed, a builtin given arithmetic on a
    Python float joined with a block, a typed reduction of a tuple of blocks (Welford's mean and variance), and
    Python's ``range`` over a rank-0 block bound whose index converts with ``.to``."""
    cases = case_modules["good_ported"]
    x = np.random.default_rng(71).uniform(0.1, 1.0, 20).astype(np.float32)
    wide = x.astype(np.float64)
    with tl.backend(backend):
        for options, first in (({}, 0.5 * wide.sum()), ({"REDUCTION": "max", "SCALE": 2.0}, 2.0 * wide.max())):
            out = _nan(3)
            getattr(cases, "str_and_float_defaults")[(1,)](tl.to_device(x, tl.f32), out, 20, BLOCK=8, **options)
            expected = [first, 1.0 / np.sqrt(wide.sum() / 4 + 1), np.exp(-wide.sum() / 8)]
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)
        rows = np.random.default_rng(73).standard_normal((2, 13)).astype(np.float32)
        stats = _nan(4)
        getattr(cases, "tuple_reduction")[(1,)](tl.to_device(rows, tl.f32), stats, 13, BLOCK=16)
        wide_rows = rows.astype(np.float64)
        expected_stats = np.stack([wide_rows.mean(axis=1), wide_rows.var(axis=1)], axis=1).ravel()
        np.testing.assert_allclose(stats.numpy(), expected_stats, rtol=1e-4, atol=1e-5)
        doubled = _nan((7, 8))
        getattr(cases, "range_over_a_block_bound")[(3,)](tl.to_device(rows[:, :8].repeat(4, axis=0)[:7], tl.f32), doubled,
                                                         7, ROWS=3, BLOCK=8)
        np.testing.assert_array_equal(doubled.numpy(), 2 * rows[:, :8].repeat(4, axis=0)[:7])


# ---------------------------------------------------------------- the tutorial-shaped kernels run


def _nan(shape: int | tuple[int, ...]) -> tl.Buffer[tl.f32]:
    """An f32 output poisoned with NaN, so an element the kernel does not write fails the comparison."""
    import numpy as np

    return tl.to_device(np.full(shape, np.nan, np.float32), tl.f32)


def test_tutorial_elementwise_kernels_run(case_modules: dict[str, object]) -> None:
    """Vector add, dropout, libdevice-style math and the Rust-book elementwise kernels match NumPy."""
    import numpy as np

    k = case_modules["good_tutorials"]
    rng = np.random.default_rng(1)
    n, block = 300, 64
    grid = (tl.cdiv(n, block),)
    x64, y64 = rng.standard_normal(n), rng.standard_normal(n)
    x, y = tl.to_device(x64.astype(np.float32), tl.f32), tl.to_device(y64.astype(np.float32), tl.f32)

    def run(name: str, *args: object, **meta: int) -> np.ndarray:
        out = _nan(n)
        getattr(k, name)[grid](*(out if a is None else a for a in args), BLOCK_SIZE=block, **meta)
        return out.numpy().astype(np.float64)

    np.testing.assert_allclose(run("add_generic", x, y, None, n), x64 + y64, rtol=1e-6, atol=1e-6)
    half = tl.empty(n, tl.f16)
    getattr(k, "add_generic")[grid](tl.to_device(x64.astype(np.float16), tl.f16),
                                    tl.to_device(y64.astype(np.float16), tl.f16), half, n, BLOCK_SIZE=block)
    np.testing.assert_allclose(half.numpy(), x64.astype(np.float16) + y64.astype(np.float16))
    np.testing.assert_allclose(run("relu_rust", x, None, n), np.maximum(x64, 0), atol=1e-6)
    np.testing.assert_allclose(run("saxpy_rust", x, y, None, 1.5, n), 1.5 * x64 + y64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run("clamp_where_rust", x, None, -0.5, 0.75, n), np.clip(x64, -0.5, 0.75), atol=1e-6)
    gelu = 0.5 * x64 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2)))
    expected = gelu + np.arctan(x64) + np.sqrt(np.abs(x64)) * np.sin(x64) + np.exp2(-x64 * x64) + np.log1p(x64 * x64)
    np.testing.assert_allclose(run("math_kernel", x, None, n), expected, rtol=1e-5, atol=1e-5)
    dropped = run("seeded_dropout", x, None, n, 0.3, 1234)
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], x64[kept] / 0.7, rtol=1e-5)
    assert 0.55 < kept.mean() < 0.85
    np.testing.assert_array_equal(run("seeded_dropout", x, None, n, 0.3, 1234), dropped)
    keep = rng.integers(0, 2, n).astype(np.int32)
    np.testing.assert_allclose(run("dropout_with_keep_mask", x, tl.to_device(keep, tl.i32), None, n, 0.5),
                               np.where(keep != 0, x64 / 0.5, 0.0), rtol=1e-6)
    a16, b16 = x64.astype(np.float16), y64.astype(np.float16)
    c = tl.empty(n, tl.f16)
    getattr(k, "swiglu_fwd")[grid](tl.to_device(a16, tl.f16), tl.to_device(b16, tl.f16), c, n, BLOCK_SIZE=block)
    a32 = a16.astype(np.float64)
    np.testing.assert_allclose(c.numpy(), (a32 / (1 + np.exp(-a32))).astype(np.float16) * b16, rtol=2e-3, atol=2e-3)


def test_tutorial_row_kernels_run(case_modules: dict[str, object]) -> None:
    """Row-wise kernels (persistent softmax, norms, reductions, scans, cross entropy, transpose) match NumPy."""
    import numpy as np

    k = case_modules["good_tutorials"]
    rng = np.random.default_rng(2)
    rows, cols, block = 7, 50, 64
    x64 = rng.standard_normal((rows, cols))
    x = tl.to_device(x64.astype(np.float32), tl.f32)
    out = _nan((rows, cols))
    # num_stages positionally: as a keyword the launcher takes it for the launch option (docs/typing.md, gaps)
    getattr(k, "softmax_persistent")[(3,)](out, x, cols, cols, rows, cols, block, 2)
    softmax = np.exp(x64 - x64.max(1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), softmax / softmax.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    best, where = _nan(rows), tl.to_device(np.full(rows, -1, np.int32), tl.i32)
    getattr(k, "row_argmax_rust")[(rows,)](x, best, where, cols, BLOCK_SIZE=block)
    np.testing.assert_allclose(best.numpy(), x64.max(1), rtol=1e-6)
    np.testing.assert_array_equal(where.numpy(), x64.argmax(1))
    w64 = rng.standard_normal(cols)
    getattr(k, "rms_norm_rust")[(rows,)](x, tl.to_device(w64.astype(np.float32), tl.f32), out, cols, 1e-6,
                                          BLOCK_SIZE=block)
    rms = x64 / np.sqrt((x64 * x64).mean(1, keepdims=True) + 1e-6) * w64
    np.testing.assert_allclose(out.numpy(), rms, rtol=1e-5, atol=1e-5)
    sums = _nan(rows)
    getattr(k, "sum_rows_rust")[(2,)](x, sums, rows, cols, BLOCK_ROWS=4, BLOCK_COLS=block)
    np.testing.assert_allclose(sums.numpy(), x64.sum(1), rtol=1e-5, atol=1e-5)
    labels = rng.integers(0, cols, rows).astype(np.int32)
    loss = _nan(rows)
    getattr(k, "cross_entropy_fwd")[(rows,)](x, tl.to_device(labels, tl.i32), loss, cols, BLOCK_SIZE=block)
    lse = np.log(np.exp(x64).sum(1))
    np.testing.assert_allclose(loss.numpy(), lse - x64[np.arange(rows), labels], rtol=1e-5, atol=1e-5)
    ints = rng.integers(-9, 9, (rows, cols)).astype(np.int32)
    scanned = tl.to_device(np.full((rows, cols), -1, np.int32), tl.i32)
    getattr(k, "cumsum_rows")[(rows,)](tl.to_device(ints, tl.i32), scanned, cols, BLOCK_SIZE=block)
    np.testing.assert_array_equal(scanned.numpy(), ints.cumsum(1))
    v64 = rng.uniform(0.5, 1.5, 16)
    prods, total = _nan(16), _nan(1)
    getattr(k, "prod_scan_rust")[(1,)](tl.to_device(v64.astype(np.float32), tl.f32), prods, total, BLOCK_SIZE=16)
    np.testing.assert_allclose(prods.numpy(), np.cumprod(v64), rtol=1e-5)
    np.testing.assert_allclose(total.numpy(), [v64.prod()], rtol=1e-5)
    dw64, db64 = rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))
    dw, db = _nan(cols), _nan(cols)
    getattr(k, "layer_norm_bwd_dwdb")[(tl.cdiv(cols, 16),)](
        tl.to_device(dw64.astype(np.float32), tl.f32), tl.to_device(db64.astype(np.float32), tl.f32), dw, db,
        rows, cols, BLOCK_SIZE_M=4, BLOCK_SIZE_N=16)
    np.testing.assert_allclose(dw.numpy(), dw64.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db.numpy(), db64.sum(0), rtol=1e-5, atol=1e-5)
    flipped = _nan((cols, rows))
    getattr(k, "transpose_blocked")[(2, 4)](x, flipped, rows, cols, BLOCK_M=4, BLOCK_N=16)
    np.testing.assert_array_equal(flipped.numpy(), x64.astype(np.float32).T)


@pytest.mark.filterwarnings("ignore::tile_lang_numpy.engine.DivergenceWarning")  # the group size differs per program
def test_tutorial_matmul_kernels_run(case_modules: dict[str, object]) -> None:
    """Grouped matmul (with and without leaky ReLU), persistent matmul and one-block attention match NumPy."""
    import numpy as np

    k = case_modules["good_tutorials"]
    rng = np.random.default_rng(3)
    m, n, kk = 40, 24, 40
    a16, b16 = rng.standard_normal((m, kk)).astype(np.float16), rng.standard_normal((kk, n)).astype(np.float16)
    a, b = tl.to_device(a16, tl.f16), tl.to_device(b16, tl.f16)
    ref = a16.astype(np.float64) @ b16.astype(np.float64)
    for activation, expected in (("", ref), ("leaky_relu", np.where(ref >= 0, ref, 0.01 * ref))):
        c = tl.to_device(np.full((m, n), np.nan, np.float16), tl.f16)
        getattr(k, "matmul_grouped")[(tl.cdiv(m, 16) * tl.cdiv(n, 16),)](
            a, b, c, m, n, kk, kk, 1, n, 1, n, 1,
            BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16, GROUP_SIZE_M=2, ACTIVATION=activation)
        np.testing.assert_allclose(c.numpy(), expected, rtol=1e-2, atol=1e-2)
    c32 = _nan((m, n))
    getattr(k, "matmul_persistent")[(2,)](a, b, c32, m, n, kk, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16,
                                           NUM_SMS=2)
    np.testing.assert_allclose(c32.numpy(), ref, rtol=1e-4, atol=1e-4)
    q, kv = rng.standard_normal((32, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    o = _nan((32, 16))
    getattr(k, "attn_fwd_single_block")[(2,)](tl.to_device(q, tl.f16), tl.to_device(kv, tl.f16),
                                               tl.to_device(kv, tl.f16), o, 0.25, BLOCK_M=16, BLOCK_N=16, HEAD_DIM=16)
    s64 = q.astype(np.float64) @ kv.astype(np.float64).T * 0.25
    p = np.exp(s64 - s64.max(1, keepdims=True))
    np.testing.assert_allclose(o.numpy(), (p @ kv.astype(np.float64)) / p.sum(1, keepdims=True), rtol=2e-2, atol=2e-2)


# ---------------------------------------------------------------- string constexprs on both backends


def _activation(name: str, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """What activation_as_str_constexpr computes, in float64."""
    result: np.ndarray[Any, Any] = x
    if name == "leaky_relu":
        result = np.where(x >= 0, x, 0.01 * x)
    elif name == "relu":
        result = np.maximum(x, 0.0)
    elif name == "gelu":
        result = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return result


ACTIVATIONS = ("relu", "leaky_relu", "gelu", "identity")


def _run_activations(kernel: Any, seed: int) -> Any:
    """Launch ``kernel`` once per activation on the current backend against float64 NumPy;
    returns the input buffer."""
    x64 = np.random.default_rng(seed).standard_normal(300)
    x = tl.to_device(x64.astype(np.float32), tl.f32)
    for name in ACTIVATIONS:
        out = _nan(300)
        kernel[(tl.cdiv(300, 128),)](x, out, 300, BLOCK_SIZE=128, ACTIVATION=name)
        np.testing.assert_allclose(out.numpy(), _activation(name, x64.astype(np.float32).astype(np.float64)),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    return x


def test_string_constexpr_runs_on_the_reference(case_modules: dict[str, object]) -> None:
    """``ACTIVATION: tl.constexpr`` launched with a str: each value takes its own branch."""
    kernel = getattr(case_modules["good_tutorials"], "activation_as_str_constexpr")
    with tl.backend("numpy"):
        x = _run_activations(kernel, 5)
        with pytest.raises(tl.LaunchError, match=re.escape("constexpr ACTIVATION must be an int, float, bool, str, "
                                                           "None, a dtype or a tuple of these, got list")):
            kernel[(1,)](x, _nan(300), 300, BLOCK_SIZE=128, ACTIVATION=["relu"])


def test_string_constexpr_compiles_one_module_per_value(case_modules: dict[str, object]) -> None:
    """The compiler resolves ``ACTIVATION == "relu"`` when it specialises: each value is its own CUDA
    (cuda_source), its own cache key, and runs right on the emulator of the generated code."""
    from tests.compiler.emulator import NAME, EmuBackend
    from tile_lang import registry
    from tile_lang.compiler.spec import Spec

    kernel = getattr(case_modules["good_tutorials"], "activation_as_str_constexpr")
    sources = {name: kernel.cuda_source(BLOCK_SIZE=128, ACTIVATION=name) for name in ACTIVATIONS}
    assert len(set(sources.values())) == len(ACTIVATIONS), "two activations generated the same CUDA"
    assert "erf" in sources["gelu"] and "erf" not in sources["relu"]
    specs = {Spec((), (("ACTIVATION", name), ("BLOCK_SIZE", 128)), 4, 3, 80).key() for name in ("relu", "gelu")}
    assert len(specs) == 2
    emulator = EmuBackend()
    if emulator.unavailable_reason() is not None:
        pytest.skip(str(emulator.unavailable_reason()))
    registry.register(emulator)
    with registry.backend(NAME):
        _run_activations(kernel, 6)
    assert len(emulator.loaded) == len(ACTIVATIONS)  # one compiled module per activation
