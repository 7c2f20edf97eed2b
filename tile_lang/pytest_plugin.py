"""pytest plugin: run a test on each selected backend (``--tile-backend=numpy,cupy``).

A test takes the ``tile_backend`` fixture; it is parametrised over the selected backends,
each one active (``with tl.backend(name)``) while the test runs. A backend that cannot run
here (no GPU, no CuPy) is reported as skipped with the reason, and those skips are summarised
at the end of every run; an unknown backend name is a usage error before any test runs.

With ``-rs`` (or ``-ra``) all skips are summarised once per reason, with a count and the files,
instead of one near-identical line per test location.

Under ``python -m tile_lang.as_triton -m pytest`` the Triton shim is installed in every pytest
process, pytest-xdist's workers too (new processes, which inherit the environment variable
:data:`tile_lang.as_triton.ENV_VAR` that ``install()`` sets).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

import pytest

import tile_lang.registry as registry

OPTION = "--tile-backend"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION, action="store", default=None,
        help="comma-separated tile_lang backends to run tile_backend tests on "
             f"(default: ${registry.ENV_VAR} or {registry.DEFAULT})",
    )


def selected(config: pytest.Config) -> list[str]:
    """The backends chosen on the command line, by environment, or the default."""
    raw = config.getoption(OPTION) or os.environ.get(registry.ENV_VAR) or registry.DEFAULT
    return [name.strip() for name in str(raw).split(",") if name.strip()]


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Install the Triton shim before any conftest imports ``triton`` when the process was
    started under it (see :mod:`tile_lang.as_triton`)."""
    if os.environ.get("TILE_LANG_AS_TRITON") == "1":
        from tile_lang.as_triton import install

        install()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "tile_backend" in metafunc.fixturenames:
        metafunc.parametrize("tile_backend", selected(metafunc.config), indirect=True)


@pytest.fixture
def tile_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of the backend this test runs on, active for the test's duration."""
    name: str = request.param
    info = {b.name: b for b in registry.backends()}.get(name)
    if info is None:
        pytest.fail(f"unknown tile_lang backend {name!r}; registered: {', '.join(b.name for b in registry.backends())}")
    if not info.available:
        pytest.skip(f"tile_lang backend {name!r} is not available here: {info.reason}")
    with registry.backend(name):
        yield name


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    _check_selected(config)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and "s" in getattr(reporter, "reportchars", ""):
        reporter.reportchars = reporter.reportchars.replace("s", "")  # our summary replaces pytest's
        config.stash[_SUMMARISE] = True


def _check_selected(config: pytest.Config) -> None:
    """A UsageError naming the registered backends if a chosen one is not (``--tile-backend=nump``);
    the default needs no check (and no scan of the registered backends)."""
    if not (config.getoption(OPTION) or os.environ.get(registry.ENV_VAR)):
        return
    known = [b.name for b in registry.backends()]
    unknown = [name for name in selected(config) if name not in known]
    if unknown:
        raise pytest.UsageError(f"{OPTION}: unknown tile_lang backend(s) {', '.join(map(repr, unknown))}; "
                                f"registered: {', '.join(known)}")


_SUMMARISE = pytest.StashKey[bool]()
_BACKEND_SKIP = "tile_lang backend "  # how the tile_backend fixture's skip reasons begin


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """One line per skip reason: how many tests, and in which files; without ``-rs``, only the
    skips of backends that cannot run here (which otherwise pass unexplained)."""
    every = config.stash.get(_SUMMARISE, False)
    counts: Counter[str] = Counter()
    files: dict[str, list[str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if isinstance(report.longrepr, tuple):
            path, _, reason = report.longrepr
            reason = reason.removeprefix("Skipped: ")
            if not (every or reason.startswith(_BACKEND_SKIP)):
                continue
            counts[reason] += 1
            seen = files.setdefault(reason, [])
            where = os.path.relpath(path, config.rootpath) if os.path.isabs(path) else str(path)
            if where not in seen:
                seen.append(where)
    if counts:
        terminalreporter.write_sep("=", "skipped, by reason" if every else "skipped: backends not available here")
        for reason, count in counts.most_common():
            terminalreporter.write_line(f"SKIPPED [{count}] {reason} ({', '.join(files[reason])})")
