"""Branches a constexpr leaves out, as Triton compiles them (not at all): a Triton name tile_lang
lacks (``tl.extra.cuda.smid``) or a descriptor's ``gather`` there is legal, reached it is one
error at its line on both backends (the NumPy reference and the compiler's CUDA run by the CPU
emulator); a branch on a runtime value is still refused before it runs. Against float64 NumPy,
outputs poisoned first. Also: a broken promise on values every program shares is reported, not
an IndexError."""

from __future__ import annotations

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32, registry
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR, NAME

BACKENDS = ("numpy", NAME)
needs_emulator = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None, reason=str(EMULATOR.unavailable_reason()))

ROWS, COLS = 8, 16


@tl.kernel
def scale_rows(x_ptr: Pointer[f32], o_ptr: Pointer[f32], scale: float, WAIT: constexpr, GATHER: constexpr) -> None:
    desc = tl.make_tensor_descriptor(x_ptr, shape=[ROWS, COLS], strides=[COLS, 1], block_shape=[ROWS, COLS])
    if WAIT:
        tl.extra.cuda.smid()  # type: ignore[operator]  # tile_lang has no such name (mypy says so too)
    block = desc.load([0, 0])
    if GATHER and not WAIT:
        block = desc.gather(tl.arange(0, ROWS), 0)
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    tl.store(o_ptr + rows * COLS + cols, block * scale)


@tl.kernel
def runtime_guard(x_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int) -> None:
    offs = tl.arange(0, COLS)
    if n > 100:
        tl.extra.cuda.smid()  # type: ignore[operator]
    tl.store(o_ptr + offs, tl.load(x_ptr + offs))


def _x(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-3, 3, (ROWS, COLS)).astype(np.float32)


def _poisoned() -> tl.Buffer[f32]:
    return tl.to_device(np.full((ROWS, COLS), np.nan, np.float32), tl.f32)


@pytest.mark.parametrize("backend", [pytest.param(b, marks=needs_emulator if b == NAME else ()) for b in BACKENDS])
def test_names_in_branches_a_constexpr_leaves_out_are_never_compiled(backend: str) -> None:
    registry.register(EMULATOR)
    x = _x(1)
    with tl.backend(backend):
        out = _poisoned()
        scale_rows[(1,)](tl.to_device(x, tl.f32), out, 0.75, WAIT=False, GATHER=False)
        np.testing.assert_allclose(out.numpy().astype(np.float64), x.astype(np.float64) * 0.75, rtol=1e-6)


@needs_emulator
@pytest.mark.parametrize(("consts", "message"), [
    ({"WAIT": True, "GATHER": False}, r"tl\.extra\.cuda\.smid is not supported yet"),
    ({"WAIT": False, "GATHER": True}, r"descriptor gather needs a 2-D descriptor with a block of 1 row, got block "
                                      r"shape \[8, 16\]"),
])
def test_reached_they_are_one_error_on_both_backends(consts: dict[str, bool], message: str) -> None:
    registry.register(EMULATOR)
    seen = []
    for backend in BACKENDS:
        with tl.backend(backend), pytest.raises(KernelError, match=message) as err:
            out = _poisoned()
            scale_rows[(1,)](tl.to_device(_x(2), tl.f32), out, 2.0, **consts)
        assert np.isnan(out.numpy()).all()
        seen.append((err.value.message, err.value.lineno))
    assert seen[0] == seen[1]


def test_a_branch_on_a_runtime_value_is_still_refused_before_it_runs() -> None:
    out = tl.to_device(np.full(COLS, np.nan, np.float32), tl.f32)
    with pytest.raises(KernelError, match=r"tl\.extra\.cuda\.smid is not supported yet"):
        runtime_guard[(1,)](tl.to_device(_x(3)[0], tl.f32), out, 5)
    assert np.isnan(out.numpy()).all()


@tl.kernel
def wrapped_offsets(o_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    pid = tl.program_id(0)
    if pid == 0:
        return
    offs = tl.max_contiguous(tl.arange(0, BLOCK) % n, BLOCK)  # false where n < BLOCK: it wraps
    tl.store(o_ptr + pid * BLOCK + tl.arange(0, BLOCK), offs.to(tl.float32))


def test_a_broken_promise_on_values_every_program_shares_names_the_element() -> None:
    """The promised values do not depend on the program (one row stands for all) and program 0,
    the first row, returned: the message reads the value at the failing program's row."""
    out = tl.to_device(np.full(48, np.nan, np.float32), tl.f32)
    with pytest.raises(KernelError, match=r"does not hold: element 8 of program \(1,\) is 0, which does not follow"):
        wrapped_offsets[(3,)](out, 8, BLOCK=16)
    out = tl.to_device(np.full(48, np.nan, np.float32), tl.f32)
    wrapped_offsets[(3,)](out, 16, BLOCK=16)  # kept: no wrap
    np.testing.assert_array_equal(out.numpy()[16:], np.tile(np.arange(16, dtype=np.float32), 2))
    assert np.isnan(out.numpy()[:16]).all()
