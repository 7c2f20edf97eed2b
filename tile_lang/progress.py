"""Progress of long CPU work (autotuning, ``tile-lang check``, the fuzzer) on stderr, only while a person
watches it (stderr a terminal): a tqdm bar when tqdm (the ``tqdm`` extra) is installed, else one line a
step. Nothing otherwise, so logs and tests' output stay clean."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], label: str, describe: Callable[[T], str] | None = None,
             total: int | None = None) -> Iterator[T]:
    """``items`` one by one, each step shown as ``label`` (and ``describe(item)`` in the plain lines);
    ``total`` defaults to ``len(items)`` where it has one."""
    if not sys.stderr.isatty():
        yield from items
        return
    count = total if total is not None else len(items) if isinstance(items, (list, tuple)) else None
    try:
        from tqdm import tqdm
    except ImportError:
        yield from _lines(items, label, describe, count)
        return
    yield from tqdm(items, desc=label, total=count, leave=False)


def _lines(items: Iterable[T], label: str, describe: Callable[[T], str] | None, count: int | None) -> Iterator[T]:
    """The fallback without tqdm: ``label 2/5: what`` on stderr as each item is done."""
    of = f"/{count}" if count is not None else ""
    for index, item in enumerate(items, start=1):
        yield item
        what = f": {describe(item)}" if describe is not None else ""
        print(f"{label} {index}{of}{what}", file=sys.stderr, flush=True)
