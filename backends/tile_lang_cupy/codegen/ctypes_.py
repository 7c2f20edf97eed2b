"""C++ spellings of tile_lang dtypes and constants."""

from __future__ import annotations

import math

import numpy as np

from tile_lang import dtypes
from tile_lang.dtypes import DType

_CTYPES = {
    dtypes.BOOL: "bool", dtypes.I8: "signed char", dtypes.I16: "short", dtypes.I32: "int", dtypes.I64: "long long",
    dtypes.U8: "unsigned char", dtypes.U16: "unsigned short", dtypes.U32: "unsigned", dtypes.U64: "unsigned long long",
    dtypes.F16: "__half", dtypes.BF16: "__nv_bfloat16", dtypes.F32: "float", dtypes.F64: "double",
    dtypes.F8E4M3: "__nv_fp8_e4m3", dtypes.F8E5M2: "__nv_fp8_e5m2",
}
_FEATURES = {dtypes.F16: "TL_USE_FP16", dtypes.BF16: "TL_USE_BF16", dtypes.F8E4M3: "TL_USE_FP8",
             dtypes.F8E5M2: "TL_USE_FP8"}


def ctype(dtype: DType) -> str:
    if dtype.is_pointer:
        assert dtype.element is not None
        return f"{ctype(dtype.element)}*"
    return _CTYPES[dtype]


def const_decl(dtype: DType, name: str) -> str:
    """``const T name`` (a constant pointer, for pointers: ``T* const name``)."""
    return f"{ctype(dtype)} const {name}"


def feature(dtype: DType) -> str | None:
    """The header feature macro a dtype needs (cuda_fp16.h and friends), if any."""
    return _FEATURES.get(dtype.element if dtype.is_pointer and dtype.element else dtype)


def compute_dtype(dtype: DType) -> DType:
    """Arithmetic on 16- and 8-bit floats happens in f32 (one rounding back per op)."""
    return dtypes.F32 if dtype.is_float and dtype.bits < 32 else dtype


def literal(value: bool | int | float, dtype: DType) -> str:
    """A C++ constant of ``dtype``; a negative one is parenthesised, so negating it cannot spell ``--2``."""
    text = _literal(value, dtype)
    return f"({text})" if text.startswith("-") else text


_BITS = frozenset({dtypes.F16, dtypes.BF16})
"""The 16-bit floats whose constants are spelt as bits (``tl::from_bits``), so they fold."""


def _bits(value: float, dtype: DType) -> int:
    """The bits of ``value`` rounded to f32 and then to ``dtype`` (nearest even, as ``tl::cvt``)."""
    with np.errstate(over="ignore"):  # beyond the range: inf, as the conversion gives
        return int(np.array(np.float32(value)).astype(dtype.numpy).view(np.uint16))


def _literal(value: bool | int | float, dtype: DType) -> str:
    if dtype.is_bool:
        return "true" if value else "false"
    if dtype.is_float:
        f = float(value)
        c = "float" if dtype.bits <= 32 else "double"
        if math.isnan(f):
            text = "__int_as_float(0x7fc00000)" if c == "float" else "__longlong_as_double(0x7ff8000000000000LL)"
        elif math.isinf(f):
            text = ("" if f > 0 else "-") + ("__int_as_float(0x7f800000)" if c == "float"
                                             else "__longlong_as_double(0x7ff0000000000000LL)")
        else:
            text = repr(f) + ("f" if c == "float" else "")
        if dtype.bits >= 32:
            return text
        if dtype in _BITS and not math.isnan(f):  # f32-rounded first, as the C++ literal is
            return f"tl::from_bits<{ctype(dtype)}>({_bits(f, dtype):#06x})"
        return f"tl::cvt<{ctype(dtype)}>({text})"
    v = int(value)
    if dtype.bits == 64:
        if dtype.is_signed:
            return "(-9223372036854775807LL - 1)" if v == -(2**63) else f"{v}LL"
        return f"{v}ULL"
    if dtype == dtypes.I32:
        return "(-2147483647 - 1)" if v == -(2**31) else str(v)
    if dtype == dtypes.U32:
        return f"{v}u"
    return f"({ctype(dtype)}){v}"


def c_string(text: str) -> str:
    """``text`` as a C++ string literal: printable ASCII as is but for ``"``, ``\\`` and ``?``
    (trigraphs), every other byte in octal; non-ASCII as UTF-8 (a file name's undecodable bytes
    as they were)."""
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127 and char != "?":
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'
