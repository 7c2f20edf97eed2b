"""Elementwise math: transcendental functions, min/max/clamp, fma, where, integer helpers."""

from __future__ import annotations

import enum
from typing import Any, TypeVar, overload

from tile_lang.builtin import builtin, unary_math
from tile_lang.dtypes import W32, Bool, Float, Int, UInt
from tile_lang.func import helper
from tile_lang.operators import BinaryOp, binary
from tile_lang.tensor import R0, D, R, Tensor, W
from tile_lang.tensor import tensor_members

NumT = TypeVar("NumT", bound=Float[Any] | Int[Any] | UInt[Any])
IntT = TypeVar("IntT", bound=Int[Any] | UInt[Any])


@unary_math
def exp(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """e ** x."""


@unary_math
def exp2(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """2 ** x."""


@unary_math
def log(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Natural logarithm."""


@unary_math
def log2(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Base-2 logarithm."""


@unary_math
def cos(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Cosine."""


@unary_math
def sin(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Sine."""


@unary_math
def sqrt(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Square root (may be approximate on the GPU, like Triton's)."""


@unary_math
def sqrt_rn(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Square root rounded to nearest even."""


@unary_math
def rsqrt(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """1 / sqrt(x)."""


@unary_math
def erf(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """The error function."""


@unary_math
def atan(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Arc tangent."""


@unary_math
def tanh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Hyperbolic tangent."""


@unary_math
def tan(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Tangent."""


@unary_math
def asin(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Arc sine."""


@unary_math
def acos(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Arc cosine."""


@unary_math
def sinh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Hyperbolic sine."""


@unary_math
def cosh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Hyperbolic cosine."""


@unary_math
def asinh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Inverse hyperbolic sine."""


@unary_math
def acosh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Inverse hyperbolic cosine."""


@unary_math
def atanh(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Inverse hyperbolic tangent."""


@unary_math
def erfc(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """The complementary error function ``1 - erf(x)``."""


@unary_math
def expm1(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """``exp(x) - 1``, accurate near zero."""


@unary_math
def log1p(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """``log(1 + x)``, accurate near zero."""


@unary_math
def log10(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Base-10 logarithm."""


@unary_math
def trunc(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Round toward zero to an integer value."""


@unary_math
def rint(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Round to the nearest integer value, ties to even."""


@unary_math
def ceil(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Round up to an integer value."""


@unary_math
def floor(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """Round down to an integer value."""


@builtin
def abs(x: Tensor[NumT, R]) -> Tensor[NumT, R]:
    """Absolute value (identity on unsigned integers)."""


class PropagateNan(enum.IntEnum):
    """Triton's ``propagate_nan=`` values for ``tl.maximum``/``tl.minimum``/``tl.clamp``: ``ALL``
    is ``True`` (a NaN operand gives NaN), ``NONE`` is ``False`` (the other operand)."""

    NONE = 0x0000
    ALL = 0xFFFF


@helper
def add(x: Tensor[NumT, R], y: Tensor[NumT, R] | Tensor[NumT, R0] | float, sanitize_overflow: bool = True) -> Tensor[NumT, R]:
    """``x + y``, Triton's function spelling (overflow is the reference's check either way)."""
    return binary(BinaryOp.ADD, x, y)  # type: ignore[no-any-return]


@helper
def sub(x: Tensor[NumT, R], y: Tensor[NumT, R] | Tensor[NumT, R0] | float, sanitize_overflow: bool = True) -> Tensor[NumT, R]:
    """``x - y``, Triton's function spelling."""
    return binary(BinaryOp.SUB, x, y)  # type: ignore[no-any-return]


@helper
def mul(x: Tensor[NumT, R], y: Tensor[NumT, R] | Tensor[NumT, R0] | float, sanitize_overflow: bool = True) -> Tensor[NumT, R]:
    """``x * y``, Triton's function spelling."""
    return binary(BinaryOp.MUL, x, y)  # type: ignore[no-any-return]


@helper
def sigmoid(x: Tensor[Float[W], R]) -> Tensor[Float[W], R]:
    """1 / (1 + exp(-x)), in x's dtype (a 16-bit ``/`` divides in f32, rounded back once)."""
    return (1.0 / (1.0 + exp(-x))).to(x.dtype)


@overload
def maximum(
    x: Tensor[NumT, R], y: Tensor[NumT, R] | Tensor[NumT, R0] | float, propagate_nan: bool | PropagateNan = False
) -> Tensor[NumT, R]: ...
@overload
def maximum(x: float, y: Tensor[NumT, R], propagate_nan: bool | PropagateNan = False) -> Tensor[NumT, R]: ...  # a running value started as a float
@overload
def maximum(x: int, y: int, propagate_nan: bool | PropagateNan = False) -> Tensor[Int[W32], R0]: ...  # two scalars: a rank-0 block
@overload
def maximum(x: float, y: float, propagate_nan: bool | PropagateNan = False) -> Tensor[Float[W32], R0]: ...
@builtin
def maximum(x: Any, y: Any, propagate_nan: bool | PropagateNan = False) -> Any:
    """Elementwise maximum; NaNs propagate only with ``propagate_nan=True`` (Triton's default: not).
    As Triton 3.6's, bf16 compares in f32, and a Python number is an f32 (or i32) tensor first, so
    ``tl.maximum(h, 0.0)`` of f16 is f32 (the mypy plugin types it so)."""


@overload
def minimum(
    x: Tensor[NumT, R], y: Tensor[NumT, R] | Tensor[NumT, R0] | float, propagate_nan: bool | PropagateNan = False
) -> Tensor[NumT, R]: ...
@overload
def minimum(x: float, y: Tensor[NumT, R], propagate_nan: bool | PropagateNan = False) -> Tensor[NumT, R]: ...  # a running value started as a float
@overload
def minimum(x: int, y: int, propagate_nan: bool | PropagateNan = False) -> Tensor[Int[W32], R0]: ...  # two scalars: a rank-0 block
@overload
def minimum(x: float, y: float, propagate_nan: bool | PropagateNan = False) -> Tensor[Float[W32], R0]: ...
@builtin
def minimum(x: Any, y: Any, propagate_nan: bool | PropagateNan = False) -> Any:
    """Elementwise minimum, promoted as :func:`maximum`."""


@builtin
def clamp(
    x: Tensor[Float[W], R],
    min: Tensor[Float[W], R] | Tensor[Float[W], R0] | float,
    max: Tensor[Float[W], R] | Tensor[Float[W], R0] | float,
    propagate_nan: bool | PropagateNan = False,
) -> Tensor[Float[W], R]:
    """``min(max(x, min), max)``, in the dtype the three promote to (bf16: f32, as tl.maximum's)."""


@builtin
def fma(
    x: Tensor[Float[W], R], y: Tensor[Float[W], R] | Tensor[Float[W], R0] | float,
    z: Tensor[Float[W], R] | Tensor[Float[W], R0] | float,
) -> Tensor[Float[W], R]:
    """``x * y + z`` with a single rounding."""


@builtin
def fdiv(x: Tensor[Float[W], R], y: Tensor[Float[W], R] | Tensor[Float[W], R0] | float, ieee_rounding: bool = False) -> Tensor[Float[W], R]:
    """Floating division (approximate unless ``ieee_rounding``)."""


@builtin
def div_rn(x: Tensor[Float[W], R], y: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]:
    """Floating division rounded to nearest even."""


@builtin
def umulhi(x: Tensor[IntT, R], y: Tensor[IntT, R] | Tensor[IntT, R0] | int) -> Tensor[IntT, R]:
    """The high half of the double-width product of two 32- or 64-bit integers, their bits read
    as unsigned whatever their signedness (as Triton's ``__nv_umulhi``)."""


@overload
def cdiv(x: int, div: int) -> int: ...
@overload
def cdiv(x: Tensor[IntT, R], div: Tensor[IntT, R] | Tensor[IntT, R0] | int) -> Tensor[IntT, R]: ...
@helper
def cdiv(x: Any, div: Any) -> Any:
    """Ceiling division ``(x + div - 1) // div``; also usable on the host for grid sizes."""
    return (x + div - 1) // div


# A bool block meeting a Python int is an i32 block, as at run time (dtypes.promote_scalar): Triton's
# ``tl.where(i > 0, a != b, 1)`` counts; a Python bool keeps it a bool block.
@overload
def where(condition: Tensor[Bool, R], x: Tensor[Bool, R], y: bool) -> Tensor[Bool, R]: ...  # type: ignore[overload-overlap]
@overload
def where(condition: Tensor[Bool, R], x: Tensor[Bool, R], y: int) -> Tensor[Int[W32], R]: ...
@overload
def where(condition: Tensor[Bool, R], x: bool, y: Tensor[Bool, R]) -> Tensor[Bool, R]: ...  # type: ignore[overload-overlap]
@overload
def where(condition: Tensor[Bool, R], x: int, y: Tensor[Bool, R]) -> Tensor[Int[W32], R]: ...
@overload
def where(condition: Tensor[Bool, R], x: Tensor[D, R], y: Tensor[D, R] | Tensor[D, R0] | float) -> Tensor[D, R]: ...
@overload
def where(condition: Tensor[Bool, R], x: Tensor[D, R0] | float, y: Tensor[D, R]) -> Tensor[D, R]: ...
@overload
def where(condition: Tensor[Bool, R], x: Tensor[D, R0], y: Tensor[D, R0] | float) -> Tensor[D, R]: ...
@overload
def where(condition: Tensor[Bool, R], x: int, y: int) -> Tensor[Int[W32], R]: ...
@overload
def where(condition: Tensor[Bool, R], x: float, y: float) -> Tensor[Float[W32], R]: ...
@overload
def where(condition: bool, x: Tensor[D, R], y: Tensor[D, R] | Tensor[D, R0] | float) -> Tensor[D, R]: ...
@overload
def where(condition: bool, x: Tensor[D, R0] | float, y: Tensor[D, R]) -> Tensor[D, R]: ...
@overload
def where(condition: bool, x: int, y: int) -> Tensor[Int[W32], R0]: ...  # scalars: program ids, parameters
@overload
def where(condition: bool, x: float, y: float) -> Tensor[Float[W32], R0]: ...
@builtin
def where(condition: Any, x: Any, y: Any) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (broadcast); a Python bool condition (``C == 1`` of a
    constexpr ``C``) picks one of them for the whole block."""


@helper
def swizzle2d(i: int, j: int, size_i: int, size_j: int, size_g: int) -> tuple[int, int]:
    """Reorder a row-major ``size_i x size_j`` grid into groups of ``size_g`` rows (L2 reuse)."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = _min_int(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j


@builtin
def _min_int(a: int, b: int) -> int:
    """Minimum of two scalars (used by swizzle2d)."""


tensor_members(abs)
