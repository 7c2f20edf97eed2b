"""Hints are checked on every program's values; a broken promise, a failed assert or an
unsupported op is a KernelError at the kernel's line, with that line in the message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr, f32, i32

BLOCK = 16
SOURCE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    """The line number of the kernel statement tagged ``# <marker>``."""
    return next(i + 1 for i, line in enumerate(SOURCE) if line.rstrip().endswith(f"# {marker}"))


def raises_at(marker: str, message: str, run: object) -> None:
    """``run()`` raises a KernelError matching ``message`` at the tagged line, showing that line."""
    assert callable(run)
    with tl.backend("numpy"):
        with pytest.raises(tl.KernelError, match=message) as info:
            run()
    line = line_of(marker)
    assert info.value.lineno == line and info.value.filename == __file__
    assert SOURCE[line - 1].strip() in str(info.value)


@tl.kernel
def hints_kernel(x: Pointer[i32], out: Pointer[i32], n: int, SHIFT: constexpr, BLOCK: constexpr) -> None:
    """Triton's idioms hold: offsets of a block, wrapped by % n, and a scalar multiple."""
    pid = tl.program_id(0)
    base = tl.multiple_of(pid * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of((base + tl.arange(0, BLOCK) + SHIFT) % n, BLOCK), BLOCK)  # offs
    ptrs = tl.multiple_of(x + offs, 4 * BLOCK)  # bytes
    rows = tl.max_constancy(tl.arange(0, BLOCK) // 4, 4)  # rows
    tl.store(out + offs, tl.load(ptrs) + rows)


def test_kept_promises_pass(tile_backend: str) -> None:
    n = 4 * BLOCK
    x = tl.to_device(np.arange(n, dtype=np.int32), tl.i32)
    out = tl.to_device(np.full(n, -1, np.int32), tl.i32)
    hints_kernel[(4,)](x, out, n, SHIFT=0, BLOCK=BLOCK)
    assert np.array_equal(out.numpy(), np.arange(n) + np.tile(np.arange(BLOCK) // 4, 4))


def test_broken_multiple_of() -> None:
    """A shift by 3 makes every run start off a multiple of BLOCK (except after the % wrap)."""
    n = 4 * BLOCK
    x = tl.to_device(np.arange(n, dtype=np.int32), tl.i32)
    raises_at("offs", r"tl\.multiple_of\(input, 16\) does not hold: element 0 of program \(0,\) is 3, "
                      r"which starts a run of consecutive values but is not a multiple of 16",
              lambda: hints_kernel[(4,)](x, tl.empty(n, tl.i32), n, SHIFT=3, BLOCK=BLOCK))


@tl.kernel
def promise_kernel(x: Pointer[i32], WHAT: Constexpr[str], BLOCK: constexpr) -> None:
    """Each WHAT breaks one promise in program 2 only (a hint's result bound: a discarded one promises
    nothing, but its arguments are still checked, as the arity case's are)."""
    pid = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    bump = tl.where((i == 5) & (pid == 2), 100, 0)
    if WHAT == "contiguous":
        _ = tl.max_contiguous(i + bump, BLOCK)  # contiguous
    elif WHAT == "constancy":
        _ = tl.max_constancy(i // 8 + bump, 8)  # constancy
    elif WHAT == "scalar":
        _ = tl.multiple_of(pid * 8 + 2 * (pid == 2), 8)  # scalar
    elif WHAT == "assume":
        tl.assume(i + bump < BLOCK)  # assume
    elif WHAT == "literal":
        _ = tl.multiple_of(BLOCK + 4, 8)  # literal
    elif WHAT == "2d":
        _ = tl.max_contiguous(i[None, :] + bump[None, :] + 0 * i[:, None], (1, BLOCK))  # 2d
    else:
        tl.multiple_of(i, (4, 4))  # arity


@pytest.mark.parametrize("what,message", [
    ("contiguous", r"tl\.max_contiguous\(input, 16\) does not hold: element 5 of program \(2,\) is 105, "
                   r"which does not follow its predecessor in a group of 16 by 1"),
    ("constancy", r"tl\.max_constancy\(input, 8\) does not hold: element 5 of program \(2,\) is 100, "
                  r"which differs from its predecessor in a group of 8"),
    ("scalar", r"tl\.multiple_of\(input, 8\) does not hold: program \(2,\) is 18"),
    ("assume", r"tl\.assume\(cond\) does not hold: it is False at element 5 of program \(2,\)"),
    ("literal", r"tl\.multiple_of\(input, 8\) does not hold: program \(0,\) is 20"),
    ("2d", r"element 5 \(0, 5\) of program \(2,\) is 105 along axis 1"),
    ("arity", r"tl\.multiple_of: \(4, 4\) does not give one positive int per axis"),
])
def test_broken_promises(what: str, message: str) -> None:
    raises_at(what, message,
              lambda: promise_kernel[(4,)](tl.empty(1, tl.i32), WHAT=what, BLOCK=BLOCK))


@tl.kernel
def assert_kernel(x: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0.0)
    tl.device_assert(v >= 0.0, "x must be non-negative", mask=offs < n)  # assert


def test_device_assert() -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.abs(np.random.default_rng(0).standard_normal(40)).astype(np.float32), tl.f32)
        assert_kernel[(3,)](x, 40, BLOCK=BLOCK)
        bad = x.numpy()
        bad[37] = -1.0
        y = tl.to_device(bad, tl.f32)
    raises_at("assert", r"device_assert failed: x must be non-negative \(at element 5 of program \(2,\)\)",
              lambda: assert_kernel[(3,)](y, 40, BLOCK=BLOCK))


@tl.kernel
def print_kernel(x: Pointer[i32], BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    v = tl.load(x + pid * BLOCK + tl.arange(0, BLOCK))
    tl.static_print("block", BLOCK)
    tl.static_assert(BLOCK == 4, "BLOCK must be 4")  # static
    tl.debug_barrier()
    tl.device_print("v", v)
    tl.device_print("bits", pid, hex=True)


def test_printing(capsys: pytest.CaptureFixture[str]) -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.arange(8, dtype=np.int32), tl.i32)
        print_kernel[(2,)](x, BLOCK=4)
        lines = capsys.readouterr().out.splitlines()
        assert lines == ["block 4", "pid (0, 0, 0) v: [0 1 2 3]", "pid (1, 0, 0) v: [4 5 6 7]",
                         "pid (0, 0, 0) bits: 0x0", "pid (1, 0, 0) bits: 0x1"]
    raises_at("static", "static_assert failed: BLOCK must be 4",
              lambda: print_kernel[(2,)](tl.to_device(np.arange(16, dtype=np.int32), tl.i32), BLOCK=8))


@tl.kernel
def asm_kernel(x: Pointer[f32]) -> None:
    v = tl.load(x)
    tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [v], dtype=tl.f32, is_pure=True, pack=1)  # asm


def test_inline_asm_is_unsupported() -> None:
    raises_at("asm", "inline_asm_elementwise is not supported on the numpy backend",
              lambda: asm_kernel[(1,)](tl.to_device(np.zeros(1, np.float32), tl.f32)))


@tl.kernel
def python_print_kernel(x: Pointer[i32], n: int, DEBUG: constexpr, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    v = tl.load(x + pid * BLOCK + tl.arange(0, BLOCK))
    if DEBUG:
        print("v", v)  # as in Triton: tl.device_print
    if pid == n:
        print("pid", pid)


def test_python_print_is_device_print(capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel's print(...) is tl.device_print(...) on the reference (once per program, in
    program order, not Python's print of a block), and the compiler lowers it to the same printf;
    under a false constexpr nothing prints."""
    host = np.random.default_rng(5).integers(-50, 50, 8).astype(np.int32)
    with tl.backend("numpy"):
        x = tl.to_device(host, tl.i32)
        python_print_kernel[(2,)](x, 1, DEBUG=True, BLOCK=4)
        lines = capsys.readouterr().out.splitlines()
        assert lines == [f"pid (0, 0, 0) v: {host[:4]}", f"pid (1, 0, 0) v: {host[4:]}", "pid (1, 0, 0) pid: 1"]
        python_print_kernel[(2,)](x, 5, DEBUG=False, BLOCK=4)
        assert capsys.readouterr().out == ""
    printed = python_print_kernel.cuda_source(DEBUG=True, BLOCK=4)
    assert printed.count("printf(") == print_kernel.cuda_source(BLOCK=4).count("printf(") > 0
