"""The CUDA backend on native GPU arrays, zero-copy, and on streams (GPU machines only)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import registry

from tests.compiler.kernels import add_kernel

_CUPY = {b.name: b for b in registry.backends()}["cupy"]
pytestmark = pytest.mark.skipif(not _CUPY.available, reason=f"cupy backend unavailable: {_CUPY.reason}")
N = 5000


class ArrayInterfaceOnly:
    """Exposes a device array through ``__cuda_array_interface__`` alone."""

    def __init__(self, array: Any) -> None:
        self.__cuda_array_interface__ = array.__cuda_array_interface__


class DLPackOnly:
    """Exposes a device array through DLPack alone."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


def inputs() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(7)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def launch(x: Any, y: Any, out: Any, options: tl.Options | None = None) -> None:
    """The vector add of tests/compiler/kernels.py on untyped native arrays."""
    kernel: Any = add_kernel
    grid = (tl.cdiv(N, 256),)
    (kernel[grid, options] if options is not None else kernel[grid])(x, y, out, N, BLOCK=256)


@pytest.mark.parametrize("wrap", [lambda a: a, ArrayInterfaceOnly, DLPackOnly], ids=["cupy", "cai", "dlpack"])
def test_native_arrays_are_written_in_place(wrap: Any) -> None:
    import cupy

    xh, yh = inputs()
    x, y = cupy.asarray(xh), cupy.asarray(yh)
    out = cupy.full(N, np.nan, dtype=np.float32)
    with tl.backend("cupy"):
        launch(wrap(x), wrap(y), wrap(out))
    np.testing.assert_array_equal(cupy.asnumpy(out), xh + yh)


def test_torch_cuda_tensors_are_written_in_place() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    xh, yh = inputs()
    x, y = torch.from_numpy(xh).cuda(), torch.from_numpy(yh).cuda()
    out = torch.full((N,), float("nan"), device="cuda")
    with tl.backend("cupy"):
        launch(x, y, out)
        with pytest.raises(tl.LaunchError, match="add_kernel"):
            launch(torch.from_numpy(xh), y, out)  # a host tensor is refused before anything runs
    np.testing.assert_array_equal(out.cpu().numpy(), xh + yh)


def test_explicit_and_current_streams() -> None:
    import cupy

    xh, yh = inputs()
    x, y = cupy.asarray(xh), cupy.asarray(yh)
    explicit = cupy.cuda.Stream(non_blocking=True)
    out1 = cupy.full(N, np.nan, dtype=np.float32)
    out2 = cupy.full(N, np.nan, dtype=np.float32)
    cupy.cuda.Device().synchronize()
    with tl.backend("cupy"):
        launch(x, y, out1, tl.Options(stream=explicit))
        explicit.synchronize()
        current = cupy.cuda.Stream(non_blocking=True)
        with current:
            launch(x, y, out2)
        current.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out1), xh + yh)
    np.testing.assert_array_equal(cupy.asnumpy(out2), xh + yh)
