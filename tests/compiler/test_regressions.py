"""Miscompiles found by probing and fuzzing, each kept as a regression test: the generated CUDA
runs on the CPU emulator and must match a float64 NumPy reference (outputs poisoned first)."""

from __future__ import annotations

import textwrap
from typing import Any, TypeVar

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr, dtypes, f32, i32, registry, u32
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR, NAME
from tests.numpy_backend.test_reduction import branchy_max
from tests.fuzz.runner import load

_BACKEND = EMULATOR
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))


@tl.kernel
def loop_with_dead_value(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    for i in range(n):
        unused = tl.load(x_ptr + offs) * 3.0  # noqa: F841 (dead: must not take the loop with it)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + i)


@tl.kernel
def loop_with_early_return(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, stop: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    acc = tl.zeros((B,), tl.f32)
    for i in range(n):
        if i == stop:
            tl.store(o_ptr + offs, acc)
            return
        acc = acc + tl.load(x_ptr + offs) * (i + 1)  # carried past the returning `if`
    tl.store(o_ptr + offs, acc - 1.0)


def _from_source(name: str, source: str) -> Any:
    """A kernel the typing gate rejects on purpose (a Python number where the stubs want a block,
    mixed dtypes, a reshaped loop value) while both backends run it: imported from a file, as the
    fuzzer's kernels are, so that mypy does not see it."""
    header = "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
    return load(name, header + textwrap.dedent(source).lstrip())


negated_negative_constants = _from_source("negated_negative_constants", """
    def negated_negative_constants(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
        offs = tl.arange(0, B)
        x = tl.load(x_ptr + offs)
        ints = -tl.full((B,), -2, tl.i32) + tl.abs(tl.full((B,), -3, tl.i32))  # was `--2`: an nvcc error
        inf = -tl.full((B,), float("-inf"), tl.f32)
        tl.store(o_ptr + offs, x * ints + tl.minimum(-0.5, 8.0) + tl.maximum(3, -2) + tl.where(x > 0.5, inf, 1.0))
""")

constant_powers = _from_source("constant_powers", """
    def constant_powers(o_ptr: Pointer[tl.i64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        tl.store(o_ptr + offs, tl.full((B,), 2**40, tl.i64) + offs * 2**3)
""")

int_parameter_arithmetic = _from_source("int_parameter_arithmetic", """
    def int_parameter_arithmetic(o_ptr: Pointer[tl.i64], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        tl.store(o_ptr + offs, (n // -3) * 100 + (n % -3) * 10 + n.to(tl.i64) + offs * 0)
""")

reshaped_in_loop = _from_source("reshaped_in_loop", """
    def reshaped_in_loop(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        v = tl.load(x_ptr + 0)
        for i in range(n):
            v = tl.load(x_ptr + offs) * i
        tl.store(o_ptr + offs, v)
""")

reshaped_in_branch_loop = _from_source("reshaped_in_branch_loop", """
    def reshaped_in_branch_loop(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        v = tl.load(x_ptr + offs)
        if n > 2:
            k = 1000 + 7
        else:
            k = 1007  # bound on both branches: defined after the if
            for i in range(n):
                v = tl.load(x_ptr + i)
        tl.store(o_ptr + offs, v * k)
""")

loop_index_as_tensor = _from_source("loop_index_as_tensor", """
    def loop_index_as_tensor(o_ptr: Pointer[tl.i64], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        for i in range(n):
            tl.store(o_ptr + offs, i.to(tl.i64) + (i | offs))
""")

loop_index_ops = _from_source("loop_index_ops", """
    def loop_index_ops(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        acc = tl.load(x_ptr + offs)
        for i in range(n):
            acc = acc + i.to(tl.f32) * 0.5 + ((i | offs) ^ (3 & i)).to(tl.f32)
        for j in tl.range(1, n, 2):
            acc = acc * (1 << j).to(tl.f32) - (offs >> j).to(tl.f32)
        for k in range(pid, n):
            acc = acc + (k * k).to(tl.f32)
        for s in tl.static_range(2):
            acc = acc + s
        tl.store(o_ptr + offs, acc)
""")


checks_in_loops = _from_source("checks_in_loops", """
    def checks_in_loops(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr,
                        EVERY: constexpr) -> None:
        pid = tl.program_id(0)
        offs = tl.arange(0, B)
        acc = tl.zeros((B,), tl.f32)
        for i in range(pid, n):
            assert i >= pid, "the index starts at pid"
            if i % 2 == 0 and tl.load(x_ptr + i) > 0.0:
                acc = acc + strided_sum(x_ptr, offs, i)
            elif EVERY or i == n - 1:
                acc = acc - i.to(tl.f32)
        tl.store(o_ptr + pid * B + offs, acc)


    @tl.func
    def strided_sum(x_ptr: Pointer[tl.f32], offs: tl.Tensor, i: int) -> tl.Tensor:
        total = tl.load(x_ptr + offs) * 0.0
        for j in tl.range(0, i + 1, 2):
            total = total + tl.load(x_ptr + j + offs) * (j | 1).to(tl.f32)
        return total
""")


@tl.kernel
def same_value_on_both_branches(x_ptr: Pointer[f32], o_ptr: Pointer[f32], s: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    if s > 2:
        y = x
    else:
        tl.store(o_ptr + offs, x * 0.0)
        y = x
    tl.store(o_ptr + offs, y * 2.0)


@tl.kernel
def unsigned_above_negative(x_ptr: Pointer[u32], o_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.where(tl.load(x_ptr + offs) > -1, 1, 0))


@tl.kernel
def oversized_full(o_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.full((B,), 2**40, tl.i32))


def _poisoned(n: int) -> tl.Buffer[f32]:
    return tl.to_device(np.full(n, np.nan, np.float32), tl.f32)


def test_loop_holding_a_dead_value_keeps_its_stores(backend: str) -> None:
    x = np.random.default_rng(1).random(32, dtype=np.float32)
    with tl.backend(backend):
        out = _poisoned(32)
        loop_with_dead_value[(1,)](tl.to_device(x, tl.f32), out, 4, B=32)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + 3, rtol=1e-6)


@pytest.mark.parametrize("n, stop", [(8, 5), (3, 5), (6, 0)])
def test_early_return_keeps_updates_made_after_the_if(backend: str, n: int, stop: int) -> None:
    x = np.random.default_rng(2).random(32, dtype=np.float32)
    steps = min(n, stop)
    want = x.astype(np.float64) * sum(range(1, steps + 1)) - (0.0 if stop < n else 1.0)
    with tl.backend(backend):
        out = _poisoned(32)
        loop_with_early_return[(1,)](tl.to_device(x, tl.f32), out, n, stop, B=32)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


def test_negated_negative_constants_and_min_of_two_numbers(backend: str) -> None:
    x = np.random.default_rng(3).random(32, dtype=np.float32)
    want = x.astype(np.float64) * 5 - 0.5 + 3 + np.where(x > 0.5, np.inf, 1.0)
    with tl.backend(backend):
        out = _poisoned(32)
        negated_negative_constants[(1,)](tl.to_device(x, tl.f32), out, B=32)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_powers_of_constants_fold(backend: str) -> None:
    with tl.backend(backend):
        out = tl.to_device(np.full(16, -1, np.int64), tl.i64)
        constant_powers[(1,)](out, B=16)
        np.testing.assert_array_equal(out.numpy(), 2**40 + np.arange(16) * 8)


@pytest.mark.parametrize("n", [1, 5, -4])
def test_int_parameter_equal_to_one_keeps_c_division(backend: str, n: int) -> None:
    quotient = int(n / -3)  # C truncates toward zero, as Triton does
    want = quotient * 100 + (n - quotient * -3) * 10 + n
    with tl.backend(backend):
        out = tl.to_device(np.full(16, -1, np.int64), tl.i64)
        int_parameter_arithmetic[(1,)](out, n, B=16)
        np.testing.assert_array_equal(out.numpy(), np.full(16, want))


@pytest.mark.parametrize("s", [1, 4])
def test_name_bound_to_one_value_on_both_branches_survives_the_if(backend: str, s: int) -> None:
    x = np.random.default_rng(4).random(32, dtype=np.float32)
    with tl.backend(backend):
        out = _poisoned(32)
        same_value_on_both_branches[(1,)](tl.to_device(x, tl.f32), out, s, B=32)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 2, rtol=1e-6)


@pytest.mark.parametrize("kernel, inside", [(reshaped_in_loop, "f32\\[32\\]"), (reshaped_in_branch_loop, "f32")])
def test_value_reshaped_in_a_loop_is_an_error_where_read(kernel: Any, inside: str) -> None:
    registry.register(_BACKEND)
    with tl.backend(NAME), pytest.raises(KernelError, match=f"'v' is .* before the loop and {inside} inside it") as err:
        x = tl.to_device(np.random.default_rng(5).random(32, dtype=np.float32), tl.f32)
        kernel[(1,)](x, _poisoned(32), 3, B=32)
    assert "tl.store(o_ptr + offs, v" in str(err.value)  # the read, not the loop, is the error


# Disagreements found by the fuzzer whose fix lies in the NumPy reference or the language surface.


@pytest.mark.parametrize("kernel, inside, n", [(reshaped_in_loop, "f32\\[32\\]", 3), (reshaped_in_branch_loop, "f32", 2)])
def test_reference_rejects_a_value_reshaped_in_a_loop(kernel: Any, inside: str, n: int) -> None:
    """The reference as the compiler (test above): reading the stale value is the error, with the
    compiler's message at the compiler's line, and nothing is written. (The reference finds it
    when the loop runs: ``n == 2`` takes the branch with the loop.)"""
    registry.register(_BACKEND)
    x = np.random.default_rng(5).random(32, dtype=np.float32)
    errors = []
    for name in ("numpy", NAME):
        with tl.backend(name), pytest.raises(KernelError, match=f"'v' is .* before the loop and {inside} inside it") as err:
            out = _poisoned(32)
            kernel[(1,)](tl.to_device(x, tl.f32), out, n, B=32)
        assert np.isnan(out.numpy()).all()
        errors.append(err.value)
    assert (errors[0].message, errors[0].lineno) == (errors[1].message, errors[1].lineno)
    assert "tl.store(o_ptr + offs, v" in str(errors[0])


def test_a_negative_number_against_an_unsigned_block_is_its_own_tensor_first() -> None:
    """As Triton 3.6 compares them: -1 is an i32 constant, promoted with the u32 block to u32
    (0xFFFFFFFF), so ``x > -1`` is false everywhere, on both backends, with no error."""
    registry.register(_BACKEND)
    x = np.arange(1, 17, dtype=np.uint32)
    for name in ("numpy", NAME):
        with tl.backend(name):
            out = tl.to_device(np.full(16, 7, np.int32), tl.i32)
            unsigned_above_negative[(1,)](tl.to_device(x, tl.u32), out, B=16)
            np.testing.assert_array_equal(out.numpy(), np.zeros(16, np.int32))


def test_reference_rejects_an_oversized_full() -> None:
    """tl.full(shape, 2**40, tl.i32) is an error, as in Triton and the compiler; nothing is written."""
    out = tl.to_device(np.full(16, 7, np.int32), tl.i32)
    with tl.backend("numpy"), pytest.raises(KernelError, match=r"constant 1099511627776 does not fit in") as caught:
        oversized_full[(1,)](out, B=16)
    assert caught.value.lineno == oversized_full.lineno + 3
    np.testing.assert_array_equal(out.numpy(), np.full(16, 7, np.int32))


def test_reference_loop_index_is_a_scalar_tensor(backend: str) -> None:
    """A runtime loop's index is an i32 scalar on both backends, as in Triton: ``i.to(tl.i64)``
    and ``i | offs`` work."""
    with tl.backend(backend):
        out = tl.to_device(np.full(16, -1, np.int64), tl.i64)
        loop_index_as_tensor[(1,)](out, 3, B=16)
        np.testing.assert_array_equal(out.numpy(), 2 + (2 | np.arange(16)))


@pytest.mark.parametrize("grid", [1, 4])
def test_loop_indices_as_scalars_against_numpy(backend: str, grid: int) -> None:
    """range, tl.range (uniform bounds: the plain loop; per-program: run masked when grid > 1)
    give integer scalars with methods and reflected operators; static_range gives Python ints."""
    b, n = 16, 5
    x = np.random.default_rng(6).standard_normal(grid * b).astype(np.float32)
    want = x.astype(np.float64).reshape(grid, b)
    for p in range(grid):
        offs = p * b + np.arange(b)
        for i in range(n):
            want[p] += i * 0.5 + ((i | offs) ^ (3 & i))
        for j in range(1, n, 2):
            want[p] = want[p] * (1 << j) - (offs >> j)
        for k in range(p, n):
            want[p] += k * k
        want[p] += 0 + 1
    with tl.backend(backend):
        out = _poisoned(grid * b)
        loop_index_ops[(grid,)](tl.to_device(x, tl.f32), out, n, B=b)
        np.testing.assert_allclose(out.numpy(), want.reshape(-1), rtol=1e-5)


@pytest.mark.parametrize("grid, every", [(1, False), (1, True), (4, False)])
def test_checks_and_typed_indices_in_loops_against_numpy(backend: str, grid: int, every: bool) -> None:
    """and/or, assert and a @tl.func's tl.range loop, all on runtime loop indices (i32 scalars):
    the reference's checked version (grid 1) and SIMT version (grid 4: per-program trip counts)
    apply one set of rules, and both backends give NumPy's answer."""
    b, n = 8, 7
    x = np.random.default_rng(7).standard_normal(n + b).astype(np.float32)
    x64 = x.astype(np.float64)
    want = np.zeros((grid, b))
    for p in range(grid):
        for i in range(p, n):
            if i % 2 == 0 and x64[i] > 0.0:
                want[p] += sum(x64[j:j + b] * (j | 1) for j in range(0, i + 1, 2))
            elif every or i == n - 1:
                want[p] -= i
    with tl.backend(backend):
        out = _poisoned(grid * b)
        checks_in_loops[(grid,)](tl.to_device(x, tl.f32), out, n, B=b, EVERY=every)
        np.testing.assert_allclose(out.numpy(), want.reshape(-1), rtol=1e-5, atol=1e-5)

W = TypeVar("W", bound=Width)


@tl.kernel
def scale_generic(x_ptr: Pointer[Float[W]], o_ptr: Pointer[Float[W]], n: int, B: constexpr) -> None:
    """Load W, compute in f32, store W: the element type named as Triton names it."""
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.f32)
    tl.store(o_ptr + offs, (x * 3.0 - 1.0).to(o_ptr.dtype.element_ty), mask=offs < n)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_a_pointer_dtype_names_its_element_type_on_both_backends(backend: str, dtype: str) -> None:
    """``ptr.dtype`` is a pointer type whose ``element_ty`` is the pointee, on the reference and
    in the compiler alike (``Buffer.dtype`` on the host is the element itself, hence mypy's
    attr-defined on the kernel line)."""
    import ml_dtypes

    element = getattr(tl, dtype)
    host = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}[dtype]
    x = np.random.default_rng(9).standard_normal(100).astype(host)
    with tl.backend(backend):
        out = tl.to_device(np.full(100, np.nan, host), element)
        scale_generic[(2,)](tl.to_device(x, element), out, 100, B=64)
        got = out.numpy().astype(np.float64)
    want = (x.astype(np.float32) * np.float32(3.0) - np.float32(1.0)).astype(host).astype(np.float64)
    np.testing.assert_array_equal(got, want)


@tl.kernel
def if_yields_computed_blocks(o_ptr: Pointer[f32], s: int, t: int, f: float, B: constexpr) -> None:
    """Blocks computed from scalars and coordinates alone (``#computed``) yielded by an ``if``
    and by an ``if`` nested in it: found by the fuzzer (seed 204) as a crash in codegen."""
    offs = tl.arange(0, B)
    v = tl.full((B,), 0.25, tl.f32)
    if s > 1:
        v = v + f * 0.5
        if t > 2:
            v = v - (offs * 2).to(tl.f32)
    tl.store(o_ptr + offs, v)


@pytest.mark.parametrize("s, t", [(0, 5), (3, 1), (3, 5)])
def test_if_results_computed_from_coordinates(backend: str, s: int, t: int) -> None:
    f = float(np.random.default_rng(s + t).standard_normal())
    want = 0.25 + np.zeros(16)
    if s > 1:
        want = want + np.float32(f) * 0.5
        if t > 2:
            want = want - 2.0 * np.arange(16)
    with tl.backend(backend):
        out = _poisoned(16)
        if_yields_computed_blocks[(1,)](out, s, t, f, B=16)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- dots (found by the fuzzer's dot kernels)

def _emulated_dot(launch: Any, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], shape: tuple[int, int],
                  warps: int, *scalars: int, **constexprs: int | str) -> np.ndarray[Any, Any]:
    """One launch (``launch[(1,)]``) on the emulated CUDA with poisoned f32 output; the output."""
    registry.register(_BACKEND)
    with tl.backend(NAME):
        out = tl.to_device(np.full(shape, np.nan, np.float32), tl.f32)
        launch[(1,), tl.Options(num_warps=warps)](tl.to_device(a), tl.to_device(b), out, *scalars, **constexprs)
        got: np.ndarray[Any, Any] = out.numpy()
    return got


@tl.kernel
def dot_updated_in_a_loop_in_an_if(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], o_ptr: Pointer[f32], s: int,
                                   M: constexpr, N: constexpr, K: constexpr, IN_ELSE: constexpr) -> None:
    """A dot result reassigned in a loop inside one branch of an ``if``: the then branch, not
    taken (fuzz seed 20119), or the else branch, taken (seed 21395); adds 1 ``s`` times."""
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.dot(tl.load(a_ptr + rows[:, None] * K + ks[None, :]), tl.load(b_ptr + ks[:, None] * N + cols[None, :]))
    if IN_ELSE:
        if s > 100:
            x = x + 1.0
        else:
            for i in range(s):
                x = x + 1.0
    elif s > 4:
        for i in range(s):
            x = x + 1.0
    tl.store(o_ptr + rows[:, None] * N + cols[None, :], x)


@pytest.mark.parametrize("warps, in_else, s", [(1, False, 0), (4, False, 0), (4, True, 0), (4, True, 2)])
def test_dot_result_updated_in_a_loop_in_one_branch(warps: int, in_else: bool, s: int) -> None:
    """Was scrambled (240 of 256 elements): the else branch assigned its value in its own layout
    into storage laid out as the then branch's."""
    rng = np.random.default_rng(20119)
    a, b = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(2))
    got = _emulated_dot(dot_updated_in_a_loop_in_an_if, a, b, (16, 16), warps, s, M=16, N=16, K=16, IN_ELSE=in_else)
    want = a.astype(np.float64) @ b.astype(np.float64) + (s if in_else else 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@tl.kernel
def dot_or_other_block(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], o_ptr: Pointer[f32], s: int,
                       M: constexpr, N: constexpr, K: constexpr, OTHER: constexpr) -> None:
    """An ``if``/``else`` yielding a dot result on one branch and another block on the other
    (fuzz seed 20847): coordinates, a loaded block, or a constant one."""
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.dot(tl.load(a_ptr + rows[:, None] * K + ks[None, :]), tl.load(b_ptr + ks[:, None] * N + cols[None, :]))
    if s > 4:
        v = x
    else:
        if OTHER == "coordinates":
            v = (rows[:, None] * N + cols[None, :]).to(tl.f32)
        elif OTHER == "loaded":
            v = tl.load(a_ptr + rows[:, None] * K + cols[None, :]).to(tl.f32)
        else:
            v = tl.zeros((M, N), tl.f32) + 1.0
    tl.store(o_ptr + rows[:, None] * N + cols[None, :], v)


@pytest.mark.parametrize("other, warps", [("coordinates", 1), ("coordinates", 4), ("loaded", 4), ("constant", 4)])
def test_if_yielding_a_dot_result_or_another_block(other: str, warps: int) -> None:
    """Was misplaced or left unwritten, for the same reason as the test above."""
    rng = np.random.default_rng(20847)
    a, b = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(2))
    got = _emulated_dot(dot_or_other_block, a, b, (16, 16), warps, 0, M=16, N=16, K=16, OTHER=other)  # else taken
    want = {"coordinates": np.arange(256.0).reshape(16, 16), "loaded": a.astype(np.float64),
            "constant": np.ones((16, 16))}[other]
    np.testing.assert_array_equal(got, want)


def test_if_yielding_a_dot_result_takes_the_dot_branch_right() -> None:
    """The companion that passes: the branch that yields the dot result itself."""
    rng = np.random.default_rng(20847)
    a, b = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(2))
    got = _emulated_dot(dot_or_other_block, a, b, (16, 16), 4, 5, M=16, N=16, K=16, OTHER="loaded")
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


mixed_sign_shift = _from_source("mixed_sign_shift", """
    def mixed_sign_shift(z_ptr, x_ptr, y_ptr, B: constexpr) -> None:
        offs = tl.arange(0, B)
        tl.store(z_ptr + offs, tl.load(x_ptr + offs) >> tl.load(y_ptr + offs))
""")


@pytest.mark.parametrize("x_dtype, y_dtype", [("int8", "uint8"), ("int8", "uint16"), ("int32", "uint32"),
                                              ("int64", "uint64"), ("uint16", "int8")])
def test_right_shift_takes_its_sign_fill_from_the_left_operand(backend: str, x_dtype: str, y_dtype: str) -> None:
    """``int8 >> uint8`` runs in uint8 but shifts in the sign bit, as Triton does (the left
    operand's own signedness decides; amounts past the width fill with it): the reference
    shifted logically, the CUDA backend arithmetically."""
    rng = np.random.default_rng(7)
    xt, yt = np.dtype(x_dtype), np.dtype(y_dtype)
    bits = 8 * max(xt.itemsize, yt.itemsize)  # the unsigned dtype both promote to (C's rule, as Triton's)
    out_dtype = np.dtype(f"u{bits // 8}")
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max, 64, dtype=xt, endpoint=True)
    y = rng.integers(0, bits + 2, 64).astype(yt)
    if xt.kind == "i":  # the sign-extended value, shifted in sign bits
        want = [(int(a) >> min(int(b), bits - 1)) % 2**bits for a, b in zip(x, y)]
    else:
        want = [int(a) >> int(b) if int(b) < bits else 0 for a, b in zip(x, y)]
    with tl.backend(backend):
        out = tl.to_device(np.full(64, 123, out_dtype))
        mixed_sign_shift[(1,)](out, tl.to_device(x), tl.to_device(y), B=64)
        np.testing.assert_array_equal(out.numpy().astype(object), np.array(want, dtype=object))


NARROW = {"f8e4m3": dtypes.F8E4M3, "f8e5m2": dtypes.F8E5M2, "f16": dtypes.F16, "bf16": dtypes.BF16, "bool": dtypes.BOOL}
cast_between = _from_source("cast_between", """
    def cast_between(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], SRC: constexpr, DST: constexpr,
                     B: constexpr) -> None:
        offs = tl.arange(0, B)
        x = tl.load(x_ptr + offs).to(SRC)
        tl.store(o_ptr + offs, x.to(DST).to(tl.f32))
""")


def _cast_on_host(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
    """``x`` converted to ``name`` as NumPy and ml_dtypes convert (bool: nonzero)."""
    return x != 0 if name == "bool" else x.astype(NARROW[name].numpy)


@pytest.mark.parametrize("src, dst", [(s, d) for s in NARROW for d in NARROW if s != d])
def test_casts_between_narrow_types(backend: str, src: str, dst: str) -> None:
    """Every cast among fp8 (both formats), f16, bf16 and bool compiles (f16 -> fp8 was an nvcc
    error: two partial specialisations of the conversion matched) and rounds once, to nearest
    even (saturating to the fp8 formats' finite range), as ml_dtypes does."""
    host = np.random.default_rng(len(src) * 7 + len(dst)).standard_normal(64).astype(np.float32) * 40
    host[:4] = (0.0, -0.0, 1.0, -3.0)
    with registry.backend(backend):
        x, out = tl.to_device(host, tl.f32), _poisoned(64)
        cast_between[(1,)](x, out, SRC=NARROW[src], DST=NARROW[dst], B=64)
        got = out.numpy()
    want = _cast_on_host(_cast_on_host(host, src).astype(np.float32), dst).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@tl.kernel
def return_on_one_branch(x_ptr: Pointer[f32], flags_ptr: Pointer[i32], o_ptr: Pointer[f32], B: constexpr) -> None:
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    scale = 1.0
    if tl.load(flags_ptr + pid) > 0:
        if tl.load(flags_ptr + pid) > 1:
            row = tl.load(x_ptr + offs) * 2.0  # bound only on the branch that goes on
            where = o_ptr + offs
            scale = 3.0
        else:
            return
    else:
        row = tl.load(x_ptr + offs) - 1.0
        where = o_ptr + offs
    tl.store(where, row * scale)


def test_values_bound_beside_a_returning_branch_flow_out_of_the_if(backend: str) -> None:
    """`if c: v = ... else: return`: v (a block, a pointer block, a rebound scalar) is read after the
    if; the compiler referred to the branch's own variable outside it (an nvcc error, Triton's
    test_nested_if_else_return). Programs with flag 1 return: their outputs stay poisoned."""
    rng = np.random.default_rng(4)
    x, flags = rng.random(4 * 16, dtype=np.float32), rng.permutation(np.array([0, 1, 2, 2], np.int32))
    want = x.astype(np.float64).reshape(4, 16)
    want = np.where(flags[:, None] == 2, want * 6.0, np.where(flags[:, None] == 0, want - 1.0, np.nan))
    with tl.backend(backend):
        out = _poisoned(4 * 16)
        return_on_one_branch[(4,)](tl.to_device(x, tl.f32), tl.to_device(flags, tl.i32), out, B=16)
        np.testing.assert_allclose(out.numpy().reshape(4, 16), want, rtol=1e-6)


@tl.kernel
def conditional_expressions(x_ptr: Pointer[f32], o_ptr: Pointer[f32], p_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    pid = tl.program_id(0)
    offs = tl.arange(0, B)
    # the untaken side's load would read past the end of x: only the side taken may run
    v = tl.load(x_ptr + pid * B + offs) if pid < n else tl.full((B,), -1.0, tl.f32)
    tl.store(o_ptr + pid * B + offs, v) if pid % 2 == 0 else tl.store(p_ptr + pid * B + offs, v + 0.5)


def test_a_conditional_expression_runs_only_the_side_taken(backend: str) -> None:
    """`a if c else b` with a runtime c evaluated both sides (as tl.where): both stores of
    `store(...) if c else store(...)` happened, and a load the condition guards read out of bounds."""
    n, grid, B = 3, 5, 16
    x = np.random.default_rng(5).random(n * B, dtype=np.float32)
    v = np.concatenate([x.astype(np.float64), np.full((grid - n) * B, -1.0)]).reshape(grid, B)
    even = (np.arange(grid) % 2 == 0)[:, None]
    with tl.backend(backend):
        out, other = _poisoned(grid * B), _poisoned(grid * B)
        conditional_expressions[(grid,)](tl.to_device(x, tl.f32), out, other, n, B=B)
        np.testing.assert_allclose(out.numpy().reshape(grid, B), np.where(even, v, np.nan), rtol=1e-6)
        np.testing.assert_allclose(other.numpy().reshape(grid, B), np.where(even, np.nan, v + 0.5), rtol=1e-6)


@tl.kernel
def reduce_with_branchy_max(x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    tl.store(o_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, B)), 0, branchy_max))


def test_a_combine_function_with_runtime_control_flow_is_refused_alike(backend: str) -> None:
    """The compiler inlined the branch into the combine region (a helper's early `return` is
    supported now); the reference refuses it: both say the combine function must be branch-free,
    at its branch (the reference said it at the tl.reduce line)."""
    import inspect

    x = np.random.default_rng(7).standard_normal(16).astype(np.float32)
    with tl.backend(backend):
        with pytest.raises(tl.KernelError, match="a combine function must be branch-free") as caught:
            reduce_with_branchy_max[(1,)](tl.to_device(x, tl.f32), _poisoned(1), B=16)
    lines, first = inspect.getsourcelines(branchy_max.fn)
    assert caught.value.lineno == first + next(i for i, text in enumerate(lines) if text.strip().startswith("if "))


@tl.func
def magnitude_or_zero(p: Pointer[f32], i: int, n: int) -> tl.Tensor[f32, tl.R0]:
    """Returns early on one side of two runtime ifs, with a load between them."""
    if i >= n:
        return tl.full((), 0.0, tl.f32)
    v = tl.load(p + i)
    if v < 0.0:
        return -v
    return v * 2.0


@tl.kernel
def early_returns(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int) -> None:
    pid = tl.program_id(0)
    tl.store(o_ptr + pid, magnitude_or_zero(x_ptr, pid, n))


def test_a_func_returning_on_one_side_of_a_runtime_if_compiles(backend: str) -> None:
    """The compiler refused a @tl.func whose runtime `if` returns on one side only ("not
    supported yet") while the reference ran it; the statements after such an `if` are now its
    other side, as Python runs them."""
    n, grid = 12, 16
    x = np.random.default_rng(9).standard_normal(n).astype(np.float32)
    want = np.zeros(grid)  # programs past n return 0
    want[:n] = np.where(x < 0, -x.astype(np.float64), 2.0 * x.astype(np.float64))
    with tl.backend(backend):
        out = _poisoned(grid)
        early_returns[(grid,)](tl.to_device(x, tl.f32), out, n)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


@tl.kernel
def store_where_positive(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs, mask=offs < n, other=-1.0)
    tl.store(o_ptr + offs, v, mask=(offs < n) & (v > 0))


@pytest.mark.parametrize("n", [10, 16, 61])
def test_masked_store_with_holes_between_live_lanes(backend: str, n: int) -> None:
    """A program whose first and last lanes are live but not those between: the reference took
    it as wholly live and wrote the masked-off lanes (a silent wrong result)."""
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    x[::8] = np.abs(x[::8]) + 0.5  # each program's first lane live ...
    x[7::8] = np.abs(x[7::8]) + 0.5  # ... and its last
    x[1::8] = -np.abs(x[1::8]) - 0.5  # with a hole between
    want = np.where(x > 0, x.astype(np.float64), np.nan)
    with tl.backend(backend):
        out = _poisoned(n)
        store_where_positive[(tl.cdiv(n, 8),)](tl.to_device(x, tl.f32), out, n, B=8)
        np.testing.assert_array_equal(out.numpy(), want.astype(np.float32))


sum_from_a_python_float = _from_source("sum_from_a_python_float", """
    def sum_from_a_python_float(x_ptr: Pointer[tl.f16], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        acc = 0.0  # to mypy a float that becomes f16 in the loop; carried as f32 at run time
        for i in range(n):
            acc = acc + tl.sum(tl.load(x_ptr + i * B + offs), axis=0)
        tl.static_assert(acc.dtype == tl.float32)
        tl.store(o_ptr + offs, acc + tl.zeros((B,), tl.float32))
""")


@pytest.mark.parametrize("n", [0, 1, 5])
def test_python_float_carried_by_a_loop_is_f32(backend: str, n: int) -> None:
    """``acc = 0.0`` before a runtime loop is carried as an f32 scalar, as Triton carries it, so
    ``acc + s`` of an f16 ``s`` is f32 from the first iteration (the reference kept the Python
    float and made the first sum f16, then refused the loop as unsettled)."""
    x = np.random.default_rng(n).standard_normal(max(n, 1) * 16).astype(np.float16)
    sums = x[: n * 16].reshape(n, 16).astype(np.float32).sum(axis=1).astype(np.float16)  # each block's f16 sum
    want = np.full(16, sums.astype(np.float64).sum())
    with tl.backend(backend):
        out = _poisoned(16)
        sum_from_a_python_float[(1,)](tl.to_device(x, tl.f16), out, n, B=16)
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["double", "exp", "max", "tl_scale", "__scale"])
def test_a_kernel_named_like_a_cuda_name_compiles(name: str, backend: str) -> None:
    """A kernel may be named like a C++ keyword or a function CUDA's headers declare (``def double``,
    FlagGems-style ``exp``): its C symbol becomes ``<name>_kernel``; NVRTC and g++ refused the
    source before."""
    kernel = load(name, textwrap.dedent(f"""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def {name}(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
            offs = tl.arange(0, B)
            tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
    """))
    x = np.random.default_rng(3).standard_normal(50).astype(np.float32)
    with registry.backend(backend):
        out = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
        kernel[(1,)](tl.to_device(x, tl.f32), out, 50, B=64)
        got = out.numpy()
    np.testing.assert_array_equal(got[:50], x.astype(np.float64) * 2)
    assert np.isnan(got[50:]).all()
    if backend == NAME:
        assert f" {name}_kernel(" in _BACKEND.last_source
