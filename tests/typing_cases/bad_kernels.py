"""One kernel (or launch) per mistake class that ``mypy --strict`` must reject.

A ``# E: <code> [message fragment]`` comment marks each line where mypy must report an error
with that code (and, when given, a message containing the fragment); tests/test_typing.py
requires exactly these errors, no more. A ``# MISS: <what>`` comment marks a mistake mypy does
not catch yet (a known gap, listed in docs/typing.md); the test requires that line to stay
silent, so a fix shows up as a failure asking for the marker to become ``# E:``. Each mistake
sits in its own kernel, since mypy types a variable assigned from a failed expression as
``Any`` and would hide later mistakes.
Never run.
"""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang.extra import libdevice
from tile_lang import R2, Float, Pointer, Tensor0, bf16, constexpr, f16, f32, f64, i8, i16, i32, i64, u64

W = TypeVar("W", bound=tl.Width)


# ---------------------------------------------------------------- (a) dtype mismatch


@tl.kernel
def store_f32_into_f16(x_ptr: Pointer[f32], y_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x)  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def store_f32_into_f16_method(x_ptr: Pointer[f32], y_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    (y_ptr + offs).store(x)  # E: arg-type "Tensor[Float[W32], R1]"; expected "Tensor[Float[W16], R1]"


@tl.kernel
def dot_mixed_dtypes(a_ptr: Pointer[f16], b_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.dot(a, b)  # E: arg-type tl.dot: input is f16 but other is f32; convert one with .to()


# ---------------------------------------------------------------- (b) non-bool mask


@tl.kernel
def int_mask_load(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs)  # E: arg-type tl.load: mask is i32, not a bool block


@tl.kernel
def int_mask_store(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs % 2)  # E: arg-type tl.store: mask is i32, not a bool block


# ---------------------------------------------------------------- (c) rank mismatch


@tl.kernel
def add_rank1_bias_to_rank2(bias_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    bias = tl.load(bias_ptr + offs)
    acc + bias  # E: operator Unsupported operand types for + ("Tensor[Float[W32], R2]" and "Tensor[Float[W32], R1]")


@tl.kernel
def store_rank2_through_rank1(out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.f32)
    tl.store(out_ptr + offs, acc)  # E: arg-type tl.store: value is rank 2 but the pointers are rank 1


# ---------------------------------------------------------------- (d) combine_fn not a @tl.func


def plain_add(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a + b


@tl.kernel
def lambda_and_plain_combine(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.reduce(x, 0, lambda a, b: a + b)  # E: call-overload "Callable[[Any, Any], Any]"
    tl.reduce(x, 0, plain_add)  # E: call-overload No overload variant of "reduce"
    tl.associative_scan(x, 0, lambda a, b: a + b)  # E: call-overload No overload variant of "associative_scan"
    tl.associative_scan(x, 0, plain_add)  # E: call-overload No overload variant of "associative_scan"


# ---------------------------------------------------------------- (e) op not defined for the dtype


@tl.kernel
def exp_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    i = tl.load(i_ptr + tl.arange(0, BLOCK))
    tl.exp(i)  # E: arg-type tl.exp: x is i32, needs a floating-point block


@tl.kernel
def truediv_of_ints(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    i = tl.load(i_ptr + offs)
    i / i  # E: operator Unsupported operand types for /
    offs / 2  # E: operator Unsupported operand types for /


@tl.kernel
def bitwise_on_floats(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    x & x  # E: operator Unsupported operand types for &
    ~x  # E: misc Invalid self argument "Tensor[Float[W32], R1]" to attribute function "__invert__"


@tl.kernel
def compare_across_categories(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    x == offs  # E: operator Unsupported operand types for ==


# ---------------------------------------------------------------- (f) launch mistakes


@tl.kernel
def add_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def generic_kernel(x_ptr: Pointer[Float[W]], out_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def staged_kernel(x_ptr: Pointer[f32], n: int, BLOCK: constexpr, num_stages: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    for _ in tl.range(0, n, num_stages=num_stages):
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@tl.kernel
def activation_kernel(x_ptr: Pointer[f32], BLOCK: constexpr, ACTIVATION: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    tl.store(x_ptr + offs, x)


def bad_launches(n: int) -> None:
    x = tl.empty(n, tl.f32)
    out = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    ints = tl.empty(n, tl.i32)
    add_kernel[(1,)](n, out, n, BLOCK=64)  # E: arg-type Argument 1 to "add_kernel" has incompatible type "int"
    add_kernel[(1,)](half, out, n, BLOCK=64)  # E: arg-type incompatible type "Buffer[Float[W16]]"; expected "Pointer[Float[W32]]
    add_kernel[(1,)](x, out, n)  # E: call-arg Missing positional argument "BLOCK"
    add_kernel[(1,)](x, out, n, BLOCKSIZE=64)  # E: call-arg Unexpected keyword argument "BLOCKSIZE"
    add_kernel[(1, 1, 1, 1)](x, out, n, BLOCK=64)  # E: index Invalid index type "tuple[int, int, int, int]"
    add_kernel[(1,)](x, out, 1.5, BLOCK=64)  # E: arg-type Argument 3 to "add_kernel" has incompatible type "float"
    generic_kernel[(1,)](x, half, n, BLOCK=64)  # E: misc Cannot infer value of type parameter "W"
    generic_kernel[(1,)](ints, half, n, BLOCK=64)  # E: arg-type "Buffer[Int[W32]]"; expected "Pointer[Float[W16]]
    # launch options as keywords (tile_lang_mypy): typed as tl.Options declares them
    add_kernel[(1,)](x, out, n, BLOCK=64, num_warps="8")  # E: arg-type Argument "num_warps" to "add_kernel" has incompatible type "str"; expected "int"
    add_kernel[(1,)](x, out, n, BLOCK=64, num_stages=2.5)  # E: arg-type Argument "num_stages" to "add_kernel"
    add_kernel[(1,)](x, out, n, BLOCK=64, num_wraps=8)  # E: call-arg Unexpected keyword argument "num_wraps" for "add_kernel"; did you mean "num_warps"?
    add_kernel[(1,)](half, out, n, BLOCK=64, num_warps=8, num_stages=3)  # E: arg-type Argument 1 to "add_kernel" has incompatible type "Buffer[Float[W16]]"
    staged_kernel[(1,)](x, n, BLOCK=64, num_stages=2.5)  # E: arg-type Argument "num_stages" to "staged_kernel" has incompatible type "float"; expected "int | str | type[Dtype]"
    # a bare constexpr takes an int, bool or str (tile_lang_mypy); a float needs Constexpr[float]
    activation_kernel[(1,)](x, BLOCK=64, ACTIVATION=None)  # E: arg-type Argument "ACTIVATION" to "activation_kernel" has incompatible type "None"; expected "int | str | type[Dtype]"
    activation_kernel[(1,)](x, BLOCK=64.0, ACTIVATION="relu")  # E: arg-type Argument "BLOCK" to "activation_kernel" has incompatible type "float"
    add_kernel[(1,), tl.Options(num_warps=2)](x, out, n, num_warps=4)  # E: call-arg Missing positional argument "BLOCK" in call to "add_kernel"


# ---------------------------------------------------------------- issue 8 part 4: newly rejected


@tl.kernel
def dot_of_vectors(a_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    a = tl.load(a_ptr + tl.arange(0, BLOCK))
    tl.dot(a, a)  # E: type-var Value of type variable "R" of "dot" cannot be "R1"


@tl.kernel
def abs_of_block(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    abs(x)  # E: arg-type


@tl.kernel
def block_pointer_checks(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    p = tl.make_block_ptr(x_ptr, (BLOCK, BLOCK), (BLOCK, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    tl.advance(p, (BLOCK,))  # E: arg-type
    tl.load(p, boundary_check=(2,))  # E: arg-type  # E: arg-type boundary_check


@tl.kernel
def bad_rounding(x_ptr: Pointer[f32], out_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.f16, fp_downcast_rounding="rtn"))  # E: arg-type


# ---------------------------------------------------------------- corpus: tutorial-shaped mistakes


@tl.kernel
def softmax_f32_into_f16(out_ptr: Pointer[f16], in_ptr: Pointer[f16], n_cols: int, BLOCK_SIZE: constexpr) -> None:
    cols = tl.arange(0, BLOCK_SIZE)
    row = tl.load(in_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    num = tl.exp(row - tl.max(row, axis=0))
    tl.store(out_ptr + tl.program_id(0) * n_cols + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)  # E: arg-type tl.store:


@tl.kernel
def matmul_acc_into_f16(a_ptr: Pointer[f16], c_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    acc = tl.dot(a, a, acc)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)  # E: arg-type tl.store:


@tl.kernel
def value_into_index_buffer(x_ptr: Pointer[f32], idx_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(idx_ptr, tl.max(x, axis=0))  # E: arg-type tl.store:


@tl.kernel
def index_into_value_buffer(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr, tl.argmax(x, axis=0))  # E: arg-type tl.store:


@tl.kernel
def add_f16_to_f32(a_ptr: Pointer[f16], b_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.load(a_ptr + offs) + tl.load(b_ptr + offs)  # E: operator


@tl.kernel
def maximum_across_widths(a_ptr: Pointer[f16], b_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.maximum(a, b)  # E: misc


@tl.kernel
def where_across_widths(a_ptr: Pointer[f16], b_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.where(offs < 4, a, b)  # E: arg-type tl.where: x is f16 but y is f32


@tl.kernel
def atomic_add_f32_into_f16(h_ptr: Pointer[f16], x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(h_ptr + offs, x)  # E: arg-type tl.atomic_add: value is f32 but the pointer is to f16


@tl.kernel
def where_on_int_condition(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.where(offs % 2, tl.load(x_ptr + offs), 0.0)  # E: arg-type


@tl.kernel
def where_rust_on_int_condition(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.where_(offs, tl.load(x_ptr + offs), 0.0)  # E: arg-type


@tl.kernel
def dropout_with_int_keep(x_ptr: Pointer[f32], keep_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    keep = tl.load(keep_ptr + offs)
    tl.store(x_ptr + offs, 0.0, mask=keep)  # E: arg-type


@tl.kernel
def dot_rank2_by_rank1(a_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    v = tl.load(a_ptr + offs)
    tl.dot(a, v)  # E: arg-type tl.dot: input is rank 2 but other is rank 1


@tl.kernel
def store_column_through_row(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x[:, None])  # E: arg-type tl.store:


@tl.kernel
def rank3_plus_rank2(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    x[:, None, None] + x[:, None]  # E: operator


@tl.kernel
def exp2_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    tl.exp2(tl.load(i_ptr + tl.arange(0, BLOCK)))  # E: arg-type


@tl.kernel
def sqrt_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    tl.sqrt(tl.load(i_ptr + tl.arange(0, BLOCK)))  # E: arg-type


@tl.kernel
def log_of_arange(BLOCK: constexpr) -> None:
    tl.log(tl.arange(0, BLOCK))  # E: arg-type


@tl.kernel
def sigmoid_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    tl.sigmoid(tl.load(i_ptr + tl.arange(0, BLOCK)))  # E: arg-type


@tl.kernel
def erf_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    tl.erf(tl.load(i_ptr + tl.arange(0, BLOCK)))  # E: arg-type


@tl.kernel
def shift_of_float(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    x << 1  # E: operator


@tl.kernel
def rand_with_float_offsets(x_ptr: Pointer[f32], seed: int, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.rand(seed, x)  # E: type-var


@tl.kernel
def rand_with_float_seed(seed: float, BLOCK: constexpr) -> None:
    tl.rand(seed, tl.arange(0, BLOCK))  # E: arg-type


@tl.kernel
def abs_of_int_block(BLOCK: constexpr) -> None:
    abs(tl.arange(0, BLOCK))  # E: arg-type


@tl.kernel
def cast_with_bad_rounding(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.cast(tl.load(x_ptr + tl.arange(0, BLOCK)), tl.f16, fp_downcast_rounding="nearest")  # E: call-overload


@tl.kernel
def advance_three_offsets(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    p = tl.make_block_ptr(x_ptr, (BLOCK, BLOCK), (BLOCK, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    tl.advance(p, (0, BLOCK, 0))  # E: arg-type  # E: arg-type


@tl.kernel
def block_ptr_store_wrong_dtype(x_ptr: Pointer[f16], y_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    p = tl.make_block_ptr(x_ptr, (BLOCK, BLOCK), (BLOCK, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    offs = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(p, y)  # E: misc


@tl.kernel
def block_ptr_store_wrong_rank(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    p = tl.make_block_ptr(x_ptr, (BLOCK, BLOCK), (BLOCK, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(p, x)  # E: misc


@tl.kernel
def sum_over_missing_axis(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.sum(x, axis=1)  # E: arg-type axis 1 is out of range for a rank-1 block


@tl.kernel
def trans_of_vector(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.trans(x)  # E: arg-type


@tl.func
def int_add(a: Tensor0[i32], b: Tensor0[i32]) -> Tensor0[i32]:
    return a + b


@tl.kernel
def reduce_floats_with_int_combine(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.reduce(x, 0, int_add)  # E: call-overload


@tl.kernel
def load_other_wrong_category(x_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < 4, other=0.5)  # E: arg-type Argument 1 to "load"


@tl.kernel
def pointer_plus_float(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.load(x_ptr + x)  # E: operator


@tl.kernel
def load_from_a_value(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.load(x)  # E: arg-type


@tl.kernel
def zeros_rank_mix(BLOCK: constexpr) -> None:
    tl.zeros((BLOCK,), tl.f32) + tl.zeros((BLOCK, BLOCK), tl.f32)  # E: operator


@tl.kernel
def rust_store_with_int_mask(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr.add_offsets(offs), offs.lt(n))
    x_ptr.add_offsets(offs).store(x, offs)  # E: arg-type


def bad_tutorial_launches(n: int) -> None:
    x = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    ints = tl.empty(n, tl.i32)
    add_kernel[(1,)](x, ints, n, BLOCK=64)  # E: arg-type
    add_kernel[(1,)](x, out_ptr=half, n=n, BLOCK=64)  # E: arg-type
    add_kernel[(1,)](x, x, n, 64.0)  # E: arg-type
    add_kernel[(1,)](x, x)  # E: call-arg
    add_kernel[(1,)](x, x, n, x, BLOCK=64)  # E: misc  # E: arg-type
    generic_kernel[(1,)](half, x, n, BLOCK=64)  # E: misc
    add_kernel[(1.0,)](x, x, n, BLOCK=64)  # E: index
    add_kernel(x, x, n, BLOCK=64)  # E: operator
    wrong_dtype: type[tl.f32] = half.dtype  # E: assignment


LOG2_E = tl.constexpr(1.4426950408889634)  # mypy reads it as the float it holds, not int(1.44)
log2_e_as_int: int = LOG2_E  # E: assignment


# ---------------------------------------------------------------- Liger-shaped mistakes (good_liger.py has the correct idioms)


@tl.kernel
def pointer_rebound_to_block(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x_ptr += tl.arange(0, BLOCK)  # E: assignment "Tensor[Pointer[Float[W32]], R1]", variable has type "Pointer[Float[W32]]"


@tl.kernel
def plain_float_has_no_to(x_ptr: Pointer[f32], eps: float, BLOCK: constexpr) -> None:
    tl.store(x_ptr, eps.to(tl.float32))  # E: attr-defined "float" has no attribute "to"


@tl.kernel
def int_scalar_param(x_ptr: Pointer[f32], n: tl.IntScalar, BLOCK: constexpr) -> None:
    tl.store(x_ptr + n.to(tl.int64), 0.0)


def float_for_int_scalar(x: tl.Buffer[f32]) -> None:
    int_scalar_param[(1,)](x, 2.5, BLOCK=8)  # E: arg-type Argument 2 to "int_scalar_param" has incompatible type "float"


@tl.kernel
def rebound_to_other_dtype(x_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    x_row = tl.load(x_ptr + tl.arange(0, BLOCK))
    x_row = x_row.to(tl.float32)  # E: assignment expression has type "Tensor[Float[W32], R1]", variable has type "Tensor[Float[W], R1]"


@tl.kernel
def f32_into_bf16_in_loaded_range(x_ptr: Pointer[f32], y_ptr: Pointer[bf16], starts_ptr: Pointer[i32]) -> None:
    for i in tl.range(tl.load(starts_ptr), tl.load(starts_ptr + 1)):
        tl.store(y_ptr + i, tl.load(x_ptr + i))  # E: arg-type tl.store: value is f32 but the pointer is to bf16


@tl.kernel
def f32_into_f16_generic(x_ptr: Pointer[Float[W]], y_ptr: Pointer[Float[W]], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))  # E: arg-type tl.store: value is f32 but the pointer is to Float[W]


@tl.kernel
def store_rank2_into_rank1_pointers(out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK, BLOCK), tl.f32))  # E: arg-type tl.store: value is rank 2 but the pointers are rank 1


@tl.kernel
def float_into_int_buffer(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    tl.store(i_ptr + tl.arange(0, BLOCK), 0.5)  # E: arg-type tl.store: value is a float but the pointer is to i32


@tl.kernel
def atomic_max_f16(h_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_max(h_ptr + offs, tl.load(h_ptr + offs))  # E: type-var "NumT" of "atomic_max" cannot be "Float[W16]"


@tl.kernel
def atomic_add_i8(b_ptr: Pointer[i8], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(b_ptr + offs, tl.load(b_ptr + offs))  # E: type-var "AddT" of "atomic_add" cannot be "Int[W8]"


@tl.kernel
def atomic_add_i16(s_ptr: Pointer[i16]) -> None:
    tl.atomic_add(s_ptr, 1)  # E: type-var "AddT" of "atomic_add" cannot be "Int[W16]"


@tl.kernel
def builtin_max_of_blocks(x_ptr: Pointer[f32], h_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(h_ptr + offs, max(x, x))  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def builtin_min_of_bf16_blocks(g_ptr: Pointer[bf16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(g_ptr + offs, min(tl.load(g_ptr + offs), 0.0))  # E: arg-type tl.store: value is f32 but the pointer is to bf16


@tl.kernel
def builtin_min_of_row_and_scalar(x_ptr: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + rows[:, None], min(rows, n))  # E: arg-type tl.store: value is rank 1 but the pointers are rank 2


@tl.kernel
def where_constexpr_condition_mixed_dtypes(x_ptr: Pointer[f32], h_ptr: Pointer[f16], C: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x, h = tl.load(x_ptr + offs), tl.load(h_ptr + offs)
    tl.store(x_ptr + offs, tl.where(C == 1, x, h))  # E: arg-type tl.where: x is f32 but y is f16


# ---------------------------------------------------------------- other people's kernels: axes, scaled formats


@tl.kernel
def cumsum_over_missing_axis(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.cumsum(x, axis=1))  # E: arg-type axis 1 is out of range for a rank-1 block


@tl.kernel
def cumprod_over_missing_axis(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    r = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    tl.cumprod(tile, -3)  # E: arg-type axis -3 is out of range for a rank-2 block


@tl.kernel
def kept_sum_over_missing_axis(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    r = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    tl.sum(tile, axis=2, keep_dims=True)  # E: arg-type axis 2 is out of range for a rank-2 block


@tl.kernel
def dot_scaled_misspelt_format(a_ptr: Pointer[tl.f8e4m3], s_ptr: Pointer[tl.u8], out_ptr: Pointer[f32],
                               BLOCK: constexpr) -> None:
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    scale = tl.load(s_ptr + r[:, None] * (BLOCK // 32) + tl.arange(0, BLOCK // 32)[None, :])
    tl.dot_scaled(a, scale, "e4m4", a, scale, "e4m3")  # E: arg-type Argument 3 to "dot_scaled" has incompatible type "Literal['e4m4']"


@tl.kernel
def optional_pointer_used_unchecked(x_ptr: Pointer[f32], bias_ptr: Pointer[f32] | None, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    bias_ptr + offs  # E: operator Unsupported operand types for + ("None" and "Tensor[Int[W32], R1]")
    tl.store(x_ptr + offs, 0.0)


def none_for_a_required_pointer(n: int) -> None:
    x = tl.empty(n, tl.f32)
    add_kernel[(1,)](x, None, n, BLOCK=64)  # E: arg-type Argument 2 to "add_kernel" has incompatible type "None"


@tl.kernel
def bool_mask_times_floats(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * mask)  # E: operator Unsupported operand types for * ("Tensor[Float[W32], R1]" and "Tensor[Bool, R1]")


def any_dtype_for_a_float_kernel(x: tl.Buffer[tl.Dtype], n: int) -> None:
    y = tl.empty(n, tl.f32)
    generic_kernel[(1,)](x, y, n, BLOCK=64)  # E: arg-type Argument 1 to "generic_kernel" has incompatible type "Buffer[Dtype]"


# ---------------------------------------------------------------- autotuned kernels: only what the configs set is optional


@tl.autotune(configs=[tl.Config({"BLOCK": 128}), tl.Config({"BLOCK": 256})], key=["n"])
@tl.kernel
def tuned_scale(x_ptr: Pointer[f32], n: int, SCALE: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * SCALE)


def bad_tuned_launches(n: int) -> None:
    x = tl.empty(n, tl.f32)
    tuned_scale[(1,)](x, n)  # E: call-arg Missing positional argument "SCALE"
    tuned_scale[(1,)](x, n, SCALE=2, BLOCKS=64)  # E: call-arg Unexpected keyword argument "BLOCKS"


# ---------------------------------------------------------------- (g) wrong variants of ported kernels' spellings


@tl.kernel
def dtype_scalar_into_f16(y_ptr: Pointer[f16]) -> None:
    tl.store(y_ptr, tl.float32(0.0))  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def constexpr_dtype_keeps_rank(x_ptr: Pointer[f32], y_ptr: Pointer[f32], X_dtype: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :]).to(X_dtype)
    tl.store(y_ptr + offs, tile)  # E: arg-type tl.store: value is rank 2 but the pointers are rank 1


@tl.kernel
def wider_int_into_i32(out_ptr: Pointer[i32], n_ptr: Pointer[i64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs + tl.load(n_ptr))  # E: arg-type tl.store: value is i64 but the pointer is to i32


@tl.kernel
def signed_plus_unsigned(n_ptr: Pointer[u64], BLOCK: constexpr) -> None:
    tl.arange(0, BLOCK) + tl.load(n_ptr)  # E: arg-type has incompatible type "Pointer[UInt[W64]]"; expected "Pointer[Int[W32]]"


@tl.kernel
def exp_of_python_int() -> None:
    tl.exp(1)  # E: arg-type Argument 1 to "exp" has incompatible type "int"


@tl.kernel
def zeros_like_shape_then_row(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.zeros(tile.shape, tl.float32) + tl.load(x_ptr + offs)  # E: operator ("Tensor[Float[W32], R2]" and "Tensor[Float[W32], R1]")


@tl.kernel
def block_as_reduction_axis(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    m = tl.float32(-float("inf"))
    offs = tl.arange(0, BLOCK)
    blk_max = tl.max(tl.load(x_ptr + offs, mask=offs < n), axis=0)
    tl.max(m, blk_max)  # E: arg-type tl.max: axis must be an int, got a block of f32; for the elementwise maximum


@tl.kernel
def float_constexpr_as_extent(x_ptr: Pointer[f32]) -> None:
    HALF: tl.constexpr = 0.5
    tl.store(x_ptr, tl.sum(tl.arange(0, HALF)).to(tl.float32))  # E: arg-type Argument 2 to "arange" has incompatible type "float"


@tl.kernel
def float_block_as_extent(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    n = tl.load(x_ptr)
    tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))  # E: arg-type expected "tuple[int | Tensor[Int[Any], R0]]"


@tl.kernel
def string_range_flag(x_ptr: Pointer[f32]) -> None:
    for _ in tl.range(0, 4, flatten="yes"):  # E: call-overload
        tl.store(x_ptr, 0.0)


@tl.kernel
def float_hint_values(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.multiple_of(tl.arange(0, BLOCK), [16.0])  # E: list-item


@tl.func
def takes_constexpr(x: Tensor0[f32], MODE: constexpr) -> Tensor0[f32]:
    return x


@tl.kernel
def list_for_a_constexpr(x_ptr: Pointer[f32]) -> None:
    takes_constexpr(tl.load(x_ptr), [1])  # E: arg-type expected "int | str | type[Dtype]"


@tl.kernel
def mask_count_into_f32(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    i = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + i)
    tl.store(x_ptr + i, tl.where(i > 0, a > 0.0, 1))  # E: arg-type tl.store: value is i32 but the pointer is to f32


@tl.kernel
def where_signed_and_unsigned(u_ptr: Pointer[u64], out_ptr: Pointer[u64], BLOCK: constexpr) -> None:
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.where(i > 2, tl.load(u_ptr + i), i))  # E: arg-type tl.where: x is u64 but y is i32


@tl.kernel
def converted_scalar_into_i32(out_ptr: Pointer[i32], H: tl.IntScalar) -> None:
    tl.store(out_ptr, (tl.program_id(0) // H).to(tl.int64))  # E: arg-type tl.store: value is i64 but the pointer is to i32


@tl.kernel
def python_int_has_no_to(out_ptr: Pointer[i64], n: int) -> None:
    tl.store(out_ptr, (n * 2).to(tl.int64))  # E: attr-defined "int" has no attribute "to"


@tl.kernel
def scalar_minimum_into_f32(x_ptr: Pointer[f32], n: int) -> None:
    tl.store(x_ptr, tl.minimum(3, n))  # E: arg-type tl.store: value is i32 but the pointer is to f32


@tl.kernel
def float_offsets_first(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.store(tl.arange(0, BLOCK).to(tl.float32) + x_ptr, 1.0)  # E: operator "__add__" of "Tensor"


@tl.func
def generic_int_add(a: Tensor0[tl.Int[W]], b: Tensor0[tl.Int[W]]) -> Tensor0[tl.Int[W]]:
    return a + b


@tl.kernel
def int_combine_on_floats(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.store(x_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, BLOCK)), 0, generic_int_add))  # E: call-overload


@tl.kernel
def dot_constexpr_out_dtype_mixed(a_ptr: Pointer[f16], b_ptr: Pointer[f32], ACC: constexpr, BLOCK: constexpr) -> None:
    o = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + o[:, None] * BLOCK + o[None, :])
    tl.dot(a, tl.load(b_ptr + o[:, None] * BLOCK + o[None, :]), out_dtype=ACC)  # E: arg-type tl.dot: input is f16 but other is f32


@tl.kernel
def str_constexpr_as_cache_hint(x_ptr: Pointer[f32], HINT: tl.Constexpr[str], BLOCK: constexpr) -> None:
    tl.load(x_ptr + tl.arange(0, BLOCK), cache_modifier=HINT)  # E: call-overload


@tl.kernel
def misspelt_cache_hint(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    tl.load(x_ptr + tl.arange(0, BLOCK), cache_modifier=".cx")  # E: call-overload


@tl.kernel
def int_condition_with_two_int_widths(n_ptr: Pointer[i64], BLOCK: constexpr) -> None:
    i = tl.arange(0, BLOCK)
    tl.where((i > 2).to(tl.int32), tl.load(n_ptr + i), i)  # E: arg-type tl.where: condition is i32, not a bool block


@tl.kernel
def atomic_add_narrower_int(n_ptr: Pointer[i64], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(n_ptr + offs, offs)  # E: arg-type tl.atomic_add: value is i32 but the pointer is to i64


# ---------------------------------------------------------------- libdevice functions on dtypes Triton's tables lack


@tl.kernel
def libdevice_j0_of_ints(x_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    libdevice.j0(tl.load(x_ptr + offs))  # E: type-var Value of type variable "FP" of "j0" cannot be "Int[W32]"


@tl.kernel
def libdevice_popc_of_floats(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    libdevice.popc(tl.load(x_ptr + offs))  # E: type-var Value of type variable "IN" of "popc" cannot be "Float[W32]"


@tl.kernel
def libdevice_isnan_stored_as_floats(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, libdevice.isnan(tl.load(x_ptr + offs)))  # E: arg-type tl.store: value is Bool but the pointer is to f32


@tl.kernel
def libdevice_pow_of_halves(x_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    libdevice.pow(x, x)  # E: type-var


# a dtype chosen by a branch (a choice, tile_lang_mypy.choices): accepted where one choice of members is legal, so
# these are the mistakes it still reports (a branch's own mistake in one mode is tile-lang check's)
@tl.kernel
def choice_no_member_fits(x_ptr: Pointer[f16], y_ptr: Pointer[f16], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x.to(tl.float32) if MODE == 1 else x.to(tl.float64)
    tl.store(y_ptr + tl.arange(0, BLOCK), y)  # E: arg-type tl.store: value may be f32 but the pointer is to f16


@tl.kernel
def choice_times_another_width(x_ptr: Pointer[f16], w_ptr: Pointer[f64], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x.to(tl.float32) if MODE == 1 else x
    y * tl.load(w_ptr + tl.arange(0, BLOCK))  # E: operator "Tensor[Float[W32], R1]" and "Tensor[Float[W64], R1]"  # E: operator "Tensor[Float[W16], R1]" and


@tl.kernel
def rank_chosen_by_a_branch(x_ptr: Pointer[f32], y_ptr: Pointer[f32], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x[:, None] * 2.0 if MODE == 1 else x
    tl.store(y_ptr + tl.arange(0, BLOCK), y)  # E: arg-type tl.store: value may be rank 2 but the pointers are rank 1


@tl.kernel
def concrete_choice_into_a_concrete_pointer(x_ptr: Pointer[f32], y_ptr: Pointer[f16], FP8: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x.to(tl.float8e4nv) if FP8 else x.to(tl.bfloat16)
    tl.store(y_ptr + tl.arange(0, BLOCK), y)  # E: arg-type tl.store: value may be f8e4m3 but the pointer is to f16


@tl.kernel
def generic_choice_into_an_int_pointer(x_ptr: Pointer[Float[W]], y_ptr: Pointer[i32], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x.to(tl.float32) if MODE == 1 else x
    tl.store(y_ptr + tl.arange(0, BLOCK), y)  # E: arg-type tl.store: value may be


@tl.kernel
def generic_choice_times_a_concrete_width(x_ptr: Pointer[Float[W]], h_ptr: Pointer[f16], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = x.to(tl.float32) if MODE == 1 else x
    y * tl.load(h_ptr + tl.arange(0, BLOCK))  # E: operator "Tensor[Float[W32], R1]" and "Tensor[Float[W16], R1]"  # E: operator "Tensor[Float[W], R1]" and


@tl.kernel
def two_concrete_choices_no_width_reconciles(x_ptr: Pointer[Float[W]], MODE: constexpr, BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    a = x.to(tl.float16) if MODE == 1 else x.to(tl.bfloat16)
    b = x.to(tl.float32) if MODE == 1 else x.to(tl.float64)
    tl.dot(a[:, None], b[None, :])  # E: arg-type tl.dot: input may be f16 or bf16 but other may be f32 or f64


# ---------------------------------------------------------------- (h) issue 17, fourth round: messages name the argument and dtypes


@tl.kernel
def int_mask_with_other(x_ptr: Pointer[Float[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=(offs < n).to(tl.int32), other=0.0)  # E: arg-type tl.load: mask is i32, not a bool block


@tl.kernel
def float_only_math_assigned(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    y = tl.sigmoid(tl.load(x_ptr + offs).to(tl.int32))  # E: arg-type tl.sigmoid: x is i32, needs a floating-point block
    tl.store(x_ptr + offs, y)


@tl.kernel
def int_mask_of_an_atomic(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(x_ptr + offs, 1.0, mask=offs - n)  # E: arg-type tl.atomic_add: mask is i32, not a bool block


@tl.kernel
def int_condition_of_scalars(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.where(offs % 2, 1.0, 0.0))  # E: arg-type tl.where: condition is i32, not a bool block


@tl.kernel
def unsigned_offsets_are_no_floats(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK).to(tl.float32)
    x_ptr + offs  # E: operator


@tl.kernel
def multi_line_load_int_mask(x_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(
        x_ptr + offs,
        mask=(offs < n).to(tl.int32),  # E: arg-type tl.load: mask is i32, not a bool block
        other=0.0,
    )
    tl.store(
        x_ptr + offs,
        x.to(tl.float64),  # E: arg-type tl.store: value is f64 but the pointer is to f32
        mask=offs < n,
    )


@tl.kernel
def block_into_a_scalar_pointer(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, x)  # E: arg-type tl.store: value is rank 1 but the pointer is a scalar


# ---------------------------------------------------------------- (i) issue 17, fifth round: descriptor dtypes, local constexprs


@tl.kernel
def descriptor_dtype_into_another_buffer(x_desc: tl.TensorDescriptor[f16, R2], out_ptr: Pointer[f32], BM: constexpr,
                                         BN: constexpr) -> None:
    acc = x_desc.load([0, 0]).to(tl.float32) * 2.0
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, acc.to(x_desc.dtype))  # E: arg-type tl.store: value is f16 but the pointer is to f32


@tl.kernel
def generic_descriptor_dtype_into_f32(x_desc: tl.TensorDescriptor[Float[W], R2], out_ptr: Pointer[f32], BM: constexpr,
                                      BN: constexpr) -> None:
    acc = x_desc.load([0, 0]).to(tl.float32) * 2.0
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, acc.to(x_desc.dtype))  # E: arg-type value is Float[W] but the pointer is to f32


@tl.kernel
def descriptor_store_of_another_dtype(x_desc: tl.TensorDescriptor[f16, R2], y_desc: tl.TensorDescriptor[bf16, R2]) -> None:
    acc = x_desc.load([0, 0]).to(tl.float32)
    y_desc.store([0, 0], acc.to(x_desc.dtype))  # E: arg-type "Tensor[Float[W16], R2]"; expected "Tensor[Float[WBF16], R2]"


@tl.kernel
def reannotated_constexpr_of_another_type(x_ptr: Pointer[f32], MODE: constexpr, BLOCK: constexpr) -> None:
    if MODE == 1:
        scale: tl.constexpr = 0.5
    else:
        scale: tl.constexpr = "half"  # E: assignment expression has type "str", variable has type "float"
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * scale)


@tl.kernel
def true_division_for_a_block_size(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    HALF: tl.constexpr = BLOCK / 2
    offs = tl.arange(0, HALF)  # E: arg-type Argument 2 to "arange" has incompatible type "float"; expected "int"
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


# ---------------------------------------------------------------- (j) issue 17, sixth round: choices in dot and where, Python bools
# (joins of a Python float and a block are in bad_redefinition.py, checked under allow-redefinition)


@tl.kernel
def dot_of_a_choice_no_member_fits(x_ptr: Pointer[f64], y_ptr: Pointer[f32], FLAG: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    y = tl.load(y_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = y if FLAG else y.to(tl.float16)
    tl.dot(a, b)  # E: arg-type tl.dot: input is f64 but other may be f32 or f16; convert one with .to()


@tl.kernel
def dot_of_a_conditional_expression(x_ptr: Pointer[f64], y_ptr: Pointer[f32], FLAG: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.dot(y if FLAG else y.to(tl.bfloat16), tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :]))  # E: arg-type tl.dot: input may be f32 or bf16 but other is f64


@tl.kernel
def where_of_a_choice_no_member_fits(x_ptr: Pointer[f16], y_ptr: Pointer[f32], FLAG: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs)
    b = y if FLAG else y.to(tl.float64)
    tl.store(x_ptr + offs, tl.where(offs < 4, tl.load(x_ptr + offs), b))  # E: arg-type tl.where: x is f16 but y may be f32 or f64


@tl.kernel
def python_bool_converted(x_ptr: Pointer[f32], C: constexpr, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.where((C == 1).to(tl.int32), x, 0.0))  # E: attr-defined "bool" has no attribute "to"


# ---------------------------------------------------------------- (k) the seventh round: a tuple reduction's results


@tl.func
def pair_max(a: Tensor0[f32], i: Tensor0[i32], b: Tensor0[f32], j: Tensor0[i32]) -> tuple[Tensor0[f32], Tensor0[i32]]:
    return tl.maximum(a, b), tl.where(a >= b, i, j)


@tl.kernel
def tuple_reduction_stored_narrower(x_ptr: Pointer[f32], out_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    best, where = tl.reduce((tl.load(x_ptr + offs), offs), 0, pair_max)
    tl.store(out_ptr, best)  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def tuple_reduction_rank(x_ptr: Pointer[f32], out_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    best, where = tl.reduce((tile, offs[:, None] + offs[None, :] * 0), 1, pair_max)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], best)  # E: arg-type tl.store: value is rank 1 but the pointers are rank 2


# ---------------------------------------------------------------- (l) Triton 3.6's 16-bit results stored back unconverted


@tl.kernel
def half_quotient_stored_as_half(h_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(h_ptr + offs, tl.load(h_ptr + offs) / 3.0)  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def bf16_remainder_stored_as_bf16(g_ptr: Pointer[bf16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    g = tl.load(g_ptr + offs)
    tl.store(g_ptr + offs, g % g)  # E: arg-type tl.store: value is f32 but the pointer is to bf16


@tl.kernel
def half_max_stored_as_half(h_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    tl.store(h_ptr, tl.max(tl.load(h_ptr + tl.arange(0, BLOCK)), 0))  # E: arg-type tl.store: value is f32 but the pointer is to f16


@tl.kernel
def bf16_cumsum_stored_as_bf16(g_ptr: Pointer[bf16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(g_ptr + offs, tl.cumsum(tl.load(g_ptr + offs), 0))  # E: arg-type tl.store: value is f32 but the pointer is to bf16


@tl.kernel
def bf16_maximum_stored_as_bf16(g_ptr: Pointer[bf16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(g_ptr + offs, tl.maximum(tl.load(g_ptr + offs), 0.0))  # E: arg-type tl.store: value is f32 but the pointer is to bf16
