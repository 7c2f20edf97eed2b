"""Compiler unit tests (no GPU, no nvcc): IR printing, the verifier, axis info and vector
widths, layouts, and errors located at the user's line."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr
from tile_lang.compiler import build, compile_ir, print_function, static_spec
from tile_lang.compiler.ir import Function, MemAttr, Node, Op, PermuteAttr, Region, Type, walk
from tile_lang.compiler.passes.axis_info import analyze
from tile_lang.compiler.spec import Spec
from tile_lang.compiler.verifier import VerifyError, verify
from tile_lang.dtypes import F32, I32
from tile_lang.errors import KernelError

from tests.compiler.kernels import KERNELS, add_kernel, softmax_kernel


def _aligned(spec: Spec) -> Spec:
    """Every argument divisible by 16, as a launch on aligned buffers with n % 16 == 0."""
    return replace(spec, args=tuple(replace(a, divisible_by_16=True) for a in spec.args))


def _memory_widths(fn: Function) -> list[int]:
    return [n.attr.vector for n in walk(fn.body) if n.op in (Op.LOAD, Op.STORE) and isinstance(n.attr, MemAttr)]


def test_ir_prints_types_layouts_and_lines() -> None:
    text = print_function(compile_ir(add_kernel, static_spec(add_kernel, {"BLOCK": 1024})))
    assert text.startswith("func @add_kernel(")
    assert "arange[[0, 1024)]() : i32[1024] #computed" in text
    assert "load[vec=" in text and "#blocked<t=128,v=4,r=2>" in text
    assert "@" + str(add_kernel.lineno + 3) in text  # source lines of the kernel file


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_pass_keeps_the_ir_valid(name: str) -> None:
    kernel, constexprs = KERNELS[name]
    compile_ir(kernel, static_spec(kernel, constexprs), verify_each=True)


def test_verifier_rejects_use_before_definition() -> None:
    fn = build(add_kernel, static_spec(add_kernel, {"BLOCK": 64}))
    body = fn.body.body
    broken = replace(fn, body=Region((), body[::-1], ()))
    with pytest.raises(VerifyError, match="not defined before"):
        verify(broken)


def test_verifier_rejects_shape_mismatch() -> None:
    a = Node(Op.ARANGE, Type(I32, (64,)))
    bad = Node(Op.CAST, Type(F32, (32,)), (a,))
    fn = Function("f", (), Region((), (a, bad), ()))
    with pytest.raises(VerifyError, match="operand shape"):
        verify(fn)


def test_axis_info_of_block_offsets() -> None:
    fn = build(add_kernel, _aligned(static_spec(add_kernel, {"BLOCK": 1024})))
    info = analyze(fn)
    offs = next(n for n in walk(fn.body) if n.op is Op.BINARY and n.ty.shape == (1024,) and n.ty.dtype == I32)
    assert info[offs].contiguity == (1024,)
    assert info[offs].divisibility == (1024,)
    mask = next(n for n in walk(fn.body) if n.ty is not None and n.type is not None and n.ty.dtype.is_bool)
    assert info[mask].constancy == (16,)


def test_aligned_offsets_give_128_bit_access() -> None:
    fn = compile_ir(add_kernel, _aligned(static_spec(add_kernel, {"BLOCK": 1024})))
    assert _memory_widths(fn) == [4, 4, 4]


def test_unaligned_bound_gives_scalar_access() -> None:
    fn = compile_ir(add_kernel, static_spec(add_kernel, {"BLOCK": 1024}))  # n not known divisible by 16
    assert _memory_widths(fn) == [1, 1, 1]


def test_softmax_needs_no_shared_memory_conversion() -> None:
    fn = compile_ir(softmax_kernel, _aligned(static_spec(softmax_kernel, {"BLOCK": 1024})))
    assert not any(n.op is Op.CONVERT for n in walk(fn.body))


def test_broadcast_of_loaded_value_goes_through_shared_memory() -> None:
    kernel, constexprs = KERNELS["reduce2d"]
    fn = compile_ir(kernel, static_spec(kernel, constexprs))
    assert any(n.op is Op.CONVERT for n in walk(fn.body))


def test_constexpr_if_keeps_one_branch() -> None:
    kernel, constexprs = KERNELS["control"]
    on = print_function(compile_ir(kernel, static_spec(kernel, {**constexprs, "FLAG": True})))
    off = print_function(compile_ir(kernel, static_spec(kernel, {**constexprs, "FLAG": False})))
    assert on.count("binary[mul]") > off.count("binary[mul]")


# ---------------------------------------------------------------- errors at the user's line


def _helper(x: int) -> int:
    return x + 1


@tl.kernel
def uses_list_comprehension(x_ptr: Pointer[tl.f32], BLOCK: constexpr) -> None:
    values = [i for i in range(4)]  # line: comprehension
    tl.store(x_ptr, values[0])


@tl.kernel
def calls_python(x_ptr: Pointer[tl.f32], n: int) -> None:
    tl.store(x_ptr, _helper(n))  # line: python call


@tl.kernel
def branches_on_block(x_ptr: Pointer[tl.f32], BLOCK: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if x > 0:  # line: tensor if
        tl.store(x_ptr, 1.0)


@pytest.mark.parametrize("kernel, marker, message", [
    (uses_list_comprehension, "# line: comprehension", "ListComp"),
    (calls_python, "# line: python call", "_helper"),
    (branches_on_block, "# line: tensor if", "tl.where"),
])
def test_errors_point_at_the_user_line(kernel: tl.Kernel[...], marker: str, message: str) -> None:
    with pytest.raises(KernelError) as caught:
        build(kernel, static_spec(kernel, {"BLOCK": 64}))
    err = caught.value
    lines = open(__file__).read().splitlines()
    assert marker in lines[err.lineno - 1]
    text = str(err)
    assert message in text and __file__ in text and marker in text
    assert "tile_lang/compiler" not in text and "frontend.py" not in text


# ---------------------------------------------------------------- the reference's misuse cases, compiled

_RUNTIME_ONLY = {"gather_range", "join_pointers"}  # checked on values by the reference; undefined on a GPU


def _misuse_cases() -> list[tuple[Any, str, str]]:
    """Every (kernel, case, message) of the reference's misuse tests that a compiler can check."""
    from tests.numpy_backend import test_dot, test_reduction, test_shape

    cases: list[tuple[Any, str, str]] = []
    for module in (test_reduction, test_shape, test_dot):
        test = module.test_misuse_is_a_kernel_error_at_the_line
        table = next(m.args[1] for m in test.pytestmark if m.name == "parametrize")
        cases.extend((module, case, message) for case, message in table if case not in _RUNTIME_ONLY)
    return cases


@pytest.mark.parametrize("module, case, message", _misuse_cases(),
                         ids=[f"{m.__name__.rsplit('_', 1)[-1]}-{c}" for m, c, _ in _misuse_cases()])
def test_reference_misuse_is_a_compile_error_at_the_user_line(module: Any, case: str, message: str) -> None:
    with pytest.raises(KernelError, match=message) as caught:
        build(module.misuse, static_spec(module.misuse, {"CASE": case}))
    assert caught.value.filename == module.__file__
    assert "tile_lang/compiler" not in str(caught.value)


_BLOCK_MISUSE = [
    ("misuse_kernel", "mask", "takes no mask or other"), ("misuse_kernel", "dtype", r"needs tl\.f32 values"),
    ("misuse_kernel", "nan", "'nan' needs floating-point"),
    ("misuse_kernel", "dims", r"boundary_check must list dims in \[0, 2\)"),
    ("misuse_kernel", "order", "order must be a permutation"),
    ("bad_descriptor_kernel", "last", "last stride of a tensor descriptor must be 1"),
    ("bad_descriptor_kernel", "narrow", "at least 16 bytes"),
    ("bad_descriptor_kernel", "offsets", r"offsets must be 32-bit integers \(add \.to\(tl\.i32\)\)"),
]


@pytest.mark.parametrize("kernel, what, message", _BLOCK_MISUSE, ids=[w for _, w, _ in _BLOCK_MISUSE])
def test_block_pointer_and_descriptor_misuse_is_a_compile_error(kernel: str, what: str, message: str) -> None:
    from tests.numpy_backend import test_blocks

    fn = getattr(test_blocks, kernel)
    with pytest.raises(KernelError, match=message) as caught:
        build(fn, static_spec(fn, {"WHAT": what}))
    assert caught.value.filename == test_blocks.__file__


@tl.kernel
def transposed_tile(x_ptr: Pointer[tl.f32], y_ptr: Pointer[tl.f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], x.T)


def test_dot_T_of_a_block_is_its_transpose() -> None:
    """``x.T`` is ``tl.trans(x)`` in compiled kernels too (Triton's tutorials write ``.T``)."""
    fn = build(transposed_tile, static_spec(transposed_tile, {"BLOCK": 16}))
    assert [n.attr.dims for n in walk(fn.body) if n.op is Op.PERMUTE and isinstance(n.attr, PermuteAttr)] == [(1, 0)]
