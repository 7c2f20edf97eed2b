"""Atomic read-modify-write operations; each returns the values memory held before."""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from tile_lang.builtin import builtin, read_modify_write
from tile_lang.dtypes import W16, W32, W64, WBF16, Bool, Float, Int, UInt
from tile_lang.tensor import R0, D, Pointer, R, Tensor

Sem = Literal["relaxed", "acquire", "release", "acq_rel"]
Scope = Literal["gpu", "cta", "sys"]
# The element types each atomic takes, as tile_lang.semantics.memory.atomic_element checks them at
# run time (Triton's): 32/64-bit ints and floats, f16/bf16 for add only, ints only for bitwise ops.
AddT = TypeVar("AddT", bound=Float[W16] | Float[WBF16] | Float[W32] | Float[W64] | Int[W32] | Int[W64] | UInt[W32] | UInt[W64])
NumT = TypeVar("NumT", bound=Float[W32] | Float[W64] | Int[W32] | Int[W64] | UInt[W32] | UInt[W64])
IntT = TypeVar("IntT", bound=Int[W32] | Int[W64] | UInt[W32] | UInt[W64])


@overload
def atomic_add(pointer: Tensor[Pointer[AddT], R], val: Tensor[AddT, R] | Tensor[AddT, R0] | float, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[AddT, R]: ...
@overload
def atomic_add(pointer: Pointer[AddT], val: Tensor[AddT, R0] | float, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[AddT, R0]: ...
@read_modify_write
def atomic_add(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer += val`` atomically (sem defaults to acq_rel, scope to gpu)."""


@overload
def atomic_max(pointer: Tensor[Pointer[NumT], R], val: Tensor[NumT, R] | Tensor[NumT, R0] | float, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[NumT, R]: ...
@overload
def atomic_max(pointer: Pointer[NumT], val: Tensor[NumT, R0] | float, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[NumT, R0]: ...
@read_modify_write
def atomic_max(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer = max(*pointer, val)`` atomically."""


@overload
def atomic_min(pointer: Tensor[Pointer[NumT], R], val: Tensor[NumT, R] | Tensor[NumT, R0] | float, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[NumT, R]: ...
@overload
def atomic_min(pointer: Pointer[NumT], val: Tensor[NumT, R0] | float, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[NumT, R0]: ...
@read_modify_write
def atomic_min(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer = min(*pointer, val)`` atomically."""


@overload
def atomic_and(pointer: Tensor[Pointer[IntT], R], val: Tensor[IntT, R] | Tensor[IntT, R0] | int, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R]: ...
@overload
def atomic_and(pointer: Pointer[IntT], val: Tensor[IntT, R0] | int, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R0]: ...
@read_modify_write
def atomic_and(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer &= val`` atomically."""


@overload
def atomic_or(pointer: Tensor[Pointer[IntT], R], val: Tensor[IntT, R] | Tensor[IntT, R0] | int, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R]: ...
@overload
def atomic_or(pointer: Pointer[IntT], val: Tensor[IntT, R0] | int, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R0]: ...
@read_modify_write
def atomic_or(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer |= val`` atomically."""


@overload
def atomic_xor(pointer: Tensor[Pointer[IntT], R], val: Tensor[IntT, R] | Tensor[IntT, R0] | int, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R]: ...
@overload
def atomic_xor(pointer: Pointer[IntT], val: Tensor[IntT, R0] | int, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[IntT, R0]: ...
@read_modify_write
def atomic_xor(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """``*pointer ^= val`` atomically."""


@overload
def atomic_xchg(pointer: Tensor[Pointer[D], R], val: Tensor[D, R] | Tensor[D, R0] | float, mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[D, R]: ...
@overload
def atomic_xchg(pointer: Pointer[D], val: Tensor[D, R0] | float, mask: Tensor[Bool, R0] | bool | None = None, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[D, R0]: ...
@read_modify_write
def atomic_xchg(pointer: Any, val: Any, mask: Any = None, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """Swap ``val`` into memory atomically."""


@overload
def atomic_cas(pointer: Tensor[Pointer[D], R], cmp: Tensor[D, R] | Tensor[D, R0] | float, val: Tensor[D, R] | Tensor[D, R0] | float, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[D, R]: ...
@overload
def atomic_cas(pointer: Pointer[D], cmp: Tensor[D, R0] | float, val: Tensor[D, R0] | float, sem: Sem | None = None, scope: Scope | None = None) -> Tensor[D, R0]: ...
@builtin
def atomic_cas(pointer: Any, cmp: Any, val: Any, sem: Sem | None = None, scope: Scope | None = None) -> Any:
    """Store ``val`` where memory equals ``cmp``, atomically; returns the old values."""
