"""Run Triton's own language tests on tile_lang and tally the results by cause.

    python scripts/triton_tests.py DIR [--backend numpy|cupy|triton] [--sample 20] [--seed 0] [--timeout 60]
        [--workers N] [--budget S] [--all-tests] [--json out.json] [--markdown out.md] [--compare base.json] [FILE...]

It runs the tests Triton's CI runs on its interpreter (those marked ``interpreter``; ``--all-tests``
for every test). DIR holds Triton's test files (test_core.py, test_standard.py, test_random.py by default) and
``_internal_testing.py`` (Triton's ``python/triton/_internal_testing.py``, which the tests import
as ``triton._internal_testing``). They run under ``python -m tile_lang.as_triton -m pytest``
with ``TILE_LANG_OVERFLOW=wrap`` (the tests assume signed overflow wraps), on the backend of
``--backend`` (see :data:`BACKENDS`): the NumPy reference with ``TRITON_INTERPRET=1`` (the tests
take their interpreter paths) and device ``cpu``, or tile_lang's CUDA backend with
``TRITON_INTERPRET`` unset and device ``cuda`` (a GPU, CuPy and torch with CUDA needed); ``triton``
runs the same selection on Triton's own interpreter (Triton installed, no runner), the baseline
that ``--compare`` reads: of the cases the baseline passed, how many pass here, and the time both
took on them. This file
is also the pytest plugin that supplies the ``device`` fixture, keeps a seeded sample of each test
function's cases, applies the per-test timeout and records each outcome with its cause. Needs
torch (and scipy for test_random.py) in the running Python.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import importlib.abc
import importlib.machinery
import importlib.util
import json
import linecache
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import pytest

FILES = ("test_core.py", "test_standard.py", "test_random.py")
MISSING = r"is not supported yet|is not a method a kernel may call"  # tile_lang's words for a name it lacks
ENV = "TILE_LANG_TRITON_TESTS"  # JSON settings handed from the driver to the plugin
REPO = Path(__file__).resolve().parent.parent
CAUSES = {
    "wrong value": "the kernel ran and a result disagrees with the test's reference (silent wrong result)",
    "error not raised": "Triton raises an error here; tile_lang ran the kernel",
    "other error message": "tile_lang raised an error, but not the one the test expects",
    "missing name": "a Triton name tile_lang (or its Triton shim) does not provide",
    "unsupported": "tile_lang refuses the kernel or launch with its own error",
    "tile_lang bug": "an exception from inside tile_lang that is not one of its own errors",
    "host error": "an exception in the test's own code (torch, NumPy) outside tile_lang",
    "timeout": "the test ran past the per-test timeout",
}


@dataclass(frozen=True)
class Backend:
    """How Triton's tests run on one tile_lang backend (or, as the baseline, on Triton's interpreter)."""

    device: str  # the torch device the tests put their tensors on
    interpret: bool  # TRITON_INTERPRET=1, so the tests take their interpreter paths (else it is unset)
    runner: bool = True  # under tile_lang's runner (python -m tile_lang.as_triton); else real Triton


BACKENDS = {"numpy": Backend("cpu", interpret=True), "cupy": Backend("cuda", interpret=False),
            "triton": Backend("cpu", interpret=True, runner=False)}


# ---- the driver ------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    args = parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        env = environment(args, out, dict(os.environ))
        runner = ["-m", "tile_lang.as_triton"] if BACKENDS[args.backend].runner else []
        cmd = [sys.executable, *runner, "-m", "pytest", "-p", Path(__file__).stem,
               "--noconftest", "-p", "no:cacheprovider", "-q", "--no-header", "-rN", "--tb=no",
               "--rootdir", str(args.dir), *(["-k", args.keyword] if args.keyword else []),
               *([] if args.all_tests else ["-m", "interpreter"]),
               *(["-n", str(args.workers)] if args.workers > 1 else []), *[str(args.dir / f) for f in args.files]]
        try:
            subprocess.run(cmd, env=env, cwd=args.dir, check=False, timeout=args.budget or None)
        except subprocess.TimeoutExpired:  # the outcomes so far are on disk: summarise those
            print(f"stopped after the budget of {args.budget} s", file=sys.stderr)
        results = list(_read_outcomes(Path(tmp)).values())
    summary = summarize(results, args)
    if args.compare:
        summary += "\n" + compare(results, json.loads(args.compare.read_text()), args.compare.name)
    print(summary)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(summary)
    return 0 if results else 1


def parse(argv: list[str]) -> argparse.Namespace:
    """The driver's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=lambda s: Path(s).resolve(), help="folder with Triton's test files and _internal_testing.py")
    parser.add_argument("files", nargs="*", default=list(FILES), help=f"test files in DIR (default {' '.join(FILES)})")
    parser.add_argument("--backend", choices=BACKENDS, default="numpy",
                        help="numpy: the reference on CPU tensors (default); cupy: the CUDA backend on CUDA tensors; "
                             "triton: Triton's own interpreter (the baseline)")
    parser.add_argument("--sample", type=int, default=20, help="cases kept per test function (0: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per test")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--markdown", type=Path, help="write the summary here")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression, applied before sampling")
    parser.add_argument("--all-tests", action="store_true",
                        help="also the tests Triton does not run on its interpreter (default: only @pytest.mark.interpreter)")
    parser.add_argument("--workers", type=int, default=1, help="pytest-xdist processes (needs pytest-xdist)")
    parser.add_argument("--budget", type=int, default=0,
                        help="stop the run after this many seconds and summarise the cases finished (0: no limit)")
    parser.add_argument("--compare", type=Path, help="a --json file of a baseline run (--backend triton) to compare with")
    return parser.parse_args(argv)


def environment(args: argparse.Namespace, out: Path, base: dict[str, str]) -> dict[str, str]:
    """The environment of the pytest process: ``base`` with the backend's variables and the
    plugin's settings (JSON in :data:`ENV`), and this folder on ``PYTHONPATH`` for ``-p``."""
    backend = BACKENDS[args.backend]
    settings = {"sample": args.sample, "seed": args.seed, "timeout": args.timeout, "out": str(out),
                "helpers": str(args.dir.resolve() / "_internal_testing.py"), "device": backend.device,
                "runner": backend.runner}
    # Triton's tests assume signed integer overflow wraps, as on the GPU (the reference's default reports it)
    env = dict(base, TILE_LANG_OVERFLOW="wrap", **{ENV: json.dumps(settings)})
    env.pop("TILE_LANG_BACKEND", None)
    if backend.runner:  # the baseline is Triton itself (tile_lang's pytest plugin would refuse "triton")
        env["TILE_LANG_BACKEND"] = args.backend
    env.pop("TRITON_INTERPRET", None)  # also where the caller's shell set it: on CUDA the tests compile
    if backend.interpret:
        env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    return env


def summarize(results: list[dict[str, str]], args: argparse.Namespace) -> str:
    """A markdown summary: the counts, then each cause's distinct messages with their test counts."""
    outcomes = collections.Counter(r["outcome"] for r in results)
    where = "Triton's interpreter" if args.backend == "triton" else f"tile_lang's {args.backend} backend"
    lines = [f"Triton's tests ({', '.join(args.files)}) on {where}: {len(results)} cases "
             f"(sample {args.sample or 'all'} per function, seed {args.seed}, timeout {args.timeout}s)", "",
             " | ".join(f"{k} {outcomes[k]}" for k in ("passed", "failed", "skipped")), ""]
    failed = [r for r in results if r["outcome"] == "failed"]
    by_cause = collections.Counter(r["cause"] for r in failed)
    for cause, count in by_cause.most_common():
        lines.append(f"## {cause}: {count} ({CAUSES[cause]})")
        messages = collections.Counter(f'{r["type"]}: {_shape(r["message"])}' for r in failed if r["cause"] == cause)
        lines += [f"- {n} x {msg}" for msg, n in messages.most_common(12 if cause != "wrong value" else None)]
        if cause == "wrong value":
            lines += [f"  - {r['test']}" for r in failed if r["cause"] == cause]
        lines.append("")
    return "\n".join(lines)


def compare(results: list[dict[str, Any]], base: list[dict[str, Any]], name: str) -> str:
    """Of the cases the baseline passed, how many passed here, the time both runs took on the cases
    both passed, the slowest of those relative to the baseline, and what failed here by cause."""
    here = {r["test"]: r for r in results}
    passed = [b for b in base if b["outcome"] == "passed" and b["test"] in here]
    ok = [b for b in passed if here[b["test"]]["outcome"] == "passed"]
    lines = [f"## Against {name}", "",
             f"Of the {len(passed)} cases {name} passed (and this run selected), {len(ok)} passed here "
             f"({100 * len(ok) / max(len(passed), 1):.1f}%)."]
    for key, what in (("seconds", "whole test"), ("launch_seconds", "in kernel launches"),
                      ("launch_cpu_seconds", "CPU time in kernel launches")):
        lines += _timing(ok, here, key, what, name)
    lost = collections.Counter(f'{here[b["test"]]["cause"] or here[b["test"]]["outcome"]}: {here[b["test"]]["type"]}: '
                               f'{_shape(here[b["test"]]["message"])}' for b in passed if b not in ok)
    lines += ["", "Passed there, not here:"] + [f"- {n} x {msg}" for msg, n in lost.most_common()]
    return "\n".join(lines) + "\n"


def _timing(ok: list[dict[str, Any]], here: dict[str, dict[str, Any]], key: str, what: str, name: str) -> list[str]:
    """The time both runs took on the cases both passed, measured as ``key``, and the cases over
    100 ms there that were not 10x faster here (the slowest relative to the baseline first)."""
    timed = [(b["test"], float(b[key]), float(here[b["test"]][key])) for b in ok if key in b and key in here[b["test"]]]
    if not timed:
        return []
    base_total, total = sum(t[1] for t in timed), sum(t[2] for t in timed)
    slow = [t for t in timed if t[1] > 0.1 and t[2] * 10 > t[1]]
    return ["", f"Time ({what}) on the {len(timed)} cases both passed: {total:.1f} s here, {base_total:.1f} s there "
                f"({base_total / max(total, 1e-9):.1f}x); of the cases that took {name} over 100 ms, "
                f"{len(slow)} were less than 10x faster here:"] + \
           [f"- {test}: {there:.3f} s there, {mine:.3f} s here" for test, there, mine in
            sorted(slow, key=lambda t: t[2] / t[1], reverse=True)[:20]]


def _shape(message: str) -> str:
    """A message with its numbers as N and cut at 160 characters, so one cause groups as one."""
    return re.sub(r"-?\b\d+\b", "N", message)[:160]


# ---- the pytest plugin (loaded in the pytest process by -p) -----------------------------------

def _settings() -> dict[str, Any]:
    return dict(json.loads(os.environ[ENV]))


_results: dict[str, dict[str, str]] = {}


class _Helpers(importlib.abc.MetaPathFinder):
    """Answers ``import triton._internal_testing`` (ahead of the Triton shim) with Triton's file."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "triton._internal_testing":
            return None
        return importlib.util.spec_from_file_location(fullname, _settings()["helpers"])


def pytest_configure(config: pytest.Config) -> None:
    if _settings()["runner"]:  # again in each pytest-xdist worker: a process of its own, not under the runner
        from tile_lang.as_triton import install
        install()
        _triton_ids()
    sys.meta_path.insert(0, _Helpers())
    config.addinivalue_line("markers", "interpreter: runs on Triton's interpreter")
    _time_launches()
    _warm_up()


def _triton_ids() -> None:
    """Give a case parametrized by a dtype the test id it has under Triton (``test_abs_fp8[in_dtype0]``):
    the shim's dtypes are tile_lang's markers, whose ``__name__`` (``Float``) pytest would use, where
    Triton's dtype objects have none and get the argument's name and index. Then ``--compare``
    matches every case with the baseline's."""
    from _pytest.python import IdMaker
    from tile_lang.dtypes import is_marker

    inner = IdMaker._idval_from_value

    def idval(self: IdMaker, val: object) -> str | None:
        return None if is_marker(val) else inner(self, val)

    setattr(IdMaker, "_idval_from_value", idval)


# time inside kernel launches during the current case: wall clock, and this process's CPU time
# (steadier on a shared machine; BLAS threads count too, so pin OPENBLAS_NUM_THREADS=1 to compare)
_launching = {"seconds": 0.0, "cpu": 0.0, "depth": 0}


def _time_launches() -> None:
    """Wrap the launch entry (tile_lang's ``Launcher.__call__``, or Triton's interpreter's
    ``GridExecutor.__call__``) so each case also records the time spent in launches: the part of
    a test the backend is responsible for, apart from the test's own torch and Python code."""
    if _settings()["runner"]:
        from tile_lang.kernel import Launcher as entry
    else:
        try:
            from triton.runtime.interpreter import GridExecutor as entry  # type: ignore[no-redef]
        except ImportError:  # another Triton: its cases record no launch time
            return
    inner = entry.__call__

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        _launching["depth"] += 1  # an autotuner's launches run inside its own: counted once
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(self, *args, **kwargs)
        finally:
            _launching["depth"] -= 1
            if not _launching["depth"]:
                _launching["seconds"] += time.perf_counter() - start
                _launching["cpu"] += time.process_time() - cpu

    setattr(entry, "__call__", timed)


def _warm_up() -> None:
    """Launch a small kernel once in this process (each pytest-xdist worker is one), so the first
    case a process runs is not charged with importing and starting the backend, on either side."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit  # type: ignore[untyped-decorator]
    def copy(src, dst, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offsets = tl.arange(0, BLOCK)
        tl.store(dst + offsets, tl.load(src + offsets) + 1)

    src = torch.arange(16, dtype=torch.float32, device=_settings()["device"])
    dst = torch.empty_like(src)
    copy[(1,)](src, dst, BLOCK=16)
    assert torch.equal(dst, src + 1), "the warm-up kernel gave a wrong result"
    _launching["seconds"] = _launching["cpu"] = 0.0


@pytest.fixture
def device() -> str:
    """The torch device Triton's tests put tensors on: the backend's (``cpu`` for the NumPy reference)."""
    return str(_settings()["device"])


@pytest.fixture
def with_allocator() -> Generator[None, None, None]:
    """Triton's conftest fixture (test_block_pointer.py, test_tuple.py use it): the global-scratch
    allocator set to ``_internal_testing.default_alloc_fn`` for the test, cleared after."""
    import triton
    from triton._internal_testing import default_alloc_fn

    triton.set_allocator(default_alloc_fn)
    try:
        yield
    finally:
        triton.set_allocator(_no_allocator)


def _no_allocator(size: int, align: int, stream: object) -> object:
    """The allocator after ``with_allocator``: none, as Triton's ``NullAllocator`` says."""
    raise RuntimeError("Kernel requires a runtime memory allocation, but no allocator was set.")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep a seeded sample of each test function's cases (the rest deselected)."""
    settings = _settings()
    groups: dict[str, list[pytest.Item]] = collections.defaultdict(list)
    for item in items:
        groups[item.nodeid.split("[")[0]].append(item)
    def sample(name: str, group: list[pytest.Item]) -> list[pytest.Item]:
        """A group's sample, seeded by the seed and the function's name alone, so one function's
        cases do not shift another's and every backend (and Triton's interpreter) gets the same."""
        keep = settings["sample"]
        return random.Random(f'{settings["seed"]}:{name}').sample(group, keep) if 0 < keep < len(group) else group
    keep = {id(item) for name, group in groups.items() for item in sample(name, group)}
    config.hook.pytest_deselected(items=[item for item in items if id(item) not in keep])
    items[:] = [item for item in items if id(item) in keep]


class Timeout(Exception):
    """The test ran past the per-test timeout."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Timeout(f"ran past {_settings()['timeout']}s")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(_settings()["timeout"])
    _launching["seconds"] = _launching["cpu"] = 0.0
    try:
        return (yield)
    finally:
        signal.alarm(0)
        _launch_seconds[item.nodeid] = (_launching["seconds"], _launching["cpu"])


_launch_seconds: dict[str, tuple[float, float]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" or report.outcome != "passed":
        record = _results.setdefault(item.nodeid, _record(item, report.outcome, call.excinfo))
        record["seconds"] = f"{report.duration:.4f}"
        wall, cpu = _launch_seconds.get(item.nodeid, (0.0, 0.0))
        record["launch_seconds"], record["launch_cpu_seconds"] = f"{wall:.4f}", f"{cpu:.4f}"
    return report


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:  # a file that does not import fails every test in it
        message = str(report.longrepr).strip().splitlines()[-1]
        _results[report.nodeid] = {"test": report.nodeid, "outcome": "failed", "cause": "missing name"
                                   if "triton" in message else "host error", "type": "CollectionError",
                                   "message": message}
        pytest_runtest_logfinish(report.nodeid, ("", None, ""))


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Append the finished case's outcome to this process's file (one a pytest-xdist worker), so
    a run stopped by the driver's budget keeps every case finished before it."""
    if nodeid in _results:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f'{_settings()["out"]}.{worker}.jsonl', "a") as out:
            out.write(json.dumps(_results[nodeid]) + "\n")


def _read_outcomes(folder: Path) -> dict[str, dict[str, str]]:
    """Every process's outcomes, by test (a collection error is recorded before any case runs)."""
    outcomes = {}
    for part in sorted(folder.glob("results*.jsonl")):
        for line in part.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # a line cut by the budget's kill
                continue
            outcomes[record["test"]] = record
    return outcomes


def _record(item: pytest.Item, outcome: str, excinfo: pytest.ExceptionInfo[BaseException] | None) -> dict[str, str]:
    test = item.nodeid
    if outcome != "failed" or excinfo is None:
        message = str(excinfo.value) if excinfo is not None else ""
        return {"test": test, "outcome": outcome, "cause": "", "type": "", "message": message.split("\n")[0]}
    exc = excinfo.value
    text = str(exc).strip()
    message = text.splitlines()[0] if text else ""
    return {"test": test, "outcome": outcome, "cause": cause(exc, excinfo.tb, getattr(item, "function", None)), "type": type(exc).__name__,
            "message": re.sub(r"^\S+:\d+:\d+: in kernel \w+: ", "", message)}  # drop "file:line:col: in kernel K: "


def cause(exc: BaseException, tb: TracebackType, test: Any) -> str:
    """Which of :data:`CAUSES` an exception that failed a test stands for."""
    innermost = tb
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    where = Path(innermost.tb_frame.f_code.co_filename).resolve()
    inside = REPO in where.parents and "as_triton" not in where.parts
    if isinstance(exc, Timeout):
        return "timeout"
    if type(exc).__name__ == "Failed" and "DID NOT RAISE" in str(exc):
        return "error not raised"
    if isinstance(exc, AssertionError):
        if "Regex pattern did not match" in str(exc):
            return "other error message"
        line = _test_line(tb, test)
        if "exc_info" in line or re.search(r"\b\w+\.value\b", line):  # on the error Triton raises (`e.value`)
            return "other error message"
        return "error not raised" if _in_raises_block(tb, test) else "wrong value"
    if isinstance(exc, ImportError):
        return "missing name"
    return _tile_lang_cause(exc) or ("tile_lang bug" if inside else "host error")


def _tile_lang_cause(exc: BaseException) -> str | None:
    """The cause of one of tile_lang's own errors; None for any other exception, and where
    tile_lang is not installed (the baseline's Python, running Triton's interpreter)."""
    try:
        from tile_lang.errors import TileLangError, Unsupported
        from tile_lang.as_triton import TritonNameError
    except ImportError:
        return None
    if isinstance(exc, (TritonNameError, Unsupported)):
        return "missing name"
    if isinstance(exc, TileLangError):
        if re.search(MISSING, str(exc)):
            return "missing name"
        return "tile_lang bug" if type(exc).__name__ == "CompilerBug" else "unsupported"
    return None


def _test_frame(tb: TracebackType | None, test: Any) -> TracebackType | None:
    """The traceback entry of the test function itself."""
    while tb is not None and tb.tb_frame.f_code is not getattr(test, "__code__", None):
        tb = tb.tb_next
    return tb


def _test_line(tb: TracebackType, test: Any) -> str:
    frame = _test_frame(tb, test)
    return "" if frame is None else linecache.getline(frame.tb_frame.f_code.co_filename, frame.tb_lineno)


def _in_raises_block(tb: TracebackType, test: Any) -> bool:
    """Whether the test function's failing line is inside ``with pytest.raises(...)``: Triton
    rejects the code there, so a wrong result means tile_lang ran what Triton refuses."""
    frame = _test_frame(tb, test)
    if frame is None:
        return False
    lines, start = inspect.getsourcelines(frame.tb_frame.f_code)
    at = frame.tb_lineno - start
    indent = len(lines[at]) - len(lines[at].lstrip())
    for line in reversed(lines[:at]):
        stripped = line.lstrip()
        if stripped and len(line) - len(stripped) < indent:
            if stripped.startswith("with pytest.raises"):
                return True
            indent = len(line) - len(stripped)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
