"""``tl.reduce`` and ``tl.associative_scan`` of a tuple of blocks (Triton's Welford reduction and
``linear_recurrence`` scan): the combine function takes the N left then the N right values and
returns N; the result is an N-tuple. Run on the NumPy reference and the emulated CUDA against
float64 NumPy references (outputs poisoned first); a bad tuple or combine function is the same
KernelError at the call's line on both backends."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import registry
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import Op, walk
from tile_lang.errors import KernelError
from tile_lang_cupy.codegen import generate

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load

ROWS, COLS = 4, 64

# Kernels are imported from source: tuples of blocks are beyond the typing gate's stubs.
_SOURCE = '''import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.func
def welford(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = weight_2 / new_weight
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight


@tl.func
def argmax_pair(v1, i1, v2, i2):
    right = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(right, v2, v1), tl.where(right, i2, i1)


@tl.func
def linear_recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tl.func
def one_of_two(a1, b1, a2, b2):
    return a1 + a2


@tl.func
def three_of_two(a1, b1, a2, b2):
    return a1, b1, a2


@tl.kernel
def row_var_mean(x_ptr: Pointer[tl.f32], mean_ptr: Pointer[tl.f32], var_ptr: Pointer[tl.f32],
                 C: constexpr) -> None:
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * C + tl.arange(0, C))
    mean, m2, weight = tl.reduce((x, tl.zeros_like(x), tl.full(x.shape, 1, x.dtype)), 0, welford)
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, m2 / weight)


@tl.kernel
def row_argmax(x_ptr: Pointer[tl.f32], v_ptr: Pointer[tl.f32], i_ptr: Pointer[tl.i32],
               R: constexpr, C: constexpr) -> None:
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    index = tl.broadcast_to(tl.arange(0, C)[None, :], (R, C))
    v, i = tl.reduce((x, index), 1, argmax_pair)
    tl.store(v_ptr + tl.arange(0, R), v)
    tl.store(i_ptr + tl.arange(0, R), i)


@tl.kernel
def row_recurrence(a_ptr: Pointer[tl.f32], b_ptr: Pointer[tl.f32], h_ptr: Pointer[tl.f32],
                   R: constexpr, C: constexpr, REVERSE: constexpr) -> None:
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    _, h = tl.associative_scan((a, b), 1, linear_recurrence, reverse=REVERSE)
    tl.store(h_ptr + offs, h)


@tl.kernel
def in_a_loop(x_ptr: Pointer[tl.f32], v_ptr: Pointer[tl.f32], i_ptr: Pointer[tl.i32], h_ptr: Pointer[tl.f32],
              R: constexpr, C: constexpr) -> None:
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    one = tl.zeros((1, 1), tl.i32)
    for k in range(3):
        x = tl.load(x_ptr + k * R * C + offs)
        v, i = tl.reduce((x, offs), None, argmax_pair, keep_dims=True)
        tl.store(v_ptr + k + one, v)
        tl.store(i_ptr + k + one, i)
        _, h = tl.associative_scan((x * 0.5, x), 0, linear_recurrence)
        tl.store(h_ptr + k * R * C + offs, h)


@tl.func
def compose(p, q):
    return (((p >> 16) * (q >> 16)) << 16) | (((q >> 16) * (p & 0xFFFF) + (q & 0xFFFF)) & 0xFFFF)


@tl.kernel
def single(x_ptr: Pointer[tl.u32], o_ptr: Pointer[tl.u32], R: constexpr, C: constexpr) -> None:
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    (whole,) = tl.reduce((x,), None, compose)
    (forward,) = tl.associative_scan((x,), 1, compose)
    tl.store(o_ptr + offs, forward + tl.associative_scan(x, 0, compose, reverse=True))
    tl.store(o_ptr + R * C + tl.arange(0, R), tl.reduce(x, 1, compose) + whole)


@tl.kernel
def misuse(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], CASE: constexpr) -> None:
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x
    if CASE == "shapes":
        y = tl.reduce((x, tl.reshape(x, (4, 4))), 0, linear_recurrence)[0]
    elif CASE == "count":
        y = tl.associative_scan((x, x), 0, one_of_two)[0]
    elif CASE == "reduce_count":
        y = tl.reduce((x, x), 0, three_of_two)[0]
    elif CASE == "arity":
        y = tl.reduce((x, x), 0, welford)[0]
    tl.store(o_ptr + tl.arange(0, 16), y)
'''
_LINES = _SOURCE.splitlines()


@functools.cache
def _kernel(name: str) -> Any:
    """The kernel ``name`` of the source above, imported once."""
    return load(name, _SOURCE)


def _poisoned(n: int, kind: type[np.generic] = np.float32) -> Any:
    """A device buffer of ``n`` NaNs (-7 for an integer ``kind``): what a kernel did not store shows."""
    return tl.to_device(np.full(n, np.nan if kind is np.float32 else -7, kind))


def test_welford_mean_and_variance_over_rows(backend: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((ROWS, COLS)) * 3 + 5).astype(np.float32)
    with tl.backend(backend):
        mean, var = _poisoned(ROWS), _poisoned(ROWS)
        _kernel("row_var_mean")[(ROWS,)](tl.to_device(x.ravel(), tl.f32), mean, var, C=COLS)
    ref = x.astype(np.float64)
    np.testing.assert_allclose(mean.numpy(), ref.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), ref.var(axis=1), rtol=1e-4)


def test_argmax_by_value_index_pairs_takes_the_first_of_ties(backend: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-4, 4, (ROWS, COLS)).astype(np.float32)  # many ties of the maximum
    with tl.backend(backend):
        v, i = _poisoned(ROWS), _poisoned(ROWS, np.int32)
        _kernel("row_argmax")[(1,)](tl.to_device(x.ravel(), tl.f32), v, i, R=ROWS, C=COLS)
    np.testing.assert_array_equal(v.numpy(), x.max(axis=1))
    np.testing.assert_array_equal(i.numpy(), np.argmax(x, axis=1))


def _recurrence(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], reverse: bool) -> np.ndarray[Any, Any]:
    """``h[t] = a[t] * h[t-1] + b[t]`` along each row in float64 (from the end when ``reverse``:
    the combine's left operand is then the later element)."""
    a, b = (np.flip(v, axis=1).astype(np.float64) for v in (a, b)) if reverse else (a.astype(np.float64), b.astype(np.float64))
    h = np.empty_like(b)
    h[:, 0] = b[:, 0]
    for t in range(1, b.shape[1]):
        h[:, t] = a[:, t] * h[:, t - 1] + b[:, t]
    return np.flip(h, axis=1) if reverse else h


@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_scan_over_rows(backend: str, reverse: bool) -> None:
    rng = np.random.default_rng(7 + reverse)
    a = rng.uniform(0.5, 1.0, (ROWS, COLS)).astype(np.float32)
    b = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    with tl.backend(backend):
        h = _poisoned(ROWS * COLS)
        _kernel("row_recurrence")[(1,)](tl.to_device(a.ravel(), tl.f32), tl.to_device(b.ravel(), tl.f32), h,
                                        R=ROWS, C=COLS, REVERSE=reverse)
    np.testing.assert_allclose(h.numpy().reshape(ROWS, COLS), _recurrence(a, b, reverse), rtol=1e-4, atol=1e-5)


def test_whole_block_keep_dims_and_column_scans_in_a_loop(backend: str) -> None:
    """axis=None with keep_dims, a scan along axis 0, and the shared-memory buffers reused by
    each iteration of a loop."""
    rng = np.random.default_rng(13)
    x = rng.integers(-3, 3, (3, ROWS, COLS)).astype(np.float32)
    with tl.backend(backend):
        v, i, h = _poisoned(3), _poisoned(3, np.int32), _poisoned(3 * ROWS * COLS)
        _kernel("in_a_loop")[(1,)](tl.to_device(x.ravel()), v, i, h, R=ROWS, C=COLS)
    flat = x.reshape(3, -1)
    np.testing.assert_array_equal(v.numpy(), flat.max(axis=1))
    np.testing.assert_array_equal(i.numpy(), np.argmax(flat, axis=1))
    ref = np.stack([_recurrence(0.5 * t.T, t.T, False).T for t in x])
    np.testing.assert_allclose(h.numpy().reshape(3, ROWS, COLS), ref, rtol=1e-5, atol=1e-6)


def test_the_n_results_of_one_tuple_combine_share_one_run() -> None:
    """The three nodes of Welford's (mean, m2, weight) emit one combine (one lambda, one round of
    barriers), the later two reading the first's shared-memory buffers."""
    kernel = _kernel("row_var_mean")
    fn = compile_ir(kernel, static_spec(kernel, {"C": COLS}))
    assert len([n for n in walk(fn.body) if n.op is Op.COMBINE_REDUCE]) == 3
    assert generate(fn).source.count("auto combine") == 1


def _compose(p: np.ndarray[Any, Any], q: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The kernel's ``compose`` in NumPy: associative, not commutative (the order shows)."""
    out: np.ndarray[Any, Any] = (((p >> 16) * (q >> 16)) << 16) | (((q >> 16) * (p & 0xFFFF) + (q & 0xFFFF)) & 0xFFFF)
    return out


def test_a_one_tuple_gives_a_one_tuple_and_a_block_a_block(backend: str) -> None:
    """A tuple of one block and a bare block take the same path; the integer combine is exact, so
    a left fold in NumPy (uint32 arithmetic wraps as the GPU's) is the reference."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2**32, (ROWS, COLS), dtype=np.uint32)
    with tl.backend(backend):
        out = tl.to_device(np.full(ROWS * COLS + ROWS, 7, np.uint32))
        _kernel("single")[(1,)](tl.to_device(x.ravel()), out, R=ROWS, C=COLS)
        got = out.numpy()

    def fold(values: np.ndarray[Any, Any], axis: int) -> np.ndarray[Any, Any]:
        acc = np.take(values, [0], axis=axis)
        scanned = [acc]
        for t in range(1, values.shape[axis]):
            acc = _compose(acc, np.take(values, [t], axis=axis))
            scanned.append(acc)
        return np.concatenate(scanned, axis=axis)

    forward = fold(x, 1)
    backward = np.flip(fold(np.flip(x, 0), 0), 0)
    whole = fold(x.reshape(1, -1), 1)[0, -1]
    np.testing.assert_array_equal(got[:ROWS * COLS].reshape(ROWS, COLS), forward + backward)
    np.testing.assert_array_equal(got[ROWS * COLS:], forward[:, -1] + whole)


@pytest.mark.parametrize(("case", "line", "message"), [
    ("shapes", "y = tl.reduce((x, tl.reshape(x, (4, 4))), 0, linear_recurrence)[0]",
     r"tl.reduce: the input tuple's blocks must have one shape, got a tl.f32 block of shape \[16\], "
     r"a tl.f32 block of shape \[4, 4\]"),
    ("count", "y = tl.associative_scan((x, x), 0, one_of_two)[0]",
     r"tl.associative_scan: .*one_of_two.* must return 2 values \(one per input block\), got 1"),
    ("reduce_count", "y = tl.reduce((x, x), 0, three_of_two)[0]",
     r"tl.reduce: .*three_of_two.* must return 2 values \(one per input block\), got 3"),
    ("arity", "y = tl.reduce((x, x), 0, welford)[0]",
     r"tl.reduce: .*welford.* must take 4 arguments \(the 2 left values, then the 2 right\), one pair per input block"),
])
def test_bad_tuples_are_the_same_error_at_the_call_on_both_backends(case: str, line: str, message: str) -> None:
    registry.register(EMULATOR)
    errors = []
    for name in ("numpy", NAME):
        with tl.backend(name):
            out = _poisoned(16)
            with pytest.raises(KernelError, match=message) as err:
                _kernel("misuse")[(1,)](tl.to_device(np.ones(16, np.float32), tl.f32), out, CASE=case)
            assert np.isnan(out.numpy()).all()
        errors.append(err.value)
    for e in errors:
        assert e.lineno == _LINES.index("        " + line) + 1, (e.lineno, str(e))
        assert line in str(e)
    assert errors[0].message == errors[1].message
