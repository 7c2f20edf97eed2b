"""Kernels around ``tl.dot``: two operand blocks loaded (row- or column-major, through
``tl.trans``, masked on rows, columns or a ragged K; or through a tensor descriptor or a block
pointer, whose bounds do the masking: bulk tensor copies on sm_90), sometimes computed first, multiplied once
or accumulated over a ``for`` loop on K (which the compiler pipelines with cp.async), sometimes
chained into a second dot, then a random epilogue from :mod:`tests.fuzz.exprs` on the result
(the ``R`` x ``C`` block of :class:`Generator`: elementwise math, casts, row and column
reductions and their broadcasts, bias rows and columns, ``tl.where``), and stores.

Shapes are those tensor cores take (mma.sync on sm_80, wgmma on sm_90a) and a few they do not
(M = 8, N = 4, ``input_precision="ieee"``, fp8 on sm_80). Operands hold either random normal
data, compared within a share of the output's scale, or :attr:`Data.GRID` values whose products
sum exactly in f32 in any order, so that the result, and what the epilogue computes from it,
must match bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tile_lang import dtypes
from tile_lang.dtypes import DType

from tile_lang.semantics.linalg import min_k

from tests.fuzz.case import Buffer, Case, Data
from tests.fuzz.exprs import FULL, MARKERS, SCALAR, Expr
from tests.fuzz.generator import Generator, Scope

DOT_EVERY = 4  # seeds 3, 7, 11, ... are dot kernels
_OPERANDS = (dtypes.F16, dtypes.F16, dtypes.F16, dtypes.BF16, dtypes.BF16, dtypes.F32, dtypes.F32, dtypes.F8E4M3,
             dtypes.F8E5M2, dtypes.I8)
_SIGNIFICAND = {dtypes.F32: 24, dtypes.F16: 11, dtypes.BF16: 8}  # a sum needing more bits is rounded, order matters
# (template, factor on the magnitude bound, change of the power of two the values are multiples of)
_FLOAT_OPS = (("-{x}", 1.0, 0), ("tl.abs({x})", 1.0, 0), ("{x} * 2.0", 2.0, 1), ("{x} * 0.5", 0.5, -1),
              ("tl.maximum({x}, 0.0).to({x}.dtype)", 1.0, 0), ("tl.where({x} > 0, {x}, {x} * 0.5)", 1.0, -1))
_INT_OPS = ("{x} >> 1", "tl.where({x} > 0, {x}, 0)", "tl.maximum({x}, -3).to({x}.dtype)")  # the -3 is an i32 tensor
_INVALID = ("tl.dot(tl.zeros((R, 8), tl.f16), tl.zeros((8, C), tl.f16))",  # K below 16
            "tl.dot(tl.zeros((R, K), tl.f16), tl.zeros((K, C), tl.bf16))",
            "tl.dot(tl.zeros((R, K), tl.f16), tl.zeros((K, C), tl.f16), tl.zeros((R, C), tl.f16))",
            "tl.dot(tl.zeros((R, K), tl.f16), tl.zeros((2 * K, C), tl.f16))",
            "tl.dot(tl.zeros((R, K), tl.i32), tl.zeros((K, C), tl.i32))",
            'tl.dot(tl.zeros((R, K), tl.f32), tl.zeros((K, C), tl.f32), input_precision="tf16")',
            "tl.dot(tl.zeros((R, K), tl.f16), tl.zeros((K, C), tl.f16), out_dtype=tl.i32)",
            "tl.dot(tl.zeros((R, 32), tl.f8e4m3), tl.zeros((32, C), tl.f16))")


def is_dot(seed: int) -> bool:
    return seed % DOT_EVERY == DOT_EVERY - 1


@dataclass(frozen=True)
class Operand:
    """An operand's source text; for grid data, a bound on its magnitude and the power of two
    its values are multiples of (``step`` None: arbitrary values)."""

    text: str
    bound: float
    step: int | None


class DotGenerator(Generator):
    """A kernel whose values start from one or two dots (see the module docstring)."""

    def _layout(self) -> tuple[bool, int, int, int]:
        rng = self.rng
        self.arch = rng.choice((80, 90))
        self.warps = rng.choice((4, 8))
        self.dtype: DType = rng.choice(_OPERANDS)
        self.grid_data = rng.random() < 0.6
        if self.arch == 90:  # mostly shapes wgmma takes: 16 rows a warp, K a multiple of a 128-byte panel
            rows = rng.choice((64, 128, 128, 32, 16))
            ks = (128, 128, 64) if self.dtype.is_fp8 else (64, 64, 32, 16)
        else:
            rows = rng.choice((16, 32, 64, 64, 128, 128, 8))
            ks = (16, 32, 64, 64)
        self.k = rng.choice([k for k in ks if k >= min_k(self.dtype)])
        cols = rng.choice((8, 16, 32, 64, 64, 4))
        # a quarter of the sm_90 kernels in the shapes of bulk tensor copies into wgmma's panels,
        # their operands mostly through descriptors and block pointers
        self.boxes = self.arch == 90 and self.dtype != dtypes.F32 and not self.dtype.is_int and rng.random() < 0.25
        if self.boxes:
            panel = 128 // self.dtype.itemsize
            rows, cols = 16 * self.warps * rng.choice((1, 1, 2)), rng.choice((64, 64, 128))
            self.k = rng.choice((panel, panel, 2 * panel))
        return True, rng.choice((1, 2)), rows, cols

    def _options(self) -> tuple[int, int, int]:
        return self.warps, self.rng.choice((2, 3, 4) if self.boxes else (1, 2, 3, 3, 4)), self.arch

    def _layout_of(self, plain: tuple[str, ...], boxes: tuple[str, ...]) -> str:
        """An operand's layout; box kernels read through descriptors and block pointers mostly."""
        return self.rng.choice(boxes * 3 + plain if self.boxes else plain + boxes)

    def generate(self) -> Case:
        rng = self.rng
        scope = Scope([Expr("pid", dtypes.I32, SCALAR), Expr("f", dtypes.F32, SCALAR), Expr("mask", dtypes.BOOL, FULL)])
        self._preamble()
        self.emit(0, "ks = tl.arange(0, K)")
        self.consts.append(("K", self.k))
        invalid = rng.random() < 0.08
        if invalid:
            self.emit(0, f"bad = {rng.choice(_INVALID)}")
        first = len(scope.pool)
        result = self._dot()
        scope.pool += [result] * 2  # twice: the epilogue mostly works on it
        if self.cols >= 16 and not self.dtype.is_int and rng.random() < 0.25:
            scope.pool.append(self._chained(result))
        for _ in range(rng.randint(0, 2)):
            scope.pool.append(self._load())
        self.block(scope, depth=0, count=rng.randint(2, 8))
        self.store(result, 0)
        later = scope.pool[first + 2:]
        for e in rng.sample(later, min(2, len(later))):
            self.store(e, 0)
        return self._case(invalid)

    # ---------------------------------------------------------------- the product

    def _dot(self) -> Expr:
        """``tl.dot`` once, or accumulated over a loop on K; its result as a pool value."""
        rng = self.rng
        loop = rng.random() < (0.9 if self.boxes else 0.55)
        iters = rng.randint(1, 3) if loop else 1
        kt = self.k * iters
        kx = "(k0 + ks)" if loop else "ks"
        ragged = rng.random() < 0.2
        if ragged:  # the last K block is partly masked: the loads' zeros must not count
            self.ints.append(("kn", rng.randint(kt - self.k + 1, kt)))
        out, kwargs = self._result_dtype()
        name = self.fresh("d")
        start = self._start(out)
        exact_start = start is None or start.step is not None
        depth = int(loop)
        if loop:
            self.emit(0, f"{name} = {start.text if start else f'tl.zeros((R, C), {MARKERS[out]})'}")
            bound = self._stride("kt", kt)
            self.emit(0, f"for k0 in range(0, {bound}, K):" if rng.random() < 0.8 else
                      f"for k0 in range({bound} - K, -1, -K):")  # K blocks in either order
        a = self._computed(self._operand_a(kt, kx, ragged), depth)
        b = self._computed(self._operand_b(kt, kx, ragged), depth)
        if not loop:
            third = "" if start is None else f", {start.text}"
            self.emit(0, f"{name} = tl.dot({a.text}, {b.text}{third}{kwargs})")
            return Expr(name, out, FULL, self._exact(a, b, kt, start, 0, out) and exact_start)
        forms = ["{d} = tl.dot({a}, {b}, {d}{kw})", "{d} += tl.dot({a}, {b}{kw})", "{d} = {d} + tl.dot({a}, {b}{kw})",
                 "{d} = tl.dot({a}, {b}{kw}) + {d}"]
        form = rng.choice(forms + ["{d} = {d} * 0.5 + tl.dot({a}, {b}{kw})"] * (not self.dtype.is_int))
        self.emit(1, form.format(d=name, a=a.text, b=b.text, kw=kwargs))
        halved = iters if "0.5" in form else 0  # each halving needs one more bit below the point
        return Expr(name, out, FULL, self._exact(a, b, kt, start, halved, out) and exact_start)

    def _exact(self, a: Operand, b: Operand, kt: int, start: Operand | None, halved: int, out: DType) -> bool:
        """Whether every partial sum is a value of the result's dtype (a 16-bit accumulator rounds
        after each dot of a loop), so the order of the sum cannot matter."""
        if self.dtype.is_int:
            return True
        if a.step is None or b.step is None:
            return False
        bound = kt * a.bound * b.bound + (start.bound if start else 0.0)
        step = min(a.step + b.step, start.step if start and start.step is not None else 0) - halved
        return math.ceil(math.log2(bound)) - step <= _SIGNIFICAND[out]

    def _result_dtype(self) -> tuple[DType, str]:
        """The result's dtype and the keyword arguments that choose it (and the precision)."""
        rng = self.rng
        if self.dtype.is_int:
            return dtypes.I32, ""
        kwargs = ""
        if self.dtype == dtypes.F32:
            kwargs = rng.choice(("", "", ', input_precision="tf32"', ', input_precision="ieee"',
                                 ', input_precision="tf32x3"', ", allow_tf32=False"))
        elif rng.random() < 0.1:
            kwargs = ', input_precision="ieee"'  # checked, but only f32 operands heed it
        out = rng.choice((dtypes.F32,) * 6 + (dtypes.F16, dtypes.BF16))  # f16 and bf16 results: CUDA cores
        if out != dtypes.F32 and (self.precision == dtypes.F32 or out == dtypes.BF16):
            self.precision = out  # what is computed from it is only that precise
        if out != dtypes.F32 or rng.random() < 0.15:
            kwargs += f", out_dtype={MARKERS[out]}"
        return out, kwargs

    def _start(self, out: DType) -> Operand | None:
        """What the dot accumulates onto: nothing (zeros), or a loaded block of the result's dtype."""
        if self.rng.random() < 0.6:
            return None
        buf = self._buffer(out, self.grid * self.size)
        return Operand(f"tl.load({buf.name} + offs)", 2.0, -2 if buf.data is Data.GRID else None)

    def _chained(self, first: Expr) -> Expr:
        """A second dot taking the first's result, rounded to f16, as its A operand (as attention
        does): ``[R, C] @ [C, C]``, on normal or grid data alike compared within tolerance."""
        rng = self.rng
        p = rng.choice((f"{first.text}.to(tl.f16)", f"tl.exp({first.text} - tl.max({first.text}, 1)[:, None]).to(tl.f16)",
                        f"tl.where(mask, {first.text}, 0.0).to(tl.f16)", f"tl.trans({first.text}.to(tl.f16))"
                        if self.rows == self.cols else f"({first.text} * 0.125).to(tl.f16)"))
        v = self._buffer(dtypes.F16, self.cols * self.cols)
        name = self.fresh("d")
        self.emit(0, f"{name} = tl.dot({p}, tl.load({v.name} + cols[:, None] * C + cols[None, :]))")
        return Expr(name, dtypes.F32, FULL, False)

    # ---------------------------------------------------------------- operands

    def _buffer(self, dtype: DType, size: int) -> Buffer:
        buf = Buffer(f"x{len(self.inputs)}", dtype, size, Data.GRID if self.grid_data else Data.NORMAL)
        self.inputs.append(buf)
        return buf

    def _stride(self, name: str, value: int) -> str:
        """A runtime int parameter (the compiler specialises on it dividing by 16) or a literal."""
        if self.rng.random() < 0.7:
            self.ints.append((name, value))
            return name
        return str(value)

    def _operand_a(self, kt: int, kx: str, ragged: bool) -> Operand:
        """``[R, K]`` rows ``rows`` of A, stored ``[grid * R, kt]`` or column-major ``[kt, grid * R]``."""
        rng = self.rng
        buf = self._buffer(self.dtype, self.grid * self.rows * kt)
        layout = self._layout_of(("row", "row", "column", "trans"), ("desc", "block"))
        stride = self._stride("sa", kt if layout in ("row", "desc", "block") else self.grid * self.rows)
        row_mask = rng.random() < 0.3
        if layout in ("desc", "block"):  # the tensor's bounds mask it
            dims = ("n" if row_mask else str(self.grid * self.rows), "kn" if ragged else str(kt))
            text = self._box_text(layout, buf, dims, stride, ("pid * R", "0" if kx == "ks" else "k0"),
                                  ("R", "K"))
        elif layout == "trans":  # a [K, R] block, transposed
            masks = ["rows[None, :] < n"] * row_mask + [f"{kx}[:, None] < kn"] * ragged
            text = f"tl.trans({self._load_text(buf, f'{kx}[:, None] * {stride} + rows[None, :]', masks)})"
        else:
            offsets = f"rows[:, None] * {stride} + {kx}[None, :]" if layout == "row" else \
                f"rows[:, None] + {kx}[None, :] * {stride}"
            masks = ["rows[:, None] < n"] * row_mask + [f"{kx}[None, :] < kn"] * ragged
            text = self._load_text(buf, offsets, masks)
        return Operand(text, 2.0, -2 if self.grid_data else None)

    def _operand_b(self, kt: int, kx: str, ragged: bool) -> Operand:
        """``[K, C]`` of B, stored ``[kt, C]`` or K-major ``[C, kt]``."""
        rng = self.rng
        buf = self._buffer(self.dtype, kt * self.cols)
        layout = self._layout_of(("row", "row", "k-major", "trans"), ("desc", "block", "desc.T"))
        stride = self._stride("sb", self.cols if layout in ("row", "desc", "block") else kt)
        col_mask = rng.random() < 0.3
        k0 = "0" if kx == "ks" else "k0"
        cols = "m" if col_mask else "C"
        k_dim = "kn" if ragged else str(kt)
        if layout in ("desc", "block"):  # the tensor's bounds mask it
            text = self._box_text(layout, buf, (k_dim, cols), stride, (k0, "0"), ("K", "C"))
        elif layout == "desc.T":  # a [C, K] box, transposed: Triton's ``k_desc.load(...).T``
            text = f"{self._box_text('desc', buf, (cols, k_dim), stride, ('0', k0), ('C', 'K'))}.T"
        elif layout == "trans":  # a [C, K] block, transposed
            masks = ["cols[:, None] < m"] * col_mask + [f"{kx}[None, :] < kn"] * ragged
            text = f"tl.trans({self._load_text(buf, f'cols[:, None] * {stride} + {kx}[None, :]', masks)})"
        else:
            offsets = f"{kx}[:, None] * {stride} + cols[None, :]" if layout == "row" else \
                f"{kx}[:, None] + cols[None, :] * {stride}"
            masks = ["cols[None, :] < m"] * col_mask + [f"{kx}[:, None] < kn"] * ragged
            text = self._load_text(buf, offsets, masks)
        return Operand(text, 2.0, -2 if self.grid_data else None)

    def _box_text(self, how: str, buf: Buffer, dims: tuple[str, str], stride: str, at: tuple[str, str],
                  block: tuple[str, str]) -> str:
        """A 2-D box of ``buf`` (shape ``dims``, row stride ``stride``) at ``at``: a descriptor's
        load or a block pointer's load checked on both dims, zeros outside."""
        if how == "desc":
            return (f"tl.make_tensor_descriptor({buf.name}, [{dims[0]}, {dims[1]}], [{stride}, 1], "
                    f"[{block[0]}, {block[1]}]).load([{at[0]}, {at[1]}])")
        return (f"tl.load(tl.make_block_ptr({buf.name}, ({dims[0]}, {dims[1]}), ({stride}, 1), ({at[0]}, {at[1]}), "
                f"({block[0]}, {block[1]}), (1, 0)), boundary_check=(0, 1), padding_option=\"zero\")")

    def _load_text(self, buf: Buffer, offsets: str, masks: list[str]) -> str:
        if not masks:
            return f"tl.load({buf.name} + {offsets})"
        mask = " & ".join(f"({m})" for m in masks) if len(masks) > 1 else masks[0]
        return f"tl.load({buf.name} + {offsets}, mask={mask}, other={0 if self.dtype.is_int else 0.0})"

    def _computed(self, x: Operand, depth: int) -> Operand:
        """The operand bound to a name, sometimes through an elementwise op first (fp8 through
        f32 and back, a rounding both backends must do alike)."""
        rng = self.rng
        name = self.fresh("a")
        self.emit(depth, f"{name} = {x.text}")
        if rng.random() < 0.65:
            return Operand(name, x.bound, x.step)
        computed = self.fresh("a")
        if self.dtype.is_int:
            self.emit(depth, f"{computed} = {rng.choice(_INT_OPS).format(x=name)}")
            return Operand(computed, x.bound, x.step)
        template, factor, shift = rng.choice(_FLOAT_OPS)
        if self.dtype.is_fp8:
            self.emit(depth, f"{computed} = {name}.to(tl.f32)")
            text = f"({template.format(x=computed)}).to({MARKERS[self.dtype]})"
        else:
            text = template.format(x=name)
        self.emit(depth, f"{computed} = {text}")
        return Operand(computed, x.bound * factor, None if x.step is None else x.step + shift)
