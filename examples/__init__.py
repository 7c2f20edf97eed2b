"""tile_lang ports of the teenygrad kernels book (github.com/teenygrad/teenygrad, books/kernels).

Each module defines its ``@tl.kernel``s and a host function ``run(seed=0)`` that builds random
inputs with NumPy, poisons the outputs, launches on the current backend and checks the results
against a float64 NumPy reference (raising AssertionError on a mismatch).

Run them all with ``python -m examples`` (or ``python examples/run_all.py``); pick the backend
with ``--backend NAME`` or the TILE_LANG_BACKEND environment variable.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

EXAMPLES: tuple[str, ...] = (
    "vector_add",
    "softmax",
    "matmul",
    "matmul_autotune",
    "linear",
    "reductions",
    "cumsum",
    "layer_norm",
    "cross_entropy",
    "gelu",
    "dtype_generic",
)
"""The example modules, in the order the runner runs them (simplest first)."""


def load(name: str) -> Callable[[int], None]:
    """The ``run(seed)`` function of example ``name`` (imported on demand, so one example that
    fails to import does not take the others down)."""
    if name not in EXAMPLES:
        raise KeyError(f"unknown example {name!r}; known: {', '.join(EXAMPLES)}")
    module = importlib.import_module(f"examples.{name}")
    run: Callable[[int], None] = getattr(module, "run")
    return run
