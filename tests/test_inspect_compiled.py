"""``kernel.compile(...)`` and ``tile-lang inspect --ptx/--sass/--resources``: the IR and CUDA always, the
PTX, cubin and ptxas's resources from the CUDA toolkit on PATH (no GPU needed), and a BackendError
naming the tool when one is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.compiler.kernels import add_kernel
from tile_lang.cli import main
from tile_lang.compiled import ASM_KEYS, Compiler, Metadata
from tile_lang.errors import BackendError, MissingAsm

NVCC, PTXAS = shutil.which("nvcc"), shutil.which("ptxas")
needs_toolkit = pytest.mark.skipif(NVCC is None or PTXAS is None,
                                   reason="nvcc and ptxas are not on PATH: no PTX or cubin can be made")


def hide(monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """Make ``tools`` look missing from PATH, wherever the test runs."""
    found = shutil.which
    monkeypatch.setattr(shutil, "which", lambda tool, *args, **kwargs: None if tool in tools else found(tool))


def test_kernel_reaches_the_compiler_by_name_as_a_compiler() -> None:
    """``Kernel.inspect``, ``cuda_source`` and ``compile`` import the compiler by name (so mypy does not
    analyse it for each kernel file): the module is a ``Compiler`` for mypy here, and at run time."""
    import tile_lang.compiler.inspect as entries

    compiler: Compiler = entries
    assert isinstance(compiler, Compiler)


def test_ir_and_cuda_need_no_toolkit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no CUDA tool
    compiled = add_kernel.compile(BLOCK=256)
    assert list(compiled.asm) == list(ASM_KEYS) and compiled.name == "add_kernel"
    assert compiled.asm["cuda"] == add_kernel.cuda_source(BLOCK=256)
    assert compiled.asm["ir"] == add_kernel.inspect(BLOCK=256)
    with pytest.raises(KeyError, match="the cubin is compiled.cubin"):
        compiled.asm["cubin"]
    with pytest.raises(MissingAsm, match="'ttgir' \\(Triton's MLIR; tile_lang compiles through CUDA C\\+\\+\\)"):
        compiled.asm["ttgir"]  # Triton's tests read it: a tile_lang error, and a KeyError for Mapping's get and in
    assert compiled.asm.get("llir") is None and "ttgir" not in compiled.asm


@pytest.mark.parametrize("arch, target", [("80", "sm_80"), ("90a", "sm_90a")])
@needs_toolkit
def test_ptx_cubin_and_resources(arch: str, target: str) -> None:
    """The PTX defines the kernel's entry for the target; ptxas's report gives registers (a masked
    add needs some, spills none) and the shared memory the generated code reserves at least."""
    compiled = add_kernel.compile(arch=arch, BLOCK=1024)
    ptx = compiled.asm["ptx"]
    assert f".target {target}" in ptx and ".entry add_kernel(" in ptx and "ld.global" in ptx
    assert compiled.cubin[:4] == b"\x7fELF"
    assert 8 <= compiled.n_regs <= 255 and compiled.n_spills == 0
    assert compiled.shared >= compiled.source.dynamic_shared > 0
    assert compiled.resources() == (f"kernel add_kernel ({target}): {compiled.n_regs} registers, 0 spills, "
                                    f"{compiled.shared} bytes shared memory")


@needs_toolkit
def test_a_missing_tool_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "cuobjdump", "nvdisasm")
    compiled = add_kernel.compile(BLOCK=256)
    assert compiled.n_regs > 0  # nvcc and ptxas are there
    with pytest.raises(BackendError, match="kernel add_kernel: cuobjdump is not on PATH, and it makes the SASS"):
        compiled.asm["sass"]
    hide(monkeypatch, "nvcc")
    with pytest.raises(BackendError, match="kernel add_kernel: nvcc is not on PATH, and it makes the PTX"):
        add_kernel.compile(BLOCK=256).n_regs


@needs_toolkit
def test_cli_shows_ptx_and_resources(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    hide(monkeypatch, "cuobjdump", "nvdisasm")
    target = ["inspect", "tests.compiler.kernels:add_kernel", "--constexpr", "BLOCK=128"]
    assert main([*target, "--ptx"]) == 0
    assert ".entry add_kernel(" in capsys.readouterr().out
    assert main([*target, "--resources", "--arch", "90a"]) == 0
    assert capsys.readouterr().out.startswith("kernel add_kernel (sm_90a): ")
    assert main([*target, "--sass"]) == 1
    assert "cuobjdump is not on PATH" in capsys.readouterr().err


_DOTS = {"matmul": ("K", "N", "M", "stride_am", "stride_bk", "stride_cm"), "matmul_tma": ("K", "N")}


@pytest.mark.parametrize("kernel, arch, used", [
    ("matmul", "80", ("mma.sync", "cp.async")),
    ("matmul", "90a", ("wgmma", "cp.async")),
    ("matmul_tma", "90a", ("wgmma", "cp.async.bulk.tensor")),
])
@needs_toolkit
def test_metadata_of_a_dot_names_its_instructions(kernel: str, arch: str, used: tuple[str, ...],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipelined f16 matmul: mma.sync and cp.async on sm_80, wgmma on sm_90a, bulk tensor copies
    through descriptors; the generated CUDA (read when nvcc is missing) names the same ones."""
    import tile_lang as tl
    from benchmarks import dot_kernels

    fn = getattr(dot_kernels, kernel)
    options = {"arch": arch, "num_warps": 8, "divisible": _DOTS[kernel], "BLOCK_M": 128, "BLOCK_N": 128,
               "BLOCK_K": 64, "GROUP_M": 8, "a_ptr": tl.f16, "b_ptr": tl.f16, "c_ptr": tl.f16}
    meta = fn.warmup(**options).metadata
    assert meta.instructions == used
    assert (meta.num_warps, meta.threads) == (8, 256) and meta.n_spills == 0 and 32 <= meta.n_regs <= 255
    assert meta.shared >= 2 * 64 * (128 + 128) * 2  # at least two stages of f16 A and B tiles
    hide(monkeypatch, "nvcc")
    assert fn.compile(**options).instructions == used


@needs_toolkit
def test_warmup_is_compile_and_metadata_of_a_small_kernel() -> None:
    """``warmup`` is Triton's name for ``compile``; an add uses none of the instructions of note,
    and its metadata is ptxas's resources with the block's threads."""
    warm, compiled = add_kernel.warmup(num_warps=2, BLOCK=256), add_kernel.compile(num_warps=2, BLOCK=256)
    assert warm.asm["cuda"] == compiled.asm["cuda"] and "__launch_bounds__(64)" in warm.asm["cuda"]
    meta = warm.metadata
    assert meta == Metadata(warm.n_regs, warm.n_spills, warm.shared, 2, 64, ())
    assert meta.n_regs > 0 and meta.shared >= warm.source.dynamic_shared
