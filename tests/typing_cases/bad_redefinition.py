# mypy: allow-redefinition
"""Wrong kernels checked under ``allow_redefinition``, as ported kernels are (docs/typing.md): a Python number
re-bound to a block in a loop is then a join (``m = float("-inf")``, ``m = m_new``: ``float |
Tensor[f32, R0]``), which builtins take as its block. Markers as in bad_kernels.py (``# E: <code>
[fragment]``, checked by tests/test_typing.py). Each mistake sits in its own kernel. Never run.
"""

from __future__ import annotations

import tile_lang as tl
from tile_lang import Pointer, constexpr, f16, f32


# ---------------------------------------------------------------- (j) issue 17, sixth round: joins of a Python float and a block
# ``.to`` and ``[...]`` of a join are mypy's own errors (a Python float has neither, and mypy gives a plugin no
# hook for an attribute a class lacks: docs/typing.md, what mypy cannot catch); the builtin the result
# reaches still names its own mistake.


@tl.kernel
def join_converted_then_stored(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    m = float("-inf")
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m_new = tl.maximum(m, tl.max(tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")), axis=0))
        m = m_new
    tl.store(out_ptr, m.to(tl.float64))  # E: union-attr Item "float" of "float | Tensor[Float[W32], R0]" has no attribute "to"  # E: arg-type tl.store: value is f64 but the pointer is to f32


@tl.kernel
def join_converted_to_int_then_exp(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    total = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(out_ptr, tl.exp(total.to(tl.int32)))  # E: union-attr has no attribute "to"  # E: arg-type tl.exp: x is i32, needs a floating-point block


@tl.kernel
def join_compared_then_int_mask(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    m = float("-inf")
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.max(tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")), axis=0))
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=(m > 0.0).to(tl.int32))  # E: union-attr Item "bool" of "bool | Tensor[Bool, R0]" has no attribute "to"  # E: arg-type tl.load: mask is i32, not a bool block


@tl.kernel
def row_join_given_an_axis_then_stored(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for row in range(0, 4):
        acc += tl.load(x_ptr + row * BLOCK + offs)
    tl.store(out_ptr + offs, acc[:, None])  # E: index Value of type "float | Tensor[Float[W32], R1]" is not indexable  # E: arg-type tl.store: value is rank 2 but the pointers are rank 1


@tl.kernel
def scalar_join_given_an_axis_then_stored(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    total = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(out_ptr, total[None])  # E: index is not indexable  # E: arg-type tl.store: value is rank 1 but the pointer is a scalar


@tl.kernel
def row_join_into_f16(x_ptr: Pointer[f32], out_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for row in range(0, 4):
        acc += tl.load(x_ptr + row * BLOCK + offs)
    tl.store(out_ptr + offs, acc)  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def row_join_where_f16(x_ptr: Pointer[f32], h_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for row in range(0, 4):
        acc += tl.load(x_ptr + row * BLOCK + offs)
    tl.store(h_ptr + offs, tl.where(offs < 2, acc, tl.load(h_ptr + offs)))  # E: arg-type tl.where: x is f32 but y is f16


@tl.kernel
def scalar_join_where_f16(x_ptr: Pointer[f32], h_ptr: Pointer[f16], n: int, BLOCK: constexpr) -> None:
    m = float("-inf")
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.max(tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")), axis=0))
    offs = tl.arange(0, BLOCK)
    tl.store(h_ptr + offs, tl.where(offs < 2, tl.load(h_ptr + offs), m))  # E: arg-type tl.where: x is f16 but y is f32
