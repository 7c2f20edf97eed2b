"""The axis of a reduction, scan or sort is checked by one rule (semantics.reduction) on both
backends, before the compiler's shortcut for a scalar input: a runtime value or a float is no
axis, and a scalar has none (only ``axis=None`` reduces one). The compiler used to return the
scalar unchanged, so Liger's ``tl.max(m, blk_max)`` (meant as ``tl.maximum``) ran silently."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import registry
from tile_lang.errors import KernelError

from tests.compiler.emulator import NAME, EmuBackend
from tests.fuzz.runner import load

_BACKEND = EmuBackend()
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))
BACKENDS = ("numpy", NAME)
B = 8
PROGRAMS = 4

# Kernels are imported from source: the typing gate would reject most of them on purpose.
_HEADER = '''import tile_lang as tl
from tile_lang import Pointer, constexpr


@tl.func
def add(a: tl.Tensor[tl.f32, tl.R0], b: tl.Tensor[tl.f32, tl.R0]) -> tl.Tensor[tl.f32, tl.R0]:
    return a + b


@tl.kernel
'''
_BODY = '''def {name}(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
    pid = tl.program_id(0)
    offs = tl.arange(0, B)
    s = tl.load(x_ptr + pid)
    t = tl.load(x_ptr + PROGRAMS + pid)
    v = tl.load(x_ptr + offs)
    r = {expr}
    tl.store(o_ptr + pid * B + offs, tl.zeros((B,), tl.f32) + r)
'''
_LINE = (_HEADER + _BODY).splitlines().index("    r = {expr}") + 1  # the line of the call


def _kernel(name: str, expr: str) -> Any:
    body = _BODY.replace("PROGRAMS", str(PROGRAMS)).format(name=name, expr=expr)
    return load(name, _HEADER + body)


MAX_HINT = r"; for the elementwise maximum of two values write tl\.maximum\(a, b\)"
SCALAR_HINT = "; axis=None reduces a scalar"

BAD_AXES = [
    ("tl.max(s, t)", "tl.max: axis must be a compile-time int, got a runtime value" + SCALAR_HINT + MAX_HINT),
    ("tl.max(2.0, s)", "tl.max: axis must be a compile-time int, got a runtime value" + SCALAR_HINT + MAX_HINT),
    ("tl.max(-float('inf'), t)", "tl.max: axis must be a compile-time int" + ".*" + MAX_HINT),
    ("tl.max(s, 0)", "tl.max: a scalar has no axis 0" + SCALAR_HINT + MAX_HINT),
    ("tl.max(v, 1, return_indices=True)[0]", "tl.max: invalid axis 1: out of range for a block of rank 1$"),
    ("tl.min(v, n)", r"tl.min: axis must be a compile-time int, got a runtime value; for the elementwise "
                     r"minimum of two values write tl\.minimum\(a, b\)"),
    ("tl.sum(s, 2.5)", r"tl.sum: axis must be a compile-time int, got 2.5 \(a float\)" + SCALAR_HINT + "$"),
    ("tl.sum(s, 0, keep_dims=True)", "tl.sum: a scalar has no axis 0" + SCALAR_HINT + "$"),
    ("tl.sum(v, t)", "tl.sum: axis must be a compile-time int, got a runtime value$"),
    ("tl.argmax(s, 0)", "tl.argmax: a scalar has no axis 0" + SCALAR_HINT + "$"),
    ("tl.argmin(s, t)", "tl.argmin: axis must be a compile-time int, got a runtime value" + SCALAR_HINT + "$"),
    ("tl.reduce(s, 0, add)", "tl.reduce: a scalar has no axis 0" + SCALAR_HINT + "$"),
    ("tl.cumsum(s)", "tl.cumsum: a scalar has no axis 0$"),
    ("tl.cumsum(s, 5)", "tl.cumsum: a scalar has no axis 5$"),
    ("tl.cumprod(v, t)", "tl.cumprod: axis must be a compile-time int, got a runtime value$"),
    ("tl.associative_scan(s, 0, add)", "tl.associative_scan: a scalar has no axis 0$"),
    ("tl.associative_scan(v, 1.0, add)", r"tl.associative_scan: axis must be a compile-time int, got 1.0 \(a float\)$"),
    ("tl.sort(s)", "tl.sort sorts a block, got a scalar$"),
    ("tl.sort(s, 3)", "tl.sort sorts a block, got a scalar$"),
    ("tl.sort(v, t)", "tl.sort: axis must be a compile-time int, got a runtime value$"),
]


@pytest.fixture(autouse=True)
def _emulator() -> None:
    registry.register(_BACKEND)


def _inputs(seed: int) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(2 * PROGRAMS + B) * 10).astype(np.float32)


def _launch(kernel: Any, x: np.ndarray[Any, Any], out: tl.Buffer[tl.f32]) -> np.ndarray[Any, Any]:
    """One launch (on the current backend) into ``out``; what it holds afterwards, on the host."""
    kernel[(PROGRAMS,)](tl.to_device(x, tl.f32), out, 0, B=B)
    return out.numpy()


def _poisoned() -> tl.Buffer[tl.f32]:
    return tl.to_device(np.full(PROGRAMS * B, np.nan, np.float32), tl.f32)


@pytest.mark.parametrize("i, expr, message", [(i, e, m) for i, (e, m) in enumerate(BAD_AXES)])
def test_bad_axis_is_the_same_error_at_the_call_on_both_backends(i: int, expr: str, message: str) -> None:
    kernel = _kernel(f"bad_axis_{i}", expr)
    errors = []
    for backend in BACKENDS:
        with tl.backend(backend):
            out = _poisoned()
            with pytest.raises(KernelError) as err:
                _launch(kernel, _inputs(i), out)
            assert np.isnan(out.numpy()).all()  # raised before anything was stored
        errors.append(err.value)
    for e in errors:
        assert e.lineno == _LINE and f"bad_axis_{i}" in e.kernel, (e.lineno, e.kernel)
        assert re.search(message, e.message), e.message
        assert "r = " + expr in str(e)
    assert errors[0].message == errors[1].message


# Rank-0 reductions with axis=None (the default) are legal and give the scalar itself, converted
# as the reduction's result dtype (argmax/argmin: index 0).
GOOD = [
    ("tl.max(s)", lambda s, t: s),
    ("tl.min(t, axis=None)", lambda s, t: t),
    ("tl.sum(s * t)", lambda s, t: s * t),
    ("tl.sum(s, keep_dims=True)", lambda s, t: s),
    ("tl.sum(s.to(tl.i8), dtype=tl.f32)", lambda s, t: np.trunc(s)),
    ("tl.max(s - t, None, return_indices=True)[0]", lambda s, t: s - t),
    ("tl.max(s, None, return_indices=True)[1] + s", lambda s, t: s),
    ("tl.argmax(t, None) + 2", lambda s, t: np.full_like(t, 2.0)),
    ("tl.argmin(s, None) - 1", lambda s, t: np.full_like(s, -1.0)),
    ("tl.reduce(s, None, add)", lambda s, t: s),
    ("tl.xor_sum(s.to(tl.i32)).to(tl.f32)", lambda s, t: np.trunc(s)),
    ("tl.maximum(s, t)", lambda s, t: np.maximum(s, t)),  # what Liger's tl.max(m, blk_max) meant
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("i, expr, want", [(i, e, w) for i, (e, w) in enumerate(GOOD)])
def test_scalar_reduced_with_axis_none(backend: str, i: int, expr: str, want: Any) -> None:
    x = _inputs(100 + i)
    s, t = x[:PROGRAMS].astype(np.float64), x[PROGRAMS:2 * PROGRAMS].astype(np.float64)
    with tl.backend(backend):
        got = _launch(_kernel(f"scalar_reduce_{i}", expr), x, _poisoned())
    np.testing.assert_allclose(got, np.repeat(want(s, t), B), rtol=1e-6)
