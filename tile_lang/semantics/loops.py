"""The rules of loops and branches, written once for the compiler and the reference: what a
``range`` call binds, the type of a runtime loop's index, its step's one constraint, which values
a loop can carry from one iteration to the next (and which names it keeps to itself), and the one
type a runtime ``if`` leaves a name."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tile_lang.dtypes import I32, DType, promote
from tile_lang.ops import iterators
from tile_lang.ops import forms
from tile_lang.ops.forms import BlockType, RangeCall
from tile_lang.semantics.base import SemanticError, applies, python

ZERO_STEP = "range() arg 3 must not be zero"
"""Python's message for a zero step, which both backends give: at compile time for a constant
step, when the loop is reached for a runtime one (a device assertion in the generated CUDA)."""


RANGE_HINTS = frozenset({"num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten", "warp_specialize"})
"""``tl.range``'s hints: Triton's front end takes them under Python's ``range`` too, and ignores them
there (Unsloth's ``range(E, flatten=FLATTEN)``); so does tile_lang."""


@applies(forms.range_call)
def range_call(callee: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> RangeCall | None:
    """How ``callee(*args, **kwargs)`` binds when ``callee`` is one of the loop iterators (None
    for any other callee): ``range`` takes 1 to 3 positional arguments, ``tl.range`` also its
    keywords (``num_stages`` is accepted, the launch's applies), as in Python and Triton."""
    if callee is builtins.range:
        unknown = sorted(set(kwargs) - RANGE_HINTS)
        if unknown:
            raise SemanticError(f"range got an unexpected keyword argument {unknown[0]!r} (it takes tl.range's hints)")
        if not 1 <= len(args) <= 3:
            raise SemanticError(f"range expected 1 to 3 positional arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        return RangeCall(start, stop, step, False)
    if callee is iterators.range or callee is iterators.static_range:
        r = python(iterators.range, *args, **kwargs)  # a bound may be a tensor here
        unroll = r.loop_unroll_factor
        if unroll is not None and (isinstance(unroll, bool) or not isinstance(unroll, int)):
            shown = repr(unroll) if isinstance(unroll, (bool, int, float, str, type(None))) else "a runtime value"
            raise SemanticError(f"loop_unroll_factor must be a compile-time int, got {shown}")
        return RangeCall(r.start, r.end, r.step, callee is iterators.static_range, unroll)
    return None


@applies(forms.range_step)
def constant_step(step: int) -> int:
    """A compile-time step: any int but 0."""
    if step == 0:
        raise SemanticError(ZERO_STEP)
    return step

@applies(forms.loop_index)
def index_dtype(bounds: Iterable[DType]) -> DType:
    """The index of a runtime loop (``range``, ``tl.range``) with bounds of these dtypes: an
    i32 scalar, or the wider integer type of a bound, as in Triton (``tl.static_range``'s is a
    Python int: that loop is unrolled)."""
    dtype = I32
    for bound in bounds:
        dtype = promote(dtype, bound)
    return dtype


def type_text(value: BlockType) -> str:
    """``f32`` for a scalar, ``f32[32,16]`` for a block, as messages show types."""
    dtype, shape = value
    name = repr(dtype).removeprefix("tl.")
    return name if not shape else f"{name}[{','.join(map(str, shape))}]"


@applies(forms.branch_types)
def branch_types(name: str, then: BlockType, orelse: BlockType) -> None:
    """Both sides of a runtime ``if`` leave ``name`` one dtype and shape: the code after it is
    compiled once for every program (``if c: x = x.to(tl.float16)`` on an f32 ``x`` is an
    error, as in Triton: convert on both sides, or use another name)."""
    if then != orelse:
        raise SemanticError(f"{name!r} is {type_text(then)} on one branch and {type_text(orelse)} on the other")


@applies(forms.loop_settles)
def loop_settles(name: str, carried: DType, inside: DType) -> DType:
    """A carried value widens to what the body gives it (``acc = acc + x`` from f16 zeros to f32),
    as the compiler's carried types do (Triton 3.6 refuses any change of a carried dtype: this is
    more permissive); a body giving it a narrower dtype than it is carried in
    (``p = p.to(tl.float16)`` on an f32 ``p``) never settles, which both reject."""
    widened = promote(carried, inside)
    if inside != carried and widened == carried:
        raise SemanticError(f"loop-carried values do not settle on a type: {name}")
    return widened


@applies(forms.raised)
def raised(source: str) -> SemanticError:
    """A ``raise`` in a kernel is legal Python only where no compile reaches it: Triton compiles a
    branch a constexpr leaves out not at all (``if dtype == tl.float32: ... else: raise ...``), and
    so do both backends; reached, it is this error at its line (a device cannot raise)."""
    return SemanticError(f"a kernel cannot raise ({source!r} is reached); a raise may stand only in a branch "
                         "a constexpr leaves out")


@applies(forms.loop_local)
def loop_local(name: str, line: int) -> SemanticError:
    """A runtime loop carries only the names bound before it, as Triton's front end does (a name
    first bound in the body is not defined after the loop there); here a ``for``'s index with no
    earlier binding is the loop's own too (Triton reads an undefined value after the loop). So
    whatever the trip count, the compiler and the reference reject reading such a name after the
    loop, or in the body before an iteration binds it; a ``tl.static_range`` loop, unrolled,
    keeps Python's names."""
    return SemanticError(f"name {name!r} is bound only inside the loop at line {line}; bind it before the loop "
                         "to read it after the loop or in a later iteration")


@applies(forms.branch_own)
def branch_own(body: Sequence[ast.stmt], orelse: Sequence[ast.stmt]) -> frozenset[str]:
    """The names bound on one side of a runtime ``if`` only, where neither side ends in a
    ``return`` (the names the side that goes on binds flow out of an ``if`` whose other side
    returns, as in Python). Triton's front end drops them after the ``if`` (a NameError at a
    read); both backends reject reading one unbound before the ``if`` after it, whatever side
    each program took, so that a kernel is legal or not whatever its data."""
    if _returns(body) or _returns(orelse):
        return frozenset()
    return frozenset(_bound(body) ^ _bound(orelse))


@applies(forms.branch_local)
def branch_local(name: str, line: int) -> SemanticError:
    """Reading a name a runtime ``if`` keeps to itself (:func:`branch_own`) after it."""
    return SemanticError(f"name {name!r} is bound only on one side of the runtime if at line {line}; bind it "
                         "before the if (or on both sides) to read it after")


def _returns(stmts: Sequence[ast.stmt]) -> bool:
    """Whether a block always ends in a ``return``: one of its statements, or an ``if`` both of
    whose sides do."""
    return any(isinstance(s, ast.Return) or isinstance(s, ast.If) and _returns(s.body) and _returns(s.orelse)
               for s in stmts)


def _bound(stmts: Sequence[ast.stmt]) -> set[str]:
    """The names a block binds, its nested blocks' included."""
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


@applies(forms.loop_carried)
def loop_carried(name: str, before: BlockType | None, inside: BlockType) -> SemanticError | None:
    """Whether a runtime loop can carry ``name``, bound to a value of type ``before`` before
    the loop (None: a Python number, which takes the loop's type) and rebound to one of type
    ``inside`` in its body: None when it can (a carried value keeps its shape; its dtype widens
    to both), else the error that reading ``name`` raises where its shape depends on the
    iteration (in the body before the rebinding, or after the loop)."""
    if before is None or before[1] == inside[1]:
        return None
    return SemanticError(f"{name!r} is {type_text(before)} before the loop and {type_text(inside)} inside it, so "
                         "its value here depends on the iteration; keep its shape in the loop or use another name")
