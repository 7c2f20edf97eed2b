"""``python -m tests.fuzz --seconds 900 --seed N [--out DIR] [--jobs 2] [--dots] [--addresses]``: fuzz until the time is
up, printing each failure's seed and source and writing the failing kernels to ``--out``."""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from tests.fuzz.addresses import uses_addresses
from tests.fuzz.dots import is_dot
from tests.fuzz.runner import Outcome, Verdict, run_many, unavailable_reason
from tile_lang.progress import progress


def report(outcome: Outcome, out: Path) -> None:
    print(f"\n=== seed {outcome.seed}: {outcome.verdict.value}\n{outcome.detail}\n--- source\n{outcome.source}",
          flush=True)
    out.mkdir(parents=True, exist_ok=True)
    header = "".join(f"# {line}\n" for line in
                     [f"seed {outcome.seed}: {outcome.verdict.value}", *outcome.detail.splitlines()])
    (out / f"fuzz_{outcome.seed}.py").write_text(header + outcome.source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="stop starting new kernels after this long")
    parser.add_argument("--seed", type=int, default=0, help="the first seed (then seed+1, seed+2, ...)")
    parser.add_argument("--count", type=int, default=None, help="stop after this many kernels")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"), help="where failing kernels go")
    parser.add_argument("--dots", action="store_true", help="only the seeds of dot kernels (every fourth)")
    parser.add_argument("--addresses", action="store_true", help="only the seeds whose kernels use address forms")
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason is not None:
        print(f"cannot fuzz: {reason}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.seconds
    seeds: Iterable[int] = itertools.count(args.seed) if args.count is None else range(args.seed, args.seed + args.count)
    if args.dots:
        seeds = filter(is_dot, seeds)
    if args.addresses:
        seeds = filter(uses_addresses, seeds)
    verdicts: collections.Counter[Verdict] = collections.Counter()
    failed: dict[str, list[int]] = collections.defaultdict(list)  # seeds by the edge case planted
    outcomes = run_many(seeds, args.jobs, lambda: time.monotonic() < deadline)
    total = None if args.dots or args.addresses else args.count  # a share of the --count seeds
    for outcome in progress(outcomes, "fuzzing", lambda o: f"seed {o.seed} {o.verdict.value}", total):
        verdicts[outcome.verdict] += 1
        if outcome.verdict.failed:
            report(outcome, args.out)
            failed[outcome.hazard or "none"].append(outcome.seed)
    total = sum(verdicts.values())
    print(f"\n{total} kernels: " + ", ".join(f"{n} {v.value}" for v, n in verdicts.most_common()))
    for hazard, found in sorted(failed.items()):
        print(f"failed with edge case {hazard}: seeds {sorted(found)}")
    return 1 if any(v.failed for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
