"""Triton code run unmodified on tile_lang: each script here is written the way Triton code is
(``import triton``, ``@triton.jit``, unannotated parameters, NumPy arrays launched) and runs in a
subprocess through ``python -m tile_lang.as_triton``, on the NumPy reference. Each checks its
outputs, poisoned with NaN first, against float64 NumPy, and prints ``ok``."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tile_lang import registry

HEADER = '''
import numpy as np
import triton
import triton.language as tl

rng = np.random.default_rng(7)


def check(out, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=rtol, atol=atol)
'''

SCRIPTS = {
    "dtype_annotations": '''
# scalars annotated with a dtype, as vLLM writes its strides: passed as that dtype
@triton.jit
def gather_rows(x_ptr, out_ptr, rows_ptr, row_stride: tl.int64, n_cols, scale: tl.float32, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.load(rows_ptr + pid)
    tl.static_assert(row_stride.dtype == tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols)
    tl.store(out_ptr + pid * row_stride + cols, x * scale, mask=cols < n_cols)


x = rng.standard_normal((6, 40)).astype(np.float32)
rows = rng.permutation(6).astype(np.int32)
out = np.full_like(x, np.nan)
gather_rows[(6,)](x, out, rows, x.shape[1], 40, 0.5, BLOCK=64)
check(out, x[rows].astype(np.float64) * 0.5)
''',
    "autotuner_module_idioms": '''
# what flash-linear-attention's import needs: Triton's triton.runtime.autotuner module (a library's
# Autotuner subclass reading user_defined_pre_hook, run through super().run), a constexpr
# defaulting to triton.language.core.CONSTEXPR_0, and the names torch._inductor imports
import triton.compiler.compiler
from triton.compiler import CompiledKernel
from triton.runtime.autotuner import Autotuner, OutOfResources, autotune, heuristics

assert isinstance(triton.compiler.compiler.triton_key(), str)
assert OutOfResources is triton.OutOfResources and autotune is triton.autotune and heuristics is triton.heuristics


class CountingAutotuner(Autotuner):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs)
        assert not self.user_defined_pre_hook and not self.user_defined_post_hook
        self.runs = 0

    def run(self, *args, **kwargs):
        self.runs += 1
        return super().run(*args, **kwargs)


def counting_autotune(configs, key):
    return lambda fn: CountingAutotuner(fn, fn.arg_names, configs, key, None, None)


@counting_autotune([triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def flip_sign(x_ptr, out_ptr, n, BLOCK: tl.constexpr, NEGATE: tl.constexpr = tl.core.CONSTEXPR_0):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, -x if NEGATE else x, mask=offs < n)


x = rng.standard_normal(50).astype(np.float32)
for negate in (False, True):
    out = np.full_like(x, np.nan)
    kwargs = {"NEGATE": True} if negate else {}
    handle = flip_sign[lambda meta: (triton.cdiv(50, meta["BLOCK"]),)](x, out, 50, **kwargs)
    assert isinstance(handle, CompiledKernel), type(handle)
    check(out, -x.astype(np.float64) if negate else x.astype(np.float64))
assert flip_sign.runs == 2 and flip_sign.best_config.kwargs["BLOCK"] in (16, 32)
''',
    "library_idioms": '''
# what an operator library's kernels write (FlagGems): a scalar annotated with a dtype, and
# triton.language.standard._log2 counting the stages of a bitonic sort
from triton.language.standard import _log2


@triton.jit
def shifted_copy(x_ptr, out_ptr, start: tl.int64, n: tl.int32, scale: tl.float32, B: tl.constexpr):
    stages: tl.constexpr = _log2(B)
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < n
    tl.store(out_ptr + start + offs, tl.load(x_ptr + offs, mask=mask) * scale + stages, mask=mask)


assert [_log2(v) for v in (1, 2, 3, 8, 1024, 1025)] == [0, 1, 1, 3, 10, 10]
x = rng.standard_normal(50).astype(np.float32)
out = np.full(57, np.nan, np.float32)
shifted_copy[(4,)](x, out, 7, 50, 0.5, B=16)
check(out[7:], x.astype(np.float64) * 0.5 + 4)
assert np.isnan(out[:7]).all()


# a dtype parameter annotated `tl.dtype` (Unsloth's grouped GEMM), a constexpr defaulting to a dtype
@triton.jit
def converted(x_ptr, out_ptr, n, OUT: tl.dtype, B: tl.constexpr, ACC: tl.constexpr = tl.float32):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs, mask=offs < n).to(ACC) * 3.0
    tl.static_assert(v.dtype == ACC)
    tl.store(out_ptr + offs, v.to(OUT), mask=offs < n)


out16 = np.full(50, np.nan, np.float16)
converted[(4,)](x, out16, 50, tl.float16, B=16)
check(out16, (x.astype(np.float64) * 3.0).astype(np.float16).astype(np.float64))
''',
    "optional_scalars_and_option_params": '''
# vLLM's spellings: a stride annotated `int | None = None` (None a compile-time None, an int an int),
# a parameter named like a launch option (`launch_pdl: tl.constexpr`, launched with launch_pdl=)
@triton.jit
def scaled_rows(x_ptr, out_ptr, s_ptr, n_cols, s_stride: int | None = None, launch_pdl: tl.constexpr = False,
                BLOCK: tl.constexpr = 64):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    if s_stride is not None:
        x = x * tl.load(s_ptr + row * s_stride)
    if launch_pdl:
        x = -x
    tl.store(out_ptr + row * n_cols + cols, x, mask=cols < n_cols)


x = rng.standard_normal((5, 40)).astype(np.float32)
s = rng.standard_normal((5, 3)).astype(np.float32)
for stride, pdl in ((None, False), (3, True)):
    out = np.full_like(x, np.nan)
    scaled_rows[(5,)](x, out, s, 40, s_stride=stride, launch_pdl=pdl)
    want = x.astype(np.float64) * (1.0 if stride is None else s[:, :1].astype(np.float64))
    check(out, -want if pdl else want)
assert [p.name for p in scaled_rows.params][-2:] == ["launch_pdl", "BLOCK"]


# a class of another library as an annotation (Triton's test_annotations: `X: torch.Tensor`), which
# Triton reads as none: the parameter is typed by its argument
class Array:
    pass


@triton.jit
def negated(X: Array, out_ptr, n: int, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, -tl.load(X + offs, mask=offs < n), mask=offs < n)


out = np.full(40, np.nan, np.float32)
negated[(1,)](x[0], out, 40, BLOCK=64)
check(out, -x[0].astype(np.float64))
''',
    "runtime_protocol": '''
# a library's own launch layers over Triton's runtime objects, as FlagGems writes them: a KernelInterface
# caching each specialisation's handle and relaunching it with every argument positional, an Autotuner
# subclass choosing by _bench, heuristics, a grid reading a runtime argument, a `tl.tensor` annotation
import inspect
from triton.runtime.driver import driver
import triton.language.core as core

assert driver.active.get_benchmarker() is triton.testing.do_bench


class Dispatch(triton.KernelInterface):
    def __init__(self, fn):
        self.fn, self.handles = fn, {}
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        self.jit = jit

    def run(self, *args, grid, warmup=False, **kwargs):
        key = tuple(a if isinstance(a, int) else a.dtype.str for a in args)
        if key not in self.handles:
            handle = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
            consts, fn = {}, self.fn
            while not isinstance(fn, triton.runtime.JITFunction):
                if isinstance(fn, triton.runtime.Autotuner):
                    consts.update(fn.best_config.kwargs)
                elif isinstance(fn, triton.runtime.Heuristics):
                    consts.update({k: rule({**dict(zip(fn.arg_names, args)), **consts}) for k, rule in fn.values.items()})
                fn = fn.fn
            self.handles[key] = (handle, consts)
            return handle
        handle, consts = self.handles[key]
        named = {**dict(zip(self.jit.arg_names, args)), **consts}
        g = grid(named) if callable(grid) else grid
        handle[g](*[named[p.name] for p in self.jit.params])
        return handle


class Fastest(triton.runtime.Autotuner):
    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        times = {c: self._bench(*args, config=c, **kwargs) for c in self.prune_configs(kwargs)}
        self.best_config = min(times, key=lambda c: times[c][0])
        return self.fn.run(*args, **kwargs, **self.best_config.all_kwargs())


def fastest(configs, key):
    return lambda fn: Fastest(fn, fn.arg_names, configs, key, None, None)


@triton.jit
def cast_to(x, dtype: tl.constexpr):
    return x.to(core.get_int_dtype(dtype.primitive_bitwidth, True))


@Dispatch
@fastest([triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@triton.jit
def affine(x_ptr: tl.tensor, out_ptr, n, scale, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = None if EVEN else offs < n
    tl.store(out_ptr + offs, cast_to(tl.load(x_ptr + offs, mask=mask) * scale, tl.float32), mask=mask)


jit = affine.jit
assert [(p.num, p.name, p.is_constexpr) for p in jit.params][-2:] == [(4, "BLOCK", True), (5, "EVEN", True)]
assert jit.arg_names == list(inspect.signature(jit.fn).parameters) and jit.__globals__ is globals()
assert len({triton.Config({"B": 1}), triton.Config({"B": 1})}) == 1  # hashable by value, as timings are keyed
for n in (100, 128, 77):  # first launch tunes; the repeat relaunches the cached handle
    for _ in range(2):
        x = rng.integers(-50, 50, n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        affine[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, n, 3)
        check(out, (x * 3).astype(np.float64))
''',
    "patched_source": '''
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0 + 1.0, mask=offs < n)


# Triton's test_core patch_kernel on the compiled path: a fresh JITFunction of the template,
# its text edited before the first launch
patched = triton.JITFunction(scale_kernel.fn)
patched._unsafe_update_src(patched.src.replace("* 2.0", "* -3.0"))
assert patched.src.startswith("def scale_kernel(") and "* -3.0" in patched.src
n = 50
x = rng.standard_normal(n).astype(np.float32)
for kernel, factor in ((patched, -3.0), (scale_kernel, 2.0)):  # the template itself is unchanged
    out = np.full(64, np.nan, np.float32)
    kernel[(1,)](x, out, n, BLOCK=64)
    check(out[:n], x.astype(np.float64) * factor + 1.0)
    assert np.isnan(out[n:]).all()
''',
    "patched_closure": '''
# Triton's test_scan2d: the template names a local of the test function (`z`) that its patched text
# binds; triton.JITFunction(template.fn) takes the closure and the launch compiles the new text
def make(n, factor):
    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        GENERATE_TEST_HERE
        tl.store(out_ptr + offs, z, mask=offs < n)

    z = None  # noqa: F841 (what the template's `z` names before the patch)
    patched = triton.JITFunction(kernel.fn)
    patched._unsafe_update_src(patched.src.replace("GENERATE_TEST_HERE", f"z = x * {factor}"))
    return patched


n = 40
x = rng.standard_normal(n).astype(np.float32)
out = np.full(64, np.nan, np.float32)
make(n, 5.0)[(1,)](x, out, n, BLOCK=64)
check(out[:n], x.astype(np.float64) * 5.0)
assert np.isnan(out[n:]).all()
''',
    "vector_add": '''
@triton.jit
def leaky(x):
    return tl.where(x >= 0, x, 0.125 * x)


@triton.jit(do_not_specialize=["n"])
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, leaky(x) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 1000
x = rng.standard_normal(n).astype(np.float32)
y = rng.standard_normal(n).astype(np.float32)
out = np.full(n, np.nan, np.float32)
add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=128)
x64 = x.astype(np.float64)
check(out, np.where(x64 >= 0, x64, 0.125 * x64) + y)
''',
    "softmax": '''
@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


rows, cols = 13, 97
x = rng.standard_normal((rows, cols + 3)).astype(np.float32)[:, :cols]  # rows strided by 100
out = np.full((rows, cols), np.nan, np.float32)
block = triton.next_power_of_2(cols)
assert block == 128 and triton.next_power_of_2(128) == 128 and triton.next_power_of_2(1) == 1
softmax_kernel[(rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, cols, BLOCK=block, num_warps=4)
e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
check(out, e / e.sum(axis=1, keepdims=True))
''',
    "autotune": '''
@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=2), triton.Config({"BLOCK": 128}, num_warps=4)],
                 key=["n"])
@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


for n in (300, 1001):  # two key values: each is tuned
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, 1.5, n)
    check(out, 1.5 * x.astype(np.float64) + y)
assert len(axpy_kernel.cache) == 2
''',
    "heuristics": '''
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, x * x)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, x * x, mask=offs < n)


for n in (256, 250):  # EVEN, then not: the unmasked branch would read past 250
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    square_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
    check(out, x.astype(np.float64) ** 2)
''',
    "test_helpers": '''
from triton import knobs
from triton.compiler.errors import CompilationError
from triton.runtime.errors import InterpreterError
from triton.runtime.jit import reinterpret, type_canonicalisation_dict

assert CompilationError is triton.CompilationError and issubclass(CompilationError, triton.TritonError)
major, minor = knobs.nvidia.ptxas.version.split(".")  # Triton's helpers parse it so, asking whether TMA is there
assert int(major) >= 0 and int(minor) >= 0
assert [tl.str_to_ty(type_canonicalisation_dict[n], None) for n in ("float32", "uint8", "bool", "bfloat16")] == [
    tl.float32, tl.uint8, tl.int1, tl.bfloat16]
assert isinstance(tl.uint32, tl.dtype) and isinstance(tl.float16, tl.dtype)
assert not isinstance(3, tl.dtype) and not isinstance([tl.float32], tl.dtype)


@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


signed = rng.integers(-2**31, 2**31 - 1, 100).astype(np.int32)  # negatives: the bits matter
x = reinterpret(signed, tl.uint32)
out = np.full(100, 7, np.uint32)
add_one[(1,)](x, out, 100, BLOCK=128)
assert x.dtype == np.uint32 and (out.astype(np.int64) == signed.view(np.uint32).astype(np.int64) + 1).all()


@triton.jit
def positive(x_ptr):
    tl.device_assert(tl.load(x_ptr) > 0, "must be positive")


try:
    positive[(1,)](np.zeros(1, np.float32))
except InterpreterError as e:  # the reference's errors while running a kernel
    assert "must be positive" in str(e)
else:
    raise AssertionError("no error")
''',
    "compiled_handle": '''
from tile_lang.as_triton.compiled import REFERENCE_REGS


@triton.jit
def normalise_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row * n + offs, x / tl.sum(x * x, axis=0), mask=offs < n)


rows, n = 3, 50
x = rng.standard_normal((rows, n)).astype(np.float32)
expected = x.astype(np.float64) / (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True)
out = np.full((rows, n), np.nan, np.float32)
# Triton's warmup: compiled, not launched (out stays NaN); the handle launches later, constexprs positional
handle = normalise_kernel.warmup(out, x, n, BLOCK=64, num_warps=2, grid=(1,))
assert np.isnan(out).all()
handle._init_handles()
assert handle.name == "normalise_kernel" and handle.n_regs == REFERENCE_REGS and handle.n_spills == 0
assert handle.metadata.shared == handle.compiled.source.dynamic_shared > 0  # the reduction's scratch
assert handle.metadata.num_warps == 2 and "normalise_kernel" in handle.asm["cuda"]
handle[(rows, 1, 1)](out, x, n, 64)
check(out, expected)
# a launch returns the handle of what it ran; Triton's compiler-only keywords are accepted and dropped
out[:] = np.nan
ran = normalise_kernel[(rows,)](out, x, n, BLOCK=64, extern_libs={"libdevice": "/nowhere.bc"}, maxnreg=128)
check(out, expected)
assert ran.name == "normalise_kernel" and ran.metadata.shared == handle.metadata.shared
# a warmup repeated for one specialisation (tutorial 02 warms up before every launch) is compiled once
again = normalise_kernel.warmup(out, x, n, BLOCK=64, num_warps=2, grid=(1,))
assert again.compiled is handle.compiled
assert normalise_kernel.warmup(out, x, n, BLOCK=128, num_warps=2, grid=(1,)).compiled is not handle.compiled
assert normalise_kernel.warmup(out, x, n, BLOCK=64, num_warps=4, grid=(1,)).compiled is not handle.compiled
''',
    "device_queries": '''
from triton.runtime import driver

props = driver.active.utils.get_device_properties(0)
assert props["multiprocessor_count"] == 108 and props["max_num_regs"] == 65536 and props["warpSize"] == 32
assert props["max_shared_mem"] == 166912 and {"sm_clock_rate", "mem_clock_rate", "mem_bus_width"} <= set(props)
target = driver.active.get_current_target()
assert (target.backend, target.arch, target.warp_size) == ("cuda", 80, 32)
try:
    driver.active.utils.fill_2d_tma_descriptor
except AttributeError as e:
    assert "utils.fill_2d_tma_descriptor is not provided" in str(e) and "tl.make_tensor_descriptor" in str(e)
else:
    raise AssertionError("no error")
''',
    "autotune_keys_and_hooks": '''
@triton.autotune(configs=[triton.Config({"BLOCK": 32}, maxnreg=64), triton.Config({"BLOCK": 64})],
                 key=["n", "no_such_parameter"])  # Triton ignores a key naming no parameter
@triton.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = rng.standard_normal(100).astype(np.float32)
out = np.full(100, np.nan, np.float32)
twice_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, out, 100)
check(out, 2 * x.astype(np.float64))
assert len(twice_kernel.cache) == 1


from triton.tools.tensor_descriptor import TensorDescriptor

desc = TensorDescriptor(x, shape=[100], strides=[1], block_shape=[1])
hooked = []


def set_block_shape(nargs):  # tutorial 06's pre_hook: the host descriptor's block shape from the config
    hooked.append((nargs["n"], nargs["BLOCK"], nargs["num_warps"]))
    desc.block_shape = [nargs["BLOCK"]]


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=1, pre_hook=set_block_shape),
                          triton.Config({"BLOCK": 16}, num_warps=1)], key=["n"])
@triton.jit
def narrow_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 32)  # the second config does not fit: skipped, as Triton skips it
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 3 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


out = np.full(100, np.nan, np.float32)
narrow_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, out, 100)
check(out, 3 * x.astype(np.float64))
assert hooked == [(100, 32, 1)] and desc.block_shape == [32] and narrow_kernel.best_config.kwargs == {"BLOCK": 32}

timings, blocks = [], []


def bench(call, quantiles):  # Triton's do_bench protocol: the launch timed, one time (ms) per quantile
    call()
    timings.append(quantiles)
    return [3.0 - len(timings)] * len(quantiles)  # each config timed faster than the last


def note_block(nargs, reset_only=False):  # Triton's user pre_hook, also called once with reset_only
    blocks.append((nargs["BLOCK"], reset_only))


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"], do_bench=bench,
                 pre_hook=note_block)
@triton.jit
def timed_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 4 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


out = np.full(100, np.nan, np.float32)
timed_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, out, 100)
check(out, 4 * x.astype(np.float64))
assert len(timings) == 2 and timed_kernel.best_config.kwargs == {"BLOCK": 64}, (timings, timed_kernel.best_config)
assert blocks == [(32, False), (64, False), (64, True)], blocks
''',
    "dtype_names_and_fp8_variants": '''
from triton.language import dtype
from triton.runtime.errors import InterpreterError

# Triton's tables of its dtype names, and a dtype made from its name (test_core's parametrisations)
assert list(map(tl.dtype, tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.STANDARD_FP_TYPES)) == [
    tl.int8, tl.int16, tl.int32, tl.int64, tl.int1, tl.uint8, tl.uint16, tl.uint32, tl.uint64,
    tl.float16, tl.bfloat16, tl.float32, tl.float64]
assert tl.dtype("fp8e4b15") is tl.float8e4b15 and dtype.OTHER_TYPES == ["void"] and len(dtype.FP_TYPES) == 9
# Triton's other fp8 formats exist, compare and answer Triton's attributes
for variant, name, mantissa, bias in ((tl.float8e4b15, "fp8e4b15", 3, 15), (tl.float8e4b8, "fp8e4b8", 3, 8),
                                      (tl.float8e5b16, "fp8e5b16", 2, 16)):
    assert isinstance(variant, tl.dtype) and variant == variant and variant not in [tl.float8e4nv, tl.float8e5]
    assert (variant.name, variant.primitive_bitwidth, variant.fp_mantissa_width, variant.exponent_bias) == (
        name, 8, mantissa, bias)
    assert variant.is_fp8() and variant.is_floating() and not variant.is_standard_floating()
    assert getattr(variant, f"is_{name}")() and not getattr(tl.float8e4nv, f"is_{name}")()
    assert tl.str_to_ty(name) is variant


@triton.jit
def to_variant(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float8e4b15).to(tl.float32))


# the reference converts through them: to nearest, saturating at e4b15's largest value, 1.75
x = np.array([0.3, -1.0, 1.8, 100.0, -0.0, 2.0**-18, 1.0 + 2.0**-4, 1.0 + 3 * 2.0**-4], np.float32)
out = np.full(8, np.nan, np.float32)
to_variant[(1,)](x, out, BLOCK=8)
assert out.tolist() == [0.3125, -1.0, 1.75, 1.75, -0.0, 0.0, 1.0, 1.25], out
''',
    "tools_and_profiler": '''
import os

import triton.profiler as proton
import triton.tools.experimental_descriptor as experimental
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


x = rng.standard_normal(16).astype(np.float32)
desc = TensorDescriptor(x, shape=[16], strides=[1], block_shape=[1])
desc.block_shape = [16]  # as Triton's autotune pre-hooks set it


@triton.jit
def desc_copy_kernel(x_desc, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), x_desc.load([0]))


out = np.full(16, np.nan, np.float32)
desc_copy_kernel[(1,)](desc, out, BLOCK=16)
check(out, x.astype(np.float64))
assert not hasattr(experimental, "create_2d_tma_descriptor")


def copy_metadata(grid, kernel, args):
    return {"name": f"{kernel.name} [BLOCK={args['BLOCK']}]", "bytes": 8 * args["BLOCK"]}


@triton.jit(launch_metadata=copy_metadata)
def hooked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


session = proton.start("matmul", hook="triton")
for _ in range(3):
    with proton.scope("copy", {"bytes": 128, "flops32": 16}):
        out = np.full(16, np.nan, np.float32)
        copy_kernel[(1,)](x, out, BLOCK=16)  # no launch metadata: inside its scope only
    check(out, x.astype(np.float64))
    out[:] = np.nan
    hooked_copy[(1,)](x, out, BLOCK=16)  # a scope of its own, named by its metadata
    check(out, x.astype(np.float64))
proton.deactivate(session)
with proton.scope("not recorded"):
    hooked_copy[(1,)](x, out, BLOCK=16)
proton.activate(session)
proton.finalize()
import triton.profiler.viewer as viewer
tree, metrics = viewer.parse(["count", "time/ms", "gbyte/s", "tflop32/s"], "matmul.hatchet")
assert sorted(tree) == ["copy", "hooked_copy [BLOCK=16]"], tree
copy, hooked = tree["copy"], tree["hooked_copy [BLOCK=16]"]
assert copy["count"] == 3 and copy["bytes"] == 3 * 128 and copy["flops32"] == 48 and copy["time/ms"] > 0
assert hooked["count"] == 3 and hooked["bytes"] == 3 * 128
viewer.print_tree(tree, metrics)
try:
    viewer.print_tree(tree, ["flops/ms"])
except tl.UsageError as e:  # a metric the viewer does not know is named
    assert "'flops/ms'" in str(e)
else:
    raise AssertionError("no error")
''',
}


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tile_lang.as_triton", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_runs_on_tile_lang(tmp_path: Path, name: str) -> None:
    script = tmp_path / f"{name}.py"
    script.write_text(HEADER + textwrap.dedent(SCRIPTS[name]) + "print('ok', __name__)\n")
    result = _run(tmp_path, script.name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok __main__")


def test_pytest_form(tmp_path: Path) -> None:
    """``-m pytest``: test files that import triton are collected and run with the shim."""
    (tmp_path / "test_tiny.py").write_text(HEADER + textwrap.dedent('''
        @triton.jit
        def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


        def test_neg():
            x = rng.standard_normal(77).astype(np.float32)
            out = np.full(77, np.nan, np.float32)
            neg_kernel[(triton.cdiv(77, 32),)](x, out, 77, BLOCK=32)
            check(out, -x.astype(np.float64))
        '''))
    result = _run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.parametrize(("body", "message"), [
    ("triton.knobs.cache", "triton.knobs.cache is not provided when Triton code runs on tile_lang"),
    ("triton.runtime.driver.active.utils.fill_1d_tma_descriptor",
     "triton.runtime.driver.active.utils.fill_1d_tma_descriptor is not provided"),
    ("tl.tensor_of_nothing", "'tensor_of_nothing'"),  # tile_lang's own AttributeError for its language
    ("import triton.language.extra.cuda as cuda\ncuda.smid", "tl.extra.cuda.smid is not supported yet"),
    ("tl.extra.cuda.libdevice.tanh\ntl.extra.cuda.no_such", "tl.extra.cuda has no attribute 'no_such'"),
    ("import triton.tools.disasm", "No module named 'triton.tools.disasm' in tile_lang's Triton shim"),
    ("from triton.tools.mxfp import MXFP4Tensor\nMXFP4Tensor(size=(4, 4))",  # imports; made, it is the error
     "triton.tools.mxfp.MXFP4Tensor is not provided when Triton code runs on tile_lang"),
    ("triton.autotune([triton.Config({})], key=[], use_cuda_graph=True)(triton.jit(lambda: 0))",
     "triton.autotune(use_cuda_graph=True) is not provided"),
])
def test_missing_name_is_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "missing.py").write_text(f"import triton\nimport triton.language as tl\n"
                                         f"assert not hasattr(tl, 'no_such_name')\n{body}\n")
    result = _run(tmp_path, "missing.py")
    assert result.returncode == 1
    assert message in result.stderr, result.stderr


def test_what_projects_probe_before_any_kernel(tmp_path: Path) -> None:
    """``triton.__version__`` (Liger-Kernel's ``compare_version``) and the modules torch._inductor
    imports whenever ``import triton`` works (``import torch._dynamo``, which transformers runs):
    both stopped Liger-Kernel's own tests at import."""
    pytest.importorskip("torch")
    (tmp_path / "probes.py").write_text(textwrap.dedent('''
        import triton
        import triton.backends.compiler
        import triton.compiler.compiler
        assert tuple(int(part) for part in triton.__version__.split(".")[:2]) >= (3, 0)
        assert not hasattr(triton.backends.compiler, "AttrsDescriptor")
        import torch._dynamo
        # torch.compile as a decorator imports inductor's Triton names (flash-linear-attention's
        # modules decorate helpers so at import): CompiledKernel, triton_key, autotuner's OutOfResources
        import torch._inductor.runtime.triton_compat
        torch.compile(lambda x: x + 1)
        '''))
    result = _run(tmp_path, "probes.py")
    assert result.returncode == 0, result.stderr


def test_torch_cuda_device_queries_on_the_reference(tmp_path: Path) -> None:
    """With a torch lacking CUDA, the runner lets ``torch.cuda.get_device_capability()`` and
    ``get_device_properties(...)`` answer for the sm_80 stand-in (tutorials 06, 08 and 09 ask them),
    imported before or after triton; ``is_available()`` stays False."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA: its own answers stand")
    for first in ("import torch\nimport triton", "import triton\nimport torch"):
        (tmp_path / "queries.py").write_text(first + textwrap.dedent('''
            from triton.tools.tensor_descriptor import TensorDescriptor
            assert torch.cuda.get_device_capability() == (8, 0) and not torch.cuda.is_available()
            props = torch.cuda.get_device_properties("cuda")
            assert props.multi_processor_count == 108 and (props.major, props.minor) == (8, 0)
            t = torch.zeros(4, 6)
            desc = TensorDescriptor.from_tensor(t, [2, 3])
            assert (desc.shape, desc.strides, desc.block_shape, desc.base is t) == ([4, 6], [6, 1], [2, 3], True)
            print("ok")
            '''))
        result = _run(tmp_path, "queries.py")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"


def test_reinterpret_of_a_torch_tensor(tmp_path: Path) -> None:
    """``triton.reinterpret(t, tl.uint32)`` on a torch int32 tensor launches as uint32 and keeps
    Triton's ``.base``/``.dtype``, as Triton's test helpers use them."""
    pytest.importorskip("torch")
    script = tmp_path / "reinterpret.py"
    script.write_text(HEADER + textwrap.dedent('''
        import torch

        @triton.jit
        def halve(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) // 2)

        signed = torch.from_numpy(rng.integers(-2**31, 2**31 - 1, 64).astype(np.int32))
        x = triton.reinterpret(signed, tl.uint32)
        out = triton.reinterpret(torch.full((64,), 7, dtype=torch.int32), tl.uint32)
        halve[(1,)](x, out, BLOCK=64)
        assert x.base is signed and x.dtype is tl.uint32 and triton.reinterpret(x, tl.int32) is signed
        assert (out.base.numpy().view(np.uint32) == signed.numpy().view(np.uint32) // 2).all()
        tuned = triton.autotune([triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], key=[])(halve)
        out.base.fill_(7)
        tuned[(1,)](x, out, BLOCK=64)  # an autotuned launch takes the wrappers too
        assert (out.base.numpy().view(np.uint32) == signed.numpy().view(np.uint32) // 2).all()
        print("ok")
        '''))
    result = _run(tmp_path, script.name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_reinterpreted_fp8_and_wrapper_accessors(tmp_path: Path) -> None:
    """A TensorWrapper has the torch accessors Triton's tests call (``stride``, ``numel``,
    ``element_size``...); one holding fp8 bits launches as fp8 (``|x|`` checked against float64);
    one of a Triton fp8 variant is a LaunchError naming the parameter; ``torch.cuda.device`` of a
    CPU tensor's index (None) switches nothing on the reference."""
    pytest.importorskip("torch")
    script = tmp_path / "fp8.py"
    script.write_text(HEADER + textwrap.dedent('''
        import torch
        from triton.runtime.jit import TensorWrapper

        @triton.jit
        def abs_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.abs(tl.load(x_ptr + offs)))

        bits = torch.from_numpy(rng.integers(-128, 128, (4, 64)).astype(np.int8))
        bits[(bits & 0x7F) == 0x7F] = 1  # no NaN bit patterns
        x = triton.reinterpret(bits, tl.float8e4nv)
        assert isinstance(x, TensorWrapper) and x.shape == (4, 64) and x.stride() == (64, 1) and x.stride(0) == 64
        assert (x.numel(), x.element_size(), x.dim(), x.data_ptr()) == (256, 1, 2, bits.data_ptr())
        assert x.cpu().base is not None and x.to("cpu").dtype is tl.float8e4nv and x.clone().base is not bits
        out = x.new_empty((4, 64))  # Triton's new_empty: an uninitialised wrapper of the same dtype
        assert isinstance(out, TensorWrapper) and out.dtype is tl.float8e4nv and out.base.dtype == torch.int8
        out.base.fill_(0x7F)  # NaN poison
        abs_kernel[(1,)](x, out, BLOCK=256)
        expected = np.abs(bits.view(torch.float8_e4m3fn).float().numpy().astype(np.float64))
        check(out.base.view(torch.float8_e4m3fn).float().numpy(), expected, rtol=0, atol=0)

        variant = triton.reinterpret(bits, tl.float8e4b15)  # torch has no such dtype: its bytes are the codes
        assert variant.dtype is tl.float8e4b15 and variant.stride(1) == 1
        out = triton.reinterpret(torch.full((4, 64), 0x7F, dtype=torch.int8), tl.float8e4b15)
        abs_kernel[(1,)](variant, out, BLOCK=256)
        assert torch.equal(out.base, bits & 0x7F)  # Triton's abs of e4b15 clears the sign bit
        with torch.cuda.device(bits.device.index):  # None: a CPU tensor's
            pass
        print("ok")
        '''))
    result = _run(tmp_path, script.name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.skipif(not any(ep.name == "tile_lang" for ep in importlib.metadata.entry_points(group="pytest11")),
                    reason="tile_lang's pytest plugin reaches a new pytest process through its entry point: "
                           "pip install the package (a tree on PYTHONPATH has none)")
def test_pytest_processes_started_under_the_runner_install_the_shim(tmp_path: Path) -> None:
    """``install()`` sets TILE_LANG_AS_TRITON=1, and tile_lang's pytest plugin installs the shim
    in a pytest process started with it (as pytest-xdist's workers are) before conftests import
    ``triton``; with pytest-xdist, ``-n 2`` workers run on the shim."""
    (tmp_path / "conftest.py").write_text("import triton\n")
    (tmp_path / "test_on_shim.py").write_text(textwrap.dedent('''
        import os
        import triton


        def test_shim():
            assert "tile_lang" in triton.__doc__ and os.environ["TILE_LANG_AS_TRITON"] == "1"
        '''))
    (tmp_path / "starts.py").write_text(textwrap.dedent('''
        import os, subprocess, sys
        assert os.environ["TILE_LANG_AS_TRITON"] == "1"
        args = sys.argv[1:]
        sys.exit(subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]).returncode)
        '''))
    result = _run(tmp_path, "starts.py", "test_on_shim.py")  # a plain pytest process, started by the runner
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    if importlib.util.find_spec("xdist") is None:
        return
    result = _run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist", "-n", "2", "test_on_shim.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_cublas_stand_in_multiplies_through_torch(tmp_path: Path) -> None:
    """``triton._C.libtriton.nvidia.cublas.CublasLt`` (tutorial 09's comparison): ``matmul(a, b, c)``
    writes ``a @ b.T`` into c, here on random CPU tensors against float64."""
    pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    script = tmp_path / "cublas.py"
    script.write_text(textwrap.dedent('''
        import torch
        from triton._C.libtriton import nvidia
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(64, 32, generator=gen).half()
        b = torch.randn(48, 32, generator=gen).half()
        c = torch.full((64, 48), float("nan"), dtype=torch.float16)
        nvidia.cublas.CublasLt(torch.empty(16, dtype=torch.uint8)).matmul(a, b, c)
        err = (c.double() - a.double() @ b.double().T).abs().max().item()
        assert err < 0.05, err
        print("ok")
    '''))
    result = _run(tmp_path, script.name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


STRIDED = textwrap.dedent('''
        class Strided:
            def __init__(self, base, shape, strides, offset=0):
                self.base, self.dtype, self.device, self.shape = base, base.dtype, base.device, shape
                self.strides, self.ptr = strides, base.data_ptr() + offset * base.element_size()
            def data_ptr(self):
                return self.ptr
            def stride(self):
                return self.strides

        @triton.jit
        def double(x_ptr, out_ptr, n, sx, so, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs * so, tl.load(x_ptr + offs * sx, mask=offs < n) * 2, mask=offs < n)
''')
"""A tensor-like object of a library's own (FlagGems' StridedBuffer: a torch dtype, ``data_ptr()``,
``shape``, ``stride()``) and a kernel reading and writing through such objects, for the scripts below."""


def test_tensor_like_objects_on_the_gpu(tmp_path: Path) -> None:
    """On the CUDA backend a tensor-like object over a CUDA tensor's memory (FlagGems' StridedBuffer
    of a GPU tensor, bf16 here) launches as that device memory, in place, as Triton launches it."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not {b.name: b for b in registry.backends()}["cupy"].available:
        pytest.skip("needs torch with CUDA and the cupy backend (a GPU machine)")
    (tmp_path / "strided_gpu.py").write_text(textwrap.dedent('''
        import torch, triton
        import triton.language as tl
        ''') + STRIDED + textwrap.dedent('''
        base = torch.randn(40, device="cuda").to(torch.bfloat16)
        out = torch.full((40,), float("nan"), device="cuda", dtype=torch.bfloat16)
        double[(1,)](Strided(base, (10,), (3,), offset=5), Strided(out, (10,), (4,)), 10, 3, 4, BLOCK=16)
        assert torch.equal(out[0:40:4], base[5:35:3] * 2) and out.isnan().sum() == 30
        print("ok")
        '''))
    result = subprocess.run([sys.executable, "-m", "tile_lang.as_triton", "strided_gpu.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env={**os.environ, "TILE_LANG_BACKEND": "cupy"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_tensor_like_objects_and_current_device(tmp_path: Path) -> None:
    """An object with a torch ``dtype``, ``data_ptr()``, ``shape`` and ``stride()`` (FlagGems'
    StridedBuffer) launches as the memory it addresses, a strided view of a CPU tensor; one with a
    negative stride is refused by name; ``torch.cuda.current_device()`` answers 0 on the reference."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA: its own answers stand")
    (tmp_path / "strided.py").write_text(textwrap.dedent('''
        import pytest, torch, triton
        import triton.language as tl
        ''') + STRIDED + textwrap.dedent('''
        assert torch.cuda.current_device() == 0
        base = torch.randn(40, dtype=torch.float64)
        out = torch.full((40,), float("nan"), dtype=torch.float64)
        double[(1,)](Strided(base, (10,), (3,), offset=5), Strided(out, (10,), (4,)), 10, 3, 4, BLOCK=16)
        assert torch.equal(out[0:40:4], base[5:35:3] * 2) and out.isnan().sum() == 30
        with pytest.raises(Exception, match="negative strides"):
            double[(1,)](Strided(base, (10,), (-1,), offset=39), out, 10, -1, 1, BLOCK=16)
        print("ok")
        '''))
    result = _run(tmp_path, "strided.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
