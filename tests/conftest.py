"""Fixtures shared by the launch tests of both backends."""

from __future__ import annotations

from typing import Any

import pytest

from tile_lang import registry
from tile_lang.kernel import Launcher

from tests import verdicts
from tests.compiler.emulator import EMULATOR, ON_BOTH


def pytest_addoption(parser: pytest.Parser) -> None:
    verdicts.pytest_addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    verdicts.pytest_configure(config)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts launches that went through the full checks (not a repeat launch's fast path)."""
    count = [0]
    original = Launcher.prepare

    def counting(self: Launcher[Any], *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Launcher, "prepare", counting)
    return count


@pytest.fixture(params=ON_BOTH)
def backend(request: pytest.FixtureRequest) -> str:
    """A test taking it runs on the NumPy reference and on the generated CUDA on the CPU emulator
    (``with registry.backend(backend):``), skipped there with the reason where g++ is missing."""
    registry.register(EMULATOR)
    return str(request.param)
