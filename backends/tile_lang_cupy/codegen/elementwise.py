"""Elementwise ops and views: the expression of one element, and filling register arrays."""

from __future__ import annotations

from tile_lang.compiler.ir import (
    BinaryAttr, BinaryFn, CastAttr, ConstAttr, LibAttr, LibFn, MmaRows, Node, Op, ParamAttr, PermuteAttr, RandAttr,
    RandFn, RangeAttr, UnaryAttr, UnaryFn,
)
from tile_lang.dtypes import DType, Kind
from tile_lang.ops.conversions import CONVERSIONS, Conversion

from tile_lang_cupy.codegen.ctypes_ import compute_dtype, ctype, literal
from tile_lang_cupy.codegen.emitter import ELEMENTS, SCALAR, Emitter, Index, coords_of, element, emits, flat_of

_INFIX = {BinaryFn.ADD: "+", BinaryFn.SUB: "-", BinaryFn.MUL: "*", BinaryFn.DIV: "/", BinaryFn.MOD: "%",
          BinaryFn.AND: "&", BinaryFn.OR: "|", BinaryFn.XOR: "^", BinaryFn.SHL: "<<", BinaryFn.SHR: ">>",
          BinaryFn.LT: "<", BinaryFn.LE: "<=", BinaryFn.GT: ">", BinaryFn.GE: ">=", BinaryFn.EQ: "==",
          BinaryFn.NE: "!="}
_CALLS = {BinaryFn.MAX: "tl::max", BinaryFn.MIN: "tl::min", BinaryFn.MAX_NAN: "tl::max_nan",
          BinaryFn.MIN_NAN: "tl::min_nan", BinaryFn.UMULHI: "tl::umulhi"}
# integer operators whose C++ spelling is undefined for some operands (a shift by the width or
# more, INT_MIN / -1): tl.cuh helpers that compute what the GPU does
_INT_CALLS = {BinaryFn.SHL: "tl::shl", BinaryFn.SHR: "tl::shr"}
_SIGNED_CALLS = {BinaryFn.DIV: "tl::div", BinaryFn.MOD: "tl::mod"}
# a float function's C name where it is not the IR function's own (``UnaryFn.TANH``: tanh, tanhf)
_FLOAT_FNS = {UnaryFn.ABS: "fabs"}



def _c(name: str, arity: int = 1) -> tuple[str, str]:
    """A C math function's f32 and f64 spellings (``name``f and ``name``) on ``arity`` operands."""
    args = ", ".join(f"{{{i}}}" for i in range(arity))
    return f"{name}f({args})", f"{name}({args})"


def _both(text: str) -> tuple[str, str]:
    """One spelling for either width (an f32-only function, or an overloaded helper)."""
    return text, text


def _classify(f32: str, f64: str) -> tuple[str, str]:
    """A test of the magnitude's bits (``{m} > inf`` is NaN...), so neither side of the host and
    device overloads of ``isnan`` and friends is asked to pick one."""
    return (f"((__float_as_uint({{0}}) & 0x7fffffffu) {f32} 0x7f800000u)",
            f"(((unsigned long long)__double_as_longlong({{0}}) & 0x7fffffffffffffffull) {f64} 0x7ff0000000000000ull)")


def _rounded(name: str, arity: int, mode: str) -> tuple[str, str]:
    """A rounding intrinsic's f32 and f64 spellings (``__fmaf_rn`` and ``__fma_rn``)."""
    args = ", ".join(f"{{{i}}}" for i in range(arity))
    return f"__{name}f_{mode}({args})", f"__{name}_{mode}({args})"


def _converted(name: str, conversion: Conversion) -> str:
    """A conversion's intrinsic (``__float2uint_rn``); an unsigned result read as Triton's signed one."""
    cast = f"({ctype(conversion.result)})" if conversion.unsigned and conversion.result.is_int else ""
    return f"{cast}__{name}({{0}})"


# The LIBDEVICE family: each function's CUDA for 32-bit and for 64-bit operands, ``{i}`` its operand i.
_LIBDEVICE: dict[LibFn, tuple[str, str]] = {
    LibFn.POW: _c("pow", 2), LibFn.LDEXP: _c("ldexp", 2), LibFn.NORM3D: _c("norm3d", 3),
    LibFn.ISINF: _classify("==", "=="), LibFn.ISNAN: _classify(">", ">"), LibFn.ISFINITE: _classify("<", "<"),
    LibFn.SIGNBIT: ("(int)(__float_as_uint({0}) >> 31)", "(int)((unsigned long long)__double_as_longlong({0}) >> 63)"),
    LibFn.ILOGB: _c("ilogb"), LibFn.SATURATEF: _both("__saturatef({0})"), LibFn.FAST_EXPF: _both("__expf({0})"),
    LibFn.FAST_LOGF: _both("__logf({0})"), LibFn.FAST_DIVIDEF: _both("__fdividef({0}, {1})"),
    LibFn.FLOAT2INT_RN: _both("__float2int_rn({0})"),
    LibFn.POPC: ("__popc((unsigned)({0}))", "__popcll((unsigned long long)({0}))"),
    LibFn.CLZ: ("__clz({0})", "__clzll({0})"), LibFn.FFS: ("__ffs({0})", "__ffsll({0})"),
    LibFn.BREV: ("(int)__brev((unsigned)({0}))", "(long long)__brevll((unsigned long long)({0}))"),
    LibFn.MULHI: _both("tl::mulhi({0}, {1})"),
    LibFn.BYTE_PERM: _both("(int)__byte_perm((unsigned)({0}), (unsigned)({1}), (unsigned)({2}))"),
    LibFn.CBRT: _c("cbrt"), LibFn.RCBRT: _c("rcbrt"), LibFn.EXP10: _c("exp10"), LibFn.LGAMMA: _c("lgamma"),
    LibFn.TGAMMA: _c("tgamma"), LibFn.ERFINV: _c("erfinv"), LibFn.ERFCINV: _c("erfcinv"), LibFn.J0: _c("j0"),
    LibFn.J1: _c("j1"), LibFn.Y0: _c("y0"), LibFn.Y1: _c("y1"), LibFn.LOGB: _c("logb"),
    LibFn.NEARBYINT: _c("nearbyint"), LibFn.ROUND: _c("round"), LibFn.COSPI: _c("cospi"), LibFn.SINPI: _c("sinpi"),
    LibFn.RCP_RN: ("__frcp_rn({0})", "__drcp_rn({0})"), LibFn.RCP_RD: ("__frcp_rd({0})", "__drcp_rd({0})"),
    LibFn.RCP_RU: ("__frcp_ru({0})", "__drcp_ru({0})"), LibFn.RCP_RZ: ("__frcp_rz({0})", "__drcp_rz({0})"),
    LibFn.SCALBN: _c("scalbn", 2), LibFn.FINITEF: _both("(int)" + _classify("<", "<")[0]),
    LibFn.ISFINITED: _both("(int)" + _classify("<", "<")[1]), LibFn.RNORM3D: _c("rnorm3d", 3),
    LibFn.NORM4D: _c("norm4d", 4), LibFn.RNORM4D: _c("rnorm4d", 4), LibFn.FAST_SINF: _both("__sinf({0})"),
    LibFn.FAST_COSF: _both("__cosf({0})"), LibFn.FAST_TANF: _both("__tanf({0})"),
    LibFn.FAST_LOG2F: _both("__log2f({0})"), LibFn.FAST_LOG10F: _both("__log10f({0})"),
    LibFn.FAST_EXP10F: _both("__exp10f({0})"), LibFn.FAST_POWF: _both("__powf({0}, {1})"),
    LibFn.INT_AS_FLOAT: _both("__int_as_float({0})"), LibFn.FLOAT_AS_INT: _both("__float_as_int({0})"),
    LibFn.UINT_AS_FLOAT: _both("__uint_as_float({0})"), LibFn.FLOAT_AS_UINT: _both("(int)__float_as_uint({0})"),
    LibFn.LONGLONG_AS_DOUBLE: _both("__longlong_as_double({0})"),
    LibFn.DOUBLE_AS_LONGLONG: _both("__double_as_longlong({0})"), LibFn.SQRT_RD: ("__fsqrt_rd({0})", "__dsqrt_rd({0})"),
    LibFn.SQRT_RU: ("__fsqrt_ru({0})", "__dsqrt_ru({0})"), LibFn.SQRT_RZ: ("__fsqrt_rz({0})", "__dsqrt_rz({0})"),
    LibFn.ATAN2: _c("atan2", 2), LibFn.HYPOT: _c("hypot", 2), LibFn.FMOD: _c("fmod", 2),
    LibFn.REMAINDER: _c("remainder", 2), LibFn.COPYSIGN: _c("copysign", 2), LibFn.NEXTAFTER: _c("nextafter", 2),
    LibFn.FDIM: _c("fdim", 2), LibFn.FMAX: _both("tl::max({0}, {1})"), LibFn.FMIN: _both("tl::min({0}, {1})"),
    LibFn.RHYPOT: _c("rhypot", 2), LibFn.DIV_RD: ("__fdiv_rd({0}, {1})", "__ddiv_rd({0}, {1})"),
    LibFn.DIV_RU: ("__fdiv_ru({0}, {1})", "__ddiv_ru({0}, {1})"),
    LibFn.DIV_RZ: ("__fdiv_rz({0}, {1})", "__ddiv_rz({0}, {1})"),
    LibFn.ADD_RN: ("__fadd_rn({0}, {1})", "__dadd_rn({0}, {1})"),
    LibFn.ADD_RZ: ("__fadd_rz({0}, {1})", "__dadd_rz({0}, {1})"),
    LibFn.ADD_RD: ("__fadd_rd({0}, {1})", "__dadd_rd({0}, {1})"),
    LibFn.ADD_RU: ("__fadd_ru({0}, {1})", "__dadd_ru({0}, {1})"),
    LibFn.SUB_RN: ("__fsub_rn({0}, {1})", "__dsub_rn({0}, {1})"),
    LibFn.SUB_RZ: ("__fsub_rz({0}, {1})", "__dsub_rz({0}, {1})"),
    LibFn.SUB_RD: ("__fsub_rd({0}, {1})", "__dsub_rd({0}, {1})"),
    LibFn.SUB_RU: ("__fsub_ru({0}, {1})", "__dsub_ru({0}, {1})"),
    LibFn.MUL_RN: ("__fmul_rn({0}, {1})", "__dmul_rn({0}, {1})"),
    LibFn.MUL_RZ: ("__fmul_rz({0}, {1})", "__dmul_rz({0}, {1})"),
    LibFn.MUL_RD: ("__fmul_rd({0}, {1})", "__dmul_rd({0}, {1})"),
    LibFn.MUL_RU: ("__fmul_ru({0}, {1})", "__dmul_ru({0}, {1})"),
    LibFn.FMA_RN: _rounded("fma", 3, "rn"), LibFn.FMA_RZ: _rounded("fma", 3, "rz"),
    LibFn.FMA_RD: _rounded("fma", 3, "rd"), LibFn.FMA_RU: _rounded("fma", 3, "ru"),
    LibFn.RSQRT_RN: _both("__frsqrt_rn({0})"), LibFn.RCP64H: _both("__nv_rcp64h({0})"),
    LibFn.HILOINT2DOUBLE: _both("__hiloint2double({0}, {1})"), LibFn.DOUBLE2LOINT: _both("__double2loint({0})"),
    LibFn.DOUBLE2HIINT: _both("__double2hiint({0})"), LibFn.MUL24: ("__mul24({0}, {1})", "__umul24({0}, {1})"),
    LibFn.SAD: ("(int)__sad({0}, {1}, {2})", "__usad({0}, {1}, {2})"), LibFn.HADD: ("__hadd({0}, {1})", "__uhadd({0}, {1})"),
    LibFn.RHADD: ("__rhadd({0}, {1})", "__urhadd({0}, {1})"), LibFn.LLRINT: _c("llrint"), LibFn.LLROUND: _c("llround"),
    LibFn.JN: _c("jn", 2), LibFn.YN: _c("yn", 2), LibFn.CYL_BESSEL_I0: _c("cyl_bessel_i0"),
    LibFn.CYL_BESSEL_I1: _c("cyl_bessel_i1"), LibFn.ERFCX: _c("erfcx"), LibFn.NORMCDF: _c("normcdf"),
    LibFn.NORMCDFINV: _c("normcdfinv"),
    **{LibFn(fn.__name__): _both(_converted(fn.__name__, conversion)) for fn, conversion in CONVERSIONS.items()},
}
_BY_SIGN = frozenset({LibFn.MUL24, LibFn.SAD, LibFn.HADD, LibFn.RHADD})  # the second spelling: u32 operands
_BY_OPERAND = {LibFn.JN: 1, LibFn.YN: 1}  # the operand whose width picks the spelling (the first for the others)
# pow of an i32 exponent (libdevice's powi): the exponent exactly, as a double (an f32 would round
# exponents past 2**24, and their parity)
_POWI = ("(float)pow((double){0}, (double){1})", "pow({0}, (double){1})")

def _to(dtype: DType, text: str, source: DType) -> str:
    """``text`` (of dtype ``source``) converted to ``dtype`` when they differ."""
    return text if dtype == source else f"tl::cvt<{ctype(dtype)}>({text})"


# ---------------------------------------------------------------- statements


@emits(Op.CONST)
def _const(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, ConstAttr)
    em.names[node] = literal(node.attr.value, node.ty.dtype)


@emits(Op.PROGRAM_ID, Op.NUM_PROGRAMS, Op.BINARY, Op.UNARY, Op.CAST, Op.WHERE, Op.HINT, Op.FMA, Op.LIBDEVICE, Op.SPLAT,
       Op.ARANGE, Op.BROADCAST, Op.RESHAPE, Op.PERMUTE, Op.RAND)
def _elementwise(em: Emitter, node: Node) -> None:
    """Scalars become one ``const`` variable; register blocks are filled element by element."""
    em.define(node, lambda idx: ELEMENTS[node.op](em, node, idx))


# ---------------------------------------------------------------- element expressions


@element(Op.PROGRAM_ID)
def _program_id(em: Emitter, node: Node, idx: Index) -> str:
    return f"(int)blockIdx.{'xyz'[getattr(node.attr, 'axis')]}"


@element(Op.NUM_PROGRAMS)
def _num_programs(em: Emitter, node: Node, idx: Index) -> str:
    return f"(int)gridDim.{'xyz'[getattr(node.attr, 'axis')]}"


@element(Op.ARANGE)
def _arange(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, RangeAttr)
    start = node.attr.start
    return f"(int)({idx.coords[0]})" if start == 0 else f"((int)({idx.coords[0]}) + {start})"


@element(Op.SPLAT)
def _splat(em: Emitter, node: Node, idx: Index) -> str:
    return em.elem(node.args[0], SCALAR)


@element(Op.BROADCAST)
def _broadcast(em: Emitter, node: Node, idx: Index) -> str:
    src = node.args[0]
    coords = tuple("0u" if s == 1 else c for s, c in zip(src.ty.shape, idx.coords))
    if isinstance(src.layout, MmaRows):  # a row value broadcast over the fragments of its rows
        return em.elem(src, Index(idx.k, coords, layout=idx.layout))
    return em.elem(src, Index(idx.k if src.ty.numel == node.ty.numel else None, coords))


@element(Op.RESHAPE)
def _reshape(em: Emitter, node: Node, idx: Index) -> str:
    src = node.args[0]
    if [s for s in src.ty.shape if s != 1] == [s for s in node.ty.shape if s != 1]:
        real = iter(c for c, s in zip(idx.coords, node.ty.shape) if s != 1)
        coords = tuple("0u" if s == 1 else next(real) for s in src.ty.shape)
    else:
        coords = coords_of(f"({flat_of(idx.coords, node.ty.shape)})", src.ty.shape)
    return em.elem(src, Index(idx.k, coords, layout=idx.layout))


@element(Op.PERMUTE)
def _permute(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, PermuteAttr)
    coords = ["0u"] * len(idx.coords)
    for out_dim, src_dim in enumerate(node.attr.dims):
        coords[src_dim] = idx.coords[out_dim]
    return em.elem(node.args[0], Index(None, tuple(coords)))


@element(Op.BINARY)
def _binary(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, BinaryAttr)
    fn = node.attr.fn
    a, b = node.args
    x, y = em.elem(a, idx), em.elem(b, idx)
    if node.ty.dtype.is_pointer:
        return f"({x} + {y})"
    src = a.ty.dtype
    work = compute_dtype(src)
    x, y = _to(work, x, src), _to(work, y, src)
    if fn is BinaryFn.MOD and work.is_float:
        text = f"fmod{'f' if work.bits == 32 else ''}({x}, {y})"
    elif fn is BinaryFn.DIV and work.is_float and work.bits == 32:
        text = f"tl::div_full({x}, {y})"  # Triton's f32 `/`: div.full, 2 ulp (tl.math.div_rn rounds exactly)
    elif fn is BinaryFn.DIV_RN:
        text = f"__{'f' if work.bits == 32 else 'd'}div_rn({x}, {y})"
    elif fn in _CALLS:
        text = f"{_CALLS[fn]}({x}, {y})"
    elif fn in _INT_CALLS or work.is_signed and fn in _SIGNED_CALLS:
        text = f"{_INT_CALLS.get(fn) or _SIGNED_CALLS[fn]}<{ctype(work)}>({x}, {y})"
    else:
        text = f"({x} {_INFIX[fn]} {y})"
    out = node.ty.dtype
    if fn.is_comparison:
        return text
    if out.is_int and out.bits < 32 or out.is_bool:
        return f"({ctype(out)}){text}"
    return _to(out, text, work)


@element(Op.UNARY)
def _unary(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, UnaryAttr)
    fn, dtype = node.attr.fn, node.ty.dtype
    x = em.elem(node.args[0], idx)
    if fn is UnaryFn.NOT:
        return f"(!{x})"
    if fn is UnaryFn.INVERT:
        return f"({ctype(dtype)})(~{x})" if not dtype.is_bool else f"(!{x})"
    if fn is UnaryFn.ABS and not dtype.is_float:
        return x if not dtype.is_signed else f"tl::iabs<{ctype(dtype)}>({x})"
    if fn is UnaryFn.NEG and dtype.is_signed:
        return f"tl::neg<{ctype(dtype)}>({x})"  # -INT_MIN wraps, as on the GPU
    work = compute_dtype(dtype)
    x = _to(work, x, dtype)
    if fn is UnaryFn.NEG:
        text = f"(-{x})"
        return f"({ctype(dtype)}){text}" if dtype.is_int and dtype.bits < 32 else _to(dtype, text, work)
    if fn is UnaryFn.SQRT_RN:
        text = f"__{'fsqrt' if work.bits == 32 else 'dsqrt'}_rn({x})"
    elif fn is UnaryFn.ROUND_TF32:
        text = f"tl::round_tf32({x})"
    elif fn is UnaryFn.EXP2 and work.bits == 32:
        text = f"tl::exp2_approx({x})"  # Triton's f32 tl.exp2: one MUFU.EX2, no denormal range fix-up
    elif fn is UnaryFn.EXP and work.bits == 32:
        text = f"tl::exp_approx({x})"  # Triton's f32 tl.exp: ex2.approx of x * log2(e)
    else:
        text = f"{_FLOAT_FNS.get(fn, fn.value)}{'f' if work.bits == 32 else ''}({x})"
    return _to(dtype, text, work)


@element(Op.CAST)
def _cast(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, CastAttr)
    src, dst = node.args[0].ty.dtype, node.ty.dtype
    x = em.elem(node.args[0], idx)
    if node.attr.bitcast:
        return f"tl::bitcast<{ctype(dst)}>({x})"
    if node.attr.round_to_zero and dst.is_float and dst.bits < src.bits:
        return f"tl::cvt_rtz<{ctype(dst)}>({_to(compute_dtype(src), x, src)})" if src.bits <= 32 \
            else f"tl::cvt_rtz_f32({x})"
    if src.is_pointer or dst.is_pointer:
        return f"reinterpret_cast<{ctype(dst)}>({x})"
    return _to(dst, x, src)


@element(Op.WHERE)
def _where(em: Emitter, node: Node, idx: Index) -> str:
    c, x, y = (em.elem(a, idx) for a in node.args)
    return f"({c} ? {x} : {y})"


@element(Op.HINT)
def _hinted(em: Emitter, node: Node, idx: Index) -> str:
    """A hint is its input's values (its promise was used by axis info)."""
    return em.elem(node.args[0], idx)


@element(Op.FMA)
def _fma(em: Emitter, node: Node, idx: Index) -> str:
    dtype = node.ty.dtype
    work = compute_dtype(dtype)
    x, y, z = (_to(work, em.elem(a, idx), dtype) for a in node.args)
    return _to(dtype, f"fma{'f' if work.bits == 32 else ''}({x}, {y}, {z})", work)


@element(Op.LIBDEVICE)
def _libdevice(em: Emitter, node: Node, idx: Index) -> str:
    """A row of :data:`_LIBDEVICE`, picked by an operand's width (the first's, :data:`_BY_OPERAND`'s) or
    signedness (:data:`_BY_SIGN`); the rule chose the dtypes."""
    assert isinstance(node.attr, LibAttr)
    fn, (x, *rest) = node.attr.fn, node.args
    powi = fn is LibFn.POW and rest[0].ty.dtype.is_int
    second = x.ty.dtype.kind is Kind.UINT if fn in _BY_SIGN else node.args[_BY_OPERAND.get(fn, 0)].ty.dtype.bits == 64
    spelled = (_POWI if powi else _LIBDEVICE[fn])[second]
    return spelled.format(*(em.elem(a, idx) for a in node.args))


@element(Op.RAND)
def _rand(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, RandAttr)
    seed, offset = (em.elem(a, idx) for a in node.args)
    fn = {RandFn.RANDINT: "randint", RandFn.RAND: "rand", RandFn.RANDN: "randn"}[node.attr.fn]
    if node.attr.lane:
        fn = f"randint4x<{node.attr.lane}>"
    return f"tl::{fn}({seed}, {offset}, {node.attr.rounds})"


@element(Op.PARAM)
def _param(em: Emitter, node: Node, idx: Index) -> str:
    assert isinstance(node.attr, ParamAttr)
    return em.names[node]
