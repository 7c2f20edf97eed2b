"""``triton.profiler`` (proton) on tile_lang, enough for the tutorials' reports.

A session (``start``) records, while active, each ``scope`` and, started with ``hook="triton"``,
each launch of a kernel made by ``@triton.jit(launch_metadata=fn)``, named and measured as ``fn``
says (``{"name": ..., "flops16": ..., "bytes": ...}``). Times are CUDA events on the CUDA backend
(torch's current stream where torch has CUDA started), the wall clock on the reference; a scope
is timed from its start to its end, launches and gaps between them included (Triton's proton
counts the kernels' own time). ``finalize`` writes ``<name>.hatchet``, a JSON file of tile_lang's
own shape (not hatchet's), which ``triton.profiler.viewer``'s ``parse`` and ``print_tree`` read
and print: each scope's calls, time and the rates its metrics give (``tflop16/s``, ``gbyte/s``).
"""

from __future__ import annotations

import contextlib
import json
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import tile_lang.registry as registry
import tile_lang.testing as testing
from tile_lang.errors import UsageError
from tile_lang.kernel import LAUNCH_HOOKS, Launcher

Metadata = Callable[[Any, Any, dict[str, Any]], dict[str, Any]]
LAUNCH_METADATA: weakref.WeakKeyDictionary[Callable[..., Any], Metadata] = weakref.WeakKeyDictionary()
"""``@triton.jit(launch_metadata=fn)``'s ``fn``, by the kernel's Python function."""


@dataclass
class _Session:
    name: str
    hooked: bool  # hook="triton": kernel launches are recorded too
    active: bool = True
    records: list[tuple[str, Any, Any, dict[str, float]]] = field(default_factory=list)  # (name, start, end, metrics)


_SESSIONS: dict[int, _Session] = {}
_OPEN: list[tuple[str, Any, dict[str, float]] | None] = []  # the scopes entered and not yet left


def start(name: str | None = None, *, hook: str | None = None, **options: Any) -> int:
    """A new session, active from now on; its id. ``context``, ``backend`` and the like are accepted
    and ignored."""
    session = max(_SESSIONS, default=-1) + 1
    _SESSIONS[session] = _Session(name or "proton", hook == "triton")
    if _launch_hook not in LAUNCH_HOOKS:
        LAUNCH_HOOKS.append(_launch_hook)
    return session


def activate(session: int | None = None) -> None:
    for s in _chosen(session):
        s.active = True


def deactivate(session: int | None = None) -> None:
    for s in _chosen(session):
        s.active = False


def enter_scope(name: str, *, triton_op: bool = False, metrics: Mapping[str, float] | None = None) -> None:
    _OPEN.append((name, _mark(), dict(metrics or {})) if _recording() else None)


def exit_scope(triton_op: bool = False, metrics: Mapping[str, float] | None = None) -> str | None:
    entered = _OPEN.pop()
    if entered is None:
        return None
    name, begun, given = entered
    end = _mark()
    given.update(metrics or {})
    for s in _recording():
        s.records.append((name, begun, end, given))
    return name


@contextlib.contextmanager
def scope(name: str, metrics: Mapping[str, float] | None = None) -> Iterator[None]:
    """``with proton.scope(name, metrics):`` records the block as one call of scope ``name``."""
    enter_scope(name, metrics=metrics)
    try:
        yield
    finally:
        exit_scope()


def finalize(session: int | None = None, output_format: str = "hatchet") -> None:
    """Write each chosen session's ``<name>.hatchet`` and end it."""
    for key in [k for k in _SESSIONS if session is None or k == session]:
        s = _SESSIONS.pop(key)
        Path(f"{s.name}.hatchet").write_text(json.dumps({"session": s.name, "scopes": _totals(s)}, indent=1))


def _totals(s: _Session) -> dict[str, dict[str, float]]:
    """Each scope's calls, its time in ms and the sums of its metrics."""
    elapsed = _elapsed()
    totals: dict[str, dict[str, float]] = {}
    for name, begun, end, metrics in s.records:
        row = totals.setdefault(name, {"count": 0, "time/ms": 0.0})
        row["count"] += 1
        row["time/ms"] += elapsed(begun, end)
        for metric, value in metrics.items():
            row[metric] = row.get(metric, 0.0) + float(value)
    return totals


def _chosen(session: int | None) -> list[_Session]:
    return [s for k, s in _SESSIONS.items() if session is None or k == session]


def _recording() -> list[_Session]:
    return [s for s in _SESSIONS.values() if s.active]


def _on_gpu() -> bool:
    return registry.current_name() == "cupy"


def _mark() -> Any:
    """Now: a recorded CUDA event on the CUDA backend, else the wall clock."""
    if not _on_gpu():
        return time.perf_counter()
    event = testing.event_clock()[0]()
    event.record()
    return event


def _elapsed() -> Callable[[Any, Any], float]:
    if not _on_gpu():
        return lambda begun, end: (end - begun) * 1e3
    clock = testing.event_clock()[1]

    def between(begun: Any, end: Any) -> float:
        end.synchronize()
        return clock(begun, end)

    return between


def _launch_hook(launcher: Launcher[Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> contextlib.AbstractContextManager[object] | None:
    """A launch of a kernel with launch metadata, while a hooked session records: its scope."""
    metadata = LAUNCH_METADATA.get(launcher.kernel.fn)
    if metadata is None or not any(s.hooked for s in _recording()):
        return None
    bound = dict(zip((p.name for p in launcher.kernel.params), args), **kwargs)
    info = dict(metadata(launcher.grid, SimpleNamespace(name=launcher.kernel.name), bound))
    return scope(str(info.pop("name", launcher.kernel.name)), info)


# ---- triton.profiler.viewer ------------------------------------------------------------------

def parse(metrics: Sequence[str], filename: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """The scopes of a profile ``finalize`` wrote, and the metrics asked for (``time/ms``,
    ``time/s``, ``time/us``, ``count``, ``tflop/s``, ``tflop<bits>/s``, ``gbyte/s``...)."""
    scopes: dict[str, dict[str, float]] = json.loads(Path(filename).read_text())["scopes"]
    return scopes, list(metrics)


def print_tree(tree: Mapping[str, Mapping[str, float]], metrics: Sequence[str]) -> None:
    """One line a scope: each metric asked for, then the scope's name."""
    print("  ".join(f"{m:>12}" for m in metrics) + "  name")
    for name, row in tree.items():
        print("  ".join(f"{_metric(row, m):12.3f}" for m in metrics) + f"  {name}")


def _metric(row: Mapping[str, float], metric: str) -> float:
    """A metric of a scope: a time, a count, or a rate of a summed metric over its time
    (``tflop16/s`` from ``flops16``, ``tflop/s`` from every ``flops*``, ``gbyte/s`` from ``bytes``)."""
    seconds = row["time/ms"] / 1e3
    units = {"time/ms": row["time/ms"], "time/s": seconds, "time/us": row["time/ms"] * 1e3, "count": row["count"]}
    if metric in units:
        return units[metric]
    amount, _, per = metric.partition("/")
    for prefix, key, scale in (("tflop", "flops", 1e12), ("gflop", "flops", 1e9), ("tbyte", "bytes", 1e12),
                               ("gbyte", "bytes", 1e9)):
        if per == "s" and amount.startswith(prefix):
            suffix = amount[len(prefix):]
            total = row.get(key + suffix, 0.0) if suffix else sum(v for k, v in row.items() if k.startswith(key))
            return total / scale / seconds if seconds else 0.0
    raise UsageError(f"proton metric {metric!r}: tile_lang's viewer knows times, count and rates (name/s)")
