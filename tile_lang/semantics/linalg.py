"""Matrix-product rules: ``tl.dot`` and ``tl.dot_scaled`` operands, shapes, result and
accumulator dtypes, precision, microscaling formats."""

from __future__ import annotations

from typing import Any

import tile_lang.dtypes as dtypes
from tile_lang.dtypes import DType
from tile_lang.ops import linalg as tllinalg
from tile_lang.semantics.base import Args, Block, SemanticError, dtype_arg, operand, rule
from tile_lang.semantics.reduction import values

DOT_DTYPES = (dtypes.I8, dtypes.F16, dtypes.BF16, dtypes.F32, dtypes.F64, dtypes.F8E4M3, dtypes.F8E5M2)
PRECISIONS = ("tf32", "tf32x3", "ieee")  # input_precision, Triton's spellings
SCALED_FORMATS = {"e4m3": dtypes.F8E4M3, "e5m2": dtypes.F8E5M2, "bf16": dtypes.BF16, "fp16": dtypes.F16}

Shape = tuple[int, ...]


def min_k(dtype: DType) -> int:
    """Triton's smallest K for a dot on NVIDIA (M and N may be anything)."""
    return {8: 32, 64: 4}.get(dtype.bits, 16)


def dot_shape(x: DType, x_shape: Shape, y: DType, y_shape: Shape) -> Shape:
    """The result shape of ``x @ y`` after Triton's dtype and shape checks (2-D or batched 3-D)."""
    shown = f"{x!r} {list(x_shape)} and {y!r} {list(y_shape)}"
    if x not in DOT_DTYPES or y not in DOT_DTYPES:
        raise SemanticError(f"tl.dot operands must be i8, f16, bf16, f32, f64 or fp8; got {shown}")
    if x != y and not (x.is_fp8 and y.is_fp8):
        raise SemanticError(f"tl.dot operands must have the same dtype, got {shown}")
    if len(x_shape) not in (2, 3) or len(y_shape) != len(x_shape):
        raise SemanticError(f"tl.dot needs two 2-D or two 3-D (batched) blocks, got {shown}")
    (*batch_x, m, k), (*batch_y, k2, n) = x_shape, y_shape
    if k != k2 or batch_x != batch_y:
        raise SemanticError(f"tl.dot: shapes {list(x_shape)} and {list(y_shape)} do not chain")
    if k < min_k(x):
        raise SemanticError(f"tl.dot: K = {k} is below the minimum of {min_k(x)} for {x!r} operands")
    return (*batch_x, m, n)


def dot_dtype(operand: DType, out_dtype: DType | None) -> DType:
    """i8 gives i32 and f64 gives f64 whatever ``out_dtype`` says (Triton); other floats give
    ``out_dtype`` (None meaning f32), which must be f32, f16 or bf16. Triton 3.6 would ignore it
    for f32/bf16 operands; here it is honoured, rounding the f32 accumulation."""
    if operand == dtypes.I8:
        return dtypes.I32
    if operand == dtypes.F64:
        return dtypes.F64
    out = dtypes.F32 if out_dtype is None else out_dtype
    if out not in (dtypes.F32, dtypes.F16, dtypes.BF16):
        raise SemanticError(f"tl.dot: out_dtype must be f32, f16 or bf16 for {operand!r} operands, got {out!r}")
    return out


def accumulator(dtype: DType, shape: Shape, acc: DType, acc_shape: Shape, what: str) -> None:
    """``acc`` must be exactly the result: its dtype and shape."""
    if acc != dtype or acc_shape != shape:
        raise SemanticError(f"{what}: acc must be a {dtype!r} block of shape {list(shape)}, "
                            f"got a {acc!r} block of shape {list(acc_shape)}")


def precision(chosen: object, allow_tf32: object) -> str:
    """``input_precision`` (one of :data:`PRECISIONS`), from ``allow_tf32`` (deprecated) or
    Triton's default, tf32."""
    if chosen is not None and allow_tf32 is not None:
        raise SemanticError("tl.dot: give only one of input_precision and allow_tf32")
    if allow_tf32 is not None:
        return "tf32" if allow_tf32 else "ieee"
    if chosen is None:
        return "tf32"
    if chosen not in PRECISIONS:
        raise SemanticError(f"tl.dot: input_precision must be one of {', '.join(PRECISIONS)}, got {chosen!r}")
    return str(chosen)


def imprecise_chunk(given: object, dtype: DType, k: int) -> int | None:
    """How many K elements an fp8 dot accumulates in the tensor cores' reduced precision before
    adding that partial sum into its f32 accumulator (Triton's ``max_num_imprecise_acc``, at most
    K; 0: after each instruction), or None for no such adds (Triton's default on Hopper, and every
    dot of other operands)."""
    if given is None or not dtype.is_fp8:
        return None
    if isinstance(given, bool) or not isinstance(given, int) or given < 0:
        raise SemanticError(f"tl.dot: max_num_imprecise_acc must be an int >= 0 or None, got {given!r}")
    if given > k:
        raise SemanticError(f"max_num_imprecise_acc ({given}) must be <= K ({k})")
    return given


def scaled_format(fmt: object, k_pack: object, side: str) -> DType:
    """The element dtype of one dot_scaled operand's format ("lhs" or "rhs")."""
    what = f"tl.dot_scaled: {side}"
    if fmt == "e2m1":
        raise SemanticError(f"{what}: the e2m1 (packed fp4) format is not supported")
    if fmt not in SCALED_FORMATS:
        raise SemanticError(f"{what}_format must be one of {', '.join(SCALED_FORMATS)} (or e2m1), got {fmt!r}")
    if not k_pack:
        raise SemanticError(f"{what}_k_pack=False only applies to e2m1 operands")
    return SCALED_FORMATS[str(fmt)]


def scaled_operand(fmt: object, k_pack: object, side: str, dtype: DType, shape: Shape) -> DType:
    """The format's dtype, after checking the operand is a 2-D block of it (an fp8 format may
    come as raw u8 bits)."""
    want = scaled_format(fmt, k_pack, side)
    if len(shape) != 2 or not (dtype == want or (want.is_fp8 and dtype == dtypes.U8)):
        raise SemanticError(f"tl.dot_scaled: {side}: expected a 2-D {want!r} block (or u8 bits) for format {fmt!r}, "
                            f"got a {dtype!r} block of shape {list(shape)}")
    return want


def scale(side: str, dtype: DType, shape: Shape, rows: int, k: int) -> None:
    """e8m0 scales: a u8 block ``[rows, k / 32]``, one per 32 elements of K."""
    if dtype != dtypes.U8 or shape != (rows, k // tllinalg.SCALE_GROUP) or k % tllinalg.SCALE_GROUP:
        raise SemanticError(f"tl.dot_scaled: {side}_scale must be a u8 block of shape [{rows}, {k // tllinalg.SCALE_GROUP}] "
                            f"(one e8m0 scale per {tllinalg.SCALE_GROUP} elements of K = {k}), "
                            f"got a {dtype!r} block of shape {list(shape)}")


def dot_scaled_shape(lhs: Shape, rhs: Shape, out_dtype: DType | None) -> Shape:
    """[M, K] @ [K, N] -> [M, N], always f32."""
    if lhs[1] != rhs[0]:
        raise SemanticError(f"tl.dot_scaled: lhs {list(lhs)} and rhs {list(rhs)} do not chain")
    if out_dtype is not None and out_dtype != dtypes.F32:
        raise SemanticError("tl.dot_scaled: out_dtype must be f32")
    return (lhs[0], rhs[1])


# ---------------------------------------------------------------- the ops' rules (see semantics.dispatch)


def _values(value: object, what: str) -> Block:
    x = operand(value)
    values(x.dtype, what)
    return x


def _out_dtype(marker: object, what: str) -> DType | None:
    return None if marker is None else dtype_arg(marker, what)


def _accumulator(a: Args, dtype: DType, shape: Shape, what: str) -> None:
    if a["acc"] is not None:
        acc = _values(a["acc"], what)
        accumulator(dtype, shape, acc.dtype, acc.shape, what)


@rule(tllinalg.dot)
def _dot(a: Args) -> dict[str, Any]:
    """``shape`` and ``out_dtype``: the result's; ``input_precision``: the one f32 operands use."""
    x, y = _values(a["input"], "tl.dot"), _values(a["other"], "tl.dot")
    shape = dot_shape(x.dtype, x.shape, y.dtype, y.shape)
    out = dot_dtype(x.dtype, _out_dtype(a["out_dtype"], "tl.dot: out_dtype"))
    _accumulator(a, out, shape, "tl.dot")
    return {"shape": shape, "out_dtype": out, "input_precision": precision(a["input_precision"], a["allow_tf32"]),
            "max_num_imprecise_acc": imprecise_chunk(a["max_num_imprecise_acc"], x.dtype, x.shape[-1])}


def _scaled(a: Args, side: str) -> tuple[Block, DType]:
    """One operand of ``tl.dot_scaled`` (``side`` "lhs" [M, K] or "rhs" [K, N]) and its format's
    dtype, its scales (when given) checked against it."""
    x = _values(a[side], f"tl.dot_scaled: {side}")
    dtype = scaled_operand(a[f"{side}_format"], a[f"{side}_k_pack"], side, x.dtype, x.shape)
    if a[f"{side}_scale"] is not None:
        s = _values(a[f"{side}_scale"], f"tl.dot_scaled: {side}_scale")
        rows, k = x.shape if side == "lhs" else x.shape[::-1]
        scale(side, s.dtype, s.shape, rows, k)
    return x, dtype


@rule(tllinalg.dot_scaled)
def _dot_scaled(a: Args) -> dict[str, Any]:
    """``shape``: the result's (always f32); ``lhs_dtype``/``rhs_dtype``: the operands' formats."""
    (lhs, lhs_dtype), (rhs, rhs_dtype) = _scaled(a, "lhs"), _scaled(a, "rhs")
    shape = dot_scaled_shape(lhs.shape, rhs.shape, _out_dtype(a["out_dtype"], "tl.dot_scaled: out_dtype"))
    _accumulator(a, dtypes.F32, shape, "tl.dot_scaled")
    return {"shape": shape, "lhs_dtype": lhs_dtype, "rhs_dtype": rhs_dtype}
