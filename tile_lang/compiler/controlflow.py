"""Control flow in the front end: constexpr conditions are folded, runtime ones become regions.

Values a loop or branch reassigns are carried as region parameters and results; a carried
value first bound to a Python number takes the type the body gives it (as Triton retries). A
name a runtime loop binds first is its own: unreadable after it (:class:`LoopLocal`), as is one
a runtime ``if`` binds first on one side only (:class:`BranchLocal`).
"""

from __future__ import annotations

import abc
import ast
import builtins
import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import tile_lang.dtypes as dtypes
import tile_lang.legality as legality
import tile_lang.compiler.aggregates as aggregates
from tile_lang.compiler.builder import Builder, Value, is_scalar_value
from tile_lang.compiler.ir import AssertAttr, Category, IndexAttr, LoopAttr, Node, Op, ParamAttr, Region, Type
from tile_lang.errors import SemanticError
from tile_lang.ops import forms
from tile_lang.ops.forms import RangeCall
from tile_lang.semantics import loops
from tile_lang.semantics.dispatch import apply


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """Names a block (re)binds, nested blocks included."""
    names: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


@functools.lru_cache(maxsize=1024)
def local_names(tree: ast.FunctionDef) -> frozenset[str]:
    """The names ``tree``'s body binds: Python's locals, unbound where a read comes before any
    binding (after a ``tl.static_range`` that ran no trip, a runtime ``if`` binding on one side)."""
    return frozenset(assigned_names(tree.body))


@functools.lru_cache(maxsize=1024)
def read_after_loops(tree: ast.FunctionDef, name: str) -> bool:
    """Whether code of ``tree`` may read a loop variable ``name`` after its loop: a read outside
    the bodies of the innermost loops over ``name``, which rebind it first (a read before a loop
    counts too: it is rare, and an enclosing loop may come back to it)."""

    def over_name(node: ast.AST) -> bool:
        return isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == name

    def reads(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == name and isinstance(node.ctx, ast.Load)
        if isinstance(node, ast.For) and over_name(node) and not any(map(over_name, ast.walk(ast.Module(node.body, [])))):
            return reads(node.iter)  # its body reads its own binding
        return any(reads(child) for child in ast.iter_child_nodes(node))

    return reads(tree)


RETURNED = object()
"""What visiting a statement that ends its block in a ``return`` gives."""

_Built = tuple[list[Node], tuple[Node, ...], dict[str, Any], bool]


class ControlFlow(abc.ABC):
    """Mixin of the front end's visitor: ``if``, ``for`` and ``while``."""

    _runtime_depth = 0
    b: Builder

    # provided by the front end's visitor
    @abc.abstractmethod
    def visit(self, node: ast.AST) -> Any: ...

    @abc.abstractmethod
    def block(self, stmts: list[ast.stmt]) -> bool: ...

    @abc.abstractmethod
    def error(self, message: str) -> SemanticError: ...

    @abc.abstractmethod
    def assign(self, target: ast.expr, value: Any) -> None: ...

    @abc.abstractmethod
    def binop(self, op: type[ast.AST], left: Any, right: Any) -> Any: ...

    @property
    def in_runtime_branch(self) -> bool:
        return self._runtime_depth > 0

    @contextlib.contextmanager
    def runtime_branch(self, inside: bool) -> Iterator[None]:
        """Inside a runtime branch a ``return`` becomes a RETURN node; a helper resets this."""
        saved = self._runtime_depth
        self._runtime_depth = saved + 1 if inside else 0
        try:
            yield
        finally:
            self._runtime_depth = saved

    def _env(self) -> dict[str, Any]:
        env: dict[str, Any] = getattr(self, "scope").env
        return env

    def _set_env(self, env: dict[str, Any]) -> None:
        getattr(self, "scope").env = env

    def _inlined(self) -> bool:
        return bool(getattr(self, "scope").inlined)

    def truth(self, test: Node) -> Node:
        """A runtime condition's truth: a scalar's, or a one-element block's read as its scalar
        (the shared rule, the form ``forms.condition``)."""
        one = apply(forms.condition, test.ty.shape)
        return self.b.truth(self.b.reshape(test, ()) if one else test)

    # ---------------------------------------------------------------- if

    def visit_If(self, node: ast.If) -> object:
        test = self.visit(node.test)
        if not isinstance(test, Node):
            return RETURNED if self.block(node.body if test else node.orelse) else None
        combine = getattr(self, "scope").combine
        if combine is not None:
            raise apply(forms.combine_branches, combine)
        cond = self.truth(test)
        before = self._env()
        branches = []
        for stmts in (node.body, node.orelse):
            env, body = dict(before), list[Node]()
            self._set_env(env)
            with self.b.region(body), self.runtime_branch(True):
                returned = self.block(stmts)
            env = self._env()  # a nested `if` that returns rebinds the scope to its other branch's env
            branches.append((body, env, returned))
        self._set_env(before)
        if self._inlined() and (branches[0][2] or branches[1][2]):
            return self._returning_if(cond, branches[0][0], branches[1][0], branches[0][2] and branches[1][2])
        line = node.lineno + getattr(self, "scope").line_offset
        own = {name: BranchLocal(apply(forms.branch_local, name, line))
               for name in apply(forms.branch_own, node.body, node.orelse) if _unbound(before, name)}
        result = self._merge_if(cond, branches)
        self._env().update(own)
        return result

    def _returning_if(self, cond: Node, then_body: list[Node], else_body: list[Node], both: bool) -> object:
        """A runtime ``if`` of a @tl.func that returns on both sides: the function's value is the
        ``if``'s result, each side yielding what it returned (one value, or a tuple of them)."""
        if not both:
            raise self.error("a runtime `if` of a @tl.func that returns on one side only is not supported yet "
                             "(return on both sides, or compute the value with tl.where)")
        returned: list[Any] = getattr(self, "scope").returned
        else_value, then_value = returned.pop(), returned.pop()
        tupled = isinstance(then_value, tuple) and isinstance(else_value, tuple)
        thens, elses = (then_value, else_value) if tupled else ((then_value,), (else_value,))
        if len(thens) != len(elses):
            raise self.error(f"the two sides of a runtime `if` return {len(thens)} and {len(elses)} values")
        types = [self._common_type(a, b, "the returned value") for a, b in zip(thens, elses)]
        yields = []
        for body, values in ((then_body, thens), (else_body, elses)):
            with self.b.region(body):
                yields.append(tuple(self._as(v, t) for v, t in zip(values, types)))
        regions = (Region((), tuple(then_body), yields[0]), Region((), tuple(else_body), yields[1]))
        if_node = self.b.emit(Op.IF, None, (cond,), regions=regions)
        results = tuple(self.b.emit(Op.RESULT, t, (if_node,), IndexAttr(i)) for i, t in enumerate(types))
        returned.append(results if tupled else results[0])
        return RETURNED

    def visit_IfExp(self, node: ast.IfExp) -> object:
        """``a if c else b``: a compile-time ``c`` picks a side; for a runtime ``c`` only the side
        taken runs, as in Python and Triton (a ``tl.where`` where neither side touches memory)."""
        test = self.visit(node.test)
        if not isinstance(test, Node):
            return self.visit(node.body if test else node.orelse)
        cond = self.truth(test)
        bodies: tuple[list[Node], list[Node]] = ([], [])
        values = []
        for body, side in zip(bodies, (node.body, node.orelse)):
            with self.b.region(body), self.runtime_branch(True):
                values.append(self.visit(side))
        if all(_pure(n) for body in bodies for n in body) and None not in values:
            self.b.bodies[-1].extend(bodies[0] + bodies[1])
            return self.b.where(cond, values[0], values[1])
        if values == [None, None]:  # two calls made for their effects: `store(...) if c else store(...)`
            self.b.emit(Op.IF, None, (cond,), regions=tuple(Region((), tuple(body), ()) for body in bodies))
            return None
        t = self._common_type(values[0], values[1], "the conditional expression")
        yields = []
        for body, value in zip(bodies, values):
            with self.b.region(body):
                yields.append((self._as(value, t),))
        if_node = self.b.emit(Op.IF, None, (cond,), regions=tuple(Region((), tuple(b), y) for b, y in zip(bodies, yields)))
        return self.b.emit(Op.RESULT, t, (if_node,), IndexAttr(0))

    def _merge_if(self, cond: Node, branches: list[tuple[list[Node], dict[str, Any], bool]]) -> object:
        (then_body, then_env, then_ret), (else_body, else_env, else_ret) = branches
        if then_ret != else_ret:  # what the branch that goes on binds flows out as the if's results
            live = else_env if then_ret else then_env
            dead = _unreached(self._env(), live)
            then_env, else_env = (dead, live) if then_ret else (live, dead)
        keys = [] if then_ret and else_ret else self._differing(then_env, else_env)
        types = [self._common_type(self._get(then_env, k), self._get(else_env, k), _slot_name(k)) for k in keys]
        yields = []
        for body, env in ((then_body, then_env), (else_body, else_env)):
            with self.b.region(body):
                yields.append(tuple(self._as(self._get(env, k), t) for k, t in zip(keys, types)))
        regions = (Region((), tuple(then_body), yields[0]), Region((), tuple(else_body), yields[1]))
        if_node = self.b.emit(Op.IF, None, (cond,), regions=regions)
        env = else_env if then_ret else then_env if else_ret else self._env()
        if not (then_ret or else_ret):
            env.update(_agreed(then_env, else_env))
        self._set_env(env)
        _bind(env, keys, [self.b.emit(Op.RESULT, t, (if_node,), IndexAttr(i)) for i, t in enumerate(types)])
        return RETURNED if then_ret and else_ret else None

    def _differing(self, then_env: dict[str, Any], else_env: dict[str, Any]) -> list[Slot]:
        """The slots whose values the two branches leave different."""
        names = [n for n in then_env if n in else_env and then_env[n] is not else_env[n]
                 and not isinstance(then_env[n], Stale) and not isinstance(else_env[n], Stale)]
        keys = []
        for slot in slots_of(names, then_env):
            a, b = self._get(then_env, slot), self._get(else_env, slot)
            if a is not b and (isinstance(a, Node) or isinstance(b, Node) or a != b):
                keys.append(slot)
        return keys

    def _common_type(self, a: Any, b: Any, name: str) -> Type:
        if isinstance(a, Unreached) or isinstance(b, Unreached):
            known = b if isinstance(a, Unreached) else a
            return known.ty if isinstance(known, Node) else Type(dtypes.scalar_dtype(known))
        if isinstance(a, Node) and isinstance(b, Node):
            apply(forms.branch_types, name, (a.ty.dtype, a.ty.shape), (b.ty.dtype, b.ty.shape))
            return a.ty
        for node, other in ((a, b), (b, a)):
            if isinstance(node, Node):
                if not is_scalar_value(other):
                    raise self.error(f"{name!r} is a tensor on one branch and {other!r} on the other")
                return node.ty
        if not (is_scalar_value(a) and is_scalar_value(b)):
            raise self.error(f"{name!r} takes different compile-time values on runtime branches")
        return Type(dtypes.promote(dtypes.scalar_dtype(a), dtypes.scalar_dtype(b)))

    def _as(self, value: Value | Unreached, t: Type) -> Node:
        if isinstance(value, Unreached):  # never read: any value of the type (a pointer from int 0)
            zero = self.b.const(0, dtypes.I64 if t.dtype.is_pointer else t.dtype)
            value = self.b.cast(zero, t.dtype) if t.dtype.is_pointer else zero
        return self.b.splat(self.b.to_node(value, t.dtype), t.shape)

    # ---------------------------------------------------------------- and, or

    def visit_BoolOp(self, node: ast.BoolOp) -> object:
        return self._boolean(node.values, isinstance(node.op, ast.And))

    def _boolean(self, operands: Sequence[ast.expr], conjunction: bool) -> Any:
        """``a and ...`` / ``a or ...``: a compile-time ``a`` that decides the result ends it,
        as in Triton; after a runtime scalar ``a`` the rest is a branch taken where ``a`` does not
        decide (so ``i < n and tl.load(p + i) > 0`` loads only where ``i < n``), built even when
        no program takes it, so its operands' rules always apply."""
        value = self.visit(operands[0])
        if not isinstance(value, Node):
            return value if len(operands) == 1 or apply(forms.decides, value, conjunction) else \
                self._boolean(operands[1:], conjunction)
        if apply(forms.logical, value.ty.shape, getattr(self, "scope").combine is not None):
            return self._logical(value, operands[1:], conjunction)
        cond = self.truth(value)
        if len(operands) == 1:
            return cond
        rest_body: list[Node] = []
        with self.b.region(rest_body), self.runtime_branch(True):
            rest = self.truth(self.b.to_node(self._boolean(operands[1:], conjunction)))  # a condition too
        decided_body: list[Node] = []
        with self.b.region(decided_body):
            decided = self.b.to_node(not conjunction, dtypes.BOOL)
        taken, other = Region((), tuple(rest_body), (rest,)), Region((), tuple(decided_body), (decided,))
        if_node = self.b.emit(Op.IF, None, (cond,), regions=(taken, other) if conjunction else (other, taken))
        return self.b.emit(Op.RESULT, Type(dtypes.BOOL), (if_node,), IndexAttr(0))

    def _logical(self, block: Node, operands: Sequence[ast.expr], conjunction: bool) -> Any:
        """``block and ...`` / ``block or ...`` element by element (the rule ``forms.logical``):
        every operand evaluated, a compile-time one that decides the result ending it."""
        result = self.b.truth(block)
        for operand in operands:
            value = self.visit(operand)
            if not isinstance(value, Node):
                if apply(forms.decides, value, conjunction):
                    return value
                continue
            result = self.binop(ast.BitAnd if conjunction else ast.BitOr, result, self.b.truth(value))
        return result

    # ---------------------------------------------------------------- for

    def visit_For(self, node: ast.For) -> object:
        """The loop's form (no ``else``, a plain name over a call) is the shared check's
        (:mod:`tile_lang.legality`); a local callee is known only now."""
        assert isinstance(node.iter, ast.Call) and isinstance(node.target, ast.Name)
        callee = self.visit(node.iter.func)
        args = [self.visit(a) for a in node.iter.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.iter.keywords if k.arg}
        call = apply(forms.range_call, callee, tuple(args), kwargs)
        if call is None:
            raise self.error(legality.LOOP_ITERATOR)
        if call.static:
            return self._unrolled(node, call)
        return self._runtime_for(node, call)

    def _unrolled(self, node: ast.For, call: RangeCall) -> object:
        for value in (call.start, call.stop, call.step):
            if isinstance(value, Node):
                raise self.error("tl.static_range needs compile-time bounds")
        start, end = apply(forms.constant_index, call.start), apply(forms.constant_index, call.stop)
        for i in builtins.range(start, end, apply(forms.range_step, apply(forms.constant_index, call.step))):
            self.assign(node.target, i)
            if self.block(node.body):
                return RETURNED
        return None

    def _runtime_for(self, node: ast.For, call: RangeCall) -> object:
        """A FOR node over the range's bounds promoted to one integer type. A constant step of 0
        is an error here, a runtime one a device assertion before the loop. A loop variable bound
        before the loop is carried when the code after the loop may read it, so that it holds the
        last value taken (as in Python) or, after no iteration, what it held before; one unbound
        before is the loop's own (the shared rule, ``forms.loop_local``)."""
        step = call.step if isinstance(call.step, Node) else \
            apply(forms.range_step, apply(forms.constant_index, call.step))
        bounds = [self.b.to_node(v if isinstance(v, Node) else apply(forms.constant_index, v))
                  for v in (call.start, call.stop, step)]
        for bound in bounds:
            apply(forms.index, bound.ty.shape, bound.ty.dtype)
        dtype = apply(forms.loop_index, [bound.ty.dtype for bound in bounds])
        bounds = [self.b.cast(bound, dtype) for bound in bounds]
        if bounds[2].op is not Op.CONST:
            self.b.emit(Op.ASSERT, None, (self.b.truth(bounds[2]),), AssertAttr(loops.ZERO_STEP))
        assert isinstance(node.target, ast.Name)
        name = node.target.id
        iv = Node(Op.PARAM, Type(dtype), attr=ParamAttr(0, name))

        def body(env: dict[str, Any]) -> bool:
            env[name] = iv
            return bool(self.block(node.body))

        env = self._env()
        tree = getattr(self, "scope").tree
        carried, local = _split(assigned_names(node.body) | {name}, env)
        after = name in carried and tree is not None and read_after_loops(tree, name)
        if after and self._initial_type(env[name]) is None and aggregates.leaves(env[name]) is None:
            env[name] = bounds[0]  # stale before: what a zero-trip loop leaves (the reference: the stale value)
        if name in carried and not after:
            carried.remove(name)
        self._loop(carried, local, node, body, lambda inits, params, b: self.b.emit(
            Op.FOR, None, (*bounds, *inits), LoopAttr(call.unroll),
            regions=(Region((iv, *params), tuple(b[0]), b[1]),)))
        return None

    # ---------------------------------------------------------------- while

    def visit_While(self, node: ast.While) -> object:
        carried, local = _split(assigned_names(node.body), self._env())
        cond_region: list[Region] = []

        def body(env: dict[str, Any]) -> bool:
            test = self.visit(node.test)
            if not isinstance(test, Node):
                raise self.error("a runtime while loop needs a scalar runtime condition")
            cond = self.truth(test)
            cond_region.append(Region((), tuple(self.b.bodies[-1]), (cond,)))
            self.b.bodies[-1].clear()
            return bool(self.block(node.body))

        def emit(inits: tuple[Node, ...], params: tuple[Node, ...], built: tuple[list[Node], tuple[Node, ...]]) -> Node:
            cond = cond_region[-1]
            return self.b.emit(Op.WHILE, None, inits, regions=(
                Region(params, cond.body, cond.results), Region(params, tuple(built[0]), built[1])))

        self._loop(carried, local, node, body, emit)
        return None

    # ---------------------------------------------------------------- shared by loops

    def _loop(self, carried: list[str], local: list[str], node: ast.For | ast.While,
              body: Callable[[dict[str, Any]], bool],
              emit: Callable[[tuple[Node, ...], tuple[Node, ...], tuple[list[Node], tuple[Node, ...]]], Node]) -> None:
        """The loop ``emit`` makes of ``body``, carrying the names ``carried`` may: each build of
        the body starts with them as region parameters and the names ``local`` (the loop binds
        them first) unbound, as the code after the loop sees them."""
        before = self._env()
        line = node.lineno + getattr(self, "scope").line_offset
        unbound = {name: LoopLocal(apply(forms.loop_local, name, line)) for name in local}
        types: dict[Slot, Type] = {}
        for slot in slots_of(carried, before):
            found = self._initial_type(self._get(before, slot))
            if found is not None:
                types[slot] = found
        reshaped: dict[str, Stale] = {}
        for _attempt in builtins.range(4):
            keys = list(types)
            params = tuple(Node(Op.PARAM, types[k], attr=ParamAttr(i + 1, _slot_name(k))) for i, k in enumerate(keys))
            env = dict(before)
            _bind(env, keys, params)
            env.update(reshaped)
            env.update(unbound)
            built: list[Node] = []
            self._set_env(env)
            with self.b.region(built), self.runtime_branch(True):
                body(env)
            env = self._env()  # what the body left bound (an `if` that returns rebinds the scope)
            self._set_env(before)
            changed = self._retype(keys, params, env, before, types, reshaped)
            if not changed:
                break
        else:
            raise self.error(f"loop-carried values do not settle on a type: {', '.join(map(_slot_name, types))}")
        with self.b.region(built):
            yields = tuple(self._as(self._get(env, k), types[k]) for k in keys)
        inits = tuple(self._as(self._get(before, k), types[k]) for k in keys)
        loop = emit(inits, params, (built, yields))
        _bind(before, keys, [self.b.emit(Op.RESULT, types[k], (loop,), IndexAttr(i)) for i, k in enumerate(keys)])
        before.update(reshaped)
        before.update(unbound)
        return None

    def _get(self, env: dict[str, Any], slot: Slot) -> Any:
        """The value of a carried slot: a variable, or one part of an aggregate variable."""
        name, part = slot
        value = env.get(name)
        if part < 0:
            return value
        parts = aggregates.leaves(value)
        if parts is None:
            raise self.error(f"{name!r} is a {type(env.get(name)).__name__} here but a block pointer or "
                             "tensor descriptor before")
        return parts[part]

    def _initial_type(self, value: Any) -> Type | None:
        if isinstance(value, Node):
            return value.ty
        if is_scalar_value(value):
            return Type(dtypes.scalar_dtype(value))
        return None

    def _retype(self, keys: list[Slot], params: tuple[Node, ...], env: dict[str, Any],
                before: dict[str, Any], types: dict[Slot, Type], reshaped: dict[str, Stale]) -> bool:
        """Adjust carried types to what the body produced; True when another build is needed. A
        value the body gives another shape is not carried: reading it where its shape depends on
        the iteration (in the body before the reassignment, or after the loop) is an error."""
        changed = False
        for key, param in zip(keys, params):
            out, was = self._get(env, key), self._get(before, key)
            if isinstance(out, Stale):  # a nested loop reshaped it
                del types[key]
                reshaped[key[0]] = out
                changed = True
                continue
            if out is param or (not isinstance(out, Node) and out is was):
                if (out is was and not isinstance(out, Node)) or key[1] >= 0:
                    del types[key]  # unchanged (a constant, or a part of an aggregate): not carried
                    changed = True
                continue
            out_type = out.ty if isinstance(out, Node) else self._initial_type(out)
            if out_type is None:
                raise self.error(f"{_slot_name(key)!r} is reassigned in the loop to {out!r}")
            if out_type != types[key]:
                was_type = (was.ty.dtype, was.ty.shape) if isinstance(was, Node) else None
                error = apply(forms.loop_carried, key[0], was_type, (out_type.dtype, out_type.shape))
                if error is not None:
                    del types[key]  # a loop-local value reusing the name
                    reshaped[key[0]] = Stale(error)
                else:
                    try:
                        settled = apply(forms.loop_settles, _slot_name(key), types[key].dtype, out_type.dtype)
                    except SemanticError as exc:
                        raise self.error(str(exc)) from None
                    types[key] = Type(settled, out_type.shape)
                changed = True
        return changed


@dataclass(frozen=True)
class Stale:
    """What a name holds after a loop that rebinds it with another shape (Triton rejects the
    loop; Python would see the last iteration's value): reading it is ``error`` (the shared
    rule, :func:`tile_lang.semantics.loops.loop_carried`)."""

    error: SemanticError

    def message(self) -> str:
        return str(self.error)


class LoopLocal(Stale):
    """What a name a runtime loop binds first holds after the loop and at each iteration's
    start: reading it is ``error`` (the shared rule, :func:`tile_lang.semantics.loops.loop_local`)."""


class BranchLocal(Stale):
    """What a name a runtime ``if`` keeps to itself holds after it: reading it is ``error`` (the
    shared rule, :func:`tile_lang.semantics.loops.branch_own`)."""


def _unbound(env: dict[str, Any], name: str) -> bool:
    """Whether ``name`` is unbound in ``env``: never bound, or kept to itself by a loop or an ``if`` before."""
    return name not in env or isinstance(env[name], (LoopLocal, BranchLocal))


def _split(names: set[str], env: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The names a loop binds: those bound before it, which it may carry, and those it binds
    first (unbound in ``env``, or the own names of an earlier loop or ``if``), which it keeps to itself."""
    local = {name for name in names if _unbound(env, name)}
    return sorted(names - local), sorted(local)


class Unreached:
    """A name's value on the branch of an ``if`` that returns, for a name the other branch binds
    to a runtime value: the ``if`` yields it on both, and the returning side's is never read."""


UNREACHED = Unreached()


def _unreached(before: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """The scope of an ``if``'s returning branch, as its results see it: each name as it was
    before the ``if``, and :data:`UNREACHED` for the runtime values the other branch introduces."""
    def stand_in(value: Any) -> Any:
        parts = aggregates.leaves(value)
        if parts is not None:
            return aggregates.rebuild(value, [UNREACHED if isinstance(p, Node) else p for p in parts])
        return UNREACHED if isinstance(value, Node) else value
    return {**{n: stand_in(v) for n, v in live.items()},
            **{n: v for n, v in before.items() if not isinstance(v, Stale)}}


def _pure(node: Node) -> bool:
    """Whether evaluating ``node`` where its branch is not taken changes nothing (no memory, no control flow)."""
    return node.op.info.pure and node.op.info.category not in (Category.MEMORY, Category.CONTROL)


def _agreed(then_env: dict[str, Any], else_env: dict[str, Any]) -> dict[str, Any]:
    """Names an ``if`` leaves bound without a result: one value on both branches (``x = y`` on
    each), or stale on either."""
    out: dict[str, Any] = {}
    for name in then_env.keys() & else_env.keys():
        a, b = then_env[name], else_env[name]
        if isinstance(a, Stale) or isinstance(b, Stale):
            out[name] = a if isinstance(a, Stale) else b
        elif a is b or not isinstance(a, Node) and type(a) is type(b) and a == b:
            out[name] = a
    return out


Slot = tuple[str, int]
"""A carried value: a variable, and which part of it when it is an aggregate (-1: the value)."""


def slots_of(names: list[str], env: dict[str, Any]) -> list[Slot]:
    """The slots of ``names``: one per plain value, one per part of a block pointer or descriptor."""
    out: list[Slot] = []
    for name in names:
        parts = aggregates.leaves(env[name])
        out.extend([(name, i) for i in builtins.range(len(parts))] if parts is not None else [(name, -1)])
    return out


def _slot_name(slot: Slot) -> str:
    return slot[0] if slot[1] < 0 else f"{slot[0]}.{slot[1]}"


def _bind(env: dict[str, Any], slots: list[Slot], values: Sequence[Any]) -> None:
    """Store ``values`` in the slots, rebuilding aggregates from their new parts."""
    parts: dict[str, dict[int, Any]] = {}
    for (name, part), value in zip(slots, values):
        if part < 0:
            env[name] = value
        else:
            parts.setdefault(name, {})[part] = value
    for name, new in parts.items():
        old = aggregates.leaves(env[name])
        assert old is not None
        env[name] = aggregates.rebuild(env[name], [new.get(i, v) for i, v in enumerate(old)])
