# mypy: disallow-any-expr, allow-redefinition
"""Liger-Kernel's idioms, annotated, that must check cleanly under ``mypy --strict`` (issue "Types
that fit other people's kernels"): pointer parameters re-bound per row, scalar parameters
converted with ``.to``, names re-bound to another dtype, loops over loaded bounds, and an online
softmax's running max, Python's ``min`` of scalar bounds, ``tl.where`` on a constexpr
comparison. The ``allow-redefinition`` line above is mypy's option for re-binding a
name to a value of another type (``X_row = X_row.to(tl.float32)``); without it, use a new name
(``good_kernels.py`` does). Checked by tests/test_typing.py, which also imports the module.
"""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import assert_type

import tile_lang as tl
from tile_lang import R0, Constexpr, Float, Pointer, Tensor, constexpr, f32, i32, i64

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def rms_norm_rows(Y_ptr: Pointer[Float[W]], X_ptr: Pointer[Float[W]], W_ptr: Pointer[f32], row_stride: int,
                  n_cols: int, eps: tl.FloatScalar, offset: tl.FloatScalar, BLOCK: constexpr) -> None:
    row = tl.program_id(0).to(tl.int64)
    Y_ptr += row * row_stride                                   # a pointer plus a scalar offset: a pointer
    X_ptr += row * row_stride
    assert_type(X_ptr, Pointer[Float[W]])
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    X_row = tl.load(X_ptr + cols, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    X_row = X_row.to(tl.float32)                                # re-bound to f32 (allow-redefinition)
    eps = eps.to(tl.float32)                                    # a float parameter is an f32 scalar
    offset = offset.to(tl.float32)
    assert_type(eps, Tensor[f32, R0])
    rstd = tl.rsqrt(tl.sum(X_row * X_row, axis=0) / n_cols + eps)
    W_row = tl.load(W_ptr + cols, mask=mask, other=0)
    tl.store(Y_ptr + cols, (X_row * rstd * (offset + W_row)).to(X_row_dtype), mask=mask)


@tl.kernel
def rows_by_program(Y_ptr: Pointer[f32], X_ptr: Pointer[f32], n_rows: tl.IntScalar, rows_per_program: int,
                    BLOCK: constexpr) -> None:
    row_start = tl.program_id(0) * rows_per_program
    row_end = tl.minimum(n_rows.to(tl.int32), row_start + rows_per_program)   # a scalar block bound
    cols = tl.arange(0, BLOCK)
    for row in tl.range(row_start, row_end):
        assert_type(row, Tensor[i32, R0])                       # checked in the body, not Any
        x = tl.load(X_ptr + row * BLOCK + cols)
        tl.store(Y_ptr + row * BLOCK + cols, x * 2.0)


@tl.kernel
def online_max(X_ptr: Pointer[f32], out_ptr: Pointer[f32], n_cols: int, BLOCK: constexpr) -> None:
    m = tl.full((), float("-inf"), tl.float32)                   # the running max as an f32 scalar block
    d = tl.full((), 0.0, tl.float32)
    for i in range(0, n_cols, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        blk = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(blk, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(blk - m_new), axis=0)
        m = m_new
    tl.store(out_ptr, m + tl.log(d))


@tl.kernel
def indexed_rows(X_ptr: Pointer[f32], starts_ptr: Pointer[i64], out_ptr: Pointer[f32], HAS_SCALE: Constexpr[bool],
                 BLOCK: constexpr) -> None:
    start = tl.load(starts_ptr + tl.program_id(0))
    X_ptr += start
    cols = tl.arange(0, BLOCK)
    x = tl.load(X_ptr + cols)
    if HAS_SCALE:
        x = x * 0.5
    tl.store(out_ptr + tl.program_id(0) * BLOCK + cols, x)


@tl.kernel
def rows_up_to_min(Y_ptr: Pointer[f32], X_ptr: Pointer[f32], n_rows: int, rows_per_program: int,
                   BLOCK: constexpr) -> None:
    row_block = tl.program_id(0).cast(tl.int64)                 # Triton's other spelling of .to
    row_start = row_block * rows_per_program
    row_end = min((row_block + 1) * rows_per_program, n_rows)   # Python's min of scalars: tl.minimum
    assert_type(row_end, Tensor[i64, R0])
    cols = tl.arange(0, BLOCK)
    for row in range(row_start, row_end):
        tl.store(Y_ptr + row * BLOCK + cols, tl.load(X_ptr + row * BLOCK + cols) + 1.0)


@tl.kernel
def rows_shared_or_own(X_ptr: Pointer[f32], out_ptr: Pointer[f32], row_stride: int, SHARED: constexpr,
                       BLOCK: constexpr) -> None:
    pid = tl.program_id(0).to(tl.int64)
    X_ptr += tl.where(SHARED == 1, pid * 0, pid * row_stride)  # one of the two for the whole block
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + pid * BLOCK + cols, tl.load(X_ptr + cols))
