"""Run every example on one backend: ``python -m examples [--backend NAME] [NAME ...]``.

Prints one line per example (PASS/FAIL, wall time, and the first line of the error) and exits
non-zero if any failed. The backend is ``--backend``, else TILE_LANG_BACKEND, else numpy.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import traceback
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tile_lang as tl  # noqa: E402
from tile_lang import registry  # noqa: E402

from examples import EXAMPLES, load  # noqa: E402


def _use_source_tree_backends() -> None:
    """From an uninstalled checkout, find the shipped backends in ./backends."""
    backends = Path(__file__).resolve().parent.parent / "backends"
    if backends.is_dir() and importlib.util.find_spec("tile_lang_numpy") is None:
        sys.path.append(str(backends))


def run_one(name: str, seed: int, verbose: bool) -> bool:
    start = time.perf_counter()
    try:
        load(name)(seed)
    except Exception as exc:  # report every kind of failure and carry on with the next example
        elapsed = time.perf_counter() - start
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"FAIL  {name:<15} {elapsed:7.3f}s  {type(exc).__name__}: {first}", flush=True)
        if verbose:
            traceback.print_exc()
        return False
    print(f"PASS  {name:<15} {time.perf_counter() - start:7.3f}s", flush=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"examples to run (default: all of {', '.join(EXAMPLES)})")
    parser.add_argument("--backend", default=None, help="backend name (default: $TILE_LANG_BACKEND or numpy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)

    unknown = [n for n in args.names if n not in EXAMPLES]
    if unknown:
        parser.error(f"unknown example(s) {', '.join(unknown)}; known: {', '.join(EXAMPLES)}")
    _use_source_tree_backends()
    name = args.backend or registry.current_name()
    try:
        scope = tl.backend(name)
        scope.__enter__()
    except (RuntimeError, ValueError) as exc:
        print(f"backend {name!r} unavailable: {exc}", file=sys.stderr)
        return 2
    try:
        print(f"tile_lang examples on backend {name!r} (seed {args.seed})", flush=True)
        results = [run_one(n, args.seed, args.verbose) for n in (args.names or EXAMPLES)]
    finally:
        scope.__exit__(None, None, None)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
