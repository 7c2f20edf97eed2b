"""A mypy plugin for Triton's spellings that a ParamSpec launcher cannot type on its own.

- Launch options as keywords, ``kernel[grid](x, n, BLOCK=1024, num_warps=8, num_stages=3)``: a
  launcher's ``__call__`` takes ``*P.args, **P.kwargs``, the kernel's own parameters, and a ParamSpec
  cannot be given extra keyword-only parameters. The plugin adds the fields of ``tl.Options`` (with
  their declared types) to each launch's signature, except one the kernel already has (a parameter
  named like an option takes the keyword, as at run time), and names the kernel in the launch's
  errors instead of ``"__call__" of "Launcher"``.
- Arrays a launch adopts without copying, ``kernel[grid](torch_tensor, ...)``: each ``Pointer[D]``
  parameter of a launch also takes a ``torch.Tensor`` or a ``cupy.ndarray`` (where the checked
  program imports torch / cupy). A tensor's dtype is not part of its static type, so any pointer
  takes one and the launch checks its dtype when it runs.
- String constexprs, ``ACTIVATION: tl.constexpr`` launched with ``ACTIVATION="relu"``: inside a
  kernel or ``@tl.func`` a bare ``constexpr`` is a ``ConstexprValue`` (an int that compares with a
  str), and the decorated kernel takes ``int | str`` for it. One defaulting to a str, a float or an int
  tuple (Liger's ``reduction: tl.constexpr = "batchmean"``) is that type, as for a dtype default.
- Scalar parameters that convert, ``eps: tl.FloatScalar`` / ``n: tl.IntScalar`` (a float or int with
  ``.to``, as Triton's scalars): the decorated kernel takes a plain float / int for them.
- Local constants, ``value: tl.constexpr = float("-inf")``: typed by their value where it is a float
  constant expression, a str or a tuple literal; annotated again in the same function (in each branch,
  FlagGems' ``get_dtype_min``), one constant, where mypy alone reports ``no-redef``.
- Module-level constants, ``LOG2_E = tl.constexpr(1.4426950408889634)``: mypy reads a call of the
  ``constexpr`` alias as ``int(v)``; the plugin types it as ``v`` (here a float), the value a
  kernel reads.
- ``tl.store(ptrs, value)`` with a value of another dtype or rank than the pointers: mypy can only
  say it "cannot infer" a type parameter of ``store``; the plugin reports
  ``tl.store: value is f32 but the pointer is to f16`` (or the two ranks) instead; likewise the
  atomics (``tl.atomic_add: value is ...``), ``tl.where: x is f32 but y is f16`` and
  ``tl.dot: input is f16 but other is f32`` (``other may be f32 or f16`` for a dtype chosen by a branch no
  member of which fits). A value holding the Any of an error already reported (``m.to(tl.float64)`` of a
  Python float joined with a block: mypy's ``Item "float" ... has no attribute "to"``, which no hook reaches)
  is read without it, so the builtin still names its own mistake.
- A Python number joined with blocks of one rank, a loop's ``m = float("-inf")`` then ``m = m_new`` (or
  ``acc = 0.0`` then ``acc += row``): every builtin given the name, or arithmetic on it
  (``rsqrt(var_sum * inv_n + eps)``), takes it as its block, as the run time does.
- A non-bool ``mask`` (``tl.load``, ``tl.store``, the atomics) or ``tl.where`` condition, and a float-only
  builtin (``tl.exp``) given an int block: ``tl.load: mask is i32, not a bool block``, ``tl.exp: x is i32,
  needs a floating-point block``, at the argument's line, instead of mypy's "No overload variant" or a
  "Need type annotation" for the result.
- Python's ``range`` in a kernel given ``tl.range``'s hints (``range(E, flatten=FLATTEN)``): Triton's front
  end takes and ignores them; so does the signature. Given a rank-0 int block for a bound, its index is an
  ``IntScalar`` (an int with ``.to``, a rank-0 block at run time).
- Python's ``min``/``max`` of kernel values, ``min(row_start + n, n_rows)`` or ``max(x, 0.0)`` on a
  block: typed as the block the run time computes with ``tl.minimum``/``tl.maximum``, as Triton does.
- ``tl.maximum``, ``tl.minimum``, ``tl.clamp`` and ``tl.fma`` as Triton 3.6 types them: bf16 compares in
  f32 (not in ``tl.fma``), and a Python number is a tensor of its own dtype first, so ``tl.maximum(h, 0.0)``
  of an f16 block is f32 and ``tl.minimum(k, 1)`` of an i8 block i32 (their overloads type the rest, and
  their errors).
- ``tl.dtype`` as an annotation, ``output_dtype: tl.dtype = y_ptr.dtype.element_ty``: a dtype not known
  statically, as a bare constexpr holding one (``x.to(output_dtype)`` keeps ``x``'s rank).
- ``x.to(dtype)`` re-bound to a name of another dtype (``X_row = X_row.to(tl.float32)`` in a kernel
  generic over ``W``): mypy infers ``dtype`` from the variable's type and rejects ``tl.float32`` as
  not ``type[Float[W]]``; the plugin types the call by its argument, so the error is the readable
  assignment error (``expression has type "Tensor[Float[W32], R1]", variable has type ...``). A bare
  constexpr holding a dtype, ``.to(X_dtype)``, gives a block of that (unknown) dtype and the same rank.
- A dtype chosen by a branch on a constexpr, ``if casting_mode == LLAMA: X_row = X_row.to(tl.float32)``:
  the name is a union of blocks differing only in dtype afterwards, which mypy checks member by member
  (and pair by pair), so ``X_row * rstd`` fails on pairs no mode computes; :mod:`tile_lang_mypy.choices`
  checks such an operator, builtin or store per choice of members and accepts it where one is legal.
- A reduction's axis given as such a constexpr, ``tl.sum(x, axis=AXIS)``: the overloads type the
  result's rank from a literal axis (and reject one the input does not have); a constexpr's value
  is unknown to mypy, so each overload taking a literal axis takes it too, and the input's rank
  picks the result's. A literal axis the input's rank lacks (``tl.cumsum(x, axis=1)`` on a rank-1
  block, also where an overload takes any ``int``) is reported as the run time does.
- A kernel scalar's arithmetic converted, ``(tl.program_id(1) // H).to(tl.int64)``: ``pid // H`` is an
  ``int`` to mypy, which has no ``.to``; where the result is the receiver of ``.to`` / ``.cast``, or is
  assigned to a name its function converts (``off_z = off_hz // H``, then ``off_z.to(tl.int64)``; found
  in the file's syntax), it is typed as the ``IntScalar`` it is at run time. Elsewhere it stays an
  ``int``, so a name bound to it (``start = pid * BLOCK``) may still be re-bound to ``0``.
- A combine function generic over its dtype, ``tl.reduce(x, 0, mul)`` with ``@tl.func def mul(a:
  Tensor[Float[W], R0], ...)``: mypy leaves the helper's own type variables unsolved in the ``Func``
  value; the plugin instantiates them from the block's element type and checks the result fits.
- Constexprs set by ``@tl.autotune`` configs or ``@tl.heuristics``: the wrapper's launch takes them as
  optional, so the kernel needs no dummy default for them (``BLOCK: constexpr`` rather than
  ``BLOCK: constexpr = 64``). Their names are the keys of a literal list of ``tl.Config({...})``
  (or of the heuristics dict); configs built otherwise make every bare constexpr of the decorated
  kernel optional.

Enable it with ``plugins = ["tile_lang_mypy"]`` in ``[tool.mypy]`` (docs/typing.md).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from mypy import errorcodes
from mypy.checker import TypeChecker
from mypy.checkexpr import has_any_type
from mypy.expandtype import expand_type
from mypy.nodes import (
    ARG_NAMED_OPT, ARG_POS, ARG_STAR, ARG_STAR2, CallExpr, Decorator, FuncDef, IndexExpr, MemberExpr, NameExpr, RefExpr,
    OverloadedFuncDef, SymbolNode, TypeAlias, TypeInfo,
)
from mypy.nodes import ARG_NAMED, ARG_OPT, Context, DictExpr, Expression, FloatExpr, ListExpr, StrExpr, TupleExpr, UnaryExpr
from mypy.nodes import AssignmentStmt, Block, ClassDef, ConditionalExpr, IntExpr, OpExpr, Var
from mypy.plugin import (
    AnalyzeTypeContext, AttributeContext, CheckerPluginInterface, FunctionContext, FunctionSigContext, MethodContext,
    MethodSigContext, Plugin, ReportConfigContext,
)
from mypy.subtypes import is_same_type, is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType, CallableType, FunctionLike, Instance, LiteralType, NoneType, Overloaded, Parameters, ProperType, Type,
    TypeOfAny, TypeType,
    TypeVarId,
    TupleType, TypeVarType, UnboundType, UninhabitedType, UnionType, get_proper_type,
)

from tile_lang_mypy import choices

LAUNCH = "tile_lang.kernel.Launcher.__call__"
CONSTEXPR = "tile_lang.signature.constexpr"
CONSTEXPR_VALUE = "tile_lang.signature.ConstexprValue"
DTYPE_HINT = "tile_lang.signature.DtypeHint"  # ``tl.dtype`` as an annotation
DECORATORS = frozenset({"tile_lang.kernel.kernel", "tile_lang.func.func"})
CONSTEXPR_CALL = "builtins.int"  # what mypy calls for ``constexpr(v)``, the alias's target
AXIS_MODULES = ("tile_lang.ops.reduction.", "tile_lang.ops.aliases.")  # functions typed by a literal ``axis``
STORE = "tile_lang.ops.memory.store"
WHERE = "tile_lang.ops.math.where"
DOT = "tile_lang.ops.linalg.dot"
ATOMICS = frozenset(f"tile_lang.ops.atomic.atomic_{op}" for op in ("add", "max", "min", "and", "or", "xor", "xchg"))  # (ptr, val)
HINT_OPTIONS = ("cache_modifier", "eviction_policy")  # string options of load/store a bare constexpr may hold
COMBINING = frozenset({"tile_lang.ops.reduction.reduce", "tile_lang.ops.reduction.associative_scan"})  # take a combine_fn
FUNC = "tile_lang.func.Func"
AUTOTUNE, CONFIG = "tile_lang.autotune.autotune", "tile_lang.autotune.Config"
WRAPPER_DECORATORS = {"tile_lang.autotune.AutotuneDecorator": AUTOTUNE,  # what each decorator class is made by
                      "tile_lang.autotune.HeuristicsDecorator": "tile_lang.autotune.heuristics"}
SCALARS = {"tile_lang.signature.IntScalar": "builtins.int", "tile_lang.signature.FloatScalar": "builtins.float"}
SCALARS_FLOAT = "tile_lang.signature.FloatScalar"
FLOAT_OPERATORS = frozenset({"+", "-", "*", "/", "//", "%", "**"})  # a float operand makes a float constant
TENSOR = "tile_lang.tensor.Tensor"
RANKS = {f"tile_lang.tensor.R{n}": n for n in range(4)}  # a block's rank type: its number of axes
POINTER = "tile_lang.tensor.Pointer"
DTYPE = "tile_lang.dtypes.Dtype"
CONVERSIONS = frozenset({f"{owner}.{name}" for owner in (TENSOR, "tile_lang.tensor.Converts", "tile_lang.signature.FloatScalar",
                                                        "tile_lang.signature.IntScalar") for name in ("to", "cast")})  # typed by their dtype
WIDTHS = {"W8": "8", "W16": "16", "W32": "32", "W64": "64", "WBF16": "bf16", "WE4M3": "8e4m3", "WE5M2": "8e5m2",
          "WE4B15": "8e4b15", "WE4B8": "8e4b8", "WE5B16": "8e5b16"}
CATEGORIES = {"Float": "f", "Int": "i", "UInt": "u"}
LIST_SHAPES = {"tile_lang.ops.creation.zeros": 0, "tile_lang.ops.creation.full": 0, "tile_lang.ops.shape.reshape": 1,
               "tile_lang.ops.shape.view": 1, f"{TENSOR}.reshape": 0, f"{TENSOR}.view": 0}  # the shape's position
EXTREMA = frozenset({"builtins.min", "builtins.max"})  # Python's, on kernel values: tl.minimum, tl.maximum
# builtins whose Python numbers are tensors of their own dtype first (f32, i32), as Triton's ``to_tensor``
# makes them; whether bf16 is also compared in f32 (tl.maximum, tl.minimum, tl.clamp: not tl.fma)
NUMBERS_PROMOTED = {f"tile_lang.ops.math.{name}": name != "fma" for name in ("maximum", "minimum", "clamp", "fma")}
NARROW = {"f": ("f16", "bf16", "f8e4m3", "f8e5m2", "f8e4b15", "f8e4b8", "f8e5b16"), "i": ("i8", "i16", "u8", "u16")}
ARRAYS = ("torch.Tensor", "cupy.ndarray")  # adopted by a launch for a Pointer[D] parameter
OPS = "tile_lang.ops."  # the builtins' modules
INT_PROMOTING = {f"__{op}__": op in ("lt", "le", "gt", "ge", "eq", "ne") for op in (
    "add", "sub", "mul", "floordiv", "mod", "and", "or", "xor", "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne",
    "radd", "rsub", "rmul")}  # a block operator: whether it gives a bool block
BINARY_OPERATORS = frozenset(f"__{op}__" for op in ("truediv", "pow"))  # the others: INT_PROMOTING
POINTER_TYPE = "tile_lang.tensor.pointer_type"  # typed per member of a choice of dtypes, as the builtins
STORE_METHODS = frozenset({f"{TENSOR}.store", "tile_lang.ops.memory.TensorDescriptor.store"})
INT_BITS = {"W8": 8, "W16": 16, "W32": 32, "W64": 64}
DTYPE_CATEGORIES = frozenset({"tile_lang.dtypes.Float", "tile_lang.dtypes.Int", "tile_lang.dtypes.UInt",
                              "tile_lang.dtypes.Bool"})  # called as ``tl.float32(v)``: a scalar of that dtype
PYTHON_SCALARS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})
INT_SCALAR = "tile_lang.signature.IntScalar"
SCALAR_ARITHMETIC = frozenset({f"{owner}.__{op}__" for owner in ("builtins.int", INT_SCALAR) for op in (
    "add", "radd", "sub", "rsub", "mul", "rmul", "floordiv", "rfloordiv", "mod", "rmod", "neg")})  # int operators


class TileLangPlugin(Plugin):
    """The hooks: launch signatures, bare constexpr annotations and axes, and the kernel decorators."""

    def report_config_data(self, ctx: ReportConfigContext) -> str:
        """The plugin's own source digest: mypy keys its cache on the plugin package's ``__init__.py``
        alone, so an edit of these modules would otherwise leave cached results of the old hooks."""
        return _source_digest()

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        if fullname in CONVERSIONS:
            return lambda ctx: choices.call_checked(ctx, converted_to_argument)
        if fullname in SCALAR_ARITHMETIC:
            return scalar_arithmetic_converted
        if fullname in STORE_METHODS:
            return lambda ctx: choices.call_checked(ctx, _as_declared)
        operator = fullname.removeprefix(TENSOR + ".")
        if operator in INT_PROMOTING:
            return lambda ctx: choices.operator_checked(ctx, operator, lambda c: ints_promoted(c, INT_PROMOTING[operator]))
        if operator in BINARY_OPERATORS:
            return lambda ctx: choices.operator_checked(ctx, operator, _as_declared)
        return self._launch_signature if fullname == LAUNCH else None

    def _launch_signature(self, ctx: MethodSigContext) -> FunctionLike:
        """The launch's signature (:func:`with_launch_options`) with the array classes it adopts."""
        nodes = (self.lookup_fully_qualified(name) for name in ARRAYS)
        arrays = [Instance(node.node, [AnyType(TypeOfAny.special_form)] * len(node.node.type_vars))
                  for node in nodes if node is not None and isinstance(node.node, TypeInfo)]
        return with_launch_options(ctx, arrays)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        if fullname in LIST_SHAPES:
            return lambda ctx: ranked_by_list_shape(ctx, LIST_SHAPES[fullname])
        return with_supplied_optional if fullname.removesuffix(".__call__") in WRAPPER_DECORATORS else None

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        return shape_of_rank if fullname == f"{TENSOR}.shape" else None

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        if fullname == DTYPE_HINT:
            return dtype_hint
        return constexpr_value if fullname == CONSTEXPR else None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname in EXTREMA:
            return scalar_extremum
        if fullname in NUMBERS_PROMOTED:
            return lambda ctx: numbers_promoted(ctx, NUMBERS_PROMOTED[fullname])
        if fullname in LIST_SHAPES:
            return lambda ctx: ranked_by_list_shape(ctx, LIST_SHAPES[fullname])
        if fullname == "builtins.range":
            return range_over_block_bounds
        return with_constexprs_widened if fullname in DECORATORS else None

    def get_function_signature_hook(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        if fullname == "builtins.range":
            return range_hints_taken
        hook = self._function_signature(fullname)
        if hook is None and fullname != POINTER_TYPE:
            return None
        checked = hook or _as_declared
        return lambda ctx: choices.call_checked(ctx, checked)  # a dtype chosen by a branch: tile_lang_mypy.choices

    def _function_signature(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        hook = self._builtin_signature(fullname)
        if hook is None:
            return None
        name = fullname.rpartition(".")[2]
        def checked(ctx: FunctionSigContext) -> FunctionLike:
            signature = hook(ctx)
            if not isinstance(signature, CallableType):
                return signature
            signature = bool_arguments_checked(ctx._replace(default_signature=signature), name)
            if not isinstance(signature, CallableType):
                return signature
            ctx = ctx._replace(default_signature=signature)
            # an overloaded builtin (``tl.dot`` of floats or of ints) may take the block in another overload
            return ctx.default_signature if _overloaded(ctx.api, fullname) else float_argument_checked(ctx, name)
        return checked

    def _builtin_signature(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        if fullname == CONSTEXPR_CALL:
            return constant_of_value
        if fullname in DTYPE_CATEGORIES:
            return dtype_constructor
        if not fullname.startswith(OPS):
            return None
        if fullname == WHERE:
            return lambda ctx: where_checked(ctx._replace(default_signature=scalar_joins_taken(ctx)))
        if fullname == STORE:
            return lambda ctx: store_checked(ctx._replace(default_signature=constexpr_hints_taken(ctx)))
        if fullname == DOT:
            return dot_checked
        if fullname in ATOMICS:
            name = fullname.rpartition(".")[2]
            return lambda ctx: store_checked(ctx._replace(default_signature=scalar_joins_taken(ctx)), name)
        if fullname in COMBINING:
            return lambda ctx: with_constexpr_axis(ctx._replace(default_signature=generic_combine_taken(ctx)))
        if fullname.startswith(AXIS_MODULES):
            return lambda ctx: with_constexpr_axis(ctx._replace(default_signature=scalar_joins_taken(ctx)))
        return lambda ctx: dtype_argument_taken(ctx._replace(default_signature=constexpr_hints_taken(ctx)))


RANGE_HINTS = ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten", "warp_specialize")
"""``tl.range``'s hints, which Triton's front end takes under Python's ``range`` too (and ignores)."""


@functools.cache
def _source_digest() -> str:
    """A digest of the plugin package's modules, read once a process."""
    digest = hashlib.sha256()
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.read_bytes())
    return digest.hexdigest()


def range_hints_taken(ctx: FunctionSigContext) -> FunctionLike:
    """Python's ``range`` in a kernel or ``@tl.func`` given ``tl.range``'s hints (Unsloth's ``range(E,
    flatten=FLATTEN)``): Triton's front end accepts and ignores them, so does tile_lang; the signature takes
    them as optional keywords (an int, a bool or a constexpr). Outside a kernel, Python's ``range``."""
    signature = ctx.default_signature
    call = ctx.context
    given = {name for name in call.arg_names if name is not None} if isinstance(call, CallExpr) else set()
    if not given or not given <= set(RANGE_HINTS) or not _in_kernel(ctx.api):
        return signature
    hint = UnionType([ctx.api.named_generic_type("builtins.int", []), NoneType()])
    names = [n for n in RANGE_HINTS if n in given]
    return signature.copy_modified(arg_types=[*signature.arg_types, *(hint for _ in names)],
                                   arg_kinds=[*signature.arg_kinds, *(ARG_NAMED_OPT for _ in names)],
                                   arg_names=[*signature.arg_names, *names])


INT_CATEGORIES = frozenset({"tile_lang.dtypes.Int", "tile_lang.dtypes.UInt"})


def range_over_block_bounds(ctx: FunctionContext) -> Type:
    """Python's ``range`` in a kernel given a rank-0 int block for a bound (``row_end = tl.minimum(...)``, a
    loaded extent): the index is an ``IntScalar``, an int with ``.to`` as ``tl.program_id(0)`` is (at run time a
    rank-0 block), so ``row_idx.to(tl.int64)`` (Liger's cross entropy) checks and the index stays an int in
    arithmetic; int bounds keep Python's range."""
    iterator, scalar = _class(ctx, "tile_lang.ops.iterators.range"), _class(ctx, INT_SCALAR)
    if iterator is None or scalar is None or not _in_kernel(ctx.api) or not any(
            _is_rank0_int(t) for types in ctx.arg_types[:3] for t in map(get_proper_type, types)):
        return ctx.default_return_type
    return Instance(iterator, [Instance(scalar, [])])


def _is_rank0_int(typ: ProperType) -> bool:
    """Whether ``typ`` is a rank-0 block of a signed or unsigned int dtype."""
    if not (isinstance(typ, Instance) and typ.type.fullname == TENSOR and len(typ.args) == 2):
        return False
    element, rank = get_proper_type(typ.args[0]), get_proper_type(typ.args[1])
    return (isinstance(rank, Instance) and rank.type.name == "R0" and isinstance(element, Instance)
            and element.type.fullname in INT_CATEGORIES)


def _in_kernel(api: CheckerPluginInterface) -> bool:
    """Whether the function being checked is a module-level ``@tl.kernel`` or ``@tl.func``."""
    function = api.scope.current_function() if isinstance(api, TypeChecker) else None
    found = api.globals.get(function.name) if isinstance(api, TypeChecker) and function is not None else None
    decorator = found.node if found is not None else None
    return isinstance(decorator, Decorator) and any(
        isinstance(d := (e.callee if isinstance(e, CallExpr) else e), RefExpr) and d.fullname in DECORATORS
        for e in decorator.original_decorators)


def _overloaded(api: CheckerPluginInterface, fullname: str) -> bool:
    """Whether the function ``fullname`` (a builtin's) is declared with overloads."""
    module, _, name = fullname.rpartition(".")
    found = api.modules[module].names.get(name) if isinstance(api, TypeChecker) and module in api.modules else None
    node = found.node if found is not None else None
    return isinstance(node, OverloadedFuncDef) or (isinstance(node, Decorator) and isinstance(node.var.type, Overloaded))


BOOL_PARAMETERS = ("mask", "condition")  # a builtin's parameters that take a bool block only


def bool_arguments_checked(ctx: FunctionSigContext, name: str) -> FunctionLike:
    """A builtin's ``mask`` (``tl.load``, ``tl.store``, the atomics) or ``condition`` (``tl.where``) given a
    block of a known non-bool dtype: ``tl.load: mask is i32, not a bool block`` here, once, and the
    signature taking what was given (mypy's own message for an overloaded builtin is "No overload variant
    of "load" matches argument types ...", naming neither the argument nor its dtype)."""
    signature = ctx.default_signature
    if not isinstance(signature, CallableType):
        return signature
    for param in BOOL_PARAMETERS:
        if param not in signature.arg_names:
            continue
        index = signature.arg_names.index(param)
        if index >= len(ctx.args) or len(ctx.args[index]) != 1:
            continue
        given = get_proper_type(_reported_dropped(ctx.api.get_expression_type(ctx.args[index][0])))
        found = _element_and_rank(given)
        element = found[0] if found is not None and found[1] is not None else None
        if element is None or _unknown(element) or not isinstance(element, Instance) or element.type.name == "Bool":
            continue
        what = "a comparison (offs < n) or & of them" if param == "mask" else "a comparison"
        ctx.api.fail(f"tl.{name}: {param} is {_dtype_name(element)}, not a bool block; write {what}", ctx.args[index][0],
                     code=errorcodes.ARG_TYPE)
        taking = _with_element(signature.arg_types[index], element)  # its rank still binds the call's R
        signature = signature.copy_modified(arg_types=[taking if i == index else t for i, t in enumerate(signature.arg_types)])
    return signature


def _with_element(declared: Type, element: Instance) -> Type:
    """``declared`` (a ``Tensor[Bool, R]`` or a union holding such blocks) with ``element`` for ``Bool``."""
    proper = get_proper_type(declared)
    if isinstance(proper, UnionType):
        return UnionType([_with_element(item, element) for item in proper.items])
    if isinstance(proper, Instance) and proper.type.fullname == TENSOR and len(proper.args) == 2:
        return proper.copy_modified(args=[element, proper.args[1]])
    return declared


def float_argument_checked(ctx: FunctionSigContext, name: str) -> FunctionLike:
    """A float-only builtin (``tl.exp``, ``tl.sigmoid``, ``tl.sqrt``: its first parameter a ``Tensor[Float[W],
    R]``) given a block of a known int, unsigned or bool dtype: ``tl.exp: x is i32, needs a floating-point
    block`` here (the run time's words), and a result of an unknown dtype and the argument's rank, so the
    name it is assigned to is not also "Need type annotation"."""
    signature = ctx.default_signature
    if not isinstance(signature, CallableType) or not signature.arg_types or not ctx.args or len(ctx.args[0]) != 1:
        return signature
    declared = _element_and_rank(signature.arg_types[0])
    element = declared[0] if declared is not None else None
    width = get_proper_type(element.args[0]) if isinstance(element, Instance) and element.type.name == "Float" and \
        len(element.args) == 1 else None
    if not isinstance(width, TypeVarType):
        return signature
    given = get_proper_type(_reported_dropped(ctx.api.get_expression_type(ctx.args[0][0])))
    found = _element_and_rank(given)
    actual = found[0] if found is not None and found[1] is not None else None
    if not isinstance(actual, Instance) or actual.type.name not in ("Int", "UInt", "Bool") or _unknown(actual):
        return signature
    parameter = signature.arg_names[0] or "x"
    ctx.api.fail(f"tl.{name}: {parameter} is {_dtype_name(actual)}, needs a floating-point block; convert it with "
                 ".to(tl.float32)", ctx.args[0][0], code=errorcodes.ARG_TYPE)  # at the argument's line
    anything = AnyType(TypeOfAny.from_error)
    fixed = expand_type(signature, {v.id: anything for v in signature.variables})
    assert isinstance(fixed, CallableType)
    return fixed.copy_modified(arg_types=[given, *fixed.arg_types[1:]], variables=[])


def _as_declared(ctx: FunctionSigContext | MethodSigContext) -> FunctionLike:
    return ctx.default_signature


def shape_of_rank(ctx: AttributeContext) -> Type:
    """``x.shape`` of a block of known rank as a tuple of that many ints, so ``tl.zeros(x.shape, x.dtype)``
    has ``x``'s rank; a ``Shape`` (any length) otherwise."""
    found = _element_and_rank(ctx.type)
    rank = found[1] if found is not None else None
    shape = get_proper_type(ctx.default_attr_type)
    if not (isinstance(rank, Instance) and rank.type.fullname in RANKS and isinstance(shape, Instance)):
        return ctx.default_attr_type
    integer = ctx.api.named_generic_type("builtins.int", [])
    return TupleType([integer] * RANKS[rank.type.fullname], fallback=shape)


def ranked_by_list_shape(ctx: FunctionContext | MethodContext, position: int) -> Type:
    """A shape written as a list display, ``tl.zeros([BLOCK_M, BLOCK_N], tl.float32)`` or
    ``x.reshape([BLOCK_M])`` (Triton's spelling as often as a tuple): the block has the list's length as
    its rank, as the tuple's overloads give it, rather than the ``Tensor[D, Any]`` a ``list[int]`` gets."""
    returned = get_proper_type(ctx.default_return_type)
    shapes = ctx.args[position] if position < len(ctx.args) else []
    given = shapes[0] if len(shapes) == 1 else None
    if not (isinstance(returned, Instance) and returned.type.fullname == TENSOR and isinstance(given, ListExpr)
            and len(given.items) <= 3 and isinstance(get_proper_type(returned.args[1]), AnyType)):
        return ctx.default_return_type
    rank = _class(ctx, f"tile_lang.tensor.R{len(given.items)}")
    return returned.copy_modified(args=[returned.args[0], Instance(rank, [])]) if rank is not None else returned


def dtype_constructor(ctx: FunctionSigContext) -> FunctionLike:
    """``tl.float32(v)`` typed ``(v: float) -> Tensor[f32, R0]``: a dtype called on a Python scalar is
    that scalar as a rank-0 block of the dtype, as in Triton (``tl.full((), v, tl.float32)``)."""
    signature = ctx.default_signature
    dtype = get_proper_type(signature.ret_type)
    if not isinstance(dtype, Instance) or any(
            isinstance(get_proper_type(arg), AnyType) for arg in dtype.args) or dtype.type.fullname not in DTYPE_CATEGORIES:
        return signature
    tensor, rank = (_class(ctx, name) for name in (TENSOR, "tile_lang.tensor.R0"))
    if tensor is None or rank is None:
        return signature
    return signature.copy_modified(arg_types=[ctx.api.named_generic_type("builtins.float", [])], arg_kinds=[ARG_POS],
                                   arg_names=["value"], ret_type=Instance(tensor, [dtype, Instance(rank, [])]))


def _class(ctx: FunctionSigContext | MethodSigContext | FunctionContext | MethodContext, fullname: str) -> TypeInfo | None:
    """The class ``fullname`` from the modules mypy has loaded (``named_generic_type`` finds only
    names the checked module's packages re-export)."""
    module, _, name = fullname.rpartition(".")
    modules = ctx.api.modules if isinstance(ctx.api, TypeChecker) else {}
    found = modules[module].names.get(name) if module in modules else None
    return found.node if found is not None and isinstance(found.node, TypeInfo) else None


def _joins_scalar(typ: Type) -> bool:
    """Whether ``typ`` is a Python scalar joined with blocks of one rank (``float | Tensor[f32, R0]``): a
    loop variable started as ``m = float("-inf")`` (or ``acc = 0.0``) and re-bound to a block in the loop
    (``acc += tl.load(...)``, rank 1); the run time carries the block, the number broadcast to it."""
    proper = get_proper_type(typ)
    if not isinstance(proper, UnionType):
        return False
    items = [get_proper_type(item) for item in proper.items]
    scalars = [i for i in items if isinstance(i, Instance) and i.type.fullname in PYTHON_SCALARS]
    ranks = {rank.type.fullname for i in items if isinstance(i, Instance) and i.type.fullname == TENSOR and len(i.args) == 2
             and isinstance(rank := get_proper_type(i.args[1]), Instance) and rank.type.fullname in RANKS}
    blocks = [i for i in items if isinstance(i, Instance) and i.type.fullname == TENSOR]
    return bool(scalars) and len(ranks) == 1 and len(scalars) + len(blocks) == len(items)


def scalar_joins_taken(ctx: FunctionSigContext) -> CallableType:
    """A builtin's signature with each parameter given a Python scalar joined with blocks
    (:func:`_joins_scalar`) also taking a ``float``, so the block's dtype and rank are inferred from
    the block (``tl.log(d)`` after ``d = 0.0`` and ``d = d * ... + tl.sum(...)`` in a loop)."""
    signature = ctx.default_signature
    assert isinstance(signature, CallableType)
    types = list(signature.arg_types)
    changed = False
    for index, actuals in enumerate(ctx.args[:len(types)]):
        # a join is a variable's type, a float constant a literal; arithmetic is re-checked only where a
        # name it combines holds a join (``rsqrt(var_sum * inv_n + eps)``), other arguments not at all
        simple = len(actuals) == 1 and (isinstance(actuals[0], (NameExpr, FloatExpr, UnaryExpr))
                                        or _combines_a_join(ctx, actuals[0]))
        actual = ctx.api.get_expression_type(actuals[0]) if simple else None
        if actual is not None and _joins_scalar(actual):
            types[index] = UnionType([types[index], ctx.api.named_generic_type("builtins.float", [])])
            changed = True
        elif index == 0 and actual is not None and _is_float(actual):
            return _float_constant_taken(ctx, signature) or signature
    return signature.copy_modified(arg_types=types) if changed else signature


def _combines_a_join(ctx: FunctionSigContext, expr: Expression) -> bool:
    """Whether ``expr`` is arithmetic (operators and signs, parenthesised as written) one of whose
    names holds a Python scalar joined with blocks."""
    if isinstance(expr, OpExpr) and expr.op in FLOAT_OPERATORS:
        return _combines_a_join(ctx, expr.left) or _combines_a_join(ctx, expr.right)
    if isinstance(expr, UnaryExpr):
        return _combines_a_join(ctx, expr.expr)
    return isinstance(expr, NameExpr) and _joins_scalar(ctx.api.get_expression_type(expr))


def constexpr_hints_taken(ctx: FunctionSigContext) -> CallableType:
    """:func:`scalar_joins_taken`, and ``cache_modifier=`` / ``eviction_policy=`` given a bare constexpr
    (``tl.load(p, cache_modifier=CACHE)``): mypy cannot know its value, which the run time checks, so the
    parameter takes it. A literal keeps its check (``".cx"`` is an error), and so does a
    ``Constexpr[str]`` (a str may be anything: declare ``Constexpr[CacheModifier]``)."""
    signature = scalar_joins_taken(ctx)
    types = list(signature.arg_types)
    for name in HINT_OPTIONS:
        at = signature.arg_names.index(name) if name in signature.arg_names else None
        if at is not None and len(ctx.args[at]) == 1 and _is_constexpr(given := ctx.api.get_expression_type(ctx.args[at][0])):
            types[at] = given
    return signature.copy_modified(arg_types=types)


def _is_float(typ: Type) -> bool:
    proper = get_proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname == "builtins.float"


def _float_constant_taken(ctx: FunctionSigContext, signature: CallableType) -> CallableType | None:
    """``tl.rsqrt(2.0)``: a float-only builtin (``x: Tensor[Float[W], R]``) given a Python float, which the
    run time makes an f32 scalar, typed ``(float) -> ... f32, R0``; None where the first parameter is
    not such a block."""
    formal = get_proper_type(signature.arg_types[0])
    if not (isinstance(formal, Instance) and formal.type.fullname == TENSOR and len(formal.args) == 2):
        return None
    element, rank = map(get_proper_type, formal.args)
    width = get_proper_type(element.args[0]) if isinstance(element, Instance) and element.type.name == "Float" else None
    w32, r0 = _class(ctx, "tile_lang.dtypes.W32"), _class(ctx, "tile_lang.tensor.R0")
    if not (isinstance(width, TypeVarType) and isinstance(rank, TypeVarType)) or w32 is None or r0 is None:
        return None
    fixed = expand_type(signature, {width.id: Instance(w32, []), rank.id: Instance(r0, [])})
    assert isinstance(fixed, CallableType)
    return fixed.copy_modified(arg_types=[ctx.api.named_generic_type("builtins.float", []), *fixed.arg_types[1:]],
                               variables=[v for v in signature.variables if v.id not in (width.id, rank.id)])


def dtype_hint(ctx: AnalyzeTypeContext) -> Type:
    """``tl.dtype`` as an annotation (``output_dtype: tl.dtype = y_ptr.dtype.element_ty``, a parameter
    ``OUT: tl.dtype``): a dtype not known statically, as a bare constexpr holding one, so ``x.to(it)`` is
    a block of that unknown dtype and of ``x``'s rank (``type[Any]``, a special form: not an ``Any`` that
    ``disallow_any_expr`` reports)."""
    return TypeType(AnyType(TypeOfAny.special_form))


def constexpr_value(ctx: AnalyzeTypeContext) -> Type:
    """A bare ``constexpr`` annotation as a kernel body sees it: ``int | ConstexprValue``, which takes an
    int default (``BLOCK: constexpr = 128``), is an int in arithmetic, and compares with a str. A local
    constant so annotated takes its value's type where the value is a float constant expression, a str
    or a tuple literal (``LN2: tl.constexpr = 0.693``, ``SCALE: tl.constexpr = LN2 / BLOCK``,
    ``order: tl.constexpr = (0, 1) if ... else (1, 0)``); annotated again, it is the same constant."""
    analyser = getattr(ctx.api, "api", None)
    statement = getattr(analyser, "statement", None)  # the semantic analyser's statement
    if isinstance(statement, AssignmentStmt) and statement.type is not None:
        _reannotations_merged(analyser, statement)
        literal = _literal_type(ctx, statement.rvalue)
        if literal is not None:
            return literal
    dtype = _dtype_default(ctx, analyser, statement)
    if dtype is not None:
        return TypeType(dtype)
    literal = _literal_default(ctx, statement)
    if literal is not None:
        return literal
    return UnionType([ctx.api.named_type("builtins.int", []), ctx.api.named_type(CONSTEXPR_VALUE, [])])


def _reannotations_merged(analyser: object, first: AssignmentStmt) -> None:
    """A local constexpr annotated again later in its function (FlagGems' ``value: tl.constexpr = ...``
    in each branch of ``get_dtype_min``; Python allows it, mypy reports ``no-redef``) is one constant:
    the later annotations are dropped before mypy analyses them, so their values are assigned to the
    name as the first annotation typed it (a value of another type is the assignment's error)."""
    stack = getattr(analyser, "function_stack", None)
    lookup = getattr(analyser, "lookup_qualified", None)
    target = first.lvalues[0] if len(first.lvalues) == 1 else None
    if not stack or lookup is None or not isinstance(target, NameExpr):
        return
    for statement in _assignments(stack[-1].body):
        annotation = statement.unanalyzed_type
        if (statement is not first and isinstance(annotation, UnboundType) and len(statement.lvalues) == 1
                and isinstance(statement.lvalues[0], NameExpr) and statement.lvalues[0].name == target.name):
            found = lookup(annotation.name, statement, suppress_errors=True)
            if found is not None and found.fullname == CONSTEXPR:
                statement.type = statement.unanalyzed_type = None


def _assignments(block: Block) -> list[AssignmentStmt]:
    """The assignments of a function body, nested blocks included (``if``, loops, ``with``, ``try``),
    nested functions and classes not. (mypy's compiled visitors cannot be subclassed by a plugin.)"""
    found: list[AssignmentStmt] = []
    for statement in block.body:
        if isinstance(statement, AssignmentStmt):
            found.append(statement)
        elif not isinstance(statement, (FuncDef, Decorator, ClassDef)):
            for name in ("body", "else_body", "handlers", "finally_body", "bodies"):
                part = getattr(statement, name, None)
                for inner in part if isinstance(part, list) else [part]:
                    if isinstance(inner, Block):
                        found.extend(_assignments(inner))
    return found


def _dtype_default(ctx: AnalyzeTypeContext, analyser: object, statement: object) -> Instance | None:
    """The dtype a kernel parameter's default names, when the annotation is that parameter's
    (Unsloth's ``acc_dtype: tl.constexpr = tl.float32``): the kernel is checked with it, as for a
    launch that keeps the default; launches may pass any dtype (:func:`with_constexprs_widened`)."""
    func = statement.func if isinstance(statement, Decorator) else statement
    lookup = getattr(analyser, "lookup_qualified", None)
    if not isinstance(func, FuncDef) or lookup is None:
        return None
    for arg in func.arguments:
        if arg.type_annotation is ctx.type and arg.initializer is not None:
            name = _dotted(arg.initializer)
            found = lookup(name, arg.initializer, suppress_errors=True) if name else None
            target = get_proper_type(found.node.target) if found is not None and isinstance(found.node, TypeAlias) else None
            return target if isinstance(target, Instance) and _is_dtype_class(target) else None
    return None


def _literal_default(ctx: AnalyzeTypeContext, statement: object) -> Type | None:
    """The type of a kernel parameter's str, float or int-tuple default, when the annotation is that
    parameter's (Liger's ``reduction: tl.constexpr = "batchmean"``): the kernel is checked as a launch
    keeping the default runs it, and launches pass a value of that type, as for ``Constexpr[str]``."""
    func = statement.func if isinstance(statement, Decorator) else statement
    if not isinstance(func, FuncDef):
        return None
    for arg in func.arguments:
        if arg.type_annotation is ctx.type and arg.initializer is not None:
            return _literal_type(ctx, arg.initializer)
    return None


def _is_dtype_class(typ: Instance) -> bool:
    return any(base.fullname == DTYPE for base in typ.type.mro)


def _dotted(expr: Expression) -> str | None:
    """``a.b.c`` of a name or attribute chain, None for anything else."""
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        base = _dotted(expr.expr)
        return None if base is None else f"{base}.{expr.name}"
    return None


def _literal_type(ctx: AnalyzeTypeContext, value: Expression) -> Type | None:
    """The type of a float, str or int-tuple literal, a float constant expression (:func:`_is_float_constant`:
    FlagGems' ``value: tl.constexpr = float("-inf")``, ``log_scale: tl.constexpr = sm_scale * 1.44``), or
    a conditional of two such of one type, by its syntax: a type annotation is analysed before the value
    is checked."""
    if _is_float_constant(ctx, value):
        return ctx.api.named_type("builtins.float", [])
    if isinstance(value, ConditionalExpr):
        first, second = _literal_type(ctx, value.if_expr), _literal_type(ctx, value.else_expr)
        return first if first is not None and second is not None and is_same_type(first, second) else None
    if isinstance(value, (FloatExpr, StrExpr)):
        return ctx.api.named_type("builtins.float" if isinstance(value, FloatExpr) else "builtins.str", [])
    if isinstance(value, TupleExpr) and all(isinstance(item, IntExpr) for item in value.items):
        fallback = ctx.api.named_type("builtins.tuple", [ctx.api.named_type("builtins.int", [])])
        return TupleType([ctx.api.named_type("builtins.int", [])] * len(value.items), fallback)
    return None


def _is_float_constant(ctx: AnalyzeTypeContext, value: Expression) -> bool:
    """Whether a constant expression is a float by its syntax: a float literal, ``float(...)``, a name
    declared a float (a local constexpr so typed, a ``float`` parameter), a sign of one, or arithmetic with
    one or a true division (a constant's operands are numbers, so the float wins)."""
    if isinstance(value, FloatExpr):
        return True
    if isinstance(value, CallExpr):
        return isinstance(value.callee, NameExpr) and value.callee.name == "float"
    if isinstance(value, UnaryExpr):
        return value.op in "+-" and _is_float_constant(ctx, value.expr)
    if isinstance(value, OpExpr):
        return value.op in FLOAT_OPERATORS and (value.op == "/" or _is_float_constant(ctx, value.left) or _is_float_constant(ctx, value.right))
    lookup = getattr(getattr(ctx.api, "api", None), "lookup", None)
    found = lookup(value.name, value, suppress_errors=True) if isinstance(value, NameExpr) and lookup else None
    declared = get_proper_type(found.node.type) if found is not None and isinstance(found.node, Var) and found.node.type else None
    return isinstance(declared, Instance) and declared.type.fullname in ("builtins.float", SCALARS_FLOAT)


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
    """``Kernel[P]`` / ``Func[P, T]`` with each ``ConstexprValue`` parameter of ``P`` taking ``int | str``
    or a dtype (``out_dtype=tl.float16``, a branch's ``tl.float8e5 if FP8 else tl.float16``) and each
    ``IntScalar`` / ``FloatScalar`` one an ``int`` / ``float``, so a launch (or a call, or code
    forwarding ``P``) passes a plain int, float, string or dtype."""
    decorated = get_proper_type(ctx.default_return_type)
    if not isinstance(decorated, Instance):
        return ctx.default_return_type
    dtype = _class(ctx, DTYPE)
    given = UnionType([ctx.api.named_generic_type("builtins.int", []), ctx.api.named_generic_type("builtins.str", []),
                       *([TypeType(Instance(dtype, []))] if dtype is not None else [])])

    def widen(typ: Type) -> Type:
        proper = get_proper_type(typ)
        if isinstance(proper, Instance) and proper.type.fullname in SCALARS:
            return ctx.api.named_generic_type(SCALARS[proper.type.fullname], [])
        if isinstance(proper, TypeType) and isinstance(proper.item, Instance) and _is_dtype_class(proper.item):
            return given  # a constexpr defaulting to a dtype (``ACC: tl.constexpr = tl.float32``)
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
    """One overload with its literal ``axis`` widened to the call's constexpr axis, or an error for a
    literal axis the input lacks (see the module docstring); any other call keeps the overload."""
    signature = ctx.default_signature
    if "axis" not in signature.arg_names:
        return signature
    index = signature.arg_names.index("axis")
    given = ctx.args[index]
    if len(given) != 1:
        return signature
    actual = ctx.api.get_expression_type(given[0])
    problem = _axis_out_of_range(ctx, actual) or _block_as_axis(ctx, actual)
    if problem is not None:
        ctx.api.fail(problem, ctx.context, code=errorcodes.ARG_TYPE)
        return signature.copy_modified(arg_types=[AnyType(TypeOfAny.from_error) if i == index else t
                                                  for i, t in enumerate(signature.arg_types)])
    declared = get_proper_type(signature.arg_types[index])
    literal = any(isinstance(get_proper_type(t), LiteralType)
                  for t in (declared.items if isinstance(declared, UnionType) else [declared]))
    if not literal or not _is_constexpr(actual):
        return signature
    types = list(signature.arg_types)
    types[index] = UnionType([declared, actual])
    return signature.copy_modified(arg_types=types)


def _axis_out_of_range(ctx: FunctionSigContext, axis: Type) -> str | None:
    """The run time's complaint about a literal ``axis`` that a block of known rank lacks
    (``tl.cumsum(x, axis=1)`` on a rank-1 block), else None."""
    proper = get_proper_type(axis)
    literal = proper.last_known_value if isinstance(proper, Instance) else proper
    if not (isinstance(literal, LiteralType) and isinstance(literal.value, int)) or not ctx.args or len(ctx.args[0]) != 1:
        return None
    found = _element_and_rank(ctx.api.get_expression_type(ctx.args[0][0]))
    rank = found[1] if found is not None else None
    if not (isinstance(rank, Instance) and rank.type.fullname in RANKS):
        return None
    ndim, value = RANKS[rank.type.fullname], literal.value
    return None if -ndim <= value < ndim else f"axis {value} is out of range for a rank-{ndim} block"


def _block_as_axis(ctx: FunctionSigContext, axis: Type) -> str | None:
    """The complaint about a block given as a reduction's axis (Liger's ``tl.max(m, blk_max)``, meant
    as the elementwise maximum), else None."""
    found = _element_and_rank(axis)
    if found is None or found[1] is None:
        return None
    name = ctx.context.callee.name if isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, (NameExpr, MemberExpr)) else "?"
    elementwise = {"max": "tl.maximum", "min": "tl.minimum"}.get(name)
    hint = f"; for the elementwise {name}imum of two blocks use {elementwise}" if elementwise else ""
    return f"tl.{name}: axis must be an int, got a block of {_dtype_name(found[0])}{hint}"


def _dtype_name(typ: ProperType) -> str:
    """``f32`` for ``Float[W32]``, ``bf16``, ``bool``; a generic one as written (``Float[W]``)."""
    if isinstance(typ, Instance) and typ.type.name in CATEGORIES and len(typ.args) == 1:
        width = get_proper_type(typ.args[0])
        if isinstance(width, Instance) and width.type.name in WIDTHS:
            short = WIDTHS[width.type.name]
            return short if short == "bf16" else CATEGORIES[typ.type.name] + short
    if isinstance(typ, Instance):
        return typ.type.name + (f"[{', '.join(map(str, typ.args))}]" if typ.args else "").replace("Bool", "bool")
    return str(typ)


def _element_and_rank(typ: Type) -> tuple[ProperType, ProperType | None] | None:
    """(element type, rank) of a ``Tensor[D, R]`` (rank None for a ``Pointer[D]``), else None."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.fullname == TENSOR and len(proper.args) == 2:
        return get_proper_type(proper.args[0]), get_proper_type(proper.args[1])
    if isinstance(proper, Instance) and proper.type.fullname == POINTER and len(proper.args) == 1:
        return get_proper_type(proper), None
    return None


def _unknown(t: Type) -> bool:
    """Whether ``t`` holds an Any or a Never (mypy's has_any_type leaves out the special-form Any that
    an overload inferred from an Any argument gives; a Never comes from a failed inference, already
    reported)."""
    proper = get_proper_type(t)
    return has_any_type(t) or isinstance(proper, (AnyType, UninhabitedType)) or (
        isinstance(proper, Instance) and any(isinstance(get_proper_type(a), UninhabitedType) for a in proper.args))


def _reported_dropped(typ: Type) -> Type:
    """``typ`` less the Any members an error already reported put in it, so a builtin given the rest still
    names its own mistake: ``m.to(tl.float64)`` with ``m`` a Python float joined with a block is mypy's
    ``Item "float" ... has no attribute "to"`` (no hook reaches it), then ``Any | Tensor[f64, R0]``, which
    ``tl.store(out_ptr, ...)`` into f32 is ``value is f64 but the pointer is to f32``. Other types as given."""
    proper = get_proper_type(typ)
    if not isinstance(proper, UnionType):
        return typ
    kept = [item for item in proper.items if not _reported_any(item)]
    return make_simplified_union(kept) if kept and len(kept) < len(proper.items) else typ


def _operand(typ: Type) -> Type:
    """The block an operand of ``tl.where`` or ``tl.dot`` stands for: :func:`_reported_dropped`, and a Python
    number joined with blocks (:func:`_joins_scalar`) as its blocks, which the run time carries, so
    ``tl.where(c, acc, h)`` after ``acc = 0.0`` and ``acc += tl.load(...)`` reads ``x is f32 but y is f16``."""
    dropped = _reported_dropped(typ)
    proper = get_proper_type(dropped)
    if not (isinstance(proper, UnionType) and _joins_scalar(proper)):
        return dropped
    return make_simplified_union([item for item in proper.items if _element_and_rank(item) is not None])


def _reported_any(typ: Type) -> bool:
    """Whether ``typ`` is the Any of an error (or an Any derived from one)."""
    proper = get_proper_type(typ)
    source = proper.source_any if isinstance(proper, AnyType) and proper.source_any is not None else proper
    return isinstance(source, AnyType) and source.type_of_any == TypeOfAny.from_error


def _store_mismatch(pointer: Type, value: Type, widen: bool = True) -> str | None:
    """What is wrong with ``tl.store(pointer, value)``, in words, when the element types or ranks
    plainly disagree (both known, no type variables or Any); None otherwise. ``widen``: a narrower
    integer value fits (a store converts it losslessly; an atomic's value must match)."""
    ptr, val = _element_and_rank(pointer), get_proper_type(_reported_dropped(value))
    if isinstance(val, UnionType):  # a loop's float joined with its block, or a name re-bound in a branch
        blocks = [item for item in map(get_proper_type, val.items) if _element_and_rank(item) is not None]
        if _joins_scalar(val) or len(blocks) == len(val.items):
            found = [problem for block in blocks if (problem := _store_mismatch(pointer, block, widen)) is not None]
            return found[0].replace("value is", "value may be", 1) if found and len(blocks) > 1 else (
                found[0] if found else None)
    pointee = ptr[0] if ptr is not None else None
    if ptr is None or not (isinstance(pointee, Instance) and pointee.type.fullname == POINTER):
        return None
    target = get_proper_type(pointee.args[0])
    if isinstance(val, Instance) and val.type.fullname == "builtins.float":
        return f"value is a float but the pointer is to {_dtype_name(target)}" if (
            isinstance(target, Instance) and target.type.name in ("Int", "UInt", "Bool")) else None
    given = _element_and_rank(val)
    if given is None or given[1] is None:
        return None
    rank, ptr_rank = given[1], ptr[1]
    if ptr_rank is None and isinstance(rank, Instance) and rank.type.fullname in RANKS and rank.type.name != "R0":
        return f"value is rank {rank.type.name[1:]} but the pointer is a scalar (one element)"
    if (isinstance(rank, Instance) and isinstance(ptr_rank, Instance) and rank.type.name != "R0"
            and rank.type.fullname != ptr_rank.type.fullname and rank.type.fullname in RANKS):
        return f"value is rank {rank.type.name[1:]} but the pointers are rank {ptr_rank.type.name[1:]}"
    if _unknown(given[0]) or _unknown(target) or is_same_type(given[0], target) or (widen and _widens(given[0], target)):
        return None
    return f"value is {_dtype_name(given[0])} but the pointer is to {_dtype_name(target)}"


def store_checked(ctx: FunctionSigContext, name: str = "store") -> FunctionLike:
    """One overload of ``tl.store`` (or of an atomic, ``name``), as declared, unless the value plainly
    does not fit the pointer: then a readable error here, and the overload taking what was given (one
    error, not mypy's "cannot infer" on top)."""
    signature = ctx.default_signature
    widen = name == "store"
    if len(ctx.args) < 2 or len(ctx.args[0]) != 1 or len(ctx.args[1]) != 1:
        return signature
    pointer, value = (ctx.api.get_expression_type(arg[0]) for arg in ctx.args[:2])
    declared = _element_and_rank(signature.arg_types[0])
    actual = _element_and_rank(pointer)
    problem = _store_mismatch(pointer, value, widen)
    if declared is None or actual is None or (declared[1] is None) != (actual[1] is None):
        return signature
    if problem is not None:
        ctx.api.fail(f"tl.{name}: {problem}", ctx.args[1][0], code=errorcodes.ARG_TYPE)  # the value's line
    elif not _failed(value) and not (widen and _widening_store(actual, value)):
        return signature
    anything = AnyType(TypeOfAny.from_error)  # reported here, or where the value failed to type
    if problem is None:  # nothing left to infer: the overload's type variables are Any
        fixed = expand_type(signature, {v.id: anything for v in signature.variables})
        assert isinstance(fixed, CallableType)
        return fixed.copy_modified(arg_types=[pointer, anything, *fixed.arg_types[2:]], variables=[])
    return signature.copy_modified(arg_types=[pointer, anything, *signature.arg_types[2:]])


def _widening_store(pointer: tuple[ProperType, ProperType | None], value: Type) -> bool:
    """Whether a store's value is a narrower integer block than its pointer's (lossless, accepted); a
    Python int joined with such rank-0 blocks (Liger's ``argmax_idx = 0``, re-bound to a ``tl.where`` of
    i32 indices, stored into an i64 buffer) too, each block widening or matching and the pointer an int one."""
    proper = get_proper_type(value)
    if isinstance(proper, UnionType) and _joins_scalar(proper):
        items = [get_proper_type(item) for item in proper.items]
        blocks = [i for i in items if isinstance(i, Instance) and i.type.fullname == TENSOR]
        target = get_proper_type(pointer[0].args[0]) if isinstance(pointer[0], Instance) and pointer[0].args else None
        ints = all(i.type.fullname == "builtins.int" for i in items if isinstance(i, Instance) and i not in blocks)
        elements = [found[0] for b in blocks if (found := _element_and_rank(b)) is not None]
        return (ints and isinstance(target, Instance) and target.type.name in ("Int", "UInt")
                and len(elements) == len(blocks) and any(_widening_store(pointer, b) for b in blocks)
                and all(_widening_store(pointer, b) or is_same_type(e, target) for b, e in zip(blocks, elements)))
    given, pointee = _element_and_rank(value), pointer[0]
    return (given is not None and isinstance(pointee, Instance) and pointee.type.fullname == POINTER
            and not is_same_type(given[0], get_proper_type(pointee.args[0]))
            and _widens(given[0], get_proper_type(pointee.args[0])))


def _failed(typ: Type) -> bool:
    """Whether ``typ`` is a block whose type argument inference failed (a Never), already reported."""
    proper = get_proper_type(typ)
    return isinstance(proper, Instance) and any(isinstance(get_proper_type(a), UninhabitedType) or (
        isinstance(get_proper_type(a), Instance) and _failed(a)) for a in proper.args)


def where_checked(ctx: FunctionSigContext) -> FunctionLike:
    """``tl.where(c, x, y)`` as declared, unless ``x`` and ``y`` are blocks of two known dtypes: then
    ``tl.where: x is f32 but y is f16`` here (mypy's own "cannot infer" names neither), and the
    overload taking what was given."""
    signature = ctx.default_signature
    if len(ctx.args) < 3 or any(len(arg) != 1 for arg in ctx.args[1:3]) or not isinstance(signature, CallableType):
        return signature
    given = [ctx.api.get_expression_type(arg[0]) for arg in ctx.args[1:3]]
    problem = _choice_mismatch(given, ("x", "y"))
    if problem is not None:
        return _reported(ctx, signature, "where", problem, [ctx.api.get_expression_type(ctx.args[0][0]), *given])
    operands = [_operand(t) for t in given]
    found = [f for f in map(_element_and_rank, operands) if f is not None and isinstance(f[1], Instance)]
    if len(found) != 2:
        return signature
    (x, x_rank), (y, y_rank) = found
    assert isinstance(x_rank, Instance) and isinstance(y_rank, Instance)
    same_rank = "R0" in (x_rank.type.name, y_rank.type.name) or x_rank.type.fullname == y_rank.type.fullname
    element = next((v for v in signature.variables if v.name == "D"), None)
    if same_rank and not is_same_type(x, y) and (_widens(x, y) or _widens(y, x)):
        if element is None or any(o is not g for o, g in zip(operands, given)):
            return signature  # an overload for bool blocks, or a join: not this call's
        wider, rank = (y if _widens(x, y) else x), (y_rank if x_rank.type.name == "R0" else x_rank)
        fixed = expand_type(signature, {element.id: wider})  # ints of two widths: the wider; the condition keeps its check
        tensor = get_proper_type(given[0])
        assert isinstance(fixed, CallableType) and isinstance(tensor, Instance)
        return fixed.copy_modified(arg_types=[fixed.arg_types[0], *given, *fixed.arg_types[3:]],
                                   variables=[v for v in signature.variables if v.id != element.id],
                                   ret_type=tensor.copy_modified(args=[wider, rank]))
    if not (_unknown(x) or _unknown(y) or is_same_type(x, y)):
        problem = f"x is {_dtype_name(x)} but y is {_dtype_name(y)}; convert one with .to()"
    elif "R0" not in (x_rank.type.name, y_rank.type.name) and x_rank.type.fullname != y_rank.type.fullname:
        problem = f"x is rank {x_rank.type.name[1:]} but y is rank {y_rank.type.name[1:]}; add an axis with [None, :] or [:, None]"
    else:
        return signature
    condition = ctx.api.get_expression_type(ctx.args[0][0]) if len(ctx.args[0]) == 1 else AnyType(TypeOfAny.from_error)
    return _reported(ctx, signature, "where", problem, [condition, *given])


def _reported(ctx: FunctionSigContext, signature: CallableType, name: str, problem: str, given: list[Type]) -> CallableType:
    """``tl.<name>: <problem>`` reported at the call, and the signature taking what was given (the leading
    arguments ``given``) with an unknown result: one error, not mypy's "cannot infer" on top."""
    ctx.api.fail(f"tl.{name}: {problem}", ctx.context, code=errorcodes.ARG_TYPE)
    return signature.copy_modified(arg_types=[*given, *signature.arg_types[len(given):]],
                                   ret_type=AnyType(TypeOfAny.from_error), variables=[])


def _choice_mismatch(given: list[Type], names: tuple[str, str]) -> str | None:
    """``input is f16 but other may be f32 or f64; convert one with .to()`` where one of two operands that
    must share a dtype (``tl.dot``'s, ``tl.where``'s values) is a choice (a dtype chosen by a branch,
    :mod:`tile_lang_mypy.choices`, which reaches here when no choice of members is legal) and no member
    has the other's dtype; None otherwise (two plain blocks are the callers' own check)."""
    found = [_dtypes_of(t) for t in given]
    if any(f is None for f in found) or all(len(f) == 1 for f in found if f is not None):
        return None
    first, second = (f for f in found if f is not None)
    if any(_unknown(d) for d in [*first, *second]) or any(
            is_same_type(a, b) or _widens(a, b) or _widens(b, a) for a in first for b in second):
        return None
    described = [f"{name} {'is' if len(dtypes) == 1 else 'may be'} {' or '.join(map(_dtype_name, dtypes))}"
                 for name, dtypes in zip(names, (first, second))]
    return f"{described[0]} but {described[1]}; convert one with .to()"


def _dtypes_of(typ: Type) -> list[ProperType] | None:
    """The element types of a block, or of each member of a choice of blocks (an error's Any and a joined
    Python number left out: :func:`_operand`); None for anything else."""
    proper = get_proper_type(_operand(typ))
    items = [get_proper_type(item) for item in proper.items] if isinstance(proper, UnionType) else [proper]
    found = [_element_and_rank(item) for item in items]
    dtypes = [f[0] for f in found if f is not None and f[1] is not None]
    if len(dtypes) != len(items) or (len(items) > 1 and choices.members(proper) is None):
        return None
    return [d for i, d in enumerate(dtypes) if not any(is_same_type(d, e) for e in dtypes[:i])]


def dot_checked(ctx: FunctionSigContext) -> FunctionLike:
    """``tl.dot(a, b)`` as declared, unless ``a`` and ``b`` are blocks of two known dtypes or ranks: then
    ``tl.dot: input is f16 but other is f32; convert one with .to()`` here (mypy's own "cannot infer"
    names neither), and the overload taking what was given; a constexpr ``out_dtype`` as
    :func:`dtype_argument_taken` takes it."""
    signature = dtype_argument_taken(ctx)
    if len(ctx.args) < 2 or any(len(arg) != 1 for arg in ctx.args[:2]) or not isinstance(signature, CallableType):
        return signature
    given = [ctx.api.get_expression_type(arg[0]) for arg in ctx.args[:2]]
    problem = _choice_mismatch(given, ("input", "other"))
    if problem is not None:
        return _reported(ctx, signature, "dot", problem, given)
    found = [f for f in (_element_and_rank(_operand(t)) for t in given) if f is not None and isinstance(f[1], Instance)]
    if len(found) != 2:
        return signature
    (a, a_rank), (b, b_rank) = found
    assert isinstance(a_rank, Instance) and isinstance(b_rank, Instance)
    if not (_unknown(a) or _unknown(b) or is_same_type(a, b)):
        problem = f"input is {_dtype_name(a)} but other is {_dtype_name(b)}; convert one with .to()"
    elif a_rank.type.fullname != b_rank.type.fullname:
        problem = f"input is rank {a_rank.type.name[1:]} but other is rank {b_rank.type.name[1:]}"
    else:
        return signature
    return _reported(ctx, signature, "dot", problem, given)


def scalar_extremum(ctx: FunctionContext) -> Type:
    """Python's ``min``/``max`` of kernel values, which the run time reads as ``tl.minimum``/``tl.maximum``
    (Triton's code generator maps them so): typed as that op's block, of the operands' one element type
    and highest rank (``min(row_start + n, n_rows)`` a rank-0 block, ``max(x, 0.0)`` x's), widened as
    :func:`numbers_promoted` widens ``tl.maximum``'s."""
    blocks = [proper for types in ctx.arg_types for proper in map(get_proper_type, types)
              if isinstance(proper, Instance) and proper.type.fullname == TENSOR and len(proper.args) == 2]
    if not blocks or any(has_any_type(block) or not is_same_type(block.args[0], blocks[0].args[0]) for block in blocks):
        return ctx.default_return_type
    ranks = {get_proper_type(block.args[1]) for block in blocks}
    wide = [rank for rank in ranks if not (isinstance(rank, Instance) and rank.type.fullname == "tile_lang.tensor.R0")]
    if len(wide) > 1:
        return ctx.default_return_type
    return _element_replaced(ctx, next((block for block in blocks if get_proper_type(block.args[1]) in wide), blocks[0]),
                             _widening(ctx, True))


def numbers_promoted(ctx: FunctionContext, bf16: bool) -> Type:
    """``tl.maximum``/``tl.minimum``/``tl.clamp``/``tl.fma`` as Triton 3.6 types them (the run time's
    ``semantics.elementwise.tensor_dtypes``): a Python float makes a narrower float block's result f32
    (``tl.maximum(h, 0.0)`` of f16), an int a narrower int block's i32, and with ``bf16`` a bf16 block
    compares in f32; a return-type hook, so that the overloads' errors for other operands stay."""
    return _element_replaced(ctx, ctx.default_return_type, _widening(ctx, bf16))


def _widening(ctx: FunctionContext, bf16: bool) -> dict[str, str]:
    """The result elements the call's Python numbers (and ``bf16``) widen, each to its category's 32 bits."""
    numbers = {proper.type.fullname for types in ctx.arg_types for proper in map(get_proper_type, types)
               if isinstance(proper, Instance)}
    widened = {"bf16": "Float"} if bf16 else {}
    if "builtins.float" in numbers:
        widened.update((name, "Float") for name in (*NARROW["f"], *NARROW["i"], "i32", "u32", "i64", "u64"))
    if "builtins.int" in numbers:
        widened.update((name, "Int") for name in NARROW["i"])
    return widened


def _element_replaced(ctx: FunctionContext, typ: Type, widened: dict[str, str]) -> Type:
    """``typ``, a block whose element is named in ``widened``, with that element the 32-bit type of the
    category it maps to (``Float``: f32, ``Int``: i32); anything else as it is."""
    proper = get_proper_type(typ)
    element = get_proper_type(proper.args[0]) if isinstance(proper, Instance) and proper.type.fullname == TENSOR \
        and len(proper.args) == 2 else None
    category = widened.get(_dtype_name(element)) if isinstance(element, Instance) else None
    made, w32 = _class(ctx, f"tile_lang.dtypes.{category}"), _class(ctx, "tile_lang.dtypes.W32")
    if not isinstance(proper, Instance) or made is None or w32 is None:
        return typ
    return proper.copy_modified(args=[Instance(made, [Instance(w32, [])]), proper.args[1]])


def _int_bits(element: ProperType) -> tuple[str, int] | None:
    """(category, bits) of an ``Int[W]`` / ``UInt[W]`` element type of a known width, else None."""
    width = get_proper_type(element.args[0]) if isinstance(element, Instance) and element.type.name in ("Int", "UInt") else None
    if not (isinstance(element, Instance) and isinstance(width, Instance) and width.type.name in INT_BITS):
        return None
    return element.type.name, INT_BITS[width.type.name]


def _widens(narrow: ProperType, wide: ProperType) -> bool:
    """Whether ``narrow`` converts to ``wide`` without loss as Triton converts it: two integer types of
    one signedness, ``wide`` at least as wide (i32 into an i64 buffer, i32 meeting i64 in a where)."""
    a, b = _int_bits(narrow), _int_bits(wide)
    return a is not None and b is not None and a[0] == b[0] and a[1] <= b[1]


def _int_width(typ: Type) -> tuple[Instance, int, Instance] | None:
    """(element, bits, rank) of a ``Tensor[Int[W], R]`` (or UInt) of a known width and rank, else None."""
    found = _element_and_rank(typ)
    element, rank = found if found is not None else (None, None)
    width = get_proper_type(element.args[0]) if isinstance(element, Instance) and element.type.name in ("Int", "UInt") else None
    if not (isinstance(element, Instance) and isinstance(width, Instance) and width.type.name in INT_BITS
            and isinstance(rank, Instance) and rank.type.fullname in RANKS):
        return None
    return element, INT_BITS[width.type.name], rank


def ints_promoted(ctx: MethodSigContext, comparison: bool) -> FunctionLike:
    """An operator between integer blocks of two widths of one signedness (``offs < n`` with ``offs: i32``
    and ``n: i64``), typed as the run time computes it, in the wider type (Triton's promotion): integer
    widths are not the float widths the types keep apart on purpose. Other operands keep the overloads."""
    signature = ctx.default_signature
    given = ctx.api.get_expression_type(ctx.args[0][0]) if ctx.args and len(ctx.args[0]) == 1 else None
    left, right = _int_width(ctx.type), _int_width(given) if given is not None else None
    tensor, boolean = get_proper_type(ctx.type), _class(ctx, "tile_lang.dtypes.Bool")
    if (left is None or right is None or given is None or not isinstance(signature, CallableType)
            or not isinstance(tensor, Instance) or boolean is None or left[0].type.name != right[0].type.name
            or left[1] == right[1]):
        return signature
    ranks = {rank.type.fullname for _, _, rank in (left, right) if rank.type.name != "R0"}
    if len(ranks) > 1:
        return signature  # two ranks: the rank error stays
    rank = left[2] if left[2].type.name != "R0" else right[2]
    element = Instance(boolean, []) if comparison else max(left, right, key=lambda found: found[1])[0]
    return signature.copy_modified(arg_types=[given, *signature.arg_types[1:]], variables=[],
                                   ret_type=tensor.copy_modified(args=[element, rank]))


def _converted_operators(source: str) -> frozenset[tuple[int, int]]:
    """(line, column) of each operator expression of ``source`` that a ``.to`` / ``.cast`` converts: the
    call's receiver and the operators inside it (``(pid // H).to(tl.int64)``, ``(a * (b % H)).to(...)``),
    and the value of an assignment to a name its function converts (``b = pid // M``, then ``b.to(...)``)."""
    found: set[tuple[int, int]] = set()

    def mark(expr: ast.expr) -> None:
        if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
            found.add((expr.lineno, expr.col_offset))
            for part in [expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.operand]:
                mark(part)

    # The outermost functions only: a nested function's conversions and assignments are its outer one's too.
    outer: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            outer.append(node)
        else:
            pending.extend(ast.iter_child_nodes(node))
    for function in outer:
        receivers: list[ast.expr] = []
        assignments: list[ast.Assign] = []
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast"):
                receivers.append(node.func.value)
            elif isinstance(node, ast.Assign):
                assignments.append(node)
        names = {receiver.id for receiver in receivers if isinstance(receiver, ast.Name)}
        for receiver in receivers:
            mark(receiver)
        for assignment in assignments:
            if any(isinstance(t, ast.Name) and t.id in names for t in assignment.targets):
                mark(assignment.value)
    return frozenset(found)


@functools.cache
def _converted_in(path: str, modified: int) -> frozenset[tuple[int, int]]:
    """:func:`_converted_operators` of the file at ``path`` as of its modification time ``modified``
    (none for a file Python's own parser refuses, e.g. newer syntax than this interpreter's)."""
    try:
        return _converted_operators(Path(path).read_text(encoding="utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return frozenset()


def scalar_arithmetic_converted(ctx: MethodSigContext) -> FunctionLike:
    """Arithmetic of a kernel scalar (``tl.program_id``, an ``IntScalar`` parameter) with ints, typed as
    an ``IntScalar`` where the result is converted (``(pid // H).to(tl.int64)``): at run time the scalar
    is a rank-0 block and so is the result, with ``.to``. Only there: a result bound to a name stays an
    ``int``, so ``start = pid * BLOCK`` may be re-bound to ``0`` as before."""
    signature = ctx.default_signature
    returned = get_proper_type(signature.ret_type) if isinstance(signature, CallableType) else None
    path = ctx.api.path if isinstance(ctx.api, TypeChecker) else None
    if not (isinstance(signature, CallableType) and isinstance(returned, Instance) and returned.type.fullname == "builtins.int"
            and path is not None and os.path.exists(path)
            and (ctx.context.line, ctx.context.column) in _converted_in(path, os.stat(path).st_mtime_ns)):
        return signature
    operands = [ctx.type, *(ctx.api.get_expression_type(arg) for args in ctx.args for arg in args)]
    scalar = next((t for t in map(get_proper_type, operands) if isinstance(t, Instance) and t.type.fullname == INT_SCALAR), None)
    return signature if scalar is None else signature.copy_modified(ret_type=scalar)


def generic_combine_taken(ctx: FunctionSigContext) -> CallableType:
    """``tl.reduce`` / ``tl.associative_scan`` given a ``@tl.func`` generic over the dtype or width
    (``def mul(a: Tensor[Float[W], R0], b: ...) -> ...``): the ``Func`` value holds the helper's own type
    variables, which mypy does not solve against the input's; they are taken from the input's element
    type here, and the instantiated function must then fit as a concrete one would (a float helper
    given an int block is still an error)."""
    signature = ctx.default_signature
    names = signature.arg_names
    if "combine_fn" not in names or "input" not in names:
        return signature
    at, source = names.index("combine_fn"), names.index("input")
    if len(ctx.args[at]) != 1 or len(ctx.args[source]) != 1:
        return signature
    combine = get_proper_type(ctx.api.get_expression_type(ctx.args[at][0]))
    given = _element_and_rank(ctx.api.get_expression_type(ctx.args[source][0]))
    parameters = get_proper_type(combine.args[0]) if isinstance(combine, Instance) and combine.type.fullname == FUNC else None
    first = get_proper_type(parameters.arg_types[0]) if isinstance(parameters, Parameters) and parameters.arg_types else None
    found = _element_and_rank(first) if first is not None else None
    element = found[0] if found is not None else None
    if given is None or element is None or not isinstance(combine, Instance):
        return signature
    mapping: dict[TypeVarId, Type] = {}
    if isinstance(element, TypeVarType):
        mapping[element.id] = given[0]
    elif isinstance(element, Instance) and isinstance(given[0], Instance) and element.type == given[0].type:
        mapping = {arg.id: actual for arg, actual in zip(map(get_proper_type, element.args), given[0].args)
                   if isinstance(arg, TypeVarType)}
    if not mapping:
        return signature
    element_of = next((v for v in signature.variables if isinstance(v, TypeVarType) and v.name == "D"), None)
    declared = expand_type(signature.arg_types[at], {element_of.id: given[0]}) if element_of is not None else None
    if declared is None or not is_subtype(expand_type(combine, mapping), declared):
        return signature
    checked = AnyType(TypeOfAny.special_form)  # fits, as checked: the Func's own variables must not meet the signature's
    return signature.copy_modified(arg_types=[checked if i == at else t for i, t in enumerate(signature.arg_types)])


def dtype_argument_taken(ctx: FunctionSigContext) -> FunctionLike:
    """A builtin's ``dtype`` (or ``out_dtype``) given a bare constexpr holding a dtype (``tl.cast(x, DTYPE)``,
    ``tl.zeros((M, N), dtype=ACC_DTYPE)``, ``tl.dot(a, b, out_dtype=ACC_DTYPE)``): a block of that (unknown)
    dtype and the rank the other arguments give, as ``x.to(DTYPE)`` (:func:`converted_to_argument`); other
    calls keep the signature."""
    signature = ctx.default_signature
    name = next((n for n in ("dtype", "out_dtype") if n in signature.arg_names), None) if isinstance(
        signature, CallableType) else None
    if not isinstance(signature, CallableType) or name is None:
        return signature
    index = signature.arg_names.index(name)
    given = ctx.api.get_expression_type(ctx.args[index][0]) if len(ctx.args[index]) == 1 else None
    dtype = get_proper_type(signature.arg_types[index])
    returned = get_proper_type(signature.ret_type)
    if given is None or not _is_constexpr(given) or not isinstance(dtype, TypeType):
        return signature
    if isinstance(dtype.item, Instance) and isinstance(returned, Instance) and returned.type.fullname == TENSOR:
        # a fixed result dtype (``tl.dot``'s ``out_dtype: type[f32]``): the result's becomes unknown
        return signature.copy_modified(arg_types=[given if i == index else t for i, t in enumerate(signature.arg_types)],
                                       ret_type=returned.copy_modified(args=[AnyType(TypeOfAny.special_form), returned.args[1]]))
    if not isinstance(variable := get_proper_type(dtype.item), TypeVarType):
        return signature
    fixed = expand_type(signature, {variable.id: AnyType(TypeOfAny.special_form)})
    assert isinstance(fixed, CallableType)
    return fixed.copy_modified(arg_types=[given if i == index else t for i, t in enumerate(fixed.arg_types)],
                               variables=[v for v in signature.variables if v.id != variable.id])


def converted_to_argument(ctx: MethodSigContext) -> FunctionLike:
    """``x.to(dtype)`` typed ``Tensor[<dtype>, R]`` from its argument alone, not from the variable
    it is assigned to (see the module docstring); other calls keep the signature."""
    signature = ctx.default_signature
    if not ctx.args or len(ctx.args[0]) != 1 or not signature.variables:
        return signature
    given = get_proper_type(ctx.api.get_expression_type(ctx.args[0][0]))
    if isinstance(given, CallableType) and given.is_type_obj():
        given = TypeType.make_normalized(given.ret_type)
    variable = signature.variables[0]
    if variable.name != "E" or not (isinstance(given, TypeType) or _is_constexpr(given)):
        return signature
    if isinstance(given, TypeType):
        fixed = expand_type(signature, {variable.id: given.item})
        assert isinstance(fixed, CallableType)
        return fixed.copy_modified(variables=[v for v in signature.variables if v.id != variable.id])
    # a bare constexpr holding a dtype (``.to(X_dtype)``): a block of that unknown dtype, of the same rank
    fixed = expand_type(signature, {variable.id: AnyType(TypeOfAny.special_form)})
    assert isinstance(fixed, CallableType)
    return fixed.copy_modified(arg_types=[given, *fixed.arg_types[1:]],
                               variables=[v for v in signature.variables if v.id != variable.id])


def with_launch_options(ctx: MethodSigContext, arrays: Sequence[Type]) -> FunctionLike:
    """The kernel's parameters, each ``Pointer[D]`` one also taking ``arrays``, then the options
    it does not have as keyword-only parameters.

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
        arg_types=[*(_or_arrays(t, arrays) for t in launch.arg_types), *types],
        arg_kinds=[*launch.arg_kinds, *(ARG_NAMED_OPT for _ in names)],
        arg_names=[*launch.arg_names, *names],
        name=name,
        definition=definition,
    )


def _or_arrays(typ: Type, arrays: Sequence[Type]) -> Type:
    """``Pointer[D] | <arrays>`` for a pointer parameter's type, else ``typ``."""
    proper = get_proper_type(typ)
    is_pointer = isinstance(proper, Instance) and proper.type.fullname == POINTER
    return UnionType([typ, *arrays]) if is_pointer and arrays else typ


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


def with_supplied_optional(ctx: MethodContext) -> Type:
    """``tl.autotune(...)(kernel)`` / ``tl.heuristics(...)(kernel)`` (as decorators too): the wrapper's
    parameters with the constexprs it sets made optional, so the kernel needs no default for them."""
    wrapper = get_proper_type(ctx.default_return_type)
    names = _supplied(ctx)
    if not isinstance(wrapper, Instance) or not names:
        return ctx.default_return_type
    optional = {ARG_POS: ARG_OPT, ARG_NAMED: ARG_NAMED_OPT}
    return wrapper.copy_modified(args=[
        arg.copy_modified(arg_kinds=[optional.get(kind, kind) if name in names else kind
                                     for name, kind in zip(arg.arg_names, arg.arg_kinds)])
        if isinstance(arg, Parameters) else arg for arg in wrapper.args])


def _supplied(ctx: MethodContext) -> set[str]:
    """The constexprs the applied ``autotune``/``heuristics`` call sets: the keys of its literal
    ``tl.Config({...})`` list or heuristics dict; else (configs built by a function) every bare
    constexpr of the kernel it is applied to, where that kernel's definition is named; else none."""
    decorator = get_proper_type(ctx.type)
    maker = WRAPPER_DECORATORS.get(decorator.type.fullname) if isinstance(decorator, Instance) else None
    context = ctx.context
    candidates = (context.original_decorators if isinstance(context, Decorator)
                  else [context.callee] if isinstance(context, CallExpr) else [])
    calls = [c for c in candidates if isinstance(c, CallExpr) and isinstance(c.callee, RefExpr)
             and c.callee.fullname == maker]
    names = _literal_keys(calls[0], maker) if len(calls) == 1 else None
    if names is not None:
        return names
    kernel = _decorated(context)
    signature = kernel.func.type if kernel is not None else None
    return {name for name, typ in zip(signature.arg_names, signature.arg_types) if name is not None
            and _is_constexpr(typ)} if isinstance(signature, CallableType) else set()


def _decorated(context: Context) -> Decorator | None:
    """The decorated kernel that ``autotune``/``heuristics`` is applied to: the decorator's own
    function, or the ``@tl.kernel`` function a call ``tl.autotune(...)(kernel)`` names."""
    if isinstance(context, Decorator):
        return context
    given = context.args[0] if isinstance(context, CallExpr) and len(context.args) == 1 else None
    return given.node if isinstance(given, RefExpr) and isinstance(given.node, Decorator) else None


def _literal_keys(call: CallExpr, maker: str | None) -> set[str] | None:
    """The string keys of the call's configs (``autotune``) or values (``heuristics``), None unless literal."""
    given = _argument(call, "configs" if maker == AUTOTUNE else "values")
    if maker != AUTOTUNE:
        return _keys(given)
    if not isinstance(given, (ListExpr, TupleExpr)):
        return None
    found: set[str] = set()
    for config in given.items:
        keys = (_keys(_argument(config, "kwargs")) if isinstance(config, CallExpr)
                and isinstance(config.callee, RefExpr) and config.callee.fullname == CONFIG else None)
        if keys is None:
            return None
        found |= keys
    return found


def _argument(call: CallExpr, name: str) -> Expression | None:
    """The call's argument for its first parameter, ``name``: by keyword, else the first positional."""
    for arg, arg_name in zip(call.args, call.arg_names):
        if arg_name == name:
            return arg
    positional = [arg for arg, kind in zip(call.args, call.arg_kinds) if kind == ARG_POS]
    return positional[0] if positional else None


def _keys(expr: Expression | None) -> set[str] | None:
    """The keys of a dict literal whose keys are all string literals, else None."""
    if not isinstance(expr, DictExpr) or not all(isinstance(k, StrExpr) for k, _ in expr.items):
        return None
    return {k.value for k, _ in expr.items if isinstance(k, StrExpr)}


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class, for any mypy version this package supports."""
    return TileLangPlugin
