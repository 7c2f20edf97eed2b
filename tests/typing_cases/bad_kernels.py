"""One kernel (or launch) per mistake class; ``# E: <code>`` marks each line mypy must flag.

Checked by tests/test_typing.py, which requires exactly these (line, code) pairs. Never run.
"""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import R0, Float, Pointer, Tensor, Tensor0, constexpr, f16, f32, i32

W = TypeVar("W", bound=tl.Width)


# (a) dtype: loading f32 and storing it into an f16 buffer
@tl.kernel
def store_wrong_dtype(x_ptr: Pointer[f32], y_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x)  # E: call-overload
    (y_ptr + offs).store(x)  # E: arg-type


# (b) an i32 tensor used as a mask
@tl.kernel
def int_mask(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs)  # E: call-overload
    tl.store(x_ptr + offs, x, mask=offs % 2)  # E: call-overload


# (c) mismatched ranks: a rank-2 accumulator plus a rank-1 bias
@tl.kernel
def rank_mismatch(bias_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    bias = tl.load(bias_ptr + offs)
    acc = acc + bias  # E: operator
    tl.store(out_ptr + offs, acc)  # E: call-overload


# (d) a lambda and an undecorated function as combine_fn
def plain_add(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a + b


@tl.kernel
def bad_combine(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.reduce(x, 0, lambda a, b: a + b)  # E: call-overload
    tl.reduce(x, 0, plain_add)  # E: call-overload
    tl.associative_scan(x, 0, lambda a, b: a + b)  # E: arg-type
    tl.associative_scan(x, 0, plain_add)  # E: arg-type


# (e) float-only math on ints, `/` on ints, bitwise ops on floats
@tl.kernel
def wrong_category(x_ptr: Pointer[f32], i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = tl.load(i_ptr + offs)
    tl.exp(i)  # E: arg-type
    i / i  # E: operator
    offs / 2  # E: operator
    x & x  # E: operator


# (f) launch mistakes
@tl.kernel
def add_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def generic_kernel(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def bad_launches(n: int) -> None:
    x = tl.empty(n, tl.f32)
    out = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    ints = tl.empty(n, tl.i32)
    add_kernel[(1,)](n, out, n, BLOCK=64)  # E: arg-type
    add_kernel[(1,)](half, out, n, BLOCK=64)  # E: arg-type
    add_kernel[(1,)](x, out, n)  # E: call-arg
    add_kernel[(1,)](x, out, n, BLOCKSIZE=64)  # E: call-arg
    add_kernel[(1, 1, 1, 1)](x, out, n, BLOCK=64)  # E: index
    add_kernel[(1,)](x, out, 1.5, BLOCK=64)  # E: arg-type
    generic_kernel[(1,)](x, half, n, BLOCK=64)  # E: arg-type
    generic_kernel[(1,)](ints, ints, n, BLOCK=64)  # E: arg-type
