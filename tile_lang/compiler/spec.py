"""Specialisation: what a compiled kernel assumes about its arguments (Triton's rules).

Integers equal to 1 become the constant 1; pointers and integers divisible by 16 carry that
fact into axis analysis (so masks and addresses prove 128-bit vector access), and so do
integers that are not negative (so ``x % n`` of an offset built from them keeps its runs).
"""

from __future__ import annotations

import typing
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.signature import ParamKind

DIVISIBILITY = 16


@dataclass(frozen=True)
class ArgSpec:
    """One runtime argument as compiled: its IR dtype and what is known about its value."""

    dtype: DType  # ptr<elem> for pointers
    divisible_by_16: bool = False
    equals_one: bool = False
    nonnegative: bool = False

    def key(self) -> str:
        flags = ("d" if self.divisible_by_16 else "") + ("1" if self.equals_one else "") + ("+" if self.nonnegative else "")
        return f"{self.dtype.name}{':' + flags if flags else ''}"


@dataclass(frozen=True)
class Spec:
    """Everything a compiled module depends on besides the source: arguments, constexprs, warps
    and software-pipelining stages."""

    args: tuple[ArgSpec, ...]
    constexprs: tuple[tuple[str, Any], ...]
    num_warps: int = 4
    num_stages: int = 3
    arch: int = 80  # the target's compute capability (90: Hopper's wgmma); 80 runs on sm_80 and later

    def key(self) -> str:
        consts = ",".join(f"{k}={v!r}" for k, v in self.constexprs)
        return f"{';'.join(a.key() for a in self.args)}|{consts}|w{self.num_warps}|s{self.num_stages}|a{self.arch}"


def int_spec(value: int | np.integer[Any]) -> ArgSpec:
    """An int argument: i32 when it fits, else i64 (u64 at 2**63 and above), as Triton types it; a
    NumPy integer (a parameter annotated ``tl.int64``) as its own dtype."""
    dtype = dtypes.argument_dtype(value)
    value = int(value)
    return ArgSpec(dtype, value % DIVISIBILITY == 0, value == 1, value >= 0)


def argument_spec(value: bool | int | float | np.generic) -> ArgSpec:
    """A checked scalar argument as compiled: a bool, an int by :func:`int_spec`, a float as f32, a
    NumPy scalar (a parameter annotated with a dtype) as its dtype."""
    if isinstance(value, (bool, np.bool_)):
        return ArgSpec(dtypes.BOOL)
    if isinstance(value, (int, np.integer)):
        return int_spec(value)
    return ArgSpec(dtypes.argument_dtype(value))


def pointer_spec(element: DType, address: int) -> ArgSpec:
    return ArgSpec(element.pointer_to(), address % DIVISIBILITY == 0)


def scalar_spec(annotation: Any, value: Any) -> ArgSpec:
    if annotation is bool:
        return ArgSpec(dtypes.BOOL)
    if annotation is int:
        return int_spec(int(value))
    return ArgSpec(dtypes.F32)


def static_spec(kernel: Any, constexprs: Mapping[str, Any], num_warps: int = 4,
                pointee: DType = dtypes.F32, num_stages: int = 3, arch: int = 80,
                pointees: Mapping[str, DType] | None = None, divisible: Collection[str] = (),
                ones: Collection[str] = (), negative: Collection[str] = ()) -> Spec:
    """A specialisation without a launch (for ``inspect`` and compile checks): pointers aligned,
    ints as i32 >= 0 like the sizes and strides most launches pass (those named in ``divisible``
    as multiples of 16, those in ``ones`` as equal to 1, those in ``negative`` of either sign, as a
    launch with such values specialises them), a generic pointer's
    pointee as given in ``pointees`` (by parameter name), else ``pointee``."""
    args = []
    for param in kernel.runtime_params:
        if param.kind is ParamKind.POINTER:
            element = _concrete(param.annotation) or (pointees or {}).get(param.name) or pointee
            args.append(ArgSpec(element.pointer_to(), True))
        elif param.annotation is int:
            args.append(ArgSpec(param.dtype or dtypes.I32, param.name in divisible, param.name in ones,
                                param.name not in negative))
        else:
            args.append(ArgSpec(param.dtype) if param.dtype is not None else scalar_spec(param.annotation, 0))
    return Spec(tuple(args), tuple(sorted(constexprs.items())), num_warps, num_stages, arch)


def _concrete(annotation: Any) -> DType | None:
    if isinstance(annotation, typing.TypeVar):
        return None
    try:
        return dtypes.dtype_of(annotation)
    except TypeError:
        return None
