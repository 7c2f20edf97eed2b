"""NumPy reference backend vs the equivalent plain-NumPy expression, in one process.

    python -m benchmarks.reference_bench [--repeats 7] [--sweep DIR] [--launch]

Prints a table of medians and the ratio (tile_lang time / NumPy time); the issue's bar is
10x on a 2-core x86 machine (20x for the kernels whose programs take different branches, which
run masked, and for the direct conv2d; see docs/reference-backend.md). Results are checked against the NumPy answer
before timing.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32
from tile_lang.testing import Benchmark, do_bench, perf_report


@tl.kernel
def add_kernel(x_ptr: Pointer[f32], y_ptr: Pointer[f32], out_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tl.kernel
def softmax_kernel(out_ptr: Pointer[f32], in_ptr: Pointer[f32], stride: int, n_cols: int, BLOCK: constexpr) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@tl.kernel
def matmul_kernel(a_ptr: Pointer[f32], b_ptr: Pointer[f32], c_ptr: Pointer[f32], M: int, N: int, K: int,
                  BM: constexpr, BN: constexpr, BK: constexpr) -> None:
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.f32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tl.kernel
def maxpool2d_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], H: int, W: int, OH: int, OW: int,
                     K: constexpr, STRIDE: constexpr, PAD: constexpr) -> None:
    """Rust-shaped: one program per output element, clipping its window to the image with
    scalar ifs and looping over what is left (per-program loop bounds)."""
    ow, oh, plane = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    h_start, w_start = oh * STRIDE - PAD, ow * STRIDE - PAD
    h_end, w_end = h_start + K, w_start + K
    if h_start < 0:
        h_start = 0
    if w_start < 0:
        w_start = 0
    if h_end > H:
        h_end = H
    if w_end > W:
        w_end = W
    best = tl.full((), -float("inf"), tl.f32)
    for ih in range(h_start, h_end):
        for iw in range(w_start, w_end):
            best = tl.maximum(best, tl.load(x_ptr + (plane * H + ih) * W + iw))
    tl.store(out_ptr + (plane * OH + oh) * OW + ow, best)


@tl.kernel
def reflect_pad_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], H: int, W: int, PAD: constexpr) -> None:
    """Rust-shaped: one program per output element, mirroring its coordinates with scalar ifs."""
    ow, oh, plane = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    ih = oh - PAD
    if ih < 0:
        ih = -ih
    elif ih >= H:
        ih = 2 * (H - 1) - ih
    iw = ow - PAD
    if iw < 0:
        iw = -iw
    elif iw >= W:
        iw = 2 * (W - 1) - iw
    tl.store(out_ptr + (plane * (H + 2 * PAD) + oh) * (W + 2 * PAD) + ow, tl.load(x_ptr + (plane * H + ih) * W + iw))


@tl.kernel
def reflect_pad_rows_kernel(x_ptr: Pointer[f32], out_ptr: Pointer[f32], H: int, W: int, PAD: constexpr,
                            BLOCK: constexpr) -> None:
    """One program per output row: its row mirrored with scalar ifs, its columns as a block."""
    oh, plane = tl.program_id(0), tl.program_id(1)
    ih = oh - PAD
    if ih < 0:
        ih = -ih
    elif ih >= H:
        ih = 2 * (H - 1) - ih
    cols = tl.arange(0, BLOCK)
    iw = tl.abs(cols - PAD)
    iw = tl.where(iw >= W, 2 * (W - 1) - iw, iw)
    live = cols < W + 2 * PAD
    row = tl.load(x_ptr + (plane * H + ih) * W + iw, mask=live)
    tl.store(out_ptr + (plane * (H + 2 * PAD) + oh) * (W + 2 * PAD) + cols, row, mask=live)


@tl.kernel
def conv2d_kernel(x_ptr: Pointer[f32], w_ptr: Pointer[f32], out_ptr: Pointer[f32], H: int, W: int, C: constexpr,
                  OC: constexpr, KH: constexpr, KW: constexpr, PAD: constexpr, BLOCK_W: constexpr) -> None:
    """Direct conv2d (stride 1, zero padding), one program per output row of one image: for each
    tap, a gather of the shifted input row of every channel (computed, masked indices) times the
    tap's weights through tl.dot."""
    oh, n = tl.program_id(0), tl.program_id(1)
    cs, ocs, ow = tl.arange(0, C), tl.arange(0, OC), tl.arange(0, BLOCK_W)
    acc = tl.zeros((OC, BLOCK_W), tl.f32)
    for kh in tl.static_range(KH):
        ih = oh + kh - PAD
        for kw in tl.static_range(KW):
            iw = ow + kw - PAD
            live = (iw >= 0) & (iw < W) & (ih >= 0) & (ih < H)
            x = tl.load(x_ptr + ((n * C + cs[:, None]) * H + ih) * W + iw[None, :], mask=live[None, :], other=0.0)
            w = tl.load(w_ptr + ((ocs[:, None] * C + cs[None, :]) * KH + kh) * KW + kw)
            acc = tl.dot(w, x, acc, input_precision="ieee")
    tl.store(out_ptr + ((n * OC + ocs[:, None]) * H + oh) * W + ow[None, :], acc, mask=(ow < W)[None, :])


def np_conv2d(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], pad: int) -> np.ndarray[Any, Any]:
    """Stride-1 zero-padded conv2d as one contraction over sliding windows (a BLAS call)."""
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[2:], axis=(2, 3))
    out: np.ndarray[Any, Any] = np.einsum("ncyxij,ocij->noyx", windows, w, optimize=True)
    return out


def np_maxpool2d(x: np.ndarray[Any, Any], k: int, stride: int, pad: int) -> np.ndarray[Any, Any]:
    """Max of the k * k strided slices of the -inf-padded planes."""
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh, ow = (padded.shape[1] - k) // stride + 1, (padded.shape[2] - k) // stride + 1
    out = np.full((x.shape[0], oh, ow), -np.inf, x.dtype)
    for kh in range(k):
        for kw in range(k):
            np.maximum(out, padded[:, kh:kh + stride * (oh - 1) + 1:stride, kw:kw + stride * (ow - 1) + 1:stride], out=out)
    return out


@dataclass(frozen=True)
class Case:
    name: str
    tile: Callable[[], object]
    numpy: Callable[[], object]
    check: Callable[[], None]


def seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(case: Case, repeats: int) -> tuple[float, float]:
    """Median seconds of the kernel and of NumPy, timed alternately so both see the same machine
    (BLAS threads left spinning by one case must not slow the next: each case is checked and
    warmed up right before it is timed)."""
    case.tile()
    case.check()
    case.numpy()
    pairs = [(seconds(case.tile), seconds(case.numpy)) for _ in range(repeats)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def cases(rng: np.random.Generator) -> list[Case]:
    """The three workloads with their checks against NumPy; buffers wrap the NumPy arrays."""
    n = 1 << 20
    xh, yh = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    outh = np.empty_like(xh)
    s_inh = rng.standard_normal((1024, 1024), dtype=np.float32)
    s_outh = np.empty_like(s_inh)
    ah = rng.standard_normal((512, 512), dtype=np.float32)
    bh = rng.standard_normal((512, 512), dtype=np.float32)
    ch = np.empty((512, 512), np.float32)
    x, y, out, s_in, s_out, a, b, c = (tl.wrap(v, tl.f32) for v in (xh, yh, outh, s_inh, s_outh, ah, bh, ch))

    def np_softmax() -> np.ndarray[Any, Any]:
        e = np.exp(s_inh - s_inh.max(axis=1, keepdims=True))
        result: np.ndarray[Any, Any] = e / e.sum(axis=1, keepdims=True)
        return result

    add = Case("vector add 2^20 f32, BLOCK=1024", lambda: add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024),
               lambda: np.add(xh, yh), lambda: np.testing.assert_array_equal(outh, xh + yh))
    soft = Case("row softmax 1024x1024 f32", lambda: softmax_kernel[(1024,)](s_out, s_in, 1024, 1024, BLOCK=1024),
                np_softmax, lambda: np.testing.assert_allclose(s_outh, np_softmax(), rtol=1e-5, atol=1e-7))
    mm = Case("matmul 512^3 f32, 64x64x32 tiles",
              lambda: matmul_kernel[(8, 8)](a, b, c, 512, 512, 512, BM=64, BN=64, BK=32), lambda: ah @ bh,
              lambda: np.testing.assert_allclose(ch, ah.astype(np.float64) @ bh, rtol=1e-4, atol=1e-3))
    planes, h, w, k, stride, pad = 16, 250, 250, 3, 2, 1
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    imgh = rng.standard_normal((planes, h, w), dtype=np.float32)
    poolh = np.empty((planes, oh, ow), np.float32)
    img, pool = tl.wrap(imgh, tl.f32), tl.wrap(poolh, tl.f32)
    maxpool = Case(f"maxpool2d {planes}x{h}x{w} f32, 3x3/2 pad 1", lambda: maxpool2d_kernel[(ow, oh, planes)](
        img, pool, h, w, oh, ow, K=k, STRIDE=stride, PAD=pad), lambda: np_maxpool2d(imgh, k, stride, pad),
        lambda: np.testing.assert_array_equal(poolh, np_maxpool2d(imgh, k, stride, pad)))
    rpad = 3
    padh = np.empty((planes, h + 2 * rpad, w + 2 * rpad), np.float32)
    padded = tl.wrap(padh, tl.f32)
    reflect = Case(f"reflection pad {planes}x{h}x{w} f32 by {rpad}, element programs", lambda: reflect_pad_kernel[
        (w + 2 * rpad, h + 2 * rpad, planes)](img, padded, h, w, PAD=rpad),
        lambda: np.pad(imgh, ((0, 0), (rpad, rpad), (rpad, rpad)), mode="reflect"),
        lambda: np.testing.assert_array_equal(padh, np.pad(imgh, ((0, 0), (rpad, rpad), (rpad, rpad)), mode="reflect")))
    np_reflect = functools.partial(np.pad, imgh, ((0, 0), (rpad, rpad), (rpad, rpad)), mode="reflect")
    rows = Case(f"reflection pad {planes}x{h}x{w} f32 by {rpad}, row programs", lambda: reflect_pad_rows_kernel[
        (h + 2 * rpad, planes)](img, padded, h, w, PAD=rpad, BLOCK=next_power_of_2(w + 2 * rpad)), np_reflect,
        lambda: np.testing.assert_array_equal(padh, np_reflect()))
    images, chans, out_chans, side = 4, 16, 32, 64
    xch = rng.standard_normal((images, chans, side, side), dtype=np.float32)
    wch = rng.standard_normal((out_chans, chans, 3, 3), dtype=np.float32)
    convh = np.empty((images, out_chans, side, side), np.float32)
    xc, wc, conv_out = tl.wrap(xch, tl.f32), tl.wrap(wch, tl.f32), tl.wrap(convh, tl.f32)
    conv = Case(f"conv2d {images}x{chans}x{side}x{side} f32, {out_chans} 3x3 filters, pad 1", lambda: conv2d_kernel[
        (side, images)](xc, wc, conv_out, side, side, C=chans, OC=out_chans, KH=3, KW=3, PAD=1, BLOCK_W=side),
        lambda: np_conv2d(xch, wch, 1), lambda: np.testing.assert_allclose(
            convh, np_conv2d(xch.astype(np.float64), wch.astype(np.float64), 1), rtol=1e-4, atol=1e-4))
    return [add, soft, mm, maxpool, reflect, rows, conv]


def next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


@perf_report(Benchmark(x_names=["n"], x_vals=[2**k for k in range(10, 23, 2)], line_arg="impl",
                       line_vals=["tile_lang", "numpy"], line_names=["tile_lang reference", "plain NumPy"],
                       plot_name="reference_vector_add", xlabel="elements", ylabel="ms (median)", x_log=True,
                       y_log=True))
def vector_add_sweep(n: int, impl: str) -> float:
    """Vector add on the reference against the NumPy expression, over sizes: where the reference's
    fixed cost per launch stops mattering."""
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    if impl == "numpy":
        return do_bench(lambda: np.add(x, y), warmup=20, rep=100)
    xb, yb, out = tl.to_device(x, tl.f32), tl.to_device(y, tl.f32), tl.empty(n, tl.f32)
    return do_bench(lambda: add_kernel[(tl.cdiv(n, 1024),)](xb, yb, out, n, BLOCK=1024), warmup=20, rep=100)


def launch_cost(programs: int = 1, launches: int = 2000, warmup: int = 200) -> float:
    """Median seconds of one launch of vector add on 1024-element blocks, ``programs`` of them:
    the reference's fixed cost per launch, which small tests pay in full."""
    n = 1024 * programs
    rng = np.random.default_rng(programs)
    xh, yh = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    outh = np.full(n, np.nan, np.float32)
    x, y, out = tl.wrap(xh, tl.f32), tl.wrap(yh, tl.f32), tl.wrap(outh, tl.f32)

    def launch() -> None:
        add_kernel[(programs,)](x, y, out, n, BLOCK=1024)

    with tl.backend("numpy"):
        launch()
        np.testing.assert_array_equal(outh, xh + yh)
        for _ in range(warmup):
            launch()
        return statistics.median(seconds(launch) for _ in range(launches))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sweep", metavar="DIR", help="also sweep vector add over sizes (tl.testing.perf_report): "
                        "a table, DIR/reference_vector_add.csv and .png")
    parser.add_argument("--launch", action="store_true", help="only time the fixed cost of a launch: the median of "
                        "many launches of vector add on 1024-element blocks, one program and two")
    args = parser.parse_args()
    if args.launch:
        for programs in (1, 2):
            print(f"launch of {programs} program(s), vector add on 1024-element blocks: "
                  f"{launch_cost(programs) * 1e6:.0f} us (median)")
        return
    if args.sweep:
        with tl.backend("numpy"):
            vector_add_sweep.run(print_data=True, save_path=args.sweep)
    with tl.backend("numpy"):
        rows = [(c.name, *measure(c, args.repeats)) for c in cases(np.random.default_rng(0))]
    print(f"{'kernel':36} {'tile_lang ms':>12} {'numpy ms':>10} {'ratio':>7}")
    for name, tile, ref in rows:
        print(f"{name:36} {tile * 1e3:12.2f} {ref * 1e3:10.2f} {tile / ref:6.1f}x")


if __name__ == "__main__":
    main()
