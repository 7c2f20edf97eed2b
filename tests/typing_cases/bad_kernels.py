"""One kernel (or launch) per mistake class that ``mypy --strict`` must reject.

A ``# E: <code> [message fragment]`` comment marks each line where mypy must report an error
with that code (and, when given, a message containing the fragment); tests/test_typing.py
requires exactly these errors, no more. Each mistake sits in its own kernel, since mypy
types a variable assigned from a failed expression as ``Any`` and would hide later mistakes.
Never run.
"""

from __future__ import annotations

from typing import TypeVar

import tile_lang as tl
from tile_lang import Float, Pointer, Tensor0, constexpr, f16, f32, i32

W = TypeVar("W", bound=tl.Width)


# ---------------------------------------------------------------- (a) dtype mismatch


@tl.kernel
def store_f32_into_f16(x_ptr: Pointer[f32], y_ptr: Pointer[f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x)  # E: misc Cannot infer value of type parameter "D" of "store"


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
    tl.dot(a, b)  # E: misc Cannot infer value of type parameter "W" of "dot"


# ---------------------------------------------------------------- (b) non-bool mask


@tl.kernel
def int_mask_load(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs)  # E: arg-type Argument "mask" to "load" has incompatible type "Tensor[Int[W32], R1]"


@tl.kernel
def int_mask_store(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs % 2)  # E: arg-type Argument "mask" to "store" has incompatible type


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
    tl.store(out_ptr + offs, acc)  # E: misc Cannot infer value of type parameter "R" of "store"


# ---------------------------------------------------------------- (d) combine_fn not a @tl.func


def plain_add(a: Tensor0[f32], b: Tensor0[f32]) -> Tensor0[f32]:
    return a + b


@tl.kernel
def lambda_and_plain_combine(x_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.reduce(x, 0, lambda a, b: a + b)  # E: call-overload "Callable[[Any, Any], Any]"
    tl.reduce(x, 0, plain_add)  # E: call-overload No overload variant of "reduce"
    tl.associative_scan(x, 0, lambda a, b: a + b)  # E: arg-type expected "Func[
    tl.associative_scan(x, 0, plain_add)  # E: arg-type expected "Func[


# ---------------------------------------------------------------- (e) op not defined for the dtype


@tl.kernel
def exp_of_int(i_ptr: Pointer[i32], BLOCK: constexpr) -> None:
    i = tl.load(i_ptr + tl.arange(0, BLOCK))
    tl.exp(i)  # E: arg-type Argument 1 to "exp" has incompatible type "Tensor[Int[W32], R1]"


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


def bad_launches(n: int) -> None:
    x = tl.empty(n, tl.f32)
    out = tl.empty(n, tl.f32)
    half = tl.empty(n, tl.f16)
    ints = tl.empty(n, tl.i32)
    add_kernel[(1,)](n, out, n, BLOCK=64)  # E: arg-type Argument 1 to "__call__" of "Launcher" has incompatible type "int"
    add_kernel[(1,)](half, out, n, BLOCK=64)  # E: arg-type incompatible type "Buffer[Float[W16]]"; expected "Pointer[Float[W32]]"
    add_kernel[(1,)](x, out, n)  # E: call-arg Missing positional argument "BLOCK"
    add_kernel[(1,)](x, out, n, BLOCKSIZE=64)  # E: call-arg Unexpected keyword argument "BLOCKSIZE"
    add_kernel[(1, 1, 1, 1)](x, out, n, BLOCK=64)  # E: index Invalid index type "tuple[int, int, int, int]"
    add_kernel[(1,)](x, out, 1.5, BLOCK=64)  # E: arg-type Argument 3 to "__call__" of "Launcher" has incompatible type "float"
    generic_kernel[(1,)](x, half, n, BLOCK=64)  # E: misc Cannot infer value of type parameter "W"
    generic_kernel[(1,)](ints, half, n, BLOCK=64)  # E: arg-type "Buffer[Int[W32]]"; expected "Pointer[Float[W16]]"


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
