"""One definition of each op's rules (tile_lang.semantics): the NumPy reference and the compiler
accept and reject the same kernels, with the same message at the same line. The compiler side
is checked through ``cuda_source`` (the front end and lowering, no GPU) and, for kernels that
run, through the CPU emulator of the generated CUDA."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32
from tile_lang.errors import KernelError
from tile_lang.kernel import Kernel
from tile_lang import registry
from tile_lang import dtypes, operators

from tests.compiler.emulator import EMULATOR

_EMU = EMULATOR
needs_emulator = pytest.mark.skipif(_EMU.unavailable_reason() is not None, reason=str(_EMU.unavailable_reason()))
SCALE = 3


@tl.kernel
def runtime_arange(x: Pointer[i32], n: int) -> None:
    tl.store(x + tl.arange(0, n), 1)


@tl.kernel
def int_load_out_of_range(x: Pointer[i32], y: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < 3, other=2**64))  # a smaller int wraps, as in Triton


@tl.kernel
def arange_of_six(x: Pointer[i32], BLOCK: constexpr) -> None:
    tl.store(x + tl.arange(0, 6), 1)


@tl.kernel
def atomic_max_f16(x: Pointer[tl.f16], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_max(x + offs, tl.load(x + offs))  # type: ignore[type-var]


@tl.kernel
def builtin_abs_on_blocks(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, abs(offs))  # type: ignore[arg-type]


@tl.kernel
def permute_out_of_range(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.permute(offs, (1,)))


@tl.kernel
def view_to_more_elements(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + tl.arange(0, 2 * BLOCK), tl.ravel(tl.view(offs, (BLOCK, 2))))


@tl.kernel
def cat_of_two_dtypes(x: Pointer[i32], y: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y + tl.arange(0, 2 * BLOCK), tl.cat(tl.load(x + offs), tl.load(y + offs)))  # type: ignore[misc]


@tl.kernel
def split_of_a_row(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    lo, hi = tl.split(tl.reshape(offs, (2, BLOCK // 2)))
    tl.store(x + offs, lo + hi)


@tl.kernel
def broadcast_rows_against_a_row(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    wide, _ = tl.broadcast(offs, tl.reshape(offs, (2, BLOCK // 2)))  # type: ignore[misc]
    tl.store(x + offs, tl.ravel(wide))


@tl.kernel
def int_floordiv_by_a_float(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, (offs // 2.5).to(tl.i32))  # type: ignore[operator]


@tl.kernel
def bool_minus_bool(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, ((offs < 3) - (offs > 5)).to(tl.i32))  # type: ignore[operator]


@tl.kernel
def negated_mask(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, offs, mask=-(offs < 3))  # type: ignore[misc, arg-type]


@tl.kernel
def logical_blocks(x: Pointer[i32], o: Pointer[i32], n: int, K: constexpr, FLAG: constexpr, BLOCK: constexpr) -> None:
    """``and``, ``or`` and ``not`` on blocks, as Triton runs them: element by element, every
    operand evaluated, a compile-time operand dropped unless it decides the result."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    mask = offs < n
    mask = mask and (v % K != 0)  # Triton's test_tensor_atomic_add_access_patterns
    either = (v > 3) or (offs < 2) or FLAG
    both = (v < 6) and mask
    tl.store(o + offs, v, mask=not either)
    tl.store(o + BLOCK + offs, tl.where(both, v, -1))
    tl.store(o + 2 * BLOCK + offs, tl.where(mask, 1, 0))


@tl.kernel
def float_shifted(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) << 1)  # type: ignore[operator]


@tl.kernel
def rand_with_a_float_offset(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.rand(7, tl.load(x + offs)))  # type: ignore[type-var]


@tl.kernel
def histogram_with_an_int_mask(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.histogram(offs, BLOCK, mask=offs))  # type: ignore[arg-type]


@tl.kernel
def gather_across_ranks(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.ravel(tl.gather(offs, tl.reshape(offs, (2, BLOCK // 2)), 0)))


@tl.kernel
def if_on_a_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    if offs < 3:
        tl.store(x + offs, offs)


@tl.kernel
def elif_on_a_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    if tl.program_id(0) > 5:
        tl.store(x + offs, offs)
    elif offs < 3:
        tl.store(x + offs, offs + 1)


@tl.kernel
def while_on_a_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    while offs < 3:
        offs = offs + 1
    tl.store(x + offs, offs)


@tl.kernel
def select_on_a_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, offs if offs < 3 else offs + 1)


@tl.kernel
def assert_on_a_block(x: Pointer[f32], y: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=1.0)
    assert v > 0.0, "inputs must be positive"
    assert offs + 1  # an int block: every element non-zero
    tl.store(y + offs, tl.sqrt(v), mask=offs < n)


@tl.kernel
def assert_on_pointers(x: Pointer[f32], BLOCK: constexpr) -> None:
    assert x + tl.arange(0, BLOCK)


@tl.kernel
def range_over_a_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    for _ in range(offs):
        tl.store(x + offs, offs)


@tl.kernel
def range_to_a_float(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    for _ in range(tl.load(x)):
        tl.store(x + offs, 1.0)


@tl.kernel
def or_of_a_decided_scalar_and_a_block(x: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, offs, mask=(n > 3) or (offs < 3))


@tl.kernel
def and_of_a_decided_scalar_and_a_block(x: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    if n < 3 and offs < 3:
        tl.store(x + offs, offs)


@tl.kernel
def static_assert_fails(x: Pointer[i32], BLOCK: constexpr) -> None:
    assert BLOCK > 8, "BLOCK must exceed 8"
    tl.store(x + tl.arange(0, BLOCK), 1)


@tl.kernel
def range_to_a_float_constexpr(x: Pointer[f32], BLOCK: constexpr) -> None:
    for i in range(BLOCK):
        tl.store(x + i, 1.0)


@tl.kernel
def tl_range_to_a_float_constexpr(x: Pointer[f32], BLOCK: constexpr) -> None:
    for i in tl.range(0, BLOCK, 2):
        tl.store(x + i, 1.0)


@tl.kernel
def static_range_to_a_float_constexpr(x: Pointer[f32], BLOCK: constexpr) -> None:
    for i in tl.static_range(BLOCK):
        tl.store(x + i, 1.0)


@tl.kernel
def sized_by_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    tl.store(x + tl.arange(0, BLOCK), 1)


@tl.kernel
def zeros_sized_by_block(x: Pointer[f32], BLOCK: constexpr) -> None:
    tl.store(x + tl.arange(0, 8), tl.zeros([BLOCK], tl.f32))


@tl.kernel
def reshaped_by_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, 8)
    tl.store(x + offs, tl.ravel(tl.reshape(offs, (2, BLOCK))))


@tl.kernel
def summed_along_block(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, 8)
    tl.store(x + offs, tl.sum(tl.load(x + offs), axis=BLOCK))


@tl.kernel
def contiguous_by_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.max_contiguous(tl.arange(0, 8), BLOCK)
    tl.store(x + offs, offs)


@tl.kernel
def hinted_float_block(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.multiple_of(tl.load(x + offs), 4))


@tl.kernel
def rand_rounds_by_block(x: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, 8)
    tl.store(x + offs, tl.rand(7, offs, n_rounds=BLOCK))


@tl.kernel
def stores_a_wider_block(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.reshape(offs, (2, BLOCK // 2)))  # type: ignore[arg-type]


@tl.kernel
def load_mask_of_another_shape(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=tl.reshape(offs, (2, BLOCK // 2)) < 3))  # type: ignore[misc]


@tl.kernel
def atomic_of_another_shape(x: Pointer[i32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(x + offs, tl.reshape(offs, (2, BLOCK // 2)))  # type: ignore[arg-type]


@tl.kernel
def narrows_a_carried_block(x: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    p = tl.load(x + tl.arange(0, BLOCK))
    for _ in range(n):
        p = p.to(tl.float16)  # type: ignore[assignment]  # Triton: re-assigned to fp16 in the loop
    tl.store(x + tl.arange(0, BLOCK), p.to(tl.float32))


@tl.kernel
def narrows_a_carried_python_float(x: Pointer[tl.f16], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    m = 0.0  # carried as f32, as Triton types it
    for i in range(n):
        m = tl.sum(tl.load(x + i * BLOCK + tl.arange(0, BLOCK)), 0)  # type: ignore[assignment]  # f16: narrower
    tl.store(out, tl.cast(m, tl.float32))


@tl.kernel
def retypes_on_one_branch(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    v = tl.load(x + tl.arange(0, BLOCK))
    if n > 3:  # taken: the reference runs this side only, and knows the other leaves v as it was
        v = v.to(tl.float16)  # type: ignore[assignment]  # mypy's own verdict: another type
    tl.store(out + tl.arange(0, BLOCK), v.to(tl.float32))


@tl.kernel
def reshapes_on_the_else_side(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    v = tl.load(x + tl.arange(0, BLOCK))
    if n < 3:
        w = v * 2.0
    else:  # taken
        v = tl.reshape(v, (2, BLOCK // 2))  # type: ignore[assignment]
        w = v
    tl.store(out + tl.arange(0, BLOCK), tl.ravel(w))


@tl.kernel
def reads_the_last_iterations_value(x: Pointer[f32], out: Pointer[f32], n: int) -> None:
    acc = tl.load(x) * 0.0
    for k in range(n):
        if k > 0:
            acc += prev  # type: ignore[has-type]  # noqa: F821  # what the iteration before bound: Triton's NameError
        prev = tl.load(x + k)  # noqa: F841
    tl.store(out, acc)


@tl.kernel
def reads_what_an_inner_loop_bound(x: Pointer[f32], out: Pointer[f32], n: int) -> None:
    acc = tl.load(x) * 0.0
    for k in range(n):
        for j in range(k, n):
            t = tl.load(x + j)
        acc += t  # the inner loop's own: its error, in the outer loop's body
    tl.store(out, acc)


@tl.kernel
def int_mask_on_a_load(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs))  # type: ignore[arg-type]  # meant: offs < n


@tl.kernel
def int_mask_on_a_store(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs), mask=n - offs)  # type: ignore[arg-type]


@tl.kernel
def int_mask_on_an_atomic(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(out + offs, tl.load(x + offs), mask=offs % 2)  # type: ignore[arg-type]


def _line(kernel: Kernel[Any], needle: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, text in enumerate(lines) if needle in text)


def _reference_error(kernel: Kernel[Any], *args: object, **constexprs: Any) -> KernelError:
    with pytest.raises(KernelError) as caught:
        kernel[(1,)](*args, **constexprs)
    return caught.value


def _compiler_error(kernel: Kernel[Any], **constexprs: Any) -> KernelError:
    with pytest.raises(KernelError) as caught:
        kernel.cuda_source(**constexprs)
    return caught.value


@pytest.mark.parametrize("flag", [False, True])
def test_and_or_not_on_blocks_work_element_by_element(backend: str, flag: bool) -> None:
    """They were "a block of shape [16] used as a condition" on both backends; Triton runs them
    (and deprecates them for blocks), and its own tests and Liger-Kernel write them."""
    n, k, block = 11, 3, 16
    v = np.random.default_rng(7).integers(-8, 9, block).astype(np.int32)
    offs = np.arange(block)
    mask = (offs < n) & (v % k != 0)  # C's remainder and NumPy's agree on != 0
    either = (v > 3) | (offs < 2) | flag  # a true FLAG decides: `either` is True, `not either` False
    both = (v < 6) & mask
    want = np.concatenate([np.where(either, -99, v), np.where(both, v, -1), mask.astype(np.int32)])
    with registry.backend(backend):
        out = tl.to_device(np.full(3 * block, -99, np.int32), tl.i32)
        logical_blocks[(1,)](tl.to_device(v, tl.i32), out, n, K=k, FLAG=flag, BLOCK=block)
        np.testing.assert_array_equal(out.numpy(), want)


@tl.kernel
def logical_blocks_per_program(x: Pointer[i32], o: Pointer[i32], BLOCK: constexpr) -> None:
    """``not`` and ``and`` on blocks inside a branch some programs take (the reference's
    per-program version)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + pid * BLOCK + offs)
    if pid % 2 == 1:
        tl.store(o + pid * BLOCK + offs, v, mask=not (v > 0))
    else:
        tl.store(o + pid * BLOCK + offs, v, mask=(v > 0) and (offs > 2))


def test_and_or_not_on_blocks_in_a_branch_some_programs_take(backend: str) -> None:
    block, programs = 16, 4
    v = np.random.default_rng(8).integers(-8, 9, (programs, block)).astype(np.int32)
    odd = np.arange(programs)[:, None] % 2 == 1
    keep = np.where(odd, ~(v > 0), (v > 0) & (np.arange(block)[None, :] > 2))
    with registry.backend(backend):
        out = tl.to_device(np.full(programs * block, -99, np.int32), tl.i32)
        logical_blocks_per_program[(programs,)](tl.to_device(v.ravel(), tl.i32), out, BLOCK=block)
        np.testing.assert_array_equal(out.numpy().reshape(programs, block), np.where(keep, v, -99))


@tl.kernel
def not_of_one_element_blocks(x: Pointer[i32], o: Pointer[i32]) -> None:
    """``not`` on a block of one element is a block, element by element as Triton runs it (its
    ``tensor.__not__``), not Python's ``not`` of the element: it has ``.to`` and a shape, and a
    condition still reads it as its scalar."""
    pid = tl.program_id(0)
    v = tl.load(x + pid + tl.arange(0, 1))  # [1]
    flipped = not v
    tl.static_assert(len(flipped.shape) == 1)  # type: ignore[attr-defined]  # mypy types `not` as a bool
    tl.store(o + 3 * pid + tl.arange(0, 1), flipped.to(tl.int32) * 10)  # type: ignore[attr-defined]
    square = not tl.reshape(v, (1, 1))  # [1, 1]
    tl.store(o + 3 * pid + 1 + tl.arange(0, 1)[:, None], square.to(tl.int32) * 20)  # type: ignore[attr-defined]
    if not v:  # a condition on it
        tl.store(o + 3 * pid + 2 + tl.arange(0, 1), v + 7)


def test_not_of_a_one_element_block_is_a_block(backend: str) -> None:
    v = np.array([0, 3, 0, -2], np.int32)
    zero = v == 0
    want = np.stack([np.where(zero, 10, 0), np.where(zero, 20, 0), np.where(zero, 7, -99)], axis=1).ravel()
    with registry.backend(backend):
        out = tl.to_device(np.full(12, -99, np.int32), tl.i32)
        not_of_one_element_blocks[(4,)](tl.to_device(v, tl.i32), out)
        np.testing.assert_array_equal(out.numpy(), want)


REJECTED = [
    (runtime_arange, "tl.arange(0, n)", "tl.arange: end must be a compile-time int, got a runtime value",
     {}),
    (int_load_out_of_range, "other=", "other=18446744073709551616: the integer 18446744073709551616 is out of range "
     "for every integer type", {"BLOCK": 8}),
    (arange_of_six, "tl.arange(0, 6)", "tl.arange(0, 6): the extent 6 must be a positive power of two", {"BLOCK": 8}),
    (atomic_max_f16, "tl.atomic_max", "tl.atomic_max does not support tl.f16 elements", {"BLOCK": 8}),
    (int_floordiv_by_a_float, "offs // 2.5", "// needs integer operands; use / and tl.floor for floats",
     {"BLOCK": 8}),
    (bool_minus_bool, "(offs < 3) - (offs > 5)", "operator - is not defined on bools", {"BLOCK": 8}),
    (negated_mask, "mask=-(offs", "unary - is not defined on bools", {"BLOCK": 8}),
    (float_shifted, "<< 1", "invalid operands of type tl.f32 for operator <<, which needs integer operands", {"BLOCK": 8}),
    (rand_with_a_float_offset, "tl.rand", "the offset of a random function must be an integer, got a tl.f32 block "
     "of shape [8]", {"BLOCK": 8}),
    (histogram_with_an_int_mask, "mask=offs", "tl.histogram: mask must be a bool block like the input", {"BLOCK": 8}),
    (gather_across_ranks, "tl.gather", "tl.gather: src (a tl.i32 block of shape [8]) and index (a tl.i32 block of "
     "shape [2, 4]) must have the same rank", {"BLOCK": 8}),
    (permute_out_of_range, "tl.permute", "tl.permute: invalid axis 1: out of range for a block of rank 1", {"BLOCK": 8}),
    (view_to_more_elements, "tl.view", "tl.view: cannot reshape a block of shape [8] (8 elements) to [8, 2]",
     {"BLOCK": 8}),
    (cat_of_two_dtypes, "tl.cat", "tl.cat needs two blocks of the same dtype, got a tl.i32 block of shape [8] and "
     "a tl.f32 block of shape [8]", {"BLOCK": 8}),
    (split_of_a_row, "tl.split", "tl.split needs a block whose last axis has size 2, got a tl.i32 block of shape "
     "[2, 4]", {"BLOCK": 8}),
    (broadcast_rows_against_a_row, "tl.broadcast", "tl.broadcast: cannot broadcast block shapes [8] and [2, 4]",
     {"BLOCK": 8}),
    (if_on_a_block, "if offs < 3", "a block of shape [8] used as a condition; Python control flow needs a scalar",
     {"BLOCK": 8}),
    (elif_on_a_block, "elif offs", "a block of shape [8] used as a condition", {"BLOCK": 8}),
    (while_on_a_block, "while offs", "a block of shape [8] used as a condition", {"BLOCK": 8}),
    (select_on_a_block, "if offs < 3 else", "a block of shape [8] used as a condition", {"BLOCK": 8}),
    (assert_on_pointers, "assert x", "a pointer has no truth value (test its offsets)", {"BLOCK": 8}),
    (range_over_a_block, "range(offs)", "a block of shape [8] used as an integer", {"BLOCK": 8}),
    (range_to_a_float, "range(tl.load", "a tl.f32 scalar used as an integer (range bound or index)", {"BLOCK": 8}),
    (or_of_a_decided_scalar_and_a_block, "or (offs", "a block of shape [8] used as a condition", {"BLOCK": 8}),
    (and_of_a_decided_scalar_and_a_block, "and offs", "a block of shape [8] used as a condition", {"BLOCK": 8}),
    (static_assert_fails, "assert BLOCK", "assertion failed: BLOCK must exceed 8", {"BLOCK": 8}),
    (range_to_a_float_constexpr, "range(BLOCK)", "a tl.f32 scalar used as an integer (range bound or index)",
     {"BLOCK": 4.0}),
    (tl_range_to_a_float_constexpr, "tl.range(0, BLOCK", "a tl.f32 scalar used as an integer", {"BLOCK": 4.0}),
    (static_range_to_a_float_constexpr, "tl.static_range(BLOCK)", "a tl.f32 scalar used as an integer",
     {"BLOCK": 4.0}),
    (sized_by_block, "tl.arange(0, BLOCK)", "tl.arange: end must be a compile-time int, got 64.0 (a float)",
     {"BLOCK": 64.0}),
    (zeros_sized_by_block, "tl.zeros", "tl.zeros: shape must be a compile-time int, got '8' (a str)", {"BLOCK": "8"}),
    (reshaped_by_block, "tl.reshape", "tl.reshape: shape must be a compile-time int, got 4.0 (a float)",
     {"BLOCK": 4.0}),
    (summed_along_block, "tl.sum", "tl.sum: axis must be a compile-time int, got 0.0 (a float)", {"BLOCK": 0.0}),
    (contiguous_by_block, "tl.max_contiguous", "tl.max_contiguous: values must be a compile-time int, got True "
     "(a bool)", {"BLOCK": True}),
    (hinted_float_block, "tl.multiple_of", "tl.multiple_of needs an integer or pointer block, got a tl.f32 block "
     "of shape [8]", {"BLOCK": 8}),
    (rand_rounds_by_block, "tl.rand", "a random function: n_rounds must be a compile-time int, got 10.0 (a float)",
     {"BLOCK": 10.0}),
    (stores_a_wider_block, "tl.store", "a value block of shape [2, 4] does not fit the pointer block of shape [8] "
     "it is stored through", {"BLOCK": 8}),
    (load_mask_of_another_shape, "tl.load", "load: cannot broadcast block shapes [8] and [2, 4]", {"BLOCK": 8}),
    (atomic_of_another_shape, "tl.atomic_add", "tl.atomic_add: cannot broadcast block shapes [8] and [2, 4]",
     {"BLOCK": 8}),
    (narrows_a_carried_block, "for _ in range(n)", "loop-carried values do not settle on a type: p",
     {"BLOCK": 8}),
    (narrows_a_carried_python_float, "for i in range(n)", "loop-carried values do not settle on a type: m",
     {"BLOCK": 8}),
    (int_mask_on_a_load, "mask=offs", "the mask of load must be a bool block (a comparison), got a tl.i32 block "
     "of shape [8]", {"BLOCK": 8}),
    (int_mask_on_a_store, "mask=n - offs", "the mask of store must be a bool block", {"BLOCK": 8}),
    (int_mask_on_an_atomic, "mask=offs % 2", "the mask of tl.atomic_add must be a bool block", {"BLOCK": 8}),
    (retypes_on_one_branch, "if n > 3", "'v' is f16[8] on one branch and f32[8] on the other", {"BLOCK": 8}),
    (reshapes_on_the_else_side, "if n < 3", "'v' is f32[8] on one branch and f32[2,4] on the other", {"BLOCK": 8}),
    (reads_the_last_iterations_value, "acc += prev", "name 'prev' is bound only inside the loop at line", {}),
    (reads_what_an_inner_loop_bound, "acc += t", "name 't' is bound only inside the loop at line", {}),
]


@pytest.mark.parametrize("kernel, needle, message, constexprs", REJECTED, ids=[str(case[1]) for case in REJECTED])
def test_both_backends_reject_with_one_message_at_the_users_line(kernel: Kernel[Any], needle: str, message: str,
                                                                 constexprs: dict[str, Any]) -> None:
    ref = _reference_error(kernel, *_arguments(kernel), **constexprs)
    comp = _compiler_error(kernel, **constexprs)
    line = _line(kernel, needle)
    assert (ref.lineno, comp.lineno) == (line, line)
    assert ref.message == comp.message
    assert message in ref.message


def _arguments(kernel: Kernel[Any]) -> list[object]:
    """A zero buffer of 8 elements for each pointer parameter, 8 for each int."""
    hints = inspect.get_annotations(kernel.fn, eval_str=True)
    made: list[object] = []
    for hint in hints.values():
        if getattr(hint, "__origin__", None) is Pointer:
            made.append(tl.to_device(np.zeros(8, dtypes.dtype_of(hint.__args__[0]).numpy)))
        elif hint is int:
            made.append(8)
    return made


def test_builtin_abs_on_blocks_is_rejected_on_both() -> None:
    """Python's ``min``/``max`` on blocks are ``tl.minimum``/``tl.maximum``, as Triton's code generator
    maps them (tests/compiler/test_triton_arithmetic.py); ``abs``, which Triton does not define in a
    kernel, stays for scalars."""
    x = tl.to_device(np.zeros(8, np.int32), tl.i32)
    line = _line(builtin_abs_on_blocks, "abs(offs")
    ref = _reference_error(builtin_abs_on_blocks, x, BLOCK=8)
    comp = _compiler_error(builtin_abs_on_blocks, BLOCK=8)
    assert ref.lineno == comp.lineno == line and ref.message == comp.message  # the one rule, forms.python_builtin
    assert "Python's abs() on a block: use tl.abs" in comp.message


@tl.kernel
def scalar_builtins(x: Pointer[i32], n: int) -> None:
    pid = tl.program_id(0)
    tl.store(x + pid, min(pid, n) + max(pid, n) * 10 + abs(pid - n) * 100)


@tl.kernel
def reads_a_module_and_a_closure_value(x: Pointer[f32], y: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs) * SCALE)


def _closure_kernel(factor: float) -> Kernel[Any]:
    @tl.kernel
    def scaled(x: Pointer[f32], y: Pointer[f32], BLOCK: constexpr) -> None:
        offs = tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs) * factor)
    return scaled


@pytest.mark.filterwarnings("ignore::tile_lang_numpy.engine.DivergenceWarning")
def test_python_min_max_abs_on_runtime_scalars_run_on_both(backend: str) -> None:
    """Python's min/max/abs on scalars are tl.minimum/tl.maximum/tl.abs, as in Triton."""
    grid, n = 16, int(np.random.default_rng(1).integers(3, 12))
    with registry.backend(backend):
        out = tl.to_device(np.full(grid, -999, np.int32), tl.i32)
        scalar_builtins[(grid,)](out, n)
        got = out.numpy()
    pid = np.arange(grid)
    np.testing.assert_array_equal(got, np.minimum(pid, n) + np.maximum(pid, n) * 10 + np.abs(pid - n) * 100)


def test_a_closure_variable_is_read_on_both(backend: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal(64).astype(np.float32)
    factor = float(rng.uniform(0.5, 2.0))
    for kernel, scale in ((_closure_kernel(factor), factor), (reads_a_module_and_a_closure_value, SCALE)):
        with registry.backend(backend):
            y = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
            kernel[(1,)](tl.to_device(x, tl.f32), y, BLOCK=64)
            got = y.numpy()
        np.testing.assert_allclose(got, x.astype(np.float64) * np.float32(scale), rtol=1e-6)


@tl.kernel
def pointers_from_either_side(x: Pointer[f32], y: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    flipped = (BLOCK - 1 - offs) + x
    here = x + offs
    tl.store(y + offs, tl.where(flipped == here, -1.0, tl.load(flipped) * 2.0))


def test_offsets_plus_a_pointer_and_pointer_equality_run_on_both(backend: str) -> None:
    """``ints + ptr`` and ``ptr == ptr`` are Triton's; the compiler rejected both."""
    x = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    with registry.backend(backend):
        y = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        pointers_from_either_side[(1,)](tl.to_device(x, tl.f32), y, BLOCK=16)
        got = y.numpy()
    want = np.where(np.arange(16) == 15 - np.arange(16), -1.0, x[::-1].astype(np.float64) * 2.0)
    np.testing.assert_array_equal(got, want.astype(np.float32))


@tl.kernel
def asserts_on_a_runtime_scalar(x: Pointer[f32], y: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    assert n > 0, "n must be positive"
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n, other=0.0) * 2.0, mask=offs < BLOCK)


def _device_assertion_line(kernel: Kernel[Any], needle: str, message: str) -> int:
    """The line of the assert holding ``needle``, checked to be where the generated CUDA emits the
    device assertion with ``message`` (its ``#line``)."""
    line = _line(kernel, needle)
    source = kernel.cuda_source(BLOCK=16)
    before = source[:source.index(f'"{message}"')]
    assert before.rsplit("#line ", 1)[1].startswith(f"{line} ")
    return line


def test_assert_on_a_runtime_scalar_is_a_device_assertion_on_both() -> None:
    """As in Triton: the compiler emits the device's assert at the user's line with the message;
    the reference fails the launch there with it."""
    line = _device_assertion_line(asserts_on_a_runtime_scalar, "assert n", "n must be positive")
    x, y = (tl.to_device(np.zeros(16, np.float32), tl.f32) for _ in range(2))
    error = _reference_error(asserts_on_a_runtime_scalar, x, y, 0, BLOCK=16)
    assert error.lineno == line and "device_assert failed: n must be positive" in error.message


def test_a_passing_runtime_assert_runs_on_both(backend: str) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal(16).astype(np.float32)
    n = int(rng.integers(5, 12))
    with registry.backend(backend):
        y = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        asserts_on_a_runtime_scalar[(1,)](tl.to_device(x, tl.f32), y, n, BLOCK=16)
        got = y.numpy()
    np.testing.assert_array_equal(got, np.where(np.arange(16) < n, x.astype(np.float64) * 2.0, 0.0))


def test_assert_on_a_block_checks_every_element_on_both() -> None:
    """As Triton lowers it: a device assertion over the block; the reference fails the launch at
    the line with the message; the compiler emits the assertion there."""
    line = _device_assertion_line(assert_on_a_block, "assert v > 0.0", "inputs must be positive")
    rng = np.random.default_rng(11)
    x = rng.uniform(0.5, 2.0, 16).astype(np.float32)
    x[int(rng.integers(0, 10))] *= -1.0
    y = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
    error = _reference_error(assert_on_a_block, tl.to_device(x, tl.f32), y, 10, BLOCK=16)
    assert error.lineno == line and "device_assert failed: inputs must be positive" in error.message


def test_a_passing_block_assert_runs_on_both(backend: str) -> None:
    rng = np.random.default_rng(12)
    x = rng.uniform(0.5, 2.0, 16).astype(np.float32)
    x[12:] = -1.0  # masked off: read as 1.0
    with registry.backend(backend):
        y = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        assert_on_a_block[(1,)](tl.to_device(x, tl.f32), y, 12, BLOCK=16)
        got = y.numpy()
    want = np.full(16, np.nan)
    want[:12] = np.sqrt(x[:12].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@tl.kernel
def guarded_by_and_or(x: Pointer[f32], out: Pointer[f32], n: int, EVERY: constexpr) -> None:
    """``and`` guards a load past the data; a compile-time operand decides alone."""
    pid = tl.program_id(0)
    ok = pid < n and tl.load(x + pid) > 0.0
    edge = pid == 0 or pid >= n - 1
    kept = EVERY or pid % 2 == 0
    value = 1.0 if ok else -1.0
    tl.store(out + pid, value + (10.0 if edge else 0.0) + (100.0 if kept else 0.0))


@pytest.mark.parametrize("every", [False, True])
def test_and_or_on_runtime_scalars_run_on_both(backend: str, every: bool) -> None:
    rng = np.random.default_rng(5)
    n = 9
    x = rng.standard_normal(n).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(n + 3, np.nan, np.float32), tl.f32)
        guarded_by_and_or[(n + 3,)](tl.to_device(x, tl.f32), out, n, EVERY=every)
        got = out.numpy()
    pid = np.arange(n + 3)
    ok = (pid < n) & (np.concatenate([x, np.zeros(3, np.float32)]) > 0)
    kept = np.full(n + 3, True) if every else pid % 2 == 0
    want = np.where(ok, 1.0, -1.0) + 10.0 * ((pid == 0) | (pid >= n - 1)) + 100.0 * kept
    np.testing.assert_array_equal(got, want)


@tl.kernel
def sums_over_ranges(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    acc = tl.load(x) * 0.0  # an f32 scalar, typed as one
    for i in range(n):
        acc += tl.load(x + i)
    for i in tl.range(1, n, 2):
        acc += 10.0 * tl.load(x + i)
    for i in tl.static_range(BLOCK):
        acc += 100.0 * tl.load(x + i)
    tl.store(out + tl.program_id(0), acc)


def test_integer_range_bounds_run_on_both(backend: str) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal(16).astype(np.float32)
    n = int(rng.integers(5, 16))
    with registry.backend(backend):
        out = tl.to_device(np.full(2, np.nan, np.float32), tl.f32)
        sums_over_ranges[(2,)](tl.to_device(x, tl.f32), out, n, BLOCK=4)
        got = out.numpy()
    x64 = x.astype(np.float64)
    want = x64[:n].sum() + 10.0 * x64[1:n:2].sum() + 100.0 * x64[:4].sum()
    np.testing.assert_allclose(got, [want, want], rtol=1e-5)


@tl.kernel
def widens_a_carried_block(x: Pointer[f32], out: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    acc = tl.zeros((BLOCK,), tl.f16)
    for i in range(n):
        # f16 + f32 (Triton code as written; mypy's deliberate strictness asks for a cast): carried in f32
        acc = acc + tl.load(x + i * BLOCK + tl.arange(0, BLOCK))  # type: ignore[operator]
    tl.store(out + tl.arange(0, BLOCK), acc)  # type: ignore[arg-type]


@tl.kernel
def reuses_a_name_in_a_loop(x: Pointer[f32], out: Pointer[i32], n: int, BLOCK: constexpr) -> None:
    v = tl.load(x + tl.arange(0, BLOCK))
    for i in range(1, n + 2):
        # another shape: a loop-local value reusing the name, not a carried one (the fuzzer's seed 46);
        # mypy takes it only with allow_redefinition, which this repository's configuration leaves off
        v = i  # type: ignore[assignment]
        tl.store(out + (i - 1), v)  # type: ignore[arg-type]  # (mypy still sees the f32 block)


def test_a_name_reused_with_another_shape_in_a_loop_runs_on_both(backend: str) -> None:
    with registry.backend(backend):
        out = tl.to_device(np.full(8, -1, np.int32), tl.i32)
        reuses_a_name_in_a_loop[(1,)](tl.to_device(np.ones(8, np.float32), tl.f32), out, 4, BLOCK=8)
        got = out.numpy()
    np.testing.assert_array_equal(got, [1, 2, 3, 4, 5, -1, -1, -1])


def test_a_carried_block_widened_by_the_loop_runs_on_both(backend: str) -> None:
    """The widening both the compiler's carried types and the reference settle on (f16 zeros
    accumulating f32 rows: f32); narrowing is the error above."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(8, np.nan, np.float32), tl.f32)
        widens_a_carried_block[(1,)](tl.to_device(x.ravel(), tl.f32), out, 5, BLOCK=8)
        got = out.numpy()
    np.testing.assert_allclose(got, x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-6)


@tl.kernel
def inline_asm_by_hand(x: Pointer[f32]) -> None:
    v = tl.load(x)
    tl.store(x, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [v], dtype=tl.f32, is_pure=True, pack=1))


@tl.kernel
def truth_by_hand(x: Pointer[i32]) -> None:
    if operators.truth(tl.load(x) > 2):
        tl.store(x, 7)


def test_an_op_a_backend_lacks_is_refused_with_the_one_message_it_declares() -> None:
    """What a backend cannot do is declared as data (its Capabilities), and the dispatcher refuses
    it with one message at the user's line; the other backend runs it."""
    from tile_lang.builtin import builtin_of
    from tile_lang.compiler.lowering import CAPABILITIES as compiled
    from tile_lang_numpy.engine import CAPABILITIES as reference

    asm, truth = builtin_of(tl.inline_asm_elementwise), builtin_of(operators.truth)
    assert asm is not None and truth is not None and asm in reference.lacks and truth in compiled.lacks
    ref = _reference_error(inline_asm_by_hand, *_arguments(inline_asm_by_hand))
    assert ref.message == str(reference.refusal(asm)) == ("tl.inline_asm_elementwise is not supported on the numpy "
                                                          "backend: inline assembly is PTX, which only the CUDA "
                                                          "backend compiles")
    assert ref.lineno == _line(inline_asm_by_hand, "tl.inline_asm_elementwise")
    comp = _compiler_error(truth_by_hand)
    assert comp.message == str(compiled.refusal(truth)) and "tl.truth is not supported on the CUDA backend" in comp.message
    assert comp.lineno == _line(truth_by_hand, "operators.truth")
    assert "mov.b32" in inline_asm_by_hand.cuda_source()
    for start, want in ((3, 7), (-4, -4)):
        x = np.array([start], np.int32)
        truth_by_hand[(1,)](tl.wrap(x, tl.i32))
        assert x.tolist() == [want]


@tl.kernel
def retypes_in_one_program(x: Pointer[f32], out: Pointer[f32], BLOCK: constexpr) -> None:
    v = tl.load(x + tl.arange(0, BLOCK))
    if tl.program_id(0) == 1:  # programs disagree: the reference runs them one at a time
        v = v.to(tl.float16)  # type: ignore[assignment]
    tl.store(out + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), v.to(tl.float32))


def test_a_name_retyped_by_the_branch_of_some_programs_is_rejected_on_both() -> None:
    """Divergent programs take both sides; each program's run shows the rule's error."""
    x, out = tl.to_device(np.ones(8, np.float32)), tl.to_device(np.full(16, np.nan, np.float32))
    with pytest.raises(KernelError) as ref:
        retypes_in_one_program[(2,)](x, out, BLOCK=8)
    comp = _compiler_error(retypes_in_one_program, BLOCK=8)
    assert ref.value.lineno == comp.lineno == _line(retypes_in_one_program, "if tl.program_id")
    assert ref.value.message == comp.message == "'v' is f16[8] on one branch and f32[8] on the other"
    assert np.isnan(out.numpy()).all()  # nothing written: the launch is all or nothing


@tl.kernel
def retypes_under_a_constexpr_if(x: Pointer[f32], out: Pointer[f32], BLOCK: constexpr, HALF: constexpr) -> None:
    v = tl.load(x + tl.arange(0, BLOCK))
    if HALF:  # decided when the kernel is compiled: the code after it sees one type
        v = v.to(tl.float16)  # type: ignore[assignment]
    tl.store(out + tl.arange(0, BLOCK), v.to(tl.float32))


@pytest.mark.parametrize("half", [False, True])
def test_a_name_retyped_under_a_compile_time_if_runs_on_both(backend: str, half: bool) -> None:
    x = np.random.default_rng(4).standard_normal(8).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(8, np.nan, np.float32))
        retypes_under_a_constexpr_if[(1,)](tl.to_device(x), out, BLOCK=8, HALF=half)
        got = out.numpy()
    np.testing.assert_array_equal(got, x.astype(np.float16).astype(np.float32) if half else x)


@tl.kernel
def reads_a_value_only_its_for_binds(x: Pointer[f32], trips: Pointer[i32], out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    for k in range(tl.load(trips + pid)):
        w = tl.load(x + k) * 2.0
    tl.store(out + pid, w)  # read: w


@tl.kernel
def reads_a_value_only_its_while_binds(x: Pointer[f32], trips: Pointer[i32], out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    k = 0
    while k < tl.load(trips + pid):
        w = tl.load(x + k) * 2.0
        k += 1
    tl.store(out + pid, w)  # read: w


@tl.kernel
def reads_the_index_after_its_loop(x: Pointer[f32], trips: Pointer[i32], out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    for i in range(tl.load(trips + pid)):
        tl.store(out + pid, tl.load(x + i))
    tl.store(out + pid, tl.load(x + i) * 2.0)  # read: i


@tl.kernel
def reads_names_bound_before_its_loop(x: Pointer[f32], trips: Pointer[i32], out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    i = -1
    w = tl.load(x) * 0.0 + 0.5
    for i in range(tl.load(trips + pid)):
        w = tl.load(x + i) * 2.0 + w
    tl.store(out + 2 * pid, i * 1.0)
    tl.store(out + 2 * pid + 1, w)


@tl.kernel
def reads_names_its_unrolled_loop_binds(x: Pointer[f32], out: Pointer[f32], N: constexpr) -> None:
    for k in tl.static_range(N):
        w = tl.load(x + k) * 2.0
    tl.store(out, w + k)  # read: w


TRIPS = [[0], [3], [0, 2, 5, 0], [4, 1, 2, 3]]  # per program: the reference runs diverging programs masked
TRIP_IDS = ["no trip", "trips", "diverging, some none", "diverging"]


@pytest.mark.parametrize("trips", TRIPS, ids=TRIP_IDS)
@pytest.mark.parametrize(("kernel", "name", "loop"), [(reads_a_value_only_its_for_binds, "w", "for k in"),
                                                      (reads_a_value_only_its_while_binds, "w", "while k <"),
                                                      (reads_the_index_after_its_loop, "i", "for i in")],
                         ids=["for body", "while body", "for index"])
def test_a_name_only_a_runtime_loop_binds_is_not_read_after_it_on_both(backend: str, kernel: Kernel[Any], name: str,
                                                                       loop: str, trips: list[int]) -> None:
    """A runtime loop carries only the names bound before it (Triton: the body's are not defined
    after the loop, its index is undefined there): whatever the trip counts, reading after the
    loop a name it alone bound is the shared rule's error (``forms.loop_local``) at the read's
    line on both backends, the compiler's at compile time; the failed launch writes nothing."""
    x = np.random.default_rng(8).standard_normal(8).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(len(trips), np.nan, np.float32))
        with pytest.raises(KernelError) as caught:
            kernel[(len(trips),)](tl.to_device(x), tl.to_device(np.array(trips, np.int32), tl.i32), out)
        assert np.isnan(out.numpy()).all()
    comp = _compiler_error(kernel)
    assert caught.value.message == comp.message == (f"name {name!r} is bound only inside the loop at line "
                                                    f"{_line(kernel, loop)}; bind it before the loop to read it "
                                                    "after the loop or in a later iteration")
    assert caught.value.lineno == comp.lineno == _line(kernel, f"# read: {name}")


@pytest.mark.parametrize("trips", TRIPS, ids=TRIP_IDS)
def test_names_bound_before_a_runtime_loop_hold_pythons_values_after_it_on_both(backend: str,
                                                                                trips: list[int]) -> None:
    """The index and a value bound before the loop: the last ones after it, the earlier bindings
    after no trip, as in Python (Triton reads an undefined index there: tile_lang defines it)."""
    x = np.random.default_rng(9).standard_normal(8).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(2 * len(trips), np.nan, np.float32))
        reads_names_bound_before_its_loop[(len(trips),)](tl.to_device(x), tl.to_device(np.array(trips, np.int32),
                                                                                       tl.i32), out)
        got = out.numpy()
    want = []
    for n in trips:
        i, w = -1, 0.5
        for i in range(n):
            w = float(x[i]) * 2.0 + w
        want += [float(i), w]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_names_an_unrolled_loop_binds_keep_pythons_scope_on_both(backend: str) -> None:
    """A ``tl.static_range`` loop is unrolled: its names are the function's, read after it as in
    Python, and after no trip Python's UnboundLocalError at the read's line on both."""
    x = np.random.default_rng(10).standard_normal(8).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(1, np.nan, np.float32))
        reads_names_its_unrolled_loop_binds[(1,)](tl.to_device(x), out, N=3)
        np.testing.assert_allclose(out.numpy(), [float(x[2]) * 2.0 + 2.0], rtol=1e-6)
        out = tl.to_device(np.full(1, np.nan, np.float32))
        with pytest.raises(KernelError) as caught:
            reads_names_its_unrolled_loop_binds[(1,)](tl.to_device(x), out, N=0)
        assert np.isnan(out.numpy()).all()
    assert caught.value.message == "UnboundLocalError: cannot access local variable 'w' where it is not associated " \
                                   "with a value"
    assert caught.value.lineno == _line(reads_names_its_unrolled_loop_binds, "# read: w")


@tl.kernel
def reads_a_value_only_its_then_side_binds(x: Pointer[f32], n: int, out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    if pid < n:  # if: y
        y = tl.load(x + pid) * 2.0
    tl.store(out + pid, y)  # read: y


@tl.kernel
def reads_a_value_only_its_else_side_binds(x: Pointer[f32], n: int, out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    if pid < n:  # if: y
        tl.store(out + pid, 1.0)
    else:
        y = tl.load(x + pid) - 1.0
    tl.store(out + pid, y + 1.0)  # read: y


@tl.kernel
def reads_what_a_nested_if_bound(x: Pointer[f32], n: int, out: Pointer[f32]) -> None:
    pid = tl.program_id(0)
    v = tl.load(x + pid)
    if pid < n:  # if: y
        if v > 0.0:
            y = v
    acc = v * 0.5
    acc += y  # read: y
    tl.store(out + pid, acc)


@pytest.mark.parametrize("n", [0, 2, 4], ids=["no program takes it", "diverging", "every program takes it"])
@pytest.mark.parametrize("kernel", [reads_a_value_only_its_then_side_binds, reads_a_value_only_its_else_side_binds,
                                    reads_what_a_nested_if_bound], ids=["then side", "else side", "nested if"])
def test_a_name_one_side_of_a_runtime_if_binds_is_not_read_after_it_on_both(backend: str, kernel: Kernel[Any],
                                                                            n: int) -> None:
    """A runtime ``if`` keeps a name bound on one of its sides only to itself (Triton drops it:
    a NameError at the read): whatever side each program takes, reading it after the ``if`` is
    the shared rule's error (``forms.branch_own``) at the read's line on both backends, the
    compiler's at compile time; the failed launch writes nothing."""
    x = np.random.default_rng(11).standard_normal(4).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(4, np.nan, np.float32))
        with pytest.raises(KernelError) as caught:
            kernel[(4,)](tl.to_device(x), n, out)
        assert np.isnan(out.numpy()).all()
    comp = _compiler_error(kernel)
    assert caught.value.message == comp.message == (f"name 'y' is bound only on one side of the runtime if at line "
                                                    f"{_line(kernel, '# if: y')}; bind it before the if (or on both "
                                                    "sides) to read it after")
    assert caught.value.lineno == comp.lineno == _line(kernel, "# read: y")


@tl.kernel
def reads_names_its_ifs_leave_bound(x: Pointer[f32], n: int, out: Pointer[f32], FLAG: constexpr) -> None:
    pid = tl.program_id(0)
    v = tl.load(x + pid)
    w = v + 1.0
    if v > 0.0:  # bound before, rebound on one side
        w = v * 3.0
    if pid < n:  # bound on both sides
        z = w - 2.0
    else:
        z = w * 0.5
    if FLAG:  # a compile-time if: Python's names
        c = z + 0.25
    if pid % 2 == 0:  # the other side returns: the names of the side that goes on flow out
        u = c * 2.0 if v < 1.0 else c
    else:
        return
    tl.store(out + pid, u)  # read: u


@pytest.mark.parametrize("n", [0, 3, 8])
def test_names_bound_before_on_both_sides_or_beside_a_return_are_read_after_a_runtime_if_on_both(backend: str,
                                                                                                 n: int) -> None:
    """What stays legal: a name bound before the ``if`` and rebound on one side, one bound on both
    sides, one bound beside a side that returns, one a compile-time ``if`` binds (Python's value;
    with a false condition Python's UnboundLocalError), each against Python's values in float64."""
    x = np.random.default_rng(12).standard_normal(8).astype(np.float32)
    want = []
    for pid, v in enumerate(x.astype(np.float64)):
        w = v * 3.0 if v > 0.0 else v + 1.0
        c = (w - 2.0 if pid < n else w * 0.5) + 0.25
        want.append((c * 2.0 if v < 1.0 else c) if pid % 2 == 0 else np.nan)
    with registry.backend(backend):
        out = tl.to_device(np.full(8, np.nan, np.float32))
        reads_names_its_ifs_leave_bound[(8,)](tl.to_device(x), n, out, FLAG=True)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
        out = tl.to_device(np.full(8, np.nan, np.float32))
        with pytest.raises(KernelError) as caught:
            reads_names_its_ifs_leave_bound[(8,)](tl.to_device(x), n, out, FLAG=False)
        assert np.isnan(out.numpy()).all()
    comp = _compiler_error(reads_names_its_ifs_leave_bound, FLAG=False)
    assert caught.value.message == comp.message == ("UnboundLocalError: cannot access local variable 'c' where it is "
                                                    "not associated with a value")
    assert caught.value.lineno == comp.lineno == _line(reads_names_its_ifs_leave_bound, "u = c * 2.0")


@tl.kernel
def python_min_of_loaded_floats(x: Pointer[f32], out: Pointer[f32]) -> None:
    a, b = tl.load(x), tl.load(x + 1)
    tl.store(out, min(a, b))
    tl.store(out + 1, tl.minimum(a, b))
    tl.store(out + 2, max(a, b))
    tl.store(out + 3, tl.maximum(a, b))


@pytest.mark.parametrize("pair", [(1.5, -2.0), (float("nan"), 2.0), (2.0, float("nan"))])
def test_python_min_max_on_runtime_floats_are_tl_minimum_maximum_on_both(backend: str, pair: tuple[float, float]) -> None:
    """Python's min/max on runtime values are the tl ops on both backends, NaN operands included
    (Python's own min(2.0, nan) is 2.0 and min(nan, 2.0) is nan: the order would decide)."""
    with registry.backend(backend):
        out = tl.to_device(np.full(4, -7.0, np.float32))
        python_min_of_loaded_floats[(1,)](tl.to_device(np.array(pair, np.float32)), out)
        got = out.numpy()
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[2], got[3])
    if not np.isnan(pair).any():
        assert (got[0], got[2]) == (min(pair), max(pair))
