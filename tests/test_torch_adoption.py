"""torch CPU tensors as kernel arguments on the NumPy reference (and the CPU emulator of the
generated CUDA, which adopts host memory the same way), adopted without copying as Triton reads
them through their pointer: tensors that require grad, bf16 and fp8 tensors
(which DLPack cannot carry), contiguous or strided; and clear errors for the rest. Skipped
where torch is not installed."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import tile_lang as tl  # noqa: E402
from tile_lang import Float, Pointer, constexpr, f32  # noqa: E402

W = TypeVar("W", bound=tl.Width)
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2,
          "f8e4b8": torch.float8_e4m3fnuz, "f8e5b16": torch.float8_e5m2fnuz}
AMD_ONLY = ("f8e4b8", "f8e5b16")


@tl.kernel
def affine_and_negate(x_ptr: Pointer[Float[W]], out_ptr: Pointer[f32], cols: int, stride_row: int,
                      stride_col: int, BLOCK: constexpr) -> None:
    """``out = 2 x + 1`` in f32 (row-major), and ``x`` negated in place through its strides."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    where = x_ptr + row * stride_row + offs * stride_col
    x = tl.load(where, mask=mask).to(tl.float32)
    tl.store(out_ptr + row * cols + offs, x * 2.0 + 1.0, mask=mask)
    tl.store(where, (-x).to(x_ptr.dtype.element_ty), mask=mask)


SIGN = {1: -128, 2: -(2 ** 15), 4: -(2 ** 31)}  # the sign bit of each width, as the signed integer bits() gives


def bits(t: Any) -> Any:
    """The tensor's bits as integers of its width (NaN-safe, and -0.0 is not 0.0)."""
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32}[t.element_size()])


def run(x: Any, rows: int, cols: int, backend: str = "numpy") -> Any:
    """Launch on ``x`` (rows x cols, any strides); the f32 output, poisoned with NaN first."""
    out = torch.full((rows, cols), float("nan"))
    with tl.backend(backend):
        affine_and_negate[(rows,)](x, out, cols, x.stride(0), x.stride(1), BLOCK=64)
    return out


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "strided"])
@pytest.mark.parametrize("name", DTYPES)
def test_tensor_is_read_and_written_in_place(name: str, contiguous: bool, backend: str) -> None:
    gen = torch.Generator().manual_seed(7)
    whole = (torch.randn(5, 46, generator=gen) * 4).to(DTYPES[name])
    x = whole if contiguous else whole[1:, 3::2]  # rows 1.., every other column from 3: a gapped view
    rows, cols = x.shape
    before = x.double().numpy()
    expected = bits(whole.clone())
    (expected if contiguous else expected[1:, 3::2]).bitwise_xor_(SIGN[whole.element_size()])  # the view negated
    if backend != "numpy" and name in AMD_ONLY:  # the generated CUDA refuses them, as Triton's CUDA compiler does
        with pytest.raises(tl.KernelError, match="AMD format"):
            run(x, rows, cols, backend)
        return
    out = run(x, rows, cols, backend)
    np.testing.assert_allclose(out.double().numpy(), before * 2 + 1, rtol=1e-6)
    np.testing.assert_array_equal(x.double().numpy(), -before)
    assert torch.equal(bits(whole), expected)  # in place, to the bit, and the gaps between the view's elements kept

def test_tensor_that_requires_grad_shares_its_storage() -> None:
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(4, 20, generator=gen, requires_grad=True)
    before = w.detach().double().numpy().copy()
    out = run(w, 4, 20)
    np.testing.assert_allclose(out.double().numpy(), before * 2 + 1, rtol=1e-6)
    np.testing.assert_array_equal(w.detach().double().numpy(), -before)
    assert w.requires_grad
    with tl.backend("numpy"):
        assert tl.wrap(w, tl.f32).shape == (4, 20)


@pytest.mark.parametrize(("tensor", "message"), [
    (lambda: torch.zeros(4, 4, dtype=torch.complex64), "a torch tensor of torch.complex64 elements, which no tile_lang"),
    (lambda: torch.zeros(4, 4, device="meta"), "a torch tensor on device meta, but the NumPy reference runs on the CPU"),
    (lambda: torch.zeros(4, 4).to_sparse(), "a torch tensor of layout torch.sparse_coo, which a pointer cannot"),
], ids=["dtype", "device", "layout"])
def test_tensor_a_pointer_cannot_take_names_what_is_wrong(tensor: Any, message: str) -> None:
    out = torch.zeros(4, 4)
    with tl.backend("numpy"), pytest.raises(tl.LaunchError, match=f"kernel affine_and_negate, parameter x_ptr .*: {message}"):
        affine_and_negate[(4,)](tensor(), out, 4, 4, 1, BLOCK=32)


@tl.kernel
def add_one_u(x_ptr: Pointer[tl.UInt[W]], out_ptr: Pointer[tl.UInt[W]], n: int, BLOCK: constexpr) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@pytest.mark.parametrize("width", [16, 32, 64])
def test_unsigned_tensors_are_the_unsigned_dtypes(width: int) -> None:
    """torch's uint16/uint32/uint64 tensors launch as tl.u16/u32/u64 (their top bit set, so a
    signed reading would differ), the output poisoned first."""
    dtype = getattr(torch, f"uint{width}")
    values = np.random.default_rng(width).integers(0, 2 ** width - 1, 50, dtype=np.uint64, endpoint=False)
    values[:5] = 2 ** width - 2  # the top bit set; + 1 stays in range
    x = torch.from_numpy(values.astype(f"uint{width}"))
    out = torch.full((50,), 7, dtype=dtype)
    with tl.backend("numpy"):
        add_one_u[(1,)](x, out, 50, BLOCK=64)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy().astype(np.uint64), values.astype(f"uint{width}").astype(np.uint64) + 1)
