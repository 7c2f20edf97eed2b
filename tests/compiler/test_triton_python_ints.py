"""Python ints beside unsigned blocks as Triton 3.6 takes them, on the NumPy reference and on the
generated CUDA (CPU emulator): ``tl.maximum``/``tl.minimum`` make the int a tensor of its own
type (i32, u32, i64, u64, the first holding it), promote it with the block and cast it there,
wrapping (``tl.maximum(u32_block, -1)`` is 0xFFFFFFFF everywhere, ``tl.minimum(u8_block, -1)``
is -1 in i32). The expected values are computed here with Python ints from Triton's rules;
outputs are poisoned, inputs seeded."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import constexpr

from tests.compiler.emulator import EMULATOR

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))

B = 16
_OWN = ((True, 32), (False, 32), (True, 64), (False, 64))  # Triton's to_tensor: (signed, bits), in order


def _own(value: int) -> tuple[bool, int]:
    return next((s, b) for s, b in _OWN if (-(1 << (b - 1)) if s else 0) <= value < (1 << (b - 1 + (not s))))


def _promoted(a: tuple[bool, int], b: tuple[bool, int]) -> tuple[bool, int]:
    """Triton's integer promotion: one signedness, the wider; else the unsigned one unless the
    signed one is wider."""
    if a[0] == b[0]:
        return a[0], max(a[1], b[1])
    unsigned, signed = (a, b) if not a[0] else (b, a)
    return unsigned if unsigned[1] >= signed[1] else signed


def _wrap(value: int, kind: tuple[bool, int]) -> int:
    v = value % (1 << kind[1])
    return v - (1 << kind[1]) if kind[0] and v >> (kind[1] - 1) else v


@tl.kernel
def extremum(x_ptr, o_ptr, V: constexpr, LARGEST: constexpr, B: constexpr):  # type: ignore[no-untyped-def]
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, V) if LARGEST else tl.minimum(V, x))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
@pytest.mark.parametrize("value", [-1, 5, -2**31, -2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63])
def test_maximum_and_minimum_cast_a_python_int_as_triton(target: str, dtype: type, value: int) -> None:
    bits = np.dtype(dtype).itemsize * 8
    rng = np.random.default_rng(value % 1000)
    x: np.ndarray = rng.integers(0, 1 << bits, B, dtype=np.uint64).astype(dtype)
    x[0], x[1] = 0, (1 << bits) - 1
    kind = _promoted((False, bits), _own(value))
    v = _wrap(value, kind)
    for largest in (True, False):
        want = [_wrap(max(int(e), v) if largest else min(int(e), v), (False, bits)) for e in x]
        with tl.backend(target):
            out = tl.to_device(np.full(B, 0xA5, dtype))
            extremum[(1,)](tl.to_device(x), out, value, largest, B=B)
            assert out.numpy().astype(np.int64).tolist() == want, (largest, kind)
