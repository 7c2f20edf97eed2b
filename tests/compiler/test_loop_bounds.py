"""Runtime ``for`` loops against Python's own ``range``, on the NumPy reference and the generated
CUDA (emulated): random bounds and steps of either sign (run-time and constant), huge steps,
bounds near the index type's limits, zero-trip loops, the loop variable after the loop, a zero
step, and the ``tl.range`` keywords. Outputs are poisoned before each launch."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load

_BACKEND = EMULATOR
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None, reason=str(_BACKEND.unavailable_reason()))
POISON = -(2**62) + 12345
I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
ONE_WARP = tl.Options(num_warps=1)


def _kernel(name: str, params: str, loop: str, stores: str) -> Any:
    """A kernel whose program ``pid`` reads its range's bounds from ``bounds_ptr[3 * pid:]`` (so
    they are run-time values the compiler cannot fold) and runs ``loop``. Written to a file and
    imported, as the fuzzer's kernels are: ``i = -7`` before a loop over ``i`` is ordinary Python
    that the typing gate refuses."""
    source = f"""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def {name}({params}) -> None:
            pid = tl.program_id(0)
            a = tl.load(bounds_ptr + 3 * pid)
            b = tl.load(bounds_ptr + 3 * pid + 1)
            s = tl.load(bounds_ptr + 3 * pid + 2)
            out = o_ptr + 3 * pid
    """
    body = textwrap.indent(textwrap.dedent(loop).strip() + "\n" + textwrap.dedent(stores).strip(), " " * 4)
    return load(name, textwrap.dedent(source).lstrip() + body + "\n")


# trips, the indices' low 20 bits summed with their positions as weights (order matters), and
# `i` after the loop
_WALK = """
    i = -7
    count = 0
    total = a.to(tl.i64) * 0
    for i in {iterator}:
        count += 1
        total += (i & 0xFFFFF).to(tl.i64) * count
"""
_STORES = """
    tl.store(out, count)
    tl.store(out + 1, total)
    tl.store(out + 2, i)
"""
walk32 = _kernel("walk32", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]",
                 _WALK.format(iterator="range(a, b, s)"), _STORES)
walk64 = _kernel("walk64", "bounds_ptr: Pointer[tl.i64], o_ptr: Pointer[tl.i64]",
                 _WALK.format(iterator="range(a, b, s)"), _STORES)
walk_constant_step = _kernel("walk_constant_step", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64], S: constexpr",
                             _WALK.format(iterator="range(a, b, S)"), _STORES)
walk_hinted = _kernel("walk_hinted", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]",
                      _WALK.format(iterator="tl.range(a, b, step=s, num_stages=2, loop_unroll_factor=2)"), _STORES)


def _expected(start: int, stop: int, step: int) -> tuple[int, int, int]:
    r = range(start, stop, step)
    return len(r), sum((v & 0xFFFFF) * (k + 1) for k, v in enumerate(r)), r[-1] if r else -7


def _case(rng: np.random.Generator, limits: tuple[int, int], step: int | None = None) -> tuple[int, int, int]:
    """Bounds of up to 40 trips anywhere in ``limits``, with a step of any size and sign (or
    ``step``): about one in six runs no trip."""
    low, high = limits
    bits = 31 if high < 2**40 else 63
    if step is None:
        step = max(1, min(high, int(2.0 ** rng.uniform(0, bits)))) * (1 if rng.random() < 0.5 else -1)
    trips = int(rng.integers(0, 41))
    start = int(rng.integers(low, high, endpoint=True))
    stop = start + trips * step - int(np.sign(step)) * int(rng.integers(0, abs(step)))
    return start, min(max(stop, low), high), step


_EDGES32 = [(10, 0, -3), (1610612735, 1610612736, 1610612736), (0, 5, 1), (5, 0, 1), (0, 0, 1), (5, -5, -1),
            (2**31 - 1, -(2**31), -(2**31)), (-(2**31), 2**31 - 1, 2**31 - 1), (2**31 - 100, 2**31 - 1, 64),
            (2**31 - 2, 2**31 - 1, 7), (-(2**31) + 3, -(2**31), -2), (0, 2**31 - 1, 2**30), (3, 3, -1)]
_EDGES64 = [(2**63 - 1, -(2**63), -(2**63)), (-(2**63), 2**63 - 1, 2**63 - 1), (2**63 - 100, 2**63 - 1, 64),
            (2**31 - 2, 2**31 + 5, 3), (-(2**31) + 1, -(2**31) - 5, -2), (10, 0, -3), (0, 0, 1)]


def _run(kernel: Any, cases: list[tuple[int, int, int]], wide: bool, backend: str, grid_each: bool = False,
         **constexprs: int) -> np.ndarray[Any, Any]:
    """Each case's (trips, weighted sum, index after the loop) from one launch of a program a
    case, or (``grid_each``) from a launch a case."""
    launches = [[c] for c in cases] if grid_each else [cases]
    rows = []
    with tl.backend(backend):
        for group in launches:
            host = np.array(group, np.int64 if wide else np.int32).reshape(-1)
            bounds = tl.to_device(host, tl.i64) if wide else tl.to_device(host, tl.i32)
            out = tl.to_device(np.full(3 * len(group), POISON, np.int64), tl.i64)
            kernel[(len(group),), ONE_WARP](bounds, out, **constexprs)
            rows.append(out.numpy().reshape(-1, 3))
    return np.concatenate(rows)


@pytest.mark.parametrize("grid_each", [False, True], ids=["program_a_case", "launch_a_case"])
def test_runtime_bounds_and_steps_follow_python_range(backend: str, grid_each: bool) -> None:
    """Negative and huge steps, bounds at the i32 limits (the index must not wrap), zero trips:
    trips, order and the variable after the loop are Python's (the reference's SIMT version runs
    the programs' different ranges together; a launch a case its checked version)."""
    rng = np.random.default_rng(20261201)
    cases = _EDGES32 + [_case(rng, I32) for _ in range(12 if grid_each else 80)]
    got = _run(walk32, cases, False, backend, grid_each)
    np.testing.assert_array_equal(got, np.array([_expected(*c) for c in cases], np.int64), err_msg=str(cases))


def test_i64_bounds_count_in_64_bits(backend: str) -> None:
    """Bounds of i64 make an i64 index; steps and bounds near 2**63."""
    rng = np.random.default_rng(7)
    cases = _EDGES64 + [_case(rng, I64) for _ in range(40)]
    got = _run(walk64, cases, True, backend)
    np.testing.assert_array_equal(got, np.array([_expected(*c) for c in cases], np.int64), err_msg=str(cases))


@pytest.mark.parametrize("step", [-(2**31), -3, -1, 1, 2, 2**30 + 1, 2**31 - 1])
def test_constant_steps_follow_python_range(backend: str, step: int) -> None:
    """A constexpr step of either sign, the run-time bounds random and at the limits."""
    rng = np.random.default_rng(abs(step) % 1000 + (step < 0))
    far = min(abs(step) * 39, 2**32 - 1)  # at most 40 trips, up to or down from a limit

    def clip(v: int) -> int:
        return min(max(v, I32[0]), I32[1])

    edges = [(clip(I32[1] - far), I32[1], step), (I32[0], clip(I32[0] + far), step), (I32[1], clip(I32[1] - far), step),
             (clip(I32[0] + far), I32[0], step), (0, 0, step), (5, -5, step), (-5, 5, step)]
    cases = [c[:2] for c in edges + [_case(rng, I32, step) for _ in range(40)]]
    got = _run(walk_constant_step, [(*c, 0) for c in cases], False, backend, S=step)
    np.testing.assert_array_equal(got, np.array([_expected(*c, step) for c in cases], np.int64))


def test_tl_range_hints_keep_the_loop(backend: str) -> None:
    """tl.range with step=, num_stages= and loop_unroll_factor= runs the same trips (the unroll
    factor is the CUDA loop's pragma)."""
    rng = np.random.default_rng(11)
    cases = _EDGES32 + [_case(rng, I32) for _ in range(30)]
    got = _run(walk_hinted, cases, False, backend)
    np.testing.assert_array_equal(got, np.array([_expected(*c) for c in cases], np.int64))
    if backend == NAME:
        assert "#pragma unroll 2\n" in _BACKEND.last_source


unbound_before = _kernel("unbound_before", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    for i in range(a, b, s):
        pass
""", "tl.store(out, i)")

rebound_in_body = _kernel("rebound_in_body", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    i, j = -7, a - 1000
    for i in range(a, b, s):
        for j in range(i, i + 3):
            pass
        i = i * 2 + j
    last = j
""", """
    tl.store(out, i)
    tl.store(out + 1, last)
""")


def test_loop_variable_after_the_loop_without_a_binding_before(backend: str) -> None:
    """With no binding before the loop, the variable is the loop's own: reading it after the loop
    is the shared rule's error at the read's line on both backends, after no trip (one program:
    the reference's checked version) and after trips (programs' ranges differing: its SIMT
    version), where Triton reads an undefined value."""
    rng = np.random.default_rng(3)
    ran = [c for c in (_case(rng, I32) for _ in range(60)) if len(range(*c))][:20]
    with tl.backend(backend):
        for cases in ([(9, 4, 2)], ran):
            bounds = tl.to_device(np.array(cases, np.int32).reshape(-1), tl.i32)
            out = tl.to_device(np.full(3 * len(cases), POISON, np.int64), tl.i64)
            with pytest.raises(KernelError) as caught:
                unbound_before[(len(cases),), ONE_WARP](bounds, out)
            assert (caught.value.kernel, caught.value.lineno) == ("unbound_before", 14)
            assert caught.value.message == ("name 'i' is bound only inside the loop at line 12; bind it before the "
                                            "loop to read it after the loop or in a later iteration")
            assert (out.numpy() == POISON).all()


def test_loop_variable_rebound_in_the_body_and_by_an_inner_loop(backend: str) -> None:
    """Python's answer where the body rebinds the variable, and for an inner loop's variable
    read after it (or its value from before when the outer loop runs no trip)."""
    rng = np.random.default_rng(5)
    cases = [(3, 9, 2), (5, 0, -2), (4, 4, 1)] + [_case(rng, (-(2**20), 2**20)) for _ in range(20)]
    want = []
    for a, b, s in cases:
        i, j = -7, a - 1000
        for i in range(a, b, s):
            for j in range(i, i + 3):
                pass
            i = i * 2 + j
        want.append((i, j))
    got = _run(rebound_in_body, cases, False, backend)
    np.testing.assert_array_equal(got[:, :2], np.array(want, np.int64))


zero_step_at_run_time = _kernel("zero_step_at_run_time", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    count = 0
    for i in range(a, b, s):
        count += 1
""", "tl.store(out, count)")

_LOOP_LINE = 13  # the line of `for i in range(a, b, s)` in the kernel's file


def test_reference_rejects_a_zero_step_at_run_time() -> None:
    with tl.backend("numpy"):
        bounds = tl.to_device(np.array([0, 5, 0], np.int32), tl.i32)
        with pytest.raises(KernelError, match=re.escape("range() arg 3 must not be zero")) as caught:
            zero_step_at_run_time[(1,), ONE_WARP](bounds, tl.to_device(np.full(3, POISON, np.int64), tl.i64))
        assert (caught.value.kernel, caught.value.lineno) == ("zero_step_at_run_time", _LOOP_LINE)
        assert "for i in range(a, b, s)" in str(caught.value)


def test_generated_cuda_asserts_a_zero_step_instead_of_hanging() -> None:
    """The emulated GPU stops at a device assertion naming the loop's line (a fresh process: the
    assertion aborts it); a nonzero step passes it."""
    script = textwrap.dedent("""
        import numpy as np
        import tile_lang as tl
        from tile_lang import registry
        from tests.compiler.emulator import EMULATOR, NAME, EmuBackend
        from tests.compiler.test_loop_bounds import zero_step_at_run_time as k
        registry.register(EmuBackend())
        with tl.backend(NAME):
            for step in (2, 0):
                out = tl.to_device(np.full(1, -1, np.int64), tl.i64)
                k[(1,), tl.Options(num_warps=1)](tl.to_device(np.array([0, 5, step], np.int32), tl.i32), out)
                print("ran", step, int(out.numpy()[0]), flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0, done.stdout
    assert "ran 2 3" in done.stdout and "ran 0" not in done.stdout
    assert "range() arg 3 must not be zero" in done.stderr
    assert f"zero_step_at_run_time.py:{_LOOP_LINE}" in done.stderr, done.stderr


zero_constant_step = _kernel("zero_constant_step", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64], S: constexpr", """
    count = 0
    for i in range(a, b, S):
        count += 1
""", "tl.store(out, count)")
zero_static_step = _kernel("zero_static_step", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    count = a
    for i in tl.static_range(0, 4, 0):
        count += 1
""", "tl.store(out, count)")


@pytest.mark.parametrize("kernel, constexprs", [(zero_constant_step, {"S": 0}), (zero_static_step, {})],
                         ids=["range", "static_range"])
def test_a_constant_zero_step_is_an_error_at_the_loop(backend: str, kernel: Any, constexprs: dict[str, int]) -> None:
    with tl.backend(backend):
        bounds = tl.to_device(np.array([0, 5, 1], np.int32), tl.i32)
        out = tl.to_device(np.full(3, POISON, np.int64), tl.i64)
        with pytest.raises(KernelError, match=re.escape("range() arg 3 must not be zero")) as caught:
            kernel[(1,), ONE_WARP](bounds, out, **constexprs)
        assert caught.value.lineno == _LOOP_LINE
        assert (out.numpy() == POISON).all()


bad_unroll = _kernel("bad_unroll", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    count = 0
    for i in tl.range(a, b, s, loop_unroll_factor=b):
        count += 1
""", "tl.store(out, count)")
unknown_keyword = _kernel("unknown_keyword", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]", """
    count = 0
    for i in tl.range(a, b, s, unroll=2):
        count += 1
""", "tl.store(out, count)")


@pytest.mark.parametrize("kernel, message", [(bad_unroll, "loop_unroll_factor must be a compile-time int, got a runtime value"),
                                             (unknown_keyword, "unexpected keyword argument 'unroll'")])
def test_tl_range_keywords_are_checked_on_both_backends(backend: str, kernel: Any, message: str) -> None:
    with tl.backend(backend):
        bounds = tl.to_device(np.array([0, 5, 1], np.int32), tl.i32)
        with pytest.raises(KernelError, match=message) as caught:
            kernel[(1,), ONE_WARP](bounds, tl.to_device(np.full(3, POISON, np.int64), tl.i64))
        assert caught.value.lineno == _LOOP_LINE


def _loop_heads(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if re.match(r"\s*for \((int|long long|unsigned)", line)
            and " k = 0; k < " not in line and "++k)" not in line]


def test_generated_loops_keep_the_simple_form_where_it_is_exact() -> None:
    """A constant step of 1 or -1 is C's own loop; another constant step counts trips with no
    sign test at run time and no assertion; a run-time step asserts it is nonzero first; the
    benchmark matmul's K loop stays C's loop over an int."""
    from benchmarks import dot_kernels

    def source(step: str) -> str:
        k = _kernel(f"heads_{step.strip('-')}{'n' if step.startswith('-') else ''}",
                    "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64]",
                    f"count = 0\nfor i in range(a, b, {step}):\n    count += i", "tl.store(out, count)")
        text: str = k.cuda_source(num_warps=1)
        return text

    for step, head in (("1", r"for \(int (i\d+) = v\d+; \1 < v\d+; \1 \+= 1\)"),
                       ("-1", r"for \(int (i\d+) = v\d+; \1 > v\d+; \1 \+= \(-1\)\)")):
        text = source(step)
        (found,) = _loop_heads(text)
        assert re.fullmatch(head + " {", found), found
        assert "trip_count" not in text and "assert_fail" not in text
    text = source("64")
    assert "tl::trip_count<unsigned, int>(v" in text and ", 64)" in text and "assert_fail" not in text
    text = source("s")
    assert "tl::trip_count<unsigned, int>(" in text and "range() arg 3 must not be zero" in text
    matmul = dot_kernels.matmul.cuda_source(num_warps=8, a_ptr=tl.f16, b_ptr=tl.f16, c_ptr=tl.f16,
                                            BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8)
    assert any(re.fullmatch(r"for \(int (i\d+) = 0; \1 < v\d+; \1 \+= 1\) {", h) for h in _loop_heads(matmul))
    assert "trip_count" not in matmul


_TRIPS = 5  # at most, above the pipeline's depth
pipelined_dots = _kernel("pipelined_dots", "bounds_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.i64], x_ptr: Pointer[tl.f16], "
                         "y_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f32], S: constexpr", f"""
    om = tl.arange(0, 64)
    acc = tl.zeros((64, 64), tl.f32)
    count = 0
    for k in tl.range(a, b, S, num_stages=3):
        tile = pid * {_TRIPS} + ((k.to(tl.i64) - a) // S).to(tl.i32)  # this trip's operands
        x = tl.load(x_ptr + tile * 4096 + om[:, None] * 64 + om[None, :])
        y = tl.load(y_ptr + tile * 4096 + om[:, None] * 64 + om[None, :])
        acc = tl.dot(x, y, acc)
        count += 1
""", """
    tl.store(out, count)
    tl.store(c_ptr + pid * 4096 + om[:, None] * 64 + om[None, :], acc)
""")


@pytest.mark.parametrize("arch, step", [(80, 3), (80, 2**29 + 3), (90, 2**30 + 1)])
def test_pipelined_loops_near_the_i32_limit_run_python_trips(backend: str, arch: int, step: int) -> None:
    """A tl.range(..., num_stages=3) whose copies the pipeline issues two trips ahead, its index
    up to 2**31 - 1 with steps of 3 and near 2**30 (two steps ahead pass the i32 range): each
    program's dots over its Python trips, the others' tiles never read (they are NaN)."""
    rng = np.random.default_rng(step % 997 + arch)
    top = I32[1]
    cases = [(top - 1, top, step), (0, 0, step), (top, top, step), (I32[0], top, step)]
    cases += [(max(I32[0], top - int(d)), top, step) for d in rng.integers(0, _TRIPS * step, 8)]
    cases = [c for c in cases if len(range(*c)) <= _TRIPS]
    trips = [len(range(*c)) for c in cases]
    x = rng.standard_normal((len(cases), _TRIPS, 64, 64)).astype(np.float16)
    y = rng.standard_normal((len(cases), _TRIPS, 64, 64)).astype(np.float16)
    for p, t in enumerate(trips):
        x[p, t:] = y[p, t:] = np.nan
    want = np.stack([np.einsum("tmk,tkn->mn", x[p, :t].astype(np.float64), y[p, :t].astype(np.float64))
                     for p, t in enumerate(trips)])
    _BACKEND.arch = arch
    try:
        with tl.backend(backend):
            out = tl.to_device(np.full(3 * len(cases), POISON, np.int64), tl.i64)
            c = tl.to_device(np.full(want.shape, np.nan, np.float32), tl.f32)
            pipelined_dots[(len(cases),), tl.Options(num_warps=4, num_stages=3)](
                tl.to_device(np.array(cases, np.int32).reshape(-1), tl.i32), out, tl.to_device(x, tl.f16),
                tl.to_device(y, tl.f16), c, S=step)
    finally:
        _BACKEND.arch = 80
    np.testing.assert_array_equal(out.numpy().reshape(-1, 3)[:, 0], trips)
    np.testing.assert_allclose(c.numpy(), want, rtol=2e-3, atol=2e-3)
    if backend == NAME:
        assert "cp_async_wait<1>" in _BACKEND.last_source or "mbar_wait" in _BACKEND.last_source  # pipelined
        assert ("wgmma" in _BACKEND.last_source) == (arch == 90)
