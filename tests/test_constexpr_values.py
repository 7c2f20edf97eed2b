"""``tl.constexpr(v)`` as a value, ``tl.full``/``tl.full_like`` of runtime scalars, and @tl.func
recursion ended by a constexpr: each on the NumPy reference and on the compiler's CUDA run by the
CPU emulator, against float64 NumPy, outputs poisoned first."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, Tensor1, constexpr, f16, f32, i32, registry
from tile_lang.errors import KernelError
from tile_lang.func import MAX_DEPTH
from tile_lang.signature import Constant

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load

_BACKEND = EMULATOR
BACKENDS = ("numpy", NAME)
needs_emulator = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None, reason=str(_BACKEND.unavailable_reason()))

LOG2_E = tl.constexpr(1.4426950408889634)  # as Liger-Kernel's cross-entropy defines it
HALF = 0.5  # a plain module-level float: a constant too
ROWS = tl.constexpr(4)
NEGATE = tl.constexpr(True)
MODE = tl.constexpr("shift")
MISSING = tl.constexpr(None)
WIDE = tl.constexpr(tl.float32)


class Consts:
    """Constants read as attributes (``Consts.LN2``), as from a module."""

    LN2 = tl.constexpr(0.6931471805599453)


def _rand(n: int, seed: int, low: float = -3.0, high: float = 3.0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).uniform(low, high, n).astype(np.float32)


def _poisoned(n: int) -> tl.Buffer[f32]:
    return tl.to_device(np.full(n, np.nan, np.float32), tl.f32)


def _same_error_on_both(pattern: str, launch: Callable[[tl.Buffer[f32]], None]) -> KernelError:
    """``launch`` of a poisoned 16-element output fails on both backends with one message at one
    line, matching ``pattern`` and writing nothing; the emulator's error."""
    registry.register(_BACKEND)
    seen = []
    for name in BACKENDS:
        with tl.backend(name), pytest.raises(KernelError, match=pattern) as err:
            out = _poisoned(16)
            launch(out)
        assert np.isnan(out.numpy()).all()
        seen.append((err.value.message, err.value.lineno))
    assert seen[0] == seen[1]
    return err.value


# ------------------------------------------------------------------------------ tl.constexpr(v) as a value


def test_constexpr_holds_its_value() -> None:
    for value in (1.4426950408889634, 3, True, "relu", None, tl.float32):
        made = Constant(value)
        assert made.value is value
        assert Constant(made) is made  # tl.constexpr(tl.constexpr(v)) is tl.constexpr(v)
    assert Constant(np.float32(0.5)).value == 0.5 and type(Constant(np.int64(2)).value) is int
    assert Constant(2) == Constant(2) and Constant(2) != Constant(2.0) and Constant(1) != Constant(True)
    assert isinstance(LOG2_E, Constant) and repr(LOG2_E) == "tl.constexpr(1.4426950408889634)"
    with pytest.raises(TypeError, match="tl.constexpr takes an int, float, bool, str, None, a dtype or a tuple of these, got list"):
        Constant([1])


@tl.kernel
def softmax_row(x_ptr: Pointer[f32], p_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    """One softmax row through exp2, as Liger-Kernel's cross-entropy writes it."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    e = tl.exp2((x - tl.max(x, axis=0)) * LOG2_E)
    tl.store(p_ptr + offs, e / tl.sum(e, axis=0) * HALF + tl.exp(x * Consts.LN2) * HALF)


def test_module_level_float_constexpr_is_read_by_value(backend: str) -> None:
    """LOG2_E was the int 1 (``tl.constexpr`` was ``int``): exp2(x * 1) is not exp(x)."""
    x = _rand(64, 1)
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max())
    want = e / e.sum() * 0.5 + 2.0 ** wide * 0.5
    with tl.backend(backend):
        out = _poisoned(64)
        softmax_row[(1,)](tl.to_device(x, tl.f32), out, BLOCK=64)
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-5)


@tl.kernel
def constants_of_each_kind(x_ptr: Pointer[f32], o_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, ROWS * BLOCK)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros((ROWS * BLOCK,), WIDE)
    for i in range(ROWS):
        acc += x * i
    if NEGATE:
        acc = -acc
    if MODE == "shift":
        acc = acc + tl.constexpr(2.5)
    if MISSING is None:
        acc = acc * 2.0
    tl.store(o_ptr + offs, acc)


def test_constexprs_of_each_kind_in_shapes_loops_and_branches(backend: str) -> None:
    x = _rand(64, 2)
    want = (-(x.astype(np.float64) * 6) + 2.5) * 2
    with tl.backend(backend):
        out = _poisoned(64)
        constants_of_each_kind[(1,)](tl.to_device(x, tl.f32), out, BLOCK=16)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


def test_a_constexpr_passed_at_launch_is_its_value(backend: str) -> None:
    x = _rand(32, 3)
    with tl.backend(backend):
        out = _poisoned(32)
        softmax_row[(1,)](tl.to_device(x, tl.f32), out, BLOCK=tl.constexpr(32))
        assert np.isfinite(out.numpy()).all()


# ------------------------------------------------------------------------------ tl.full of runtime scalars


@tl.kernel
def filled_with_scalars(x_ptr: Pointer[f32], o_ptr: Pointer[f32], i_ptr: Pointer[i32], h_ptr: Pointer[f16],
                        s: float, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    m = tl.max(x, axis=0) * s  # a scalar computed in the kernel
    tl.store(o_ptr + offs, tl.full_like(x, s) + tl.full((BLOCK,), m, tl.f32) + x)
    tl.store(i_ptr + offs, tl.full((BLOCK,), m, tl.i32) + tl.full_like(offs, s))  # cast as tl.cast: truncated
    tl.store(h_ptr + offs, tl.full((BLOCK,), s, tl.f16) + tl.full((), m, tl.f16))


@pytest.mark.parametrize("s", [1.75, -2.5])
def test_full_of_a_runtime_scalar_broadcasts_it_cast_to_the_dtype(backend: str, s: float) -> None:
    x = _rand(32, 4)
    m = np.float32(x.max()) * np.float32(s)
    with tl.backend(backend):
        out, ints = _poisoned(32), tl.to_device(np.full(32, -99, np.int32), tl.i32)
        halves = tl.to_device(np.full(32, np.nan, np.float16), tl.f16)
        filled_with_scalars[(1,)](tl.to_device(x, tl.f32), out, ints, halves, s, BLOCK=32)
        np.testing.assert_allclose(out.numpy(), s + np.float64(m) + x, rtol=1e-6)
        np.testing.assert_array_equal(ints.numpy(), np.full(32, np.trunc(m) + np.trunc(s)))
        np.testing.assert_array_equal(halves.numpy(), np.full(32, np.float16(s) + np.float16(m)))


filled_with_a_block = load("filled_with_a_block", textwrap.dedent("""
    import tile_lang as tl
    from tile_lang import Pointer, constexpr


    @tl.kernel
    def filled_with_a_block(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], BLOCK: constexpr) -> None:
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(o_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), x, tl.f32))
"""))


@needs_emulator
def test_full_of_a_block_is_the_same_error_on_both_backends() -> None:
    _same_error_on_both(r"tl.full: the fill value must be a scalar",
                        lambda out: filled_with_a_block[(1,)](tl.to_device(_rand(16, 5), tl.f32), out, BLOCK=16))


# ------------------------------------------------------------------------------ @tl.func recursion


@tl.func
def doubled(x: Tensor1[f32], N: constexpr) -> Tensor1[f32]:
    """``x * 2**N`` by recursion ended by the constexpr ``N``."""
    if N == 0:
        return x
    return doubled(x, N - 1) * 2.0


@tl.kernel
def doubling(x_ptr: Pointer[f32], o_ptr: Pointer[f32], BLOCK: constexpr, DEPTH: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if tl.program_id(0) % 2 == 0:  # programs disagree: the reference's masked (SIMT) path too
        y = doubled(x, DEPTH)
    else:
        y = doubled(x, DEPTH - 1) * 2.0
    tl.store(o_ptr + offs, y)


@pytest.mark.parametrize("depth", [1, 3, MAX_DEPTH - 1])  # doubled(x, N) is N + 1 nested calls
def test_recursion_ended_by_a_constexpr(backend: str, depth: int) -> None:
    x = _rand(64, 6, 0.5, 1.0)
    with tl.backend(backend):
        out = _poisoned(64)
        doubling[(4,)](tl.to_device(x, tl.f32), out, BLOCK=16, DEPTH=depth)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 2.0**depth, rtol=1e-6)


@needs_emulator
def test_recursion_past_the_limit_is_the_same_error_on_both_backends() -> None:
    error = _same_error_on_both(
        f"@tl.func doubled: calls nest more than {MAX_DEPTH}",
        lambda out: doubling[(1,)](tl.to_device(_rand(16, 7), tl.f32), out, BLOCK=16, DEPTH=MAX_DEPTH))
    assert "return doubled(x, N - 1) * 2.0" in str(error)


# ------------------------------------------------------------------------------ constexpr functions


@tl.constexpr_function
def halved(x: int) -> int:
    """Python at compile time: ``x // 2``."""
    return x // 2


@tl.constexpr_function
def scale_for(dtype: object, boost: float = 1.0) -> float:
    """A compile-time float chosen by a dtype, with a keyword."""
    return (2.0 if dtype == tl.float32 else 0.5) * boost


@tl.kernel
def half_block(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    HALF_BLOCK: constexpr = halved(BLOCK)
    offs = tl.program_id(0) * HALF_BLOCK + tl.arange(0, HALF_BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(o_ptr + offs, x * scale_for(tl.float32, boost=halved(6)) + halved(9),
             mask=offs < n)


@pytest.mark.parametrize("n", [40, 64])
def test_a_constexpr_function_runs_at_compile_time(backend: str, n: int) -> None:
    """``@tl.constexpr_function`` (Triton's ``@triton.constexpr_function``): its result sizes the
    block (``arange(0, halved(BLOCK))``) and scales the values, on both backends."""
    x = _rand(64, 8)
    with tl.backend(backend):
        out = _poisoned(64)
        half_block[(tl.cdiv(n, 8),)](tl.to_device(x, tl.f32), out, n, BLOCK=16)
        got = out.numpy()
    np.testing.assert_allclose(got[:n], x[:n].astype(np.float64) * 6.0 + 4, rtol=1e-6)
    assert np.isnan(got[n:]).all()
    assert halved(9) == 4  # on the host, the plain function


@tl.kernel
def half_of_a_runtime_int(o_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.zeros((BLOCK,), tl.float32) + halved(n))


@needs_emulator
def test_a_constexpr_function_given_a_runtime_value_is_the_same_error_on_both_backends() -> None:
    error = _same_error_on_both(r"constexpr function halved: argument 1 is a runtime value",
                                lambda out: half_of_a_runtime_int[(1,)](out, 5, BLOCK=16))
    assert "halved(n)" in str(error)


twice_rows = load("twice_rows", textwrap.dedent("""
    import tile_lang as tl
    from tile_lang import Pointer, constexpr


    @tl.constexpr
    def twice(x):
        return 2 * x


    @tl.constexpr
    def failing(x):
        return x // 0


    @tl.kernel
    def twice_rows(o_ptr: Pointer[tl.f32], BLOCK: constexpr, FAIL: constexpr) -> None:
        offs = tl.arange(0, twice(BLOCK))
        tl.store(o_ptr + offs, offs.to(tl.float32) + (failing(BLOCK) if FAIL else 0))
""").lstrip())


def test_tl_constexpr_on_a_function_makes_a_constexpr_function(backend: str) -> None:
    """``@tl.constexpr`` on a helper (as FlagGems writes it) is a constexpr function too."""
    with tl.backend(backend):
        out = _poisoned(16)
        twice_rows[(1,)](out, BLOCK=4, FAIL=False)
        got = out.numpy()
    np.testing.assert_array_equal(got[:8], np.arange(8, dtype=np.float32))
    assert np.isnan(got[8:]).all()


@needs_emulator
def test_a_constexpr_function_that_raises_is_the_kernels_error_on_both_backends() -> None:
    _same_error_on_both(r"ZeroDivisionError", lambda out: twice_rows[(1,)](out, BLOCK=4, FAIL=True))


@tl.kernel
def target_flags(o_ptr: Pointer[f32], BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    flags = tl.zeros((BLOCK,), tl.float32)
    if tl.target_info.is_cuda():
        flags += 1.0
    if tl.target_info.cuda_capability_geq(8, 0):
        flags += 10.0
    if tl.target_info.cuda_capability_geq(12, 1):
        flags += 100.0
    if tl.target_info.is_hip():
        flags += 1000.0
    tl.store(o_ptr + offs, flags)


def test_target_info_names_the_target_being_compiled_for(backend: str) -> None:
    """``tl.target_info`` (Triton's): the compiler builds for CUDA at its capability (the emulator
    at sm_80); the reference has no target, as Triton's interpreter has none."""
    with tl.backend(backend):
        out = _poisoned(16)
        target_flags[(1,)](out, BLOCK=16)
        got = out.numpy()
    np.testing.assert_array_equal(got, np.full(16, 0.0 if backend == "numpy" else 11.0, np.float32))


# ------------------------------------------------------------------------------ raise under a constexpr


@tl.kernel
def copy_f32_or_raise(x_ptr: Pointer[f32], o_ptr: Pointer[f32], BLOCK: constexpr, MODE: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    if MODE == "copy":
        tl.store(o_ptr + offs, tl.load(x_ptr + offs))
    elif MODE == "double":
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) * 2.0)
    else:
        raise ValueError(f"unsupported mode {MODE}")


@pytest.mark.parametrize("mode, scale", [("copy", 1.0), ("double", 2.0)])
def test_a_raise_a_constexpr_leaves_out_is_never_compiled(backend: str, mode: str, scale: float) -> None:
    """``raise`` in a branch a constexpr leaves out, as FlagGems' topk writes it, runs on both."""
    x = _rand(16, 9)
    with tl.backend(backend):
        out = _poisoned(16)
        copy_f32_or_raise[(1,)](tl.to_device(x, tl.f32), out, BLOCK=16, MODE=mode)
        np.testing.assert_array_equal(out.numpy(), x * scale)


@needs_emulator
def test_a_raise_reached_is_the_same_error_on_both_backends() -> None:
    error = _same_error_on_both(r"a kernel cannot raise \(\"raise ValueError\(f'unsupported mode \{MODE\}'\)\" is reached\)",
                                lambda out: copy_f32_or_raise[(1,)](tl.to_device(_rand(16, 10), tl.f32), out, BLOCK=16,
                                                                    MODE="triple"))
    assert 'raise ValueError(f"unsupported mode {MODE}")' in str(error)
