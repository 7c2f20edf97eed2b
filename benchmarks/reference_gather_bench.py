"""The reference on gathers and per-row kernels, against the equivalent plain-NumPy expression.

    python -m benchmarks.reference_gather_bench [--repeats 7] [--only NAME]

Kernels in the form of teenygrad's Rust book (a 1-D grid whose program id is split with
``%`` and ``//``, scalar ``if``/``elif`` on a per-program row, computed and masked offsets,
in-place optimizer steps). Each is checked against its NumPy answer before timing; the table
gives medians and the ratio (tile_lang time / NumPy time). Set ``TILE_LANG_RACE_CHECK=0`` to
time without the race check.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang import Pointer, constexpr, f32

from benchmarks.reference_bench import Case, measure

NDArray = np.ndarray[Any, Any]


@tl.kernel
def reflection_pad2d_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], C: int, H: int, W: int, OH: int, OW: int,
                          PT: constexpr, PL: constexpr, BLOCK_OW: constexpr) -> None:
    """One program per tile of an output row; the row mirrored with a scalar if/elif, the
    columns by three masked loads (centre, left, right) chosen with tl.where."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK_OW)
    ow_tile, rest = pid % tiles, pid // tiles
    oh, plane = rest % OH, rest // OH
    ow = ow_tile * BLOCK_OW + tl.arange(0, BLOCK_OW)
    ow_mask = ow < OW
    ih = oh - PT
    if ih < 0:
        ih = -ih
    elif ih >= H:
        ih = 2 * (H - 1) - ih
    base = plane * H * W + ih * W
    iw = ow - PL
    left, right = iw < 0, iw >= W
    centre = tl.load(x_ptr + base + iw, mask=ow_mask & (iw >= 0) & (iw < W), other=0.0)
    mirrored_left = tl.load(x_ptr + base - iw, mask=ow_mask & left, other=0.0)
    mirrored_right = tl.load(x_ptr + base + 2 * (W - 1) - iw, mask=ow_mask & right, other=0.0)
    out = tl.where(left, mirrored_left, tl.where(right, mirrored_right, centre))
    tl.store(y_ptr + (plane * OH + oh) * OW + ow, out, mask=ow_mask)


@tl.kernel
def replication_pad3d_rows(x_ptr: Pointer[f32], y_ptr: Pointer[f32], D: int, H: int, W: int, OD: int, OH: int,
                           OW: int, PD: constexpr, PH: constexpr, PW: constexpr, BLOCK_OW: constexpr) -> None:
    """One program per tile of an output row of a volume; depth and row clamped with scalar
    if/elifs, the columns by masked loads of the edge and centre elements."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK_OW)
    ow_tile, rest = pid % tiles, pid // tiles
    oh, rest2 = rest % OH, rest // OH
    od, plane = rest2 % OD, rest2 // OD
    ow = ow_tile * BLOCK_OW + tl.arange(0, BLOCK_OW)
    ow_mask = ow < OW
    id_ = od - PD
    if id_ < 0:
        id_ = 0
    elif id_ >= D:
        id_ = D - 1
    ih = oh - PH
    if ih < 0:
        ih = 0
    elif ih >= H:
        ih = H - 1
    base = (plane * D + id_) * H * W + ih * W
    iw = ow - PW
    left, right = iw < 0, iw >= W
    centre = tl.load(x_ptr + base + iw, mask=ow_mask & (iw >= 0) & (iw < W), other=0.0)
    first = tl.load(x_ptr + base + iw * 0, mask=ow_mask & left, other=0.0)
    last = tl.load(x_ptr + base + iw * 0 + (W - 1), mask=ow_mask & right, other=0.0)
    out = tl.where(left, first, tl.where(right, last, centre))
    tl.store(y_ptr + ((plane * OD + od) * OH + oh) * OW + ow, out, mask=ow_mask)


@tl.kernel
def conv3d_direct(x_ptr: Pointer[f32], w_ptr: Pointer[f32], y_ptr: Pointer[f32], C_IN: int, C_OUT: int, D: int,
                  H: int, W: int, OD: int, OH: int, OW: int, KD: constexpr, KH: constexpr, KW: constexpr,
                  PAD: constexpr, BLOCK_OW: constexpr) -> None:
    """Direct conv3d (stride 1, zero padding): one program per tile of an output row of one
    output channel, a runtime loop over input channels and taps, each a masked row load times
    one weight loaded as a one-element block."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(OW, BLOCK_OW)
    ow_tile, rest = pid % tiles, pid // tiles
    oh, rest2 = rest % OH, rest // OH
    od, rest3 = rest2 % OD, rest2 // OD
    c_out, b = rest3 % C_OUT, rest3 // C_OUT
    ow = ow_tile * BLOCK_OW + tl.arange(0, BLOCK_OW)
    ow_mask = ow < OW
    acc = tl.zeros((BLOCK_OW,), tl.f32)
    for idx in range(0, C_IN * KD * KH * KW):
        kw, tmp = idx % KW, idx // KW
        kh, tmp2 = tmp % KH, tmp // KH
        kd, c_in = tmp2 % KD, tmp2 // KD
        id_, ih, iw = od + kd - PAD, oh + kh - PAD, ow + kw - PAD
        live = ow_mask & (iw >= 0) & (iw < W) & (id_ >= 0) & (id_ < D) & (ih >= 0) & (ih < H)
        x = tl.load(x_ptr + (((b * C_IN + c_in) * D + id_) * H + ih) * W + iw, mask=live, other=0.0)
        w = tl.load(w_ptr + tl.arange(0, 1) + (((c_out * C_IN + c_in) * KD + kd) * KH + kh) * KW + kw)
        acc = acc + x * tl.broadcast_to(w, (BLOCK_OW,))
    tl.store(y_ptr + (((b * C_OUT + c_out) * OD + od) * OH + oh) * OW + ow, acc, mask=ow_mask)


@tl.kernel
def channel_chunk(x_ptr: Pointer[f32], y_ptr: Pointer[f32], c_total: int, chunk_c: int, chunk_offset: int,
                  BLOCK: constexpr) -> None:
    """Channels ``chunk_offset ..`` of each row of a wide (rows x c_total) array, copied to a
    narrow one: one program per tile of a row."""
    pid = tl.program_id(0)
    tiles = tl.cdiv(chunk_c, BLOCK)
    row, c_tile = pid // tiles, pid % tiles
    cs = c_tile * BLOCK + tl.arange(0, BLOCK)
    live = cs < chunk_c
    x = tl.load(x_ptr + cs + (row * c_total + chunk_offset), mask=live)
    tl.store(y_ptr + cs + row * chunk_c, x, mask=live)


@tl.kernel
def tanh_forward(x_ptr: Pointer[f32], y_ptr: Pointer[f32], n: int, BLOCK: constexpr) -> None:
    """tanh(x) as 2 * sigmoid(2x) - 1."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(x_ptr + offs, mask=live)
    one = tl.full((BLOCK,), 1.0, tl.f32)
    tl.store(y_ptr + offs, 2.0 * (one / (one + tl.exp(-2.0 * x))) - one, mask=live)


@tl.kernel
def radam_step(p_ptr: Pointer[f32], g_ptr: Pointer[f32], m_ptr: Pointer[f32], v_ptr: Pointer[f32], n: int,
               step_size: float, bias2_sqrt: float, beta1: float, beta2: float, eps: float, weight_decay: float,
               BLOCK: constexpr) -> None:
    """RAdam's adaptive step, in place on the parameters and both moments."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    p = tl.load(p_ptr + offs, mask=live)
    g = tl.load(g_ptr + offs, mask=live) + weight_decay * p
    m = beta1 * tl.load(m_ptr + offs, mask=live) + (1.0 - beta1) * g
    v = beta2 * tl.load(v_ptr + offs, mask=live) + (1.0 - beta2) * g * g
    tl.store(p_ptr + offs, p - step_size * m / (tl.sqrt_rn(v) / bias2_sqrt + eps), mask=live)
    tl.store(m_ptr + offs, m, mask=live)
    tl.store(v_ptr + offs, v, mask=live)


def np_radam(p: NDArray, g: NDArray, m: NDArray, v: NDArray, step_size: float, bias2_sqrt: float, beta1: float,
             beta2: float, eps: float, weight_decay: float) -> None:
    """The same step in place, one NumPy expression per line of the kernel (f32 throughout)."""
    f = np.float32
    g = g + f(weight_decay) * p
    m *= f(beta1)
    m += f(1.0 - beta1) * g
    v *= f(beta2)
    v += f(1.0 - beta2) * g * g
    p -= f(step_size) * m / (np.sqrt(v) / f(bias2_sqrt) + f(eps))


def np_conv3d(x: NDArray, w: NDArray, pad: int) -> NDArray:
    """Stride-1 zero-padded conv3d: per tap, the shifted input contracted with the tap's weights."""
    padded = np.pad(x, ((0, 0), (0, 0)) + ((pad, pad),) * 3)
    (d, h, wd), (kd, kh, kw) = x.shape[2:], w.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], d, h, wd), np.result_type(x, w))
    for i, j, k in np.ndindex(kd, kh, kw):
        out += np.einsum("ncdyx,oc->nodyx", padded[:, :, i:i + d, j:j + h, k:k + wd], w[:, :, i, j, k])
    return out


def equal(got: NDArray, want: Callable[[], NDArray]) -> Callable[[], None]:
    return lambda: np.testing.assert_array_equal(got, want())


def pads(rng: np.random.Generator) -> list[Case]:
    planes, h, w, pad, block = 32, 128, 128, 3, 64
    oh, ow = h + 2 * pad, w + 2 * pad
    xh = rng.standard_normal((planes, h, w), dtype=np.float32)
    yh = np.full((planes, oh, ow), np.nan, np.float32)
    x, y = tl.wrap(xh, tl.f32), tl.wrap(yh, tl.f32)
    grid = (planes * oh * tl.cdiv(ow, block),)

    def np_reflect() -> NDArray:
        return np.pad(xh, ((0, 0), (pad, pad), (pad, pad)), mode="reflect")

    reflect = Case(f"reflection pad {planes}x{h}x{w} by {pad}, rows", lambda: reflection_pad2d_rows[grid](
        x, y, planes, h, w, oh, ow, PT=pad, PL=pad, BLOCK_OW=block), np_reflect, equal(yh, np_reflect))
    vols, d3, h3, w3, p3 = 8, 16, 32, 32, 2
    od, oh3, ow3 = d3 + 2 * p3, h3 + 2 * p3, w3 + 2 * p3
    vh = rng.standard_normal((vols, d3, h3, w3), dtype=np.float32)
    uh = np.full((vols, od, oh3, ow3), np.nan, np.float32)
    v, u = tl.wrap(vh, tl.f32), tl.wrap(uh, tl.f32)

    def np_replicate() -> NDArray:
        return np.pad(vh, ((0, 0),) + ((p3, p3),) * 3, mode="edge")

    replicate = Case(f"replication pad 3-D {vols}x{d3}x{h3}x{w3} by {p3}", lambda: replication_pad3d_rows[
        (vols * od * oh3,)](v, u, d3, h3, w3, od, oh3, ow3, PD=p3, PH=p3, PW=p3, BLOCK_OW=64), np_replicate,
        equal(uh, np_replicate))
    return [reflect, replicate]


def conv(rng: np.random.Generator) -> Case:
    b, c_in, c_out, side, k, pad, block = 2, 4, 8, 16, 3, 1, 16
    xh = rng.standard_normal((b, c_in, side, side, side), dtype=np.float32)
    wh = rng.standard_normal((c_out, c_in, k, k, k), dtype=np.float32)
    yh = np.full((b, c_out, side, side, side), np.nan, np.float32)
    x, w, y = tl.wrap(xh, tl.f32), tl.wrap(wh, tl.f32), tl.wrap(yh, tl.f32)
    return Case(f"conv3d direct {b}x{c_in}x{side}^3, {c_out} 3^3 filters", lambda: conv3d_direct[
        (b * c_out * side * side,)](x, w, y, c_in, c_out, side, side, side, side, side, side, KD=k, KH=k, KW=k,
                                    PAD=pad, BLOCK_OW=block), lambda: np_conv3d(xh, wh, pad),
        lambda: np.testing.assert_allclose(yh, np_conv3d(xh.astype(np.float64), wh.astype(np.float64), pad),
                                           rtol=1e-4, atol=1e-4))


def chunk(rng: np.random.Generator) -> Case:
    rows, c_total, chunk_c, offset, block = 4096, 256, 128, 128, 128
    xh = rng.standard_normal((rows, c_total), dtype=np.float32)
    yh = np.full((rows, chunk_c), np.nan, np.float32)
    x, y = tl.wrap(xh, tl.f32), tl.wrap(yh, tl.f32)

    def np_chunk() -> NDArray:
        return xh[:, offset:offset + chunk_c].copy()

    return Case(f"channel chunk {rows}x{c_total} -> {chunk_c}", lambda: channel_chunk[(rows * tl.cdiv(chunk_c, block),)](
        x, y, c_total, chunk_c, offset, BLOCK=block), np_chunk, equal(yh, np_chunk))


def elementwise(rng: np.random.Generator) -> list[Case]:
    n, block = 1 << 20, 1024
    xh = rng.standard_normal(n, dtype=np.float32)
    yh = np.full(n, np.nan, np.float32)
    x, y = tl.wrap(xh, tl.f32), tl.wrap(yh, tl.f32)
    tanh = Case(f"tanh 2^20 f32, BLOCK={block}", lambda: tanh_forward[(n // block,)](x, y, n, BLOCK=block),
                lambda: np.tanh(xh), lambda: np.testing.assert_allclose(yh, np.tanh(xh.astype(np.float64)),
                                                                       atol=1e-6))
    step_size, bias2_sqrt, beta1, beta2, eps, decay = 1e-3, 0.9, 0.9, 0.999, 1e-8, 1e-2
    start = [rng.standard_normal(n, dtype=np.float32) for _ in range(3)] + [rng.random(n, dtype=np.float32)]
    tile_state = [a.copy() for a in start]
    numpy_state = [a.copy() for a in start]
    p, g, m, v = (tl.wrap(a, tl.f32) for a in tile_state)

    def tile_step() -> None:
        radam_step[(n // block,)](p, g, m, v, n, step_size, bias2_sqrt, beta1, beta2, eps, decay, BLOCK=block)

    def numpy_step() -> None:
        np_radam(numpy_state[0], numpy_state[1], numpy_state[2], numpy_state[3], step_size, bias2_sqrt, beta1, beta2,
                 eps, decay)

    def check() -> None:  # one step each from the same state
        for mine, theirs, first in zip(tile_state, numpy_state, start):
            mine[...], theirs[...] = first, first
        tile_step()
        numpy_step()
        for mine, theirs in zip(tile_state, numpy_state):
            np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)

    radam = Case(f"radam step in place 2^20 f32, BLOCK={block}", tile_step, numpy_step, check)
    return [tanh, radam]


def cases(rng: np.random.Generator) -> list[Case]:
    return [*pads(rng), conv(rng), chunk(rng), *elementwise(rng)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    with tl.backend("numpy"):
        chosen = [c for c in cases(np.random.default_rng(0)) if not args.only or args.only in c.name]
        rows = [(c.name, *measure(c, args.repeats)) for c in chosen]
    print(f"{'kernel':44} {'tile_lang ms':>12} {'numpy ms':>10} {'ratio':>7}")
    for name, tile, ref in rows:
        print(f"{name:44} {tile * 1e3:12.2f} {ref * 1e3:10.2f} {tile / ref:6.1f}x")


if __name__ == "__main__":
    main()
