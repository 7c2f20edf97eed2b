"""Every example in examples/ runs and matches its NumPy reference on each backend.

``tile_backend`` (tile_lang.pytest_plugin) yields a backend name with that backend already
selected through ``with tl.backend(name)``.
"""

from __future__ import annotations

import pytest

from examples import EXAMPLES, load


@pytest.mark.parametrize("name", EXAMPLES)
def test_example(name: str, tile_backend: str) -> None:
    load(name)(0)


@pytest.mark.parametrize("name", ["vector_add", "softmax", "reductions"])
def test_example_other_seed(name: str, tile_backend: str) -> None:
    """A second draw of the inputs: the checks do not depend on one lucky seed."""
    load(name)(1)
