"""The two rewritten versions of a kernel or @tl.func, made from its own source with line
numbers kept (so errors still point at the user's lines). This works on the Python source only,
independently of the compiler.

The *checked version* (:mod:`checked`, what a group runs while its programs agree) is the source
as written but for the constructs whose compiler rules need the source, not only the values
(:class:`_Checks`: ``and``/``or``, ``assert``, calls of @tl.funcs, and loops without ``else``:
integer bounds, typed indices and carried shapes, see :mod:`loops`).

The *SIMT version* (:mod:`simt`) also routes the rest of the control flow, so that programs that
disagree on a branch or a loop run it masked: ``if``/``elif``/``else``, ``while``, ``for``,
``return``, ``and``/``or``/``not``, ``x if c else y``, ``assert``, assignments to names (plain,
augmented, annotated, tuple targets), calls, and reads of names some program may not have bound. Nothing else reaches it: a body holding other
Python is refused before it runs, as the compiler refuses it (:mod:`tile_lang.legality`).
"""

from __future__ import annotations

import ast
import builtins
import itertools
import textwrap
from collections.abc import Iterable, Iterator
from types import CellType, CodeType, FunctionType, ModuleType
from typing import TypeVar

from tile_lang.func import Func
from tile_lang.legality import UNKNOWN, alias_of, python_builtin, resolve
from tile_lang.ops import forms
from tile_lang.reads import source_of
from tile_lang.semantics.dispatch import apply
from tile_lang.signature import Constant

RUNTIME = "_tl_runtime"
UNBOUND = "_tl_unbound"
FRAME = "_tl_frame"
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
          ast.DictComp, ast.GeneratorExp)


def transform(fn: FunctionType, runtime: ModuleType, unbound: object, masked: bool) -> FunctionType | None:
    """``fn`` rewritten to call ``runtime``: its SIMT version (``masked``, :mod:`simt`) or its
    checked version (:mod:`checked`); None when its source cannot be read or parsed, or (checked)
    when nothing in it needs checking."""
    try:
        text, _, offset = source_of(fn)  # the text the legality check and the compiler read, once a process
        tree = ast.parse(textwrap.dedent(text))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != fn.__name__:
        return None
    ast.increment_lineno(tree, offset)
    _strip_annotations(fdef)
    fdef.decorator_list = []
    rewriter = _Rewriter(fdef, fn) if masked else _Checks(fdef, fn)
    fdef.body = rewriter.function_body()
    if not rewriter.changed:
        return None
    freevars = fn.__code__.co_freevars
    # the def binds the function's name in _tl_outer: declared global, a recursive call reads the module's
    own = [ast.Global([fdef.name])] if fdef.name not in freevars else []
    outer = ast.FunctionDef(
        name="_tl_outer", args=_arguments([RUNTIME, UNBOUND, *freevars]), decorator_list=[], returns=None,
        body=[*own, fdef, ast.Return(ast.Name(fdef.name, ast.Load()))])
    ast.copy_location(outer, fdef)
    module = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    code = compile(module, fn.__code__.co_filename, "exec", dont_inherit=True)
    inner = _code_named(_code_named(code, "_tl_outer"), fdef.name)
    cells = {RUNTIME: CellType(runtime), UNBOUND: CellType(unbound), **dict(zip(freevars, fn.__closure__ or ()))}
    made = FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells[n] for n in inner.co_freevars))
    made.__kwdefaults__ = fn.__kwdefaults__
    return made


def _code_named(code: CodeType, name: str) -> CodeType:
    return next(c for c in code.co_consts if isinstance(c, CodeType) and c.co_name == name)


def _arguments(names: list[str]) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _strip_annotations(fdef: ast.FunctionDef) -> None:
    """Annotations would be evaluated when the rewritten function is made; they are not needed."""
    a = fdef.args
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
        if arg is not None:
            arg.annotation = None
    fdef.returns = None


def _call(name: str, attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name(name, ast.Load()), attr, ast.Load()), list(args), [])


def _thunk(body: ast.expr) -> ast.Lambda:
    return ast.Lambda(_arguments([]), body)


def _load(target: ast.expr) -> ast.expr:
    """A target (a name or nested tuple of names) read as an expression."""
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    assert isinstance(target, (ast.Tuple, ast.List))
    return ast.Tuple([_load(t) for t in target.elts], ast.Load())


def _simple(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_simple(t) for t in target.elts)


def _walk(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of ``body``, outside nested scopes."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _assigned(body: list[ast.stmt]) -> set[str]:
    """Names bound in ``body``, outside nested scopes."""
    nodes = list(_walk(body))
    found = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found - {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}


def _bound_by(s: ast.stmt) -> set[str]:
    """The names a statement of the function's own body binds for every program that runs it
    (an assignment; a loop or a branch may bind none)."""
    match s:
        case ast.Assign(targets=targets):
            return set().union(*(_target_names(t) for t in targets))
        case ast.AugAssign(target=target) | ast.AnnAssign(target=target, value=ast.expr()):
            return _target_names(target)
    return set()


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _carried(s: ast.For | ast.While) -> list[str]:
    """The names a loop may carry: those its body binds, except the loop's own target."""
    names = _assigned(s.body)
    return sorted(names - _target_names(s.target) if isinstance(s, ast.For) else names)


def _index(s: ast.For | ast.While) -> list[str]:
    """A ``for``'s index (a plain name: legality), which it binds besides the names it may carry."""
    return sorted(_target_names(s.target)) if isinstance(s, ast.For) else []


def _all_carried(body: list[ast.stmt]) -> set[str]:
    """The names any loop of ``body`` binds, and those any ``if`` may keep to itself."""
    return {name for n in _walk(body) if isinstance(n, (ast.For, ast.While)) for name in _carried(n) + _index(n)} | \
        {name for n in _walk(body) if isinstance(n, ast.If) for name in _own(n)}


def _own(s: ast.If) -> list[str]:
    """The names ``s`` keeps to itself when its condition is a runtime one and they are unbound
    before it (the shared rule, ``forms.branch_own``)."""
    own: frozenset[str] = apply(forms.branch_own, s.body, s.orelse)
    return sorted(own)


def _names(names: Iterable[str]) -> ast.Tuple:
    """``("a", "b")``: the names, as the runtime receives them."""
    return ast.Tuple([ast.Constant(n) for n in sorted(names)], ast.Load())


def _rebound(names: list[str], value: ast.expr) -> ast.Assign:
    """``(a, b) = value``."""
    return ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], value)


_Node = TypeVar("_Node", bound=ast.AST)


def _located(node: _Node, like: ast.AST) -> _Node:
    """``node``, its parts that have no location placed at ``like`` (a loop's header: left to
    ``fix_missing_locations``, a call would take the end line of the loop's body)."""
    for part in ast.walk(node):
        if "lineno" in part._attributes and getattr(part, "lineno", None) is None:
            ast.copy_location(part, like)
    return node


def _header(s: ast.For | ast.While) -> ast.expr:
    return s.iter if isinstance(s, ast.For) else s.test


def _carry(loop: str, names: list[str], s: ast.For | ast.While) -> list[ast.stmt]:
    """``(a, b) = loop.carry(a, b)``: the carried names, each rebound with another shape than
    before the loop replaced by a stale value (at each iteration's start and after the loop)."""
    if not names:
        return []
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    return [_located(ast.Assign([target], _call(loop, "carry", *(ast.Name(n, ast.Load()) for n in names))), _header(s))]


def _loop_with(loop: str, s: ast.For | ast.While, names: list[str], inner: ast.stmt) -> ast.With:
    """``with RUNTIME.loop(spins, line, own, *values) as loop: inner; carry`` (``own``: the names
    it carries, ``names``, and a ``for``'s index, carried after it; a ``while``'s also before it,
    for its condition)."""
    own = names + _index(s)
    made = _call(RUNTIME, "loop", ast.Constant(isinstance(s, ast.While)), ast.Constant(s.lineno),
                 ast.Tuple([ast.Constant(n) for n in own], ast.Load()), *(ast.Name(n, ast.Load()) for n in own))
    item = ast.withitem(_located(made, _header(s)), _located(ast.Name(loop, ast.Store()), _header(s)))
    entry = _carry(loop, names, s) if isinstance(s, ast.While) else []
    return ast.With([item], [*entry, ast.copy_location(inner, s), *_carry(loop, own, s)])


def _source(loop: str, it: ast.expr) -> ast.expr:
    """What a ``for`` iterates (``it``, a call: :mod:`tile_lang.legality`): ``loop.call(f, *args)``
    for ``f(*args)`` (a range checks its bounds and makes typed indices)."""
    assert isinstance(it, ast.Call)
    made = ast.Call(ast.Attribute(ast.Name(loop, ast.Load()), "call", ast.Load()), [it.func, *it.args], it.keywords)
    return _located(made, it)




class _Checks(ast.NodeTransformer):
    """Rewrites one function body for its checked version: the constructs whose rules need the
    source, which the SIMT version (:class:`_Rewriter`) rewrites alike. ``and``/``or`` (a
    compile-time operand that decides ends them) and ``not`` (on a block, element by element), ``assert`` (a device assertion on a runtime
    scalar), calls whose callee may be a @tl.func (it runs its own version, made by
    ``RUNTIME.fn``), loops without ``else`` (see :mod:`loops`), reads of a module-level
    ``tl.constexpr(v)`` (``RUNTIME.constant``: read as ``v``, as the compiler does), ``.dtype``
    ``.type`` and ``.value`` (``RUNTIME.dtype_``, ``RUNTIME.type_``, ``RUNTIME.value_``: Triton's), hints whose result is
    discarded (``RUNTIME.discarded_hint``: its arguments checked, not its promise), an ``if``
    binding a name on one side only (``RUNTIME.Branch``: its type after a runtime one), and reads of
    a local name that may be unbound there (``RUNTIME.read(x, "x")``: Python's UnboundLocalError,
    for a name the preamble binds to UNBOUND); the rest as written."""

    def __init__(self, fdef: ast.FunctionDef, fn: FunctionType) -> None:
        self.fdef = fdef
        a = fdef.args
        self.params = {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg is not None}
        self.local = self.params | _assigned(fdef.body) | set(fn.__code__.co_freevars)
        self.globals = fn.__globals__
        self.names = itertools.count()
        # the names the preamble binds to UNBOUND (a name a loop binds and that is unbound before
        # it is the loop's own, see loops.Carried), and those bound for every program by the statements so far
        self.unset = _all_carried(fdef.body) - self.params
        self.bound: set[str] = set()
        self.changed = False

    def fresh(self, kind: str) -> str:
        return f"_tl_{kind}{next(self.names)}"

    def function_body(self) -> list[ast.stmt]:
        body: list[ast.stmt] = []
        for stmt in self.fdef.body:
            made = self.visit(stmt)
            body.extend(made if isinstance(made, list) else [made])
            self.bound |= _bound_by(stmt)
        preamble = self.preamble()
        return [ast.copy_location(preamble, self.fdef.body[0]), *body] if preamble else body

    def preamble(self) -> ast.stmt | None:
        """``a = b = UNBOUND`` for the names that may be read before they are bound."""
        if not self.unset:
            return None
        return ast.Assign([ast.Name(n, ast.Store()) for n in sorted(self.unset)], ast.Name(UNBOUND, ast.Load()))

    def load(self, name: str) -> ast.expr:
        """A user's read of local ``name``: checked where it may be unbound."""
        if name in self.unset and name not in self.bound:
            return _call(RUNTIME, "read", ast.Name(name, ast.Load()), ast.Constant(name))
        return ast.Name(name, ast.Load())

    def expr(self, node: ast.expr) -> ast.expr:
        result = self.visit(node)
        assert isinstance(result, ast.expr)
        return result

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        """``RUNTIME.assert_(test, lambda: msg, source)``, the message evaluated on failure only."""
        self.changed = True
        source = ast.Constant(ast.unparse(node.test))
        msg = _thunk(self.expr(node.msg)) if node.msg is not None else ast.Constant(None)
        return ast.copy_location(ast.Expr(_call(RUNTIME, "assert_", self.expr(node.test), msg, source)), node)

    def visit_Raise(self, node: ast.Raise) -> ast.stmt:
        """``RUNTIME.raise_(source)``: the shared rule's error where a run reaches it."""
        self.changed = True
        return ast.copy_location(ast.Expr(_call(RUNTIME, "raise_", ast.Constant(ast.unparse(node)))), node)

    def visit_For(self, node: ast.For) -> ast.stmt:
        names = _carried(node)  # of the body as written (not the rewritten inner loops' handles)
        self.generic_visit(node)
        self.changed = True
        name = self.fresh("loop")
        body = [*_carry(name, names, node), *node.body]
        inner = ast.For(node.target, _source(name, node.iter), body, [])
        return ast.copy_location(_loop_with(name, node, names, inner), node)

    def visit_While(self, node: ast.While) -> ast.stmt:
        names = _carried(node)
        self.generic_visit(node)
        if not names:
            return node
        self.changed = True
        name = self.fresh("loop")
        inner = ast.While(node.test, [*_carry(name, names, node), *node.body], [])
        return ast.copy_location(_loop_with(name, node, names, inner), node)

    def visit_If(self, node: ast.If) -> ast.stmt | list[ast.stmt]:
        """``b = RUNTIME.Branch(line, then, orelse, own, locals()); if b.test(c): ...; own =
        b.join(locals())`` for an ``if`` binding names on one side only: after a runtime ``if`` such
        a name keeps its type (the compiler's rule, ``forms.branch_types``), which a run of the
        side taken shows, and one of ``own`` unbound before it is unbound after it (``forms.branch_own``)."""
        then, orelse = _assigned(node.body), _assigned(node.orelse)
        self.generic_visit(node)
        if then == orelse:
            return node
        self.changed = True
        branch = self.fresh("branch")
        scope = ast.Call(ast.Name("locals", ast.Load()), [], [])
        own = _own(node)
        sides = [_names(names) for names in (then - orelse, orelse - then, own)]
        made = _call(RUNTIME, "Branch", ast.Constant(node.lineno), *sides, scope)
        node.test = _call(branch, "test", node.test)
        header = ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno,
                          end_col_offset=node.col_offset)  # errors point at the ``if`` line, as the compiler's
        entry = ast.Assign([ast.Name(branch, ast.Store())], made)
        joined = _call(branch, "join", ast.Call(ast.Name("locals", ast.Load()), [], []))
        exit_ = _rebound(own, joined) if own else ast.Expr(joined)
        return [_located(entry, header), node, _located(exit_, header)]

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        value = self.resolve(node.func)
        if value is Constant:  # tl.constexpr(v) in the body: v
            return self.constant(node)
        if value is builtins.isinstance:  # a compile-time bool, by the shared rule
            node.func = ast.copy_location(ast.Attribute(ast.Name(RUNTIME, ast.Load()), "isinstance_", ast.Load()),
                                          node.func)
            self.changed = True
            return node
        if value is UNKNOWN or isinstance(value, Func) or alias_of(value) is not None or python_builtin(value):
            node.func = ast.copy_location(_call(RUNTIME, "fn", node.func), node.func)
            self.changed = True
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        discarded = self.discarded_hint(node)
        self.generic_visit(node)
        if discarded and isinstance(node.value, ast.Call):  # RUNTIME.discarded_hint(tl.multiple_of)(x, 16)
            self.changed = True
            node.value.func = ast.copy_location(_call(RUNTIME, "discarded_hint", node.value.func), node.value.func)
        return node

    def discarded_hint(self, s: ast.Expr) -> bool:
        """Whether ``s`` is a hint whose result is discarded, which has no effect (``hints.discarded``)."""
        return isinstance(s.value, ast.Call) and apply(forms.discarded_hint, self.resolve(s.value.func))

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if self.reads_constant(node):
            return self.constant(node)
        return ast.copy_location(self.load(node.id), node) if isinstance(node.ctx, ast.Load) else node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt | list[ast.stmt]:
        """``x += v``, its read of ``x`` checked first where ``x`` may be unbound."""
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node
        read = self.load(node.target.id)
        return [ast.copy_location(ast.Expr(read), node), node] if isinstance(read, ast.Call) else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if self.reads_constant(node):
            return self.constant(node)
        self.generic_visit(node)
        if node.attr in ("dtype", "type", "value") and isinstance(node.ctx, ast.Load):  # RUNTIME.dtype_, type_, value_
            self.changed = True
            return ast.copy_location(_call(RUNTIME, f"{node.attr}_", node.value), node)
        return node

    def reads_constant(self, e: ast.Name | ast.Attribute) -> bool:
        """Whether ``e`` reads a module-level ``tl.constexpr(v)`` (when the version is made)."""
        return isinstance(e.ctx, ast.Load) and isinstance(self.resolve(e), Constant)

    def constant(self, e: ast.expr) -> ast.expr:
        """``RUNTIME.constant(e)``: ``e``'s value read as a kernel reads it."""
        self.changed = True
        return ast.copy_location(_call(RUNTIME, "constant", e), e)

    def resolve(self, e: ast.expr) -> object:
        """What a callee expression names when the version is made (legality.resolve)."""
        return resolve(e, self.local, self.globals)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.changed = True
        parts = [self.expr(v) for v in node.values]
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        out = parts[-1]
        for part in reversed(parts[:-1]):
            out = _call(RUNTIME, attr, part, _thunk(out))
        return ast.copy_location(out, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        if isinstance(node.op, ast.Not):  # element by element on a block (forms.logical)
            self.changed = True
            return ast.copy_location(_call(RUNTIME, "not_", self.expr(node.operand)), node)
        self.generic_visit(node)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
        return node  # its own scope: left as written

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda  # type: ignore[assignment]


class _Rewriter(_Checks):
    """Rewrites one function body for its SIMT version; statements map to lists of statements."""

    def __init__(self, fdef: ast.FunctionDef, fn: FunctionType) -> None:
        super().__init__(fdef, fn)
        self.unset = _assigned(fdef.body) - self.params  # a name bound by some programs only is partial (simt.read)
        self.changed = True

    def function_body(self) -> list[ast.stmt]:
        body: list[ast.stmt] = []
        for stmt in self.fdef.body:
            body.extend(self.block([stmt]))
            self.bound |= _bound_by(stmt)
        preamble = self.preamble()
        frame = ast.With([ast.withitem(_call(RUNTIME, "function"), ast.Name(FRAME, ast.Store()))], body or [ast.Pass()])
        result = ast.Return(ast.Attribute(ast.Name(FRAME, ast.Load()), "result", ast.Load()))
        out = [*([preamble] if preamble else []), frame, result]
        for stmt in out:
            ast.copy_location(stmt, self.fdef.body[0])
        return out

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            for made in self.statement(stmt):
                out.append(ast.copy_location(made, stmt))
        return out

    # ---------------------------------------------------------------- statements

    def statement(self, s: ast.stmt) -> list[ast.stmt]:
        match s:
            case ast.Assign(targets=targets, value=value) if all(_simple(t) for t in targets):
                return self.assign(targets, self.expr(value))
            case ast.AugAssign(target=ast.Name() as target, op=op, value=value):
                return self.assign([target], ast.BinOp(self.load(target.id), op, self.expr(value)))
            case ast.AnnAssign(target=ast.Name() as target, value=value):
                return self.assign([target], self.expr(value)) if value is not None else []
            case ast.If():
                return self.branch(s)
            case ast.While():
                return self.loop(s, self.expr(s.test))
            case ast.For():
                return self.loop(s, None)
            case ast.Return(value=value):
                returned = self.expr(value) if value is not None else ast.Constant(None)
                result = ast.Attribute(ast.Name(FRAME, ast.Load()), "result", ast.Load())
                return [ast.If(_call(FRAME, "ret", returned), [ast.Return(result)], [])]
            case ast.Expr() if self.discarded_hint(s):
                return [self.visit_Expr(s)]
            case ast.Expr(value=value):
                return [ast.Expr(self.expr(value))]
            case ast.Assert():
                return [self.visit_Assert(s)]
            case ast.Pass():
                return [s]
        raise AssertionError(f"{type(s).__name__} passed the legality check")  # tile_lang.legality

    def assign(self, targets: list[ast.expr], value: ast.expr) -> list[ast.stmt]:
        if len(targets) == 1:
            return [ast.Assign(targets, _call(RUNTIME, "assign", value, _load(targets[0])))]
        held = self.fresh("value")
        out: list[ast.stmt] = [ast.Assign([ast.Name(held, ast.Store())], value)]
        for t in targets:
            out.append(ast.Assign([t], _call(RUNTIME, "assign", ast.Name(held, ast.Load()), _load(t))))
        return out

    def branch(self, s: ast.If) -> list[ast.stmt]:
        """``with RUNTIME.branch(c, line, *own) as b: ...`` then ``own = b.join(*own)``: the
        names the ``if`` may keep to itself (``forms.branch_own``) unbound after it where they
        were before it."""
        name = self.fresh("branch")
        body: list[ast.stmt] = [ast.If(_call(name, "then"), self.block(s.body) or [ast.Pass()], [])]
        if s.orelse:
            body.append(ast.If(_call(name, "otherwise"), self.block(s.orelse), []))
        own = _own(s)
        made = _call(RUNTIME, "branch", self.expr(s.test), ast.Constant(s.lineno), *(ast.Name(n, ast.Load()) for n in own))
        item = ast.withitem(made, ast.Name(name, ast.Store()))
        joined = _call(name, "join", *(ast.Name(n, ast.Load()) for n in own))
        return [ast.With([item], body), *([_rebound(own, joined)] if own else [])]

    def loop(self, s: ast.While | ast.For, test: ast.expr | None) -> list[ast.stmt]:
        name = self.fresh("loop")
        names = _carried(s)
        body = [*_carry(name, names, s), *self.block(s.body)]
        inner: ast.stmt
        if isinstance(s, ast.While):
            assert test is not None
            go_on = ast.BoolOp(ast.And(), [_call(name, "next"), _call(name, "test", test)])
            inner = ast.While(go_on, body, [])
        else:
            item = self.fresh("item")
            bind = ast.Assign([s.target], _call(name, "bind", ast.Name(item, ast.Load()), _load(s.target)))
            inner = ast.For(ast.Name(item, ast.Store()), _source(name, self.expr(s.iter)), [ast.copy_location(bind, s), *body], [])
        return [_loop_with(name, s, names, inner)]

    # ---------------------------------------------------------------- expressions

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        made = _call(RUNTIME, "select", self.expr(node.test), _thunk(self.expr(node.body)), _thunk(self.expr(node.orelse)))
        return ast.copy_location(made, node)

