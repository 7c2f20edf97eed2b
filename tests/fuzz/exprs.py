"""Random typed expressions of kernel source text: elementwise ops, casts, literals, reductions.

Types follow :mod:`tile_lang.dtypes` (the rules both backends share), so generated code is
valid by construction. Each expression also tracks whether both backends must compute it
bit-identically (``exact``: correctly rounded ops in one order) and whether it may hold inf or
NaN (``special``); integers, comparisons and casts to integers are only ever built from exact,
non-special values, so results can be compared exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from tile_lang import dtypes
from tile_lang.dtypes import DType
from tile_lang.semantics.elementwise import constant_dtype
from tile_lang.semantics.operators import division_dtype
from tile_lang.semantics.reduction import max_dtype, sum_dtype

Scalar = bool | int | float
SCALAR, FULL, ROWS, COLS = "S", "F", "R", "C"  # a scalar, the whole block, a 2-D block's rows or columns
NUMERIC = (dtypes.F32, dtypes.F16, dtypes.I32, dtypes.I64, dtypes.U32)
DTYPES = (*NUMERIC, dtypes.BOOL)
MARKERS = {dtypes.F32: "tl.f32", dtypes.F16: "tl.f16", dtypes.I32: "tl.i32", dtypes.I64: "tl.i64",
           dtypes.U32: "tl.u32", dtypes.BOOL: "tl.int1", dtypes.BF16: "tl.bf16", dtypes.I8: "tl.i8",
           dtypes.F8E4M3: "tl.f8e4m3", dtypes.F8E5M2: "tl.f8e5m2"}  # the last four: dot operands and results
INT_LITERALS = (0, 1, 2, 3, 7, -1, -2, -7, 100, -100, 2**31 - 1, -(2**31), 2**40, -(2**40))
FLOAT_LITERALS = (0.5, -0.5, 1.5, -0.0, 0.0, 2.0, -3.25, 1e-3, 1e4, 65504.0, -1e30)


@dataclass(frozen=True)
class Expr:
    """Source text of a value with its dtype, shape kind and comparison properties."""

    text: str
    dtype: DType
    shape: str
    exact: bool = True
    special: bool = False
    value: Scalar | None = None  # a Python literal (it adapts to the other operand's dtype)
    python: bool = False  # a loop index: a Python int on the reference, so no methods or floor division

    @property
    def numeric(self) -> bool:
        return not self.dtype.is_bool

    @property
    def is_int(self) -> bool:
        return self.dtype.is_int

    @property
    def safe(self) -> bool:
        """Exact and finite: fit for comparisons, casts to integers and argmax."""
        return self.exact and not self.special

    @property
    def ordered(self) -> bool:
        """Numeric and never NaN: fit for min/max, which are continuous (exact only if the inputs are)."""
        return self.numeric and not self.special


def literal(value: Scalar) -> Expr:
    text = repr(value) if not isinstance(value, float) or value == value else 'float("nan")'
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (value < 0 or str(value) == "-0.0"):
        text = f"({text})"
    return Expr(text, dtypes.scalar_dtype(value), SCALAR, value=value)


def paren(text: str) -> str:
    return text if text.isidentifier() or text.startswith("(") and _balanced(text[1:-1]) else f"({text})"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def broadcast(a: Expr, b: Expr) -> tuple[str, str, str] | None:
    """The two texts adapted to a common shape (rows gain ``[:, None]`` against a full block)."""
    if a.shape == b.shape or b.shape == SCALAR:
        return a.text, b.text, a.shape
    if a.shape == SCALAR:
        return a.text, b.text, b.shape
    if {a.shape, b.shape} == {ROWS, COLS}:
        return None
    # one is FULL (2-D), the other ROWS or COLS
    ta = f"{paren(a.text)}[:, None]" if a.shape == ROWS else a.text
    tb = f"{paren(b.text)}[:, None]" if b.shape == ROWS else b.text
    return ta, tb, FULL


def result_dtype(a: Expr, b: Expr) -> DType:
    """Triton's promotion of two operands, a Python literal adapting to a tensor."""
    if a.value is not None and b.value is not None:
        return dtypes.promote(a.dtype, b.dtype)
    if a.value is not None:
        return dtypes.promote_scalar(b.dtype, a.value)
    if b.value is not None:
        return dtypes.promote_scalar(a.dtype, b.value)
    return dtypes.promote(a.dtype, b.dtype)


def tensors_dtype(*given: Expr) -> DType:
    """The promotion of ``tl.maximum``/``tl.minimum``/``tl.fma``'s operands, Triton 3.6's: a Python
    literal is a tensor of its own dtype first (f32 for a float), bf16 compared in f32 by the first two."""
    found = [constant_dtype(e.value) if e.value is not None else e.dtype for e in given]
    common = found[0]
    for other in found[1:]:
        common = dtypes.promote(common, other)
    return common


def same_signedness(a: Expr, b: Expr) -> bool:
    """Whether ``a / b``, ``a // b`` and ``a % b`` are legal: two int blocks of one signedness, or a
    Python int on a side (Triton's rule; both backends reject the rest, so it is no fuzz target).
    A runtime loop's index counts as the i32 it is in Triton (the reference, taking it for a
    Python int, accepts it against a u32: a known difference kept out of the fuzz)."""
    typed = [e for e in (a, b) if e.value is None]
    return len(typed) < 2 or not (a.is_int and b.is_int) or a.dtype.is_signed == b.dtype.is_signed


def fits(value: Scalar, dtype: DType) -> bool:
    """A literal that converts to ``dtype`` without overflow (f16's range included)."""
    if dtype.is_float:
        return abs(float(value)) <= 65504.0 or dtype.bits > 16
    if dtype.is_bool or isinstance(value, float):
        return not isinstance(value, float)
    half = 1 << (dtype.bits - 1)
    low, high = (-half, half - 1) if dtype.is_signed else (0, 2 * half - 1)
    return low <= int(value) <= high


class Exprs:
    """Builds one random expression over a pool of named values; ``None`` when the picked
    operands do not suit the picked op (the caller tries again)."""

    def __init__(self, rng: random.Random, two_d: bool) -> None:
        self.rng = rng
        self.two_d = two_d

    def literal_for(self, like: Expr) -> Expr:
        """A Python literal that suits ``like``'s dtype (sometimes a large or negative one)."""
        rng = self.rng
        if like.dtype.is_bool:
            return literal(rng.choice((True, False)))
        if like.dtype.is_float:
            value: Scalar = rng.choice(FLOAT_LITERALS * 2 + INT_LITERALS[:10])
            if like.dtype == dtypes.F16 and not fits(value, dtypes.F16):
                value = rng.choice(FLOAT_LITERALS[:8])
            return literal(value)
        choices = INT_LITERALS if rng.random() < 0.5 else INT_LITERALS[:10]
        value = rng.choice([v for v in choices if fits(v, like.dtype) or v >= 2**32])
        if rng.random() < 0.1:
            value = rng.choice((1.5, -0.5, True))
        return literal(value)

    def other_for(self, dtype: DType) -> Expr:
        """A literal for a masked load's ``other=``: one ``dtype`` holds as it is."""
        while True:
            other = self.literal_for(Expr("", dtype, FULL))
            value = other.value
            if value is not None and isinstance(value, bool) == dtype.is_bool and (
                    dtype.is_float or not isinstance(value, float)) and fits(value, dtype):
                return other

    def operand(self, pool: list[Expr], like: Expr) -> Expr:
        if self.rng.random() < 0.3:
            return self.literal_for(like)
        return self.rng.choice(pool)

    def build(self, pool: list[Expr]) -> Expr | None:
        ops: list[tuple[Callable[[list[Expr]], Expr | None], int]] = [
            (self.arith, 8), (self.divide, 2), (self.int_div, 2), (self.bitwise, 2), (self.shift, 2),
            (self.compare, 3), (self.unary, 3), (self.where, 3), (self.minmax, 2), (self.math, 3),
            (self.cast, 3), (self.reduce, 3), (self.full, 1), (self.fma, 1)]
        fn = self.rng.choices([f for f, _ in ops], weights=[w for _, w in ops])[0]
        return fn(pool)

    def pick(self, pool: list[Expr], test: Callable[[Expr], bool]) -> Expr | None:
        found = [e for e in pool if test(e)]
        return self.rng.choice(found) if found else None

    # ---------------------------------------------------------------- binary operators

    def _binary(self, op: str, a: Expr, b: Expr, dtype: DType | None = None, **props: bool) -> Expr | None:
        shaped = broadcast(a, b)
        if shaped is None or a.value is not None and b.value is not None:
            return None
        ta, tb, shape = shaped
        exact = props.get("exact", a.exact and b.exact)
        special = props.get("special", a.special or b.special)
        python = all(e.python or e.value is not None for e in (a, b))
        if python and (op in ("//", "%", ">>", "<<") or any(e.value is not None and not fits(e.value, dtypes.I32)
                                                              for e in (a, b))):
            return None  # Python's floor division and unbounded ints are not the kernel's
        return Expr(f"{paren(ta)} {op} {paren(tb)}", dtype or result_dtype(a, b), shape, exact, special,
                    python=python)

    def arith(self, pool: list[Expr]) -> Expr | None:
        a = self.rng.choice(pool)
        b = self.operand(pool, a)
        if not (a.numeric or b.numeric) or not self._literal_ok(a, b):
            return None
        op = self.rng.choice("+-*")
        overflow = a.dtype == dtypes.F16 or b.dtype == dtypes.F16 or op == "*"
        return self._binary(op, a, b, special=a.special or b.special or (overflow and result_dtype(a, b).is_float))

    def _literal_ok(self, a: Expr, b: Expr) -> bool:
        """A literal must convert to the promoted dtype (else both backends reject it: not a fuzz target)."""
        dtype = result_dtype(a, b)
        return all(e.value is None or fits(e.value, dtype) for e in (a, b))

    def divide(self, pool: list[Expr]) -> Expr | None:
        a = self.rng.choice(pool)
        b = self.operand(pool, a)
        if a.dtype.is_bool or b.dtype.is_bool or not self._literal_ok(a, b) or not same_signedness(a, b):
            return None
        x, y = (e.dtype if e.value is None else e.value for e in (a, b))
        quotient = division_dtype(x, y, result_dtype(a, b))
        dtype = dtypes.truediv_dtype(quotient, quotient)  # f16 and bf16 divide in f32, ints too
        return self._binary("/", a, b, dtype, special=True)

    def int_div(self, pool: list[Expr]) -> Expr | None:
        """``//`` and ``%`` with a divisor that is never zero: C's truncation, not Python's floor."""
        a = self.pick(pool, lambda e: e.is_int)
        if a is None:
            return None
        op = self.rng.choice(("//", "%"))
        b = self.pick(pool, lambda e: e.is_int and same_signedness(a, e))
        if b is None or self.rng.random() < 0.4:
            divisor = literal(self.rng.choice((3, 4, 7, -3, -4) if a.dtype.is_signed else (3, 4, 7)))
            return self._binary(op, a, divisor)
        safe = Expr(f"(({paren(b.text)} & 7) + 1)", b.dtype, b.shape)
        return self._binary(op, a, safe)

    def bitwise(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: (e.is_int or e.dtype.is_bool) and not e.python)
        if a is None:
            return None
        b = self.pick(pool, lambda e: e.dtype.is_bool == a.dtype.is_bool and not e.dtype.is_float)
        b = self.literal_for(a) if b is None or self.rng.random() < 0.3 else b
        if b.dtype.is_float or not self._literal_ok(a, b):
            return None
        return self._binary(self.rng.choice("&|^"), a, b)

    def shift(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.is_int and not e.python)
        if a is None:
            return None
        op = self.rng.choice(("<<", ">>"))
        b = self.pick(pool, lambda e: e.is_int)
        if b is None or self.rng.random() < 0.5:
            return self._binary(op, a, literal(self.rng.randrange(0, a.dtype.bits)))
        amount = Expr(f"({paren(b.text)} & 7)", b.dtype, b.shape)
        return self._binary(op, a, amount)

    def compare(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.safe)
        if a is None:
            return None
        b = self.operand(pool, a)
        if not b.safe or not self._literal_ok(a, b):
            return None
        return self._binary(self.rng.choice(("<", "<=", ">", ">=", "==", "!=")), a, b, dtypes.BOOL)

    # ---------------------------------------------------------------- other elementwise ops

    def unary(self, pool: list[Expr]) -> Expr | None:
        a = self.rng.choice(pool)
        kind = self.rng.choice(("neg", "abs", "invert", "pos"))
        if kind == "invert":
            return replace(a, text=f"~{paren(a.text)}", value=None) if a.is_int else None
        if a.dtype.is_bool:
            return None
        if kind == "neg" and a.shape != SCALAR and (a.dtype.is_signed or a.dtype.is_float) and self.rng.random() < 0.3:
            negative = "-2.5" if a.dtype.is_float else "-2"  # a negated negative constant
            return Expr(f"-tl.full({self._shape_text(a.shape)}, {negative}, {MARKERS[a.dtype]})", a.dtype, a.shape)
        text = {"neg": f"-{paren(a.text)}", "abs": f"tl.abs({a.text})", "pos": f"+{paren(a.text)}"}[kind]
        return replace(a, text=text, value=None) if a.value is None else None

    def where(self, pool: list[Expr]) -> Expr | None:
        cond = self.pick(pool, lambda e: e.dtype.is_bool and e.value is None)
        if cond is None:
            return None
        a = self.rng.choice(pool)
        b = self.operand(pool, a)
        first = broadcast(cond, a)
        if first is None or a.value is not None and b.value is not None or not self._literal_ok(a, b):
            return None
        ab = broadcast(a, b)
        if ab is None:
            return None
        shape = broadcast(Expr("c", cond.dtype, first[2]), Expr("x", a.dtype, ab[2]))
        if shape is None:
            return None
        tc = f"{paren(cond.text)}[:, None]" if cond.shape == ROWS and shape[2] == FULL else cond.text
        ta = f"{paren(a.text)}[:, None]" if a.shape == ROWS and shape[2] == FULL else a.text
        tb = f"{paren(b.text)}[:, None]" if b.shape == ROWS and shape[2] == FULL else b.text
        return Expr(f"tl.where({tc}, {ta}, {tb})", result_dtype(a, b), shape[2], a.exact and b.exact,
                    a.special or b.special)

    def minmax(self, pool: list[Expr]) -> Expr | None:
        fn = self.rng.choice(("tl.minimum", "tl.maximum"))
        if self.rng.random() < 0.1:  # two Python numbers: both backends must compute it
            x, y = self.rng.choice(FLOAT_LITERALS[:7]), self.rng.choice(FLOAT_LITERALS[:7] + (3, -2))
            lo, hi = literal(x), literal(y)
            return Expr(f"{fn}({lo.text}, {hi.text})", tensors_dtype(lo, hi), SCALAR)
        a = self.pick(pool, lambda e: e.ordered)
        if a is None:
            return None
        b = self.operand(pool, a)
        if not b.ordered or not self._literal_ok(a, b):
            return None
        shaped = broadcast(a, b)
        if shaped is None:
            return None
        dtype = tensors_dtype(*(replace(e, dtype=dtypes.F32) if e.dtype == dtypes.BF16 else e for e in (a, b)))
        return Expr(f"{fn}({shaped[0]}, {shaped[1]})", dtype, shaped[2], a.exact and b.exact)

    def math(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.dtype.is_float)
        if a is None:
            return None
        fn = self.rng.choice(("exp", "log", "sqrt", "sin", "cos", "floor", "ceil", "exp2", "rsqrt"))
        arg = {"log": f"tl.abs({a.text}) + 1.0", "sqrt": f"tl.abs({a.text})",
               "rsqrt": f"tl.abs({a.text}) + 0.5", "exp": f"tl.minimum({a.text}, 8.0)",
               "exp2": f"tl.minimum({a.text}, 8.0)",
               # a huge argument's last bits, which a sum's order decides, would decide the result
               "sin": f"tl.minimum(tl.maximum({a.text}, -100.0), 100.0)",
               "cos": f"tl.minimum(tl.maximum({a.text}, -100.0), 100.0)"}.get(fn, a.text)
        if fn in ("exp", "exp2") and not a.safe:
            arg = a.text
        exact = a.exact and fn in ("floor", "ceil")
        return Expr(f"tl.{fn}({arg})", a.dtype, a.shape, exact, a.special or fn in ("exp", "exp2"))

    def fma(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.dtype.is_float and e.value is None)
        if a is None:
            return None
        b, c = (self.pick(pool, lambda e: e.shape in (a.shape, SCALAR) and e.numeric) for _ in range(2))
        if b is None or c is None:
            return None
        return Expr(f"tl.fma({a.text}, {b.text}, {c.text})", tensors_dtype(a, b, c), a.shape, False, True)

    def cast(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.value is None)
        if a is None:
            return None
        target = self.rng.choice(DTYPES)
        spelled = f"tl.cast({a.text}, {MARKERS[target]})"
        if not a.python and self.rng.random() < 0.5:
            spelled = f"{paren(a.text)}.to({MARKERS[target]})"
        if a.dtype.is_float and not target.is_float:
            if not a.exact:
                return None
            if target.is_bool:
                return Expr(spelled, target, a.shape)
            lo = "0.0" if target.kind is dtypes.Kind.UINT else "-1000.0"
            clamped = f"tl.minimum(tl.maximum(tl.where({a.text} == {a.text}, {a.text}, 0.0), {lo}), 1000.0)"
            return Expr(f"tl.cast({clamped}, {MARKERS[target]})", target, a.shape)
        if target == dtypes.F16 and not a.dtype.is_bool:
            return Expr(spelled, target, a.shape, a.exact, True)  # may overflow to inf
        if a.dtype.is_float and target.is_float:
            return Expr(spelled, target, a.shape, a.exact, a.special)
        if not a.dtype.is_float and target.bits == a.dtype.bits and target.is_int and self.rng.random() < 0.3:
            spelled = f"tl.cast({a.text}, {MARKERS[target]}, bitcast=True)"
        return Expr(spelled, target, a.shape, a.exact, a.special)

    def full(self, pool: list[Expr]) -> Expr | None:
        dtype = self.rng.choice(DTYPES)
        shape = self.rng.choice((FULL, ROWS, COLS) if self.two_d else (FULL,))
        value = self.literal_for(Expr("", dtype, shape))
        if not fits(value.value if value.value is not None else 0, dtype) or dtype.is_bool != isinstance(
                value.value, bool):
            return None
        maker = self.rng.choice(("full", "zeros"))
        if maker == "zeros":
            return Expr(f"tl.zeros({self._shape_text(shape)}, {MARKERS[dtype]})", dtype, shape)
        return Expr(f"tl.full({self._shape_text(shape)}, {value.text}, {MARKERS[dtype]})", dtype, shape)

    def _shape_text(self, shape: str) -> str:
        return {FULL: "(R, C)" if self.two_d else "(B,)", ROWS: "(R,)", COLS: "(C,)", SCALAR: "()"}[shape]

    # ---------------------------------------------------------------- reductions

    def reduce(self, pool: list[Expr]) -> Expr | None:
        a = self.pick(pool, lambda e: e.shape != SCALAR)
        if a is None:
            return None
        fn = self.rng.choice(("sum", "max", "min", "argmax", "argmin"))
        if fn.startswith("arg") and not (a.safe and a.numeric) or fn in ("max", "min") and not a.ordered:
            return None
        if a.shape == FULL and self.two_d and self.rng.random() < 0.7:
            axis = self.rng.choice((0, 1, -1))
            shape = COLS if axis == 0 else ROWS
            call = f"tl.{fn}({a.text}, axis={axis})"
        else:
            shape = SCALAR
            call = f"tl.{fn}({a.text}, axis=0)" if fn.startswith("arg") or a.shape != FULL or not self.two_d \
                else f"tl.{fn}({a.text})"
            if fn.startswith("arg") and a.shape == FULL and self.two_d:
                return None
        if fn.startswith("arg"):
            return Expr(call, dtypes.I32, shape)
        dtype = sum_dtype(a.dtype) if fn == "sum" else max_dtype(a.dtype, False)  # Triton 3.6's widenings
        exact = a.exact and (fn != "sum" or not a.dtype.is_float)
        return Expr(call, dtype, shape, exact, a.special or fn == "sum" and a.dtype == dtypes.F16)
