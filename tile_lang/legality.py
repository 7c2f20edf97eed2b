"""What a kernel or @tl.func body may contain: the Python the compiler's front end translates.

Checked over the source before anything runs, by the compiler (``tile_lang.compiler.frontend``,
so ``tile-lang check`` too) and by the NumPy reference alike, so both refuse the same kernel
with one message at one line. A call whose callee is a name bound in the function (a
``combine_fn`` parameter) is known only when it runs: :func:`call_refusal` is then the rule.
"""

from __future__ import annotations

import ast
import builtins
import functools
import textwrap
import types
import typing
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, Set
from dataclasses import dataclass
from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.builtin import builtin_of
from tile_lang.errors import KernelError, Unsupported, UsageError
from tile_lang.func import Func, inlinable
from tile_lang.ops import creation, debug, iterators, tuples
from tile_lang.reads import closure_vars, source_of
from tile_lang.semantics import SemanticError, elementwise
import tile_lang.tensor as tensor
from tile_lang.ops.memory import TensorDescriptor
from tile_lang.signature import ConstexprFunction, constexpr
from tile_lang.tensor import FORWARDED_METHODS, Tensor, pointer_type

# Python builtins a kernel may call on compile-time values, and tl's type makers (tl.pointer_type).
PURE_BUILTINS: frozenset[object] = frozenset({builtins.min, builtins.max, builtins.len, builtins.abs,
                                              builtins.int, builtins.float, builtins.bool, builtins.isinstance,
                                              pointer_type, tuples.make_tuple})
# Python builtins a kernel body reads as tl builtins, as Triton's code generator does.
ALIASES: tuple[tuple[object, object], ...] = ((builtins.print, debug.device_print),)
# Functions of typing that only mypy reads (each returns its first argument at run time).
TYPING_ONLY: frozenset[object] = frozenset({typing.assert_type})
RANGES: frozenset[object] = frozenset({builtins.range, iterators.range, iterators.static_range})
# Methods a kernel may call on its values: tensors' (tile_lang.Tensor) and descriptors' load/store
# (gather/scatter, Triton's, are names only: tile_lang.ops.memory.TensorDescriptor).
METHODS = FORWARDED_METHODS | frozenset({"lt", "le", "gt", "ge", "eq", "ne", "add_offsets", "to", "cast", "store", "load",
                                          "gather", "scatter"})

_STATEMENTS = (ast.Expr, ast.Pass, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Assert, ast.Raise, ast.Return, ast.If,
               ast.For, ast.While)
_EXPRESSIONS = (ast.Attribute, ast.BinOp, ast.BoolOp, ast.Call, ast.Compare, ast.Constant, ast.FormattedValue,
                ast.IfExp, ast.JoinedStr, ast.List, ast.Name, ast.Slice, ast.Starred, ast.Subscript, ast.Tuple,
                ast.UnaryOp)
LOOP_ITERATOR = "a kernel loop iterates over range(...), tl.range(...) or tl.static_range(...)"
RANGE_CALL = "range() is only allowed as a for loop's iterator"


@functools.lru_cache(maxsize=256)
def parse(fn: Callable[..., Any]) -> tuple[ast.FunctionDef, str, int]:
    """The function's AST with its file and the line offset that makes AST lines real."""
    source, filename, offset = source_of(fn)
    fdef = ast.parse(textwrap.dedent(source)).body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise UsageError(f"{fn!r} is not a plain function: a kernel or @tl.func is a def statement")
    return fdef, filename, offset


def kernel_isinstance(value: object, classinfo: object, runtime: bool) -> bool:
    """``isinstance(value, classinfo)`` in a kernel, a compile-time bool on both backends;
    ``runtime`` says whether ``value`` is a runtime value (a tensor). Triton's ``tl.tensor`` (in
    tile_lang the module ``tile_lang.tensor``, which that spelling names) and ``tl.Tensor`` hold
    the runtime values, ``tl.constexpr`` the compile-time ones; any other class asks Python."""
    if isinstance(classinfo, tuple):
        return any(kernel_isinstance(value, c, runtime) for c in classinfo)
    if classinfo is tensor or classinfo is tensor.Tensor:
        return runtime
    if classinfo is constexpr:
        return not runtime
    if not isinstance(classinfo, (type, types.UnionType)):
        raise SemanticError(f"isinstance() arg 2 must be a type, a tuple of types, or a union, got {classinfo!r}")
    return not runtime and isinstance(value, classinfo)


def alias_of(callee: object) -> object | None:
    """The tl builtin a Python builtin stands for in a kernel (print: tl.device_print), or what a
    dtype called as a constructor is (``tl.float32(v)``: ``tl.full((), v, tl.float32)``, as in
    Triton), or None."""
    found = next((tl_builtin for python, tl_builtin in ALIASES if python is callee), None)
    if found is None and dtypes.is_marker(callee):
        return functools.partial(creation.full, (), dtype=callee)
    return found


def python_builtin(callee: object) -> bool:
    """Whether ``callee`` is Python's ``min``, ``max`` or ``abs``, which on runtime values are a
    ``tl.*`` op (``forms.python_builtin``) and on compile-time ones Python's own."""
    return callee in elementwise.PYTHON_BUILTINS


def call_refusal(callee: object) -> str | None:
    """Why a kernel may not call ``callee`` (None: it may): only tl builtins, @tl.func functions
    and library helpers, ``tl.constexpr`` and constexpr functions, the Python builtins above, and
    tensor methods."""
    if isinstance(callee, functools.partial):
        return call_refusal(callee.func)
    if callee in RANGES:
        return RANGE_CALL
    if builtin_of(callee) is not None or inlinable(callee) is not None or callee in PURE_BUILTINS:
        return None
    if isinstance(callee, ConstexprFunction):  # called at compile time, on both backends
        return None
    if alias_of(callee) is not None:
        return None
    if isinstance(callee, dtypes.Query):  # tl.float32.is_floating(): a compile-time bool
        return None
    if python_builtin(callee) or callee in TYPING_ONLY or callee is constexpr:
        return None
    if getattr(callee, "__name__", None) in METHODS and _is_value(getattr(callee, "__self__", None)):
        return None
    return refused_call(callee)


def refused_call(callee: object) -> str:
    """The message for a call a kernel may not make."""
    name = getattr(callee, "__qualname__", None) or type(callee).__name__
    return (f"call to {name}: a kernel may only call tl builtins and @tl.func functions "
            "(Python functions run on the host)")


def _is_value(receiver: object) -> bool:
    """A kernel value whose :data:`METHODS` a kernel calls: a tensor or a tensor descriptor."""
    return isinstance(receiver, (Tensor, TensorDescriptor))


@dataclass(frozen=True)
class Refusal:
    """Where and why a body holds Python the compiler does not translate."""

    message: str
    filename: str
    lineno: int
    col: int

    def error(self, kernel: str) -> KernelError:
        return KernelError(self.message, self.filename, self.lineno, self.col, kernel)


def check(fn: Callable[..., Any], kernel: str, is_kernel: bool) -> None:
    """Raise the :class:`KernelError` of the first construct ``fn``'s body (a kernel's, or a
    @tl.func's) may not hold, or of a @tl.func it calls by a module-level name."""
    refusal = _refusal(fn, is_kernel)
    if refusal is not None:
        raise refusal.error(kernel)


@functools.lru_cache(maxsize=1024)
def _refusal(fn: Callable[..., Any], is_kernel: bool, seen: frozenset[object] = frozenset()) -> Refusal | None:
    try:
        fdef, filename, offset = parse(fn)
    except (OSError, TypeError, SyntaxError):
        return None  # no source to check: running it reports what it can
    walker = _Walker(fn, fdef, filename, offset, is_kernel)
    found = walker.first()
    if found is not None:
        return found
    for func in walker.funcs:  # module-level @tl.funcs it calls: what inlining them would find
        if func.fn not in seen:
            found = _refusal(func.fn, False, seen | {fn})
            if found is not None:
                return found
    return None


UNKNOWN = object()  # what resolve gives for a callee known only at run time


def resolve(e: ast.expr, local: Set[str], scope: Mapping[str, object]) -> object:
    """What a callee expression names before the body runs: a module-level or closure name in
    ``scope``, a builtin, or an attribute of one; UNKNOWN for a name in ``local`` (bound in the
    function, as a @tl.func may be passed in) or a computed value."""
    if isinstance(e, ast.Name):
        if e.id in local:
            return UNKNOWN
        if e.id in scope:
            return scope[e.id]
        return getattr(builtins, e.id, UNKNOWN)
    if isinstance(e, ast.Attribute):
        base = resolve(e.value, local, scope)
        return UNKNOWN if base is UNKNOWN else getattr(base, e.attr, UNKNOWN)
    return UNKNOWN


class _Walker:
    """One body's walk, in source order: the node types the front end visits, and the rules
    its visitors apply to the source alone."""

    def __init__(self, fn: Callable[..., Any], fdef: ast.FunctionDef, filename: str, offset: int,
                 is_kernel: bool) -> None:
        self.fdef, self.filename, self.offset, self.is_kernel = fdef, filename, offset, is_kernel
        a = fdef.args
        params = {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg is not None}
        stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        self.local = params | stored
        self.globals = ChainMap(closure_vars(fn), getattr(fn, "__globals__", {}))
        self.funcs: list[Func[..., Any]] = []
        self.iterators: set[int] = set()  # the calls that are for loops' iterators
        self.splats: set[int] = set()  # the *values arguments of calls
        self.constexprs = {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                           if arg.annotation is not None and _names_constexpr(arg.annotation)}
        self.guarded = 0  # depth of branches a constexpr may leave out (Triton compiles them not at all)

    def first(self) -> Refusal | None:
        body = self.fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            for node, message in self.walk(stmt):
                return Refusal(message, self.filename, getattr(node, "lineno", 0) + self.offset,
                               getattr(node, "col_offset", 0))
        return None

    def walk(self, node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
        """The refusals of ``node`` and its parts, the node's own first."""
        message = self.rule(node)
        if message is not None:
            yield node, message
        if isinstance(node, ast.Raise):  # its exception is host Python, never built (forms.raised)
            return
        if isinstance(node, ast.If) and self.constexpr_test(node.test):
            yield from self.walk(node.test)
            self.guarded += 1
            try:
                for stmt in (*node.body, *node.orelse):
                    yield from self.walk(stmt)
            finally:
                self.guarded -= 1
            return
        for child in ast.iter_child_nodes(node):
            yield from self.walk(child)

    def constexpr_test(self, test: ast.expr) -> bool:
        """Whether ``test`` reads only constexpr parameters and constants (``if USE_GDC:``,
        ``if SLICE_NUM == 1:``): its branches may never be compiled."""
        names = [n for n in ast.walk(test) if isinstance(n, ast.Name)]
        return bool(names) and all(n.id in self.constexprs for n in names) and all(
            isinstance(n, (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Load,
                           ast.cmpop, ast.boolop, ast.unaryop)) for n in ast.walk(test))

    def rule(self, node: ast.AST) -> str | None:
        if not isinstance(node, (ast.stmt, ast.expr)):
            return None  # a keyword, an operator, a load or store marker
        if isinstance(node, ast.Lambda):
            return "a lambda cannot be called from a kernel: a helper or combine_fn must be a @tl.func"
        if not isinstance(node, (*_STATEMENTS, *_EXPRESSIONS)):
            return f"unsupported Python in a kernel: {type(node).__name__} ({ast.unparse(node)[:60]!r})"
        match node:
            case ast.For():
                return self.loop(node)
            case ast.While(orelse=[_, *_]):
                return "while ... else is not supported"
            case ast.Compare(ops=[_, _, *_]):
                return "chained comparisons are not supported; use & between comparisons"
            case ast.AugAssign(target=target) if not isinstance(target, ast.Name):
                return "augmented assignment only to a plain name"
            case ast.Assign() | ast.AnnAssign():
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bad = next((t for t in targets if not _plain_target(t)), None)
                return None if bad is None else f"unsupported assignment target {ast.unparse(bad)!r}"
            case ast.Return(value=value) if self.is_kernel and not (value is None or _is_none(value)):
                return "a kernel cannot return a value"
            case ast.Call():
                return self.call(node)
            case ast.Starred() if id(node) not in self.splats:
                return f"*{ast.unparse(node.value)} is only allowed as a call's argument (f(x, *values))"
        return None

    def loop(self, node: ast.For) -> str | None:
        if node.orelse:
            return "for ... else is not supported"
        if not isinstance(node.iter, ast.Call):
            return LOOP_ITERATOR
        self.iterators.add(id(node.iter))
        callee = self.resolve(node.iter.func)
        if callee is not UNKNOWN and callee not in RANGES:
            return LOOP_ITERATOR
        return None if isinstance(node.target, ast.Name) else "the loop variable must be a plain name"

    def call(self, node: ast.Call) -> str | None:
        self.splats.update(id(a) for a in node.args if isinstance(a, ast.Starred))  # f(x, *t): t a tuple
        if any(k.arg is None for k in node.keywords):
            return "**kwargs in a kernel call is not supported"
        callee = self.resolve(node.func)
        if callee is UNKNOWN:
            unsupported = self.unsupported(node.func)
            if unsupported is not None:
                return None if self.guarded else unsupported
            if isinstance(node.func, ast.Attribute) and node.func.attr not in METHODS | dtypes.QUERIES:
                return f"{node.func.attr!r} is not a method a kernel may call (kernel values have " \
                       f"{', '.join('.' + m for m in sorted(METHODS))})"
            return None  # a local callee: call_refusal when it runs
        if isinstance(callee, Func):
            self.funcs.append(callee)
        if callee in RANGES and id(node) in self.iterators:
            return None
        return call_refusal(callee)

    def unsupported(self, e: ast.expr) -> str | None:
        """Why ``e`` names nothing when it is a Triton name tile_lang lacks (``tl.reduce_or``): a
        call to it under a constexpr's branch is left to the run or compile that reaches it
        (vLLM's ``if USE_GDC: tl.extra.cuda.gdc_wait()``), as Triton compiles such a branch not at all."""
        if not isinstance(e, ast.Attribute) or (base := self.resolve(e.value)) is UNKNOWN:
            return None
        try:
            getattr(base, e.attr)
        except Unsupported as missing:
            return str(missing)
        except AttributeError:
            return None
        return None

    def resolve(self, e: ast.expr) -> object:
        return resolve(e, self.local, self.globals)


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain_target(t) for t in target.elts)


def _names_constexpr(annotation: ast.expr) -> bool:
    """Whether a parameter's annotation is ``tl.constexpr`` (or ``constexpr``, or either as a string)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
    else:
        text = ast.unparse(annotation)
    return text == "constexpr" or text.endswith(".constexpr")


def _is_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None
