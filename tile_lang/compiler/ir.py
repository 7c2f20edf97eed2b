"""The typed tile IR: one immutable node type, an op enum with an info table, typed attributes.

A kernel is a :class:`Function` whose body is a :class:`Region`: an ordered tuple of nodes
(SSA, each node's ``args`` are earlier nodes). Structured control flow (``FOR``/``WHILE``/
``IF``) holds nested regions; its results are read through ``RESULT`` projections.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
import math
from dataclasses import dataclass, field, replace
from typing import Union

from tile_lang.dtypes import DType
from tile_lang.reads import Read


@dataclass(frozen=True)
class Type:
    """The result type of a node: element dtype and block shape (``()`` for a scalar)."""

    dtype: DType
    shape: tuple[int, ...] = ()

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_scalar(self) -> bool:
        return not self.shape

    def with_shape(self, shape: tuple[int, ...]) -> Type:
        return Type(self.dtype, shape)

    def __str__(self) -> str:
        name = repr(self.dtype).removeprefix("tl.")
        return name if not self.shape else f"{name}[{','.join(map(str, self.shape))}]"


class Category(enum.Enum):
    """How an op behaves, for passes: pure values, views, memory effects, control flow."""

    SOURCE = "source"        # no operands: params, constants, program ids, aranges
    ELEMENTWISE = "elementwise"
    VIEW = "view"            # reindexes its operand without computing (broadcast, reshape...)
    COLLECTIVE = "collective"  # reads many elements of its operands (reductions, scans, dot)
    MEMORY = "memory"        # reads or writes global memory
    CONTROL = "control"


@dataclass(frozen=True)
class OpInfo:
    category: Category
    pure: bool  # removable when unused


class Op(enum.Enum):
    PARAM = "param"
    CONST = "const"
    PROGRAM_ID = "program_id"
    NUM_PROGRAMS = "num_programs"
    ARANGE = "arange"
    SPLAT = "splat"
    BINARY = "binary"
    UNARY = "unary"
    CAST = "cast"
    WHERE = "where"
    HINT = "hint"  # the input unchanged, with a promised fact about its values (HintAttr) for axis info
    FMA = "fma"
    LIBDEVICE = "libdevice"  # a libdevice function (LibAttr) of operands of its overload's dtypes
    BROADCAST = "broadcast"
    RESHAPE = "reshape"
    PERMUTE = "permute"
    CONVERT = "convert"
    REDUCE = "reduce"
    SCAN = "scan"
    DOT = "dot"
    RAND = "rand"
    GATHER = "gather"
    SORT = "sort"
    HISTOGRAM = "histogram"
    COMBINE_REDUCE = "combine_reduce"
    COMBINE_SCAN = "combine_scan"
    ASM = "asm"
    LOAD = "load"
    ASYNC_COPY = "async_copy"  # a load straight into shared memory (a dot operand), maybe prefetched
    STORE = "store"
    ATOMIC = "atomic"
    BARRIER = "barrier"
    ASSERT = "assert"
    PRINT = "print"
    FOR = "for"
    WHILE = "while"
    IF = "if"
    RESULT = "result"
    RETURN = "return"

    @property
    def info(self) -> OpInfo:
        return OP_INFO[self]


_C = Category
OP_INFO: dict[Op, OpInfo] = {
    Op.PARAM: OpInfo(_C.SOURCE, True), Op.CONST: OpInfo(_C.SOURCE, True),
    Op.PROGRAM_ID: OpInfo(_C.SOURCE, True), Op.NUM_PROGRAMS: OpInfo(_C.SOURCE, True),
    Op.ARANGE: OpInfo(_C.SOURCE, True), Op.SPLAT: OpInfo(_C.ELEMENTWISE, True),
    Op.BINARY: OpInfo(_C.ELEMENTWISE, True), Op.UNARY: OpInfo(_C.ELEMENTWISE, True),
    Op.CAST: OpInfo(_C.ELEMENTWISE, True), Op.WHERE: OpInfo(_C.ELEMENTWISE, True), Op.HINT: OpInfo(_C.ELEMENTWISE, True),
    Op.FMA: OpInfo(_C.ELEMENTWISE, True), Op.LIBDEVICE: OpInfo(_C.ELEMENTWISE, True), Op.RAND: OpInfo(_C.ELEMENTWISE, True),
    Op.BROADCAST: OpInfo(_C.VIEW, True), Op.RESHAPE: OpInfo(_C.VIEW, True), Op.PERMUTE: OpInfo(_C.VIEW, True),
    Op.CONVERT: OpInfo(_C.COLLECTIVE, True), Op.REDUCE: OpInfo(_C.COLLECTIVE, True),
    Op.SCAN: OpInfo(_C.COLLECTIVE, True), Op.DOT: OpInfo(_C.COLLECTIVE, True),
    Op.GATHER: OpInfo(_C.COLLECTIVE, True), Op.SORT: OpInfo(_C.COLLECTIVE, True),
    Op.HISTOGRAM: OpInfo(_C.COLLECTIVE, True), Op.COMBINE_REDUCE: OpInfo(_C.COLLECTIVE, True),
    Op.COMBINE_SCAN: OpInfo(_C.COLLECTIVE, True), Op.ASM: OpInfo(_C.ELEMENTWISE, False),
    Op.LOAD: OpInfo(_C.MEMORY, True), Op.ASYNC_COPY: OpInfo(_C.MEMORY, True), Op.STORE: OpInfo(_C.MEMORY, False), Op.ATOMIC: OpInfo(_C.MEMORY, False),
    Op.BARRIER: OpInfo(_C.CONTROL, False), Op.ASSERT: OpInfo(_C.CONTROL, False), Op.PRINT: OpInfo(_C.CONTROL, False),
    Op.FOR: OpInfo(_C.CONTROL, False), Op.WHILE: OpInfo(_C.CONTROL, False),
    Op.IF: OpInfo(_C.CONTROL, False), Op.RESULT: OpInfo(_C.CONTROL, True), Op.RETURN: OpInfo(_C.CONTROL, False),
}


class BinaryFn(enum.Enum):
    """Binary elementwise functions; integer DIV/MOD truncate (C semantics), as Triton."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"      # float division (approximate where the target allows), or integer truncation
    DIV_RN = "div_rn"
    MOD = "mod"
    AND = "and"
    OR = "or"
    XOR = "xor"
    SHL = "shl"
    SHR = "shr"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"
    MAX = "max"
    MIN = "min"
    MAX_NAN = "max_nan"  # maximum that propagates NaN
    MIN_NAN = "min_nan"
    UMULHI = "umulhi"

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS


_COMPARISONS = frozenset({BinaryFn.LT, BinaryFn.LE, BinaryFn.GT, BinaryFn.GE, BinaryFn.EQ, BinaryFn.NE})


class UnaryFn(enum.Enum):
    NEG = "neg"
    INVERT = "invert"
    NOT = "not"
    ABS = "abs"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    LOG2 = "log2"
    SIN = "sin"
    COS = "cos"
    SQRT = "sqrt"
    SQRT_RN = "sqrt_rn"
    RSQRT = "rsqrt"
    ERF = "erf"
    ATAN = "atan"
    CEIL = "ceil"
    FLOOR = "floor"
    TANH = "tanh"
    TAN = "tan"
    ASIN = "asin"
    ACOS = "acos"
    SINH = "sinh"
    COSH = "cosh"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    ERFC = "erfc"
    EXPM1 = "expm1"
    LOG1P = "log1p"
    LOG10 = "log10"
    TRUNC = "trunc"
    RINT = "rint"
    ROUND_TF32 = "round_tf32"  # f32 to tf32, nearest with ties away from zero (cvt.rna.tf32.f32)


class LibFn(enum.Enum):
    """The libdevice functions of Op.LIBDEVICE (the CUDA spelling of each is the code generator's)."""

    POW = "pow"
    LDEXP = "ldexp"
    NORM3D = "norm3d"
    ISINF = "isinf"
    ISNAN = "isnan"
    ISFINITE = "isfinite"
    SIGNBIT = "signbit"
    ILOGB = "ilogb"
    SATURATEF = "saturatef"
    FAST_EXPF = "fast_expf"
    FAST_LOGF = "fast_logf"
    FAST_DIVIDEF = "fast_dividef"
    FLOAT2INT_RN = "float2int_rn"
    POPC = "popc"
    CLZ = "clz"
    FFS = "ffs"
    BREV = "brev"
    MULHI = "mulhi"
    BYTE_PERM = "byte_perm"
    CBRT = "cbrt"
    RCBRT = "rcbrt"
    EXP10 = "exp10"
    LGAMMA = "lgamma"
    TGAMMA = "tgamma"
    ERFINV = "erfinv"
    ERFCINV = "erfcinv"
    J0 = "j0"
    J1 = "j1"
    Y0 = "y0"
    Y1 = "y1"
    LOGB = "logb"
    NEARBYINT = "nearbyint"
    ROUND = "round"
    COSPI = "cospi"
    SINPI = "sinpi"
    RCP_RN = "rcp_rn"
    RCP_RD = "rcp_rd"
    RCP_RU = "rcp_ru"
    RCP_RZ = "rcp_rz"
    SCALBN = "scalbn"
    ADD_RN = "add_rn"
    ADD_RZ = "add_rz"
    ADD_RD = "add_rd"
    ADD_RU = "add_ru"
    SUB_RN = "sub_rn"
    SUB_RZ = "sub_rz"
    SUB_RD = "sub_rd"
    SUB_RU = "sub_ru"
    MUL_RN = "mul_rn"
    MUL_RZ = "mul_rz"
    MUL_RD = "mul_rd"
    MUL_RU = "mul_ru"
    INT_AS_FLOAT = "int_as_float"
    FLOAT_AS_INT = "float_as_int"
    UINT_AS_FLOAT = "uint_as_float"
    FLOAT_AS_UINT = "float_as_uint"
    LONGLONG_AS_DOUBLE = "longlong_as_double"
    DOUBLE_AS_LONGLONG = "double_as_longlong"
    RNORM3D = "rnorm3d"
    NORM4D = "norm4d"
    RNORM4D = "rnorm4d"
    FAST_SINF = "fast_sinf"
    FAST_COSF = "fast_cosf"
    FAST_TANF = "fast_tanf"
    FAST_LOG2F = "fast_log2f"
    FAST_LOG10F = "fast_log10f"
    FAST_EXP10F = "fast_exp10f"
    FAST_POWF = "fast_powf"
    FINITEF = "finitef"
    ISFINITED = "isfinited"
    SQRT_RD = "sqrt_rd"
    SQRT_RU = "sqrt_ru"
    SQRT_RZ = "sqrt_rz"
    ATAN2 = "atan2"
    HYPOT = "hypot"
    FMOD = "fmod"
    REMAINDER = "remainder"
    COPYSIGN = "copysign"
    NEXTAFTER = "nextafter"
    FDIM = "fdim"
    FMAX = "fmax"
    FMIN = "fmin"
    RHYPOT = "rhypot"
    DIV_RD = "div_rd"
    DIV_RU = "div_ru"
    DIV_RZ = "div_rz"
    FMA_RN = "fma_rn"
    FMA_RZ = "fma_rz"
    FMA_RD = "fma_rd"
    FMA_RU = "fma_ru"
    RSQRT_RN = "rsqrt_rn"
    RCP64H = "rcp64h"
    HILOINT2DOUBLE = "hiloint2double"
    DOUBLE2LOINT = "double2loint"
    DOUBLE2HIINT = "double2hiint"
    MUL24 = "mul24"
    SAD = "sad"
    HADD = "hadd"
    RHADD = "rhadd"
    LLRINT = "llrint"
    LLROUND = "llround"
    JN = "jn"
    YN = "yn"
    CYL_BESSEL_I0 = "cyl_bessel_i0"
    CYL_BESSEL_I1 = "cyl_bessel_i1"
    ERFCX = "erfcx"
    NORMCDF = "normcdf"
    NORMCDFINV = "normcdfinv"
    # libdevice's rounding conversions (tile_lang.ops.conversions), each named as its builtin
    DOUBLE2FLOAT_RN = "double2float_rn"
    DOUBLE2FLOAT_RZ = "double2float_rz"
    DOUBLE2FLOAT_RD = "double2float_rd"
    DOUBLE2FLOAT_RU = "double2float_ru"
    DOUBLE2INT_RN = "double2int_rn"
    DOUBLE2INT_RZ = "double2int_rz"
    DOUBLE2INT_RD = "double2int_rd"
    DOUBLE2INT_RU = "double2int_ru"
    DOUBLE2UINT_RN = "double2uint_rn"
    DOUBLE2UINT_RZ = "double2uint_rz"
    DOUBLE2UINT_RD = "double2uint_rd"
    DOUBLE2UINT_RU = "double2uint_ru"
    INT2DOUBLE_RN = "int2double_rn"
    UINT2DOUBLE_RN = "uint2double_rn"
    FLOAT2INT_RZ = "float2int_rz"
    FLOAT2INT_RD = "float2int_rd"
    FLOAT2INT_RU = "float2int_ru"
    FLOAT2UINT_RN = "float2uint_rn"
    FLOAT2UINT_RZ = "float2uint_rz"
    FLOAT2UINT_RD = "float2uint_rd"
    FLOAT2UINT_RU = "float2uint_ru"
    INT2FLOAT_RN = "int2float_rn"
    INT2FLOAT_RZ = "int2float_rz"
    INT2FLOAT_RD = "int2float_rd"
    INT2FLOAT_RU = "int2float_ru"
    UINT2FLOAT_RN = "uint2float_rn"
    UINT2FLOAT_RZ = "uint2float_rz"
    UINT2FLOAT_RD = "uint2float_rd"
    UINT2FLOAT_RU = "uint2float_ru"
    FLOAT2LL_RN = "float2ll_rn"
    FLOAT2LL_RZ = "float2ll_rz"
    FLOAT2LL_RD = "float2ll_rd"
    FLOAT2LL_RU = "float2ll_ru"
    FLOAT2ULL_RN = "float2ull_rn"
    FLOAT2ULL_RZ = "float2ull_rz"
    FLOAT2ULL_RD = "float2ull_rd"
    FLOAT2ULL_RU = "float2ull_ru"
    DOUBLE2LL_RN = "double2ll_rn"
    DOUBLE2LL_RZ = "double2ll_rz"
    DOUBLE2LL_RD = "double2ll_rd"
    DOUBLE2LL_RU = "double2ll_ru"
    DOUBLE2ULL_RN = "double2ull_rn"
    DOUBLE2ULL_RZ = "double2ull_rz"
    DOUBLE2ULL_RD = "double2ull_rd"
    DOUBLE2ULL_RU = "double2ull_ru"
    LL2FLOAT_RN = "ll2float_rn"
    LL2FLOAT_RZ = "ll2float_rz"
    LL2FLOAT_RD = "ll2float_rd"
    LL2FLOAT_RU = "ll2float_ru"
    ULL2FLOAT_RN = "ull2float_rn"
    ULL2FLOAT_RZ = "ull2float_rz"
    ULL2FLOAT_RD = "ull2float_rd"
    ULL2FLOAT_RU = "ull2float_ru"
    LL2DOUBLE_RN = "ll2double_rn"
    LL2DOUBLE_RZ = "ll2double_rz"
    LL2DOUBLE_RD = "ll2double_rd"
    LL2DOUBLE_RU = "ll2double_ru"
    ULL2DOUBLE_RN = "ull2double_rn"
    ULL2DOUBLE_RZ = "ull2double_rz"
    ULL2DOUBLE_RD = "ull2double_rd"
    ULL2DOUBLE_RU = "ull2double_ru"


class ReduceFn(enum.Enum):
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    XOR = "xor"
    ARGMAX = "argmax"
    ARGMIN = "argmin"


class AtomicFn(enum.Enum):
    ADD = "add"
    MAX = "max"
    MIN = "min"
    AND = "and"
    OR = "or"
    XOR = "xor"
    XCHG = "exch"
    CAS = "cas"


class Sem(enum.Enum):
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class Scope(enum.Enum):
    GPU = "gpu"
    CTA = "cta"
    SYS = "sys"


class Precision(enum.Enum):
    IEEE = "ieee"
    TF32 = "tf32"
    TF32X3 = "tf32x3"


class RandFn(enum.Enum):
    RANDINT = "randint"
    RAND = "rand"
    RANDN = "randn"


# ---------------------------------------------------------------- attributes


@dataclass(frozen=True)
class NoAttr:
    def __str__(self) -> str:
        return ""


@dataclass(frozen=True)
class ParamAttr:
    index: int
    name: str
    divisibility: int = 1  # known power-of-two divisor (bytes for pointers), from specialisation
    nonnegative: bool = False  # an int known to be >= 0, from specialisation

    def __str__(self) -> str:
        return f"#{self.index} {self.name} div={self.divisibility}{' >=0' if self.nonnegative else ''}"


@dataclass(frozen=True)
class ConstAttr:
    value: bool | int | float

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class AxisAttr:
    axis: int

    def __str__(self) -> str:
        return f"axis={self.axis}"


@dataclass(frozen=True)
class RangeAttr:
    start: int
    end: int

    def __str__(self) -> str:
        return f"[{self.start}, {self.end})"


@dataclass(frozen=True)
class BinaryAttr:
    fn: BinaryFn

    def __str__(self) -> str:
        return self.fn.value


@dataclass(frozen=True)
class UnaryAttr:
    fn: UnaryFn

    def __str__(self) -> str:
        return self.fn.value


@dataclass(frozen=True)
class HintAttr:
    """``tl.multiple_of``, ``tl.max_contiguous`` or ``tl.max_constancy`` (``kind``) with its
    values, one per axis: what the promise adds to the input's axis info."""

    kind: str
    values: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.kind} {list(self.values)}"


@dataclass(frozen=True)
class LibAttr:
    fn: LibFn

    def __str__(self) -> str:
        return self.fn.value


@dataclass(frozen=True)
class CastAttr:
    bitcast: bool = False
    round_to_zero: bool = False

    def __str__(self) -> str:
        return "bitcast" if self.bitcast else ("rtz" if self.round_to_zero else "rtne")


@dataclass(frozen=True)
class PermuteAttr:
    dims: tuple[int, ...]

    def __str__(self) -> str:
        return f"dims={list(self.dims)}"


@dataclass(frozen=True)
class ReduceAttr:
    fn: ReduceFn
    axis: int | None  # None: every axis
    tie_break_left: bool = True

    def __str__(self) -> str:
        return f"{self.fn.value} axis={self.axis}"


@dataclass(frozen=True)
class ScanAttr:
    fn: ReduceFn
    axis: int
    reverse: bool

    def __str__(self) -> str:
        return f"{self.fn.value} axis={self.axis}{' reverse' if self.reverse else ''}"


@dataclass(frozen=True)
class DotAttr:
    precision: Precision
    imprecise: int | None = None  # fp8 on Hopper: K elements a partial sum takes before it is added into the f32 acc

    def __str__(self) -> str:
        return self.precision.value + (f" imprecise={self.imprecise}" if self.imprecise is not None else "")


@dataclass(frozen=True)
class RandAttr:
    fn: RandFn
    rounds: int
    lane: int = 0  # which of Philox's four outputs (randint4x); randint is lane 0

    def __str__(self) -> str:
        return f"{self.fn.value} rounds={self.rounds}" + (f" lane={self.lane}" if self.lane else "")


@dataclass(frozen=True)
class SortAttr:
    descending: bool

    def __str__(self) -> str:
        return "descending" if self.descending else "ascending"


@dataclass(frozen=True)
class HistogramAttr:
    bins: int
    has_mask: bool

    def __str__(self) -> str:
        return f"bins={self.bins}"


@dataclass(frozen=True)
class CombineAttr:
    """A reduction (axis None: every axis) or scan whose combine function is the node's region;
    of a tuple of operands, the node yields result ``index`` (one node per result)."""

    axis: int | None
    reverse: bool = False
    index: int = 0

    def __str__(self) -> str:
        return f"axis={self.axis}" + (" reverse" if self.reverse else "") + (f" result={self.index}" if self.index else "")


@dataclass(frozen=True)
class AssertAttr:
    message: str

    def __str__(self) -> str:
        return repr(self.message)


@dataclass(frozen=True)
class PrintAttr:
    """``device_print``: the prefix, and per printed item its text (a compile-time value) or None
    (the next tensor operand)."""

    prefix: str
    items: tuple[str | None, ...]
    hex: bool

    def __str__(self) -> str:
        return repr(self.prefix) + (" hex" if self.hex else "")


@dataclass(frozen=True)
class AsmAttr:
    """``inline_asm_elementwise``: PTX with ``$n`` operands, outputs first in ``constraints``."""

    asm: str
    constraints: str
    pack: int
    pure: bool
    outputs: tuple[DType, ...] = ()  # every output's dtype (one asm statement writes them all)
    output: int = 0  # which one this node is

    def __str__(self) -> str:
        return repr(self.asm) + (f" output={self.output}" if len(self.outputs) > 1 else "")


@dataclass(frozen=True)
class MemAttr:
    """A load or store: which optional operands are present, and the vector width chosen.

    ``box`` > 0: the access reads a ``box``-dimensional tensor box (a descriptor's or block
    pointer's block) and its last ``1 + 3 * box`` operands describe it: the base pointer, then
    the tensor's shape, strides and the box's offsets, each ``box`` scalars (see :func:`box_of`).
    A LOAD keeps them for the copy engine; an ASYNC_COPY with a box is that copy (TMA) and has
    no other operands."""

    has_mask: bool
    has_other: bool = False
    vector: int = 1
    volatile: bool = False
    box: int = 0
    # an ASYNC_COPY of a pipelined loop whose source pointer blocks from before the loop are held in
    # registers (passes/pipeline.py decides, codegen renders), the copy adding its carried offset
    hold: bool = False
    cache: str = ""  # Triton's cache_modifier (".cg"...), checked by semantics.memory.cache_hints
    evict: str = ""  # Triton's eviction_policy ("evict_first"...)

    def __str__(self) -> str:
        return (f"vec={self.vector}" + (" volatile" if self.volatile else "") + (f" box{self.box}d" if self.box else "")
                + (" hold" if self.hold else "") + (f" cache={self.cache}" if self.cache else "")
                + (f" evict={self.evict}" if self.evict else ""))


@dataclass(frozen=True)
class Box:
    """The tensor box a LOAD or ASYNC_COPY with ``MemAttr.box`` reads."""

    base: Node
    shape: tuple[Node, ...]
    strides: tuple[Node, ...]
    offsets: tuple[Node, ...]


def box_of(node: Node) -> Box | None:
    """The tensor box described by ``node``'s trailing operands, if it has one."""
    attr = node.attr
    if not isinstance(attr, MemAttr) or not attr.box:
        return None
    n = attr.box
    args = node.args[len(node.args) - 1 - 3 * n:]
    return Box(args[0], args[1:1 + n], args[1 + n:1 + 2 * n], args[1 + 2 * n:])


@dataclass(frozen=True)
class AtomicAttr:
    fn: AtomicFn
    sem: Sem
    scope: Scope
    has_mask: bool
    vector: int = 1  # elements one ``atom`` updates (Hopper's vector adds; the vectorize pass sets it)
    # the old values are never read, nor (for an acquire) anything after it: a ``red`` (passes/atomics.py)
    discard: bool = False

    def __str__(self) -> str:
        return (f"{self.fn.value} {self.sem.value} {self.scope.value}" + (f" vec={self.vector}" if self.vector > 1 else "")
                + (" discard" if self.discard else ""))


@dataclass(frozen=True)
class IndexAttr:
    index: int

    def __str__(self) -> str:
        return str(self.index)


@dataclass(frozen=True)
class LoopAttr:
    """``unroll``: the user's loop_unroll_factor; ``stages``: how many iterations' async copies
    are in flight at once (software pipelining; 1 means none); ``steps``: in a pipelined loop,
    the carried values (by index, the induction variable not counted) yielded as ``value + step``
    with a loop-invariant step, which the copies read iterations ahead (:func:`carried_steps`)."""

    unroll: int | None = None
    stages: int = 1
    steps: tuple[int, ...] = ()

    def __str__(self) -> str:
        parts = ([] if self.unroll is None else [f"unroll={self.unroll}"]) + (
            [f"stages={self.stages}"] if self.stages > 1 else []) + ([f"steps={list(self.steps)}"] if self.steps else [])
        return " ".join(parts)


def carried_steps(loop: Node) -> dict[Node, Node]:
    """A ``for`` loop's :attr:`LoopAttr.steps` as nodes: carried parameter -> its step."""
    body = loop.regions[0]
    steps = loop.attr.steps if isinstance(loop.attr, LoopAttr) else ()
    return {body.params[1 + i]: body.results[i].args[1] for i in steps}


Attr = Union[NoAttr, ParamAttr, ConstAttr, AxisAttr, RangeAttr, BinaryAttr, UnaryAttr, HintAttr, LibAttr, CastAttr, PermuteAttr,
             ReduceAttr, ScanAttr, DotAttr, RandAttr, SortAttr, HistogramAttr, CombineAttr, AssertAttr, PrintAttr,
             AsmAttr, MemAttr, AtomicAttr, IndexAttr, LoopAttr]

NO_ATTR = NoAttr()

# ---------------------------------------------------------------- layouts


@dataclass(frozen=True)
class Blocked:
    """Elements in row-major order dealt to ``threads`` threads, ``vector`` consecutive each,
    repeated; a block smaller than the thread count is replicated (thread t holds t % n)."""

    threads: int
    vector: int
    reps: int

    @property
    def per_thread(self) -> int:
        return self.vector * self.reps

    def __str__(self) -> str:
        return f"#blocked<t={self.threads},v={self.vector},r={self.reps}>"


MAX_VECTOR = 4  # elements a thread holds consecutively in the default register layout


def blocked(numel: int, threads: int, vector: int = MAX_VECTOR) -> Blocked:
    """The default register layout of a block of ``numel`` elements over ``threads`` threads, each
    holding runs of up to ``vector`` consecutive elements (:attr:`Function.vector`)."""
    used = min(threads, numel)
    vector = min(vector, numel // used)
    return Blocked(used, vector, numel // (used * vector))


@dataclass(frozen=True)
class Mma:
    """Tensor-core accumulator fragments of ``mma.sync`` m16n8 instructions: the block's rows
    and columns are split over ``warps_m x warps_n`` warps (warp w at row tile ``w % warps_m``,
    column tile ``w // warps_m``); each warp holds ``tiles_m x tiles_n`` instruction tiles of
    16x8, and each thread 4 elements of every tile: rows ``lane / 4`` and ``+8``, columns
    ``2 * (lane % 4)`` and ``+1``. Warps past ``warps_m * warps_n`` hold copies. ``interleaved``:
    a warp's row tiles are ``16 * warps_m`` rows apart instead of adjacent (wgmma's: each m64
    instruction of a warpgroup covers 64 consecutive rows, 16 a warp)."""

    warps_m: int
    warps_n: int
    tiles_m: int
    tiles_n: int
    interleaved: bool = False

    @property
    def threads(self) -> int:
        return self.warps_m * self.warps_n * 32

    @property
    def per_thread(self) -> int:
        return self.tiles_m * self.tiles_n * 4

    @property
    def vector(self) -> int:
        return 2  # registers k, k + 1 (k even) are adjacent columns of one row

    @property
    def shape(self) -> tuple[int, int]:
        return self.warps_m * self.tiles_m * 16, self.warps_n * self.tiles_n * 8

    def __str__(self) -> str:
        il = ",interleaved" if self.interleaved else ""
        return f"#mma<warps={self.warps_m}x{self.warps_n},tiles={self.tiles_m}x{self.tiles_n}{il}>"


@dataclass(frozen=True)
class MmaRows:
    """One value per row of :class:`Mma` blocks with these warps and row tiles (Triton's slice
    layout): a row reduction of fragments, held by the threads that hold that row (``lane / 4``
    and ``+8`` of each row tile), so broadcasting it back over any such block costs nothing.
    Shapes ``[M]`` and ``[M, 1]``."""

    warps_m: int
    warps_n: int
    tiles_m: int
    interleaved: bool = False

    @staticmethod
    def of(block: Mma) -> MmaRows:
        return MmaRows(block.warps_m, block.warps_n, block.tiles_m, block.interleaved)

    def spans(self, block: Mma) -> bool:
        """Whether the fragments of ``block`` hold their rows where this layout does."""
        return MmaRows.of(block) == self

    @property
    def rows(self) -> int:
        return self.warps_m * self.tiles_m * 16

    @property
    def threads(self) -> int:
        return self.warps_m * self.warps_n * 32

    @property
    def per_thread(self) -> int:
        return self.tiles_m * 2

    @property
    def vector(self) -> int:
        return 1

    def __str__(self) -> str:
        il = ",interleaved" if self.interleaved else ""
        return f"#mma_rows<warps={self.warps_m}x{self.warps_n},tiles={self.tiles_m}{il}>"


@dataclass(frozen=True)
class Shared:
    """The whole block in shared memory, row-major: any thread reads any element. Rows of a
    2-D block may be padded by ``row_pad`` elements so that tensor-core fragment loads
    (``ldmatrix``) of consecutive rows fall in different banks; ``transposed`` stores a 2-D
    block column by column (its first dimension contiguous), as a dot operand loaded from
    memory that is contiguous along it (``k.T`` in attention) lies best; ``swizzle`` stores it
    as column panels of that many bytes (128, 64 or 32) whose 16-byte chunks are XOR-swizzled by
    row, the layouts wgmma reads through its descriptors (1024-byte aligned)."""

    row_pad: int = 0
    transposed: bool = False
    swizzle: int = 0  # bytes of a swizzled panel's row (128, 64, 32; 0: none): the operand layouts of wgmma

    def __str__(self) -> str:
        parts = ([f"pad={self.row_pad}"] if self.row_pad else []) + (["transposed"] if self.transposed else []) + (
            [f"swizzle{self.swizzle}"] if self.swizzle else [])
        return "#shared" + (f"<{','.join(parts)}>" if parts else "")


@dataclass(frozen=True)
class Computed:
    """No storage: every use evaluates the element from its coordinates (aranges, splats...)."""

    def __str__(self) -> str:
        return "#computed"


Registers = Union[Blocked, Mma, MmaRows]
"""Layouts whose elements sit in registers, ``per_thread`` of them in each of ``threads`` threads."""
REGISTER_LAYOUTS = (Blocked, Mma, MmaRows)

Layout = Union[Blocked, Mma, MmaRows, Shared, Computed]

# ---------------------------------------------------------------- nodes


@dataclass(frozen=True)
class Loc:
    filename: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"


@dataclass(frozen=True, eq=False)
class Node:
    """One IR operation and its value. Identity is the object (``eq=False``), so nodes hash."""

    op: Op
    type: Type | None  # None for ops without a value (store, control flow)
    args: tuple[Node, ...] = ()
    attr: Attr = NO_ATTR
    regions: tuple[Region, ...] = ()
    loc: Loc | None = None
    layout: Layout | None = None

    @property
    def ty(self) -> Type:
        """The value type; only for nodes that have one."""
        assert self.type is not None, f"{self.op} has no value"
        return self.type


@dataclass(frozen=True)
class Region:
    """A nested block: its parameters (loop-carried values), body, and the values it yields."""

    params: tuple[Node, ...] = ()
    body: tuple[Node, ...] = ()
    results: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Function:
    """A compiled kernel: name, runtime parameters and body; ``num_warps`` fixes the thread count."""

    name: str
    params: tuple[Node, ...]
    body: Region
    num_warps: int = 4
    source: tuple[str, int] = field(default=("", 0))  # file and first line of the kernel
    reads: tuple[Read, ...] = ()  # every Python value the front end read: caches key by them
    num_stages: int = 3  # software-pipelining depth of loops that feed tensor cores
    arch: int = 80  # target compute capability: which tensor-core instructions codegen may use
    vector: int = MAX_VECTOR  # the default register layouts' runs (the layouts pass sets it)

    @property
    def threads(self) -> int:
        return self.num_warps * 32


def held_in(node: Node, fn: Function) -> Registers:
    """The register layout ``node`` is held in, or walked in when it has no registers (the
    default layout of its size)."""
    if isinstance(node.layout, REGISTER_LAYOUTS):
        return node.layout
    return blocked(node.ty.numel, fn.threads, fn.vector)


def stored_walk(store: Node) -> Node:
    """The operand whose layout a block store walks, so whose threads write which elements: its
    value, or its pointers where the value has no registers or one element."""
    value = store.args[1]
    return value if isinstance(value.layout, REGISTER_LAYOUTS) and value.ty.numel > 1 else store.args[0]


def walk(region: Region) -> list[Node]:
    """Every node of ``region`` and its nested regions, in program order (params first)."""
    out: list[Node] = list(region.params)
    for node in region.body:
        out.append(node)
        for sub in node.regions:
            out.extend(walk(sub))
    return out


def use_counts(fn: Function) -> Counter[Node]:
    """How many times each node is read: as an operand, or yielded by a region (the function's
    body included)."""
    uses: Counter[Node] = Counter()
    for node in walk(fn.body):
        uses.update(node.args)
        for region in node.regions:
            uses.update(region.results)
    uses.update(fn.body.results)
    return uses


def writes_memory(node: Node) -> bool:
    """Whether ``node``, or anything in its regions, may write global memory: a store, an atomic,
    or inline PTX with effects (passes that move or prefetch a load must not cross one)."""
    if node.op in (Op.STORE, Op.ATOMIC) or (node.op is Op.ASM and isinstance(node.attr, AsmAttr) and not node.attr.pure):
        return True
    return any(writes_memory(inner) for region in node.regions for inner in region.body)


def write_epochs(fn: Function) -> dict[Node, int]:
    """For each node, a count of the writes to memory that may run before it (its epoch): walked
    in program order, a loop's writes counted again before its body (an iteration runs after the
    previous one's). A load read at a node of its own epoch, later, reads what it read where it
    stands, so a pass may move the load there (:func:`unwritten_between`)."""
    epochs: dict[Node, int] = {}
    count = 0

    def region(body: Region) -> None:
        nonlocal count
        for node in body.body:
            if node.op in (Op.FOR, Op.WHILE):
                count += sum(writes_memory(inner) for sub in node.regions for inner in sub.body)
            epochs[node] = count
            for sub in node.regions:
                region(sub)
            if writes_memory(node) and not node.regions:
                count += 1

    region(fn.body)
    return epochs


def load_operands_at(load: Node, shape: tuple[int, ...], view: Callable[[Node], Node],
                     body: list[Node]) -> tuple[Node, ...]:
    """The operands of ``load`` for the same load read at ``shape`` (a pass moving a load past a
    view of its result): a splat splatted to ``shape`` again (``other=0.0`` is still seen as
    zero), a scalar as it is, a block through ``view`` (which appends what it makes to ``body``)."""
    operands = []
    for operand in load.args:
        if operand.op is Op.SPLAT:
            operand = replace(operand, type=operand.ty.with_shape(shape))
            body.append(operand)
        elif operand.ty.shape:
            operand = view(operand)
        operands.append(operand)
    return tuple(operands)


def unwritten_between(epochs: dict[Node, int], load: Node, reader: Node) -> bool:
    """Whether no write to memory may run between ``load`` and its later ``reader`` (both nodes
    :func:`write_epochs` walked; a node it did not, such as one a pass built, is never)."""
    return load in epochs and epochs[load] == epochs.get(reader)


def constant(node: Node) -> object:
    """The value of ``node`` when it is a constant (splatted or cast), else None."""
    while node.op in (Op.SPLAT, Op.CAST):
        node = node.args[0]
    return node.attr.value if node.op is Op.CONST and isinstance(node.attr, ConstAttr) else None


def is_zero(node: Node) -> bool:
    """Whether ``node`` is the constant 0 (splatted or cast)."""
    return constant(node) == 0
