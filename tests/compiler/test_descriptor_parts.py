"""A tensor descriptor's ``shape``, ``strides`` and ``block_shape`` read in a kernel, as Triton's
``tensor_descriptor`` has them (i32 sizes, i64 strides, a list of ints), on the NumPy reference and
the generated CUDA (CPU emulator), for a descriptor made in the kernel and one passed from the host;
and ``x.abs()`` and ``isinstance(desc, tl.tensor_descriptor)``. Poisoned outputs, float64 references."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, TensorDescriptor, constexpr, f32, i64

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
M, N, BM, BN = 12, 40, 4, 16


@tl.kernel
def parts_of(desc: TensorDescriptor[f32, tl.R2], o_ptr: Pointer[f32], meta_ptr: Pointer[i64],
             BM: constexpr, BN: constexpr) -> None:
    """o = |x| block by block, its grid from desc.shape; meta = shape, strides, block shape, dtypes."""
    rows, cols = desc.shape
    tl.static_assert(rows.dtype == tl.int32 and desc.strides[0].dtype == tl.int64)
    tl.static_assert(desc.block_shape == [BM, BN])
    tl.static_assert(isinstance(desc, tl.tensor_descriptor))
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    out = tl.make_tensor_descriptor(o_ptr, [rows, cols], [desc.strides[0], 1], desc.block_shape)
    out.store([i, j], desc.load([i, j]).abs())
    if (tl.program_id(0) == 0) & (tl.program_id(1) == 0):
        tl.store(meta_ptr + 0, rows.to(tl.int64))
        tl.store(meta_ptr + 1, cols.to(tl.int64))
        tl.store(meta_ptr + 2, desc.strides[0])
        tl.store(meta_ptr + 3, desc.strides[1])
        tl.store(meta_ptr + 4, out.strides[0] * 1000 + out.shape[1])


def test_descriptor_shape_strides_and_block_shape_read_as_triton(target: str) -> None:
    x = np.random.default_rng(7).standard_normal((M, N + 8)).astype(np.float32)  # a row stride past the width
    with tl.backend(target):
        src = tl.to_device(x)
        out = tl.to_device(np.full((M, N + 8), np.nan, np.float32))
        meta = tl.to_device(np.full(5, -1, np.int64))
        desc = tl.HostTensorDescriptor(src, [M, N], [N + 8, 1], [BM, BN])
        parts_of[(M // BM, -(-N // BN))](desc, out, meta, BM=BM, BN=BN)
        got, info = out.numpy(), meta.numpy()
    np.testing.assert_array_equal(got[:, :N], np.abs(x[:, :N].astype(np.float64)))
    assert np.isnan(got[:, N:]).all()
    assert info.tolist() == [M, N, N + 8, 1, (N + 8) * 1000 + N]
