"""The generated CUDA of the ops that go through shared memory, run on CPU threads by the
emulator (tests/compiler/emulator) against the NumPy reference's own tests: user reductions and
scans, sort, flip, gather, histogram, join/split/cat/interleave, block pointers, descriptors,
randint4x and the tf32 splits of ``dot``. No GPU needed; skipped without g++ or CUDA headers.

The whole reference suite runs this way with
``pytest -p tests.compiler.emulator --tile-backend=emu tests/numpy_backend``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tile_lang as tl
from tile_lang import registry

from tests.compiler.emulator import NAME, EmuBackend
from tests.numpy_backend import test_blocks, test_dot, test_random, test_reduction, test_shape

_BACKEND = EmuBackend()
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))

CASES: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (test_reduction.test_reduce_and_scan_keep_operand_order, ()),
    (test_reduction.test_reduce_along_each_axis_matches_sum, ()),
    (test_reduction.test_sort_and_flip_every_numeric_dtype, (tl.f16,)),
    (test_reduction.test_gather_along_each_axis, (tl.u64,)),
    (test_reduction.test_histogram_ignores_masked_and_out_of_range_values, (tl.i16,)),
    (test_shape.test_shape_ops_every_dtype, (tl.bf16,)),
    (test_shape.test_shape_ops_on_pointer_blocks, ()),
    (test_blocks.test_block_pointer_load_pads_checked_dims, ("nan", float("nan"), True)),
    (test_blocks.test_advance_accumulates_chunks, (37, 100, 16)),
    (test_blocks.test_descriptor_round_trip, (37, 44, "nan")),
    (test_random.test_matches_triton_on_gpu, (2**40 + 3, "int64")),
    (test_dot.test_product_with_identity_shows_operand_rounding, ("tf32",)),
    (test_dot.test_product_with_identity_shows_operand_rounding, ("tf32x3",)),
    (test_dot.test_tf32x3_keeps_infinities, ()),
]


@pytest.mark.parametrize("case, args", CASES, ids=[case.__name__ for case, _ in CASES])
def test_reference_case_on_the_emulator(case: Callable[..., None], args: tuple[Any, ...]) -> None:
    registry.register(_BACKEND)
    with registry.backend(NAME):
        case(NAME, *args)
