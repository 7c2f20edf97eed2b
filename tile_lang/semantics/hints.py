"""Hint rules: ``tl.multiple_of``, ``tl.max_contiguous`` and ``tl.max_constancy`` promise facts
about an integer or pointer block, one positive compile-time int per axis. The reference checks
the promise on the values; the compiler's axis info relies on it. And ``tl.device_print``'s prefix, which both
backends print as Triton normalises it."""

from __future__ import annotations

from typing import Any

from tile_lang.builtin import builtin_of
from tile_lang.ops import debug as tldebug
from tile_lang.ops import forms
from tile_lang.semantics.base import Args, Block, SemanticError, applies, int_tuple, operand, rule

HINTS = frozenset({"multiple_of", "max_contiguous", "max_constancy"})


@applies(forms.discarded_hint)
def discarded(callee: object) -> bool:
    """Whether a call of ``callee`` as an expression statement (its result discarded) is a hint,
    which then promises nothing, as in Triton: the reference checks its arguments (:func:`hint`)
    but not the promise (tutorial 08's ``tl.multiple_of(a_ptrs, [16, 16])``); a hint whose result
    is used keeps its check. The compiler drops a discarded hint as dead code."""
    op = builtin_of(callee)
    return op is not None and op.name in HINTS


def hint(name: str, x: Block, given: object) -> tuple[int, ...]:
    """The per-axis values of the hint ``tl.<name>`` on ``x`` (Triton: exactly ``max(1, rank)``
    of them; a scalar counts as a block of one)."""
    what = f"tl.{name}"
    if not (x.dtype.is_int or x.dtype.is_pointer):
        raise SemanticError(f"{what} needs an integer or pointer block, got {x}")
    out = int_tuple(given, what, "values")
    if len(out) != max(1, x.rank) or any(v < 1 for v in out):
        raise SemanticError(f"{what}: {given!r} does not give one positive int per axis of {x}")
    return out


def _hint(name: str, a: Args) -> dict[str, Any]:
    """``per_axis``: the hint's values, one per axis (a Python int input is a scalar block)."""
    given = a["input"]
    x = operand(given) if isinstance(given, int) and not isinstance(given, bool) else given
    if not isinstance(x, Block):
        raise SemanticError(f"tl.{name} needs an integer or pointer block, got {type(x).__name__}")
    return {"per_axis": hint(name, x, a["values"])}


rule(tldebug.multiple_of)(lambda a: _hint("multiple_of", a))
rule(tldebug.max_contiguous)(lambda a: _hint("max_contiguous", a))
rule(tldebug.max_constancy)(lambda a: _hint("max_constancy", a))


@rule(tldebug.device_print)
def _device_print(a: Args) -> dict[str, Any]:
    """``prefix`` as Triton prints it: with arguments it ends in ": "; a long one starts with " "."""
    prefix, has_args = str(a["prefix"]), bool(a["args"])
    if has_args and not prefix.endswith(" "):
        prefix += " "
    if has_args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    return {"prefix": " " + prefix if len(prefix) > 2 and not prefix.startswith(" ") else prefix}
