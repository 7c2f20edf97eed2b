"""Front end: a kernel's Python source (its AST, real file lines) to typed IR, without tracing.

Runtime control flow becomes structured regions; constexprs are evaluated here (``if FLAG:``
keeps one branch, ``tl.static_range`` unrolls); ``@tl.func`` and library helpers are inlined.
The kernel's errors (a :class:`~tile_lang.errors.TileLangError`: a broken rule, Python's own
error on a compile-time value) surface as a :class:`KernelError` at the user's own file and line;
any other exception is the front end's own failure, a :class:`CompilerBug` there.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import inspect
import math
import operator
import os
import types
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tile_lang.dtypes import Query
from tile_lang.tensor import FORWARDED_METHODS, SHAPE_METHODS, Shape, dtype_value, member, permute_dims, type_value
from tile_lang.builtin import builtin_of
import tile_lang.compiler.lowering as lowering
from tile_lang.compiler.lowering_base import block_of
from tile_lang.compiler.builder import Builder, is_scalar_value
from tile_lang.compiler.controlflow import RETURNED, ControlFlow, Stale, local_names
from tile_lang.compiler.ir import AssertAttr, Function, Loc, Node, Op, ParamAttr, Region, Type, UnaryFn
from tile_lang.compiler.spec import Spec
from tile_lang.descriptor import Layout, part_names
from tile_lang.packing import part_names as tuple_part_names
from tile_lang.errors import CompilerBug, KernelError, SemanticError, TileLangError, debugging
from tile_lang.func import refuse_captures, MAX_DEPTH, Func, inlinable, too_deep
import tile_lang.legality as legality
import tile_lang.target_info as target_info
from tile_lang.operators import BinaryOp, UnaryOp
from tile_lang.ops.memory import (TensorDescriptor, descriptor_dims, descriptor_gather, descriptor_load,
                                  descriptor_scatter, descriptor_store, make_tensor_descriptor)
from tile_lang.semantics.memory import DESCRIPTOR_DIMS
from tile_lang.ops import forms
from tile_lang.semantics.base import python
from tile_lang.semantics.dispatch import apply, checked
from tile_lang.signature import Constant, ConstexprFunction, plain, value_attribute
from tile_lang.reads import Read, ReadKind, closure_vars, fingerprint, location, module_owner

_BINOPS: dict[type[ast.AST], BinaryOp] = {
    ast.Add: BinaryOp.ADD, ast.Sub: BinaryOp.SUB, ast.Mult: BinaryOp.MUL, ast.Div: BinaryOp.TRUEDIV,
    ast.FloorDiv: BinaryOp.FLOORDIV, ast.Mod: BinaryOp.MOD, ast.BitAnd: BinaryOp.AND, ast.BitOr: BinaryOp.OR,
    ast.BitXor: BinaryOp.XOR, ast.LShift: BinaryOp.LSHIFT, ast.RShift: BinaryOp.RSHIFT, ast.Lt: BinaryOp.LT,
    ast.LtE: BinaryOp.LE, ast.Gt: BinaryOp.GT, ast.GtE: BinaryOp.GE, ast.Eq: BinaryOp.EQ, ast.NotEq: BinaryOp.NE,
}
_METHOD_OPS = {"lt": BinaryOp.LT, "le": BinaryOp.LE, "gt": BinaryOp.GT, "ge": BinaryOp.GE, "eq": BinaryOp.EQ,
               "ne": BinaryOp.NE, "add_offsets": BinaryOp.ADD}


LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""tile_lang's own directory: its library helpers (``tl.topk``, ``tl.cdiv``...) are located at the
kernel's line that calls them, in errors and in the generated CUDA's ``#line``s, as the reference
reports them at the user's innermost line."""


@dataclass
class Scope:
    """One function being visited: the kernel, or a helper inlined into it."""

    name: str
    filename: str
    line_offset: int
    globals: Mapping[str, Any]
    env: dict[str, Any]
    inlined: bool = False
    returned: list[Any] = field(default_factory=list)
    owner: str | None = ""  # where its names resolve, as a Read records it: "" for the kernel
    func: bool = False  # a @tl.func's body (they nest at most MAX_DEPTH deep)
    tree: ast.FunctionDef | None = None  # its source (a loop asks whether its variable is read after it)
    combine: object = None  # the combine function of a reduce or scan this body is (no runtime control flow)


@dataclass(frozen=True)
class BoundMethod:
    """``x.to`` and friends: a tensor method looked up, not yet called."""

    receiver: Node
    name: str

    def __repr__(self) -> str:  # errors name the method, not the receiver's whole IR
        return f"<tensor method .{self.name}>"


def build(kernel: Any, spec: Spec) -> Function:
    """The IR of ``kernel`` (a :class:`tile_lang.Kernel`) specialised by ``spec``; its source is
    first checked for Python the front end does not translate (the rules the reference shares)."""
    legality.check(kernel.fn, kernel.name, True)
    fdef, filename, offset = legality.parse(kernel.fn)
    front = Frontend(kernel.name)
    env: dict[str, Any] = {p.name: p.default for p in inspect.signature(kernel.fn).parameters.values()
                           if p.default is not inspect.Parameter.empty}
    env.update(spec.constexprs)
    params = []
    for index, (param, arg) in enumerate(zip(kernel.runtime_params, spec.args)):
        refused = lowering.CAPABILITIES.dtype_refusal(arg.dtype)
        if refused is not None:
            raise _refused_parameter(kernel, fdef, (filename, offset), param.name, refused)
        div = 16 if arg.divisible_by_16 else 1
        node = Node(Op.PARAM, Type(arg.dtype), attr=ParamAttr(index, param.name, div, arg.nonnegative))
        params.append(node)
        # an int equal to 1 is the constant 1 of the parameter's type, not a Python 1: `n // -3` keeps C's meaning
        env[param.name] = front.b.const(1, arg.dtype) if arg.equals_one else node
    scope = Scope(kernel.name, filename, offset, ChainMap(closure_vars(kernel.fn), kernel.fn.__globals__), env,
                  tree=fdef)
    with front.enter(scope), target_info.compiling_for(spec.arch):
        front.b.loc = Loc(filename, kernel.lineno, 0)
        for param in kernel.descriptors:
            env[param.name] = front.descriptor(param.name, param.annotation)
        for param in kernel.tuples:  # a tuple holding buffers: rebuilt from its pointer parameters
            env[param.name] = param.annotation.unpack([env[n] for n in tuple_part_names(param.name,
                                                                                        param.annotation.count)])
        front.b.loc = None
        front.block(_body(fdef))
    body = Region((), tuple(front.b.bodies[0]), ())
    return Function(kernel.name, tuple(params), body, spec.num_warps, (filename, kernel.lineno),
                    tuple(front.reads.values()), spec.num_stages, spec.arch)


def _refused_parameter(kernel: Any, fdef: ast.FunctionDef, where: tuple[str, int], name: str,
                       why: SemanticError) -> KernelError:
    """A parameter of a dtype the backend lacks, at its place in the ``def`` (a descriptor's base
    pointer, which the source does not name: at the ``def``'s line)."""
    filename, offset = where
    for arg in (*fdef.args.posonlyargs, *fdef.args.args):
        if arg.arg == name:
            return KernelError(f"parameter {name}: {why}", filename, arg.lineno + offset, arg.col_offset, kernel.name)
    return KernelError(f"parameter {name}: {why}", filename, kernel.lineno, 0, kernel.name)


def _body(fdef: ast.FunctionDef) -> list[ast.stmt]:
    body = fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]  # the docstring
    return body


def _returns(stmts: list[ast.stmt]) -> bool:
    """Whether ``stmts`` return on every path (a ``return`` last, or an ``if`` returning on both sides)."""
    if not stmts:
        return False
    last = stmts[-1]
    return isinstance(last, ast.Return) or isinstance(last, ast.If) and _returns(last.body) and _returns(last.orelse)


def folded_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """A helper's body with each ``if`` that returns on one side only followed by the statements
    after it moved into its other side (Python's meaning: they run only there), so a runtime
    ``if`` of a @tl.func returns on both sides (``if i < 0: return 0`` then ``return i``)."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.If):
            rest = stmts[i + 1:]
            then, orelse = stmt.body, stmt.orelse
            if rest and _returns(then) != _returns(orelse):
                then, orelse = (then, orelse + rest) if _returns(then) else (then + rest, orelse)
                out.append(ast.If(stmt.test, folded_returns(then), folded_returns(orelse), **_located_at(stmt)))
                return out
            stmt = ast.If(stmt.test, folded_returns(then), folded_returns(orelse), **_located_at(stmt))
        out.append(stmt)
    return out


def _located_at(node: ast.AST) -> dict[str, Any]:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


class Frontend(ControlFlow):
    """The AST visitor. ``visit`` is the single place errors are converted and located."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        self.b = Builder()
        self.scopes: list[Scope] = []
        self.reads: dict[tuple[ReadKind, str | None, str], Read] = {}

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @contextlib.contextmanager
    def enter(self, scope: Scope) -> Iterator[None]:
        self.scopes.append(scope)
        try:
            yield
        finally:
            self.scopes.pop()

    # ---------------------------------------------------------------- the wrapper

    def visit(self, node: ast.AST) -> Any:
        scope = self.scope
        saved = self.b.loc
        line = getattr(node, "lineno", None)
        if line is not None and not (scope.inlined and scope.filename.startswith(LIBRARY)):
            self.b.loc = Loc(scope.filename, line + scope.line_offset, getattr(node, "col_offset", 0))
        try:
            with self.located():
                method = getattr(self, f"visit_{type(node).__name__}", None)
                if method is None:
                    raise self.error(f"unsupported Python in a kernel: {type(node).__name__} "
                                     f"({ast.unparse(node)[:60]!r})")
                return method(node)
        finally:
            self.b.loc = saved

    @contextlib.contextmanager
    def located(self, prefix: str = "") -> Iterator[None]:
        """The block's TileLangError (the kernel's: a SemanticError, a builtin's UsageError) as a
        KernelError at the builder's location, ``prefix`` before its message; any other
        exception as a CompilerBug there, chained from it."""
        try:
            yield
        except (KernelError, CompilerBug):
            raise
        except Exception as exc:
            loc = self.b.loc or Loc(self.scope.filename, 0)
            if isinstance(exc, TileLangError):
                raise KernelError(prefix + str(exc), loc.filename, loc.line, loc.col, self.kernel) from exc
            if debugging():
                raise
            raise CompilerBug("the front end", exc, loc.filename, loc.line, loc.col, self.kernel) from exc

    def descriptor(self, name: str, layout: Layout) -> Any:
        """A host descriptor parameter inside the kernel: ``tl.make_tensor_descriptor`` of the
        arguments it is passed as (``signature.runtime_parts``), made at the kernel's entry."""
        env = self.scope.env
        base, shapes, strides = part_names(name, layout.ndim)
        with self.located(f"parameter {name}: "):
            return self.call(make_tensor_descriptor, (env[base], tuple(env[s] for s in shapes),
                                                          tuple(env[s] for s in strides), layout.block_shape),
                             {"padding_option": layout.padding})

    def error(self, message: str) -> SemanticError:
        """The kernel's error at the node being visited (``visit`` locates it)."""
        return SemanticError(message)

    def note(self, kind: ReadKind, owner: str | None, name: str, value: Any) -> Any:
        """Record a value read from Python (compiled code depends on it), and return it."""
        if (kind, owner, name) not in self.reads:
            self.reads[(kind, owner, name)] = Read(kind, owner, name, fingerprint(value))
        return value

    # ---------------------------------------------------------------- statements

    def block(self, stmts: list[ast.stmt]) -> bool:
        """Visit statements in order; True when the block ended in a ``return``."""
        for stmt in stmts:
            if self.visit(stmt) is RETURNED:
                return True
        return False

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string statement (comment-like)
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Raise(self, node: ast.Raise) -> None:
        raise self.error(str(apply(forms.raised, ast.unparse(node))))

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        assert isinstance(node.target, ast.Name)  # the shared check (tile_lang.legality)
        current = self.visit(ast.Name(id=node.target.id, ctx=ast.Load(), lineno=node.lineno,
                                      col_offset=node.col_offset))
        self.assign(node.target, self.binop(type(node.op), current, self.visit(node.value)))

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(f"cannot unpack {_show(value)} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            raise self.error(f"unsupported assignment target {ast.unparse(target)!r}")

    def visit_Assert(self, node: ast.Assert) -> None:
        """A compile-time test is checked now; a runtime scalar's or block's is a device assertion."""
        test = self.visit(node.test)
        if isinstance(test, Node):
            apply(forms.asserted, test.ty.dtype)
            message = apply(forms.assertion_message, self.visit(node.msg) if node.msg else None, ast.unparse(node.test))
            self.b.emit(Op.ASSERT, None, (self.b.truth(test),), AssertAttr(message))
        elif not test:
            message = apply(forms.assertion_message, self.visit(node.msg) if node.msg else None, ast.unparse(node.test))
            raise self.error(f"assertion failed: {message}")

    def visit_Return(self, node: ast.Return) -> object:
        value = self.visit(node.value) if node.value is not None else None
        if self.scope.inlined:
            self.scope.returned.append(value)
        elif value is not None:
            raise self.error("a kernel cannot return a value")
        elif self.in_runtime_branch:
            self.b.emit(Op.RETURN, None)
        return RETURNED

    # ---------------------------------------------------------------- expressions

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name) -> Any:
        scope = self.scope
        if node.id in scope.env:
            value = scope.env[node.id]
            if isinstance(value, Stale):
                raise self.error(value.message())
            return value
        if scope.tree is not None and node.id in local_names(scope.tree):  # Python's words, as the reference's
            raise self.error(f"UnboundLocalError: cannot access local variable {node.id!r} where it is not "
                             "associated with a value")
        if node.id in scope.globals:  # a module-level tl.constexpr(v) is read as v
            return self.note(ReadKind.NAME, scope.owner, node.id, plain(scope.globals[node.id]))
        if hasattr(builtins, node.id):
            return self.note(ReadKind.NAME, scope.owner, node.id, getattr(builtins, node.id))
        raise self.error(f"NameError: name {node.id!r} is not defined")  # Python's words, as the reference's

    def visit_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> tuple[Any, ...]:
        return tuple(self.visit(e) for e in node.elts)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        if isinstance(base, TensorDescriptor) and node.attr in _DESCRIPTOR_METHODS:
            return functools.partial(_DESCRIPTOR_METHODS[node.attr], base)
        if isinstance(base, TensorDescriptor) and node.attr in DESCRIPTOR_DIMS:  # desc.shape, desc.strides
            return self.call(descriptor_dims, (base, node.attr), {})
        if isinstance(base, TensorDescriptor) and node.attr == "block_shape":  # a list, which kernels see as tuples
            return tuple(base.block_shape)
        if isinstance(base, Node):
            if node.attr == "shape":
                return Shape(base.ty.shape)
            if node.attr == "numel":
                return math.prod(base.ty.shape)
            if node.attr == "dtype":
                return dtype_value(base.ty.dtype)
            if node.attr == "type":
                return type_value(base.ty.dtype, base.ty.shape)
            if node.attr == "ndim":
                return len(base.ty.shape)
            if node.attr == "T":
                return self.call(member("trans"), (base,), {})
            return BoundMethod(base, node.attr)
        if node.attr == "value":  # a constexpr's value, as Triton's tl.constexpr(...).value
            return value_attribute(base)
        if isinstance(base, (types.ModuleType, type)):
            return self.note(ReadKind.ATTR, location(base), node.attr, plain(python(getattr, base, node.attr)))
        if node.attr == "dtype" and isinstance(base, (bool, int, float)):  # `value = 1; value.dtype`
            return dtype_value(apply(forms.constant_dtype, base))
        return python(getattr, base, node.attr)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(type(node.op), self.visit(node.left), self.visit(node.right))

    def binop(self, op: type[ast.AST], left: Any, right: Any) -> Any:
        constant = not isinstance(left, Node) and not isinstance(right, Node)
        if constant and (op not in _BINOPS or not (is_scalar_value(left) and is_scalar_value(right))):
            return _python_binop(op, left, right)  # 2**40, tuple + tuple: Python's own meaning
        if op not in _BINOPS:
            raise self.error(f"unsupported operator {op.__name__} on a tensor")
        return self.b.binary_op(_BINOPS[op], left, right)

    def visit_Compare(self, node: ast.Compare) -> Any:
        op, right = node.ops[0], self.visit(node.comparators[0])
        left = self.visit(node.left)
        if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            # a tensor is never None, as in Triton (`if bias_ptr is not None:` with a pointer passed)
            against_none = isinstance(op, (ast.Is, ast.IsNot)) and (left is None or right is None)
            if (isinstance(left, Node) or isinstance(right, Node)) and not against_none:
                raise self.error(f"{type(op).__name__} on a tensor")
            return python(_python_compare, op, left, right)
        return self.binop(type(op), left, right)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        if not isinstance(operand, Node):
            table: dict[type[ast.AST], Callable[[Any], Any]] = {
                ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x, ast.Invert: lambda x: ~x}
            return python(table[type(node.op)], operand)
        if isinstance(node.op, ast.Not):
            return self.b.unary(UnaryFn.NOT, self.b.truth(operand) if apply(forms.logical, operand.ty.shape,
                                                                          self.scope.combine is not None, True)
                                else self.truth(operand))
        ops = {ast.USub: UnaryOp.NEG, ast.UAdd: UnaryOp.POS, ast.Invert: UnaryOp.INVERT}
        return self.b.unary_op(ops[type(node.op)], operand)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        key = self.visit(node.slice)
        if not isinstance(base, Node):
            return python(operator.getitem, base, key)
        dims = iter(base.ty.shape)
        shape = [1 if k is None else next(dims) for k in apply(forms.subscript, key, len(base.ty.shape))]
        return self.b.reshape(base, tuple(shape)) if base.ty.shape else self.b.splat(base, tuple(shape))

    def visit_Slice(self, node: ast.Slice) -> slice:
        parts = [self.visit(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> str:
        values = [self.visit(v) for v in node.values]
        return "".join(str(v) for v in values)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> str:
        return str(self.visit(node.value))

    # ---------------------------------------------------------------- calls

    def visit_Call(self, node: ast.Call) -> Any:
        callee = self.visit(node.func)
        args = tuple(v for a in node.args for v in (self.splat(a) if isinstance(a, ast.Starred) else (self.visit(a),)))
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords if k.arg is not None}
        return self.call(callee, args, kwargs)

    def splat(self, node: ast.Starred) -> tuple[Any, ...]:
        """The values of ``*t`` in a call: ``t`` must be a tuple (or list) known when compiling."""
        values = self.visit(node.value)
        if isinstance(values, Node):  # the reference's words: its tensors refuse iteration
            raise self.error("a tile_lang tensor is not iterable; use tl.static_range over its indices")
        if not isinstance(values, (tuple, list)):
            raise self.error(f"*{ast.unparse(node.value)} in a call takes a tuple, got {type(values).__name__}")
        return tuple(values)

    def call(self, callee: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if isinstance(callee, BoundMethod):
            return self.method(callee, args, kwargs)
        if isinstance(callee, functools.partial):
            return self.call(callee.func, (*callee.args, *args), {**callee.keywords, **kwargs})
        op = builtin_of(callee)
        if op is not None:
            made = checked(op, op.bind(args, kwargs), block_of, lowering.CAPABILITIES)
            return lowering.LOWERINGS[op](self, made)
        fn = inlinable(callee)
        if fn is not None:
            return self.inline(fn, args, kwargs, isinstance(callee, Func))
        if callee in legality.RANGES:
            raise self.error(legality.RANGE_CALL)
        if callee in legality.TYPING_ONLY:
            return args[0]
        if (tl_builtin := legality.alias_of(callee)) is not None:  # print(...): tl.device_print(...)
            return self.call(tl_builtin, args, kwargs)
        if isinstance(callee, Query):  # tl.float32.is_floating(): a compile-time bool
            return python(callee, *args, **kwargs)
        if callee is Constant:  # tl.constexpr(v) in a kernel: v, a compile-time value
            if any(isinstance(v, Node) for v in (*args, *kwargs.values())):
                raise self.error("tl.constexpr takes a compile-time value, not a runtime tensor")
            return python(Constant, *args, **kwargs).value
        if isinstance(callee, ConstexprFunction):  # Python run at compile time
            return callee.at_compile_time(args, kwargs, lambda v: isinstance(v, Node))
        if callee is builtins.isinstance and len(args) == 2 and not kwargs:  # a compile-time bool
            return legality.kernel_isinstance(args[0], args[1], isinstance(args[0], Node))
        if callee in legality.PURE_BUILTINS and not any(isinstance(v, Node) for v in (*args, *kwargs.values())):
            return python(callee, *args, **kwargs)
        if legality.python_builtin(callee):
            shapes = tuple(v.ty.shape if isinstance(v, Node) else () for v in args)
            extremum = apply(forms.python_builtin, callee, shapes, bool(kwargs))
            return functools.reduce(lambda acc, v: self.call(extremum, (acc, v), {}), args[1:], args[0]) \
                if len(args) > 1 else self.call(extremum, args, {})  # max(a, b, c): max(max(a, b), c)
        raise self.error(legality.refused_call(callee))

    def method(self, bound: BoundMethod, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if bound.name in _METHOD_OPS:
            return self.b.binary_op(_METHOD_OPS[bound.name], bound.receiver, *args)
        if bound.name in ("to", "cast"):
            return self.call(member("cast"), (bound.receiver, *args), kwargs)
        if bound.name in FORWARDED_METHODS:  # x.reshape(2, 4): tl.reshape(x, (2, 4))
            shaped = (permute_dims(args),) if bound.name in SHAPE_METHODS else args
            return self.call(member(bound.name), (bound.receiver, *shaped), kwargs)
        if bound.name == "store":
            return self.call(member("store"), (bound.receiver, *args), kwargs)
        raise self.error(f"tensors have no method {bound.name!r} in kernels")

    def inline(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], func: bool = True,
               combine: object = None) -> Any:
        """Visit a helper's body with its parameters bound to the caller's values; ``func``: a
        @tl.func's (recursion ended by a constexpr unrolls, to :data:`MAX_DEPTH` nested calls);
        ``combine``: the reduce's or scan's combine function this is."""
        if func and sum(s.func for s in self.scopes) >= MAX_DEPTH:
            raise self.error(too_deep(fn.__qualname__))
        if func:
            refuse_captures(fn)  # as the reference's call of a capturing triton.JITFunction does
        legality.check(fn, self.kernel, False)
        fdef, filename, offset = legality.parse(fn)
        bound = python(inspect.signature(fn).bind, *args, **kwargs)
        bound.apply_defaults()
        scope = Scope(fn.__qualname__, filename, offset, fn.__globals__, dict(bound.arguments), inlined=True,
                      owner=module_owner(fn.__globals__), func=func, tree=fdef, combine=combine)
        with self.enter(scope), self.runtime_branch(False):
            self.block(folded_returns(_body(fdef)) if func else _body(fdef))
        return scope.returned[0] if scope.returned else None

# desc.load(...) and desc.store(...) on a tensor descriptor are these builtins with desc first.
_DESCRIPTOR_METHODS: dict[str, Callable[..., Any]] = {"load": descriptor_load, "store": descriptor_store,
                                                      "gather": descriptor_gather, "scatter": descriptor_scatter}


def _show(value: Any) -> str:
    return f"tensor {value.ty}" if isinstance(value, Node) else f"{type(value).__name__} {value!r}"


_PY_OPS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.Pow: operator.pow,
}


def _python_binop(op: type[ast.AST], a: Any, b: Any) -> Any:
    """An operator on compile-time Python values (numbers, tuples, dtype markers, strings)."""
    if op not in _PY_OPS:
        raise SemanticError(f"unsupported operator {op.__name__}")
    return python(_PY_OPS[op], a, b)


def _python_compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    table: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
        ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
        ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y}
    return table[type(op)](a, b)
