"""Block matrix products."""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from tile_lang.builtin import builtin
from tile_lang.dtypes import Float, Int, UInt, W8, W32, f32
from tile_lang.signature import constexpr
from tile_lang.tensor import R2, R3, Tensor, W

SCALE_GROUP = 32  # K-elements per e8m0 scale of dot_scaled
R = TypeVar("R", R2, R3)  # dot takes 2-D blocks, or 3-D ones batched along the first axis

InputPrecision = Literal["ieee", "tf32", "tf32x3"]
ScaledFormat = Literal["e2m1", "e4m3", "e5m2", "bf16", "fp16"] | constexpr  # Triton's names, or a bare constexpr holding one


@overload
def dot(
    input: Tensor[Float[W], R], other: Tensor[Float[W], R], acc: Tensor[Float[W32], R] | None = None,
    input_precision: InputPrecision | None = None, allow_tf32: bool | None = None, max_num_imprecise_acc: int | None = None,
    out_dtype: type[f32] = f32,
) -> Tensor[Float[W32], R]: ...
@overload
def dot(
    input: Tensor[Int[W8], R], other: Tensor[Int[W8], R], acc: Tensor[Int[W32], R] | None = None,
    input_precision: InputPrecision | None = None, allow_tf32: bool | None = None, max_num_imprecise_acc: int | None = None,
    out_dtype: type[Int[W32]] = Int[W32],
) -> Tensor[Int[W32], R]: ...
@overload
def dot(
    input: Tensor[Float[W], R], other: Tensor[Float[W], R], acc: Tensor[Float[W], R] | None = None,
    input_precision: InputPrecision | None = None, allow_tf32: bool | None = None, max_num_imprecise_acc: int | None = None,
    *, out_dtype: type[Float[W]],
) -> Tensor[Float[W], R]: ...
@builtin
def dot(
    input: Any, other: Any, acc: Any = None, input_precision: InputPrecision | None = None,
    allow_tf32: bool | None = None, max_num_imprecise_acc: int | None = None, out_dtype: Any = f32,
) -> Any:
    """Matrix product of 2-D (or batched 3-D) blocks accumulated in ``out_dtype``, plus ``acc``.

    ``input_precision="tf32"`` (the default for f32 inputs) rounds both operands to tf32 first.
    """


@builtin
def dot_scaled(
    lhs: Tensor[Any, R2], lhs_scale: Tensor[UInt[W8], R2] | None, lhs_format: ScaledFormat,
    rhs: Tensor[Any, R2], rhs_scale: Tensor[UInt[W8], R2] | None, rhs_format: ScaledFormat,
    acc: Tensor[Float[W32], R2] | None = None, fast_math: bool = False, lhs_k_pack: bool = True,
    rhs_k_pack: bool = True, out_dtype: type[f32] = f32,
) -> Tensor[Float[W32], R2]:
    """Microscaled matrix product: operands in fp8/bf16/fp16 formats with e8m0 scales per 32 elements of K."""


