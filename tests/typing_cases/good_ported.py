# mypy: disallow-any-expr, allow-redefinition
"""Spellings found porting kernels nobody here wrote (Liger-Kernel, Unsloth, FlagGems, Triton's
tutorials; issue "Types that fit other people's kernels"), each a class of false positive the types
now accept. Written here, not copied: one small kernel per class. Checked by tests/test_typing.py
with ``mypy --strict``, and run there on the NumPy reference and the emulator against float64 NumPy.
"""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import assert_type

import tile_lang as tl
from tile_lang import R0, R1, R2, W16, W32, W64, WBF16, Float, Pointer, Tensor, constexpr, f16, f32, i16, i32, i64
from tile_lang.ops.memory import CacheModifier

W = TypeVar("W", bound=tl.Width)


@tl.kernel
def scalar_from_dtype(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_cols: int, BLOCK: constexpr) -> None:
    """``tl.float32(v)``: a dtype called on a Python number is a rank-0 block of that dtype."""
    total = tl.float32(0.0)
    peak = tl.float32(-float("inf"))
    assert_type(total, Tensor[f32, R0])
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n_cols, other=0.0)
        total += tl.sum(x, axis=0)
        peak = tl.maximum(peak, tl.max(x, axis=0))
    tl.store(out_ptr, total + peak)


@tl.kernel
def python_float_then_block(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_cols: int, BLOCK: constexpr) -> None:
    """``m = float("-inf")`` before a loop, ``m = m_new`` (a rank-0 block) in it: builtins take the
    joined ``float | Tensor0`` as the block, and a store reads the block's dtype."""
    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        blk = tl.load(x_ptr + offs, mask=offs < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(blk, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(blk - m_new), axis=0)
        m = m_new
    tl.store(out_ptr, m + tl.log(d))
    tl.store(out_ptr + 1, tl.cast(d, tl.float32))


@tl.kernel
def convert_to_constexpr_dtype(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n: int, X_dtype: constexpr,
                               ACC_dtype: constexpr, BLOCK: constexpr) -> None:
    """``.to(X_dtype)``, ``tl.cast(x, X_dtype)`` and ``tl.zeros(..., dtype=ACC_dtype)`` with bare
    constexpr dtypes: blocks of an unknown dtype that keep their rank."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK,), dtype=ACC_dtype)
    y = (x * 2.0 + acc).to(X_dtype)
    tl.store(y_ptr + offs, tl.cast(x, X_dtype), mask=offs > n)
    tl.store(y_ptr + offs, y, mask=offs < n)


@tl.kernel
def mixed_int_widths(x_ptr: Pointer[f32], n_ptr: Pointer[i64], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """An i32 block against an i64 one (``offs < n`` with ``n`` loaded as i64): the wider type, as the
    run time promotes; float widths stay apart on purpose."""
    n = tl.load(n_ptr)
    offs = tl.arange(0, BLOCK)
    assert_type(offs < n, Tensor[tl.Bool, R1])
    assert_type(offs + n, Tensor[i64, R1])
    assert_type(offs[:, None] * n, Tensor[i64, R2])
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.rsqrt(4.0), mask=mask)


@tl.kernel
def python_int_cast(x_ptr: Pointer[f32], out_ptr: Pointer[i64], n_cols: int, BLOCK: constexpr) -> None:
    """``tl.cast`` of a Python int (a scalar parameter, or ``best = 0`` re-bound to a block in a loop)."""
    best = 0
    top = float("-inf")
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n_cols, other=float("-inf"))
        here = tl.argmax(x, axis=0) + start
        best = tl.where(tl.max(x, axis=0) > top, here, best)
        top = tl.maximum(top, tl.max(x, axis=0))
    tl.store(out_ptr, tl.cast(best, tl.int64))
    tl.store(out_ptr + 1, tl.cast(n_cols, tl.int64))


@tl.kernel
def shape_of_a_block(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """``tl.zeros(x.shape, x.dtype)`` keeps ``x``'s rank, and ``tl.zeros(())`` is a rank-0 block."""
    rows = tl.arange(0, BLOCK)
    offs = rows[:, None] * BLOCK + rows[None, :]
    x = tl.load(x_ptr + offs)
    zero = tl.zeros(x.shape, dtype=x.dtype)
    assert_type(zero, Tensor[f32, R2])
    count = tl.zeros((), tl.float32)
    count += tl.sum(tl.sum(tl.where(x > 0.5, 1.0, zero), axis=1), axis=0)
    tl.store(out_ptr + offs, tl.where(x > 0.5, x, zero) + count)


AtomicWidth = TypeVar("AtomicWidth", W16, WBF16, W32, W64)  # the float widths atomic_add takes


@tl.kernel
def generic_atomic_accumulate(x_ptr: Pointer[Float[AtomicWidth]], acc_ptr: Pointer[Float[AtomicWidth]], n: int,
                              BLOCK: constexpr) -> None:
    """A kernel generic over float widths that accumulates with ``tl.atomic_add``: its width variable
    is constrained to the widths the atomic takes (a bound to every ``Width`` would admit fp8)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr + offs % 8, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)


@tl.func
def converted(x: Tensor[f32, R1], dtype: constexpr) -> Tensor[f32, R1]:
    """A helper given a dtype for a bare constexpr (tutorial 06's ``dtype`` argument)."""
    return x.to(dtype).to(tl.float32)


@tl.kernel
def local_constexprs(x_ptr: Pointer[f32], n_ptr: Pointer[i32], out_ptr: Pointer[f32], TALL: constexpr,
                     FLAT: constexpr, BLOCK: constexpr) -> None:
    """Local constants annotated ``tl.constexpr`` take their value's type (``LN2: tl.constexpr = 0.69``,
    a tuple chosen by a constexpr), a dtype passed for a helper's bare constexpr, a constexpr
    ``tl.range`` flag, a hint's list of values, and a block pointer whose shape is a loaded extent."""
    LN2: tl.constexpr = 0.6931471805599453
    TILE: tl.constexpr = (4, 8) if TALL else (8, 4)
    LOWEST: tl.constexpr = float("-inf")
    HALF: tl.constexpr = -0.5
    assert_type(LN2, float)
    assert_type(LOWEST, float)
    assert_type(HALF, float)
    n = tl.load(n_ptr)
    rows = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))
    x = tl.maximum(tl.load(rows, boundary_check=(0,), padding_option="zero"), LOWEST) * (HALF * -2.0)
    ones = tl.sum(tl.sum(tl.zeros(TILE, tl.float32) + 1.0, axis=1), axis=0)
    offs = tl.arange(0, BLOCK)
    tl.multiple_of(offs, [BLOCK])
    total = tl.zeros((BLOCK,), tl.float32)
    for _ in tl.range(0, 2, flatten=FLAT):
        total += converted(x, tl.float16) * LN2
    tl.store(out_ptr + offs, total + ones)


@tl.kernel
def group_starts(x_ptr: Pointer[f32], count_ptr: Pointer[i64], total_ptr: Pointer[i64], n: int, BLOCK: constexpr) -> None:
    """A bool block meeting a Python int in ``tl.where`` is an i32 block, as at run time (FlagGems'
    unique_consecutive counts group starts so); an i32 block stored into an i64 buffer, and a ``where``
    of i64 and i32 blocks, widen losslessly as the run time does."""
    i = tl.arange(0, BLOCK)
    mask = i < n
    a = tl.load(x_ptr + i, mask=mask, other=0.0)
    b = tl.load(x_ptr + tl.where(i > 0, i - 1, 0), mask=mask, other=0.0)
    starts = tl.where(i > 0, a != b, 1)
    assert_type(starts, Tensor[i32, R1])
    running = tl.cumsum(starts, axis=0)
    tl.store(count_ptr + i, running, mask=mask)
    base = tl.load(total_ptr)
    last = tl.where(i == n - 1, base + running, running)
    assert_type(last, Tensor[i64, R1])
    tl.store(total_ptr + 1 + i, last, mask=mask)


@tl.kernel
def scalar_arithmetic_converts(x_ptr: Pointer[f32], out_ptr: Pointer[f32], H: tl.IntScalar, stride: int,
                               BLOCK: constexpr) -> None:
    """``(tl.program_id(0) // H).to(tl.int64)``: a scalar's arithmetic converted with ``.to`` is the
    rank-0 block it is at run time (tutorial 06's ``off_z = off_hz // H``, then ``off_z.to(tl.int64)``);
    unconverted it stays an ``int``, so a name bound to it may be re-bound to an int."""
    pid = tl.program_id(0)
    group = pid // H
    row = group.to(tl.int64) * stride + (pid % H).to(tl.int64) * BLOCK
    assert_type(row, Tensor[i64, R0])
    start = pid * 0
    if start < 0:
        start = 0
    offs = row + start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + (2 * pid + 1).to(tl.float32))


@tl.kernel
def offsets_first_and_scalar_extrema(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """``pid + ptr`` and ``offs + ptr`` (FlagGems' ``feat_pid + mean_pointer``), and ``tl.minimum`` of two
    Python ints (FlagGems' ``tl.minimum(k0 + PANEL, N)``), a rank-0 i32 block as at run time."""
    pid = tl.program_id(0)
    end = tl.minimum(pid * BLOCK + BLOCK, n)
    assert_type(end, Tensor[i32, R0])
    offs = tl.arange(0, BLOCK)
    here = pid * BLOCK + offs
    x = tl.load(here + x_ptr, mask=here < end)
    tl.store(pid * BLOCK + out_ptr + offs, x * 2.0, mask=here < end)


@tl.func
def generic_max(a: Tensor[Float[W], R0], b: Tensor[Float[W], R0]) -> Tensor[Float[W], R0]:
    """A combine function generic over the width, as FlagGems' ``_reduce_mul`` is once annotated."""
    return tl.maximum(a, b)


@tl.kernel
def reduce_with_a_generic_combine(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    """``tl.reduce`` / ``tl.associative_scan`` with a generic ``@tl.func``: its width is the block's."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    peak = tl.reduce(x, 0, generic_max)
    assert_type(peak, Tensor[Float[W], R0])
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, generic_max) - peak)


@tl.kernel
def dot_into_constexpr_dtype(a_ptr: Pointer[f16], c_ptr: Pointer[f32], ACC_DTYPE: constexpr, BLOCK: constexpr) -> None:
    """``tl.dot(a, b, out_dtype=ACC_DTYPE)`` with a bare constexpr dtype (FlagGems' scaled_mm): a block of
    that (unknown) dtype and the inputs' rank; the inputs keep their check."""
    o = tl.arange(0, BLOCK)
    tile = o[:, None] * BLOCK + o[None, :]
    a = tl.load(a_ptr + tile)
    acc = tl.dot(a, a, out_dtype=ACC_DTYPE)
    tl.store(c_ptr + tile, acc.to(tl.float32))


@tl.kernel
def cache_hints_from_constexprs(x_ptr: Pointer[f32], out_ptr: Pointer[f32], LOAD_HINT: constexpr, EVICTION: constexpr,
                                STORE_HINT: tl.Constexpr[CacheModifier], BLOCK: constexpr) -> None:
    """``cache_modifier=`` / ``eviction_policy=`` given a bare constexpr (Liger's ``cache_modifier=CACHE``),
    or a ``Constexpr[CacheModifier]``, whose values the launch and the run time check."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, cache_modifier=LOAD_HINT, eviction_policy=EVICTION)
    tl.store(out_ptr + offs, x + 1.0, cache_modifier=STORE_HINT)


@tl.kernel
def rms_norm_by_mode(x_ptr: Pointer[Float[W]], w_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], rstd_ptr: Pointer[f32],
                     n_cols: int, eps: tl.FloatScalar, MODE: constexpr, BLOCK: constexpr) -> None:
    """A dtype chosen by a branch on a constexpr (Liger's rms_norm ``casting_mode``): after the ``if`` the
    name is a choice, ``Tensor[Float[W], R1] | Tensor[f32, R1]``; operators, builtins and the store take
    it where one choice of members is legal (``x * x`` in f32 or in ``W``, never mixed)."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    x_dtype = x.dtype
    if MODE == 1:  # everything in f32, the result converted back
        x = x.to(tl.float32)
        w = w.to(tl.float32)
        eps = eps.to(tl.float32)
    else:
        eps = eps.to(x_dtype)
    assert_type(x, Tensor[Float[W], R1] | Tensor[f32, R1])
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd.to(tl.float32))
    y = x * rstd * w
    if MODE == 1:
        y = y.to(x_dtype)
    tl.store(y_ptr + row * n_cols + offs, y, mask=mask)


@tl.kernel
def compute_dtype_by_branch(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    """``cdtype = tl.float32 if <narrow> else x_ptr.dtype.element_ty`` (FlagGems' gemma_rms_norm, renorm):
    a choice of dtypes; ``.to(cdtype)`` and ``tl.zeros(..., dtype=cdtype)`` are choices of blocks."""
    cdtype = tl.float32 if x_ptr.dtype.element_ty == tl.float16 else x_ptr.dtype.element_ty
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=cdtype)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(cdtype)
    acc += x * x
    tl.store(y_ptr + offs, (acc + tl.sum(x, axis=0)).to(x_ptr.dtype.element_ty), mask=offs < n)


@tl.kernel
def dtype_picked_by_the_pointer(x_ptr: Pointer[f32], y_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    """Each branch converts to a concrete dtype, picked by the pointer's (tutorial 09's ``if
    c_ptr.dtype.element_ty == tl.float8e4nv``): a member stands for ``W`` where no exact choice fits, as the
    launch whose pointer has that dtype runs that branch."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if y_ptr.dtype.element_ty == tl.bfloat16:
        y = x.to(tl.bfloat16)
    else:
        y = x.to(tl.float16)
    tl.store(y_ptr + offs, y)


@tl.kernel
def pointer_type_element(x_ptr: Pointer[f32], y_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    """``y_ptr.type.element_ty`` (tutorial 06's ``Out.type.element_ty``), Triton's other spelling of
    ``y_ptr.dtype.element_ty``."""
    assert_type(y_ptr.type.element_ty, type[Float[W]])
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, (tl.load(x_ptr + offs) * 2.0).to(y_ptr.type.element_ty))


@tl.kernel
def shapes_as_lists(x_ptr: Pointer[f32], y_ptr: Pointer[f32], BM: constexpr, BN: constexpr) -> None:
    """A shape written as a list display (FlagGems' ``val.reshape([BLOCK_M])``, ``tl.zeros([M, N], ...)``):
    the block's rank is the list's length, as for a tuple (issue 17, third round)."""
    rows = tl.arange(0, BM)
    tile = tl.load(x_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :])
    flat = tile.reshape([BM * BN])
    assert_type(flat, Tensor[f32, R1])
    assert_type(tl.reshape(flat, [BM, BN]), Tensor[f32, R2])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    assert_type(acc, Tensor[f32, R2])
    acc += tl.reshape(flat, [BM, BN]).permute([1, 0]).permute([1, 0])
    tl.store(y_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], acc + tl.full([BM, 1], 1.0, tl.float32))


@tl.kernel
def where_of_scalars(x_ptr: Pointer[f32], y_ptr: Pointer[f32], GROUP: constexpr, BLOCK: constexpr) -> None:
    """``tl.where`` of a Python-bool condition and two Python ints (FlagGems' bmm, Liger's fused MoE
    group sizes, ``tl.where(last > grid, grid % GROUP, GROUP)``): a rank-0 i32 block."""
    pid = tl.program_id(0)
    grid = tl.num_programs(0)
    size = tl.where(pid * GROUP + GROUP > grid, grid % GROUP, GROUP)
    assert_type(size, Tensor[i32, R0])
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    tl.store(y_ptr + pid * BLOCK + offs, x * size.to(tl.float32) + tl.where(pid > 0, 0.5, 1.5))


@tl.kernel
def constexpr_dtype_default(x_ptr: Pointer[f32], y_ptr: Pointer[f32], n: int, BLOCK: constexpr,
                            ACC: constexpr = tl.float32) -> None:
    """A bare constexpr defaulting to a dtype (Unsloth's grouped GEMM, ``acc_dtype: tl.constexpr =
    tl.float32``): checked as that dtype, as a launch keeping the default runs; a launch may pass another."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=ACC)
    assert_type(acc, Tensor[f32, R1])
    acc += tl.load(x_ptr + offs, mask=offs < n).to(ACC) * 2
    tl.store(y_ptr + offs, acc.to(tl.float32), mask=offs < n)


# ---------------------------------------------------------------- issue 17, fourth round


WO = TypeVar("WO", bound=tl.Width)


@tl.kernel
def choice_for_a_second_width(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[WO]], BLOCK: constexpr) -> None:
    """A dtype picked by the output pointer's in a kernel over two widths (Unsloth's fp8 matmul: fp8
    operands in ``Float[W]``, ``C`` in its own): a branch's member stands for the variable of the pointer it
    is stored through, not only for the kernel's first one."""
    offs = tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs).to(tl.float32) * 3.0
    if y_ptr.dtype.element_ty == tl.bfloat16:
        y = acc.to(tl.bfloat16)
    elif y_ptr.dtype.element_ty == tl.float16:
        y = acc.to(tl.float16)
    else:
        y = acc
    tl.store(y_ptr + offs, y)


@tl.kernel
def dtype_annotations(x_ptr: Pointer[f32], y_ptr: Pointer[Float[W]], z_ptr: Pointer[Float[W]], Z_DTYPE: tl.dtype,
                      BLOCK: constexpr) -> None:
    """``tl.dtype`` as an annotation (Unsloth's grouped GEMM, ``output_dtype: tl.dtype =
    y_ptr.dtype.element_ty``; a parameter ``Z_DTYPE: tl.dtype``, typed at each launch as Triton reads it):
    a dtype not known statically; ``.to(it)`` keeps the rank."""
    offs = tl.arange(0, BLOCK)
    out_dtype: tl.dtype = y_ptr.dtype.element_ty
    x = tl.load(x_ptr + offs)
    y = (x * 2.0).to(out_dtype)
    tl.store(y_ptr + offs, y)
    tl.store(z_ptr + offs, (x - 1.0).to(Z_DTYPE))


@tl.kernel
def range_with_hints(x_ptr: Pointer[f32], y_ptr: Pointer[f32], n_rows: int, FLATTEN: constexpr,
                     BLOCK: constexpr) -> None:
    """Python's ``range`` given ``tl.range``'s hints (Unsloth's ``range(NUM_EXPERTS, flatten=FLATTEN)``):
    Triton's front end takes and ignores them, and so do mypy (with the plugin) and the run time."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for row in range(n_rows, flatten=FLATTEN):
        acc += tl.load(x_ptr + row * BLOCK + offs)
    for row in range(0, n_rows, 2, num_stages=2, loop_unroll_factor=1):
        acc += tl.load(x_ptr + row * BLOCK + offs)
    tl.store(y_ptr + offs, acc)


@tl.kernel
def dtype_of_a_choice(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], CAST_FP32: constexpr,
                      BLOCK: constexpr) -> None:
    """``.to(x.dtype)`` with ``x`` a block whose dtype a branch chose (Liger's mhc backward, ``gx.to(x.dtype)``
    after ``if CAST_FP32: x = x.to(tl.float32)``): ``x.dtype`` is a choice of dtypes, checked member by
    member like the block."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if CAST_FP32:
        x = x.to(tl.float32)
    g = x * 2.0 + 1.0
    tl.store(y_ptr + offs, g.to(x.dtype).to(y_ptr.dtype.element_ty))


@tl.kernel
def int_joined_with_indices_widens(x_ptr: Pointer[f32], idx_ptr: Pointer[i64], n: int, BLOCK: constexpr) -> None:
    """An index started as a Python int and re-bound to i32 blocks in a loop (Liger's cross entropy
    ``argmax_idx = 0``, then a ``tl.where`` of block argmaxes), stored into an i64 buffer: the store widens
    it losslessly, as it widens an i32 block."""
    best_value = float("-inf")
    best = 0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
        block_max = tl.max(x, axis=0)
        best = tl.where(block_max > best_value, tl.argmax(x, axis=0) + start, best)
        best_value = tl.maximum(best_value, block_max)
    tl.store(idx_ptr, best)


@tl.kernel
def unsigned_offsets(x_ptr: Pointer[f32], y_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """Pointers offset by unsigned blocks (Liger's fused MoE indexes with ``.to(tl.uint32)`` offsets):
    Triton adds any integer block to a pointer, and so does the run time."""
    offs = tl.arange(0, BLOCK).to(tl.uint32)
    assert_type(x_ptr + offs, Tensor[tl.Pointer[f32], R1])
    rows = (tl.arange(0, BLOCK) // 2).to(tl.uint32)
    tile = tl.load(x_ptr + rows[:, None] + offs[None, :] * 0)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + tl.sum(tile, axis=1))


# ---------------------------------------------------------------- issue 17, fifth round


@tl.func
def fill_below(dtype: type[tl.Dtype]) -> float:
    """A constant per dtype, named ``fill`` in each branch (FlagGems' ``get_dtype_min`` shape): a local
    constexpr annotated again is the same constant, and one from a constant expression of floats is a
    float. The function ends in a ``raise`` the taken branch never reaches, where mypy needs a return."""
    if dtype.is_floating():
        fill: tl.constexpr = -float("inf")
        return fill
    if dtype.is_int_signed():
        fill: tl.constexpr = -(1 << (dtype.int_bitwidth - 1))
        return fill
    raise ValueError("fill_below: float or signed int dtypes only")


@tl.kernel
def reannotated_constexprs(x_ptr: Pointer[f32], i_ptr: Pointer[i16], out_ptr: Pointer[f32], n: int, SCALED: constexpr,
                           BLOCK: constexpr) -> None:
    """A masked maximum filled with the dtype's lowest value (and an i16 pointer's lowest value), and a local constexpr annotated in both
    branches of a constexpr ``if`` whose value is a float constant expression (``LN2 / 4``, ``-LN2 * 2``)."""
    LN2: tl.constexpr = 0.6931471805599453
    if SCALED:
        factor: tl.constexpr = LN2 / 4
    else:
        factor: tl.constexpr = -LN2 * 2
    assert_type(factor, float)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=fill_below(x_ptr.dtype.element_ty))
    tl.store(out_ptr, tl.max(x, axis=0) * factor)
    tl.store(out_ptr + 1, tl.cast(fill_below(i_ptr.dtype.element_ty), tl.float32))


@tl.kernel
def descriptor_dtype(x_desc: tl.TensorDescriptor[Float[W], R2], y_desc: tl.TensorDescriptor[Float[W], R2],
                     BM: constexpr, BN: constexpr) -> None:
    """``acc.to(desc.dtype)`` and ``tl.zeros(..., dtype=desc.dtype)`` keep a descriptor's element type,
    here the kernel's ``W`` (Liger's mlp stores its f32 accumulators so); ``desc.block_shape`` is its
    tile (Triton's attributes). y = 2x + 1, computed in f32."""
    assert_type(x_desc.dtype, type[Float[W]])
    i, j = tl.program_id(0) * x_desc.block_shape[0], tl.program_id(1) * x_desc.block_shape[1]
    acc = x_desc.load([i, j]).to(tl.float32) * 2.0 + 1.0
    out = acc.to(x_desc.dtype) + tl.zeros((BM, BN), dtype=y_desc.dtype)
    assert_type(out, Tensor[Float[W], R2])
    y_desc.store([i, j], out)


@tl.kernel
def row_accumulator_from_a_float(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_rows: int, BLOCK: constexpr) -> None:
    """``acc = 0.0``, then ``acc += tl.load(...)`` of a row in a loop: a Python float joined with a rank-1 block,
    which the run time carries as the block; builtins given the name take it so, as a rank-0 join
    (``tl.exp(acc)``, ``tl.where(..., acc, m)``, ``tl.max``, a store). With s the column sums:
    out[:B] = exp(s / 8), out[B:] = s where the column is even, else max(s)."""
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for row in range(0, n_rows):
        acc += tl.load(x_ptr + row * BLOCK + offs) * 0.125
    m = tl.max(acc, axis=0)
    tl.store(out_ptr + offs, tl.exp(acc))
    tl.store(out_ptr + BLOCK + offs, tl.where(offs % 2 == 0, acc, m) * 8.0)


@tl.kernel
def choices_in_dot_and_where(a_ptr: Pointer[f32], b_ptr: Pointer[f32], out_ptr: Pointer[f32], HALF: constexpr,
                             BLOCK: constexpr) -> None:
    """Both operands of ``tl.dot`` and ``tl.where`` converted by one constexpr (choices): one choice is
    legal, so both launches check. out = where(a > 0, a, b) @ b, in f16 or f32."""
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    a32, b32 = tl.load(a_ptr + tile), tl.load(b_ptr + tile)
    a = a32.to(tl.float16) if HALF else a32
    b = b32.to(tl.float16) if HALF else b32
    tl.store(out_ptr + tile, tl.dot(tl.where(a32 > 0.0, a, b), b).to(tl.float32))


@tl.kernel
def str_and_float_defaults(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr,
                           REDUCTION: constexpr = "sum", SCALE: constexpr = 0.5) -> None:
    """A bare constexpr defaulting to a str or a float (Liger's ``reduction: tl.constexpr = "batchmean"``) is that
    type, as the launch keeping the default runs it; and a builtin takes arithmetic on a float joined with a block
    (``rsqrt(var_sum * inv_n + eps)``, Liger's layer norm) as the block. With s the sum of x:
    out[0] = SCALE * s (or SCALE * max(x)), out[1] = rsqrt(s / 4 + 1), out[2] = exp(-s / 8)."""
    assert_type(REDUCTION, str)
    assert_type(SCALE, float)
    offs = tl.arange(0, BLOCK)
    total = 0.0
    peak = tl.full((), float("-inf"), tl.float32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
        total += tl.sum(x, axis=0)
        peak = tl.maximum(peak, tl.max(tl.where(start + offs < n, x, float("-inf")), axis=0))
    if REDUCTION == "sum":
        tl.store(out_ptr, tl.cast(total, tl.float32) * SCALE)
    else:
        tl.store(out_ptr, peak * SCALE)
    tl.store(out_ptr + 1, tl.rsqrt(total * 0.25 + 1.0))
    tl.store(out_ptr + 2, tl.exp(-total * 0.125))


@tl.func
def welford_combine(mean_a: Tensor[f32, R0], count_a: Tensor[f32, R0], m2_a: Tensor[f32, R0], mean_b: Tensor[f32, R0],
                    count_b: Tensor[f32, R0], m2_b: Tensor[f32, R0]
                    ) -> tuple[Tensor[f32, R0], Tensor[f32, R0], Tensor[f32, R0]]:
    """Chan's merge of two (mean, count, M2) partial statistics."""
    count = count_a + count_b
    delta = mean_b - mean_a
    share = count_b / tl.maximum(count, 1.0)
    return mean_a + delta * share, count, m2_a + m2_b + delta * delta * count_a * share


@tl.kernel
def tuple_reduction(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_cols: int, BLOCK: constexpr) -> None:
    """A reduction of a tuple of blocks (FlagGems' Welford ``var_mean``): each result keeps its block's dtype and
    loses the axis, so what is stored is checked. Per row of a (2, n) input: out = [mean, variance] of each."""
    rows = tl.arange(0, 2)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < 2) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    ones = tl.where(mask, 1.0, 0.0)
    mean, count, m2 = tl.reduce((x, ones, tl.zeros((2, BLOCK), tl.float32)), 1, welford_combine)
    assert_type(mean, Tensor[f32, R1])
    tl.store(out_ptr + rows * 2, mean)
    tl.store(out_ptr + rows * 2 + 1, m2 / count)


@tl.kernel
def range_over_a_block_bound(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n_rows: int, ROWS: constexpr,
                             BLOCK: constexpr) -> None:
    """Python's ``range`` with a rank-0 block for a bound (``row_end = tl.minimum(...)``, Liger's cross
    entropy): the index is an ``IntScalar``, an int that converts with ``.to`` (a rank-0 block at run time).
    Each program doubles its ``ROWS`` rows of ``BLOCK`` columns, the last program fewer."""
    row_start = tl.program_id(0) * ROWS
    row_end = tl.minimum(row_start + ROWS, n_rows)
    cols = tl.arange(0, BLOCK)
    for row in range(row_start, row_end):
        assert_type(row, tl.IntScalar)
        offs = row.to(tl.int64) * BLOCK + cols
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
