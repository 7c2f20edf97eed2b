"""``kernel.compile`` and ``kernel.warmup``'s result, :class:`Compiled`, Triton's handle on a compiled
kernel: ``asm["ir"]`` and ``asm["cuda"]`` always, ``asm["ptx"]`` (nvcc), ``cubin`` and the resources
ptxas reports (``n_regs``, ``n_spills``, ``shared``), ``asm["sass"]`` (cuobjdump or nvdisasm), each
made on first use by the CUDA toolkit on PATH (a missing tool is a BackendError naming it), the
instructions of note it uses (``instructions``) and all of these in one ``metadata``.

Also :class:`Compiler`: what ``kernel.inspect``, ``kernel.cuda_source`` and ``kernel.compile`` call
of the compiler (:mod:`tile_lang.compiler.inspect`). :mod:`tile_lang.kernel` imports the compiler by
name on first use, so mypy analyses none of the compiler's modules for a file that imports
``tile_lang`` (about 1 s of each cold run); the compiler's types are not part of a kernel's.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from tile_lang.dtypes import DType
from tile_lang.errors import BackendError, MissingAsm
from tile_lang.registry import GeneratedSource

ASM_KEYS = ("ir", "cuda", "ptx", "sass")
_REGISTERS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores")
_STATIC_SHARED = re.compile(r"Used \d+ registers.*?(\d+) bytes smem")  # absent when none
# The instructions ``Compiled.instructions`` reports: how each shows in the PTX, and in the generated
# CUDA (the header helper issuing it, or the inline asm, its lines after an escaped newline), read when nvcc is missing.
INSTRUCTIONS = {
    "mma.sync": (re.compile(r"\bmma\.sync\."), re.compile(r"\btl::mma_block\b|mma\.sync\.")),
    "wgmma": (re.compile(r"\bwgmma\.mma_async\."), re.compile(r"wgmma\.mma_async\.")),
    "cp.async": (re.compile(r"\bcp\.async\.c[ag]\."), re.compile(r"\btl::cp_async<")),
    "cp.async.bulk.tensor": (re.compile(r"\bcp\.async\.bulk\.tensor\."), re.compile(r"\btl::tma_(?:load|store)")),
}


@runtime_checkable
class Compiler(Protocol):
    """The functions of :mod:`tile_lang.compiler.inspect` that :class:`~tile_lang.kernel.Kernel` calls,
    for one specialisation: its constexprs, warps, stages, capability, the pointees of its pointers,
    the int parameters taken as multiples of 16 and those taken as 1 (``tests/test_inspect_compiled.py``
    checks that the module is one, for mypy and at run time)."""

    def ir_text(self, kernel: object, constexprs: Mapping[str, object], num_warps: int, num_stages: int, arch: int,
                pointees: Mapping[str, DType] | None, divisible: Collection[str], ones: Collection[str],
                optimized: bool = True) -> str: ...

    def cuda_text(self, kernel: object, constexprs: Mapping[str, object], num_warps: int, num_stages: int, arch: int,
                  pointees: Mapping[str, DType] | None, divisible: Collection[str], ones: Collection[str]) -> str: ...

    def compile_kernel(self, kernel: object, constexprs: Mapping[str, object], num_warps: int, num_stages: int,
                       arch: int, pointees: Mapping[str, DType] | None, divisible: Collection[str],
                       ones: Collection[str]) -> Compiled: ...


@dataclass(frozen=True)
class Metadata:
    """``compiled.metadata``: what a config costs a block and what it runs on (Triton's handle has
    the same name): ptxas's resources, the threads a block, the instructions of note it uses."""

    n_regs: int
    n_spills: int
    shared: int
    num_warps: int
    threads: int
    instructions: tuple[str, ...]


@dataclass(frozen=True)
class Resources:
    """What ptxas reports of a cubin: registers a thread, spilled bytes, static shared memory a block."""

    n_regs: int
    spill_bytes: int
    static_shared: int


class Compiled:
    """One specialisation compiled: ``asm[key]`` for ``key`` in :data:`ASM_KEYS`, ``cubin``, ``n_regs``,
    ``n_spills`` (32-bit words spilled, as Triton counts) and ``shared`` (bytes of shared memory a
    block: the generated code's dynamic buffer plus ptxas's static)."""

    def __init__(self, name: str, arch: int, num_warps: int, ir: str, source: GeneratedSource) -> None:
        self.name = name
        self.arch = arch
        self.num_warps = num_warps
        self.source = source
        self.asm = Asm(self, {"ir": ir, "cuda": source.text})

    @property
    def target(self) -> str:
        """``sm_<arch>``, with the ``a`` suffix from 90 on (wgmma and the like need it)."""
        return f"sm_{self.arch}a" if self.arch >= 90 else f"sm_{self.arch}"

    @functools.cached_property
    def ptx(self) -> str:
        with _workdir() as work:
            (work / "k.cu").write_text(self.asm["cuda"])
            _run(self, "nvcc", ["-ptx", f"-arch={self.target}", "-std=c++17",
                                *(f"-I{d}" for d in self.source.include_dirs), "k.cu", "-o", "k.ptx"], work)
            return (work / "k.ptx").read_text()

    @functools.cached_property
    def _assembled(self) -> tuple[bytes, Resources]:
        with _workdir() as work:
            (work / "k.ptx").write_text(self.ptx)
            log = _run(self, "ptxas", ["-v", f"-arch={self.target}", "k.ptx", "-o", "k.cubin"], work)
            return (work / "k.cubin").read_bytes(), _resources(self, log)

    @property
    def cubin(self) -> bytes:
        return self._assembled[0]

    @property
    def n_regs(self) -> int:
        return self._assembled[1].n_regs

    @property
    def n_spills(self) -> int:
        return self._assembled[1].spill_bytes // 4

    @property
    def shared(self) -> int:
        return self.source.dynamic_shared + self._assembled[1].static_shared

    @functools.cached_property
    def instructions(self) -> tuple[str, ...]:
        """Which of :data:`INSTRUCTIONS` the kernel uses: read from the PTX where nvcc is on PATH,
        else from the generated CUDA (no toolkit needed)."""
        column, text = (0, self.ptx) if shutil.which("nvcc") is not None else (1, self.asm["cuda"])
        return tuple(name for name, patterns in INSTRUCTIONS.items() if patterns[column].search(text))

    @property
    def metadata(self) -> Metadata:
        return Metadata(self.n_regs, self.n_spills, self.shared, self.num_warps, 32 * self.num_warps,
                        self.instructions)

    @functools.cached_property
    def sass(self) -> str:
        with _workdir() as work:
            (work / "k.cubin").write_bytes(self.cubin)
            if shutil.which("cuobjdump") is None and shutil.which("nvdisasm") is not None:
                return _run(self, "nvdisasm", ["k.cubin"], work, stdout=True)
            return _run(self, "cuobjdump", ["-sass", "k.cubin"], work, stdout=True)

    def resources(self) -> str:
        """One line: registers, spills and shared memory (``tile-lang inspect --resources``)."""
        return (f"kernel {self.name} ({self.target}): {self.n_regs} registers, {self.n_spills} spills, "
                f"{self.shared} bytes shared memory")


class Asm(Mapping[str, str]):
    """``compiled.asm``: the IR and CUDA as given, the PTX and SASS made by the toolkit when read."""

    def __init__(self, compiled: Compiled, given: dict[str, str]) -> None:
        self._compiled = compiled
        self._given = given

    def __getitem__(self, key: str) -> str:
        if key in self._given:
            return self._given[key]
        if key == "ptx":
            return self._compiled.ptx
        if key == "sass":
            return self._compiled.sass
        triton = " (Triton's MLIR; tile_lang compiles through CUDA C++)" if key in ("ttir", "ttgir", "llir") else ""
        raise MissingAsm(f"{key!r}{triton}: compiled.asm holds {', '.join(ASM_KEYS)} (the cubin is compiled.cubin)")

    def __iter__(self) -> Iterator[str]:
        return iter(ASM_KEYS)

    def __len__(self) -> int:
        return len(ASM_KEYS)


def _run(compiled: Compiled, tool: str, args: list[str], work: Path, stdout: bool = False) -> str:
    """``tool args`` in ``work``: its stdout (or stderr, where ptxas's ``-v`` report goes); a
    BackendError naming the tool if it is not on PATH, or with its output if it fails."""
    path = shutil.which(tool)
    if path is None:
        raise BackendError(f"kernel {compiled.name}: {tool} is not on PATH, and it makes the "
                           f"{_MAKES[tool]}: install the CUDA toolkit (a GPU is not needed)")
    done = subprocess.run([path, *args], cwd=work, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackendError(f"kernel {compiled.name}: {tool} failed (exit {done.returncode}) on the generated "
                           f"code for {compiled.target}:\n{done.stderr or done.stdout}")
    return done.stdout if stdout else done.stderr


_MAKES = {"nvcc": "PTX (and, through it, the cubin, its registers, spills and shared memory)",
          "ptxas": "cubin and its registers, spills and shared memory", "cuobjdump": "SASS (nvdisasm would do too)"}


def _resources(compiled: Compiled, log: str) -> Resources:
    """Registers, spilled bytes and static shared memory from ptxas's ``-v`` report of one kernel."""
    registers, spills, shared = (pattern.search(log) for pattern in (_REGISTERS, _SPILLS, _STATIC_SHARED))
    if registers is None or spills is None:
        raise BackendError(f"kernel {compiled.name}: ptxas -v reported no register or spill count:\n{log}")
    return Resources(int(registers[1]), int(spills[1]), int(shared[1]) if shared is not None else 0)


@contextmanager
def _workdir() -> Iterator[Path]:
    """A temporary folder for the toolkit's inputs and outputs, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="tile_lang-inspect-") as name:
        yield Path(name)
