"""Triton's other fp8 formats, ``tl.float8e4b15``, ``tl.float8e4b8`` and ``tl.float8e5b16``: real
dtypes on the NumPy reference (casts both ways, rounding to nearest even or toward zero and
saturating, bitcasts, loads and stores, ``tl.abs``, host buffers), checked against float64
references written here; e4b15's own codec (NumPy has no such type) on all 256 codes and random
floats; and on the CUDA backend the capability error Triton's choices on an H200 give, raised
before anything runs, the same wherever the dtype appears."""

from __future__ import annotations

import re
import textwrap
from typing import Any, TypeVar

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Float, Pointer, Width, constexpr, f32, fp8, registry
from tile_lang.errors import KernelError, UsageError

from tests.fuzz.runner import load

Array = np.ndarray[Any, Any]
W = TypeVar("W", bound=Width)
VARIANTS = {"e4b15": tl.float8e4b15, "e4b8": tl.float8e4b8, "e5b16": tl.float8e5b16}


# ---------------------------------------------------------------- float64 references


def e4b15_value(code: int) -> float:
    """One e4b15 code's value from its fields (Triton's format: bias 15, NaN at 0x7F/0xFF)."""
    sign, exponent, mantissa = -1.0 if code & 0x80 else 1.0, (code >> 3) & 0xF, code & 7
    if code & 0x7F == 0x7F:
        return float("nan")
    if exponent == 0:
        return sign * mantissa / 8 * 2.0**-14
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 15)


def finite_magnitudes(name: str) -> tuple[Array, Array]:
    """The format's non-negative finite values, increasing, and their codes."""
    codes = np.arange(128, dtype=np.uint8)
    if name == "e4b15":
        values = np.array([e4b15_value(c) for c in range(128)])
    else:
        values = codes.view(tl.dtypes.dtype_of(VARIANTS[name]).numpy).astype(np.float64)
    keep = np.isfinite(values)
    return values[keep], codes[keep]


def rounded(x: Array, name: str, to_zero: bool = False) -> Array:
    """``x`` (float64) converted to the format, as float64: the nearest finite value (ties to
    the even code) or the largest not beyond it in magnitude (``to_zero``), beyond the largest
    saturating to it, NaN kept; found by searching every value, not by arithmetic."""
    values, codes = finite_magnitudes(name)
    magnitude = np.minimum(np.abs(x), values[-1])[..., None]
    if to_zero:
        distance = np.where(values <= magnitude, magnitude - values, np.inf)
    else:
        distance = np.abs(values - magnitude)
    best = distance.min(axis=-1, keepdims=True)
    candidates = distance == best
    even = candidates & (codes % 2 == 0)
    pick = np.where(even.any(axis=-1), even.argmax(axis=-1), candidates.argmax(axis=-1))
    out: Array = np.copysign(values[pick], x)
    out[np.isnan(x)] = np.nan
    if name != "e4b15":  # the fnuz formats have no -0
        out[out == 0] = 0.0
    return out


def samples(seed: int, n: int = 4096) -> Array:
    """f32 values across the formats' ranges: normal, tiny, huge, exact ties, zeros, infinities, NaN."""
    rng = np.random.default_rng(seed)
    spread = rng.standard_normal(n) * 2.0 ** rng.integers(-20, 18, n)
    values, _ = finite_magnitudes("e4b15")
    ties = (values[1:] + values[:-1]) / 2
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.75, 1.8, 1.875, 2.0**-17, 2.0**-18, 240.0, 248.0, 57344.0]
    return np.concatenate([spread, ties, -ties, special]).astype(np.float32)


# ---------------------------------------------------------------- e4b15's codec


def test_e4b15_decodes_every_code() -> None:
    codes = np.arange(256, dtype=np.uint8)
    want = np.array([e4b15_value(c) for c in range(256)])
    got = fp8.decode_e4b15(codes)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.astype(np.float64), want)  # NaN where NaN, -0.0 as 0x80
    assert np.array_equal(np.signbit(got), codes >= 0x80) and np.isnan(got).sum() == 2
    assert float(got[0x7E]) == 1.75 == fp8.MAX_E4B15 and float(got[1]) == 2.0**-17
    finite = ~np.isnan(got)
    np.testing.assert_array_equal(fp8.encode_e4b15(got[finite]), codes[finite])  # every finite code round-trips


@pytest.mark.parametrize("to_zero", [False, True], ids=["rtne", "rtz"])
def test_e4b15_encodes_like_the_float64_reference(to_zero: bool) -> None:
    x = samples(1)
    codes = fp8.encode_e4b15(x, to_zero)
    assert codes.dtype == np.uint8
    got = fp8.decode_e4b15(codes).astype(np.float64)
    np.testing.assert_array_equal(got, rounded(x.astype(np.float64), "e4b15", to_zero))
    assert np.array_equal(np.signbit(got), np.signbit(x))  # -0.0 and negative NaN keep their sign
    np.testing.assert_array_equal(fp8.encode_e4b15(x.astype(np.float64), to_zero), codes)  # f64 alike


# ---------------------------------------------------------------- kernels on the reference


cast_through = load("cast_through", textwrap.dedent("""
    import tile_lang as tl
    from tile_lang import Pointer, constexpr


    @tl.kernel
    def cast_through(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], V: constexpr, R: constexpr,
                     B: constexpr) -> None:
        offs = tl.program_id(0) * B + tl.arange(0, B)
        v = tl.load(x_ptr + offs).to(V, fp_downcast_rounding=R)
        tl.store(out_ptr + offs, v.to(tl.float32))
    """).lstrip())  # kept from mypy: a dtype chosen by a constexpr


def poisoned(n: int) -> Any:
    return tl.to_device(np.full(n, 12345.0, np.float32))


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_casts_round_and_saturate_as_the_reference(name: str, rounding: str) -> None:
    x = samples(2)
    n = x.size - x.size % 64
    with registry.backend("numpy"):
        out = poisoned(n)
        cast_through[(n // 64,)](tl.to_device(x[:n]), out, V=VARIANTS[name], R=rounding, B=64)
        got = out.numpy().astype(np.float64)
    np.testing.assert_array_equal(got, rounded(x[:n].astype(np.float64), name, rounding == "rtz"))


e4b15_moves = load("e4b15_moves", textwrap.dedent("""
    import tile_lang as tl
    from tile_lang import Pointer, constexpr, f32


    @tl.kernel
    def e4b15_moves(x_ptr: Pointer[tl.float8e4b15], o_ptr: Pointer[tl.float8e4b15], i_ptr: Pointer[tl.i8],
                    w_ptr: Pointer[f32], B: constexpr) -> None:
        offs = tl.arange(0, B)
        m = offs < B // 2
        x = tl.load(x_ptr + offs, mask=m, other=1.0)
        y = tl.where(offs % 4 == 3, 0.5, x)
        tl.store(o_ptr + offs, y)
        tl.store(i_ptr + offs, y.to(tl.int8, bitcast=True))
        tl.store(o_ptr + B + offs, tl.full((B,), -1.25, tl.float8e4b15))
        tl.store(o_ptr + 2 * B + offs, tl.load(i_ptr + offs).to(tl.float8e4b15, bitcast=True))
        tl.store(o_ptr + 3 * B + offs, offs.to(f32) * 0.125 - 2.0)  # the store converts
        tl.store(o_ptr + 4 * B + offs, tl.abs(tl.trans(tl.reshape(tl.load(x_ptr + offs), (B // 8, 8))).reshape(B)))
        tl.store(w_ptr + offs, tl.load(x_ptr + offs) + tl.load(w_ptr + offs))  # promoted to f32
        tl.store(w_ptr + B + offs, (tl.load(x_ptr + offs).to(f32) * 3.0).to(tl.float8e4b15).to(f32))
    """).lstrip())  # kept from mypy, which types neither the converting store nor e4b15 + f32
"""Loads with a mask and ``other``, where with a number, a constant block, bitcasts both ways, an
f32 stored through an e4b15 pointer, moves and abs, mixed arithmetic (in f32), a cast after it."""


def test_e4b15_blocks_move_and_convert_against_float64() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 256, 64).astype(np.uint8)
    codes[codes & 0x7F == 0x7F] = 0x3C  # no NaN: the comparisons below are exact
    x = fp8.decode_e4b15(codes).astype(np.float64)
    addend = rng.standard_normal(64).astype(np.float32)
    offs = np.arange(64)
    with registry.backend("numpy"):
        out, bits = tl.to_device(np.full(5 * 64, 0x55, np.uint8), tl.float8e4b15), tl.empty(64, tl.i8)
        w = tl.to_device(np.concatenate([addend, np.full(64, np.nan, np.float32)]))
        e4b15_moves[(1,)](tl.to_device(codes, tl.float8e4b15), out, bits, w, B=64)
        got, wide = out.numpy().reshape(5, 64), w.numpy().astype(np.float64)
    assert got.dtype == np.uint8  # a buffer's host copy holds the codes
    y = np.where(offs % 4 == 3, 0.5, np.where(offs < 32, x, 1.0))
    np.testing.assert_array_equal(fp8.decode_e4b15(got[0]), y)
    np.testing.assert_array_equal(bits.numpy().view(np.uint8), got[0])
    np.testing.assert_array_equal(fp8.decode_e4b15(got[1]), np.full(64, -1.25))
    np.testing.assert_array_equal(got[2], got[0])
    np.testing.assert_array_equal(fp8.decode_e4b15(got[3]), rounded(offs * 0.125 - 2.0, "e4b15"))
    np.testing.assert_array_equal(got[4], codes.reshape(8, 8).T.reshape(64) & 0x7F)
    np.testing.assert_allclose(wide[:64], x + addend, rtol=1e-6)
    np.testing.assert_array_equal(wide[64:], rounded(x * 3.0, "e4b15"))


@tl.kernel
def abs_codes(x_ptr: Pointer[tl.float8e4b15], o_ptr: Pointer[tl.float8e4b15], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.abs(tl.load(x_ptr + offs)))


def test_abs_of_every_e4b15_code_clears_its_sign_bit() -> None:
    """Triton's ``tl.abs`` of e4b15 (NaN codes included): the code with its sign bit cleared."""
    codes = np.arange(256, dtype=np.uint8)
    with registry.backend("numpy"):
        out = tl.to_device(np.full(256, 0x55, np.uint8), tl.float8e4b15)
        abs_codes[(1,)](tl.to_device(codes, tl.float8e4b15), out, B=256)
        got = out.numpy()
    np.testing.assert_array_equal(got, codes & 0x7F)
    np.testing.assert_array_equal(fp8.decode_e4b15(got), np.abs(np.array([e4b15_value(c) for c in range(256)])))


ON_VALUES = {
    "arithmetic": "x * 2.0", "comparison": "x < x", "negation": "-x", "math": "tl.exp(x)",
    "reduction": "tl.sum(x, 0)", "maximum": "tl.maximum(x, x)", "sort": "tl.sort(x)",
}


@pytest.mark.parametrize("body", ON_VALUES.values(), ids=ON_VALUES.keys())
def test_computing_on_e4b15_codes_is_an_error_at_the_line(body: str) -> None:
    """e4b15 values are computed on converted (``x.to(tl.float32)``); on the codes, an error
    saying so at the user's line, on both backends (the reference here)."""
    kernel = load("on_codes", textwrap.dedent(f"""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def on_codes(x_ptr: Pointer[tl.float8e4b15], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
            x = tl.load(x_ptr + tl.arange(0, B))
            y = {body}
            tl.store(o_ptr + tl.arange(0, B), y.to(tl.float32))
        """).lstrip())
    with registry.backend("numpy"), pytest.raises(KernelError, match="on tl.f8e4b15 values") as err:
        kernel[(1,)](tl.to_device(np.zeros(8, np.uint8), tl.float8e4b15), poisoned(8), B=8)
    assert f"y = {body}" in str(err.value) and "x.to(tl.float32)" in str(err.value)


@pytest.mark.parametrize("name", ["e4b8", "e5b16"])
def test_the_fnuz_formats_compute_as_ml_dtypes(name: str) -> None:
    """e4b8 and e5b16 are ml_dtypes' fnuz types: arithmetic on them rounds as ml_dtypes does, abs
    is the value's."""
    kernel = load("fnuz_ops", textwrap.dedent("""
        import tile_lang as tl
        from tile_lang import Pointer, constexpr


        @tl.kernel
        def fnuz_ops(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], V: constexpr, B: constexpr) -> None:
            offs = tl.arange(0, B)
            v = tl.load(x_ptr + offs).to(V)
            tl.store(o_ptr + offs, (v * v + v).to(tl.float32))
            tl.store(o_ptr + B + offs, tl.abs(v).to(tl.float32))
        """).lstrip())
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32) * 4
    host = tl.dtypes.dtype_of(VARIANTS[name]).numpy
    v = rounded(x.astype(np.float64), name).astype(host)
    with registry.backend("numpy"):
        out = poisoned(128)
        kernel[(1,)](tl.to_device(x), out, V=VARIANTS[name], B=64)
        got = out.numpy()
    np.testing.assert_array_equal(got[:64], (v * v + v).astype(np.float32))
    np.testing.assert_array_equal(got[64:], np.abs(v.astype(np.float64)))


def test_host_buffers_of_the_variants() -> None:
    with registry.backend("numpy"):
        codes = tl.to_device(np.array([0x78, 0xF8, 0x7E], np.uint8), tl.float8e4b15)
        assert codes.type is tl.dtypes.F8E4B15 and fp8.decode_e4b15(codes.numpy()).tolist() == [1.0, -1.0, 1.75]
        with pytest.raises(UsageError, match=r"tl.f8e4b15 has no NumPy type: pass its codes, a uint8 array"):
            tl.to_device(np.ones(3, np.float32), tl.float8e4b15)
        fnuz = tl.to_device(np.ones(3, ml_dtypes.float8_e4m3fnuz))
        assert fnuz.type is tl.dtypes.F8E4B8 and tl.empty(4, tl.float8e5b16).numpy().dtype == ml_dtypes.float8_e5m2fnuz
        assert tl.to_device(np.ones(2, np.uint8)).type is tl.dtypes.U8  # uint8 alone stays u8
        tl.testing.assert_close(codes, np.array([1.0, -1.0, 1.75]))  # compares the values
        with pytest.raises(AssertionError):
            tl.testing.assert_close(codes, np.array([1.0, -1.0, 1.5]))


def test_triton_attributes_of_the_variants() -> None:
    for marker, name, mantissa, bias in ((tl.float8e4b15, "fp8e4b15", 3, 15), (tl.float8e4b8, "fp8e4b8", 3, 8),
                                         (tl.float8e5b16, "fp8e5b16", 2, 16)):
        assert (marker.name, marker.fp_mantissa_width, marker.exponent_bias, marker.primitive_bitwidth) == (
            name, mantissa, bias, 8)
        assert marker.is_fp8() and getattr(marker, f"is_{name}")() and not marker.is_standard_floating()
    assert tl.float8e4b15 is tl.f8e4b15 and tl.dtypes.dtype_of(tl.float8e4b8) is not tl.dtypes.F8E4M3


# ---------------------------------------------------------------- the CUDA backend refuses them


REFUSED = {
    "e4b15": "tl.f8e4b15 is not supported on the CUDA backend: Triton refuses tl.float8e4b15 from compute "
             "capability 9.0 (Hopper, an H200) on",
    "e4b8": "tl.f8e4b8 is not supported on the CUDA backend: tl.float8e4b8 is an AMD format, which Triton "
            "compiles for HIP only",
    "e5b16": "tl.f8e5b16 is not supported on the CUDA backend: tl.float8e5b16 is an AMD format, which Triton "
             "compiles for HIP only",
}


@tl.kernel
def variant_param(x_ptr: Pointer[Float[W]], out_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(f32))


@pytest.mark.parametrize("name", VARIANTS)
def test_cuda_refuses_a_variant_parameter_and_a_cast_alike(name: str) -> None:
    """Through ``cuda_source`` (the compiler, no GPU): a pointer parameter to the dtype is refused
    at the kernel's definition, a cast to it at its line, with the same words; on the reference
    both run."""
    with pytest.raises(KernelError) as param_err:
        variant_param.cuda_source(B=64, x_ptr=VARIANTS[name])
    with pytest.raises(KernelError) as cast_err:
        cast_through.cuda_source(V=VARIANTS[name], R="rtne", B=64)
    param_text, cast_text = str(param_err.value), str(cast_err.value)
    assert f"in kernel variant_param: parameter x_ptr: {REFUSED[name]}" in param_text, param_text
    assert "def variant_param(x_ptr: Pointer[Float[W]]" in param_text  # its excerpt
    assert f"in kernel cast_through: {REFUSED[name]}" in cast_text and ".to(V, fp_downcast_rounding=R)" in cast_text
    assert re.sub(r".*?: (tl\.f8)", r"\1", param_err.value.message) == cast_err.value.message


def test_a_launch_on_the_emulated_cuda_backend_is_refused_before_it_runs() -> None:
    from tests.compiler.emulator import EMULATOR, NAME

    registry.register(EMULATOR)
    if EMULATOR.unavailable_reason():
        pytest.skip(str(EMULATOR.unavailable_reason()))
    with registry.backend(NAME):
        out = poisoned(64)
        with pytest.raises(KernelError, match=re.escape(REFUSED["e4b15"])):
            cast_through[(1,)](tl.to_device(np.ones(64, np.float32)), out, V=tl.float8e4b15, R="rtne", B=64)
        assert (out.numpy() == 12345.0).all()
