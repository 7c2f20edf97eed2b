"""Load and store addresses and masks in the shapes real kernels write them, for about half the
kernels (:class:`Generator` asks :class:`Addresses` for each load and store, and for a statement).

Offsets: ``pid * B + tl.arange(0, B)`` (also in int64), strided by a literal, constexpr or
runtime step (1 included: the compiler specialises it), shifted, rebased pointers
``(x + k) + (offs - k)``, reversed ``sz - 1 - offs`` and ``B - 1 - arange`` and by a step of -1,
wrapped ``(offs + k) % sz`` and ``(offs - k) % sz`` (negative below k: C's remainder, masked),
clamped ``tl.where(offs < sz, offs, 0)``, broadcast (every lane one element), 2-D row- and
column-major ``r[:, None] * stride + c[None, :]`` with runtime and constexpr strides; and pointers
walked tile by tile in loops (``p += st``). Buffers hold exactly the elements live lanes touch
(their lengths multiples of 16 or not, sometimes 1), so a lane a mask failed to stop is out of
bounds, which the reference reports.

Masks: the bound (``offs < sz``, ``sz > offs``, ``offs <= last``, ``~(offs >= sz)``, 2-D from
``[:, None]`` and ``[None, :]``), and'ed with lane tests (``>=``, ``==``, ``!=``, holes like
``offs % 3 != 0`` or ``(offs < a) | (offs >= b)``) or data (``v > 0`` of a loaded value); loads
always give ``other=``. Stores (and atomic adds) only use offsets that give distinct live lanes
distinct elements.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tile_lang import dtypes
from tile_lang.dtypes import DType

from tests.fuzz.case import Buffer, Init, Output
from tests.fuzz.exprs import FULL, MARKERS, NUMERIC, SCALAR, Expr, Exprs, paren

if TYPE_CHECKING:
    from tests.fuzz.generator import Generator, Scope

SHARE = 0.5  # of the kernels whose loads and stores take these forms
_ATOMIC = (dtypes.F32, dtypes.I32, dtypes.U32, dtypes.I64)  # atomic_add's dtypes
FORMS = ("plain", "strided", "shifted", "rebased", "reversed", "lanes_reversed", "step_reversed", "wrapped",
         "wrapped_negative", "clamped", "broadcast", "row_major", "column_major", "walk", "walk_2d", "int64",
         "atomic")
MASKS = ("bound", "bound_flipped", "bound_last", "bound_not", "bound_2d", "at_least", "equal", "not_equal",
         "holes", "either", "data", "none")


@dataclass(frozen=True)
class Form:
    """Offsets of a block, the buffer length they need, the mask keeping live lanes in bounds
    (None: every lane is; ``{a}`` in it stands for the offsets, then named), the lane index that
    extra masks test, and the form's name."""

    offsets: str
    size: int
    guard: str | None
    index: str
    kind: str


def uses_addresses(seed: int) -> bool:
    """Whether the seed's kernel loads and stores through these forms."""
    return random.Random(f"addresses {seed}").random() < SHARE


class Addresses:
    """Addresses and masks for ``gen``'s loads and stores, drawn from a random stream of their own."""

    def __init__(self, gen: Generator) -> None:
        self.gen = gen
        self.rng = random.Random(f"addresses {gen.seed}")
        self.exprs = Exprs(self.rng, gen.two_d)
        self.active = self.rng.random() < SHARE  # as uses_addresses, drawn from this stream
        self.loaded: list[Expr] = []  # top-level loads, for the data-dependent masks of later accesses
        self.forms: list[str] = []  # what was generated (see Case.forms)

    # ---------------------------------------------------------------- the generator's hooks

    def load(self) -> Expr | None:
        """A top-level load through one of the forms, or None (the generator's own)."""
        if not self.active or self.rng.random() < 0.2:
            return None
        e = self._load(self.rng.choice(NUMERIC + (dtypes.BOOL,)), 0, self.loaded)
        self.loaded.append(e)
        return e

    def store(self, e: Expr, depth: int) -> bool:
        """Store ``e`` (a block, or a scalar to one lane or broadcast) through one of the forms, or
        add it atomically (to random contents), its mask maybe testing ``e`` or a top-level load
        (never rebound: not mutable in the generator's scopes); False: the generator's own."""
        rng = self.rng
        if not self.active or e.shape not in (FULL, SCALAR) or rng.random() < (0.25 if e.shape == FULL else 0.6):
            return False
        form = self._broadcast(True, depth) if e.shape == SCALAR and rng.random() < 0.6 else self._form(True, depth)
        offsets = self._offsets(form, depth)
        mask = self._mask(form, offsets, ([e] if e.value is None and not e.python else []) + self.loaded, depth)
        atomic = e.dtype in _ATOMIC and not e.python and rng.random() < 0.25
        if atomic:
            self.forms.append("atomic")
        buf = Buffer(f"o{len(self.gen.outputs)}", e.dtype, form.size)
        self.gen.outputs.append(Output(buf, Init.RANDOM if atomic else Init.POISON, e.exact))
        call = "tl.atomic_add" if atomic else "tl.store"
        self.gen.emit(depth, f"{call}({self._pointer(buf.name, form, offsets)}, {e.text}{mask})")
        return True

    def statement(self, scope: Scope, depth: int) -> None:
        """A load inside control flow (its mask may test any value in scope), or a walking loop."""
        if self.rng.random() < 0.5:
            pool = [e for e in scope.pool if e.shape in (FULL, SCALAR)]
            scope.pool.append(self._load(self.rng.choice(NUMERIC + (dtypes.BOOL,)), depth, pool))
        else:
            self._walk(scope, depth)

    # ---------------------------------------------------------------- loads and stores

    def _load(self, dtype: DType, depth: int, pool: list[Expr]) -> Expr:
        form = self._broadcast(False, depth) if self.rng.random() < 0.12 else self._form(False, depth)
        offsets = self._offsets(form, depth)
        mask = self._mask(form, offsets, pool, depth)
        buf = Buffer(f"x{len(self.gen.inputs)}", dtype, form.size)
        self.gen.inputs.append(buf)
        name = self.gen.fresh()
        other = mask and f", other={self.exprs.other_for(dtype).text}"
        self.gen.emit(depth, f"{name} = tl.load({self._pointer(buf.name, form, offsets)}{mask}{other})")
        return Expr(name, dtype, FULL)

    def _offsets(self, form: Form, depth: int) -> str:
        """The offsets' text, or a name bound to them (where the guard tests them, or at random)."""
        if "{a}" not in (form.guard or "") and self.rng.random() < 0.75:
            return form.offsets
        name = self.gen.fresh("a")
        self.gen.emit(depth, f"{name} = {form.offsets}")
        return name

    def _pointer(self, buf: str, form: Form, offsets: str) -> str:
        if form.kind == "rebased":
            k = self._param("k", self._value(-self._lanes(), self._lanes()))
            return f"({buf} + {k}) + ({offsets} - {k})"
        return f"{buf} + {paren(offsets)}"

    def _param(self, prefix: str, value: int) -> str:
        name = self.gen.fresh(prefix)
        self.gen.ints.append((name, value))
        return name

    def _lanes(self) -> int:
        gen = self.gen
        return gen.grid * (gen.rows if gen.two_d else gen.size)

    def _extent(self, full: int) -> int:
        """A live length for ``full`` lanes: all of them, or one of :meth:`_value`'s from 1."""
        return full if self.rng.random() < 0.3 else self._value(1, full)

    def _value(self, low: int, high: int) -> int:
        """An int in ``[low, high]``, mostly where the compiler specialises or rounds: a multiple
        of 16 or one off it, 1 (a constant), else any."""
        rng = self.rng
        sixteens = [v + d for v in range(16 * -(-low // 16), high + 1, 16) for d in (0, 0, 1, -1)]
        choices = [v for v in [*sixteens, 1] if low <= v <= high]
        return rng.choice(choices) if choices and rng.random() < 0.6 else rng.randint(low, high)

    # ---------------------------------------------------------------- 1-D forms

    def _index(self, depth: int) -> str:
        """The block's global lane index, sometimes spelled out or in int64 (named when spelled)."""
        rng = self.rng
        gen = self.gen
        if gen.two_d:
            return "offs"
        spelled = rng.choice(("offs", "offs", "pid * B + tl.arange(0, B)", "tl.arange(0, B) + pid * B",
                              "offs.to(tl.int64)", "pid.to(tl.int64) * B + tl.arange(0, B)"))
        if spelled == "offs":
            return spelled
        if "int64" in spelled:
            self.forms.append("int64")
        name = gen.fresh("g")
        gen.emit(depth, f"{name} = {spelled}")
        return name

    def _form(self, store: bool, depth: int) -> Form:
        if self.gen.two_d:
            return self._form_2d(depth)
        rng, gen = self.rng, self.gen
        kinds = ["plain", "strided", "shifted", "rebased", "reversed", "lanes_reversed", "step_reversed", "wrapped",
                 "wrapped_negative"] + ([] if store else ["clamped"])
        kind = rng.choice(kinds)
        self.forms.append(kind)
        if kind == "lanes_reversed":  # each program's block backwards: the bound tests the offsets
            live = self._extent(gen.grid * gen.size)
            bound = self._bound("{a}", self._param("sz", live), live)
            return Form("pid * B + (B - 1 - tl.arange(0, B))", live, bound, "offs", kind)
        lanes = self._lanes()
        live = self._extent(lanes)
        g = self._index(depth)
        sz = self._param("sz", live)
        if kind == "clamped":  # every lane in bounds, those past the bound all reading element 0
            return Form(f"tl.where({g} < {sz}, {g}, 0)", live, None, g, kind)
        if kind == "wrapped" and not store and rng.random() < 0.7:  # in bounds on every lane
            return Form(f"({paren(g)} + {self._param('k', self._value(0, 2 * lanes))}) % {sz}", live, None, g, kind)
        bound = self._bound(g, sz, live)
        if kind == "strided":
            step = rng.choice((1, 2, 3, 16))
            spelled = rng.choice((str(step), self._param("st", step), self._constexpr(step)))
            return Form(f"{paren(g)} * {spelled}", (live - 1) * step + 1, bound, g, kind)
        if kind == "shifted":
            shift = self._value(0, 40)
            return Form(f"{paren(g)} + {self._param('k', shift)}", live + shift, bound, g, kind)
        if kind == "reversed":
            return Form(f"{sz} - 1 - {paren(g)}", live, bound, g, kind)
        if kind == "step_reversed":
            return Form(f"{sz} - 1 + {paren(g)} * {self._param('st', -1)}", live, bound, g, kind)
        if kind == "wrapped":  # distinct elements for the lanes below the bound
            return Form(f"({paren(g)} + {self._param('k', self._value(0, 2 * lanes))}) % {sz}", live, bound, g, kind)
        if kind == "wrapped_negative":  # C's remainder: negative below k, masked off
            k = self._param("k", self._value(1, live))
            guard = "{a} >= 0" if not store else f"({{a}} >= 0) & ({bound})"
            return Form(f"({paren(g)} - {k}) % {sz}", live, guard, g, kind)
        return Form(g, live, bound, g, kind)  # plain and rebased

    def _constexpr(self, value: int) -> str:
        name = f"ST{len(self.gen.consts)}"
        self.gen.consts.append((name, value))
        return name

    def _bound(self, g: str, sz: str, live: int) -> str:
        """``g < sz`` in one of the spellings kernels use."""
        kind = self.rng.choice(("bound", "bound", "bound_flipped", "bound_last", "bound_not"))
        self.forms.append(kind)
        if kind == "bound_flipped":
            return f"{sz} > {g}"
        if kind == "bound_last":
            return f"{g} <= {self._param('last', live - 1)}"
        if kind == "bound_not":
            return f"~({g} >= {sz})"
        return f"{g} < {sz}"

    def _broadcast(self, store: bool, depth: int) -> Form:
        """Every lane one element: a runtime index (loads), or each program's own element from one lane (stores)."""
        gen = self.gen
        self.forms.append("broadcast")
        spread = self.rng.choice(("tl.zeros_like(offs)", "0 * offs", f"tl.zeros({gen.exprs._shape_text(FULL)}, tl.int32)"))
        if not store:
            size = self.rng.randint(1, 40)
            return Form(f"{self._param('k', self.rng.randrange(size))} + {spread}", size, None, "offs",
                        "broadcast")
        if gen.two_d:
            guard = (f"(tl.arange(0, R)[:, None] == {self._param('j', self.rng.randrange(gen.rows))}) & "
                     f"(tl.arange(0, C)[None, :] == {self._param('j', self.rng.randrange(gen.cols))})")
        else:
            guard = f"tl.arange(0, B) == {self._param('j', self.rng.randrange(gen.size))}"
        return Form(f"pid + {spread}", gen.grid, guard, "offs", "broadcast")

    # ---------------------------------------------------------------- 2-D forms

    def _form_2d(self, depth: int) -> Form:
        rng, gen = self.rng, self.gen
        kind = rng.choice(("row_major", "row_major", "column_major"))
        self.forms.append(kind)
        nr, nc = self._extent(self._lanes()), self._extent(gen.cols)
        szr, szc = self._param("sz", nr), self._param("sz", nc)
        r = rng.choice(("rows", "rows", "rows.to(tl.int64)", "pid * R + tl.arange(0, R)"))
        if r != "rows":
            self.forms += ["int64"] * ("int64" in r)
            name = gen.fresh("g")
            gen.emit(depth, f"{name} = {r}")
            r = name
        c = "cols"
        rr = rng.choice((r, r, f"{szr} - 1 - {r}"))  # rows reversed
        cc = rng.choice((c, c, f"({c} + {self._param('k', rng.randint(0, 2 * gen.cols))}) % {szc}", f"{szc} - 1 - {c}"))
        if kind == "row_major":
            pad = rng.choice((0, 0, 1, 16 - nc % 16))
            stride = szc if pad == 0 and rng.random() < 0.5 else rng.choice(
                (self._param("st", nc + pad), self._constexpr(nc + pad)))
            inner = rng.choice(("", "", f" * {self._param('st', 1)}"))
            offsets = f"{paren(rr)}[:, None] * {stride} + {paren(cc)}[None, :]{inner}"
            size = (nr - 1) * (nc + pad) + nc
        else:
            pad = rng.choice((0, 3))
            stride = szr if pad == 0 and rng.random() < 0.5 else self._param("st", nr + pad)
            offsets = f"{paren(rr)}[:, None] + {paren(cc)}[None, :] * {stride}"
            size = (nc - 1) * (nr + pad) + nr
        spelled = rng.choice(("split", "split", "after", "named"))
        self.forms.append("bound_2d")
        if spelled == "split":
            guard = f"({r}[:, None] < {szr}) & ({c}[None, :] < {szc})"
        elif spelled == "after":
            guard = f"({r} < {szr})[:, None] & ({c} < {szc})[None, :]"
        else:
            rm, cm = gen.fresh("rm"), gen.fresh("cm")
            gen.emit(depth, f"{rm} = {r} < {szr}")
            gen.emit(depth, f"{cm} = {c} < {szc}")
            guard = f"{rm}[:, None] & {cm}[None, :]"
        return Form(offsets, size, guard, "offs", kind)

    # ---------------------------------------------------------------- masks

    def _mask(self, form: Form, offsets: str, pool: list[Expr], depth: int) -> str:
        """``, mask=...``: the form's guard, and'ed with a lane or data test sometimes (alone where
        there is no guard); "" for none."""
        rng = self.rng
        extra = self._extra(form.index, pool) if rng.random() < 0.6 else None
        if form.guard is None:
            if extra is None:
                self.forms.append("none")
                return ""
            return f", mask={extra}"
        guard = form.guard.replace("{a}", offsets)
        if extra is not None:
            guard = f"({guard}) & ({extra})" if rng.random() < 0.5 else f"({extra}) & ({guard})"
        if rng.random() < 0.2:
            name = self.gen.fresh("mk")
            self.gen.emit(depth, f"{name} = {guard}")
            guard = name
        return f", mask={guard}"

    def _extra(self, g: str, pool: list[Expr]) -> str | None:
        """A lane test of the global index ``g`` or (1-D) of the lane in its program, whose live
        lanes need not be consecutive; or a data test of a value in ``pool``."""
        rng, gen = self.rng, self.gen
        lanes = gen.grid * gen.size
        if not gen.two_d and rng.random() < 0.4:  # each program's own lanes: holes inside every block
            g, lanes = "tl.arange(0, B)", gen.size
        kind = rng.choice(("at_least", "equal", "not_equal") + ("holes", "either", "data") * 2)  # the last: not runs
        if kind == "data":
            values = [e for e in pool if e.safe and e.value is None and not e.python and e.shape in (FULL, SCALAR)]
            if not values:
                return None
            v = rng.choice(values)
            self.forms.append(kind)
            if v.dtype.is_bool:
                return v.text
            return f"{paren(v.text)} > {rng.choice((0, 1) if v.dtype.kind is dtypes.Kind.UINT else (0, -1))}"
        self.forms.append(kind)
        k = self._param("k", self._value(-3, lanes))
        if kind == "at_least":
            return rng.choice((f"{g} >= {k}", f"{k} <= {g}", f"{g} > {k}"))
        if kind == "equal":
            return f"{g} == {k}"
        if kind == "not_equal":
            return f"{g} != {k}"
        if kind == "holes":
            return rng.choice((f"({g} % 3) != 0", f"({g} & 1) == 0", f"({g} % 4) == {rng.randrange(4)}"))
        low = dict(gen.ints)[k]
        return f"({g} < {k}) | ({g} >= {self._param('k', self._value(max(0, low), lanes))})"  # a hole at k

    # ---------------------------------------------------------------- pointers walked in loops

    def _walk(self, scope: Scope, depth: int) -> None:
        """Tiles read (and the running sum stored) through pointers advanced each trip: ``p += st``
        (1-D: sometimes from the last tile back, ``p -= st``)."""
        rng, gen = self.rng, self.gen
        dtype = rng.choice(NUMERIC)
        trips = rng.choice((0, 1, 2, 3))
        t = self._param("t", trips)
        p, acc, i = gen.fresh("p"), gen.fresh("acc"), gen.fresh("i")
        stored = rng.random() < 0.5
        zero = "0.0" if dtype.is_float else "0"
        if gen.two_d:  # along rows of K columns, C at a time: a matmul's A operand
            self.forms.append("walk_2d")
            nr, width = self._extent(self._lanes()), max(1, rng.randint(trips * gen.cols - gen.cols + 1, trips * gen.cols))
            stride = width + rng.choice((0, 0, 5))
            size = (nr - 1) * stride + width
            st, kk = self._param("st", stride), self._param("kk", width)
            start = f"rows[:, None] * {st} + cols[None, :]"
            mask = f"(rows[:, None] < {self._param('sz', nr)}) & (cols[None, :] + {i} * C < {kk})"
            step = "C"
        else:  # tiles of the whole grid's width
            self.forms.append("walk")
            lanes = self._lanes()
            size = max(1, rng.randint(trips * lanes - lanes + 1, trips * lanes))
            step = self._param("st", lanes)
            sz = self._param("sz", size)
            start, mask = "offs", f"offs + {i} * {step} < {sz}"
            if rng.random() < 0.3:  # from the last tile back: p -= st
                start, mask = f"offs + ({t} - 1) * {step}", f"offs + ({t} - 1 - {i}) * {step} < {sz}"
                step = f"-{step}"
        x = Buffer(f"x{len(gen.inputs)}", dtype, size)
        gen.inputs.append(x)
        gen.emit(depth, f"{p} = {x.name} + {start}")
        gen.emit(depth, f"{acc} = tl.zeros({gen.exprs._shape_text(FULL)}, {MARKERS[dtype]})")
        if stored:
            q = gen.fresh("q")
            out = Buffer(f"o{len(gen.outputs)}", dtype, size)
            gen.outputs.append(Output(out, Init.POISON, True))
            gen.emit(depth, f"{q} = {out.name} + {start}")
        gen.emit(depth, f"for {i} in {rng.choice(('range', 'tl.range'))}({t}):")
        gen.emit(depth + 1, f"{acc} += tl.load({p}, mask={mask}, other={zero})")
        if stored:
            gen.emit(depth + 1, f"tl.store({q}, {acc}, mask={mask})")
            gen.emit(depth + 1, f"{q} += {step}")
        gen.emit(depth + 1, rng.choice((f"{p} += {step}", f"{p} = {p} + {step}")).replace("+= -", "-= "))
        scope.pool.append(Expr(acc, dtype, FULL, special=dtype == dtypes.F16))
