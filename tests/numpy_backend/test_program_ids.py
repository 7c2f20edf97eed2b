"""A group's program ids, built row by row of the grid, against dividing each linear id out."""

from __future__ import annotations

import numpy as np
import pytest

from tile_lang_numpy.executor import _program_ids


@pytest.mark.parametrize("grid", [(1, 1, 1), (7, 1, 1), (1, 5, 3), (6, 4, 3), (262, 3, 2), (5, 1, 9)])
def test_program_ids_are_each_linear_id_divided_out(grid: tuple[int, int, int]) -> None:
    gx, gy, gz = grid
    total = gx * gy * gz
    rng = np.random.default_rng(total)
    spans = {(0, total), (total - 1, 1)} | {(int(s), int(rng.integers(1, total - s + 1)))
                                              for s in rng.integers(0, total, 6)}
    for start, count in sorted(spans):
        pids = _program_ids(grid, start, count)
        ids = np.arange(start, start + count)
        np.testing.assert_array_equal(pids, np.stack([ids % gx, ids // gx % gy, ids // (gx * gy)], axis=1))
        assert pids.dtype == np.int32 and not pids.flags.writeable
        assert pids[:, 0].flags.c_contiguous  # tl.program_id is a view, not a copy
