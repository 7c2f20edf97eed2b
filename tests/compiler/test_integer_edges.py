"""Edge cases of integers and of NaN-aware index reductions, found on the CPU emulator of the
generated CUDA: each runs on the NumPy reference and on the emulator against NumPy (or Python
int) references, outputs poisoned first. The GPU's instructions define the answers: PTX max/min
order -0.0 below +0.0 and skip NaN, shl/shr clamp the shift amount to the width, signed
negation and division wrap; the reference reports a signed overflow as an error."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, f32, i32, registry
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR, NAME
from tests.fuzz.runner import load

_BACKEND = EMULATOR
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))
BACKENDS = ("numpy", NAME)
Array = np.ndarray[Any, Any]


def _from_source(name: str, source: str) -> Any:
    """A kernel generic over its element type (the typing gate wants one per dtype), imported
    from a file as the fuzzer's kernels are."""
    header = "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
    return load(name, header + textwrap.dedent(source).lstrip())


# ---------------------------------------------------------------- index reductions and NaN


arg_reductions = _from_source("arg_reductions", """
    def arg_reductions(x_ptr: Pointer[tl.f32], i_ptr: Pointer[tl.i32], v_ptr: Pointer[tl.f32], n: int,
                       R: constexpr, C: constexpr, AXIS: tl.Constexpr[int | None], LEFT: constexpr, LARGEST: constexpr,
                       OTHER: constexpr) -> None:
        # Lanes >= n of each row masked off and filled with OTHER (-inf or NaN, as a masked softmax
        # row is); the index of argmax/argmin, and the value and index of max/min with
        # return_indices, kept as size-1 axes (the stubs take no axis=None or keep_dims with
        # indices) and broadcast over the block, so every axis stores one shape.
        rows, cols = tl.arange(0, R), tl.arange(0, C)
        offs = rows[:, None] * C + cols[None, :]
        x = tl.load(x_ptr + offs, mask=cols[None, :] < n, other=OTHER)
        if LARGEST:
            index = tl.argmax(x, AXIS, tie_break_left=LEFT, keep_dims=True)
            value, same = tl.max(x, AXIS, return_indices=True, return_indices_tie_break_left=LEFT, keep_dims=True)
        else:
            index = tl.argmin(x, AXIS, tie_break_left=LEFT, keep_dims=True)
            value, same = tl.min(x, AXIS, return_indices=True, return_indices_tie_break_left=LEFT, keep_dims=True)
        tl.store(i_ptr + offs, tl.broadcast_to(index, (R, C)))
        tl.store(i_ptr + R * C + offs, tl.broadcast_to(same, (R, C)))
        tl.store(v_ptr + offs, tl.broadcast_to(value, (R, C)))
""")


def _nan_rows(rng: np.random.Generator, r: int, c: int) -> Array:
    """Small integers (many ties, -0.0 against +0.0), NaN sprinkled, +-inf, one all-NaN row."""
    x = rng.integers(-3, 4, (r, c)).astype(np.float32)
    x[rng.random((r, c)) < 0.3] = np.nan
    x[rng.random((r, c)) < 0.05] = np.inf
    x[rng.random((r, c)) < 0.05] = -np.inf
    x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
    x[1] = np.nan
    return x


def _reference_arg(x: Array, axis: int | None, left: bool, largest: bool) -> tuple[Array, Array]:
    """NaN skipped, ties (==) to the left (else right), an all-NaN line its last index; the
    value as the GPU's max/min gives it (+0.0 above -0.0). Axes kept."""
    lines = x.reshape(1, -1) if axis is None else np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
    index, value = [], []
    for line in lines.astype(np.float64):
        numbers = [k for k in range(len(line)) if not np.isnan(line[k])]
        if not numbers:
            index.append(len(line) - 1)
            value.append(np.nan)
            continue
        best = max(line[numbers]) if largest else min(line[numbers])
        ties = [k for k in numbers if line[k] == best]
        index.append(ties[0] if left else ties[-1])
        signs = [bool(np.signbit(line[k])) for k in ties]
        negative = all(signs) if largest else any(signs)
        value.append((-0.0 if negative else 0.0) if best == 0 else best)
    kept = (1, 1) if axis is None else tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    return np.array(index).reshape(kept), np.array(value).reshape(kept)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("other", [float("-inf"), float("nan")])
def test_index_reductions_skip_nan_and_stay_in_range(backend: str, axis: int | None, left: bool, largest: bool,
                                                     other: float) -> None:
    """Was 2147483647 on the CUDA path for an all-NaN row (0 on the reference): an index that
    becomes an out-of-bounds offset when used. Now both skip NaN as Triton's combine does and
    give an all-NaN row its last index."""
    r, c, n = 4, 32, 29
    x = _nan_rows(np.random.default_rng(hash((axis, left, largest)) % 1000), r, c)
    seen = x.copy()
    seen[:, n:] = other
    want_index, want_value = _reference_arg(seen, axis, left, largest)
    with tl.backend(backend):
        index = tl.to_device(np.full((2, r, c), -7, np.int32), tl.i32)
        value = tl.to_device(np.full((r, c), 12345.0, np.float32), tl.f32)
        arg_reductions[(1,)](tl.to_device(x, tl.f32), index, value, n, R=r, C=c, AXIS=axis, LEFT=left,
                             LARGEST=largest, OTHER=other)
        got_index, got_value = index.numpy(), value.numpy()
    np.testing.assert_array_equal(got_index, np.broadcast_to(want_index, (2, r, c)))
    want = np.broadcast_to(want_value, (r, c))
    np.testing.assert_array_equal(got_value, want)
    np.testing.assert_array_equal(np.signbit(got_value), np.signbit(want))


# ---------------------------------------------------------------- maximum / minimum: signed zeros, NaN


@tl.kernel
def extrema(x_ptr: Pointer[f32], y_ptr: Pointer[f32], o_ptr: Pointer[f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y))
    tl.store(o_ptr + B + offs, tl.minimum(x, y))
    tl.store(o_ptr + 2 * B + offs, tl.maximum(x, y, propagate_nan=True))
    tl.store(o_ptr + 3 * B + offs, tl.minimum(x, y, propagate_nan=True))
    tl.store(o_ptr + 4 * B + offs, tl.clamp(x, y, y + 1.0))
    tl.store(o_ptr + 5 * B, tl.max(x * 0.0, 0))  # zeros of both signs, and NaN
    tl.store(o_ptr + 5 * B + 1, tl.min(x * 0.0, 0))


def _ptx(x: Array, y: Array, largest: bool, nan: bool) -> Array:
    """PTX max/min, element by element in Python floats: -0.0 < +0.0; NaN gives the other
    operand (NaN with .NaN)."""
    out = []
    for a, b in zip(x.tolist(), y.tolist()):
        if np.isnan(a) or np.isnan(b):
            out.append(np.nan if nan or (np.isnan(a) and np.isnan(b)) else (b if np.isnan(a) else a))
        elif a == b == 0:  # max is -0.0 when both are, min when either is
            signs = (bool(np.signbit(a)), bool(np.signbit(b)))
            out.append(-0.0 if (all(signs) if largest else any(signs)) else 0.0)
        else:
            out.append(max(a, b) if largest else min(a, b))
    return np.array(out)


def test_maximum_and_minimum_of_signed_zeros_and_nan_agree(backend: str) -> None:
    """Were the host fmaxf's choice of zero on the emulator and NumPy's on the reference (each by
    operand order): now the GPU's -0.0 < +0.0 on both, with NaN skipped or propagated."""
    rng = np.random.default_rng(11)
    b = 256
    pool = np.array([0.0, -0.0, np.nan, 1.5, -1.5, np.inf, -np.inf], np.float32)
    x, y = rng.choice(pool, b), rng.choice(pool, b)
    x[:2], y[:2] = [0.0, -0.0], [-0.0, 0.0]  # both orders of the tie
    want = [_ptx(x, y, True, False), _ptx(x, y, False, False), _ptx(x, y, True, True), _ptx(x, y, False, True),
            _ptx(_ptx(x, y, True, False), y + np.float32(1.0), False, False)]
    zeros = np.where(np.isfinite(x), np.copysign(0.0, x), np.nan)
    numbers = zeros[~np.isnan(zeros)]
    want.append(np.r_[0.0 if (~np.signbit(numbers)).any() else -0.0, -0.0 if np.signbit(numbers).any() else 0.0,
                      np.full(b - 2, 777.0)])
    with tl.backend(backend):
        out = tl.to_device(np.full(6 * b, 777.0, np.float32), tl.f32)
        extrema[(1,)](tl.to_device(x, tl.f32), tl.to_device(y, tl.f32), out, B=b)
        got = out.numpy().reshape(6, b)
    for row, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {row}")
        np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]), err_msg=f"output {row}")


# ---------------------------------------------------------------- block limits


@tl.kernel
def arange_store(o_ptr: Pointer[i32], n: int, START: constexpr, END: constexpr) -> None:
    offs = tl.arange(START, END)
    lanes = offs - START
    tl.store(o_ptr + lanes, offs, mask=lanes < n)


@tl.kernel
def outer_block(o_ptr: Pointer[i32], R: constexpr, C: constexpr) -> None:
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    tl.store(o_ptr + rows[:, None] * 0 + cols[None, :] * 0, rows[:, None] + cols[None, :])


@pytest.mark.parametrize("start, end, match", [
    (0, 2**32, "4294967296 elements, more than the 1048576 \\(2\\*\\*20\\) a block may have"),
    (0, 2**21, "2097152 elements, more than the 1048576 \\(2\\*\\*20\\) a block may have"),
    (2**31 - 8, 2**31 + 8, "bounds must lie in \\[0, 2\\*\\*31\\]"),
    (-8, 8, "bounds must lie in \\[0, 2\\*\\*31\\]"),
])
def test_oversized_blocks_and_aranges_are_errors_on_both_backends(start: int, end: int, match: str) -> None:
    """BLOCK = 2**32 compiled (lanes past 2**31 got negative offsets that passed ``offs < n``)
    and tl.arange past 2**31 wrapped on both: now the shared rule refuses them, naming the
    limit, before anything is written."""
    registry.register(_BACKEND)
    errors = []
    for name in BACKENDS:
        with tl.backend(name):
            out = tl.to_device(np.full(16, -5, np.int32), tl.i32)
            with pytest.raises(KernelError, match=match) as err:
                arange_store[(1,)](out, 16, START=start, END=end)
            np.testing.assert_array_equal(out.numpy(), np.full(16, -5))
        errors.append(err.value)
        assert err.value.lineno == arange_store.lineno + 2
    assert errors[0].message == errors[1].message


def test_broadcast_past_the_block_limit_is_an_error_on_both_backends() -> None:
    registry.register(_BACKEND)
    for name in BACKENDS:
        with tl.backend(name), pytest.raises(KernelError, match="a block of shape \\[2048, 1024\\] has 2097152") as err:
            outer_block[(1,)](tl.to_device(np.full(4, -5, np.int32), tl.i32), R=2048, C=1024)
        assert err.value.lineno == outer_block.lineno + 3


def test_arange_up_to_two_to_the_31_is_exact(backend: str) -> None:
    """The last i32 values, 2**31 - 16 .. 2**31 - 1, on both backends."""
    with tl.backend(backend):
        out = tl.to_device(np.full(16, -5, np.int32), tl.i32)
        arange_store[(1,)](out, 13, START=2**31 - 16, END=2**31)
        np.testing.assert_array_equal(out.numpy(), np.r_[np.arange(2**31 - 16, 2**31 - 3), [-5] * 3])


# ---------------------------------------------------------------- shifts


INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]


def _np_type(dtype: str) -> np.dtype[Any]:
    return np.dtype(dtypes.dtype_of(getattr(tl, dtype)).numpy)


def _int_kernel(dtype: str) -> Any:
    """``x << y``, ``x >> y``, ``x // y``, ``x % y``, ``-x`` and ``abs(x)`` on ``dtype`` blocks."""
    return _from_source(f"int_edges_{dtype}", f"""
        def int_edges_{dtype}(x_ptr: Pointer[tl.{dtype}], y_ptr: Pointer[tl.{dtype}], o_ptr: Pointer[tl.{dtype}],
                              B: constexpr, OP: constexpr) -> None:
            offs = tl.arange(0, B)
            x = tl.load(x_ptr + offs)
            y = tl.load(y_ptr + offs)
            if OP == "shl":
                r = x << y
            elif OP == "shr":
                r = x >> y
            elif OP == "div":
                r = x // y
            elif OP == "mod":
                r = x % y
            elif OP == "neg":
                r = -x + y * 0
            else:
                r = tl.abs(x) + y * 0
            tl.store(o_ptr + offs, r)
    """)


def _edges(dtype: np.dtype[Any], rng: np.random.Generator, b: int) -> Array:
    """Random values of ``dtype`` with its edge values first."""
    info = np.iinfo(dtype)
    edges = np.array(sorted({info.min, info.min + 1, -1 if info.min else 1, 0, 1, info.max - 1, info.max}), dtype)
    return np.concatenate([edges, rng.integers(info.min, info.max, b - len(edges), dtype, endpoint=True)])


def _shifted(x: Array, s: Array, left: bool) -> Array:
    """The GPU's shifts in Python ints: the amount read as unsigned; from the width on, << and
    unsigned >> give 0 and signed >> the sign fill."""
    info, bits = np.iinfo(x.dtype), x.dtype.itemsize * 8
    out = []
    for v, amount in zip(x.tolist(), s.tolist()):
        amount %= 2**bits  # as unsigned
        if amount >= bits:
            out.append(0 if left or v >= 0 else -1)
        else:
            r = (v << amount) % 2**bits if left else v >> amount
            out.append(r - 2**bits if r > info.max else r)
    return np.array(out, x.dtype)


_KERNELS: dict[str, Any] = {}


def _run_int(backend: str, dtype: str, op: str, x: Array, y: Array) -> Array:
    kernel = _KERNELS.setdefault(dtype, _int_kernel(dtype))
    element = getattr(tl, dtype)
    with tl.backend(backend):
        out = tl.to_device(np.full(len(x), 99, x.dtype), element)
        kernel[(1,)](tl.to_device(x, element), tl.to_device(y, element), out, B=len(x), OP=op)
        got: Array = out.numpy()
    return got


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["shl", "shr"])
def test_shifts_by_the_width_or_more_as_the_gpu_does(backend: str, dtype: str, op: str) -> None:
    """Were C++ ``<<``/``>>`` (undefined past the width: the emulator gave ``1 << 32 == 1``, the
    reference 0): the amount is read as unsigned and clamped to the width, as PTX shl/shr do."""
    np_type = _np_type(dtype)
    bits = np_type.itemsize * 8
    rng = np.random.default_rng(bits + (op == "shl"))
    b = 128
    x = _edges(np_type, rng, b)
    amounts = [0, 1, bits - 1, bits, bits + 1, 2 * bits] + ([-1, -bits] if np_type.kind == "i" else [])
    s = np.concatenate([np.resize(np.array(amounts), b // 2), rng.integers(0, 2 * bits, b - b // 2)])
    s = s.astype(np_type)
    rng.shuffle(s)
    np.testing.assert_array_equal(_run_int(backend, dtype, op, x, s), _shifted(x, s, op == "shl"))


# ---------------------------------------------------------------- INT_MIN / -1, -INT_MIN, abs(INT_MIN)


SIGNED = ["i8", "i16", "i32", "i64"]


def _truncated(x: Array, y: Array, quotient: bool) -> Array:
    """C's (and the GPU's) division in Python ints: toward zero, wrapped to the width."""
    bits = x.dtype.itemsize * 8
    out = []
    for a, b in zip(x.tolist(), y.tolist()):
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        r = q if quotient else a - q * b
        out.append((r + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1))
    return np.array(out, x.dtype)


def _wrapped(values: list[int], dtype: np.dtype[Any]) -> Array:
    bits = dtype.itemsize * 8
    return np.array([(v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1) for v in values], dtype)


@pytest.mark.parametrize("dtype", SIGNED)
def test_int_min_cases_wrap_on_the_emulator(dtype: str) -> None:
    """Killed the emulator's process with SIGFPE (x86 idiv traps on INT_MIN / -1) and were
    undefined in C++: now the GPU's wrapped results, INT_MIN // -1 == -INT_MIN == abs(INT_MIN) ==
    INT_MIN and INT_MIN % -1 == 0, beside random operands."""
    registry.register(_BACKEND)
    np_type = _np_type(dtype)
    rng = np.random.default_rng(np_type.itemsize)
    x = _edges(np_type, rng, 64)
    y = np.where(np.arange(64) % 3 == 0, -1, _edges(np_type, rng, 64)).astype(np_type)
    y[y == 0] = 7
    x[:8], y[:8] = np.iinfo(np_type).min, -1
    for op in ("div", "mod"):
        np.testing.assert_array_equal(_run_int(NAME, dtype, op, x, y), _truncated(x, y, op == "div"), err_msg=op)
    np.testing.assert_array_equal(_run_int(NAME, dtype, "neg", x, y), _wrapped([-v for v in x.tolist()], np_type))
    np.testing.assert_array_equal(_run_int(NAME, dtype, "abs", x, y), _wrapped([abs(v) for v in x.tolist()], np_type))


@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("op, shown", [("div", "{} // -1"), ("neg", "-({})"), ("abs", "abs({})")])
def test_reference_reports_int_min_overflows(dtype: str, op: str, shown: str) -> None:
    """The reference rejects every signed overflow; INT_MIN // -1, -INT_MIN and abs(INT_MIN)
    passed silently: now they are reported as the others are, naming the program and lane."""
    np_type = _np_type(dtype)
    low = int(np.iinfo(np_type).min)
    x = np.arange(1, 33).astype(np_type)
    y = np.full(32, -1, np_type)
    x[21] = low
    message = f"signed integer overflow: {shown.format(low)} does not fit in {dtype} (program (0,), lane 21)"
    with pytest.raises(KernelError, match=re.escape(message)):
        _run_int("numpy", dtype, op, x, y)


@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("op", ["div", "mod", "neg", "abs"])
def test_signed_division_and_negation_agree_away_from_int_min(backend: str, dtype: str, op: str) -> None:
    """Random operands (edge values but INT_MIN against -1), and INT_MIN % -1 == 0 on both."""
    np_type = _np_type(dtype)
    rng = np.random.default_rng(3 * np_type.itemsize)
    x = _edges(np_type, rng, 64)
    y = _edges(np_type, rng, 64)[::-1].copy()
    y[y == 0] = -3
    low = np.iinfo(np_type).min
    if op == "mod":
        x[:4], y[:4] = low, -1
    else:
        x[x == low] = low + 1
    got = _run_int(backend, dtype, op, x, y)
    want = {"div": lambda: _truncated(x, y, True), "mod": lambda: _truncated(x, y, False),
            "neg": lambda: _wrapped([-v for v in x.tolist()], np_type),
            "abs": lambda: _wrapped([abs(v) for v in x.tolist()], np_type)}[op]()
    np.testing.assert_array_equal(got, want)
