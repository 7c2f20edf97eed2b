"""Hand-written kernels in the idioms of real Triton code, probing the CUDA backend where the
fuzzer does not reach: each runs on the NumPy reference and on the generated CUDA under the CPU
emulator (sm_80, and sm_90a where the code differs), outputs poisoned first, against NumPy in
float64 or Python ints. Each test here is a silent wrong result one backend gave, kept reduced."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, dtypes, f32

from tests.compiler.emulator import EMULATOR
from tests.fuzz.runner import load

pytestmark = pytest.mark.skipif(EMULATOR.unavailable_reason() is not None,
                                reason=str(EMULATOR.unavailable_reason()))
Array = np.ndarray[Any, Any]
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _from_source(name: str, source: str) -> Any:
    """A kernel generic over its element types (the typing gate wants one per dtype), imported
    from a file as the fuzzer's kernels are."""
    header = "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
    return load(name, header + textwrap.dedent(source).lstrip())


# ---------------------------------------------------------------- float -> integer casts

float_to_ints = _from_source("hw_float_to_ints", """
    def hw_float_to_ints(x_ptr, i8, i16, i32, i64, u8, u16, u32, u64, B: constexpr):
        offs = tl.arange(0, B)
        x = tl.load(x_ptr + offs)  # a quantizer's `x.to(tl.int8)`, out of range on purpose
        tl.store(i8 + offs, x.to(tl.int8))
        tl.store(i16 + offs, x.to(tl.int16))
        tl.store(i32 + offs, x.to(tl.int32))
        tl.store(i64 + offs, x.to(tl.int64))
        tl.store(u8 + offs, x.to(tl.uint8))
        tl.store(u16 + offs, x.to(tl.uint16))
        tl.store(u32 + offs, x.to(tl.uint32))
        tl.store(u64 + offs, x.to(tl.uint64))
""")

EDGES = [np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -300.7, 200.5, -1.5, 2.5, 3e9, -3e9, 1e20, -0.9, 127.9, -128.9,
         40000.5, -40000.5, 65535.9, 70000.0, 2.0**31, -(2.0**31) - 512, 2.0**63, 2.0**64, -(2.0**63), 0.0, -0.0,
         1e-30, 255.5, 256.0, 32767.5, -32768.5]


def _saturated(x: Array, name: str) -> list[int]:
    """Truncated toward zero, saturated to ``name``'s range, NaN giving 0 (the reference's rule,
    docs/reference-backend.md)."""
    info = np.iinfo(name)
    values = [float(v) for v in x.astype(np.float64)]  # Python floats: compared with ints exactly
    return [0 if v != v else min(max(int(v), int(info.min)), int(info.max)) if abs(v) != float("inf")
            else int(info.max if v > 0 else info.min) for v in values]


@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16"])
def test_float_to_int_casts_saturate_and_take_nan_to_zero(backend: str, source: str) -> None:
    """Were C++ static_casts, undefined out of range: on the GPU an 8- or 16-bit target went
    through cvt.rzi.s32/u32 and kept the low bits (300.7 -> int8 gave 44, not 127), and on the
    emulator every width took x86's answer (NaN -> int32 gave INT_MIN, not 0)."""
    with np.errstate(all="ignore"), tl.backend(backend):
        x = np.array(EDGES, np.float64).astype(dtypes.numpy_dtype(source))
        outs = [tl.to_device(np.full(len(EDGES), 77, name)) for name in INTS]
        float_to_ints[(1,)](tl.to_device(x), *outs, B=len(EDGES))
        for name, out in zip(INTS, outs):
            assert out.numpy().tolist() == _saturated(x, name), (source, name)


# ---------------------------------------------------------------- a block store, then a scalar load

@tl.kernel
def stored_then_read_as_scalar(p_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int, B: constexpr) -> None:
    """Each iteration reads the first element of the block the previous one stored (a running
    scan over chunks, its carry read back as a scalar): lane 0 stored it, and the reference's
    scalar lane is lane 0, so no race."""
    offs = tl.arange(0, B)
    acc = tl.zeros((B,), tl.float32)
    for i in range(n):
        carry = tl.load(p_ptr + i * B)
        acc += tl.load(p_ptr + i * B + offs) + carry
        tl.store(p_ptr + (i + 1) * B + offs, acc)
    tl.store(o_ptr + offs, acc + tl.load(p_ptr + n * B))


@pytest.mark.parametrize("block, warps", [(16, 4), (64, 2), (128, 4), (256, 1)])
def test_a_scalar_load_reads_the_block_lane_zero_stored(backend: str, block: int, warps: int) -> None:
    """Every thread runs a scalar load, but only thread 0 had stored the element: with no barrier
    between, the other threads read the old value (3 of 640 elements of the buffer and 1 of the
    128 outputs wrong, 128 elements and 4 warps)."""
    n = 4
    p = np.random.default_rng(block).standard_normal((n + 1) * block).astype(np.float32)
    want, acc = p.astype(np.float64), np.zeros(block)
    for i in range(n):
        acc = acc + want[i * block:(i + 1) * block] + want[i * block]
        want[(i + 1) * block:(i + 2) * block] = acc
    with tl.backend(backend):
        buffer, out = tl.to_device(p), tl.to_device(np.full(block, np.nan, np.float32))
        stored_then_read_as_scalar[(1,), tl.Options(num_warps=warps)](buffer, out, n, B=block)
        np.testing.assert_allclose(buffer.numpy(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out.numpy(), acc + acc[0], rtol=1e-5, atol=1e-5)


@tl.kernel
def scalar_loads_beside_stores(x_ptr: Pointer[f32], scale_ptr: Pointer[f32], o_ptr: Pointer[f32], n: int,
                               B: constexpr) -> None:
    """A scalar per row read from another argument than the one stored to: no barrier needed."""
    offs = tl.arange(0, B)
    for i in range(n):
        tl.store(o_ptr + i * B + offs, tl.load(x_ptr + i * B + offs) * tl.load(scale_ptr + i))


def test_scalar_loads_of_another_argument_get_no_barrier() -> None:
    """The barrier goes only where a scalar load may read a stored block's buffer (same kernel
    argument, or one not known), or a block store overwrite what a scalar load read, so a loop
    storing rows scaled by per-row scalars keeps none (the running scan: before each scalar load,
    and before each store over the buffer the carry was read from)."""
    from tile_lang.compiler import compile_ir
    from tile_lang.compiler.ir import Op, walk
    from tile_lang.compiler.spec import ArgSpec, Spec, int_spec

    pointer = ArgSpec(dtypes.F32.pointer_to(), True)
    for kernel, args in ((scalar_loads_beside_stores, (pointer, pointer, pointer, int_spec(4))),
                         (stored_then_read_as_scalar, (pointer, pointer, int_spec(4)))):
        fn = compile_ir(kernel, Spec(args, (("B", 64),), 4, 3, 80))
        barriers = sum(node.op is Op.BARRIER for node in walk(fn.body))
        assert barriers == (0 if kernel is scalar_loads_beside_stores else 3), kernel
