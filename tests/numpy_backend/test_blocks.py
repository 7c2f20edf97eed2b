"""Block pointers and tensor descriptors on ragged random matrices, against NumPy slicing.

Padding is observed by storing whole blocks into a padded output through plain pointers.
"""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang.ops.memory import DescriptorPadding
from tile_lang import Constexpr, Pointer, constexpr, f32, i32

BM, BN = 16, 32


@tl.kernel
def block_copy_kernel(x: Pointer[f32], padded: Pointer[f32], M: int, N: int, stride_m: int, stride_n: int,
                      PAD: Constexpr[str], BM: constexpr, BN: constexpr) -> None:
    """Load an (M, N) strided view block by block (both dims checked) and store each whole
    block, padding included, into padded (row-major, grid-sized)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    src = tl.make_block_ptr(x, (M, N), (stride_m, stride_n), (pm * BM, pn * BN), (BM, BN), (1, 0))
    v = tl.load(src, boundary_check=(0, 1), padding_option=PAD)  # type: ignore[call-overload]
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    tl.store(padded + rows[:, None] * (tl.num_programs(1) * BN) + cols[None, :], v)


@tl.kernel
def chunk_sum_kernel(x: Pointer[f32], out: Pointer[f32], M: int, K: int, BM: constexpr, BK: constexpr) -> None:
    """out[m, j] = sum over chunks c of x[m, c * BK + j]: advance along K, zero padding at the ragged end."""
    pm = tl.program_id(0)
    src = tl.make_block_ptr(x, (M, K), (K, 1), (pm * BM, 0), (BM, BK), (1, 0))
    dst = tl.make_block_ptr(out, (M, BK), (BK, 1), (pm * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM, BK), dtype=tl.f32)
    for _ in range(0, K, BK):
        acc += tl.load(src, boundary_check=(0, 1), padding_option="zero")
        src = tl.advance(src, (0, BK))
    tl.store(dst, acc, boundary_check=(0,))


def grid(m: int, n: int) -> tuple[int, int]:
    return (tl.cdiv(m, BM), tl.cdiv(n, BN))


@pytest.mark.parametrize("pad,fill", [("zero", 0.0), ("nan", np.nan), ("", np.nan)])
@pytest.mark.parametrize("transposed", [False, True])
def test_block_pointer_load_pads_checked_dims(tile_backend: str, pad: str, fill: float, transposed: bool) -> None:
    rng = np.random.default_rng(1)
    m, n = 37, 45
    host = rng.standard_normal((n, m) if transposed else (m, n)).astype(np.float32)
    view = host.T if transposed else host
    strides = (1, m) if transposed else (n, 1)
    gm, gn = grid(m, n)
    padded = tl.to_device(np.full((gm * BM, gn * BN), 7.0, np.float32), tl.f32)
    block_copy_kernel[(gm, gn)](tl.to_device(host, tl.f32), padded, m, n, *strides, PAD=pad, BM=BM, BN=BN)
    got = padded.numpy()
    np.testing.assert_array_equal(got[:m, :n], view)
    if pad or tile_backend == "numpy":  # "" pads with poison (NaN) here, undefined values on a GPU
        outside = np.ones(got.shape, dtype=bool)
        outside[:m, :n] = False
        np.testing.assert_array_equal(got[outside], np.full(int(outside.sum()), fill, np.float32))


@pytest.mark.parametrize("m,k,bk", [(37, 100, 16), (64, 64, 32), (5, 7, 8)])
def test_advance_accumulates_chunks(tile_backend: str, m: int, k: int, bk: int) -> None:
    rng = np.random.default_rng(m + k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    out = tl.to_device(np.full((m, bk), np.nan, np.float32), tl.f32)
    chunk_sum_kernel[(tl.cdiv(m, BM),)](tl.to_device(x, tl.f32), out, m, k, BM=BM, BK=bk)
    chunks = tl.cdiv(k, bk)
    wide = np.zeros((m, chunks * bk))
    wide[:, :k] = x
    want = wide.reshape(m, chunks, bk).sum(axis=1)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@tl.kernel
def unchecked_kernel(x: Pointer[f32], M: int, N: int, BM: constexpr, BN: constexpr) -> None:
    src = tl.make_block_ptr(x, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    v = tl.load(src, boundary_check=(1,))  # row dim unchecked: runs off the end in the last program
    tl.store(src, v, boundary_check=(1,))


@tl.kernel
def misuse_kernel(x: Pointer[f32], ix: Pointer[i32], WHAT: Constexpr[str]) -> None:
    src = tl.make_block_ptr(x, (8, 8), (8, 1), (0, 0), (8, 8), (1, 0))
    isrc = tl.make_block_ptr(ix, (8, 8), (8, 1), (0, 0), (8, 8), (1, 0))
    if WHAT == "mask":
        tl.load(src, mask=tl.zeros((8, 8), tl.bool_))  # type: ignore[call-overload]
    elif WHAT == "dtype":
        tl.store(src, tl.zeros((8, 8), tl.f16))  # type: ignore[misc]
    elif WHAT == "nan":
        tl.load(isrc, boundary_check=(0,), padding_option="nan")
    elif WHAT == "dims":
        tl.load(src, boundary_check=(2,))  # type: ignore[arg-type]
    else:
        tl.make_block_ptr(x, (8, 8), (8, 1), (0, 0), (8, 8), (0, 0))


def test_block_pointer_errors() -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.zeros((40, 8), np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match=r"program \(2,\) reaches index 40 of dim 0.*not in boundary_check") as info:
            unchecked_kernel[(3,)](x, 40, 8, BM=16, BN=8)
        assert "row dim unchecked" in str(info.value)
        ix = tl.to_device(np.zeros(64, np.int32), tl.i32)
        for what, message in [("mask", "takes no mask or other"), ("dtype", r"needs tl\.f32 values"),
                              ("nan", "'nan' needs floating-point"), ("dims", r"boundary_check must list dims in \[0, 2\)"),
                              ("order", "order must be a permutation")]:
            with pytest.raises(tl.KernelError, match=message):
                misuse_kernel[(1,)](x, ix, WHAT=what)


@tl.kernel
def descriptor_kernel(x: Pointer[f32], out: Pointer[f32], padded: Pointer[f32], M: int, N: int, BM: constexpr,
                      BN: constexpr, PADDING: tl.Constexpr[DescriptorPadding] = "zero") -> None:
    """out = 2 x + 1 through descriptors; the raw loaded blocks (padded outside) go to padded."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    dx = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN), padding_option=PADDING)
    do = tl.make_tensor_descriptor(out, (M, N), (N, 1), (BM, BN))
    v = dx.load([pm * BM, pn * BN])
    do.store([pm * BM, pn * BN], v * 2.0 + 1.0)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    tl.store(padded + rows[:, None] * (tl.num_programs(1) * BN) + cols[None, :], v)


@pytest.mark.parametrize("m,n", [(37, 44), (16, 32), (3, 4)])
@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_descriptor_round_trip(tile_backend: str, m: int, n: int, padding: DescriptorPadding) -> None:
    rng = np.random.default_rng(m * n)
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = tl.to_device(np.full((m, n), np.nan, np.float32), tl.f32)
    gm, gn = grid(m, n)
    padded = tl.to_device(np.full((gm * BM, gn * BN), -7.0, np.float32), tl.f32)  # poison: neither fill
    descriptor_kernel[(gm, gn)](tl.to_device(x, tl.f32), out, padded, m, n, BM=BM, BN=BN, PADDING=padding)
    np.testing.assert_array_equal(out.numpy(), x * np.float32(2.0) + np.float32(1.0))
    want = np.full((gm * BM, gn * BN), 0.0 if padding == "zero" else np.nan, np.float32)
    want[:m, :n] = x
    np.testing.assert_array_equal(padded.numpy(), want)


@tl.kernel
def bad_descriptor_kernel(x: Pointer[f32], N: int, WHAT: Constexpr[str]) -> None:
    if WHAT == "stride":
        tl.make_tensor_descriptor(x, (4, N), (N, 1), (4, 8))
    elif WHAT == "base":
        tl.make_tensor_descriptor(x + 1, (4, 8), (8, 1), (4, 8))
    elif WHAT == "last":
        tl.make_tensor_descriptor(x, (8, 4), (1, 8), (8, 4))
    elif WHAT == "narrow":
        tl.make_tensor_descriptor(x, (8, 4), (4, 1), (8, 2))
    else:
        d = tl.make_tensor_descriptor(x, (4, 8), (8, 1), (4, 8))
        d.load([0, tl.program_id(0).to(tl.i64)])  # type: ignore[list-item]


@pytest.mark.parametrize("what,message", [
    ("stride", "stride 0 of a tensor descriptor is 6 elements = 24 bytes, not a multiple of 16"),
    ("base", "must be 16-byte aligned.*element offset 1"),
    ("last", "last stride of a tensor descriptor must be 1"),
    ("narrow", "at least 16 bytes"),
    ("offsets", r"offsets must be 32-bit integers \(add \.to\(tl\.i32\)\)"),
])
def test_descriptor_rules(what: str, message: str) -> None:
    with tl.backend("numpy"):
        x = tl.to_device(np.zeros(64, np.float32), tl.f32)
        with pytest.raises(tl.KernelError, match=message):
            bad_descriptor_kernel[(1,)](x, 6, WHAT=what)
