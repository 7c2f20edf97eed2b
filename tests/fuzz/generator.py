"""A random kernel from a seed: loads, statements from :mod:`tests.fuzz.exprs`, runtime control
flow (``for``/``while``/``if``, nested, early returns), stores and atomics, as source text.

Deterministic: the same seed gives the same :class:`Case`. About one kernel in eight carries a
statement both backends must reject (an ill-typed op), placed where the reference runs it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from tile_lang import dtypes

from tests.fuzz.addresses import Addresses
from tests.fuzz.case import Buffer, Case, Init, Output
from tests.fuzz.exprs import COLS, DTYPES, FULL, MARKERS, ROWS, SCALAR, Expr, Exprs, literal, paren
from tests.fuzz.hazards import Hazards

_ATOMIC = (dtypes.F32, dtypes.I32, dtypes.U32, dtypes.I64)
_LOOP_SCALARS = ("s0", "s1", "s2")


@dataclass
class Scope:
    """Values visible at a point of the kernel; ``mutable`` names may be reassigned in a branch."""

    pool: list[Expr]
    mutable: set[str] = field(default_factory=set)

    def child(self) -> Scope:
        return Scope(list(self.pool), set(self.mutable))


class Generator:
    """Plain kernels: 1-D or 2-D blocks (``R`` x ``C``), one program per block of rows."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.two_d, self.grid, self.rows, self.cols = self._layout()
        self.size = self.rows * self.cols if self.two_d else self.cols
        self.exprs = Exprs(self.rng, self.two_d)
        self.lines: list[str] = []
        self.precision = dtypes.F32  # lowered by a dot with a 16-bit result (see Case.precision)
        self.inputs: list[Buffer] = []
        self.outputs: list[Output] = []
        self.ints: list[tuple[str, int]] = []  # further int parameters (and their values)
        self.consts: list[tuple[str, int]] = []  # further constexprs
        self.globals: list[str] = []  # module-level lines (constexprs) before the kernel
        self.hazard = ""  # see Case.hazard
        self.expect = ""  # see Case.expect
        self.twins: list[tuple[int, int]] = []  # see Case.twins
        self.names = 0
        self.addresses = Addresses(self)  # address and mask forms for about half the kernels

    def _layout(self) -> tuple[bool, int, int, int]:
        """2-D or not, the grid, and the block's rows and columns (1-D: its length as columns). About
        one kernel in seven has a block of one or two elements along an axis (drawn apart, so the
        other kernels stay as they were): one-element blocks are where hand-written cases found
        miscompiles the fuzzer had not made."""
        two_d = self.rng.random() < 0.45
        grid = self.rng.choice((1, 2, 3))
        small = random.Random(f"block size {self.seed}")
        tiny = small.random() < 0.15
        if two_d:
            shape = self.rng.choice(((4, 8), (8, 16), (16, 4), (2, 32), (8, 4)))
            return (True, grid, *(small.choice(((1, 8), (8, 1), (1, 2), (2, 1), (1, 1))) if tiny else shape))
        length = self.rng.choice((16, 32, 64, 128))
        return False, grid, 1, small.choice((1, 2)) if tiny else length

    def _options(self) -> tuple[int, int, int]:
        """num_warps, num_stages and the emulated arch."""
        return self.rng.choice((1, 1, 2, 4)), 3, 80

    # ---------------------------------------------------------------- the kernel

    def generate(self) -> Case:
        rng = self.rng
        scope = Scope([Expr("pid", dtypes.I32, SCALAR), *(Expr(s, dtypes.I32, SCALAR) for s in _LOOP_SCALARS),
                       Expr("f", dtypes.F32, SCALAR)])
        self._preamble()
        for _ in range(rng.randint(1, 3)):
            scope.pool.append(self._load())
        invalid = rng.random() < 0.12
        if invalid:
            self._invalid(scope)
        self.block(scope, depth=0, count=rng.randint(6, 14))
        for e in rng.sample(scope.pool, min(3, len(scope.pool))):
            self.store(e, 0)
        if not invalid:
            self.hazard = Hazards(self).plant(scope)
        return self._case(invalid)

    def _case(self, invalid: bool) -> Case:
        name = f"fuzz_{self.seed}"
        params = [f"{b.name}: Pointer[{MARKERS[b.dtype]}]" for b in self.inputs]
        params += [f"{o.buffer.name}: Pointer[{MARKERS[o.buffer.dtype]}]" for o in self.outputs]
        params += ["n: int", "m: int", *(f"{s}: int" for s in _LOOP_SCALARS), "f: float"]
        params += [f"{name}: int" for name, _ in self.ints]
        shape = [("R", self.rows), ("C", self.cols)] if self.two_d else [("B", self.size)]
        constexprs = tuple(shape + self.consts)
        params += [f"{c}: constexpr" for c, _ in constexprs]
        head = ["import tile_lang as tl", "from tile_lang import Pointer, constexpr", "", *self.globals, "",
                "@tl.kernel", f"def {name}({', '.join(params)}) -> None:"]
        rng = self.rng
        bound = self.grid * (self.rows if self.two_d else self.size)
        scalars: tuple[tuple[str, int | float], ...] = (
            ("n", rng.randint(1, bound)), ("m", rng.randint(1, self.cols if self.two_d else 4)),
            *((s, rng.randint(-1, 5)) for s in _LOOP_SCALARS), ("f", rng.choice((1.75, -0.5, 3.0, -2.25))),
            *self.ints)
        warps, stages, arch = self._options()
        return Case(self.seed, name, "\n".join(head + self.lines) + "\n", tuple(self.inputs), tuple(self.outputs),
                    scalars, constexprs, self.grid, warps, invalid, stages, arch, self.precision, self.hazard,
                    self.expect, tuple(self.twins), tuple(sorted(set(self.addresses.forms))))

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * (depth + 1) + line)

    def fresh(self, prefix: str = "v") -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def _preamble(self) -> None:
        self.emit(0, "pid = tl.program_id(0)")
        if self.two_d:
            self.emit(0, "rows = pid * R + tl.arange(0, R)")
            self.emit(0, "cols = tl.arange(0, C)")
            self.emit(0, "offs = rows[:, None] * C + cols[None, :]")
            self.emit(0, "mask = (rows[:, None] < n) & (cols[None, :] < m)")
        else:
            self.emit(0, "offs = pid * B + tl.arange(0, B)")
            self.emit(0, "mask = offs < n")

    def _load(self) -> Expr:
        addressed = self.addresses.load()
        if addressed is not None:
            return addressed
        rng = self.rng
        dtype = rng.choice(DTYPES)
        buf = Buffer(f"x{len(self.inputs)}", dtype, self.grid * self.size)
        self.inputs.append(buf)
        name = self.fresh()
        shape = rng.choice((FULL, FULL, FULL, SCALAR) + ((ROWS, COLS) if self.two_d else ()))
        special = False
        if shape == FULL and rng.random() < 0.6:
            other = self.exprs.other_for(dtype)
            if dtype.is_float and rng.random() < 0.15:
                other, special = Expr('float("inf")', dtype, SCALAR), True
            self.emit(0, f"{name} = tl.load({buf.name} + offs, mask=mask, other={other.text})")
        else:
            index = {FULL: "offs", SCALAR: "pid", ROWS: "rows", COLS: "cols"}[shape]
            self.emit(0, f"{name} = tl.load({buf.name} + {index})")
        return Expr(name, dtype, shape, special=special)

    # ---------------------------------------------------------------- statements

    def block(self, scope: Scope, depth: int, count: int) -> None:
        kinds = {"assign": 10, "store": 3, "atomic": 1.5, "update": 3 if depth else 0}
        if depth < 2:
            kinds.update({"for": 1.5, "while": 1, "if": 2, "return": 0.7, "acc": 0.8})
        kinds["address"] = 1.5 if self.addresses.active else 0  # last: weight 0 leaves the choices as they were
        before = len(self.lines)
        for _ in range(count):
            kind = self.rng.choices(list(kinds), weights=list(kinds.values()))[0]
            getattr(self, f"_stmt_{kind}")(scope, depth)
        if len(self.lines) == before:
            self.emit(depth, "pass")

    def _stmt_assign(self, scope: Scope, depth: int) -> None:
        for _ in range(20):
            e = self.exprs.build(scope.pool)
            if e is not None:
                name = self.fresh()
                self.emit(depth, f"{name} = {e.text}")
                scope.pool.append(replace(e, text=name, value=None))
                scope.mutable.add(name)
                return

    def _stmt_store(self, scope: Scope, depth: int) -> None:
        self.store(self.rng.choice(scope.pool), depth)

    def store(self, e: Expr, depth: int) -> None:
        if self.addresses.store(e, depth):
            return
        index, size, mask = self._index(e.shape)
        buf = Buffer(f"o{len(self.outputs)}", e.dtype, size)
        self.outputs.append(Output(buf, Init.POISON, e.exact))
        masked = f", mask={mask}" if mask and self.rng.random() < 0.6 else ""
        self.emit(depth, f"tl.store({buf.name} + {index}, {e.text}{masked})")

    def _index(self, shape: str) -> tuple[str, int, str | None]:
        """Offsets, buffer length and mask that give every program its own elements."""
        if shape == FULL:
            return "offs", self.grid * self.size, "mask"
        if shape == ROWS:
            return "rows", self.grid * self.rows, "rows < n"
        if shape == COLS:
            return "pid * C + cols", self.grid * self.cols, "cols < m"
        return "pid", self.grid, None

    def _stmt_address(self, scope: Scope, depth: int) -> None:
        self.addresses.statement(scope, depth)

    def _stmt_atomic(self, scope: Scope, depth: int) -> None:
        e = self.exprs.pick(scope.pool, lambda x: x.dtype in _ATOMIC or x.dtype == dtypes.F16)
        if e is None:
            return
        value, dtype = e.text, e.dtype
        if e.dtype == dtypes.F16:
            value, dtype = f"{paren(e.text)}.to(tl.f32)", dtypes.F32
        shared = self.rng.random() < 0.5 or e.shape == SCALAR
        if e.shape == SCALAR:
            index, size, mask = "0", 1, None
        elif shared:
            index, size, mask = "(offs % 4)" if e.shape == FULL else "0", 4, None
        else:
            index, size, mask = self._index(e.shape)
        buf = Buffer(f"o{len(self.outputs)}", dtype, size)
        self.outputs.append(Output(buf, Init.RANDOM, e.exact and not (shared and dtype.is_float)))
        masked = f", mask={mask}" if mask and self.rng.random() < 0.6 else ""
        call = f"tl.atomic_add({buf.name} + {index}, {value}{masked})"
        if not shared and not masked and e.shape == FULL and self.rng.random() < 0.5:
            name = self.fresh()
            self.emit(depth, f"{name} = {call}")
            scope.pool.append(Expr(name, dtype, e.shape, e.exact, e.special))
        else:
            self.emit(depth, call)

    def _stmt_update(self, scope: Scope, depth: int) -> None:
        """Reassign a value from outside the loop or branch (keeping its type, as Triton needs)."""
        targets = [e for e in scope.pool if e.text in scope.mutable and not e.dtype.is_bool]
        if not targets:
            return
        target = self.rng.choice(targets)
        for _ in range(10):
            e = self.exprs.build(scope.pool)
            if e is None:
                continue
            combined = self.exprs._binary(self.rng.choice("+-*"), target, e)
            if combined is None or combined.shape != target.shape or combined.dtype.is_float and target.is_int:
                continue
            text = combined.text if combined.dtype == target.dtype else \
                f"({combined.text}).to({MARKERS[target.dtype]})"
            self.emit(depth, f"{target.text} = {text}")
            updated = replace(target, exact=combined.exact, special=combined.special or target.dtype == dtypes.F16)
            scope.pool[scope.pool.index(target)] = updated
            return

    def _stmt_acc(self, scope: Scope, depth: int) -> None:
        """An accumulator first bound to a Python number, given its type by a loop body."""
        name = self.fresh("acc")
        start: int | float = self.rng.choice((0, 0.0, 1, -2))
        inner = scope.child()
        loop = self.fresh("i")
        inner.pool.append(Expr(loop, dtypes.I32, SCALAR, python=True))
        e = None
        for _ in range(10):
            e = self.exprs.build(inner.pool)
            if e is not None and e.shape == SCALAR and e.numeric and not e.python:
                break
            e = None
        if e is not None and e.dtype.kind is dtypes.Kind.UINT:
            start = abs(start)  # a negative number meeting an unsigned value is an error (as in Triton)
        if e is not None and e.dtype == dtypes.F16 and isinstance(start, float):
            start = int(start)  # the reference carries 0.0 as f32, which an f16 body never settles (known)
        self.emit(depth, f"{name} = {literal(start).text}")
        self.emit(depth, f"for {loop} in range({self.rng.choice(_LOOP_SCALARS)}):")
        if e is None:
            self.emit(depth + 1, f"{name} = {name} + {loop}")
            e = Expr(loop, dtypes.I32, SCALAR)
        else:
            self.emit(depth + 1, f"{name} += {e.text}" if self.rng.random() < 0.5 else f"{name} = {name} + {paren(e.text)}")
        dtype = dtypes.promote_scalar(e.dtype, start)
        index, size, _ = self._index(SCALAR)
        buf = Buffer(f"o{len(self.outputs)}", dtype, size)
        self.outputs.append(Output(buf, Init.POISON, e.exact))
        self.emit(depth, f"tl.store({buf.name} + {index}, {name})")

    def _stmt_for(self, scope: Scope, depth: int) -> None:
        rng = self.rng
        loop = self.fresh("i")
        a, b = rng.sample(_LOOP_SCALARS, 2)
        spelled = rng.choice((f"range({a})", f"range({a}, {b})", f"tl.range(0, {a})", f"range(1, {a} + 2)",
                              f"range(0, {b}, 2)", f"range({b}, {a}, -1)"))
        self.emit(depth, f"for {loop} in {spelled}:")
        inner = scope.child()
        inner.pool.append(Expr(loop, dtypes.I32, SCALAR, python=True))
        reshaped = self._rebind(inner, depth + 1) if depth == 0 and rng.random() < 0.3 else None
        self.block(inner, depth + 1, rng.randint(1, 4))
        self._merge(scope, inner)
        if reshaped is not None:  # its value after the loop depends on the trip count: never read again
            scope.pool = [e for e in scope.pool if e.text != reshaped]
            scope.mutable.discard(reshaped)

    def _rebind(self, scope: Scope, depth: int) -> str | None:
        """A value from before the loop rebound to another shape: loop-local under the old name."""
        target = self.exprs.pick(scope.pool, lambda e: e.text in scope.mutable)
        new = self.exprs.pick(scope.pool, lambda e: target is not None and e.shape != target.shape)
        if target is None or new is None:
            return None
        self.emit(depth, f"{target.text} = {new.text}")
        scope.pool = [replace(new, text=target.text) if e is target else e for e in scope.pool]
        return target.text

    def _stmt_while(self, scope: Scope, depth: int) -> None:
        a, b = self.rng.sample(_LOOP_SCALARS, 2)
        counter = self.fresh("w")
        self.emit(depth, f"{counter} = {a}")
        self.emit(depth, f"while {counter} < {b}:")
        inner = scope.child()
        inner.pool.append(Expr(counter, dtypes.I32, SCALAR))
        self.block(inner, depth + 1, self.rng.randint(1, 3))
        self.emit(depth + 1, self.rng.choice((f"{counter} += 1", f"{counter} = {counter} + 1")))
        self._merge(scope, inner)
        scope.pool.append(Expr(counter, dtypes.I32, SCALAR))

    def _stmt_if(self, scope: Scope, depth: int) -> None:
        self.emit(depth, f"if {self._condition(scope)}:")
        then = scope.child()
        self.block(then, depth + 1, self.rng.randint(1, 3))
        self._merge(scope, then)
        if self.rng.random() < 0.5:
            both = self.exprs.pick(scope.pool, lambda e: not e.python)
            name = self.fresh()
            if both is not None:
                self.emit(depth + 1, f"{name} = {both.text}")
            self.emit(depth, "else:")
            other = scope.child()
            self.block(other, depth + 1, self.rng.randint(1, 3))
            self._merge(scope, other)
            if both is not None:  # bound on both branches with one type: defined after the `if`
                value = self.exprs.pick(scope.pool, lambda e: e.shape == both.shape and not e.python and (
                    both.dtype.is_float or not e.dtype.is_float))
                assert value is not None
                text = value.text if value.dtype == both.dtype else f"tl.cast({value.text}, {MARKERS[both.dtype]})"
                self.emit(depth + 1, f"{name} = {text}")
                scope.pool.append(Expr(name, both.dtype, both.shape, both.exact and value.exact, True))
                scope.mutable.add(name)

    def _stmt_return(self, scope: Scope, depth: int) -> None:
        self.emit(depth, f"if {self._condition(scope)}:")
        inner = scope.child()
        for e in self.rng.sample(inner.pool, min(2, len(inner.pool))):
            self.store(e, depth + 1)
        self.emit(depth + 1, "return")

    def _condition(self, scope: Scope) -> str:
        rng = self.rng
        a, b = rng.sample(_LOOP_SCALARS, 2)
        scalar = self.exprs.pick(scope.pool, lambda e: e.shape == SCALAR and e.safe and e.numeric)
        options = [f"{a} > 2", f"{a} == {b}", "pid == 0", f"{a} > 1 and {b} < 3", f"not {a} < 2"]
        if scalar is not None:
            options.append(f"{scalar.text} > {literal(rng.choice((0, 1) if scalar.dtype == dtypes.U32 else (0, -1))).text}")
        return rng.choice(options)

    def _merge(self, outer: Scope, inner: Scope) -> None:
        """Values reassigned inside carry out (their flags widened); names new inside stay local."""
        by_name = {e.text: e for e in inner.pool}
        for i, e in enumerate(outer.pool):
            new = by_name.get(e.text)
            if new is not None and new != e:
                outer.pool[i] = replace(e, exact=e.exact and new.exact, special=e.special or new.special)

    # ---------------------------------------------------------------- statements both backends reject

    def _invalid(self, scope: Scope) -> None:
        rng = self.rng
        floats = [e for e in scope.pool if e.dtype.is_float]
        ints = [e for e in scope.pool if e.is_int]
        blocks = [e for e in scope.pool if e.shape == FULL]
        options = ["bad = tl.arange(0, 12)", "bad = tl.arange(0, 2**3 + 1)"]
        if ints:
            options.append(f"bad = tl.exp({rng.choice(ints).text})")
        if floats:
            f = rng.choice(floats).text
            options += [f"bad = {f} << 1", f"bad = {f} & {f}", f"bad = {f} // 2"]
        if blocks:
            options += [f"bad = tl.sum({rng.choice(blocks).text}, axis=2)",
                        f"if {rng.choice(blocks).text} > 0:\n        bad = 1"]
        if self.two_d:
            options.append("bad = rows + cols")
        self.emit(0, rng.choice(options))


def generate(seed: int) -> Case:
    """The seed's kernel: a dot kernel for every fourth seed (:mod:`tests.fuzz.dots`), else a plain one."""
    from tests.fuzz.dots import DotGenerator, is_dot  # it builds on this module

    return (DotGenerator if is_dot(seed) else Generator)(seed).generate()
