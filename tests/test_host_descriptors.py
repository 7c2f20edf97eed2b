"""Host tensor descriptors as kernel arguments, Triton's ``.type``, and hints whose result is
discarded: on the NumPy reference and the generated CUDA on the CPU emulator."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tests.triton_type_kernels import (discarded_hint_of_wrong_arity, discarded_hints, retyped_in_divergent_loop,
                                      scale_tiles, typed_copy, used_false_hint)


@tl.kernel
def add_tiles(a: tl.TensorDescriptor[tl.f32, tl.R2], b: tl.TensorDescriptor[tl.f32, tl.R2],
              out: tl.TensorDescriptor[tl.f32, tl.R2], BM: tl.constexpr, BN: tl.constexpr) -> None:
    """``out = a + b`` through annotated descriptor parameters."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    out.store([pm * BM, pn * BN], a.load([pm * BM, pn * BN]) + b.load([pm * BM, pn * BN]))


def _padded(rng: np.random.Generator, rows: int, cols: int, fill: float | None = None) -> np.ndarray:
    """A ``rows x cols`` f32 view of rows padded to 64 elements (256 bytes: strides TMA takes)."""
    whole = rng.random((rows, 64), dtype=np.float32) if fill is None else np.full((rows, 64), fill, np.float32)
    return whole[:, :cols]


@pytest.mark.parametrize("rows, cols", [(37, 50), (16, 64), (5, 9)])
def test_host_descriptors_load_and_store_ragged_tiles(backend: str, rows: int, cols: int) -> None:
    rng = np.random.default_rng(rows * cols)
    a, b = _padded(rng, rows, cols), _padded(rng, rows, cols)
    want = a.astype(np.float64) + b.astype(np.float64)
    with tl.backend(backend):
        da, db = tl.to_device(np.ascontiguousarray(np.pad(a, ((0, 0), (0, 64 - cols)))), tl.f32), \
            tl.to_device(np.ascontiguousarray(np.pad(b, ((0, 0), (0, 64 - cols)))), tl.f32)
        out = tl.to_device(np.full((rows, 64), np.nan, np.float32), tl.f32)
        sa, sb, so = (tl.HostTensorDescriptor(t, [rows, cols], [64, 1], [8, 16]) for t in (da, db, out))
        add_tiles[(tl.cdiv(rows, 8), tl.cdiv(cols, 16))](sa, sb, so, BM=8, BN=16)
        got = out.numpy()
    np.testing.assert_allclose(got[:, :cols], want, rtol=1e-6)
    assert np.isnan(got[:, cols:]).all()  # past the descriptor's shape nothing is stored


def test_block_shape_set_between_launches_specialises_anew(backend: str) -> None:
    """A pre-hook's ``desc.block_shape = ...``: each launch uses its descriptors' block shape."""
    rng = np.random.default_rng(7)
    rows, cols = 40, 48
    x = rng.random((rows, 64), dtype=np.float32)
    with tl.backend(backend):
        src = tl.to_device(x, tl.f32)
        out = tl.to_device(np.full((rows, 64), np.nan, np.float32), tl.f32)
        s = tl.HostTensorDescriptor(src, [rows, cols], [64, 1], [16, 16])
        d = tl.HostTensorDescriptor(out, [rows, cols], [64, 1], [16, 16])
        for bm, bn, alpha in ((16, 16, 2.0), (8, 32, -3.0), (32, 4, 0.5)):
            s.block_shape = d.block_shape = [bm, bn]
            scale_tiles[(tl.cdiv(rows, bm), tl.cdiv(cols, bn))](s, d, alpha, BM=bm, BN=bn)
            got = out.numpy()
            np.testing.assert_allclose(got[:, :cols], x[:, :cols].astype(np.float64) * alpha, rtol=1e-6)


def _bad_launch(backend: str, bad: dict[str, list[int]], padding: str = "zero") -> str:
    with tl.backend(backend):
        x = tl.to_device(np.zeros((8, 64), np.float32), tl.f32)
        good = tl.HostTensorDescriptor(x, [8, 64], [64, 1], [8, 16])
        wrong = tl.HostTensorDescriptor(x, bad.get("shape", [8, 64]), bad.get("strides", [64, 1]),
                                        bad.get("block_shape", [8, 16]), padding)
        with pytest.raises(tl.LaunchError) as info:
            add_tiles[(1, 1)](good, wrong, good, BM=8, BN=16)
    return str(info.value)


@pytest.mark.parametrize("bad, padding, message", [
    ({"strides": [64, 2]}, "zero", "the last stride of a tensor descriptor must be 1, got 2"),
    ({"strides": [10, 1]}, "zero", "stride 0 of a tensor descriptor is 10 elements = 40 bytes, not a multiple of 16"),
    ({"block_shape": [8, 2]}, "zero", "at least 16 bytes in the last dimension"),
    ({"block_shape": [8, 12]}, "zero", "power"),
    ({"shape": [8]}, "zero", "must have one entry per dim"),
    ({}, "nope", "padding_option must be one of"),
])
def test_bad_host_descriptors_are_refused_naming_the_parameter(backend: str, bad: dict[str, list[int]], padding: str,
                                                               message: str) -> None:
    text = _bad_launch(backend, bad, padding)
    assert "kernel add_tiles, parameter b (TensorDescriptor[Float[W32]])" in text and message in text


def test_misaligned_descriptor_base_is_refused() -> None:
    x = np.zeros(8 * 64 + 1, np.float32)[1:].reshape(8, 64)  # 4 bytes past a 16-byte boundary
    desc = tl.HostTensorDescriptor(x, [8, 64], [64, 1], [8, 16])
    with tl.backend("numpy"), pytest.raises(tl.LaunchError, match="parameter a .*its base must be 16-byte aligned"):
        add_tiles[(1, 1)](desc, desc, desc, BM=8, BN=16)


def test_a_pointer_where_a_descriptor_is_declared_is_refused(backend: str) -> None:
    with tl.backend(backend):
        x = tl.to_device(np.zeros((8, 64), np.float32), tl.f32)
        with pytest.raises(tl.LaunchError, match="parameter a .*expected a host tensor descriptor"):
            add_tiles[(1, 1)](x, x, x, BM=8, BN=16)  # type: ignore[arg-type]


def test_type_attributes_are_tritons(backend: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.random(100, dtype=np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(100, np.nan, np.float16), tl.f16)
        info = tl.to_device(np.full(1, -1, np.int32), tl.i32)
        typed_copy[(4,)](tl.to_device(x, tl.f32), out, info, 100, BLOCK=32)
        np.testing.assert_allclose(out.numpy().astype(np.float64), x.astype(np.float64) * 2, rtol=1e-3)
        assert int(info.numpy()[0]) == 16


def test_discarded_hints_have_no_effect(backend: str) -> None:
    rng = np.random.default_rng(4)
    x = rng.random(300, dtype=np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(100, np.nan, np.float32), tl.f32)
        discarded_hints[(4,)](tl.to_device(x, tl.f32), out, 100, BLOCK=32)
        np.testing.assert_allclose(out.numpy(), x[::3].astype(np.float64) + 1, rtol=1e-6)


def test_a_discarded_hint_still_checks_its_arguments(backend: str) -> None:
    with tl.backend(backend), pytest.raises(tl.KernelError, match=r"\(16, 16\) does not give one positive int per axis"):
        discarded_hint_of_wrong_arity[(1,)](tl.to_device(np.zeros(32, np.float32), tl.f32), BLOCK=32)


def test_a_used_false_hint_is_still_checked_by_the_reference() -> None:
    x = np.zeros(300, np.float32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match="max_contiguous"):
        used_false_hint[(1,)](x, np.zeros(300, np.float32), 100, BLOCK=32)


def test_a_name_retyped_in_a_divergent_loop_keeps_its_dtype(backend: str) -> None:
    x = np.random.default_rng(5).random((4, 16), dtype=np.float32)
    want = np.cumsum((x * 2).astype(np.float16).astype(np.float64), axis=0)
    with tl.backend(backend):
        out = tl.to_device(np.full((4, 16), np.nan, np.float32), tl.f32)
        retyped_in_divergent_loop[(4,)](tl.to_device(x, tl.f32), out, B=16)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
