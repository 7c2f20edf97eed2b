"""Gradual typing: Triton-style kernels with unannotated parameters, each typed at its launch by
its argument (a buffer as a pointer to its dtype, ints by width, floats, bools; None, dtypes, strs
and tuples as compile-time values), and bare constexprs holding None, a dtype or a tuple. Every
kernel runs on the NumPy reference and on the emulator of the generated CUDA, against float64
NumPy references, outputs poisoned first."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import dtypes
from tile_lang.check import Outcome, check

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load
from tests.gradual_kernels import add_kernel, linear_kernel, offset_kernel, scale_kernel, softmax_kernel

_EMU = EMULATOR
RNG = np.random.default_rng(20261201)

# A bare constexpr holding a dtype, None or a tuple: mypy types a bare constexpr as an int, so this
# kernel is imported from a file mypy does not see. Its pointers mix annotated and unannotated.
constexpr_values = load("constexpr_values", '''
import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.kernel
def constexpr_values(x_ptr: Pointer[tl.f32], out_ptr, n: int, BLOCK: constexpr, AFFINE: constexpr,
                     BIAS: constexpr, HAS_SQUARE: constexpr, OUT_DTYPE: constexpr = tl.float16) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * AFFINE[0] + AFFINE[1]
    if BIAS is None:
        x = x * 2.0
    else:
        x = x + BIAS
    if HAS_SQUARE:
        x = x * x
    acc = tl.zeros((BLOCK,), dtype=OUT_DTYPE)
    tl.store(out_ptr + offs, acc + x.to(OUT_DTYPE), mask=mask)
''')

# Scalars annotated with a dtype, as vLLM's kernels write strides (`block_table_stride: tl.int64`):
# passed as that dtype whatever their value. mypy reads `n: tl.int64` as a dtype marker, so this
# kernel too is imported from a file mypy does not see.
dtype_scalars = load("dtype_scalars", '''
import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.kernel
def dtype_scalars(x_ptr: Pointer[tl.f64], out_ptr: Pointer[tl.f64], big_ptr: Pointer[tl.i64], n: tl.int64,
                  scale: tl.float64, small: tl.int8, BLOCK: constexpr) -> None:
    tl.static_assert(n.dtype == tl.int64)
    tl.static_assert(scale.dtype == tl.float64)
    tl.static_assert(small.dtype == tl.int8)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale + small, mask=mask)
    tl.store(big_ptr + tl.program_id(0), n * n)  # past i32 for n = 100_000: no overflow in i64
''')


def _device(host: np.ndarray[Any, Any]) -> tl.Buffer[Any]:
    return tl.to_device(host)  # of the array's dtype


def _poisoned(shape: Any, dtype: Any) -> tl.Buffer[Any]:
    sentinel = np.nan if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
    return _device(np.full(shape, sentinel, dtype))


def _compiles(name: str) -> int:
    """How many specialisations of the kernel called ``name`` the emulator has compiled."""
    return sum(1 for kernel, _ in _EMU.loaded if kernel.name == name)


def test_vector_add_unannotated(backend: str) -> None:
    n = 1000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    with tl.backend(backend):
        out = _poisoned(n, np.float32)
        add_kernel[(tl.cdiv(n, 256),)](_device(x), _device(y), out, n, BLOCK=256)
        np.testing.assert_allclose(out.numpy(), x.astype(np.float64) + y, rtol=1e-6)


@pytest.mark.parametrize("n_cols", [1, 16, 100])  # an int of 1, a multiple of 16, neither
def test_softmax_rows_with_strides(backend: str, n_cols: int) -> None:
    x = RNG.standard_normal((7, n_cols)).astype(np.float32)
    padded = 128  # the output's rows are longer than the input's: two different strides
    with tl.backend(backend):
        out = _poisoned((7, padded), np.float32)
        softmax_kernel[(7,)](out, _device(x), n_cols, padded, n_cols, BLOCK=128)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        got = out.numpy()
        np.testing.assert_allclose(got[:, :n_cols], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
        assert np.isnan(got[:, n_cols:]).all()  # masked columns untouched


def test_a_generic_kernel_compiles_once_per_dtype(backend: str) -> None:
    """f16 then f32 buffers: two specialisations (the pointee is in the cache key), both right; a
    float and a bool scalar typed by their values."""
    n = 300
    before = _compiles("scale_kernel")
    for dtype, rtol in ((np.float16, 1e-3), (np.float32, 1e-6), (np.float16, 1e-3)):
        x = RNG.standard_normal(n).astype(dtype)
        with tl.backend(backend):
            out = _poisoned(n, dtype)
            scale_kernel[(tl.cdiv(n, 128),)](_device(x), out, n, 0.75, True, BLOCK=128)
            assert out.numpy().dtype == dtype
            np.testing.assert_allclose(out.numpy(), -0.75 * x.astype(np.float64), rtol=rtol)
    if backend == NAME:
        assert _compiles("scale_kernel") - before == 2


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("out_dtype", [tl.float32, tl.float16])
def test_optional_bias_and_out_dtype(backend: str, with_bias: bool, out_dtype: Any) -> None:
    """``bias_ptr`` passed as None takes the `is not None` branch out; ``out_dtype`` a dtype value."""
    rows, cols = 5, 100
    x, w, bias = (RNG.standard_normal(shape).astype(np.float32) for shape in ((rows, cols), (cols,), (cols,)))
    host_dtype = dtypes.dtype_of(out_dtype).numpy
    with tl.backend(backend):
        out = _poisoned((rows, cols), host_dtype)
        linear_kernel[(rows,)](_device(x), _device(w), _device(bias) if with_bias else None, out, cols, cols,
                               BLOCK=128, out_dtype=out_dtype)
        want = x.astype(np.float64) * w + (bias if with_bias else 0.0)
        assert out.numpy().dtype == host_dtype
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-3 if host_dtype == np.float16 else 1e-6, atol=1e-3)


@pytest.mark.parametrize("base, dtype", [(7, np.int32), (2**33 + 5, np.int64), (2**63 + 5, np.uint64)])
def test_an_int_is_typed_by_its_width(backend: str, base: int, dtype: Any) -> None:
    """i32 when it fits, else i64, else u64: 2**33 + i computed in i32 would wrap."""
    n = 100
    with tl.backend(backend):
        out = _poisoned(n, dtype)
        offset_kernel[(1,)](out, base, n, BLOCK=128)
        np.testing.assert_array_equal(out.numpy(), (np.arange(n, dtype=object) + base).astype(dtype))


@pytest.mark.parametrize("affine, bias, square", [((2.0, -1.0), None, False), ((0.5, 3), 1.5, True)])
def test_bare_constexprs_hold_tuples_none_and_dtypes(backend: str, affine: tuple[float, float],
                                                     bias: float | None, square: bool) -> None:
    n = 200
    x = RNG.standard_normal(n).astype(np.float32)
    want = x.astype(np.float64) * affine[0] + affine[1]
    want = want * 2.0 if bias is None else want + bias
    want = want * want if square else want
    with tl.backend(backend):
        for out_dtype, given in ((np.float16, {}), (np.float32, {"OUT_DTYPE": tl.float32})):
            out = _poisoned(n, out_dtype)
            constexpr_values[(2,)](_device(x), out, n, BLOCK=128, AFFINE=affine, BIAS=bias, HAS_SQUARE=square,
                                   **given)
            assert out.numpy().dtype == out_dtype
            np.testing.assert_allclose(out.numpy(), want, rtol=2e-3 if out_dtype == np.float16 else 1e-6)


def test_annotated_parameters_keep_their_checks() -> None:
    x = np.zeros(8, np.float16)
    with tl.backend("numpy"):
        with pytest.raises(tl.LaunchError, match=r"kernel constexpr_values, parameter x_ptr \(Pointer\[Float\[W32\]\]\)"
                           r": got a buffer of Float\[W16\]"):
            constexpr_values[(1,)](_device(x), _device(x), 8, BLOCK=8, AFFINE=(1, 0), BIAS=None, HAS_SQUARE=False)
        with pytest.raises(tl.LaunchError, match=r"kernel constexpr_values: constexpr AFFINE must be an int, float, "
                           r"bool, str, None, a dtype or a tuple of these, got list \[1, 0\]"):
            constexpr_values[(1,)](_device(x.astype(np.float32)), _device(x), 8, BLOCK=8, AFFINE=[1, 0], BIAS=None,
                                   HAS_SQUARE=False)


def test_a_list_for_an_unannotated_pointer_names_the_parameter() -> None:
    y = np.zeros(8, np.float32)
    with tl.backend("numpy"):
        with pytest.raises(tl.LaunchError, match=r"kernel add_kernel, parameter x_ptr \(unannotated, a pointer "
                           r"here\): expected a tile_lang Buffer or a numpy array, got list"):
            add_kernel[(1,)]([1.0] * 8, y, y, 8, BLOCK=8)
        with pytest.raises(tl.LaunchError, match="kernel add_kernel: missing argument"):
            add_kernel[(1,)](y, y, y, BLOCK=8)  # type: ignore[call-arg]


def test_num_ctas_one_is_accepted_and_more_is_a_launch_error() -> None:
    n = 64
    x = RNG.standard_normal(n).astype(np.float32)
    with tl.backend("numpy"):
        out = _poisoned(n, np.float32)
        add_kernel[(1,)](_device(x), _device(x), out, n, BLOCK=64, num_ctas=1)
        np.testing.assert_allclose(out.numpy(), 2.0 * x.astype(np.float64), rtol=1e-6)
        out = _poisoned(n, np.float32)
        add_kernel[(1,), tl.Options(num_ctas=1)](_device(x), _device(x), out, n, BLOCK=64)
        np.testing.assert_allclose(out.numpy(), 2.0 * x.astype(np.float64), rtol=1e-6)
        assert tl.Config({"BLOCK": 64}, num_ctas=1).options().num_ctas == 1
        with pytest.raises(tl.LaunchError, match="kernel add_kernel: num_ctas=2: clusters are not supported yet"):
            add_kernel[(1,)](_device(x), _device(x), out, n, BLOCK=64, num_ctas=2)
        with pytest.raises(tl.LaunchError, match="kernel add_kernel: num_ctas=4: clusters are not supported yet"):
            add_kernel[(1,), tl.Options(num_ctas=4)](_device(x), _device(x), out, n, BLOCK=64)
        with pytest.raises(tl.LaunchError, match="num_ctas must be an int >= 1, got 0"):
            tl.Options(num_ctas=0)


def test_inspect_and_check_need_annotations_or_a_launch() -> None:
    with pytest.raises(tl.LaunchError, match="kernel add_kernel: inspect needs the types of x_ptr, y_ptr, out_ptr, n, "
                       "which have no annotation"):
        add_kernel.inspect(BLOCK=64)
    reports = [r for r in check("tests.gradual_kernels") if r.kernel == "add_kernel"]
    assert [r.outcome for r in reports] == [Outcome.NOT_CHECKED]
    assert "gradual_kernels.py:" in reports[0].message
    assert "kernel add_kernel not checked: x_ptr, y_ptr, out_ptr, n have no annotation" in reports[0].message


@pytest.mark.parametrize("n", [100, 100_000])  # i32 would overflow at n * n = 10**10
def test_scalars_annotated_with_a_dtype_are_passed_as_it(backend: str, n: int) -> None:
    x = RNG.standard_normal(n)
    blocks = tl.cdiv(n, 1024)
    with tl.backend(backend):
        for _ in range(2):  # the second launch takes the fast path where the backend has one
            out, big = _poisoned(n, np.float64), _poisoned(blocks, np.int64)
            dtype_scalars[(blocks,)](_device(x), out, big, n, 0.1, -3, BLOCK=1024)
            # 0.1 as an f64 scale: as an f32 it would differ by 1.5e-9 relative
            np.testing.assert_allclose(out.numpy(), x * 0.1 - 3, rtol=1e-15, atol=1e-15)
            assert (big.numpy() == n * n).all()


def test_a_value_outside_an_annotated_dtype_is_a_launch_error() -> None:
    x = _device(RNG.standard_normal(8))
    with tl.backend("numpy"):
        out, big = _poisoned(8, np.float64), _poisoned(1, np.int64)
        dtype_scalars[(1,)](x, out, big, 8, 1.0, 127, BLOCK=8)  # the checked path remembers this launch
        with pytest.raises(tl.LaunchError, match="kernel dtype_scalars, parameter small: 128 does not fit in tl.i8"):
            dtype_scalars[(1,)](x, out, big, 8, 1.0, 128, BLOCK=8)
        with pytest.raises(tl.LaunchError, match="parameter n: 9223372036854775808 does not fit in tl.i64"):
            dtype_scalars[(1,)](x, out, big, 2**63, 1.0, 0, BLOCK=8)
        with pytest.raises(tl.LaunchError, match="parameter n: expected int, got float"):
            dtype_scalars[(1,)](x, out, big, 8.0, 1.0, 0, BLOCK=8)
