"""libdevice's rounding conversions (``libdevice.double2float_rd``, ``float2ll_rz``...): members
of the LIBDEVICE family, one row each of :data:`CONVERSIONS`, which says what each converts from
and to and how it rounds (the rule, the reference and the compiler read it). Triton's table gives
the unsigned conversions' results as signed integers of their width (``float2uint_rn`` is an i32
holding the unsigned value's bits), and so do these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

import tile_lang.dtypes as dtypes
from tile_lang.builtin import libdevice
from tile_lang.dtypes import W32, W64, Dtype, DType, Float, Int, UInt
from tile_lang.tensor import R, Tensor

S = TypeVar("S", bound=Dtype)  # the operand's dtype
T = TypeVar("T", bound=Dtype)  # the result's

MODES = {"rn": "to nearest, ties to even", "rz": "toward zero", "rd": "down (toward -inf)", "ru": "up (toward +inf)"}
"""Each rounding suffix and what it means."""


class Converts(Protocol, Generic[S, T]):
    """A conversion's type: a block of ``S`` to a block of ``T`` of its shape."""

    def __call__(self, x: Tensor[S, R]) -> Tensor[T, R]: ...


@dataclass(frozen=True)
class Conversion:
    """One row: the operand's dtype, the result's (Triton's), whether the value converts to or from
    an unsigned integer (held in a signed result or given as an unsigned operand), the rounding."""

    source: DType
    result: DType
    unsigned: bool
    mode: str  # "rn", "rz", "rd" or "ru"


CONVERSIONS: dict[Callable[..., Any], Conversion] = {}


def _convert(name: str, source: type[S], result: type[T], unsigned: bool = False) -> Converts[S, T]:
    """The builtin ``libdevice.<name>`` of :data:`CONVERSIONS` (its rounding the name's suffix)."""
    mode = name.rpartition("_")[2]
    what = "an unsigned integer (its bits as Triton's signed result)" if unsigned and dtypes.dtype_of(result).is_int \
        else dtypes.dtype_of(result).name

    def fn(x: Any) -> Any:
        pass

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``x`` converted to {what}, rounded {MODES[mode]}."
    declared = libdevice(fn)
    CONVERSIONS[declared] = Conversion(dtypes.dtype_of(source), dtypes.dtype_of(result), unsigned, mode)
    return cast(Converts[S, T], declared)


F32, F64, I32, I64 = Float[W32], Float[W64], Int[W32], Int[W64]

double2float_rn = _convert("double2float_rn", F64, F32)
double2float_rz = _convert("double2float_rz", F64, F32)
double2float_rd = _convert("double2float_rd", F64, F32)
double2float_ru = _convert("double2float_ru", F64, F32)
double2int_rn = _convert("double2int_rn", F64, I32)
double2int_rz = _convert("double2int_rz", F64, I32)
double2int_rd = _convert("double2int_rd", F64, I32)
double2int_ru = _convert("double2int_ru", F64, I32)
double2uint_rn = _convert("double2uint_rn", F64, I32, True)
double2uint_rz = _convert("double2uint_rz", F64, I32, True)
double2uint_rd = _convert("double2uint_rd", F64, I32, True)
double2uint_ru = _convert("double2uint_ru", F64, I32, True)
int2double_rn = _convert("int2double_rn", I32, F64)
uint2double_rn = _convert("uint2double_rn", UInt[W32], F64, True)
float2int_rz = _convert("float2int_rz", F32, I32)
float2int_rd = _convert("float2int_rd", F32, I32)
float2int_ru = _convert("float2int_ru", F32, I32)
float2uint_rn = _convert("float2uint_rn", F32, I32, True)
float2uint_rz = _convert("float2uint_rz", F32, I32, True)
float2uint_rd = _convert("float2uint_rd", F32, I32, True)
float2uint_ru = _convert("float2uint_ru", F32, I32, True)
int2float_rn = _convert("int2float_rn", I32, F32)
int2float_rz = _convert("int2float_rz", I32, F32)
int2float_rd = _convert("int2float_rd", I32, F32)
int2float_ru = _convert("int2float_ru", I32, F32)
uint2float_rn = _convert("uint2float_rn", UInt[W32], F32, True)
uint2float_rz = _convert("uint2float_rz", UInt[W32], F32, True)
uint2float_rd = _convert("uint2float_rd", UInt[W32], F32, True)
uint2float_ru = _convert("uint2float_ru", UInt[W32], F32, True)
float2ll_rn = _convert("float2ll_rn", F32, I64)
float2ll_rz = _convert("float2ll_rz", F32, I64)
float2ll_rd = _convert("float2ll_rd", F32, I64)
float2ll_ru = _convert("float2ll_ru", F32, I64)
float2ull_rn = _convert("float2ull_rn", F32, I64, True)
float2ull_rz = _convert("float2ull_rz", F32, I64, True)
float2ull_rd = _convert("float2ull_rd", F32, I64, True)
float2ull_ru = _convert("float2ull_ru", F32, I64, True)
double2ll_rn = _convert("double2ll_rn", F64, I64)
double2ll_rz = _convert("double2ll_rz", F64, I64)
double2ll_rd = _convert("double2ll_rd", F64, I64)
double2ll_ru = _convert("double2ll_ru", F64, I64)
double2ull_rn = _convert("double2ull_rn", F64, I64, True)
double2ull_rz = _convert("double2ull_rz", F64, I64, True)
double2ull_rd = _convert("double2ull_rd", F64, I64, True)
double2ull_ru = _convert("double2ull_ru", F64, I64, True)
ll2float_rn = _convert("ll2float_rn", I64, F32)
ll2float_rz = _convert("ll2float_rz", I64, F32)
ll2float_rd = _convert("ll2float_rd", I64, F32)
ll2float_ru = _convert("ll2float_ru", I64, F32)
ull2float_rn = _convert("ull2float_rn", UInt[W64], F32, True)
ull2float_rz = _convert("ull2float_rz", UInt[W64], F32, True)
ull2float_rd = _convert("ull2float_rd", UInt[W64], F32, True)
ull2float_ru = _convert("ull2float_ru", UInt[W64], F32, True)
ll2double_rn = _convert("ll2double_rn", I64, F64)
ll2double_rz = _convert("ll2double_rz", I64, F64)
ll2double_rd = _convert("ll2double_rd", I64, F64)
ll2double_ru = _convert("ll2double_ru", I64, F64)
ull2double_rn = _convert("ull2double_rn", UInt[W64], F64, True)
ull2double_rz = _convert("ull2double_rz", UInt[W64], F64, True)
ull2double_rd = _convert("ull2double_rd", UInt[W64], F64, True)
ull2double_ru = _convert("ull2double_ru", UInt[W64], F64, True)
