"""Element types: the static markers mypy checks and the runtime descriptors both backends use.

Statically a dtype is a marker class whose *category* is the constructor and whose width is
the argument (``Float[W32]``), so operators can restrict ``self`` by structure, which mypy
checks (it does not check TypeVar bounds on ``self``). At run time ``tl.f32`` is that same
alias object; :func:`dtype_of` maps it to a :class:`DType` descriptor carrying the semantics.
"""

from __future__ import annotations

import enum
import functools
import importlib
import typing
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

import numpy as np

from tile_lang.errors import SemanticError, UsageError


class Dtype:
    """Marker base of every element type; used only as a type argument. Each marker (``tl.f32``)
    also carries Triton's dtype attributes (:func:`triton_attributes`), declared here for mypy."""

    if typing.TYPE_CHECKING:
        name: typing.ClassVar[str]
        primitive_bitwidth: typing.ClassVar[int]
        fp_mantissa_width: typing.ClassVar[int]
        exponent_bias: typing.ClassVar[int]
        int_bitwidth: typing.ClassVar[int]
        scalar: typing.ClassVar[object]
        is_floating: typing.ClassVar[Query]
        is_standard_floating: typing.ClassVar[Query]
        is_int: typing.ClassVar[Query]
        is_int_signed: typing.ClassVar[Query]
        is_int_unsigned: typing.ClassVar[Query]
        is_bool: typing.ClassVar[Query]
        is_ptr: typing.ClassVar[Query]
        is_block: typing.ClassVar[Query]
        is_fp8: typing.ClassVar[Query]
        is_fp8e4nv: typing.ClassVar[Query]
        is_fp8e5: typing.ClassVar[Query]
        is_fp8e4b15: typing.ClassVar[Query]
        is_fp8e4b8: typing.ClassVar[Query]
        is_fp8e5b16: typing.ClassVar[Query]
        is_fp16: typing.ClassVar[Query]
        is_bf16: typing.ClassVar[Query]
        is_fp32: typing.ClassVar[Query]
        is_fp64: typing.ClassVar[Query]
        is_int1: typing.ClassVar[Query]
        is_int8: typing.ClassVar[Query]
        is_int16: typing.ClassVar[Query]
        is_int32: typing.ClassVar[Query]
        is_int64: typing.ClassVar[Query]
        is_uint8: typing.ClassVar[Query]
        is_uint16: typing.ClassVar[Query]
        is_uint32: typing.ClassVar[Query]
        is_uint64: typing.ClassVar[Query]


class Width:
    """Marker base of the width argument of a dtype category."""


class W8(Width): ...


class W16(Width): ...


class WBF16(Width): ...


class W32(Width): ...


class W64(Width): ...


class WE4M3(Width): ...


class WE5M2(Width): ...


class WE4B15(Width): ...


class WE4B8(Width): ...


class WE5B16(Width): ...


W = TypeVar("W", bound=Width)


class Float(Dtype, Generic[W]):
    """Floating-point category; ``Float[W]`` in a signature is the Rust ``D: Float``."""


class Int(Dtype, Generic[W]):
    """Signed integer category."""


class UInt(Dtype, Generic[W]):
    """Unsigned integer category."""


class Bool(Dtype):
    """The 1-bit boolean type, the element type of masks."""


bool_: TypeAlias = Bool
i1: TypeAlias = Bool
i8: TypeAlias = Int[W8]
i16: TypeAlias = Int[W16]
i32: TypeAlias = Int[W32]
i64: TypeAlias = Int[W64]
u8: TypeAlias = UInt[W8]
u16: TypeAlias = UInt[W16]
u32: TypeAlias = UInt[W32]
u64: TypeAlias = UInt[W64]
f16: TypeAlias = Float[W16]
bf16: TypeAlias = Float[WBF16]
f32: TypeAlias = Float[W32]
f64: TypeAlias = Float[W64]
f8e4m3: TypeAlias = Float[WE4M3]
f8e5m2: TypeAlias = Float[WE5M2]
f8e4b15: TypeAlias = Float[WE4B15]
f8e4b8: TypeAlias = Float[WE4B8]
f8e5b16: TypeAlias = Float[WE5B16]


class Kind(enum.Enum):
    """The category of a runtime dtype."""

    BOOL = "bool"
    INT = "int"
    UINT = "uint"
    FLOAT = "float"
    POINTER = "pointer"


@dataclass(frozen=True, eq=False)
class DType:
    """Runtime description of an element type: category, bit width and host representation.

    Each dtype exists once (pointer types are interned by :meth:`pointer_to`), so equality is
    identity: cheap, since both backends compare dtypes on every operation."""

    name: str
    kind: Kind
    bits: int
    host: str  # the NumPy dtype's name: :attr:`numpy`
    element: DType | None = None  # the pointee, for pointers
    coded: bool = False  # NumPy has no type for it: arrays hold its 8-bit codes (see :mod:`tile_lang.fp8`)

    @functools.cached_property
    def numpy(self) -> np.dtype[typing.Any]:
        """The NumPy dtype of its host arrays (bf16 and most fp8 formats: ml_dtypes', loaded on first use)."""
        return numpy_dtype(self.host)

    def __repr__(self) -> str:
        return f"tl.{self.name}" if self.element is None else f"tl.Pointer[{self.element!r}]"

    @property
    def is_float(self) -> bool:
        return self.kind is Kind.FLOAT

    @property
    def is_int(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.kind in (Kind.INT, Kind.UINT)

    @property
    def is_signed(self) -> bool:
        return self.kind is Kind.INT

    @property
    def is_bool(self) -> bool:
        return self.kind is Kind.BOOL

    @property
    def is_pointer(self) -> bool:
        return self.kind is Kind.POINTER

    @property
    def is_fp8(self) -> bool:
        return self.is_float and self.bits == 8

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    def pointer_to(self) -> DType:
        return _pointer_type(self)


@functools.cache
def _pointer_type(element: DType) -> DType:
    return DType(f"ptr<{element.name}>", Kind.POINTER, 64, "int64", element)


ML_DTYPES = frozenset({"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"})
"""The host types NumPy has from ml_dtypes, which registers them with NumPy when imported. It is imported
on the first use of one (1.25 s of ``import tile_lang`` otherwise), and by name, so that mypy does not
analyse ml_dtypes' stubs for every file importing tile_lang: tile_lang uses none of its API."""


def numpy_dtype(name: str) -> np.dtype[typing.Any]:
    """The NumPy dtype called ``name`` (``"float32"``, ``"bfloat16"``...)."""
    if name in ML_DTYPES:
        importlib.import_module("ml_dtypes")
    return np.dtype(name)


BOOL = DType("bool_", Kind.BOOL, 1, "bool")
I8 = DType("i8", Kind.INT, 8, "int8")
I16 = DType("i16", Kind.INT, 16, "int16")
I32 = DType("i32", Kind.INT, 32, "int32")
I64 = DType("i64", Kind.INT, 64, "int64")
U8 = DType("u8", Kind.UINT, 8, "uint8")
U16 = DType("u16", Kind.UINT, 16, "uint16")
U32 = DType("u32", Kind.UINT, 32, "uint32")
U64 = DType("u64", Kind.UINT, 64, "uint64")
F16 = DType("f16", Kind.FLOAT, 16, "float16")
BF16 = DType("bf16", Kind.FLOAT, 16, "bfloat16")
F32 = DType("f32", Kind.FLOAT, 32, "float32")
F64 = DType("f64", Kind.FLOAT, 64, "float64")
F8E4M3 = DType("f8e4m3", Kind.FLOAT, 8, "float8_e4m3fn")
F8E5M2 = DType("f8e5m2", Kind.FLOAT, 8, "float8_e5m2")
# Triton's other fp8 formats: bias 8 and 16 are ml_dtypes' "fnuz" types (no infinity, no -0, one NaN,
# 0x80); bias 15 has no NumPy type, so its arrays hold codes (max 1.75, NaN 0x7F and 0xFF, no infinity)
F8E4B15 = DType("f8e4b15", Kind.FLOAT, 8, "uint8", coded=True)
F8E4B8 = DType("f8e4b8", Kind.FLOAT, 8, "float8_e4m3fnuz")
F8E5B16 = DType("f8e5b16", Kind.FLOAT, 8, "float8_e5m2fnuz")

ALL: tuple[DType, ...] = (BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, F8E4M3, F8E5M2,
                          F8E4B15, F8E4B8, F8E5B16)

_BY_MARKER: dict[object, DType] = {
    Bool: BOOL, i8: I8, i16: I16, i32: I32, i64: I64, u8: U8, u16: U16, u32: U32, u64: U64,
    f16: F16, bf16: BF16, f32: F32, f64: F64, f8e4m3: F8E4M3, f8e5m2: F8E5M2,
    f8e4b15: F8E4B15, f8e4b8: F8E4B8, f8e5b16: F8E5B16,
}
_MARKER_BY_NAME: dict[str, object] = {d.name: m for m, d in _BY_MARKER.items()}
_BY_HOST: dict[str, DType] = {d.host: d for d in ALL if not d.coded}
_BY_NUMPY: dict[np.dtype[typing.Any], DType] = {d.numpy: d for d in ALL if not d.coded and d.host not in ML_DTYPES}
"""The dtypes by NumPy dtype; ml_dtypes' join on first use (:func:`from_numpy`)."""


def dtype_of(marker: object) -> DType:
    """The runtime dtype of a static marker such as ``tl.f32`` (a DType passes through)."""
    if isinstance(marker, DType):
        return marker
    found = _BY_MARKER.get(marker)
    if found is None:
        raise UsageError(f"{marker!r} is not a tile_lang dtype (expected e.g. tl.f32, tl.i32, tl.bf16)")
    return found


def is_marker(value: object) -> bool:
    """Whether ``value`` is a static dtype marker (``tl.f32``, ``tl.float32``)."""
    try:
        return value in _BY_MARKER
    except TypeError:  # unhashable: not a marker
        return False


def marker_of(dtype: DType) -> object:
    """The static marker (e.g. ``tl.f32``) of a runtime dtype; the value of ``buf.dtype``."""
    return _MARKER_BY_NAME[dtype.name]


def from_numpy(dtype: np.dtype[typing.Any]) -> DType:
    """The tile_lang dtype holding a NumPy (or ml_dtypes) array's elements."""
    host = np.dtype(dtype)
    found = _BY_NUMPY.get(host)
    if found is None and host.name in ML_DTYPES and _BY_HOST[host.name].numpy == host:
        found = _BY_NUMPY[host] = _BY_HOST[host.name]  # an array of ml_dtypes' type: ml_dtypes is loaded
    if found is None:
        raise UsageError(f"NumPy dtype {host} has no tile_lang equivalent")
    return found


# ---------------------------------------------------------------- promotion (Triton's rules)


def _float_rank(d: DType) -> int:
    """Which float wins a promotion: fp8 < bf16 < f16 < f32 < f64 (integers and bools lose to all)."""
    if not d.is_float:
        return -1
    return {8: 0, 16: 2, 32: 3, 64: 4}[d.bits] if d is not BF16 else 1


def promote(a: DType, b: DType) -> DType:
    """Result dtype of an arithmetic op on two tensors, following Triton's promotion rules
    (``computation_type_impl``): f64, then f32, then f16 win (``f16 + bf16`` is f16); bf16 keeps
    bf16 only with bf16 and meets anything else (an integer block, an fp8 one) in f32; two fp8
    formats meet in f16; an integer or bool block takes the other float's type."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if BF16 in (a, b) and max(_float_rank(a), _float_rank(b)) < _float_rank(F16):
            return F32
        if not (a.is_float and b.is_float):
            return a if a.is_float else b
        if a.is_fp8 and b.is_fp8:
            return F16
        return a if _float_rank(a) > _float_rank(b) else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.kind is b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    return unsigned if unsigned.bits >= signed.bits else signed


def argument_dtype(value: bool | int | float | np.generic) -> DType:
    """The dtype a scalar kernel argument is passed as: a NumPy scalar's own (a parameter annotated
    ``n: tl.int64`` is passed as one), else :func:`scalar_dtype`'s."""
    return from_numpy(value.dtype) if isinstance(value, np.generic) else scalar_dtype(value)


def scalar_dtype(value: bool | int | float) -> DType:
    """The dtype Triton gives a Python scalar standing alone (an int beyond 64 bits is the kernel's error)."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return I32
        if -(2**63) <= value < 2**63:
            return I64
        if 0 <= value < 2**64:
            return U64
        raise SemanticError(f"integer {value} does not fit in 64 bits")
    return F32


def promote_scalar(tensor: DType, value: bool | int | float) -> DType:
    """Result dtype of a tensor combined with a Python scalar: the scalar adapts to the tensor
    unless a float meets an integer tensor (then f32). An int meeting an integer tensor takes the
    tensor's dtype even when it does not fit (Triton's rule: ``i32 + 2**40`` is then an error,
    "out of range", not a promotion to i64); the callers check the fit."""
    if isinstance(value, float) and not tensor.is_float:
        return F32
    if isinstance(value, bool) or isinstance(value, float):
        return tensor if not tensor.is_bool else scalar_dtype(value)
    if tensor.is_float:
        return tensor
    if tensor.is_bool:
        return scalar_dtype(value)
    return tensor


@functools.cache
def int_limits(dtype: DType) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (``np.iinfo`` is slow on a hot path)."""
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def truediv_dtype(a: DType, b: DType) -> DType:
    """``/`` on two integers divides in f32, as Triton does; otherwise the promoted float."""
    result = promote(a, b)
    return F32 if not result.is_float else result


# Triton's spellings, so ported kernels keep ``tl.float32`` and friends.
int1: TypeAlias = Bool
int8: TypeAlias = Int[W8]
int16: TypeAlias = Int[W16]
int32: TypeAlias = Int[W32]
int64: TypeAlias = Int[W64]
uint8: TypeAlias = UInt[W8]
uint16: TypeAlias = UInt[W16]
uint32: TypeAlias = UInt[W32]
uint64: TypeAlias = UInt[W64]
float16: TypeAlias = Float[W16]
bfloat16: TypeAlias = Float[WBF16]
float32: TypeAlias = Float[W32]
float64: TypeAlias = Float[W64]
float8e4nv: TypeAlias = Float[WE4M3]
float8e5: TypeAlias = Float[WE5M2]
float8e4b15: TypeAlias = Float[WE4B15]
float8e4b8: TypeAlias = Float[WE4B8]
float8e5b16: TypeAlias = Float[WE5B16]


# ---------------------------------------------------------------- Triton's dtype attributes


@dataclass(frozen=True)
class Query:
    """A question Triton's dtypes answer by a method (``tl.float32.is_floating()``): a
    compile-time bool, callable in kernels on both backends."""

    answer: bool

    def __call__(self) -> bool:
        return self.answer


# Triton's names of the dtypes (``tl.float32.name == "fp32"``)
_TRITON_NAMES = {"bool_": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
                 "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "fp16", "bf16": "bf16", "f32": "fp32",
                 "f64": "fp64", "f8e4m3": "fp8e4nv", "f8e5m2": "fp8e5", "f8e4b15": "fp8e4b15",
                 "f8e4b8": "fp8e4b8", "f8e5b16": "fp8e5b16"}
_INTEGERS = ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_FLOATS = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32", "fp64")
# each float's mantissa bits and exponent bias
_FLOAT_FORMATS = {"fp8e4nv": (3, 7), "fp8e5": (2, 15), "fp8e4b15": (3, 15), "fp8e4b8": (3, 8), "fp8e5b16": (2, 16),
                  "fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127), "fp64": (52, 1023)}


def triton_attributes(d: DType) -> dict[str, object]:
    """What Triton's ``tl.dtype`` of ``d`` answers: its name, widths and ``is_*()`` queries
    (``int1`` counts as an unsigned integer, as in Triton)."""
    name, kind, bits = _TRITON_NAMES[d.name], d.kind, d.bits
    is_float, is_bool = kind is Kind.FLOAT, kind is Kind.BOOL
    attrs: dict[str, object] = {
        "name": name, "primitive_bitwidth": bits, "scalar": marker_of(d),
        "is_floating": Query(is_float), "is_standard_floating": Query(is_float and bits >= 16),
        "is_int": Query(kind in (Kind.INT, Kind.UINT, Kind.BOOL)), "is_int_signed": Query(kind is Kind.INT),
        "is_int_unsigned": Query(kind is Kind.UINT or is_bool), "is_bool": Query(is_bool), "is_ptr": Query(False),
        "is_block": Query(False), "is_fp8": Query(is_float and bits == 8),
        **{f"is_{n}": Query(n == name) for n in (*_INTEGERS, *_FLOATS)},
    }
    if is_float:
        attrs["fp_mantissa_width"], attrs["exponent_bias"] = _FLOAT_FORMATS[name]
    else:
        attrs["int_bitwidth"] = bits
    return attrs


def _attach_triton_attributes() -> None:
    """Give each marker (``tl.f32``, a typing alias; ``tl.bool_``, a class) its Triton attributes."""
    for marker, d in _BY_MARKER.items():
        for attr, value in triton_attributes(d).items():
            (setattr if isinstance(marker, type) else object.__setattr__)(marker, attr, value)


_attach_triton_attributes()
# the names of those queries, which kernels may call (``x.dtype.is_floating()``)
QUERIES = frozenset(attr for attr, value in triton_attributes(F32).items() if isinstance(value, Query))
