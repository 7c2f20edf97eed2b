"""The generated CUDA of the ops that go through shared memory, run on CPU threads by the
emulator (tests/compiler/emulator) against the NumPy reference's own tests: user reductions and
scans, sort, flip, gather, histogram, join/split/cat/interleave, block pointers, descriptors,
randint4x and the tf32 splits of ``dot``. No GPU needed; skipped without g++ or CUDA headers.

The whole reference suite runs this way with
``pytest -p tests.compiler.emulator --tile-backend=emu tests/numpy_backend``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tile_lang as tl
from tile_lang import registry

from tests.compiler.emulator import NAME, EmuBackend
from tests.numpy_backend import test_blocks, test_dot, test_random, test_reduction, test_shape

REPO = Path(__file__).resolve().parents[2]
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


TRITON_SCRIPT = '''
import numpy as np
import triton
import triton.language as tl
from tile_lang import registry


@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


rng = np.random.default_rng(5)
n = 3000
x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
for warps in (4, 16):  # 16 warps: 512 threads, whose launch bounds also ask for two blocks an SM
    out = np.full(n + 7, np.nan, np.float32)  # poisoned, with a tail no lane may write
    scaled_add[(triton.cdiv(n, 512),)](x, y, out, n, 1.5, BLOCK=512, num_warps=warps)
    assert np.allclose(out[:n], x.astype(np.float64) * 1.5 + y, rtol=1e-6, atol=1e-6), warps
    assert np.isnan(out[n:]).all()
print("ran on", registry.current_name())
'''


def test_triton_script_runs_on_the_emulator(tmp_path: Path) -> None:
    """``python -m tests.compiler.emulator script.py``: unmodified Triton code, its NumPy arrays
    adopted in place, on the emulated CUDA (a project's kernels test the compiler without a GPU)."""
    script = tmp_path / "script.py"
    script.write_text(TRITON_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "backends"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "tests.compiler.emulator", str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ran on emu")
