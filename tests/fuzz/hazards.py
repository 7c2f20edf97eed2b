"""Edge cases planted at the end of a plain kernel, where compilers go wrong silently: runtime
``range`` loops with negative, huge or zero steps (the index read after the loop too), argmax
and max of NaN blocks, integer extremes (``//`` and ``%`` by -1, negation, shifts past the
width, offsets near 2**31), a store read back by another lane (with and without a barrier),
module-level constexprs and the max/min of +-0.

They draw from a random stream of their own and come after the kernel's stores, so the rest
of a seed's kernel and launch is what it was without them.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tile_lang import dtypes
from tile_lang.dtypes import DType

from tests.fuzz.case import Buffer, Data, Init, Output
from tests.fuzz.exprs import COLS, FULL, ROWS, SCALAR, Expr, Exprs, fits, literal, result_dtype

if TYPE_CHECKING:
    from tests.fuzz.generator import Generator, Scope

SHARE = 0.6  # of the valid plain kernels that get one
KINDS = {"loop": 3.0, "arg": 3.0, "ints": 3.0, "race": 3.0, "constexpr": 1.5, "zeros": 1.5}  # and their weights
_ATOMIC = (dtypes.F32, dtypes.I32, dtypes.U32, dtypes.I64)
_STEPS = ((5, -1, -2), (3, 3, -1), (0, 7, -3), (10, 0, -4), (1610612735, 1610612736, 1610612736),
          (2**31 - 3, 2**31 - 1, 1), (0, 2**31 - 1, 2**30 + 7), (-(2**31), -(2**31) + 5, 2),
          (2**31 - 2, -(2**31), -(2**30)), (2**31 - 2, 2**31 + 2, 1), (4, 9, 2), (6, 2, 1))  # (start, stop, step)
_CONSTEXPRS = (1.44, -2.5, 0.1, 1e-3, 0.5, 3, -7)


class Hazards:
    """Plants one edge case (or none) into ``gen``'s kernel, adding its buffers and parameters."""

    def __init__(self, gen: Generator) -> None:
        self.gen = gen
        self.rng = random.Random(f"hazard {gen.seed}")
        self.exprs = Exprs(self.rng, gen.two_d)

    def plant(self, scope: Scope) -> str:
        """The kind planted (a key of ``KINDS``), or "" for none."""
        if self.rng.random() >= SHARE:
            return ""
        kind = self.rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        getattr(self, f"_{kind}")(scope)
        return kind

    # ---------------------------------------------------------------- helpers

    def _input(self, dtype: DType, data: Data) -> str:
        gen = self.gen
        buf = Buffer(f"x{len(gen.inputs)}", dtype, gen.grid * gen.size, data)
        gen.inputs.append(buf)
        return buf.name

    def _store(self, text: str, dtype: DType, shape: str, exact: bool = True, init: Init = Init.POISON) -> int:
        """Store a value to a new output (every program its own elements); the output's index."""
        index, size, _ = self.gen._index(shape)
        buf = Buffer(f"o{len(self.gen.outputs)}", dtype, size)
        self.gen.outputs.append(Output(buf, init, exact))
        self.gen.emit(0, f"tl.store({buf.name} + {index}, {text})")
        return len(self.gen.outputs) - 1

    def _param(self, value: int) -> str:
        name = self.gen.fresh("h")
        self.gen.ints.append((name, value))
        return name

    # ---------------------------------------------------------------- the edge cases

    def _loop(self, scope: Scope) -> None:
        """A runtime range with edge bounds and steps: its trip count and its index after the loop."""
        rng, gen = self.rng, self.gen
        steps = _STEPS + ((0, 5, 0),) if rng.random() < 0.1 else _STEPS  # a zero step: rare (it hangs)
        start, stop, step = (self._param(v) for v in rng.choice(steps))
        count, index = gen.fresh("hc"), gen.fresh("hi")
        gen.emit(0, f"{count} = 0")
        gen.emit(0, f"{index} = {rng.choice((-5, 0, 100))}")
        gen.emit(0, f"for {index} in {rng.choice(('range', 'tl.range'))}({start}, {stop}, {step}):")
        gen.emit(1, f"{count} += 1")
        self._store(count, dtypes.I32, SCALAR)
        if rng.random() < 0.8:
            self._store(index, dtypes.I64, SCALAR)  # an i32 index or an i64 one (bounds past i32)

    def _arg(self, scope: Scope) -> None:
        """argmax/argmin and max/min with indices of blocks holding NaNs, all-NaN ones and masked-out ones."""
        rng, gen = self.rng, self.gen
        dtype = rng.choice((dtypes.F32, dtypes.F32, dtypes.F16))
        x, v = self._input(dtype, Data.NAN), gen.fresh("h")
        fill = rng.choice(('float("nan")', 'float("-inf")', 'float("inf")', None))
        masked = "" if fill is None else f", mask=mask, other={fill}"
        gen.emit(0, f"{v} = tl.load({x} + offs{masked})")
        for _ in range(rng.randint(1, 3)):
            axis = rng.choice((0, 1)) if gen.two_d else 0
            shape = SCALAR if not gen.two_d else (COLS if axis == 0 else ROWS)
            fn = rng.choice(("argmax", "argmin", "max", "min"))
            if fn.startswith("arg"):
                self._store(f"tl.{fn}({v}, axis={axis})", dtypes.I32, shape)
                continue
            value, where = gen.fresh("h"), gen.fresh("h")
            gen.emit(0, f"{value}, {where} = tl.{fn}({v}, axis={axis}, return_indices=True)")
            self._store(value, dtype, shape)
            self._store(where, dtypes.I32, shape)

    def _ints(self, scope: Scope) -> None:
        """Integer extremes: division and remainder by -1, negation, abs, shifts past the width, offsets near 2**31."""
        rng, gen = self.rng, self.gen
        dtype = rng.choice((dtypes.I32, dtypes.I32, dtypes.I64, dtypes.U32))
        e, d = gen.fresh("h"), gen.fresh("h")
        gen.emit(0, f"{e} = tl.load({self._input(dtype, Data.EDGE)} + offs)")
        gen.emit(0, f"{d} = tl.load({self._input(dtype, Data.EDGE)} + offs)")
        amount = f"({d} & {2 * dtype.bits - 1})"
        ops = [f"{e} << {amount}", f"{e} >> {amount}", f"{e} // tl.where({d} == 0, 3, {d})",
               f"{e} % tl.where({d} == 0, 3, {d})"]
        wraps = [f"-{e}", f"tl.abs({e})", f"{e} + {d}", f"{e} * {d}"]  # overflow on signed edge data
        if dtype.is_signed:
            ops[2:] = [f"{e} {op} tl.where(({d} == 0) | ({d} == -1), 3, {d})" for op in ("//", "%")]
            wraps += [f"{e} // tl.where({d} == 0, -1, {d})", f"{e} % tl.where({d} == 0, -1, {d})", f"{e} // (-1)",
                      f"{e} % (-1)"]
        else:
            ops += wraps  # unsigned ones wrap by definition
        # an overflow stops the reference, so the whole kernel goes uncompared: one kernel in three has one
        chosen = rng.sample(ops, rng.randint(1, 3)) + ([rng.choice(wraps)] if dtype.is_signed and rng.random() < 0.35
                                                       else [])
        for text in chosen:
            self._store(text, dtype, FULL)
        if rng.random() < 0.4:
            self._offsets()

    def _offsets(self) -> None:
        """A load whose offsets pass through values near 2**31 (each program still reads its own block)."""
        gen = self.gen
        # no form overflows i32 with these (an overflowed offset would crash the emulator, not be compared)
        big = self._param(self.rng.choice((2**31 - 1 - gen.grid * gen.size, 2**31 - 2**20, 2**31, 2**32 + 5)))
        x = self._input(dtypes.I32, Data.NORMAL)
        spelled = self.rng.choice((f"{x} + ((offs + {big}) - {big})", f"({x} + {big}) + (offs - {big})",
                                   f"{x} + (offs - {big} + {big})"))
        self._store(f"tl.load({spelled})", dtypes.I32, FULL)

    def _race(self, scope: Scope) -> None:
        """A store read back (or added to atomically) by another lane of the same program: a race
        the reference must report, unless a barrier separates them (then both must agree)."""
        rng, gen = self.rng, self.gen
        atomic = rng.random() < 0.35
        value = self.exprs.pick(scope.pool, lambda e: e.shape == FULL and e.safe and (
            e.dtype in _ATOMIC if atomic else not e.python))
        value = value or Expr("offs", dtypes.I32, FULL)
        buf = Buffer(f"o{len(gen.outputs)}", value.dtype, gen.grid * gen.size)
        gen.outputs.append(Output(buf, Init.POISON, True))
        gen.emit(0, f"tl.store({buf.name} + offs, {value.text}{', mask=mask' if rng.random() < 0.5 else ''})")
        returned = any(line.strip() == "return" for line in gen.lines)  # the race might never run: no expectation
        barrier = rng.random() < 0.5 or returned
        other = self._other_lane()
        if barrier or not self._flips(other):  # along an axis of one element each lane meets only itself
            gen.emit(0, "tl.debug_barrier()")
        else:
            gen.expect = "data race"
        if atomic:
            self._store(f"tl.atomic_add({buf.name} + {other}, {value.text})", value.dtype, FULL)
        else:
            self._store(f"tl.load({buf.name} + {other})", value.dtype, FULL)

    def _other_lane(self) -> str:
        """Offsets of the program's own block, each lane's element another lane's."""
        if self.gen.two_d:
            return self.rng.choice(("rows[:, None] * C + (C - 1 - cols)[None, :]",
                                    "(pid * R + (R - 1 - tl.arange(0, R)))[:, None] * C + cols[None, :]"))
        return self.rng.choice(("pid * B + (B - 1 - tl.arange(0, B))", "pid * B + (tl.arange(0, B) + 1) % B"))

    def _flips(self, other: str) -> bool:
        """Whether the offsets of :meth:`_other_lane` move some lane off its own element."""
        gen = self.gen
        if not gen.two_d:
            return gen.size > 1
        return (gen.cols if "C - 1 - cols" in other else gen.rows) > 1

    def _constexpr(self, scope: Scope) -> None:
        """A module-level constexpr must compute what its literal computes: two outputs, twins."""
        rng, gen = self.rng, self.gen
        value = rng.choice(_CONSTEXPRS)
        name = f"K{len(gen.globals)}"
        gen.globals.append(f"{name} = tl.constexpr({value!r})")
        number = literal(value)
        a = self.exprs.pick(scope.pool, lambda e: e.numeric and e.value is None and not e.python and fits(
            value, result_dtype(e, number)) and (e.dtype.is_float or isinstance(value, int)))
        if a is None:
            a = Expr("offs", dtypes.I32, FULL)
        full = f"tl.full({self.exprs._shape_text(a.shape)}, {{k}}, tl.f32) + {{a}}"
        op = rng.choice(("{a} * {k}", "{a} + {k}", "{a} - {k}", full, "tl.where({a} > 0, {k}, {a})"))
        dtype = dtypes.promote(result_dtype(a, number), dtypes.F32) if "tl.f32" in op else result_dtype(a, number)
        first = self._store(op.format(a=a.text, k=name), dtype, a.shape, a.exact)
        second = self._store(op.format(a=a.text, k=number.text), dtype, a.shape, a.exact)
        gen.twins.append((first, second))

    def _zeros(self, scope: Scope) -> None:
        """maximum/minimum of +0 and -0 (and of infinities): results compared with their zero's sign."""
        rng, gen = self.rng, self.gen
        dtype = rng.choice((dtypes.F32, dtypes.F32, dtypes.F16))
        a, b = gen.fresh("h"), gen.fresh("h")
        gen.emit(0, f"{a} = tl.load({self._input(dtype, Data.EDGE)} + offs)")
        gen.emit(0, f"{b} = tl.load({self._input(dtype, Data.EDGE)} + offs)")
        ops = [f"tl.maximum({a}, {b})", f"tl.minimum({a}, {b})", f"tl.maximum({a}, -0.0)", f"tl.minimum(0.0, {b})",
               f"tl.maximum(-0.0, {b})", f"tl.minimum({a}, 0.0)"]
        for text in rng.sample(ops, rng.randint(1, 3)):
            self._store(text, dtype, FULL)
