"""A dtype chosen by a branch, for :mod:`tile_lang_mypy.plugin`.

``if casting_mode == LLAMA: X_row = X_row.to(tl.float32)`` leaves ``X_row`` a *choice* after the
``if``: a union of blocks of one rank that differ only in dtype (``Tensor[Float[W], R1] |
Tensor[f32, R1]``), or of dtypes (``cdtype = tl.float32 if ... else x_ptr.dtype.element_ty``). mypy
checks an operation on a union for every member, and for every pair of members when both operands are
unions, so ``X_row * rstd`` fails on the pairs no mode computes (mypy does not relate two ``if``\\ s on
one constexpr). Here an operator, builtin or method given a choice is checked once per choice of
members (one member of each choice, the other arguments as given): it is accepted when one choice is
legal, and its result is the union of the legal choices' results. What this stops catching, a mistake
in one mode only, is what ``tile-lang check`` compiles each mode for (docs/typing.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS, CallExpr, ComparisonExpr, ConditionalExpr, Context, Expression, IndexExpr, ListExpr, MemberExpr, NameExpr,
    OpExpr, SliceExpr, TempNode, TupleExpr, UnaryExpr,
)
from mypy.operators import reverse_op_methods
from mypy.plugin import FunctionSigContext, MethodSigContext
from mypy.subtypes import is_same_type, is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType, CallableType, FunctionLike, Instance, ProperType, Type, TypeType, TypeVarType, UninhabitedType, UnionType,
    get_proper_type,
)

TENSOR = "tile_lang.tensor.Tensor"
DTYPE = "tile_lang.dtypes.Dtype"
MOST_CHOICES = 16  # combinations checked for one call; beyond, the call is checked as mypy checks it
Sig = TypeVar("Sig", FunctionSigContext, MethodSigContext)
_pairs: dict[tuple[str, Type, Type], Type | None] = {}  # (operator, left, right) -> its result, None if illegal
_inside = [False]  # while a pair is checked, the operator hooks check it as given


def members(typ: Type | None) -> list[ProperType] | None:
    """The members of a choice (blocks of one rank differing in dtype, or dtypes), else None."""
    proper = get_proper_type(typ) if typ is not None else None
    if not isinstance(proper, UnionType):
        return None
    items = [get_proper_type(item) for item in proper.items]
    known = [i for i in items if not isinstance(i, AnyType)]  # an Any (an error's, an unknown's) fits any choice
    blocks = [i for i in known if isinstance(i, Instance) and i.type.fullname == TENSOR and len(i.args) == 2]
    ranks = [rank for b in blocks if not isinstance(rank := get_proper_type(b.args[1]), AnyType)]  # Any: a list shape
    if blocks and len(blocks) == len(known) and all(is_same_type(rank, ranks[0]) for rank in ranks):
        return items
    return items if known and all(_is_dtype(item) for item in known) else None


def _is_dtype(typ: ProperType) -> bool:
    """``type[f32]`` or the class object ``tl.float32`` (a constructor to mypy)."""
    if isinstance(typ, CallableType) and typ.is_type_obj():
        typ = TypeType.make_normalized(typ.ret_type)
    return isinstance(typ, TypeType) and isinstance(typ.item, Instance) and typ.item.type.has_base(DTYPE)


def _may_choose(api: TypeChecker, expr: Expression) -> bool:
    """Whether an argument may be a choice: it names one or holds a conditional expression. Found from its
    syntax and its names' types, so only such arguments are checked again (checking a call again would
    check its own arguments again, and so on down)."""
    if isinstance(expr, ConditionalExpr):
        return True
    if isinstance(expr, NameExpr):
        return members(api.get_expression_type(expr)) is not None
    return any(_may_choose(api, part) for part in _parts(expr))


def _parts(expr: Expression) -> list[Expression]:
    """The sub-expressions of the forms a kernel's arguments take (others: none)."""
    if isinstance(expr, CallExpr):
        return [expr.callee, *expr.args]
    if isinstance(expr, (MemberExpr, UnaryExpr)):
        return [expr.expr]
    if isinstance(expr, OpExpr):
        return [expr.left, expr.right]
    if isinstance(expr, ComparisonExpr):
        return list(expr.operands)
    if isinstance(expr, IndexExpr):
        return [expr.base, expr.index]
    if isinstance(expr, (TupleExpr, ListExpr)):
        return list(expr.items)
    if isinstance(expr, SliceExpr):
        return [part for part in (expr.begin_index, expr.end_index, expr.stride) if part is not None]
    return []


def call_checked(ctx: Sig, inner: Callable[[Sig], FunctionLike]) -> FunctionLike:
    """A builtin's or method's signature (``inner``'s) for a call given a choice: checked per choice of
    members; the signature of the first legal one taking the choices as given and returning the legal
    ones' results. Calls without a choice, or with none legal (reported as before), keep ``inner``'s."""
    call, api, signature = ctx.context, ctx.api, ctx.default_signature
    if not (isinstance(call, CallExpr) and isinstance(api, TypeChecker) and isinstance(signature, CallableType)):
        return inner(ctx)
    quick = [api.get_expression_type(arg) if _may_choose(api, arg) else None for arg in call.args]
    chosen = {i: (typ, found) for i, typ in enumerate(quick) if typ is not None and (found := members(typ)) is not None}
    combinations = 1
    for _, found in chosen.values():
        combinations *= len(found)
    if not chosen or combinations > MOST_CHOICES:
        return inner(ctx)
    lists = [found for _, found in chosen.values()]
    legal = _legal_picks(ctx, inner, list(chosen), lists)
    for k in range(len(lists)) if not legal else ():  # one choice's members standing for a type variable
        for variable in _variables(api):  # each of the kernel's (fp8's A in Float[W], C in Float[WC])
            if not legal:
                legal += _legal_picks(ctx, inner, list(chosen), [_generic(found, variable) if j == k else found
                                                                 for j, found in enumerate(lists)])
    if not legal:
        return inner(ctx)
    first = legal[0][1]
    formals = {id(a): f for f, actuals in enumerate(ctx.args) for a in actuals}
    arg_types = list(first.arg_types)
    for i in chosen:
        if id(call.args[i]) in formals and formals[id(call.args[i])] < len(arg_types):
            arg_types[formals[id(call.args[i])]] = _as_given(chosen[i][0], api)
    return first.copy_modified(arg_types=arg_types, ret_type=make_simplified_union([r for r, _ in legal]), variables=[])


def _as_given(choice: Type, api: TypeChecker) -> Type:
    """The parameter type taking a choice already checked member by member: the choice itself, but for
    a choice of dtypes, which mypy would take as the context to infer the argument again (``gx.to(x.dtype)``
    with ``x`` a choice: ``x.dtype``'s ``__get__`` overloads, inferred against a union of dtypes, fail):
    there ``object``, a context that constrains nothing (the members were checked already)."""
    found = members(choice)
    return api.named_type("builtins.object") if found is not None and all(
        _is_dtype(m) for m in found if not isinstance(m, AnyType)) else choice


def _legal_picks(ctx: Sig, inner: Callable[[Sig], FunctionLike], at: list[int],
                 lists: list[list[ProperType]]) -> list[tuple[Type, CallableType]]:
    """(result, inferred signature) of each legal choice of members (one of each list, for the call's
    arguments ``at``); the other arguments as written, so they are inferred in their context."""
    call, api = ctx.context, ctx.api
    assert isinstance(call, CallExpr) and isinstance(api, TypeChecker)
    legal: list[tuple[Type, CallableType]] = []
    for pick in itertools.product(*lists):
        nodes: dict[int, Expression] = {id(call.args[i]): TempNode(member, context=call.args[i]) for i, member in zip(at, pick)}
        args = [[nodes.get(id(a), a) for a in formal] for formal in ctx.args]
        with api.msg.filter_errors() as errors, api.local_type_map:
            picked = inner(ctx._replace(args=args))
            result, inferred = api.expr_checker.check_call(
                picked, [nodes.get(id(a), a) for a in call.args], call.arg_kinds, call, call.arg_names)
        inferred = get_proper_type(inferred)
        if not errors.has_new_errors() and isinstance(inferred, CallableType) and not _unknown(pick):
            legal.append((result, inferred))
    return legal


def _variables(api: TypeChecker) -> list[TypeVarType]:
    """The type variables of the kernel or helper being checked (its ``W`` of ``Pointer[Float[W]]``)."""
    function = api.scope.current_function()
    signature = function.type if function is not None else None
    return [v for v in signature.variables if isinstance(v, TypeVarType) and not v.values] if isinstance(
        signature, CallableType) else []


def _generic(found: list[ProperType], variable: TypeVarType) -> list[ProperType]:
    """The members with each concrete width ``variable`` may be (``Tensor[f16, R2]`` as ``Tensor[Float[W],
    R2]``): a branch choosing ``tl.float16`` or ``tl.float8e4nv`` by the pointer's dtype
    (``if c_ptr.dtype.element_ty == tl.float8e4nv``) picks the one the launch gives ``W``."""
    generic: list[ProperType] = []
    for member in found:
        element = get_proper_type(member.args[0]) if isinstance(member, Instance) and member.type.fullname == TENSOR else None
        width = get_proper_type(element.args[0]) if isinstance(element, Instance) and len(element.args) == 1 else None
        fits = isinstance(width, Instance) and is_subtype(width, variable.upper_bound)
        if isinstance(member, Instance) and isinstance(element, Instance) and fits:
            member = member.copy_modified(args=[element.copy_modified(args=[variable]), member.args[1]])
        if not any(is_same_type(member, g) for g in generic):
            generic.append(member)
    return generic


def operator_checked(ctx: MethodSigContext, method: str, inner: Callable[[MethodSigContext], FunctionLike]) -> FunctionLike:
    """A block operator (``method``, e.g. ``__mul__``) on a choice, ``X_row * rstd``: mypy checks it for
    each member of the left operand (``ctx.type``) with the right one, and each pair if that fails; a
    pair no legal choice makes is given the result ``Never`` (which the union of results drops), the
    others their own result, when some pair is legal. Otherwise ``inner``'s signature."""
    operands = _operands(ctx.context)
    api, signature = ctx.api, ctx.default_signature
    if method not in reverse_op_methods:
        return inner(ctx)  # a reflected operator (``__rmul__``): its receiver is the right operand
    if _inside[0] or operands is None or not isinstance(api, TypeChecker) or not isinstance(signature, CallableType) \
            or len(ctx.args) != 1 or len(ctx.args[0]) != 1:
        return inner(ctx)
    left, right = (get_proper_type(api.lookup_type_or_none(operand)) for operand in operands)
    lefts, rights = members(left), members(right)
    receiver = get_proper_type(ctx.type)
    if lefts is None and rights is None or not any(is_same_type(receiver, m) for m in lefts or [left or receiver]):
        return inner(ctx)  # no choice, or a reflected operator (its receiver is the right operand)
    arg = ctx.args[0][0]
    given = api.lookup_type_or_none(arg) if not isinstance(arg, TempNode) else arg.type
    if given is None:
        return inner(ctx)
    sides = (lefts or [receiver], rights or [get_proper_type(given)])
    results = _pairs_of(api, method, sides, ctx.context, None, None)
    stand_ins = [(side, variable) for side, found in enumerate((lefts, rights)) if found is not None
                 for variable in _variables(api)]
    for side, variable in stand_ins if _none_legal(results) else []:
        results = _pairs_of(api, method, sides, ctx.context, side, variable)  # one choice standing for W
        if not _none_legal(results):
            break
    if _none_legal(results):
        return inner(ctx)
    mine = [results.get((receiver, r)) for r in members(given) or [get_proper_type(given)]]
    returned = make_simplified_union([r for r in mine if r is not None]) if any(mine) else UninhabitedType()
    return signature.copy_modified(arg_types=[given], arg_kinds=[ARG_POS], arg_names=[None], ret_type=returned,
                                   variables=[])


def _unknown(pick: tuple[ProperType, ...]) -> bool:
    """Whether a choice of members has an Any: legal, but no evidence that the operation is."""
    return any(isinstance(member, AnyType) for member in pick)


def _operands(context: Context) -> tuple[Expression, Expression] | None:
    """The two operands of a binary operator or a single comparison."""
    if isinstance(context, OpExpr):
        return context.left, context.right
    if isinstance(context, ComparisonExpr) and len(context.operands) == 2:
        return context.operands[0], context.operands[1]
    return None


def _none_legal(results: dict[tuple[ProperType, ProperType], Type | None]) -> bool:
    return all(result is None for pick, result in results.items() if not _unknown(pick))


def _pairs_of(api: TypeChecker, method: str, sides: tuple[list[ProperType], list[ProperType]], context: Context,
              generic: int | None, variable: TypeVarType | None) -> dict[tuple[ProperType, ProperType], Type | None]:
    """Each pair's result (:func:`_pair`), by its members; the members of side ``generic`` (0 the left,
    1 the right) standing for ``variable`` (:func:`_generic`), the other side's as they are."""
    def member(typ: ProperType, side: int) -> ProperType:
        return _generic([typ], variable)[0] if side == generic and variable is not None else typ

    return {(a, b): _pair(api, method, member(a, 0), member(b, 1), context) for a in sides[0] for b in sides[1]}


def _pair(api: TypeChecker, method: str, left: ProperType, right: ProperType, context: Context) -> Type | None:
    """The result of ``left <method> right`` for two plain types, None where it is an error (cached)."""
    key = (method, left, right)
    if key not in _pairs:
        with _checking_pair(), api.msg.filter_errors() as errors, api.local_type_map:
            result, _ = api.expr_checker.check_op_reversible(method, left, TempNode(left, context=context), right,
                                                             TempNode(right, context=context), context)
        _pairs[key] = None if errors.has_new_errors() else result
    return _pairs[key]


@contextmanager
def _checking_pair() -> Iterator[None]:
    _inside[0] = True
    try:
        yield
    finally:
        _inside[0] = False
