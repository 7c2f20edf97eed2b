"""Differential fuzzing in CI: a fixed set of generated kernels (tests/fuzz) runs on the NumPy
reference and on the emulated CUDA and must agree; ill-typed ones must be rejected by both.
Every fourth seed is a dot kernel (tensor cores on sm_80 and sm_90a). Bounded by a kernel count
(each one is a g++ build, about 2 s on two cores). Longer runs:
``python -m tests.fuzz --seconds 900 --seed N [--dots]``."""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

from tile_lang import dtypes
from tile_lang.dtypes import DType

from tile_lang.errors import KernelError

from tests.fuzz.addresses import FORMS, MASKS, uses_addresses
from tests.fuzz.case import Case, Data
from tests.fuzz.dots import is_dot
from tests.fuzz.generator import generate
from tests.fuzz.hazards import KINDS
from tests.fuzz.runner import Verdict, differs, initial_outputs, judge, run_many, unavailable_reason

SEEDS = [*range(70), 151, 163, 255, 272, 356, 408, 462]  # 17 dot kernels among the first 70; then a chained dot,
# fp8 wgmma, i8; then 1-D kernels through seven or eight address forms each (half the first 70 use some)
EDGE_CASES = {74: "loop", 81: "loop", 21: "loop", 65: "arg", 41: "ints", 57: "race", 113: "race", 36: "race",
              64: "race", 106: "race", 22: "constexpr", 1: "zeros"}  # seed: its edge case (b4868e2 failed 9)
RACES = (57, 113, 36)  # no barrier: the reference must report them (36 runs one program)
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
    blocks = [dict(generate(s).constexprs) for s in range(200)]  # one-element axes (R, C or B) in a few
    assert 0.04 <= sum(any(b.get(axis) == 1 for axis in "RCB") for b in blocks) / len(blocks) <= 0.2
    assert any(dict(generate(s).constexprs).get("B") == 1 for s in SEEDS)


def test_address_forms_are_generated() -> None:
    """About half the kernels load and store through the address and mask forms, all of them over 200 seeds."""
    cases = [generate(s) for s in range(200)]
    assert 0.35 <= sum(bool(c.forms) for c in cases) / len(cases) <= 0.65
    assert all(bool(c.forms) == uses_addresses(c.seed) for c in cases)
    assert set(FORMS) | set(MASKS) == {form for c in cases for form in c.forms}
    sources = "\n".join(c.source for c in cases if c.forms)
    for spelled in ("% sz", ") % sz", "- 1 - ", "(B - 1 - tl.arange(0, B))", ".to(tl.int64)", "[:, None] * st",
                    "[None, :] * sz", "tl.zeros_like(offs)", "+= st", "+= C", "~(", "!= k", "== j", ") | (",
                    "% 3) != 0", "(tl.arange(0, B) < k", ": constexpr"):
        assert spelled in sources, spelled


def test_address_kernels_stay_in_bounds_on_the_reference() -> None:
    """The reference checks every live lane's bounds and every store's races: the address kernels of
    some seeds (no g++ needed) run, or stop only where the kernel is meant to (an ill-typed
    statement, a planted race, a run-time check)."""
    from tests.fuzz.runner import _run_time_check, execute, load

    for seed in filter(uses_addresses, range(300, 400)):
        case = generate(seed)
        try:
            execute(case, load(case.name, case.source), "numpy")
        except KernelError as exc:
            assert case.invalid or case.expect and case.expect in str(exc) or _run_time_check(exc), (seed, exc)
        else:
            assert not case.invalid and not case.expect, seed


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


def test_edge_cases_are_planted_in_some_kernels() -> None:
    """Each seed of EDGE_CASES ends with its edge case; about half the plain kernels carry one, every kind."""
    cases = {seed: generate(seed) for seed in EDGE_CASES}
    assert {seed: c.hazard for seed, c in cases.items()} == EDGE_CASES
    assert _range_step(cases[74], "tl.range") == -(2**30)  # past i32
    assert "tl.store(o5 + pid, hi" in cases[81].source  # the index read after the loop
    assert _range_step(cases[21], "in range") == 0  # a zero step
    assert "tl.argmax(h" in cases[65].source and Data.NAN in {b.data for b in cases[65].inputs}
    assert ">> (h" in cases[41].source and (dtypes.I32, Data.EDGE) in {(b.dtype, b.data) for b in cases[41].inputs}
    assert all(cases[s].expect == "data race" and "tl.debug_barrier()" not in cases[s].source for s in RACES)
    assert "tl.atomic_add(o15 + (pid * R" in cases[113].source and cases[36].grid == 1
    for seed, read in ((64, "tl.atomic_add(o7 + pid * B + (B - 1 - "), (106, "tl.load(o10 + pid * B + (tl.arange")):
        barrier = r"tl\.debug_barrier\(\)\n    tl\.store\(o\d+ \+ offs, " + re.escape(read)
        assert cases[seed].expect == "" and re.search(barrier, cases[seed].source), seed
    assert "K0 = tl.constexpr(0.1)" in cases[22].source and cases[22].twins
    assert "tl.maximum(h" in cases[1].source and (dtypes.F16, Data.EDGE) in {(b.dtype, b.data) for b in cases[1].inputs}
    plain = [generate(s) for s in range(300) if not is_dot(s)]
    kinds = collections.Counter(c.hazard for c in plain)
    assert 0.35 <= 1 - kinds[""] / len(plain) <= 0.65 and set(kinds) == {"", *KINDS}, kinds


def _range_step(case: Case, spelled: str) -> int | float:
    """The step of the planted loop over runtime bounds (``h..`` parameters, named as counted)."""
    found = re.search(spelled.replace(".", r"\.") + r"\(h\d+, h\d+, (h\d+)\)", case.source)
    assert found is not None, spelled
    return dict(case.scalars)[found.group(1)]


def test_edge_case_kernels_agree_or_are_checked() -> None:
    """The planted edge cases agree on both backends; the reference reports the race without a
    barrier, and the zero step (where the CUDA code traps)."""
    outcomes = {o.seed: o for o in run_many(EDGE_CASES, jobs=2)}
    failures = [o for o in outcomes.values() if o.verdict.failed]
    assert not failures, "\n\n".join(f"seed {o.seed} ({o.hazard}): {o.verdict.value}\n{o.detail}\n{o.source}"
                                      for o in failures)
    assert {s: o.verdict for s, o in outcomes.items() if o.verdict is not Verdict.AGREE} == {
        s: Verdict.CHECKED for s in (21, *RACES)}


def test_judge_wants_planted_races_reported_and_twins_equal() -> None:
    race = generate(57)
    outputs = initial_outputs(race)
    assert judge(race, outputs, outputs)[0] is Verdict.UNCHECKED
    reported = KernelError("data race on o5[3]: program (0,) stores it", "k.py", 3)
    assert judge(race, reported, outputs)[0] is Verdict.CHECKED
    twins = generate(22)
    (first, second), = twins.twins
    outputs = initial_outputs(twins)
    outputs[first], outputs[second] = (np.full_like(outputs[second], v) for v in (1, 2))
    verdict, detail = judge(twins, outputs, [o.copy() for o in outputs])
    assert verdict is Verdict.MISMATCH and "twin of" in detail and "on numpy" in detail and "on emu" in detail


def test_an_exact_zero_must_keep_its_sign() -> None:
    ref, got = np.array([0.0, -0.0, 1.0], np.float32), np.array([-0.0, -0.0, 1.0], np.float32)
    assert differs("o", dtypes.F32, True, ref, got, "emu") is not None
    assert differs("o", dtypes.F32, False, ref, got, "emu") is None


def test_a_hung_or_killed_worker_costs_only_its_seed() -> None:
    import os
    import signal

    from tests.fuzz.runner import _Worker

    [hung] = run_many([3], jobs=1, timeout=0.01)
    assert hung.verdict is Verdict.HANG and hung.source == generate(3).source
    worker = _Worker()
    worker.give(3, 60.0)
    os.kill(worker.process.pid or 0, signal.SIGKILL)
    worker.process.join()
    killed = worker.outcome(60.0)
    assert killed is not None and killed.verdict is Verdict.CRASH and "exit code -9" in killed.detail
