"""Differential fuzzing in CI: a fixed set of generated kernels (tests/fuzz) runs on the NumPy
reference and on the emulated CUDA and must agree; ill-typed ones must be rejected by both.
Every fourth seed is a dot kernel (tensor cores on sm_80 and sm_90a). Bounded by a kernel count
(each one is a g++ build, about 2 s on two cores). Longer runs:
``python -m tests.fuzz --seconds 900 --seed N [--dots]``."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from tile_lang import dtypes
from tile_lang.dtypes import DType

from tests.fuzz.dots import is_dot
from tests.fuzz.generator import generate
from tests.fuzz.runner import Verdict, differs, run_many, unavailable_reason

SEEDS = [*range(70), 151, 163, 255]  # 17 dot kernels among the first 70; then a chained dot, fp8 wgmma, i8
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


def test_dot_kernels_cover_tensor_core_paths() -> None:
    cases = [generate(s) for s in SEEDS if is_dot(s)]
    sources = "\n".join(c.source for c in cases)
    for feature in ("tl.dot(", "for k0 in range(", "tl.trans(", "Pointer[tl.bf16]", "Pointer[tl.f8e4m3]",
                    "Pointer[tl.i8]", 'input_precision="ieee"', "out_dtype=tl.f16", "mask=", "tl.max(", "[:, None]"):
        assert feature in sources, feature
    assert {c.arch for c in cases} == {80, 90} and {c.num_warps for c in cases} == {4, 8}


@pytest.mark.parametrize("dtype, exact", [(dtypes.F32, True), (dtypes.F32, False), (dtypes.F16, False),
                                          (dtypes.BF16, False)])
def test_a_dot_element_from_a_neighbouring_column_fails_the_comparison(dtype: DType, exact: bool) -> None:
    """The tolerance cannot hide a wrong fragment mapping: in a 64 x 32 product of normal data,
    an element taken from the next column (as a misplaced register would) fails for nearly every
    element (within 2-3% of the output's scale, f16 and bf16: 5-8% pass alone), and any four
    consecutive ones, less than a fragment's share of a warp, always fail."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 64)) * 2, rng.standard_normal((64, 32)) * 2
    product = a.astype(np.float16).astype(np.float64) @ b.astype(np.float16).astype(np.float64)
    ref, neighbours = (x.astype(dtype.numpy).ravel() for x in (product, np.roll(product, -1, axis=1)))
    assert differs("o", dtype, exact, ref, ref.copy(), "emu") is None
    for run in (1, 4):
        caught = 0
        for i in range(0, ref.size, run):
            got = ref.copy()
            got[i:i + run] = neighbours[i:i + run]
            caught += differs("o", dtype, exact, ref, got, "emu") is not None
        assert caught >= (0.9 if run == 1 else 1.0) * ref.size / run, run


def test_a_generator_failure_is_a_crash_outcome_not_the_end_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.fuzz.runner as runner

    def broken(seed: int) -> None:
        raise IndexError(f"no choice left for seed {seed}")

    monkeypatch.setattr(runner, "generate", broken)
    outcome = runner.run_seed(7)
    assert outcome.verdict is Verdict.CRASH and outcome.seed == 7
    assert "generating the kernel failed" in outcome.detail and "no choice left for seed 7" in outcome.detail


def test_an_output_computed_from_a_bf16_dot_is_compared_at_bf16_precision() -> None:
    """An f32 output of a case whose dot rounds to bf16 differs by rounding (seed 71451: 0.2%),
    which the bf16 tolerance allows; an element from the neighbouring column still fails."""
    from tests.fuzz.runner import _compared_as

    rng = np.random.default_rng(71451)
    ref = rng.standard_normal((16, 16)) * 3e4
    rounded = ref * (1 + rng.uniform(-2.5e-3, 2.5e-3, ref.shape))
    as_f32 = _compared_as(dtypes.F32, dtypes.F32)
    as_bf16 = _compared_as(dtypes.F32, dtypes.BF16)
    assert as_bf16 == dtypes.BF16 and _compared_as(dtypes.I32, dtypes.BF16) == dtypes.I32
    assert differs("o", as_f32, False, ref.ravel(), rounded.ravel(), "emu") is not None
    assert differs("o", as_bf16, False, ref.ravel(), rounded.ravel(), "emu") is None
    swapped = ref.copy()
    swapped[:, [3, 4]] = swapped[:, [4, 3]]
    assert differs("o", as_bf16, False, ref.ravel(), swapped.ravel(), "emu") is not None
