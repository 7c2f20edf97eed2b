"""Differential fuzzing in CI: a fixed set of generated kernels (tests/fuzz) runs on the NumPy
reference and on the emulated CUDA and must agree; ill-typed ones must be rejected by both.
Bounded by a kernel count (each one is a g++ build, about 2 s on two cores). Longer runs:
``python -m tests.fuzz --seconds 900 --seed N``."""

from __future__ import annotations

import collections

import pytest

from tests.fuzz.generator import generate
from tests.fuzz.runner import Verdict, run_many, unavailable_reason

SEEDS = range(70)
pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))


def test_generated_kernels_agree_on_both_backends() -> None:
    outcomes = sorted(run_many(SEEDS, jobs=2), key=lambda o: o.seed)
    failures = [o for o in outcomes if o.verdict.failed]
    assert not failures, "\n\n".join(f"seed {o.seed}: {o.verdict.value}\n{o.detail}\n{o.source}" for o in failures)
    verdicts = collections.Counter(o.verdict for o in outcomes)
    assert verdicts[Verdict.AGREE] >= 0.75 * len(SEEDS), verdicts  # the generator mostly makes valid kernels
    assert all(o.verdict is Verdict.BOTH_REJECTED for o in outcomes if o.invalid)


def test_generator_is_deterministic_and_covers_the_language() -> None:
    assert generate(7) == generate(7) and generate(7) != generate(8)
    sources = "\n".join(generate(s).source for s in SEEDS)
    for feature in ("for ", "while ", "if ", "return", "else:", "tl.atomic_add", "tl.where", "other=", "mask=",
                    "tl.sum", "tl.max", "tl.argmax", "axis=1", "[:, None]", ".to(", "tl.f16", "tl.u32", "tl.i64",
                    "tl.int1", "(-0.0)", "2147483647", "1099511627776", "//", "%", ">>", "~", "tl.minimum"):
        assert feature in sources, feature
