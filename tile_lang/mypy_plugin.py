"""A mypy plugin for Triton's spellings that a ParamSpec launcher cannot type on its own.

- Launch options as keywords, ``kernel[grid](x, n, BLOCK=1024, num_warps=8, num_stages=3)``: a
  launcher's ``__call__`` takes ``*P.args, **P.kwargs``, the kernel's own parameters, and a ParamSpec
  cannot be given extra keyword-only parameters. The plugin adds the fields of ``tl.Options`` (with
  their declared types) to each launch's signature, except one the kernel already has (a parameter
  named like an option takes the keyword, as at run time), and names the kernel in the launch's
  errors instead of ``"__call__" of "Launcher"``.
- String constexprs, ``ACTIVATION: tl.constexpr`` launched with ``ACTIVATION="relu"``: inside a
  kernel or ``@tl.func`` a bare ``constexpr`` is a ``ConstexprValue`` (an int that compares with a
  str), and the decorated kernel takes ``int | str`` for it.
- Module-level constants, ``LOG2_E = tl.constexpr(1.4426950408889634)``: mypy reads a call of the
  ``constexpr`` alias as ``int(v)``; the plugin types it as ``v`` (here a float), the value a
  kernel reads.
- A reduction's axis given as such a constexpr, ``tl.sum(x, axis=AXIS)``: the overloads type the
  result's rank from a literal axis (and reject one the input does not have); a constexpr's value
  is unknown to mypy, so each overload taking a literal axis takes it too, and the input's rank
  picks the result's.

Enable it with ``plugins = ["tile_lang.mypy_plugin"]`` in ``[tool.mypy]`` (docs/typing.md).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import (
    ARG_NAMED_OPT, ARG_POS, ARG_STAR, ARG_STAR2, CallExpr, Decorator, IndexExpr, MemberExpr, NameExpr, RefExpr,
    SymbolNode,
)
from mypy.plugin import AnalyzeTypeContext, FunctionContext, FunctionSigContext, MethodSigContext, Plugin
from mypy.types import (
    CallableType, FunctionLike, Instance, LiteralType, Parameters, Type, UnionType, get_proper_type,
)

LAUNCH = "tile_lang.kernel.Launcher.__call__"
CONSTEXPR = "tile_lang.signature.constexpr"
CONSTEXPR_VALUE = "tile_lang.signature.ConstexprValue"
DECORATORS = frozenset({"tile_lang.kernel.kernel", "tile_lang.func.func"})
CONSTEXPR_CALL = "builtins.int"  # what mypy calls for ``constexpr(v)``, the alias's target
AXIS_MODULES = ("tile_lang.ops.reduction.", "tile_lang.ops.aliases.")  # functions typed by a literal ``axis``


class TileLangPlugin(Plugin):
    """The hooks: launch signatures, bare constexpr annotations and axes, and the kernel decorators."""

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        return with_launch_options if fullname == LAUNCH else None

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return constexpr_value if fullname == CONSTEXPR else None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return with_constexprs_widened if fullname in DECORATORS else None

    def get_function_signature_hook(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        if fullname == CONSTEXPR_CALL:
            return constant_of_value
        return with_constexpr_axis if fullname.startswith(AXIS_MODULES) else None


def constexpr_value(ctx: AnalyzeTypeContext) -> Type:
    """A bare ``constexpr`` annotation as a kernel body sees it: ``int | ConstexprValue``, which takes an
    int default (``BLOCK: constexpr = 128``), is an int in arithmetic, and compares with a str."""
    return UnionType([ctx.api.named_type("builtins.int", []), ctx.api.named_type(CONSTEXPR_VALUE, [])])


def constant_of_value(ctx: FunctionSigContext) -> FunctionLike:
    """``tl.constexpr(v)`` typed ``(v) -> type of v``, so ``tl.constexpr(1.44)`` is a float; any other
    call of ``int`` keeps its signature."""
    call = ctx.context
    if not (isinstance(call, CallExpr) and isinstance(call.callee, RefExpr) and call.callee.fullname == CONSTEXPR
            and len(call.args) == 1 and call.arg_kinds == [ARG_POS]):
        return ctx.default_signature
    given = ctx.api.get_expression_type(call.args[0])
    return ctx.default_signature.copy_modified(arg_types=[given], arg_kinds=[ARG_POS], arg_names=[None],
                                               ret_type=given, variables=[])


def with_constexprs_widened(ctx: FunctionContext) -> Type:
    """``Kernel[P]`` / ``Func[P, T]`` with each ``ConstexprValue`` parameter of ``P`` taking ``int | str``,
    so a launch (or a call, or code forwarding ``P``) passes a plain int or a string."""
    decorated = get_proper_type(ctx.default_return_type)
    if not isinstance(decorated, Instance):
        return ctx.default_return_type
    given = UnionType([ctx.api.named_generic_type("builtins.int", []), ctx.api.named_generic_type("builtins.str", [])])

    def widen(typ: Type) -> Type:
        proper = get_proper_type(typ)
        return given if isinstance(proper, UnionType) and any(
            isinstance(item, Instance) and item.type.fullname == CONSTEXPR_VALUE
            for item in map(get_proper_type, proper.items)) else typ

    return decorated.copy_modified(args=[
        arg.copy_modified(arg_types=[widen(t) for t in arg.arg_types]) if isinstance(arg, Parameters) else arg
        for arg in decorated.args])


def _is_constexpr(typ: Type) -> bool:
    """Whether ``typ`` is a bare constexpr's type in a kernel (``int | ConstexprValue``)."""
    proper = get_proper_type(typ)
    items = proper.items if isinstance(proper, UnionType) else [proper]
    return any(isinstance(item, Instance) and item.type.fullname == CONSTEXPR_VALUE for item in map(get_proper_type, items))


def with_constexpr_axis(ctx: FunctionSigContext) -> FunctionLike:
    """One overload with its literal ``axis`` widened to the call's constexpr axis (see the module
    docstring); any other call keeps the overload as declared."""
    signature = ctx.default_signature
    if "axis" not in signature.arg_names:
        return signature
    index = signature.arg_names.index("axis")
    given = ctx.args[index]
    if len(given) != 1:
        return signature
    actual = ctx.api.get_expression_type(given[0])
    declared = get_proper_type(signature.arg_types[index])
    literal = any(isinstance(get_proper_type(t), LiteralType)
                  for t in (declared.items if isinstance(declared, UnionType) else [declared]))
    if not literal or not _is_constexpr(actual):
        return signature
    types = list(signature.arg_types)
    types[index] = UnionType([declared, actual])
    return signature.copy_modified(arg_types=types)


def with_launch_options(ctx: MethodSigContext) -> FunctionLike:
    """The kernel's parameters, then the options it does not have as keyword-only parameters.

    A launcher whose ParamSpec is not known here (``Kernel[...]``, or generic code forwarding
    ``*args: P.args, **kwargs: P.kwargs``) keeps its signature: it takes any keyword already.
    """
    launch = ctx.default_signature
    if any(kind in (ARG_STAR, ARG_STAR2) for kind in launch.arg_kinds):
        return launch
    taken = set(launch.arg_names)
    names: list[str | None] = []
    types: list[Type] = []
    for option, typ in _options(ctx):
        if option not in taken:
            names.append(option)
            types.append(typ)
    name, definition = _kernel(ctx) or (launch.name, launch.definition)
    return launch.copy_modified(
        arg_types=[*launch.arg_types, *types],
        arg_kinds=[*launch.arg_kinds, *(ARG_NAMED_OPT for _ in names)],
        arg_names=[*launch.arg_names, *names],
        name=name,
        definition=definition,
    )


def _options(ctx: MethodSigContext) -> list[tuple[str, Type]]:
    """(name, type) of each field ``tl.Options(...)`` takes, read from the dataclass ``__init__`` of
    the launcher's ``options`` attribute (so the options are declared once, in tile_lang.kernel)."""
    launcher = get_proper_type(ctx.type)
    held = launcher.type.get("options") if isinstance(launcher, Instance) else None
    options = get_proper_type(held.type) if held is not None and held.type is not None else None
    init = options.type.get_method("__init__") if isinstance(options, Instance) else None
    signature = get_proper_type(init.type) if init is not None and init.type is not None else None
    if not isinstance(signature, CallableType):
        return []
    return [(name, typ) for name, typ in zip(signature.arg_names[1:], signature.arg_types[1:]) if name is not None]


def _kernel(ctx: MethodSigContext) -> tuple[str, SymbolNode | None] | None:
    """The name and definition of the kernel of a launch written ``add_kernel[grid](...)`` or
    ``mod.add_kernel[grid](...)``, so errors say ``"add_kernel"`` and note where it is defined."""
    call = ctx.context
    if isinstance(call, CallExpr) and isinstance(call.callee, IndexExpr):
        kernel = call.callee.base
        if isinstance(kernel, (NameExpr, MemberExpr)):
            return kernel.name, kernel.node.func if isinstance(kernel.node, Decorator) else None
    return None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class, for any mypy version this package supports."""
    return TileLangPlugin
