"""Triton's libdevice functions beyond ``tl.math`` (``libdevice.pow``, ``libdevice.j0``...): the
LIBDEVICE family. Each takes the dtypes Triton's ``extern_elementwise`` table gives it (the rule,
``tile_lang.semantics.libdevice``, holds them): f32 and f64 for the float functions, i32 and i64
for the bit functions; the signatures below say the same to mypy."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from tile_lang.builtin import libdevice
from tile_lang.dtypes import W32, W64, Bool, Float, Int, UInt
from tile_lang.tensor import R0, R, Tensor

FP = TypeVar("FP", Float[W32], Float[W64])  # libdevice's float functions take f32 or f64, as Triton's
IN = TypeVar("IN", Int[W32], Int[W64])  # its bit functions take i32 or i64
MT = TypeVar("MT", Int[W32], UInt[W32], Int[W64], UInt[W64])  # mulhi's four
I32U = TypeVar("I32U", Int[W32], UInt[W32])  # mul24, hadd, rhadd: i32 or u32


@libdevice
def cbrt(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Cube root."""


@libdevice
def rcbrt(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``1 / cbrt(x)``."""


@libdevice
def exp10(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``10 ** x``."""


@libdevice
def lgamma(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``log(|gamma(x)|)``."""


@libdevice
def tgamma(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The gamma function."""


@libdevice
def erfinv(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The inverse of ``erf``: ``erf(erfinv(y)) == y`` on (-1, 1)."""


@libdevice
def erfcinv(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The inverse of ``erfc``, on (0, 2)."""


@libdevice
def j0(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the first kind of order 0."""


@libdevice
def j1(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the first kind of order 1."""


@libdevice
def y0(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the second kind of order 0 (NaN below 0)."""


@libdevice
def y1(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the second kind of order 1 (NaN below 0)."""


@libdevice
def logb(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The exponent of ``x`` as a float: ``floor(log2(|x|))``, -inf at 0."""


@libdevice
def nearbyint(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Round to the nearest integer value, ties to even."""


@libdevice
def round(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Round to the nearest integer value, ties away from zero (C's ``round``)."""


@libdevice
def cospi(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``cos(pi * x)``, exact for integer and half-integer ``x``."""


@libdevice
def sinpi(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``sin(pi * x)``, exact for integer and half-integer ``x``."""


@libdevice
def rcp_rn(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``1 / x`` rounded to nearest even."""


@libdevice
def rcp_rd(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``1 / x`` rounded down."""


@libdevice
def rcp_ru(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``1 / x`` rounded up."""


@libdevice
def rcp_rz(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """``1 / x`` rounded toward zero."""


@libdevice
def sqrt_rd(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Square root rounded down."""


@libdevice
def sqrt_ru(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Square root rounded up."""


@libdevice
def sqrt_rz(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """Square root rounded toward zero."""


@libdevice
def atan2(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """The angle of the point ``(y=x, x=y)``: ``atan2(x, y)`` is C's ``atan2(x, y)``, in [-pi, pi]."""


@libdevice
def hypot(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``sqrt(x*x + y*y)`` without overflow."""


@libdevice
def fmod(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """C's ``fmod``: ``x - trunc(x / y) * y``, exactly (the sign of ``x``)."""


@libdevice
def remainder(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """IEEE remainder: ``x - n * y`` with ``n`` the integer nearest ``x / y``, ties to even."""


@libdevice
def copysign(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``|x|`` with the sign of ``y``."""


@libdevice
def nextafter(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """The float after ``x`` in the direction of ``y``."""


@libdevice
def fdim(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x - y`` when ``x > y``, else +0 (NaN from a NaN operand)."""


@libdevice
def fmax(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """Maximum; a NaN operand gives the other one (C's ``fmax``)."""


@libdevice
def fmin(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """Minimum; a NaN operand gives the other one (C's ``fmin``)."""


@libdevice
def rhypot(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``1 / hypot(x, y)``."""


@libdevice
def div_rd(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x / y`` rounded down."""


@libdevice
def div_ru(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x / y`` rounded up."""


@libdevice
def div_rz(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x / y`` rounded toward zero."""


@libdevice
def add_rn(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x + y`` rounded to nearest even."""


@libdevice
def add_rz(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x + y`` rounded toward zero."""


@libdevice
def add_rd(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x + y`` rounded down."""


@libdevice
def add_ru(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x + y`` rounded up."""


@libdevice
def sub_rn(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x - y`` rounded to nearest even."""


@libdevice
def sub_rz(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x - y`` rounded toward zero."""


@libdevice
def sub_rd(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x - y`` rounded down."""


@libdevice
def sub_ru(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x - y`` rounded up."""


@libdevice
def mul_rn(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y`` rounded to nearest even."""


@libdevice
def mul_rz(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y`` rounded toward zero."""


@libdevice
def mul_rd(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y`` rounded down."""


@libdevice
def mul_ru(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y`` rounded up."""


@overload
def pow(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]: ...
@overload
def pow(x: Tensor[FP, R], y: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int) -> Tensor[FP, R]: ...
@libdevice
def pow(x: Any, y: Any) -> Any:
    """``x ** y`` (C's ``pow``); an i32 exponent is libdevice's ``powi``."""


@libdevice
def ldexp(x: Tensor[FP, R], y: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int) -> Tensor[FP, R]:
    """``x * 2 ** y``, rounded once."""


@libdevice
def scalbn(x: Tensor[FP, R], y: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int) -> Tensor[FP, R]:
    """``x * 2 ** y``, rounded once (``ldexp``)."""


@libdevice
def norm3d(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
           z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``sqrt(x*x + y*y + z*z)`` without overflow."""


@libdevice
def rnorm3d(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
            z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``1 / norm3d(x, y, z)``."""


@libdevice
def norm4d(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float, z: Tensor[FP, R] | Tensor[FP, R0] | float,
           t: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``sqrt(x*x + y*y + z*z + t*t)`` without overflow."""


@libdevice
def rnorm4d(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float, z: Tensor[FP, R] | Tensor[FP, R0] | float,
            t: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``1 / norm4d(x, y, z, t)``."""


@libdevice
def fast_sinf(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``sin(x)`` by the GPU's approximate ``__sinf``."""


@libdevice
def fast_cosf(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``cos(x)`` by the GPU's approximate ``__cosf``."""


@libdevice
def fast_tanf(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``tan(x)`` by the GPU's approximate ``__tanf``."""


@libdevice
def fast_log2f(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``log2(x)`` by the GPU's approximate ``__log2f``."""


@libdevice
def fast_log10f(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``log10(x)`` by the GPU's approximate ``__log10f``."""


@libdevice
def fast_exp10f(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``10 ** x`` by the GPU's approximate ``__exp10f``."""


@libdevice
def fast_powf(x: Tensor[Float[W32], R], y: Tensor[Float[W32], R] | Tensor[Float[W32], R0] | float) -> Tensor[Float[W32], R]:
    """``x ** y`` by the GPU's approximate ``__powf`` (``exp2(y * log2(x))``)."""


@libdevice
def isinf(x: Tensor[FP, R]) -> Tensor[Bool, R]:
    """Whether ``x`` is +inf or -inf."""


@libdevice
def isnan(x: Tensor[FP, R]) -> Tensor[Bool, R]:
    """Whether ``x`` is a NaN."""


@libdevice
def isfinite(x: Tensor[FP, R]) -> Tensor[Bool, R]:
    """Whether ``x`` is neither infinite nor a NaN."""


@libdevice
def finitef(x: Tensor[Float[W32], R]) -> Tensor[Int[W32], R]:
    """1 where the f32 ``x`` is neither infinite nor a NaN, else 0."""


@libdevice
def isfinited(x: Tensor[Float[W64], R]) -> Tensor[Int[W32], R]:
    """1 where the f64 ``x`` is neither infinite nor a NaN, else 0."""


@libdevice
def signbit(x: Tensor[FP, R]) -> Tensor[Int[W32], R]:
    """1 where the sign bit of ``x`` is set (-0.0 and negative NaNs too), else 0."""


@libdevice
def ilogb(x: Tensor[FP, R]) -> Tensor[Int[W32], R]:
    """The exponent of ``x`` as an i32: INT_MIN for 0 and NaN, INT_MAX for inf."""


@libdevice
def saturatef(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``x`` clamped to [+0, 1]; NaN gives +0."""


@libdevice
def fast_expf(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``exp(x)`` by the GPU's approximate ``__expf``."""


@libdevice
def fast_logf(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``log(x)`` by the GPU's approximate ``__logf``."""


@libdevice
def fast_dividef(x: Tensor[Float[W32], R], y: Tensor[Float[W32], R] | Tensor[Float[W32], R0] | float) -> Tensor[Float[W32], R]:
    """``x / y`` by the GPU's approximate ``__fdividef``."""


@libdevice
def float2int_rn(x: Tensor[Float[W32], R]) -> Tensor[Int[W32], R]:
    """``x`` rounded to the nearest integer, ties to even, saturated to i32 (NaN gives 0)."""


@libdevice
def int_as_float(x: Tensor[Int[W32], R]) -> Tensor[Float[W32], R]:
    """The bits of an i32 as an f32."""


@libdevice
def float_as_int(x: Tensor[Float[W32], R]) -> Tensor[Int[W32], R]:
    """The bits of an f32 as an i32."""


@libdevice
def uint_as_float(x: Tensor[UInt[W32], R]) -> Tensor[Float[W32], R]:
    """The bits of a u32 as an f32."""


@libdevice
def float_as_uint(x: Tensor[Float[W32], R]) -> Tensor[Int[W32], R]:
    """The bits of an f32 as an i32 (Triton's table gives i32)."""


@libdevice
def longlong_as_double(x: Tensor[Int[W64], R]) -> Tensor[Float[W64], R]:
    """The bits of an i64 as an f64."""


@libdevice
def double_as_longlong(x: Tensor[Float[W64], R]) -> Tensor[Int[W64], R]:
    """The bits of an f64 as an i64."""


@libdevice
def popc(x: Tensor[IN, R]) -> Tensor[Int[W32], R]:
    """The number of set bits."""


@libdevice
def clz(x: Tensor[IN, R]) -> Tensor[Int[W32], R]:
    """The number of leading zero bits (the width for 0)."""


@libdevice
def ffs(x: Tensor[IN, R]) -> Tensor[Int[W32], R]:
    """The position of the lowest set bit, counting from 1 (0 for 0)."""


@libdevice
def brev(x: Tensor[IN, R]) -> Tensor[IN, R]:
    """The bits in reverse order."""


@libdevice
def mulhi(x: Tensor[MT, R], y: Tensor[MT, R] | Tensor[MT, R0] | int) -> Tensor[MT, R]:
    """The high half of the double-width product."""


@libdevice
def byte_perm(x: Tensor[Int[W32], R], y: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int, s: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int) -> Tensor[Int[W32], R]:
    """Byte ``i`` of the result is byte ``(s >> 4i) & 7`` of the 8 bytes ``y:x`` (``x`` the low word)."""


@libdevice
def fma_rn(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
           z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y + z`` rounded once, to nearest even."""


@libdevice
def fma_rz(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
           z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y + z`` rounded once, toward zero."""


@libdevice
def fma_rd(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
           z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y + z`` rounded once, down."""


@libdevice
def fma_ru(x: Tensor[FP, R], y: Tensor[FP, R] | Tensor[FP, R0] | float,
           z: Tensor[FP, R] | Tensor[FP, R0] | float) -> Tensor[FP, R]:
    """``x * y + z`` rounded once, up."""


@libdevice
def rsqrt_rn(x: Tensor[Float[W32], R]) -> Tensor[Float[W32], R]:
    """``1 / sqrt(x)`` of an f32, rounded to nearest even."""


@libdevice
def rcp64h(x: Tensor[Float[W64], R]) -> Tensor[Float[W64], R]:
    """The GPU's fast approximate reciprocal of an f64 from its high word (``rcp.approx.ftz.f64``):
    about 20 bits right, the low 32 bits of the result zero, subnormals flushed to zero."""


@libdevice
def hiloint2double(hi: Tensor[Int[W32], R], lo: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int) -> Tensor[Float[W64], R]:
    """The f64 whose high 32 bits are ``hi`` and low 32 bits ``lo``."""


@libdevice
def double2loint(x: Tensor[Float[W64], R]) -> Tensor[Int[W32], R]:
    """The low 32 bits of an f64."""


@libdevice
def double2hiint(x: Tensor[Float[W64], R]) -> Tensor[Int[W32], R]:
    """The high 32 bits of an f64."""


@libdevice
def mul24(x: Tensor[I32U, R], y: Tensor[I32U, R] | Tensor[I32U, R0] | int) -> Tensor[I32U, R]:
    """The low 32 bits of the product of the operands' low 24 bits (signed for i32, from bit 23)."""


@libdevice
def sad(x: Tensor[I32U, R], y: Tensor[I32U, R] | Tensor[I32U, R0] | int,
        z: Tensor[UInt[W32], R] | Tensor[UInt[W32], R0]) -> Tensor[I32U, R]:
    """``|x - y| + z`` (z unsigned), the sum modulo 2**32."""


@libdevice
def hadd(x: Tensor[I32U, R], y: Tensor[I32U, R] | Tensor[I32U, R0] | int) -> Tensor[I32U, R]:
    """``(x + y) >> 1`` without overflow (rounded down)."""


@libdevice
def rhadd(x: Tensor[I32U, R], y: Tensor[I32U, R] | Tensor[I32U, R0] | int) -> Tensor[I32U, R]:
    """``(x + y + 1) >> 1`` without overflow (rounded up)."""


@libdevice
def llrint(x: Tensor[FP, R]) -> Tensor[Int[W64], R]:
    """``x`` rounded to the nearest integer, ties to even, as an i64 (undefined beyond i64 on the GPU)."""


@libdevice
def llround(x: Tensor[FP, R]) -> Tensor[Int[W64], R]:
    """``x`` rounded to the nearest integer, ties away from zero, as an i64 (undefined beyond i64 on the GPU)."""


@libdevice
def jn(n: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int, x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the first kind of integer order ``n``."""


@libdevice
def yn(n: Tensor[Int[W32], R] | Tensor[Int[W32], R0] | int, x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The Bessel function of the second kind of integer order ``n`` (NaN below 0)."""


@libdevice
def cyl_bessel_i0(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The modified Bessel function of the first kind of order 0."""


@libdevice
def cyl_bessel_i1(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The modified Bessel function of the first kind of order 1."""


@libdevice
def erfcx(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The scaled complementary error function, ``exp(x*x) * erfc(x)``."""


@libdevice
def normcdf(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The standard normal distribution's cumulative function, ``erfc(-x / sqrt(2)) / 2``."""


@libdevice
def normcdfinv(x: Tensor[FP, R]) -> Tensor[FP, R]:
    """The inverse of ``normcdf`` on (0, 1): ``-sqrt(2) * erfcinv(2 x)``."""
