"""Host-side helpers shared by the examples: seeded inputs, poisoned outputs, block sizes."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import tile_lang as tl
from tile_lang.dtypes import dtype_of
from tile_lang.tensor import D

# The sentinel written into integer output buffers before a launch (NaN for floats).
INT_SENTINEL = -12345


def rng(seed: int) -> np.random.Generator:
    """The NumPy generator every example draws its inputs from."""
    return np.random.default_rng(seed)


def poisoned(shape: int | tuple[int, ...], dtype: type[D]) -> tl.Buffer[D]:
    """An output buffer filled with NaN (or ``INT_SENTINEL`` for integers) before the launch,
    so an element the kernel forgets to write shows up as a mismatch instead of stale zeros."""
    np_dtype = dtype_of(dtype).numpy
    fill: float = np.nan if np.issubdtype(np_dtype, np.floating) else INT_SENTINEL
    return tl.to_device(np.full(shape, fill, dtype=np_dtype), dtype)


def next_pow2(n: int) -> int:
    """The smallest power of two >= ``n`` (``triton.next_power_of_2``): block sizes must be one."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def host(buffer: tl.Buffer[Any]) -> npt.NDArray[np.float64]:
    """A device buffer's contents as a float64 host array, for comparison with a reference."""
    return np.asarray(buffer.numpy(), dtype=np.float64)
