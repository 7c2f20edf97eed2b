"""Codegen only renders what the passes decided: it imports nothing from the passes, and the
software-pipelining pass records its decisions (carried steps, held copy addresses) in the IR."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import dot_kernels as D
from benchmarks import form_kernels as F
from tests.compiler.test_tensor_cores import _aligned_spec
import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, f32
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import BinaryAttr, BinaryFn, Function, LoopAttr, MemAttr, Node, Op, walk

CODEGEN = Path(__file__).resolve().parents[2] / "backends" / "tile_lang_cupy" / "codegen"


def _imported(path: Path) -> list[str]:
    """Every module ``path`` imports, lazily or not."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def test_codegen_imports_nothing_from_the_passes() -> None:
    files = sorted(CODEGEN.glob("*.py"))
    assert len(files) > 5
    for path in files:
        bad = [m for m in _imported(path) if m == "tile_lang.compiler.passes" or m.startswith("tile_lang.compiler.passes.")]
        assert not bad, f"{path.name} imports {bad}: codegen reads the IR, the passes record their decisions in it"


def _matmul(stages: int, arch: int) -> Function:
    ints = [p.name for p in D.matmul.runtime_params if p.annotation is int]
    spec = static_spec(D.matmul, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8), 4, num_stages=stages,
                       arch=arch, pointees={"a_ptr": dtypes.F16, "b_ptr": dtypes.F16, "c_ptr": dtypes.F16},
                       divisible=ints)
    return compile_ir(D.matmul, spec, verify_each=True)


def _loop(fn: Function) -> Node:
    (loop,) = [n for n in walk(fn.body) if n.op is Op.FOR]
    return loop


def _grouped(arch: int) -> Function:
    """The grouped matmul whose operand rows and columns wrap with ``% M`` / ``% N``."""
    spec = _aligned_spec(F.mm_grouped, 4096, 4, 3, dtypes.F16, ("stride_ak", "stride_bn", "stride_cn"),
                         BM=128, BN=128, BK=32, GROUP_M=8)
    return compile_ir(F.mm_grouped, replace(spec, arch=arch), verify_each=True)


def _copies_and_steps(fn: Function) -> tuple[Node, list[Node]]:
    loop = _loop(fn)
    assert isinstance(loop.attr, LoopAttr) and loop.attr.stages == 3 and loop.attr.steps
    body = loop.regions[0]
    for i in loop.attr.steps:  # each a carried scalar yielded as itself plus a step
        out = body.results[i]
        assert body.params[1 + i].ty.is_scalar and out.op is Op.BINARY and isinstance(out.attr, BinaryAttr)
        assert out.attr.fn is BinaryFn.ADD and out.args[0] is body.params[1 + i]
    copies = [n for n in body.body if n.op is Op.ASYNC_COPY and isinstance(n.attr, MemAttr) and not n.attr.box]
    assert copies
    for copy in copies:  # ``a_ptrs + offset``, the offset one of the carried values
        moved = [a for a in copy.args[0].args if a.op is Op.SPLAT]
        assert len(moved) == 1 and moved[0].args[0] in body.params[1:]
    return loop, copies


@pytest.mark.parametrize("arch", [80, 90])
def test_stepped_addresses_that_cost_a_division_are_held(arch: int) -> None:
    loop, copies = _copies_and_steps(_grouped(arch))
    assert isinstance(loop.attr, LoopAttr) and len(copies) == 2
    assert all(isinstance(copy.attr, MemAttr) and copy.attr.hold for copy in copies)


@pytest.mark.parametrize("arch", [80, 90])
def test_stepped_addresses_without_a_division_are_recomputed_at_each_copy(arch: int) -> None:
    _, copies = _copies_and_steps(_matmul(3, arch))
    assert all(isinstance(c.attr, MemAttr) and not c.attr.hold for c in copies)


def test_a_loop_left_unpipelined_records_nothing() -> None:
    loop = _loop(_matmul(1, 80))
    assert isinstance(loop.attr, LoopAttr) and loop.attr.stages == 1 and loop.attr.steps == ()
    assert all(not n.attr.hold for n in walk(loop.regions[0]) if isinstance(n.attr, MemAttr))


@pytest.mark.parametrize("arch", [80, 90])
def test_held_addresses_stay_as_loaded_and_each_copy_adds_its_offset(arch: int) -> None:
    """A held pointer block is never stepped in place (a 64-bit add per run per iteration, which
    measured 0.82 of Triton on the grouped matmul against 0.96): every copy of the loop, the
    prologue's and the prefetches', reads a held register plus its carried offset."""
    from tile_lang_cupy.codegen import generate

    source = generate(_grouped(arch)).source
    held = re.findall(r"(at\d+)\[k\] = \(\(p_[ab]_ptr", source)
    assert len(held) == 2, source
    for name in held:
        assert not re.search(rf"\b{name}\[k\] \+=", source), f"{name} is stepped in place"
        uses = re.findall(rf"cp_async<\d+>\([^;]*\({name}\[k\] \+ \(c\d+ \+ \d \*", source)
        assert len(uses) == 3, f"{name}: {len(uses)} copies add a carried offset, expected the 3 stages'"


@tl.kernel
def ieee_tile_product(a_ptr: Pointer[f32], b_ptr: Pointer[f32], o_ptr: Pointer[f32], BM: constexpr, BN: constexpr,
                      BK: constexpr) -> None:
    """An f32 ``tl.dot`` in IEEE precision: no tensor-core instruction takes it, so CUDA cores do."""
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * BK + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * BN + cols[None, :])
    tl.store(o_ptr + rows[:, None] * BN + cols[None, :], tl.dot(a, b, input_precision="ieee"))


def test_a_cuda_core_dot_steps_k_at_run_time() -> None:
    """K is the outer loop of a CUDA-core dot, unrolled by a few steps only, each step one
    multiply-add per element of the thread: with K unrolled inside each element, NVVM's time
    grew with the tile (an f32 128x128x32 tile took 96 s to compile, FlagGems' bmm configs
    timed out while autotuning)."""
    source = ieee_tile_product.cuda_source(num_warps=4, arch="90a", BM=128, BN=128, BK=32)
    loop = re.search(r"#pragma unroll (\d+)\n\s*for \(unsigned q = 0; q < 32u; \+\+q\) \{\n\s*#pragma unroll\n", source)
    assert loop is not None and int(loop.group(1)) <= 4, source
    assert source.count("for (unsigned q = 0;") == 1
