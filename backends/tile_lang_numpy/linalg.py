"""Block matrix products: ``tl.dot`` (2-D or batched 3-D) and ``tl.dot_scaled``.

Products are batched over the program axis with ``np.matmul``. Float dots accumulate in f32,
the GPU's accumulator (each product of f16, bf16, fp8 or tf32 values is exact in f32), add
``acc`` and round to ``out_dtype``; i8 and f64 dots accumulate exactly in float64. The operands
are taken *as the GPU's tensor cores see them*:

* ``input_precision="tf32"`` (the default for f32 operands, as Triton's): each f32 operand is
  truncated toward zero to 10 mantissa bits (``bits & 0xFFFFE000``), because the tensor cores
  ignore the low 13 bits of the registers Triton hands them (GPU-verified on an H200).
* ``"tf32x3"``: Triton's F32DotTC split. ``big = rna(x)`` (round to nearest, ties away, to
  10 bits: ``(bits + 0x1000) & 0xFFFFE000``), ``small = x - big`` in f32, then three tf32
  dots chained through an f32 accumulator: ``small_a @ big_b``, ``+ big_a @ small_b``, NaNs
  zeroed (so inf inputs do not turn into inf - inf), ``+ big_a @ big_b``, then ``+ acc``.
* ``"ieee"``: the operands as they are.

Integer dots (i8 x i8) accumulate exactly and wrap to i32 like the GPU's 32-bit adders.
The GPU's own summation order is unspecified, so real results may differ in the last bits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import tile_lang as tl
from tile_lang.dtypes import BF16, F16, F32, F64, I8, U8, DType
from tile_lang.tensor import Tensor
from tile_lang.ops.linalg import SCALE_GROUP

from tile_lang_numpy import affine, values
from tile_lang_numpy.engine import Engine, implements
from tile_lang_numpy.shape import operand
from tile_lang_numpy.values import Array

TF32_MASK = np.uint32(0xFFFFE000)


# ------------------------------------------------------------------------------ checks


def _acc(engine: Engine, acc: object, what: str) -> Array | None:
    """The accumulator's array (the rule checked it matches the result exactly)."""
    return None if acc is None else values.array(operand(engine, acc, what))


# ------------------------------------------------------------------------------ tf32 emulation


def tf32_truncate(x: Array) -> Array:
    """f32 values as a tensor core reads them: the low 13 mantissa bits dropped."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & TF32_MASK).view(np.float32)


def tf32_round(x: Array) -> Array:
    """``cvt.rna.tf32.f32``: round to nearest, ties away from zero, to 10 mantissa bits
    (inf and NaN unchanged; the largest finite values round up to inf)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    finite = (bits & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
    return np.where(finite, (bits + np.uint32(0x1000)) & TF32_MASK, bits).view(np.float32)


def _matmul(x: Array, y: Array, acc: Array | None, wide: type[np.number[Any]] = np.float64) -> Array:
    """``x @ y + acc`` computed in ``wide``: float64 (exact) for i8 and f64 operands, f32 for the
    others, like the GPU's f32 accumulator (every product of f16, bf16, fp8 or tf32 values is
    exact in f32; only the summation order differs from the GPU's, which is unspecified)."""
    product: Array = np.matmul(values.widen(x, wide), values.widen(y, wide))
    if acc is not None:
        product += acc.astype(wide, copy=False)  # in place: no second block-sized temporary
    return product


def _tf32_dot(x: Array, y: Array, acc: Array | None) -> Array:
    """One tf32 tensor-core dot, accumulated into f32."""
    return _matmul(tf32_truncate(x), tf32_truncate(y), acc, np.float32)


def _tf32x3_dot(x: Array, y: Array, acc: Array | None) -> Array:
    """Triton's F32DotTC rewrite of an f32 dot into three tf32 dots (see the module docstring)."""
    x_big, y_big = tf32_round(x), tf32_round(y)
    with np.errstate(invalid="ignore"):
        x_small, y_small = x - x_big, y - y_big
        partial = _tf32_dot(x_big, y_small, _tf32_dot(x_small, y_big, None))
        total = _tf32_dot(x_big, y_big, np.where(np.isnan(partial), np.float32(0), partial))
        return total if acc is None else total + acc


def _ieee_dot(x: Array, y: Array, acc: Array | None) -> Array:
    """An exact-operand f32 dot, accumulated into f32."""
    return _matmul(x, y, acc, np.float32)


F32_DOTS = {"tf32": _tf32_dot, "tf32x3": _tf32x3_dot, "ieee": _ieee_dot}


# ------------------------------------------------------------------------------ tl.dot


@implements(tl.dot)
def dot(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """``max_num_imprecise_acc`` (fp8 partial sums added into f32 every so many K elements, on
    Hopper's tensor cores) is checked by the shared rule and has nothing to do here: fp8 products
    are accumulated exactly, like every other float dot."""
    x, y = operand(engine, a["input"], "tl.dot"), operand(engine, a["other"], "tl.dot")
    *batch, m, n = a["shape"]
    k = x.block_shape[-1]
    engine.note_block(max(m * k, k * n, m * n) * (batch[0] if batch else 1))
    out, acc = a["out_dtype"], _acc(engine, a["acc"], "tl.dot")
    precision = a["input_precision"]  # checked for every dtype, applied to f32 operands only
    tiled = _tiled_dot(x, y, precision, acc)
    if tiled is not None:
        return values.make(tiled.astype(out.numpy, copy=False), out)
    ax, ay = values.array(x), values.array(y)
    if x.type == I8:  # float64 sums of i8 products are exact far beyond any block's K
        total = _matmul(ax, ay, None).astype(np.int64)
        result = (total if acc is None else total + acc).astype(np.int32)
    elif x.type == F64:
        result = _matmul(ax, ay, acc)
    elif x.type == F32:
        result = F32_DOTS[precision](ax, ay, acc).astype(out.numpy, copy=False)
    else:
        result = _ieee_dot(ax, ay, acc).astype(out.numpy, copy=False)
    return values.make(result, out)


def _tiled_dot(x: Tensor[Any, Any], y: Tensor[Any, Any], precision: str, acc: Array | None) -> Array | None:
    """An f32-accumulated dot of two loaded :class:`affine.Tiles` blocks, computed from their
    compact tiles without expanding them per program; None when the operands are not such
    blocks, or the precision needs the general path."""
    hx, hy = x.handle, y.handle
    if not (isinstance(hx, affine.Tiles) and isinstance(hy, affine.Tiles) and hx.grid == hy.grid
            and x.type in (F16, BF16, F32) and (x.type != F32 or precision in ("ieee", "tf32"))):
        return None
    cx, cy = hx.compact, hy.compact
    if x.type == F32 and precision == "tf32":
        cx, cy = tf32_truncate(cx), tf32_truncate(cy)
    product = _grid_product(cx.astype(np.float32, copy=False), cy.astype(np.float32, copy=False), hx.grid)
    if acc is not None:
        product += acc
    return product


def _grid_product(cx: Array, cy: Array, grid: tuple[int, int, int]) -> Array:
    """``cx @ cy`` per program, ``(P, M, N)``, from tiles shaped ``(gz|1, gy|1, gx|1, M|K, K|N)``:
    one batched product that broadcasts the grid axes, reading each tile where it lies."""
    gx, gy, gz = grid
    product: Array = np.matmul(cx, cy)
    if product.shape[:3] != (gz, gy, gx):
        product = np.ascontiguousarray(np.broadcast_to(product, (gz, gy, gx, *product.shape[3:])))
    return product.reshape(gz * gy * gx, *product.shape[3:])


# ------------------------------------------------------------------------------ tl.dot_scaled


def _scaled_operand(engine: Engine, x: object, scale: object, dtype: DType, side: str) -> Array:
    """One microscaled operand (of the format's ``dtype``) decoded to float64, its e8m0 scales
    applied along K.

    ``side`` is "lhs" (shape [M, K], scales [M, K/32]) or "rhs" (shape [K, N], scales [N, K/32]).
    An fp8 format may come as its fp8 dtype or as raw u8 bits."""
    t = operand(engine, x, f"tl.dot_scaled: {side}")
    data = values.array(t)
    decoded = (np.ascontiguousarray(data).view(dtype.numpy) if t.type == U8 else data).astype(np.float64)
    oriented = decoded if side == "lhs" else np.swapaxes(decoded, 1, 2)  # [M|N, K]
    if scale is not None:
        oriented = oriented * _scale_factors(engine, scale, side)
    return oriented if side == "lhs" else np.swapaxes(oriented, 1, 2)


def _scale_factors(engine: Engine, scale: object, side: str) -> Array:
    """e8m0 scales ``2**(s - 127)`` (255 is NaN), repeated over their 32 K-elements."""
    s = operand(engine, scale, f"tl.dot_scaled: {side}_scale")
    bits = values.array(s).astype(np.int64)
    factors = np.where(bits == 255, np.nan, np.ldexp(1.0, bits - 127))
    return np.repeat(factors, SCALE_GROUP, axis=-1)


@implements(tl.dot_scaled)
def dot_scaled(engine: Engine, a: Mapping[str, Any]) -> Tensor[Any, Any]:
    """``(lhs * 2**(lhs_scale-127)) @ (rhs * 2**(rhs_scale-127)) + acc`` in f32, products summed
    exactly and rounded once (``fast_math`` changes nothing here)."""
    lhs = _scaled_operand(engine, a["lhs"], a["lhs_scale"], a["lhs_dtype"], "lhs")
    rhs = _scaled_operand(engine, a["rhs"], a["rhs_scale"], a["rhs_dtype"], "rhs")
    shape = a["shape"]
    engine.note_block(max(lhs.shape[1] * lhs.shape[2], rhs.shape[1] * rhs.shape[2], shape[0] * shape[1]))
    acc = _acc(engine, a["acc"], "tl.dot_scaled")
    with np.errstate(invalid="ignore"):
        return values.make(_matmul(lhs, rhs, acc).astype(np.float32), F32)
