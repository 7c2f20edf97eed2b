"""Vector widths that depend on axis info beyond plain block offsets: loads in ``for`` loops
(the induction variable of ``range(0, n, BLOCK)`` is divisible by BLOCK) and 2-D offsets built
with ``[:, None]`` (each row starts where the row stride puts it)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, registry
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import BinaryAttr, BinaryFn, Function, MemAttr, Op, walk
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


@tl.kernel
def wrapped_columns(src: Pointer[f32], dst: Pointer[f32], N: int, BN: constexpr) -> None:
    """Each program copies columns ``(pid * BN + arange(BN)) % N``: a block may wrap past N."""
    cols = (tl.program_id(0) * BN + tl.arange(0, BN)) % N
    tl.store(dst + tl.program_id(0) * BN + tl.arange(0, BN), tl.load(src + cols))


def test_a_wrapped_index_keeps_the_runs_its_divisor_allows() -> None:
    """``x % N`` stays consecutive over runs that start at multiples of what divides both x's
    run starts and N (Triton's rule): 128-bit loads when N is a multiple of 16, scalar otherwise."""
    spec = static_spec(wrapped_columns, {"BN": 512})
    assert _widths(compile_ir(wrapped_columns, _aligned(spec))) == [4, 4]
    unaligned_n = replace(spec, args=(*_aligned(spec).args[:2], ArgSpec(spec.args[2].dtype)))
    assert _widths(compile_ir(wrapped_columns, unaligned_n)) == [1, 4]
    fn = compile_ir(wrapped_columns, _aligned(spec))
    info = analyze(fn)
    mods = [n for n in walk(fn.body) if isinstance(n.attr, BinaryAttr) and n.attr.fn is BinaryFn.MOD]
    assert [info[m].contiguity for m in mods] == [(16,)]


@pytest.mark.parametrize(("n", "bn"), [(48, 32), (80, 32), (37, 32), (48, 512), (1040, 512), (37, 512)])
def test_wrapped_columns_match_numpy(backend: str, n: int, bn: int) -> None:
    """Blocks over N columns wrapping mid-block (the next run starts again at 0), N a multiple of
    16 or not (37), with 128-bit loads where the rule allows them (BN 512, four warps), on the
    reference and the generated CUDA."""
    rng = np.random.default_rng(n)
    src = rng.standard_normal(n).astype(np.float32)
    blocks = 3
    want = src[np.arange(blocks * bn) % n]
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full(blocks * bn, np.nan, np.float32))
        wrapped_columns[(blocks,)](s, d, n, BN=bn)
        np.testing.assert_array_equal(d.numpy(), want)


@tl.kernel
def shifted_columns(src: Pointer[f32], dst: Pointer[f32], shift: int, BN: constexpr) -> None:
    """Program p copies ``src[BN + (offs + shift) % BN]``: with a negative shift the dividend is
    negative and C's remainder is <= 0, so the block reads ``src[BN]`` then ``src[1:BN]``."""
    offs = tl.program_id(0) * BN + tl.arange(0, BN)
    tl.store(dst + offs, tl.load(src + BN + (offs + shift) % BN))


def test_a_remainder_keeps_its_runs_only_when_its_dividend_is_not_negative() -> None:
    """Was 128-bit loads whatever the sign (Triton's assumption), reading ``src[BN:BN + 4]`` where
    the remainders are ``0, -(BN - 1), ...``: a launch specialises ints on their sign."""
    spec = _aligned(static_spec(shifted_columns, {"BN": 512}, negative=("shift",)))
    assert _widths(compile_ir(shifted_columns, spec)) == [1, 4]
    known = _aligned(static_spec(shifted_columns, {"BN": 512}))
    assert _widths(compile_ir(shifted_columns, known)) == [4, 4]
    fn = compile_ir(shifted_columns, known)
    mods = [n for n in walk(fn.body) if isinstance(n.attr, BinaryAttr) and n.attr.fn is BinaryFn.MOD]
    assert [(analyze(fn)[m].contiguity, analyze(fn)[m].nonnegative) for m in mods] == [((16,), True)]


@pytest.mark.parametrize("shift", [-512, -48, -7, 0, 48, 7])
def test_shifted_columns_match_numpy(backend: str, shift: int) -> None:
    """Negative, zero and positive shifts, multiples of 16 or not, against NumPy's C-style
    remainder (``np.fmod``), on the reference and the generated CUDA."""
    rng = np.random.default_rng(abs(shift) + 3)
    bn, blocks = 512, 2
    src = rng.standard_normal(2 * bn).astype(np.float32)
    offs = np.arange(blocks * bn)
    want = src[bn + np.fmod(offs + shift, bn)]
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full(blocks * bn, np.nan, np.float32))
        shifted_columns[(blocks,)](s, d, shift, BN=bn)
        np.testing.assert_array_equal(d.numpy(), want)


@tl.kernel
def compared_copy(src: Pointer[f32], dst: Pointer[f32], n: int, OP: constexpr, BLOCK: constexpr) -> None:
    """Copies the elements whose offset compares with n as OP says, by a masked load and store."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if OP == "<":
        mask = offs < n
    elif OP == ">=":
        mask = offs >= n
    elif OP == "<=":
        mask = offs <= n
    elif OP == ">":
        mask = offs > n
    elif OP == "==":
        mask = offs == n
    elif OP == "n >":
        mask = n > offs
    elif OP == "n <=":
        mask = n <= offs
    elif OP == "n <":
        mask = n < offs
    else:
        mask = offs != n
    tl.store(dst + offs, tl.load(src + offs, mask=mask, other=-1.0), mask=mask)


COMPARED = {"<": np.less, ">=": np.greater_equal, "<=": np.less_equal, ">": np.greater, "==": np.equal,
            "!=": np.not_equal, "n >": np.less, "n <=": np.greater_equal, "n <": np.greater}


def test_only_lt_and_ge_masks_are_constant_over_aligned_runs() -> None:
    """``offs < n`` and ``offs >= n`` (also written ``n > offs``, ``n <= offs``) with n a multiple
    of 16 change only at a multiple of 16, so one predicate serves a 128-bit access; ``<=``, ``>``,
    ``==`` and ``!=`` change just after or at n itself, inside a run."""
    widths = {op: _widths(compile_ir(compared_copy, _aligned(static_spec(compared_copy, {"OP": op, "BLOCK": 512}))))
              for op in COMPARED}
    assert widths == {"<": [4, 4], ">=": [4, 4], "<=": [1, 1], ">": [1, 1], "==": [1, 1], "!=": [1, 1],
                      "n >": [4, 4], "n <=": [4, 4], "n <": [1, 1]}


@pytest.mark.parametrize("op", list(COMPARED))
@pytest.mark.parametrize("n", [16, 48, 37])
def test_compared_copy_matches_numpy(backend: str, op: str, n: int) -> None:
    """Was 4 elements loaded and stored for each true one at n on the CUDA path for ``<=``,
    ``>``, ``==`` and ``!=`` with n a multiple of 16 (the mask taken as constant over 4)."""
    rng = np.random.default_rng(n)
    src = rng.standard_normal(1024).astype(np.float32)
    want = np.where(COMPARED[op](np.arange(1024), n), src, np.nan)
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full(1024, np.nan, np.float32))
        compared_copy[(2,)](s, d, n, OP=op, BLOCK=512)
        np.testing.assert_array_equal(d.numpy(), want)


@tl.kernel
def overlapping_rows(src: Pointer[f32], dst: Pointer[f32], R: constexpr, C: constexpr, STEP: constexpr) -> None:
    """Row r of the output is ``src[r * STEP:r * STEP + C]``: rows start STEP elements apart."""
    cols = tl.arange(0, C)[None, :]
    tl.store(dst + tl.arange(0, R)[:, None] * C + cols, tl.load(src + (tl.arange(0, R) * STEP)[:, None] + cols))


@pytest.mark.parametrize(("step", "width"), [(1, 1), (2, 2), (3, 1), (4, 4), (8, 4)])
def test_a_product_of_a_run_is_divisible_only_by_its_other_factor(step: int, width: int) -> None:
    """``arange(R) * STEP`` is 0, STEP, 2 * STEP...: divisible by STEP, not by what divides 0
    (the product was taken as a multiple of 2**30, so rows 8 bytes apart got 16-byte loads)."""
    spec = static_spec(overlapping_rows, {"R": 32, "C": 128, "STEP": step})
    assert _widths(compile_ir(overlapping_rows, spec)) == [width, 4]


@pytest.mark.parametrize("step", [2, 3, 4])
def test_overlapping_rows_match_numpy(backend: str, step: int) -> None:
    """Was a misaligned 16-byte load for STEP 2 on the CUDA path (the emulator aborted)."""
    r, c = 32, 128
    src = np.random.default_rng(step).standard_normal(r * step + c).astype(np.float32)
    want = src[(np.arange(r) * step)[:, None] + np.arange(c)[None, :]]
    with registry.backend(backend):
        d = tl.to_device(np.full((r, c), np.nan, np.float32))
        overlapping_rows[(1,)](tl.to_device(src), d, R=r, C=c, STEP=step)
        np.testing.assert_array_equal(d.numpy(), want)


@tl.kernel
def sliced_rows(src: Pointer[f32], dst: Pointer[f32], N: int, PARTS: constexpr, BN: constexpr) -> None:
    """Program p copies BN values from the start of slice p of N // PARTS (split-K's offsets)."""
    start = tl.program_id(0) * (N // PARTS)
    tl.store(dst + tl.program_id(0) * BN + tl.arange(0, BN), tl.load(src + start + tl.arange(0, BN)))


@pytest.mark.parametrize(("parts", "width"), [(4, 4), (8, 2), (16, 1), (3, 1)])
def test_a_quotient_by_a_power_of_two_keeps_what_divides_it(parts: int, width: int) -> None:
    """N // PARTS with N a multiple of 16: a multiple of 16 / PARTS for a power of two PARTS."""
    spec = _aligned(static_spec(sliced_rows, {"PARTS": parts, "BN": 512}))
    assert _widths(compile_ir(sliced_rows, spec)) == [width, 4]


@pytest.mark.parametrize(("n", "parts"), [(64, 4), (96, 8), (80, 16), (99, 4)])
def test_sliced_rows_match_numpy(backend: str, n: int, parts: int) -> None:
    rng = np.random.default_rng(n + parts)
    bn = 512
    src = rng.standard_normal(parts * (n // parts) + bn).astype(np.float32)
    want = np.concatenate([src[p * (n // parts):p * (n // parts) + bn] for p in range(parts)])
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full(parts * bn, np.nan, np.float32))
        sliced_rows[(parts,)](s, d, n, PARTS=parts, BN=bn)
        np.testing.assert_array_equal(d.numpy(), want)


@tl.kernel
def half_rows(src: Pointer[tl.f16], dst: Pointer[tl.f16], BLOCK: constexpr) -> None:
    """A row of f16 computed in f32 (softmax's shape of code): load, convert, math, store."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs).to(tl.f32)
    tl.store(dst + offs, (x * 2.0 + 1.0).to(tl.f16))


def test_sixteen_bit_rows_use_128_bit_accesses_in_one_layout() -> None:
    """16 bytes of the narrowest element a kernel moves (8 f16), for the whole kernel: the f32
    values between the f16 load and store share their layout (no conversion through shared)."""
    fn = compile_ir(half_rows, _aligned(static_spec(half_rows, {"BLOCK": 2048}, num_warps=4)))
    assert fn.vector == 8 and _widths(fn) == [8, 8]
    assert not [n for n in walk(fn.body) if n.op is Op.CONVERT]
    assert compile_ir(tile_copy, _aligned(static_spec(tile_copy, {"BM": 16, "BN": 32}))).vector == 4  # f32: 4


def test_half_rows_match_numpy(backend: str) -> None:
    rng = np.random.default_rng(5)
    src = rng.standard_normal(4 * 2048).astype(np.float16)
    with registry.backend(backend):
        d = tl.to_device(np.full(src.shape, np.nan, np.float16))
        half_rows[(4,)](tl.to_device(src), d, BLOCK=2048)
        np.testing.assert_array_equal(d.numpy(), (src.astype(np.float32) * 2 + 1).astype(np.float16))


@tl.kernel
def clamped_columns(src: Pointer[f32], dst: Pointer[f32], N: int, BN: constexpr, HINTED: constexpr) -> None:
    """Tutorial 09's idiom: columns past N read column 0 instead of being masked, and (HINTED) the
    clamped offsets are promised contiguous and aligned, which holds where N is a multiple of BN."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cols = tl.where(cols < N, cols, 0)
    if HINTED:
        cols = tl.max_contiguous(tl.multiple_of(cols, BN), BN)
    tl.store(dst + tl.program_id(0) * BN + tl.arange(0, BN), tl.load(src + cols))


@tl.kernel
def discarded_hint(src: Pointer[f32], dst: Pointer[f32], N: int, BN: constexpr) -> None:
    """A hint whose result is dropped promises nothing (Triton's interpreter, tutorial 08)."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cols = tl.where(cols < N, cols, 0)
    tl.max_contiguous(tl.multiple_of(cols, BN), BN)
    tl.store(dst + tl.program_id(0) * BN + tl.arange(0, BN), tl.load(src + cols))


def test_hints_add_what_axis_info_cannot_derive() -> None:
    """``tl.where`` makes no runs the analysis can see; the promise makes them, as Triton's axis
    info takes it: 128-bit loads with the hints, scalar ones without or with the result dropped."""
    spec = static_spec(clamped_columns, {"BN": 512, "HINTED": True})
    assert _widths(compile_ir(clamped_columns, _aligned(spec))) == [4, 4]
    unhinted = static_spec(clamped_columns, {"BN": 512, "HINTED": False})
    assert _widths(compile_ir(clamped_columns, _aligned(unhinted))) == [1, 4]
    dropped = static_spec(discarded_hint, {"BN": 512})
    assert _widths(compile_ir(discarded_hint, _aligned(dropped))) == [1, 4]
    fn = compile_ir(clamped_columns, _aligned(spec))
    info = analyze(fn)
    hinted = [n for n in walk(fn.body) if n.op is Op.HINT]
    assert [str(n.attr) for n in hinted] == ["multiple_of [512]", "max_contiguous [512]"]
    assert info[hinted[-1]].contiguity == (512,) and info[hinted[-1]].divisibility[0] >= 512


@tl.kernel
def hinted_pointers(src: Pointer[f32], dst: Pointer[f32], start: int, BN: constexpr) -> None:
    """A pointer block promised a multiple of 64 (bytes from the argument's start, as the
    reference checks it) and contiguous: the address's alignment is still the argument's."""
    ptrs = tl.max_contiguous(tl.multiple_of(src + start + tl.arange(0, BN), 64), BN)
    tl.store(dst + tl.arange(0, BN), tl.load(ptrs))


def test_a_pointers_promised_multiple_leaves_its_address_alignment_alone() -> None:
    unaligned = static_spec(hinted_pointers, {"BN": 128})  # the arguments' alignment unknown
    fn = compile_ir(hinted_pointers, unaligned)
    hinted = next(n for n in walk(fn.body) if n.op is Op.HINT and "multiple_of" in str(n.attr))
    info = analyze(fn)
    assert info[hinted].divisibility == info[hinted.args[0]].divisibility
    assert _widths(fn)[0] == 1


@tl.kernel
def table_rows(src: Pointer[f32], table: Pointer[tl.i32], dst: Pointer[f32], BN: constexpr) -> None:
    """Each program copies the row starting at the offset its table entry gives (a block table,
    vLLM-style), promised a multiple of 16: a scalar is one value, checked whole by the reference."""
    start = tl.multiple_of(tl.load(table + tl.program_id(0)), 16)
    tl.store(dst + tl.program_id(0) * BN + tl.arange(0, BN), tl.load(src + start + tl.arange(0, BN)))


def test_a_scalars_promise_is_kept_whole() -> None:
    """A multiple promised of a value with no runs known counts only up to its runs, except where
    every element is checked (a scalar): the loaded offset keeps its 16, and the row read 128 bits
    at a time (the load's node is rewritten before it, so its width is found by the original)."""
    fn = compile_ir(table_rows, _aligned(static_spec(table_rows, {"BN": 512})))
    hinted = next(n for n in walk(fn.body) if n.op is Op.HINT)
    assert analyze(fn)[hinted].divisibility == (16,)
    assert _widths(fn) == [1, 4, 4]


def test_table_rows_match_numpy(backend: str) -> None:
    rng = np.random.default_rng(7)
    src = rng.standard_normal(4096).astype(np.float32)
    starts = (rng.permutation(15) * 256 + 16 * rng.integers(0, 2, 15)).astype(np.int32)[:6]
    with registry.backend(backend):
        d = tl.to_device(np.full(6 * 256, np.nan, np.float32))
        table_rows[(6,)](tl.to_device(src), tl.to_device(starts), d, BN=256)
        np.testing.assert_array_equal(d.numpy(), np.concatenate([src[s:s + 256] for s in starts]))


@pytest.mark.parametrize(("n", "hinted"), [(1536, True), (512, False), (300, False)])
def test_clamped_columns_match_numpy(backend: str, n: int, hinted: bool) -> None:
    """The clamped read on the reference and the generated CUDA: the hinted one where its promise
    holds (N a multiple of BN), the unhinted one also where the clamp is ragged."""
    rng = np.random.default_rng(n)
    src = rng.standard_normal(n).astype(np.float32)
    bn, blocks = 512, 3
    cols = np.arange(blocks * bn)
    want = src[np.where(cols < n, cols, 0)]
    with registry.backend(backend):
        s, d = tl.to_device(src), tl.to_device(np.full(blocks * bn, np.nan, np.float32))
        clamped_columns[(blocks,)](s, d, n, BN=bn, HINTED=hinted)
        np.testing.assert_array_equal(d.numpy(), want)


def test_a_false_promise_is_reported_by_the_reference() -> None:
    """The compiler relies on the promise, so the reference is where a false one is found."""
    src = np.zeros(1100, np.float32)
    with registry.backend("numpy"), pytest.raises(tl.KernelError, match="tl.max_contiguous|tl.multiple_of"):
        clamped_columns[(3,)](tl.to_device(src), tl.to_device(np.zeros(1536, np.float32)), 1100, BN=512, HINTED=True)
