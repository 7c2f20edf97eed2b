"""Triton's in-kernel semantics that Triton's own tests use, on the NumPy reference and on the
generated CUDA (CPU emulator) alike: integer <-> pointer casts, ``if``/``while`` on a block of one
element, ``.dtype`` of a Python number, ``isinstance`` against ``tl.tensor``/``tl.constexpr``, and
a Python int out of a block's range. Outputs are poisoned first; values come from seeded
random inputs and are compared against NumPy float64 references."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang.errors import KernelError

from tests.compiler.emulator import EMULATOR
from tests.fuzz.runner import load

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))


def _kernel(name: str, source: str) -> Any:
    """A kernel written as Triton code is (untyped Python numbers, ``isinstance``...), imported
    from a file so that mypy does not see it."""
    header = "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
    return load(name, header + textwrap.dedent(source).lstrip())


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- if / while on one element

one_element_conditions = _kernel("one_element_conditions", """
    def one_element_conditions(x_ptr: Pointer[tl.f32], t_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32],
                               B: constexpr) -> None:
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        x = tl.load(x_ptr + offs)
        first = tl.load(t_ptr + pid + tl.arange(0, 1))  # a block of shape [1]
        if first > 0.0:
            x = x * 2.0
        else:
            x = x - 1.0
        n = tl.zeros((1,), tl.i32) + 3
        while n > 0:
            x = x + 0.5
            n = n - 1
        y = x + 1.0 if not (first > 0.5) else x - 1.0
        tl.store(o_ptr + offs, y)
""")

one_element_choice = _kernel("one_element_choice", """
    def one_element_choice(x_ptr: Pointer[tl.f32], t_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32],
                           B: constexpr) -> None:
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        x = tl.load(x_ptr + offs)
        low = tl.load(t_ptr + pid + tl.arange(0, 1)) <= 0.5  # a bool block of shape [1], kept in a name
        y = x + 1.0 if low else x - 1.0
        tl.store(o_ptr + offs, y)
""")

block_condition = _kernel("block_condition", """
    def block_condition(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
        x = tl.load(x_ptr + tl.arange(0, B))
        if x > 0.0:
            x = x * 2.0
        tl.store(o_ptr + tl.arange(0, B), x)
""")


def test_if_and_while_on_a_one_element_block(backend: str) -> None:
    """A block of shape [1] is a condition, read as its scalar (Triton's rule), in ``if``,
    ``while``, ``not`` and ``x if c else y``."""
    grid, b = 4, 16
    rng = _rng(1)
    x = rng.standard_normal(grid * b).astype(np.float32)
    t = rng.standard_normal(grid).astype(np.float32)
    want = x.astype(np.float64).reshape(grid, b).copy()
    for p in range(grid):
        want[p] = want[p] * 2.0 if t[p] > 0 else want[p] - 1.0
        want[p] += 1.5
        want[p] = want[p] + 1.0 if not t[p] > 0.5 else want[p] - 1.0
    with tl.backend(backend):
        out = tl.to_device(np.full(grid * b, np.nan, np.float32), tl.f32)
        one_element_conditions[(grid,)](tl.to_device(x, tl.f32), tl.to_device(t, tl.f32), out, B=b)
        np.testing.assert_allclose(out.numpy(), want.reshape(-1), rtol=1e-6)


def test_a_one_element_block_named_before_a_conditional_expression(backend: str) -> None:
    """The condition of ``x if c else y`` a [1] block made earlier: read as its scalar and spread
    over the block; the compiler's axis analysis crashed on the scalar it reshapes it to."""
    grid, b = 4, 16
    rng = _rng(3)
    x, t = rng.standard_normal(grid * b).astype(np.float32), rng.random(grid).astype(np.float32)
    want = np.where(np.repeat(t, b) <= 0.5, x.astype(np.float64) + 1.0, x.astype(np.float64) - 1.0)
    with tl.backend(backend):
        out = tl.to_device(np.full(grid * b, np.nan, np.float32), tl.f32)
        one_element_choice[(grid,)](tl.to_device(x, tl.f32), tl.to_device(t, tl.f32), out, B=b)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_a_larger_block_is_still_no_condition(backend: str) -> None:
    x = _rng(2).standard_normal(16).astype(np.float32)
    with tl.backend(backend), pytest.raises(KernelError, match=r"a block of shape \[16\] used as a condition") as err:
        block_condition[(1,)](tl.to_device(x, tl.f32), tl.to_device(np.full(16, np.nan, np.float32), tl.f32), B=16)
    assert err.value.lineno == block_condition.lineno + 3


# ---------------------------------------------------------------- .dtype of a Python number

constant_dtypes = _kernel("constant_dtypes", """
    def constant_dtypes(o_ptr: Pointer[tl.f64], x_ptr: Pointer[tl.f64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        one = 1
        big = 2**31 + 5
        wide = 2**40
        half = 0.5
        tiny = 1e-300
        flag = True
        x = tl.load(x_ptr + offs)
        tl.static_assert(one.dtype == tl.int32)
        tl.static_assert(big.dtype == tl.uint32)
        tl.static_assert(wide.dtype == tl.int64)
        tl.static_assert(half.dtype == tl.float32)
        tl.static_assert(tiny.dtype == tl.float64)
        tl.static_assert(flag.dtype == tl.int1)
        filled = tl.full([B], value=one, dtype=one.dtype)
        tl.store(o_ptr + offs, x * filled.to(tl.f64) + tl.full([B], half, half.dtype).to(tl.f64))
""")


def test_dtype_of_python_numbers(backend: str) -> None:
    """``value = 1; value.dtype`` is Triton's type of the constant (i32, u32, i64 by range; f32,
    f64 out of f32's range; int1), usable as ``tl.full``'s dtype (Triton's test_store_constant)."""
    x = _rng(3).standard_normal(16)
    with tl.backend(backend):
        out = tl.to_device(np.full(16, np.nan), tl.f64)
        constant_dtypes[(1,)](out, tl.to_device(x, tl.f64), B=16)
        np.testing.assert_allclose(out.numpy(), x + 0.5, rtol=1e-12)


# ---------------------------------------------------------------- isinstance

kinds_of_values = _kernel("kinds_of_values", """
    def kinds_of_values(x_ptr: Pointer[tl.i32], a_ptr: Pointer[tl.i32], b_ptr: Pointer[tl.i32], B: constexpr) -> None:
        x = tl.load(x_ptr + tl.arange(0, 2))
        a, b = tl.split(x)
        tl.static_assert(isinstance(a, tl.tensor))
        tl.static_assert(isinstance(b, (int, tl.Tensor)))
        tl.static_assert(not isinstance(a, tl.constexpr))
        tl.static_assert(isinstance(B, tl.constexpr))
        tl.static_assert(not isinstance(B, tl.tensor))
        tl.static_assert(isinstance(B, int))
        tl.static_assert(not isinstance(a, int))
        tl.static_assert(a.shape == [])
        tl.store(a_ptr, a + B)
        tl.store(b_ptr, b)
""")


def test_isinstance_in_a_kernel(backend: str) -> None:
    """A compile-time bool on both backends: tensors are ``tl.tensor`` (Triton's spelling) and
    ``tl.Tensor``, constexprs ``tl.constexpr`` and their Python type (Triton's test_split_to_scalar)."""
    x = _rng(4).integers(-1000, 1000, 2).astype(np.int32)
    with tl.backend(backend):
        a, b = (tl.to_device(np.full(1, -7777, np.int32), tl.i32) for _ in range(2))
        kinds_of_values[(1,)](tl.to_device(x, tl.i32), a, b, B=16)
        assert (int(a.numpy()[0]), int(b.numpy()[0])) == (int(x[0]) + 16, int(x[1]))


# ---------------------------------------------------------------- Python ints out of range

huge_operand = _kernel("huge_operand", """
    def huge_operand(o_ptr: Pointer[tl.i64]) -> None:
        huge: tl.constexpr = 0xFFFFFFFFFFFFFF
        x = tl.full((), 32, dtype=tl.int32)
        tl.store(o_ptr, x + huge)
""")

wide_operand = _kernel("wide_operand", """
    def wide_operand(o_ptr: Pointer[tl.i64], x_ptr: Pointer[tl.i64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + 0xFFFFFFFFFFFFFF)
""")


def test_a_python_int_out_of_the_block_type_is_an_error(backend: str) -> None:
    """``i32 + 0xFFFFFFFFFFFFFF`` is out of range (Triton's rule, test_scalar_overflow), not a
    promotion to i64; nothing is written."""
    with tl.backend(backend):
        out = tl.to_device(np.full(1, -5, np.int64), tl.i64)
        with pytest.raises(KernelError, match="out of range") as err:
            huge_operand[(1,)](out)
        np.testing.assert_array_equal(out.numpy(), [-5])
    assert err.value.lineno == huge_operand.lineno + 4


def test_a_python_int_within_the_block_type(backend: str) -> None:
    x = _rng(5).integers(-(2**40), 2**40, 16)
    with tl.backend(backend):
        out = tl.to_device(np.full(16, -5, np.int64), tl.i64)
        wide_operand[(1,)](out, tl.to_device(x, tl.i64), B=16)
        np.testing.assert_array_equal(out.numpy(), x + 0xFFFFFFFFFFFFFF)


# ---------------------------------------------------------------- integer <-> pointer casts

grouped_scale = _kernel("grouped_scale", """
    def grouped_scale(a_table: Pointer[tl.i64], c_table: Pointer[tl.u64], n_ptr: Pointer[tl.i32], B: constexpr) -> None:
        g = tl.program_id(0)
        a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
        c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.float32))
        n = tl.load(n_ptr + g)
        offs = tl.arange(0, B)
        a = tl.load(a_ptr + offs, mask=offs < n, other=0.0)
        tl.store(c_ptr + offs, a.to(tl.float32) * 3.0 + g, mask=offs < n)
""")


def _address(buffer: tl.Buffer[Any]) -> int:
    """Where a buffer's elements start: what ``t.data_ptr()`` gives for a torch tensor."""
    return int(buffer.data.ctypes.data)


def test_pointers_loaded_from_a_table(backend: str) -> None:
    """Triton's grouped GEMM: each program loads an address (a buffer the launch was not given),
    makes it a pointer with ``.to(tl.pointer_type(D))`` and loads and stores through it."""
    sizes = [16, 5, 11]
    rng = _rng(6)
    a_host = [rng.standard_normal(n).astype(np.float16) for n in sizes]
    with tl.backend(backend):
        a = [tl.to_device(x, tl.f16) for x in a_host]
        c = [tl.to_device(np.full(n, np.nan, np.float32), tl.f32) for n in sizes]
        a_table = tl.to_device(np.array([_address(x) for x in a], np.int64), tl.i64)
        c_table = tl.to_device(np.array([_address(x) for x in c], np.uint64), tl.u64)
        grouped_scale[(3,)](a_table, c_table, tl.to_device(np.array(sizes, np.int32), tl.i32), B=16)
        for g, (x, out) in enumerate(zip(a_host, c)):
            np.testing.assert_allclose(out.numpy(), x.astype(np.float64) * 3.0 + g, rtol=1e-6)


selected_pointers = _kernel("selected_pointers", """
    def selected_pointers(cond_ptr: Pointer[tl.i1], a_ptr: Pointer[tl.i64], b_ptr: Pointer[tl.i64],
                          o_ptr: Pointer[tl.i64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        decide = tl.load(cond_ptr + offs)
        a = tl.load(a_ptr + offs).to(tl.pi32_t)
        b = tl.load(b_ptr + offs).to(tl.pi32_t)
        tl.store(o_ptr + offs, tl.where(decide, a, b))
""")

selected_arguments = _kernel("selected_arguments", """
    def selected_arguments(cond_ptr: Pointer[tl.i1], a_ptr: Pointer[tl.i64], b_ptr: Pointer[tl.i64],
                           o_ptr: Pointer[tl.i64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        ptr = tl.where(tl.load(cond_ptr), a_ptr, b_ptr)
        same = ptr == a_ptr
        tl.store(o_ptr + offs, tl.load(ptr + offs) + same.to(tl.int64))
""")


def test_pointers_made_from_any_integers_and_selected(backend: str) -> None:
    """Triton's test_where pointer case: int64 values (no addresses) cast to ``tl.pi32_t``,
    selected by ``tl.where`` and stored back as their addresses; then ``tl.where`` between two
    arguments' pointers, compared and loaded through."""
    rng = _rng(7)
    cond = rng.random(16) < 0.5
    x, y = (rng.integers(-(2**62), 2**62, 16) for _ in range(2))
    with tl.backend(backend):
        args = [tl.to_device(cond, tl.i1), tl.to_device(x, tl.i64), tl.to_device(y, tl.i64)]
        out = tl.to_device(np.full(16, -3, np.int64), tl.i64)
        selected_pointers[(1,)](*args, out, B=16)
        np.testing.assert_array_equal(out.numpy(), np.where(cond, x, y))
        for first in (True, False):
            args[0] = tl.to_device(np.array([first] + [not first] * 15), tl.i1)
            selected_arguments[(1,)](*args, out, B=16)
            np.testing.assert_array_equal(out.numpy(), x + 1 if first else y)


round_trip = _kernel("round_trip", """
    def round_trip(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], a_ptr: Pointer[tl.i64], B: constexpr) -> None:
        offs = tl.arange(0, B)
        address = x_ptr.to(tl.int64) + 4 * offs.to(tl.int64)
        tl.store(a_ptr + offs, address)
        back = address.to(tl.pointer_type(tl.float32))
        tl.store(o_ptr + offs, tl.load(back) + tl.load(x_ptr + offs))
        bits = (x_ptr + 1).to(tl.pointer_type(tl.int32))
        tl.store(o_ptr + B, tl.load(bits).to(tl.float32, bitcast=True))
""")


def test_a_pointer_as_an_integer_and_back(backend: str) -> None:
    """``ptr.to(tl.int64)`` is its address; the address plus bytes, cast back, points at those
    elements; a pointer cast to another pointer type reads the same bytes."""
    x = _rng(8).standard_normal(16).astype(np.float32)
    with tl.backend(backend):
        xs = tl.to_device(x, tl.f32)
        out = tl.to_device(np.full(17, np.nan, np.float32), tl.f32)
        addresses = tl.to_device(np.full(16, -1, np.int64), tl.i64)
        round_trip[(1,)](xs, out, addresses, B=16)
        np.testing.assert_array_equal(addresses.numpy(), _address(xs) + 4 * np.arange(16))
        np.testing.assert_allclose(out.numpy(), np.append(2.0 * x.astype(np.float64), x[1]), rtol=1e-6)


narrow_address = _kernel("narrow_address", """
    def narrow_address(a_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.f32]) -> None:
        p = tl.load(a_ptr).to(tl.pointer_type(tl.float32))
        tl.store(o_ptr, tl.load(p))
""")


def test_only_64_bit_integers_are_addresses(backend: str) -> None:
    """The shared rule: an i32 is no address (Triton's casts go through 64-bit integers)."""
    with tl.backend(backend):
        args = (tl.to_device(np.zeros(1, np.int32), tl.i32), tl.to_device(np.full(1, np.nan, np.float32), tl.f32))
        with pytest.raises(KernelError, match=r"cannot cast tl.i32 to tl.Pointer\[tl.f32\]") as err:
            narrow_address[(1,)](*args)
    assert err.value.lineno == narrow_address.lineno + 2


past_the_end = _kernel("past_the_end", """
    def past_the_end(table: Pointer[tl.i64], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        p = tl.load(table).to(tl.pointer_type(tl.float32))
        offs = tl.arange(0, B)
        tl.store(o_ptr + offs, tl.load(p + offs, mask=offs < n))
""")


def test_the_reference_bounds_checks_pointers_made_from_integers() -> None:
    """Each address is looked up in the live arrays: a lane past its array's end is the usual
    out-of-bounds error, an address in no array a KernelError at the line; nothing is written."""
    with tl.backend("numpy"):
        x = tl.to_device(_rng(9).standard_normal(10).astype(np.float32), tl.f32)
        out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        table = tl.to_device(np.array([_address(x)], np.int64), tl.i64)
        past_the_end[(1,)](table, out, 10, B=16)
        np.testing.assert_array_equal(out.numpy()[:10], x.numpy())
        with pytest.raises(KernelError, match=r"out-of-bounds load through the NumPy array at 0x[0-9a-f]+: .*offset 10"):
            past_the_end[(1,)](table, out, 11, B=16)
        nowhere = tl.to_device(np.array([8], np.int64), tl.i64)
        with pytest.raises(KernelError, match="address 0x8 .* lies in no buffer of the launch") as err:
            past_the_end[(1,)](nowhere, out, 1, B=16)
        assert err.value.lineno == past_the_end.lineno + 4
        np.testing.assert_array_equal(out.numpy()[:10], x.numpy())


lane_addresses = _kernel("lane_addresses", """
    def lane_addresses(table: Pointer[tl.i64], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        offs = tl.arange(0, B)
        p = tl.load(table + offs).to(tl.pointer_type(tl.float32))
        got = tl.load(p, mask=offs < n, other=-1.0)
        tl.store(p, got * 10.0, mask=offs < n)
        tl.atomic_add(p, 1.0, mask=offs < n)
        tl.store(o_ptr + offs, got)
""")


def test_lanes_pointing_into_different_buffers(backend: str) -> None:
    """Each lane's address in another buffer (or element): loads, stores and atomics through
    them, masked lanes untouched, as on the GPU."""
    rng = _rng(10)
    xs = [rng.standard_normal(8).astype(np.float32) for _ in range(2)]
    lanes = [(i % 2, int(j)) for i, j in zip(range(16), rng.permutation(16) % 8)]
    lanes = list(dict.fromkeys(lanes))[:12]  # distinct elements, so stores and atomics do not collide
    n = len(lanes)
    with tl.backend(backend):
        bufs = [tl.to_device(x, tl.f32) for x in xs]
        addresses = [_address(bufs[b]) + 4 * j for b, j in lanes] + [0] * (16 - n)  # masked-off lanes: no address
        out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        lane_addresses[(1,)](tl.to_device(np.array(addresses, np.int64), tl.i64), out, n, B=16)
        want_out = np.array([xs[b][j] for b, j in lanes] + [-1.0] * (16 - n))
        np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-6)
        for b, x in enumerate(xs):
            want = x.astype(np.float64).copy()
            for lb, j in lanes:
                if lb == b:
                    want[j] = want[j] * 10.0 + 1.0
            np.testing.assert_allclose(bufs[b].numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("fake_alive", [False, True])
def test_addresses_of_torch_tensors_on_the_reference(fake_alive: bool) -> None:
    """Grouped GEMM's host side: ``torch.tensor([t.data_ptr() for t in A])``, the tensors not
    passed to the launch (one a view into a larger tensor); the reference finds each, also while
    tensors without real storage are alive (a FakeTensor, as torch.library's fake kernels leave:
    asking its storage raises, and the lookup passes over it)."""
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fakes = [torch.empty(8)] if fake_alive else []
    gen = torch.Generator().manual_seed(11)
    big = torch.randn(64, generator=gen).to(torch.float16)
    a = [torch.randn(n, generator=gen).to(torch.float16) for n in (16, 5)] + [big[10:]]
    c = [torch.full((16,), float("nan"), dtype=torch.float32) for _ in a]
    sizes = torch.tensor([16, 5, 16], dtype=torch.int32)
    with tl.backend("numpy"):
        c_table = np.array([t.data_ptr() for t in c], np.uint64)  # (torch has no uint64 tensors to adopt)
        grouped_scale[(3,)](torch.tensor([t.data_ptr() for t in a]), c_table, sizes, B=16)
    for g, (x, out) in enumerate(zip(a, c)):
        n = int(sizes[g])
        want = x[:n].double().numpy() * 3.0 + g
        np.testing.assert_allclose(out[:n].numpy(), want, rtol=1e-6)
        assert bool(torch.isnan(out[n:]).all())
    assert len(fakes) == int(fake_alive)


masked_table = _kernel("masked_table", """
    def masked_table(table: Pointer[tl.i64], n_ptr: Pointer[tl.i32], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
        pid = tl.program_id(0)
        offs = tl.arange(0, B)
        acc = tl.zeros((B,), tl.float32)
        i = 0
        while i < tl.load(n_ptr + pid):  # programs leave the loop at different trips
            p = tl.load(table + i).to(tl.pointer_type(tl.float32))
            tl.multiple_of(p, 16)
            acc += tl.load(p + offs)
            i += 1
        tl.store(o_ptr + pid * B + offs, acc)
""")


def test_pointers_made_in_a_divergent_loop(backend: str) -> None:
    """Programs that left a loop (masked off on the reference) do not spoil the cast of those
    still in it: the pointers stay into the one buffer the executing programs' addresses are in,
    and its alignment promise holds."""
    rng = _rng(12)
    xs = [rng.standard_normal(16).astype(np.float32) for _ in range(3)]
    trips = np.array([3, 1, 0, 2], np.int32)
    with tl.backend(backend):
        bufs = [tl.to_device(x, tl.f32) for x in xs]
        table = tl.to_device(np.array([_address(b) for b in bufs], np.int64), tl.i64)
        out = tl.to_device(np.full(64, np.nan, np.float32), tl.f32)
        masked_table[(4,)](table, tl.to_device(trips, tl.i32), out, B=16)
    want = np.stack([sum((xs[i].astype(np.float64) for i in range(t)), np.zeros(16)) for t in trips])
    np.testing.assert_allclose(out.numpy().reshape(4, 16), want, rtol=1e-6)


descriptor_from_table = _kernel("descriptor_from_table", """
    def descriptor_from_table(table: Pointer[tl.i64], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
        pid = tl.program_id(0)
        base = tl.load(table + pid).to(tl.pointer_type(tl.float32))
        desc = tl.make_tensor_descriptor(base, shape=[B, B], strides=[B, 1], block_shape=[B, B])
        tile = desc.load([0, 0])
        offs = tl.arange(0, B)
        tl.store(o_ptr + pid * B * B + offs[:, None] * B + offs[None, :], tile + 1.0)
""")


def test_descriptors_over_pointers_made_from_integers(backend: str) -> None:
    """A tensor descriptor over an address from a table: on both backends when every program's
    address is in one buffer; the reference refuses bases in different buffers, clearly."""
    rng = _rng(13)
    x = rng.standard_normal((2, 16, 16)).astype(np.float32)
    with tl.backend(backend):
        whole = tl.to_device(x, tl.f32)
        table = tl.to_device(_address(whole) + 4 * 256 * np.arange(2, dtype=np.int64), tl.i64)
        out = tl.to_device(np.full(512, np.nan, np.float32), tl.f32)
        descriptor_from_table[(2,)](table, out, B=16)
        np.testing.assert_allclose(out.numpy().reshape(2, 16, 16), x.astype(np.float64) + 1.0, rtol=1e-6)
    if backend == "numpy":
        with tl.backend(backend):
            parts = [tl.to_device(x[i], tl.f32) for i in range(2)]
            table = tl.to_device(np.array([_address(p) for p in parts], np.int64), tl.i64)
            with pytest.raises(KernelError, match="pointer made from an integer, and the executing programs' addresses"):
                descriptor_from_table[(2,)](table, out, B=16)


descriptor_per_group = _kernel("descriptor_per_group", """
    def descriptor_per_group(table: Pointer[tl.i64], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:
        pid = tl.program_id(0)
        last = 0
        for g in range(n):
            if pid >= last and pid < last + 2:  # tutorial 08's TMA kernel: two programs a group
                base = tl.load(table + g).to(tl.pointer_type(tl.float32))
                desc = tl.make_tensor_descriptor(base, shape=[B, B], strides=[B, 1], block_shape=[B, B])
                offs = tl.arange(0, B)
                tl.store(o_ptr + pid * B * B + offs[:, None] * B + offs[None, :], desc.load([0, 0]) + pid)
            last += 2
""")


def test_descriptors_over_a_table_under_a_branch(backend: str) -> None:
    """Each group's base pointer, chosen under a branch: on the reference the variable holds
    pointers into different buffers after the first group, and each descriptor is still made
    over the one buffer its executing programs' addresses lie in."""
    xs = [_rng(14 + i).standard_normal((16, 16)).astype(np.float32) for i in range(3)]
    with tl.backend(backend):
        bufs = [tl.to_device(x, tl.f32) for x in xs]
        table = tl.to_device(np.array([_address(b) for b in bufs], np.int64), tl.i64)
        out = tl.to_device(np.full(6 * 256, np.nan, np.float32), tl.f32)
        descriptor_per_group[(6,)](table, out, 3, B=16)
    want = np.stack([xs[p // 2].astype(np.float64) + p for p in range(6)])
    np.testing.assert_allclose(out.numpy().reshape(6, 16, 16), want, rtol=1e-6)
