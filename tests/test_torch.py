"""tile_lang.torch: torch CPU tensors in launches on the NumPy reference (zero-copy), a kernel
pair as a ``torch.library`` custom op with a fake implementation and autograd, checked with
``torch.autograd.gradcheck`` and ``torch.library.opcheck``. Skipped where torch is not installed."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import tile_lang as tl  # noqa: E402
from tile_lang.torch import custom_op  # noqa: E402

from examples import torch_softmax  # noqa: E402
from examples.vector_add import vector_add  # noqa: E402


def test_cpu_tensors_launch_in_place_on_the_reference() -> None:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(1000, generator=gen), torch.randn(1000, generator=gen)
    out = torch.full((1000,), float("nan"))
    with tl.backend("numpy"):
        vector_add[(4,)](tl.wrap(x, tl.f32), tl.wrap(y, tl.f32), tl.wrap(out, tl.f32), 1000, BLOCK_SIZE=256)
    torch.testing.assert_close(out, (x.double() + y.double()).float())


def test_softmax_op_forward_and_gradcheck() -> None:
    torch_softmax.run(0)
    torch_softmax.run(1)


def test_softmax_op_fake_and_opcheck() -> None:
    meta = torch_softmax.softmax(torch.empty(5, 17, device="meta", dtype=torch.float32))
    assert meta.shape == (5, 17) and meta.device.type == "meta"
    x = torch.randn(4, 9, dtype=torch.float64, requires_grad=True)
    with tl.backend("numpy"):
        torch.library.opcheck(torch_softmax.softmax, (x,))


def test_custom_op_name_needs_a_namespace() -> None:
    with pytest.raises(tl.LaunchError, match="'namespace::name'"):
        custom_op("softmax")
