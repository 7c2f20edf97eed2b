"""Vector widths that depend on axis info beyond plain block offsets: loads in ``for`` loops
(the induction variable of ``range(0, n, BLOCK)`` is divisible by BLOCK) and 2-D offsets built
with ``[:, None]`` (each row starts where the row stride puts it)."""

from __future__ import annotations

from dataclasses import replace

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import Function, MemAttr, Op, walk
from tile_lang.compiler.passes.axis_info import analyze
from tile_lang.compiler.spec import ArgSpec, Spec

from tests.compiler.kernels import layernorm_kernel


@tl.kernel
def tile_copy(src: Pointer[f32], dst: Pointer[f32], stride: int, BM: constexpr, BN: constexpr) -> None:
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    tl.store(dst + rm[:, None] * BN + rn[None, :], tl.load(src + rm[:, None] * stride + rn[None, :]))


def _aligned(spec: Spec) -> Spec:
    return replace(spec, args=tuple(replace(a, divisible_by_16=True) for a in spec.args))


def _widths(fn: Function) -> list[int]:
    return [n.attr.vector for n in walk(fn.body) if n.op in (Op.LOAD, Op.STORE) and isinstance(n.attr, MemAttr)]


def test_induction_variable_divisibility() -> None:
    fn = compile_ir(layernorm_kernel, _aligned(static_spec(layernorm_kernel, {"BLOCK": 1024}, num_warps=8)))
    info = analyze(fn)
    loops = [n for n in walk(fn.body) if n.op is Op.FOR]
    assert len(loops) == 3
    assert all(info[loop.regions[0].params[0]].divisibility == (1024,) for loop in loops)


def test_layernorm_accesses_are_128_bit() -> None:
    fn = compile_ir(layernorm_kernel, _aligned(static_spec(layernorm_kernel, {"BLOCK": 4096}, num_warps=8)))
    assert _widths(fn) == [4] * 6


def test_rows_of_an_unaligned_stride_are_read_one_element_at_a_time() -> None:
    spec = static_spec(tile_copy, {"BM": 16, "BN": 32})
    aligned = compile_ir(tile_copy, _aligned(spec))
    assert _widths(aligned) == [4, 4]
    odd_stride = replace(spec, args=(*_aligned(spec).args[:2], ArgSpec(spec.args[2].dtype)))  # e.g. 67
    assert _widths(compile_ir(tile_copy, odd_stride)) == [1, 4]
