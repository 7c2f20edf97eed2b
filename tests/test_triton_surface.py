"""Triton kernels run as written: ``tl.math`` / ``libdevice`` imports and functions, tensor
methods (``cast``, ``permute``, ``numel``, ``shape == [..]``), Triton's dtype attributes, and a
clear "not supported yet" for Triton names tile_lang lacks; on the reference and the emulator,
against NumPy float64 with outputs poisoned."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, i32, registry
from tile_lang.errors import KernelError, Unsupported
from tile_lang.extra.cuda.libdevice import tanh
from tile_lang.extra.libdevice import rsqrt

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load

_EMU = EMULATOR

Ref = Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]]
# each function's float64 reference and the interval its random inputs come from
FUNCTIONS: dict[str, tuple[Ref, float, float]] = {
    "tanh": (np.tanh, -4, 4), "tan": (np.tan, -1.4, 1.4), "asin": (np.arcsin, -0.99, 0.99),
    "acos": (np.arccos, -0.99, 0.99), "atan": (np.arctan, -5, 5), "sinh": (np.sinh, -4, 4),
    "cosh": (np.cosh, -4, 4), "asinh": (np.arcsinh, -5, 5), "acosh": (np.arccosh, 1, 6),
    "atanh": (np.arctanh, -0.99, 0.99), "erfc": (np.vectorize(__import__("math").erfc), -3, 3),
    "expm1": (np.expm1, -1e-3, 1e-3), "log1p": (np.log1p, -1e-3, 1e-3), "log10": (np.log10, 0.01, 100),
    "trunc": (np.trunc, -9, 9), "rint": (np.rint, -9, 9),
}


def _libdevice_kernel(fn: str, module: str) -> Any:
    """A kernel applying ``module.fn`` (imported as Triton code imports it), kept from mypy."""
    source = f"""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr
        {module}


        @tl.kernel
        def apply_{fn}(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
            offs = tl.arange(0, B)
            tl.store(o_ptr + offs, libdevice.{fn}(tl.load(x_ptr + offs)))
    """
    return load(f"apply_{fn}", textwrap.dedent(source).lstrip())


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_libdevice_functions_match_float64(backend: str, fn: str) -> None:
    ref, low, high = FUNCTIONS[fn]
    x = np.random.default_rng(len(fn)).uniform(low, high, 64).astype(np.float32)
    if fn == "rint":
        x[:4] = [0.5, 1.5, -2.5, 3.5]  # ties go to even
    kernel = _libdevice_kernel(fn, "import tile_lang.extra.libdevice as libdevice")
    with tl.backend(backend):
        out = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
        kernel[(1,)](tl.to_device(x, tl.f32), out, B=64)
        np.testing.assert_allclose(out.numpy(), ref(x.astype(np.float64)), rtol=2e-6, atol=1e-7)


def test_math_and_libdevice_namespaces_are_the_builtins() -> None:
    import tile_lang.extra.libdevice as libdevice
    from tile_lang.math import tanh as math_tanh

    assert tanh is math_tanh is libdevice.tanh is tl.tanh is tl.math.tanh is tl.extra.cuda.libdevice.tanh
    assert rsqrt is tl.rsqrt and tl.math.fma is tl.fma


@tl.kernel
def triton_style(x_ptr: Pointer[f32], o_ptr: Pointer[f32], i_ptr: Pointer[i32], M: constexpr, N: constexpr) -> None:
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.static_assert(x.shape == [M, N] and x.shape == (M, N) and x.shape != [N])
    tl.static_assert(x.numel == M * N)
    tl.static_assert(x_ptr.dtype.element_ty.primitive_bitwidth == 32)
    tl.static_assert(x.dtype.is_floating() and not x.dtype.is_int_signed() and x.dtype.fp_mantissa_width == 23)
    y = x.permute(1, 0) * (rsqrt(x.permute((1, 0)) + 1.0) + x.numel)
    tl.store(o_ptr + cols[:, None] * M + rows[None, :], tanh(y))
    tl.store(i_ptr + rows[:, None] * N + cols[None, :], (x * 100.0).cast(tl.int32) + x.cast(tl.int32, bitcast=True) * 0)


def test_tensor_methods_and_dtype_attributes_in_a_kernel(backend: str) -> None:
    M, N = 8, 16
    x = np.random.default_rng(7).uniform(0, 2, (M, N)).astype(np.float32)
    wide = x.astype(np.float64)
    with tl.backend(backend):
        out = tl.to_device(np.full(M * N, np.nan, np.float32), tl.f32)
        ints = tl.to_device(np.full(M * N, -7, np.int32), tl.i32)
        triton_style[(1,)](tl.to_device(x.ravel(), tl.f32), out, ints, M=M, N=N)
        want = np.tanh(wide.T * (1 / np.sqrt(wide.T + 1) + M * N))
        np.testing.assert_allclose(out.numpy().reshape(N, M), want, rtol=2e-6)
        np.testing.assert_array_equal(ints.numpy().reshape(M, N), np.trunc(x * np.float32(100)).astype(np.int32))


@tl.kernel
def dependent_scale(x_ptr: Pointer[f32], o_ptr: Pointer[f32], scale: float, B: constexpr) -> None:
    """Triton's programmatic-dependent-launch idiom (tutorial 11): wait for the grid before,
    release the next one once the loads are issued."""
    tl.extra.cuda.gdc_wait()
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(o_ptr + offs, x * scale)


def test_grid_dependence_calls_are_no_ops(backend: str) -> None:
    """``gdc_wait`` / ``gdc_launch_dependents`` change nothing: no launch is made dependent here."""
    x = np.random.default_rng(11).standard_normal(64).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
        dependent_scale[(4,)](tl.to_device(x, tl.f32), out, -1.5, B=16)
        np.testing.assert_allclose(out.numpy().astype(np.float64), x.astype(np.float64) * -1.5, rtol=1e-7)


def test_dtype_attributes_follow_triton() -> None:
    assert (tl.float32.name, tl.float32.primitive_bitwidth, tl.float32.fp_mantissa_width) == ("fp32", 32, 23)
    assert (tl.bfloat16.fp_mantissa_width, tl.float16.exponent_bias, tl.float8e4nv.exponent_bias) == (7, 15, 7)
    assert tl.int1.is_int_unsigned() and tl.int1.is_bool() and tl.int64.is_int_signed() and tl.uint8.is_int()
    assert tl.float16.is_fp16() and not tl.bfloat16.is_fp16() and tl.bfloat16.is_bf16() and tl.f8e5m2.is_fp8()
    assert not tl.int32.is_floating() and tl.int32.int_bitwidth == 32 and tl.float64.scalar is tl.float64
    assert tl.pi32_t == tl.Pointer[tl.int32]


def test_triton_names_tile_lang_lacks_say_so() -> None:
    import tile_lang.extra.libdevice as libdevice

    with pytest.raises(Unsupported, match=r"tl\.map_elementwise is not supported yet"):
        tl.map_elementwise  # noqa: B018
    assert libdevice.erfcx is libdevice.erfcx and libdevice.fma_rn is tl.math.fma_rn  # every one of Triton's
    with pytest.raises(Unsupported, match=r"libdevice has no attribute 'erfcxx' \(nor does Triton's\)"):
        libdevice.erfcxx  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tl.no_such_name  # noqa: B018


def test_an_unsupported_name_in_a_kernel_is_an_error_at_its_line(backend: str) -> None:
    kernel = _libdevice_kernel("map_elementwise", "import tile_lang as libdevice")  # a Triton name tile_lang lacks
    with tl.backend(backend), pytest.raises(KernelError, match=r"tl\.map_elementwise is not supported yet") as err:
        kernel[(1,)](tl.to_device(np.zeros(8, np.float32), tl.f32), tl.empty(8, tl.f32), B=8)
    assert "apply_map_elementwise.py" in str(err.value) and ":9" in str(err.value)


def test_triton_extra_cuda_names_tile_lang_lacks_say_so(backend: str) -> None:
    """``tl.extra.cuda.smid()`` was "'smid' is not a method a kernel may call"."""
    import tile_lang.extra.cuda as cuda

    assert cuda.libdevice.tanh is tl.extra.libdevice.tanh
    with pytest.raises(Unsupported, match=r"tl\.extra\.cuda\.globaltimer is not supported yet"):
        cuda.globaltimer  # noqa: B018
    kernel = _libdevice_kernel("smid", "import tile_lang.extra.cuda as libdevice")
    with tl.backend(backend), pytest.raises(KernelError, match=r"tl\.extra\.cuda\.smid is not supported yet") as err:
        kernel[(1,)](tl.to_device(np.zeros(8, np.float32), tl.f32), tl.empty(8, tl.f32), B=8)
    assert "apply_smid.py" in str(err.value) and ":9" in str(err.value)


def _kernel_from(name: str, body: str) -> Any:
    """A kernel ``name(x_ptr: i32, u_ptr: u32, f_ptr: f32, o_ptr: i32)`` with ``body`` (x, u and f
    loaded), kept from mypy: some bodies break the operator rules on purpose."""
    source = f"""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def {name}(x_ptr: Pointer[tl.i32], u_ptr: Pointer[tl.u32], f_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.i32],
                   B: constexpr) -> None:
            offs = tl.arange(0, B)
            x, u, f = tl.load(x_ptr + offs), tl.load(u_ptr + offs), tl.load(f_ptr + offs)
            {body}
    """
    return load(name, textwrap.dedent(source).lstrip())


REJECTED = {  # body: the words of Triton's message the error contains (and its __cause__, as Triton chains it)
    "tl.store(o_ptr + offs, x & f)": r"invalid operands of type tl\.f32 for operator &",
    "tl.store(o_ptr + offs, (x % u).to(tl.int32))": r"Cannot use % with tl\.i32 and tl\.u32 because they have "
                                                    "different signedness",
    "tl.store(o_ptr + offs, (u // x).to(tl.int32))": r"Cannot use // with tl\.u32 and tl\.i32 because",
    "tl.store(o_ptr + offs, (x / u).to(tl.int32))": r"Cannot use / with tl\.i32 and tl\.u32 because",
    "tl.store(o_ptr + offs + tl.program_id(3), x)": r"program_id axis must be 0, 1, or 2 but got 3",
    "tl.store(o_ptr + offs, tl.sum(tl.expand_dims(x, -3), 0))": r"invalid axis -3",
    "tl.store(o_ptr + offs, tl.sum(tl.sum(tl.expand_dims(x, (0, -3)), 0), 0))":
        r"duplicate axes, normalized axes = \[0, 0\]",
    "tl.store(o_ptr + offs, x[2:])": r"unsupported tensor index: slice\(2, None, None\)",
}


@pytest.mark.parametrize("body", sorted(REJECTED))
def test_rejected_operands_say_what_triton_says(backend: str, body: str) -> None:
    kernel = _kernel_from(f"rejected_{sorted(REJECTED).index(body)}", body)
    with tl.backend(backend), pytest.raises(KernelError, match=REJECTED[body]) as err:
        kernel[(1,)](tl.to_device(np.ones(8, np.int32), tl.i32), tl.to_device(np.ones(8, np.uint32), tl.u32),
                     tl.to_device(np.ones(8, np.float32), tl.f32), tl.empty(8, tl.i32), B=8)
    assert re.search(REJECTED[body], str(err.value.__cause__))


def test_division_with_one_signedness_and_python_ints_computes(backend: str) -> None:
    """The signedness rule is between blocks: a Python int adapts (``u % 7``, ``x // -3``)."""
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    u = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    kernel = _kernel_from("one_signedness", "tl.store(o_ptr + offs, (u % 7).to(tl.int32) + x // -3 + x % (x | 1))")
    with tl.backend(backend):
        out = tl.to_device(np.full(64, -99, np.int32), tl.i32)
        kernel[(1,)](tl.to_device(x, tl.i32), tl.to_device(u, tl.u32), tl.to_device(np.ones(64, np.float32), tl.f32),
                     out, B=64)
    wide = x.astype(np.int64)
    want = (u.astype(np.int64) % 7) + np.trunc(wide / -3).astype(np.int64) + np.fmod(wide, wide | 1)
    np.testing.assert_array_equal(out.numpy(), want)


@tl.kernel
def wrapping_arithmetic(x_ptr: Pointer[i32], y_ptr: Pointer[i32], o_ptr: Pointer[i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, x * y + x - y + -x + tl.abs(y) + x // -1)


def test_signed_overflow_is_an_error_unless_it_should_wrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference reports signed overflow by default; ``TILE_LANG_OVERFLOW=wrap`` wraps it
    around in two's complement, as the GPU does (the emulator's result, and NumPy's in int64)."""
    rng = np.random.default_rng(11)
    x, y = (rng.integers(-2**31, 2**31, 64, dtype=np.int64).astype(np.int32) for _ in range(2))
    x[:2] = y[2:4] = -2**31  # -x, abs(y) and x // -1 of INT_MIN wrap too
    wide, wide_y = x.astype(np.int64), y.astype(np.int64)
    want = (wide * wide_y + wide - wide_y - wide + np.abs(wide_y) - wide).astype(np.int32)  # wrapped to 32 bits

    def run(backend: str) -> np.ndarray[Any, Any]:
        with tl.backend(backend):
            out = tl.to_device(np.full(64, 7, np.int32), tl.i32)
            wrapping_arithmetic[(1,)](tl.to_device(x, tl.i32), tl.to_device(y, tl.i32), out, B=64)
            return out.numpy()

    with pytest.raises(KernelError, match="signed integer overflow: .* does not fit in i32.*TILE_LANG_OVERFLOW=wrap"):
        run("numpy")
    monkeypatch.setenv("TILE_LANG_OVERFLOW", "wrap")
    np.testing.assert_array_equal(run("numpy"), want)
    if _EMU.unavailable_reason() is None:
        registry.register(_EMU)
        np.testing.assert_array_equal(run(NAME), want)


@tl.kernel
def more_tensor_methods(x_ptr: Pointer[f32], o_ptr: Pointer[f32], h_ptr: Pointer[f32], t_ptr: Pointer[f32],
                        M: constexpr, N: constexpr, K: constexpr) -> None:
    rows, cols, halves, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, N // 2), tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    flat = x.reshape(M * N).reshape((N, M)).trans().view(M, N)  # x's elements read as N x M, transposed
    sums = x.sum(1).expand_dims(1).broadcast_to(M, N)
    tops = x.max(axis=0).expand_dims(0).broadcast_to((M, N))
    tl.store(o_ptr + rows[:, None] * N + cols[None, :], flat + sums - tops + x.ravel().reshape(M, N).min())
    even, odd = x.reshape(M, N // 2, 2).split()
    tl.store(h_ptr + rows[:, None] * (N // 2) + halves[None, :], even - odd)
    largest, smallest = x.topk(K), tl.topk(x, K, dim=1, descending=False)
    tl.store(t_ptr + rows[:, None] * (2 * K) + ks[None, :], largest)
    tl.store(t_ptr + rows[:, None] * (2 * K) + K + ks[None, :], smallest)


def test_triton_tensor_methods_and_topk(backend: str) -> None:
    """``x.reshape/view/trans/broadcast_to/expand_dims/sum/max/min/ravel/split/topk`` as Triton's
    ``tl.tensor`` has them, and ``tl.topk``: the k largest (smallest) of each row, in order."""
    M, N, K = 4, 16, 4
    x = np.random.default_rng(5).standard_normal((M, N)).astype(np.float32)
    wide = x.astype(np.float64)
    with tl.backend(backend):
        out, half, top = (tl.to_device(np.full(n, np.nan, np.float32), tl.f32) for n in (M * N, M * N // 2, M * 2 * K))
        more_tensor_methods[(1,)](tl.to_device(x.ravel(), tl.f32), out, half, top, M=M, N=N, K=K)
        want = wide.ravel().reshape(N, M).T + wide.sum(1)[:, None] - wide.max(0)[None, :] + wide.min()
        np.testing.assert_allclose(out.numpy().reshape(M, N), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(half.numpy().reshape(M, N // 2), x[:, 0::2] - x[:, 1::2])
        ordered = np.sort(wide, axis=1)
        np.testing.assert_array_equal(top.numpy().reshape(M, 2 * K), np.hstack([ordered[:, ::-1][:, :K], ordered[:, :K]]))


@tl.kernel
def varargs_permutes(x_ptr: Pointer[f32], out_ptr: Pointer[f32], A: constexpr, B: constexpr, C: constexpr) -> None:
    i, j, k = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    x = tl.load(x_ptr + i[:, None, None] * (B * C) + j[None, :, None] * C + k[None, None, :])
    cab = tl.permute(x, 2, 0, 1)  # Triton's *dims: ints, or one tuple
    bca = tl.trans(x, 1, 2, 0)
    ba = tl.trans(tl.sum(x, 2), 1, 0)
    tl.store(out_ptr + k[:, None, None] * (A * B) + i[None, :, None] * B + j[None, None, :], cab)
    tl.store(out_ptr + A * B * C + j[:, None, None] * (C * A) + k[None, :, None] * A + i[None, None, :],
             bca + tl.permute(x, (1, 2, 0)))
    tl.store(out_ptr + 2 * A * B * C + j[:, None] * A + i[None, :], ba)


def test_permute_and_trans_take_dims_as_ints_or_one_tuple(backend: str) -> None:
    """``tl.permute(x, 2, 0, 1)`` and ``tl.trans(x, 1, 2, 0)``, Triton's varargs spellings (they
    were "too many positional arguments"), as well as one tuple of dims."""
    a, b, c = 2, 4, 8
    x = np.random.default_rng(6).standard_normal((a, b, c)).astype(np.float32)
    wide = x.astype(np.float64)
    with tl.backend(backend):
        out = tl.to_device(np.full(2 * a * b * c + a * b, np.nan, np.float32), tl.f32)
        varargs_permutes[(1,)](tl.to_device(x, tl.f32), out, A=a, B=b, C=c)
        got = out.numpy()
    want = np.concatenate([wide.transpose(2, 0, 1).ravel(), 2 * wide.transpose(1, 2, 0).ravel(), wide.sum(2).T.ravel()])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_topk_takes_a_power_of_two_along_the_last_axis(backend: str) -> None:
    kernel = _kernel_from("topk_of_three", "tl.store(o_ptr + offs, tl.topk(x, 3).broadcast_to(B))")
    with tl.backend(backend), pytest.raises(KernelError, match=r"in kernel topk_of_three: static_assert failed: "
                                                             r"tl\.topk: k must be a power of two"):
        kernel[(1,)](tl.to_device(np.ones(8, np.int32), tl.i32), tl.to_device(np.ones(8, np.uint32), tl.u32),
                     tl.to_device(np.ones(8, np.float32), tl.f32), tl.empty(8, tl.i32), B=8)


@tl.kernel
def uniform_floats(u_ptr: Pointer[tl.u32], w_ptr: Pointer[tl.i64], o_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.random.uint_to_uniform_float(tl.load(u_ptr + offs)))
    tl.store(o_ptr + B + offs, tl.random.uint_to_uniform_float(tl.load(w_ptr + offs)))


def test_uint_to_uniform_float_is_tritons(backend: str) -> None:
    """Random bits read as signed, negatives folded onto ``-v - 1``, times 2**-31 (2**-63) shrunk
    so that the extremes land just below 1.0 (Triton's test_uint_to_uniform_float)."""
    rng = np.random.default_rng(9)
    u = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    w = rng.integers(-2**63, 2**63 - 1, 64, dtype=np.int64)
    u[:2], w[:2] = [0x7FFFFFFF, 0x80000000], [2**63 - 1, -2**63]
    with tl.backend(backend):
        out = tl.to_device(np.full(128, np.nan, np.float32), tl.f32)
        uniform_floats[(1,)](tl.to_device(u, tl.u32), tl.to_device(w, tl.i64), out, B=64)
        got = out.numpy()

    def folded(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        return np.where(v < 0, -(v.astype(np.float64)) - 1, v.astype(np.float64))

    want = np.concatenate([folded(u.view(np.int32)) * 4.6566127342e-10, folded(w) * 1.0842020432385337e-19])
    np.testing.assert_allclose(got, want, rtol=2e-7)
    assert got[0] == got[1] and got[64] == got[65] and 1 - np.finfo(np.float32).eps <= got[0] < 1
    assert ((got >= 0) & (got < 1)).all()


@tl.kernel
def persistent_descriptor_matmul(a_ptr: Pointer[tl.f16], b_ptr: Pointer[tl.f16], c_ptr: Pointer[tl.f16], M: int,
                                 N: int, K: int, BM: constexpr, BN: constexpr, BK: constexpr, PROGRAMS: constexpr,
                                 SPLIT: constexpr) -> None:
    """Tutorial 09's persistent form: tiles walked by ``tl.range(..., flatten=True,
    warp_specialize=True)``, operands through in-kernel descriptors (``b`` given transposed), the
    epilogue optionally split into two halves stored apart."""
    tiles_n = tl.cdiv(N, BN)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BM, BN // 2 if SPLIT else BN])
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS, flatten=True, warp_specialize=True):
        offs_m = (tile // tiles_n) * BM
        offs_n = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in tl.range(tl.cdiv(K, BK), warp_specialize=True):
            acc = tl.dot(a_desc.load([offs_m, k * BK]), b_desc.load([offs_n, k * BK]).T, acc)
        if SPLIT:
            left, right = tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))
            c_desc.store([offs_m, offs_n], left.to(tl.float16))
            c_desc.store([offs_m, offs_n + BN // 2], right.to(tl.float16))
        else:
            c_desc.store([offs_m, offs_n], acc.to(tl.float16))


@pytest.mark.parametrize("split", [False, True])
def test_persistent_descriptor_matmul_as_tutorial_09(backend: str, split: bool) -> None:
    """Ragged M/N/K (descriptors clip and zero-fill), fewer programs than tiles."""
    M, N, K = 40, 48, 40
    rng = np.random.default_rng(9)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    with tl.backend(backend):
        c = tl.to_device(np.full((M, N), np.nan, np.float16), tl.f16)
        persistent_descriptor_matmul[(3,)](tl.to_device(a, tl.f16), tl.to_device(b, tl.f16), c, M, N, K,
                                           BM=16, BN=32, BK=16, PROGRAMS=3, SPLIT=split)
        want = a.astype(np.float64) @ b.astype(np.float64).T
        np.testing.assert_allclose(c.numpy().astype(np.float64), want, rtol=1e-2, atol=2e-2)


@tl.kernel
def copy_tiles_of_some_programs(x_ptr: Pointer[f32], o_ptr: Pointer[f32], live: int, BM: constexpr,
                                BN: constexpr) -> None:
    """Tutorial 08's TMA form: descriptors made under an ``if`` some programs do not take; those
    programs' base (pid // live = 1 element in) would miss the 16-byte alignment a descriptor needs."""
    pid = tl.program_id(0)
    if pid < live:
        src = tl.make_tensor_descriptor(x_ptr + pid // live, shape=[BM, 2 * BN], strides=[2 * BN, 1],
                                        block_shape=[BM, BN])
        dst = tl.make_tensor_descriptor(o_ptr + pid * BM * BN, shape=[BM, BN], strides=[BN, 1], block_shape=[BM, BN])
        dst.store([0, 0], src.load([0, pid * BN]))


def test_a_descriptor_under_an_if_checks_only_the_programs_that_take_it(backend: str) -> None:
    """The programs past ``live`` make no descriptor (on the reference they run the branch masked
    off), so the descriptor rules do not apply to them."""
    BM, BN, live = 8, 16, 2
    x = np.random.default_rng(11).standard_normal((BM, 2 * BN)).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(4 * BM * BN, np.nan, np.float32), tl.f32)
        copy_tiles_of_some_programs[(4,)](tl.to_device(x.ravel(), tl.f32), out, live, BM=BM, BN=BN)
        got = out.numpy().reshape(4, BM, BN)
        for pid in range(live):
            np.testing.assert_array_equal(got[pid], x[:, pid * BN:(pid + 1) * BN])
        assert np.isnan(got[live:]).all()


@tl.kernel
def narrow_descriptor(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], BN: constexpr) -> None:
    desc = tl.make_tensor_descriptor(x_ptr, shape=[8, 8], strides=[8, 1], block_shape=[8, BN])
    tl.store(out_ptr + tl.arange(0, BN), tl.sum(desc.load([0, 0]), 0))


def test_a_descriptor_narrower_than_16_bytes_says_what_triton_says(backend: str) -> None:
    """Triton's words ("Descriptor block shape must have at least 16 bytes", which its tests
    assert), then the widths, on both backends; 4 floats (16 bytes) are fine."""
    x = np.random.default_rng(5).standard_normal((8, 8)).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(4, np.nan, np.float32), tl.f32)
        narrow_descriptor[(1,)](tl.to_device(x.ravel(), tl.f32), out, BN=4)
        np.testing.assert_allclose(out.numpy(), x[:, :4].astype(np.float64).sum(0), rtol=1e-5)
        with pytest.raises(KernelError, match=r"Descriptor block shape must have at least 16 bytes in the last "
                                              r"dimension .*, got 2 x 4 bytes"):
            narrow_descriptor[(1,)](tl.to_device(x.ravel(), tl.f32), out, BN=2)




MIXED_FMA = """
import tile_lang as tl


@tl.kernel
def mixed_fma(x_ptr, w_ptr, o_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    w = tl.load(w_ptr + offs)
    r = tl.fma(x, w, 0.25)
    tl.store(o_ptr + offs, r)
    tl.store(o_ptr + B + offs, tl.fma(x, 3.0, w))
"""


def test_fma_of_mixed_widths_computes_in_the_wider(backend: str) -> None:
    """``tl.fma(f16, f32, z)`` is an f32 fma, as Triton legalises each pair (unannotated code: the
    stubs refuse mixing widths). The compiler converted y and z down to x's f16: a silent
    difference from the reference, found by the address fuzzer."""
    kernel = load("mixed_fma", MIXED_FMA.lstrip())
    rng = np.random.default_rng(21)
    x = rng.uniform(-4, 4, 64).astype(np.float16)
    w = (rng.uniform(-4, 4, 64) + 1e-3).astype(np.float32)
    wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
    want = np.concatenate([wide_x * wide_w + 0.25, wide_x * 3.0 + wide_w]).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(128, np.nan, np.float32), tl.f32)
        kernel[(1,)](tl.to_device(x, tl.f16), tl.to_device(w, tl.f32), out, B=64)
        np.testing.assert_array_equal(out.numpy(), want)  # one rounding to f32 of the exact value


@tl.kernel
def standard_functions(x_ptr: Pointer[f32], y_ptr: Pointer[f32], i_ptr: Pointer[i32], o_ptr: Pointer[f32],
                       r_ptr: Pointer[i32], B: constexpr) -> None:
    """Triton's function spellings: tl.add/sub/mul, tl.reduce_or, tl.PropagateNan."""
    rows = tl.arange(0, B)
    x = tl.load(x_ptr + rows)
    y = tl.load(y_ptr + rows)
    tl.store(o_ptr + rows, tl.add(x, y))
    tl.store(o_ptr + B + rows, tl.sub(x, 2.0))
    tl.store(o_ptr + 2 * B + rows, tl.mul(x, y, sanitize_overflow=False))
    tl.store(o_ptr + 3 * B + rows, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 4 * B + rows, tl.minimum(x, y, propagate_nan=tl.PropagateNan.NONE))
    bits = tl.load(i_ptr + rows[:, None] * B + rows[None, :])
    tl.store(r_ptr + rows, tl.reduce_or(bits, 1))
    tl.store(r_ptr + B + rows, tl.reduce_or(bits, 0, keep_dims=True).reshape(B))
    tl.store(r_ptr + 2 * B, tl.reduce_or(bits, None))


def test_standard_function_spellings(backend: str) -> None:
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    x[3], y[5] = np.nan, np.nan
    bits = (1 << rng.integers(0, 31, (16, 16))).astype(np.int32) * rng.integers(0, 2, (16, 16)).astype(np.int32)
    with tl.backend(backend):
        out = tl.to_device(np.full(80, np.nan, np.float32), tl.f32)
        red = tl.to_device(np.full(33, -7, np.int32), tl.i32)
        standard_functions[(1,)](tl.to_device(x, tl.f32), tl.to_device(y, tl.f32), tl.to_device(bits, tl.i32), out,
                                 red, B=16)
        got, ors = out.numpy().reshape(5, 16), red.numpy()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(got[:3], [x64 + y64, x64 - 2, x64 * y64], rtol=1e-6)
    np.testing.assert_array_equal(got[3], np.maximum(x, y))  # NaN from either side
    np.testing.assert_array_equal(got[4], np.fmin(x, y))  # the other operand
    np.testing.assert_array_equal(ors[:16], np.bitwise_or.reduce(bits, axis=1))
    np.testing.assert_array_equal(ors[16:32], np.bitwise_or.reduce(bits, axis=0))
    assert ors[32] == np.bitwise_or.reduce(bits, axis=None)


@tl.kernel
def four_streams(u_ptr: Pointer[f32], n_ptr: Pointer[f32], w_ptr: Pointer[tl.u32], r_ptr: Pointer[f32], seed: int,
                 B: constexpr) -> None:
    """tl.rand4x, tl.randn4x and tl.pair_uniform_to_normal beside tl.randint4x and tl.randn."""
    offs = tl.arange(0, B)
    u1, u2, u3, u4 = tl.rand4x(seed, offs)
    n1, n2, n3, n4 = tl.randn4x(seed, offs)
    w1, w2, w3, w4 = tl.randint4x(seed, offs)
    tl.store(u_ptr + offs, u1)
    tl.store(u_ptr + B + offs, u2)
    tl.store(u_ptr + 2 * B + offs, u3)
    tl.store(u_ptr + 3 * B + offs, u4)
    tl.store(n_ptr + offs, n1)
    tl.store(n_ptr + B + offs, n2)
    tl.store(n_ptr + 2 * B + offs, n3)
    tl.store(n_ptr + 3 * B + offs, n4)
    tl.store(w_ptr + offs, w1)
    tl.store(w_ptr + B + offs, w2)
    tl.store(w_ptr + 2 * B + offs, w3)
    tl.store(w_ptr + 3 * B + offs, w4)
    tl.store(r_ptr + offs, tl.randn(seed, offs))


def test_four_random_streams_are_tritons(backend: str) -> None:
    """Each uniform is its Philox word through ``uint_to_uniform_float``; each normal pair is
    Box-Muller of a uniform pair (float64 here), the first of them ``tl.randn``'s."""
    with tl.backend(backend):
        u = tl.to_device(np.full(256, np.nan, np.float32), tl.f32)
        n = tl.to_device(np.full(256, np.nan, np.float32), tl.f32)
        w = tl.to_device(np.zeros(256, np.uint32), tl.u32)
        r = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
        four_streams[(1,)](u, n, w, r, 1234, B=64)
        us, ns, ws, rs = u.numpy().reshape(4, 64), n.numpy().reshape(4, 64), w.numpy().reshape(4, 64), r.numpy()
    signed = ws.view(np.int32).astype(np.float64)
    np.testing.assert_allclose(us, np.where(signed < 0, -signed - 1, signed) * 4.6566127342e-10, rtol=2e-7)
    u64 = us.astype(np.float64)
    for pair in (0, 2):
        radius = np.sqrt(-2.0 * np.log(np.maximum(1e-7, u64[pair])))
        angle = 6.283185307179586 * u64[pair + 1]
        np.testing.assert_allclose(ns[pair], radius * np.cos(angle), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ns[pair + 1], radius * np.sin(angle), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ns[0], rs, rtol=1e-5, atol=1e-6)
    assert len(set(ws.ravel().tolist())) > 250  # four distinct streams


@tl.kernel
def copy_through_descriptors(x_ptr: Pointer[f32], o_ptr: Pointer[f32], M: int, N: int, BM: constexpr,
                             BN: constexpr) -> None:
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(o_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    tl.store_tensor_descriptor(dst, [m, n], tl.load_tensor_descriptor(src, [m, n]) * 2.0)


def test_tensor_descriptor_functions(backend: str) -> None:
    """``tl.load_tensor_descriptor`` / ``tl.store_tensor_descriptor``: ``desc.load`` and
    ``desc.store`` under Triton's function names (ragged edges clipped)."""
    x = np.random.default_rng(12).standard_normal((24, 40)).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full((24, 40), np.nan, np.float32), tl.f32)
        copy_through_descriptors[(2, 3)](tl.to_device(x, tl.f32), out, 24, 40, BM=16, BN=16)
        np.testing.assert_array_equal(out.numpy(), x * 2)


@tl.kernel
def philox_streams(w_ptr: Pointer[tl.u32], seed: int, B: constexpr) -> None:
    offs = tl.arange(0, B)
    zero = offs * 0
    p1, p2, p3, p4 = tl.philox(seed, offs, zero, zero, zero)
    r1, r2, r3, r4 = tl.randint4x(seed, offs)
    q1, q2, q3, q4 = tl.philox(seed, offs, offs + 1, zero + 7, offs * 3, n_rounds=7)
    tl.store(w_ptr + offs, p1)
    tl.store(w_ptr + B + offs, p4)
    tl.store(w_ptr + 2 * B + offs, r1)
    tl.store(w_ptr + 3 * B + offs, r4)
    tl.store(w_ptr + 4 * B + offs, q1 ^ q2 ^ q3 ^ q4)


def _philox_4x32(seed: int, counters: list[int], rounds: int) -> list[int]:
    """Philox 4x32 in Python ints: the specification the kernels are checked against."""
    c0, c1, c2, c3 = counters
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for _ in range(rounds):
        p0, p2 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p2 >> 32) ^ c1 ^ k0, p2 & 0xFFFFFFFF, (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return [c0, c1, c2, c3]


def test_philox_is_randint4x_and_the_specification(backend: str) -> None:
    """``tl.philox(seed, offs, 0, 0, 0)`` is ``tl.randint4x(seed, offs)``; with other counters
    and rounds it is Philox 4x32 as written out in Python here."""
    seed = 0x1234_5678_9ABC
    with tl.backend(backend):
        w = tl.to_device(np.zeros(5 * 32, np.uint32), tl.u32)
        philox_streams[(1,)](w, seed, B=32)
        got = w.numpy().reshape(5, 32)
    np.testing.assert_array_equal(got[0], got[2])
    np.testing.assert_array_equal(got[1], got[3])
    want = [_philox_4x32(seed, [i, 0, 0, 0], 10) for i in range(32)]
    np.testing.assert_array_equal(got[0], [v[0] for v in want])
    np.testing.assert_array_equal(got[1], [v[3] for v in want])
    mixed = [_philox_4x32(seed, [i, i + 1, 7, 3 * i], 7) for i in range(32)]
    np.testing.assert_array_equal(got[4], [v[0] ^ v[1] ^ v[2] ^ v[3] for v in mixed])


@tl.kernel
def indexed_as_triton_reads_it(x_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    """``x[None]`` keeps the axes not indexed, ``s[None, None, :]`` of a scalar is (1, 1) (a ``:``
    past the last axis keeps nothing), ``x[:, None, None]`` inserts after the first axis."""
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    grid = x[:, None] * 10.0 + x[None]  # (B, B): x[None] is (1, B)
    tl.store(o_ptr + offs[:, None] * B + offs[None, :], grid)
    s = tl.sum(x, axis=0)
    tl.store(o_ptr + B * B + tl.zeros((1, 1), tl.int32), s[None, None, :])
    deep = x[:, None, None] + tl.zeros((B, 1, 2), tl.float32)
    tl.store(o_ptr + B * B + 1 + offs[:, None, None] * 2 + tl.arange(0, 2)[None, None, :], deep)


def test_subscripts_insert_axes_as_triton_does(backend: str) -> None:
    x = np.random.default_rng(13).standard_normal(8).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(64 + 1 + 16, np.nan, np.float32), tl.f32)
        indexed_as_triton_reads_it[(1,)](tl.to_device(x, tl.f32), out, B=8)
        got = out.numpy()
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[:64].reshape(8, 8), x64[:, None] * 10 + x64[None, :], rtol=1e-6)
    np.testing.assert_allclose(got[64], x64.sum(), rtol=1e-5)
    np.testing.assert_array_equal(got[65:], np.repeat(x, 2))


def test_a_none_past_the_axes_before_it_is_an_error_on_both_backends(backend: str) -> None:
    kernel = load("none_too_far", textwrap.dedent("""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def none_too_far(o_ptr: Pointer[tl.f32], B: constexpr) -> None:
            offs = tl.arange(0, B)
            tl.store(o_ptr + offs[:, :, None], offs.to(tl.float32)[:, :, None])
    """).lstrip())
    with tl.backend(backend), pytest.raises(KernelError, match=r"None at position 2 is past the 1 axes"):
        kernel[(1,)](tl.empty(8, tl.f32), B=8)


@tl.kernel
def double_through_block_pointers(x_ptr: Pointer[tl.f16], y_ptr: Pointer[tl.f16], n: int, BLOCK: constexpr) -> None:
    xb = tl.make_block_ptr(x_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    yb = tl.make_block_ptr(y_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    v = tl.load(xb, boundary_check=(0,)).to(tl.float32)
    tl.store(yb, (v * 2.0).to(yb.type.element_ty), boundary_check=(0,))
    tl.static_assert(xb.dtype.element_ty == tl.float16)


def test_a_block_pointer_names_its_element_type(backend: str) -> None:
    """``p.type.element_ty`` / ``p.dtype.element_ty`` of a block pointer is its element dtype
    (FlagGems' pointwise kernels convert their results with it)."""
    x = np.random.default_rng(14).standard_normal(100).astype(np.float16)
    with tl.backend(backend):
        y = tl.to_device(np.full(100, np.nan, np.float16), tl.f16)
        double_through_block_pointers[(4,)](tl.to_device(x, tl.f16), y, 100, BLOCK=32)
        np.testing.assert_array_equal(y.numpy(), x * 2)
