"""The LIBDEVICE family's rule (``libdevice.pow``, ``libdevice.popc``... declared in
``tile_lang/ops/libdevice.py``): Triton's ``extern_elementwise`` dispatch. Each function has a
table of overloads (operand dtypes -> result dtype, Triton's); the operands' dtypes (a Python
number's as it stands alone: ``2`` is i32, ``2.0`` f32) pick one, or else the operands promoted
to their common dtype must. Both backends read the chosen operand dtypes and the result dtype."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.builtin import builtin_of
from tile_lang.dtypes import BOOL, F32, F64, I32, I64, U32, U64, DType
from tile_lang.ops import libdevice as ld
from tile_lang.ops.conversions import CONVERSIONS
from tile_lang.semantics.base import Args, SemanticError, broadcast, operand, rule


@dataclass(frozen=True)
class Overload:
    """One row of a function's table: its operands' dtypes and its result's."""

    operands: tuple[DType, ...]
    result: DType

    def __str__(self) -> str:
        return f"({', '.join(repr(d) for d in self.operands)})"


def same(arity: int, *kinds: DType) -> tuple[Overload, ...]:
    """``arity`` operands of one dtype, the result that dtype, for each of ``kinds`` (f32, f64 by default)."""
    return tuple(Overload((kind,) * arity, kind) for kind in kinds or (F32, F64))


def to(result: DType, *kinds: DType) -> tuple[Overload, ...]:
    """One operand of each of ``kinds`` (f32, f64 by default), the result ``result``."""
    return tuple(Overload((kind,), result) for kind in kinds or (F32, F64))


def with_i32(*kinds: DType) -> tuple[Overload, ...]:
    """A float and an i32 (an exponent), the result the float."""
    return tuple(Overload((kind, I32), kind) for kind in kinds or (F32, F64))


UNARY, BINARY = same(1), same(2)

SIGNATURES: dict[Callable[..., Any], tuple[Overload, ...]] = {
    ld.pow: BINARY + with_i32(), ld.ldexp: with_i32(), ld.scalbn: with_i32(), ld.norm3d: same(3),
    ld.rnorm3d: same(3), ld.norm4d: same(4), ld.rnorm4d: same(4),
    ld.finitef: to(I32, F32), ld.isfinited: to(I32, F64),
    ld.isinf: to(BOOL), ld.isnan: to(BOOL), ld.isfinite: to(BOOL), ld.signbit: to(I32), ld.ilogb: to(I32),
    ld.saturatef: same(1, F32), ld.fast_expf: same(1, F32), ld.fast_logf: same(1, F32),
    ld.fast_dividef: same(2, F32), ld.fast_powf: same(2, F32),
    **{fn: same(1, F32) for fn in (ld.fast_sinf, ld.fast_cosf, ld.fast_tanf, ld.fast_log2f, ld.fast_log10f,
                                   ld.fast_exp10f)}, ld.float2int_rn: to(I32, F32),
    ld.popc: to(I32, I32, I64), ld.clz: to(I32, I32, I64), ld.ffs: to(I32, I32, I64), ld.brev: same(1, I32, I64),
    ld.mulhi: same(2, I32, U32, I64, U64), ld.byte_perm: same(3, I32),
    ld.int_as_float: to(F32, I32), ld.float_as_int: to(I32, F32), ld.uint_as_float: to(F32, U32),
    ld.float_as_uint: to(I32, F32), ld.longlong_as_double: to(F64, I64), ld.double_as_longlong: to(I64, F64),
    **{fn: UNARY for fn in (ld.cbrt, ld.rcbrt, ld.exp10, ld.lgamma, ld.tgamma, ld.erfinv, ld.erfcinv, ld.j0, ld.j1,
                            ld.y0, ld.y1, ld.logb, ld.nearbyint, ld.round, ld.cospi, ld.sinpi, ld.rcp_rn, ld.rcp_rd, ld.rcp_ru, ld.rcp_rz,
                            ld.sqrt_rd, ld.sqrt_ru, ld.sqrt_rz)},
    **{fn: BINARY for fn in (ld.atan2, ld.hypot, ld.fmod, ld.remainder, ld.copysign, ld.nextafter, ld.fdim,
                             ld.fmax, ld.fmin, ld.rhypot, ld.div_rd, ld.div_ru, ld.div_rz,
                             ld.add_rn, ld.add_rz, ld.add_rd, ld.add_ru, ld.sub_rn, ld.sub_rz,
                             ld.sub_rd, ld.sub_ru, ld.mul_rn, ld.mul_rz, ld.mul_rd, ld.mul_ru)},
    **{fn: same(3) for fn in (ld.fma_rn, ld.fma_rz, ld.fma_rd, ld.fma_ru)},
    **{fn: UNARY for fn in (ld.cyl_bessel_i0, ld.cyl_bessel_i1, ld.erfcx, ld.normcdf, ld.normcdfinv)},
    **{fn: to(conversion.result, conversion.source) for fn, conversion in CONVERSIONS.items()},
    ld.rsqrt_rn: same(1, F32), ld.rcp64h: same(1, F64), ld.llrint: to(I64), ld.llround: to(I64),
    ld.hiloint2double: (Overload((I32, I32), F64),), ld.double2loint: to(I32, F64), ld.double2hiint: to(I32, F64),
    **{fn: same(2, I32, U32) for fn in (ld.mul24, ld.hadd, ld.rhadd)},
    ld.sad: (Overload((I32, I32, U32), I32), Overload((U32, U32, U32), U32)),
    **{fn: (Overload((I32, F32), F32), Overload((I32, F64), F64)) for fn in (ld.jn, ld.yn)},
}


def chosen(name: str, given: tuple[DType, ...], overloads: tuple[Overload, ...]) -> Overload:
    """The overload ``given`` operand dtypes call: an exact match, else their common dtype's."""
    for candidates in (given, _common(given)):
        for overload in overloads:
            if overload.operands == candidates:
                return overload
    takes = " or ".join(str(o) for o in overloads)
    raise SemanticError(f"libdevice.{name} takes {takes}, got ({', '.join(repr(d) for d in given)})")


def _common(given: tuple[DType, ...]) -> tuple[DType, ...]:
    """Every operand promoted to their common dtype (as Triton's dispatch does when no overload
    matches); pointers have none."""
    if any(d.is_pointer for d in given):
        return given
    return (functools.reduce(dtypes.promote, given),) * len(given)


def _rule(fn: Callable[..., Any], overloads: tuple[Overload, ...]) -> Callable[[Args], dict[str, Any]]:
    """The rule of one function: ``dtypes``, the operand dtypes it computes on, ``dtype``, the result's."""
    op = builtin_of(fn)
    assert op is not None, fn
    params = tuple(inspect.signature(fn).parameters)

    def check(a: Args) -> dict[str, Any]:
        blocks = [operand(a[p]) for p in params]
        functools.reduce(lambda s, t: broadcast(s, t, f"libdevice.{op.name}"), (b.shape for b in blocks))
        picked = chosen(op.name, tuple(b.dtype for b in blocks), overloads)
        return {"dtypes": picked.operands, "dtype": picked.result}

    return check


for _fn, _overloads in SIGNATURES.items():
    rule(_fn)(_rule(_fn, _overloads))
