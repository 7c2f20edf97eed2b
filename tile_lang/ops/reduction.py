"""Reductions, scans, sorting and gathers along an axis of a block."""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from tile_lang.builtin import builtin, reduction
from tile_lang.dtypes import Bool, Dtype, Float, Int, W16, W32, WBF16, WE4B8, WE4B15, WE4M3, WE5B16, WE5M2
from tile_lang.func import Func, func, helper
from tile_lang.ops.debug import static_assert
from tile_lang.ops.math import IntT, NumT, exp, fdiv
from tile_lang.ops.shape import reshape
from tile_lang.operators import BinaryOp, binary
from tile_lang.tensor import R0, R1, R2, R3, D, R, Tensor, W
from tile_lang.tensor import tensor_members

D2 = TypeVar("D2", bound=Dtype)
D3 = TypeVar("D3", bound=Dtype)  # the second and third blocks of a tuple reduction

Combine = Func[[Tensor[D, R0], Tensor[D, R0]], Tensor[D, R0]]
# floats narrower than 32 bits, whose max and min without indices are f32 (semantics.reduction.max_dtype)
NarrowT = TypeVar("NarrowT", Float[W16], Float[WBF16], Float[WE4M3], Float[WE5M2], Float[WE4B15], Float[WE4B8],
                  Float[WE5B16])
BF16 = Float[WBF16]  # scanned, and reduced with indices, in f32 (semantics.reduction.max_dtype, scan_dtype)


@overload
def sum(input: Tensor[NumT, R1], axis: Literal[0, -1] | None = None, keep_dims: Literal[False] = False, dtype: None = None) -> Tensor[NumT, R0]: ...
@overload
def sum(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], keep_dims: Literal[False] = False, dtype: None = None) -> Tensor[NumT, R1]: ...
@overload
def sum(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], keep_dims: Literal[False] = False, dtype: None = None) -> Tensor[NumT, R2]: ...
@overload
def sum(input: Tensor[NumT, R], axis: int | None, keep_dims: Literal[True], dtype: None = None) -> Tensor[NumT, R]: ...
@overload
def sum(input: Tensor[NumT, R], axis: None = None, keep_dims: Literal[False] = False, dtype: None = None) -> Tensor[NumT, R0]: ...
@overload
def sum(input: Tensor[NumT, R1], axis: Literal[0, -1] | None = None, keep_dims: Literal[False] = False, *, dtype: type[D2]) -> Tensor[D2, R0]: ...
@overload
def sum(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], keep_dims: Literal[False] = False, *, dtype: type[D2]) -> Tensor[D2, R1]: ...
@overload
def sum(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], keep_dims: Literal[False] = False, *, dtype: type[D2]) -> Tensor[D2, R2]: ...
@overload
def sum(input: Tensor[NumT, R], axis: int | None, keep_dims: Literal[True], dtype: type[D2]) -> Tensor[D2, R]: ...
@overload
def sum(input: Tensor[NumT, R], axis: None = None, keep_dims: Literal[False] = False, *, dtype: type[D2]) -> Tensor[D2, R0]: ...
@builtin
def sum(input: Any, axis: int | None = None, keep_dims: bool = False, dtype: Any = None) -> Any:
    """Sum along ``axis`` (all axes when None); small integers accumulate in i32 as in Triton."""


@overload
def xor_sum(input: Tensor[IntT, R1], axis: Literal[0, -1] | None = None, keep_dims: Literal[False] = False) -> Tensor[IntT, R0]: ...
@overload
def xor_sum(input: Tensor[IntT, R2], axis: Literal[0, 1, -1], keep_dims: Literal[False] = False) -> Tensor[IntT, R1]: ...
@overload
def xor_sum(input: Tensor[IntT, R3], axis: Literal[0, 1, 2, -1], keep_dims: Literal[False] = False) -> Tensor[IntT, R2]: ...
@overload
def xor_sum(input: Tensor[IntT, R], axis: int | None, keep_dims: Literal[True]) -> Tensor[IntT, R]: ...
@overload
def xor_sum(input: Tensor[IntT, R], axis: None = None, keep_dims: Literal[False] = False) -> Tensor[IntT, R0]: ...
@reduction
def xor_sum(input: Any, axis: int | None = None, keep_dims: bool = False) -> Any:
    """Bitwise xor of all elements along ``axis``."""


@overload
def max(input: Tensor[NarrowT, R1], axis: Literal[0, -1] | None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R0]: ...
@overload
def max(input: Tensor[NarrowT, R2], axis: Literal[0, 1, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R1]: ...
@overload
def max(input: Tensor[NarrowT, R3], axis: Literal[0, 1, 2, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R2]: ...
@overload
def max(input: Tensor[NarrowT, R], axis: int | None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[Float[W32], R]: ...
@overload
def max(input: Tensor[BF16, R1], axis: Literal[0, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[Float[W32], R0], Tensor[Int[W32], R0]]: ...
@overload
def max(input: Tensor[BF16, R2], axis: Literal[0, 1, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[Float[W32], R1], Tensor[Int[W32], R1]]: ...
@overload
def max(input: Tensor[NarrowT, R], axis: None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R0]: ...
@overload
def max(input: Tensor[NumT, R1], axis: Literal[0, -1] | None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R0]: ...
@overload
def max(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R1]: ...
@overload
def max(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R2]: ...
@overload
def max(input: Tensor[NumT, R], axis: int | None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[NumT, R]: ...
@overload
def max(input: Tensor[NumT, R1], axis: Literal[0, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[NumT, R0], Tensor[Int[W32], R0]]: ...
@overload
def max(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[NumT, R1], Tensor[Int[W32], R1]]: ...
@overload
def max(input: Tensor[NumT, R], axis: None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R0]: ...
@builtin
def max(input: Any, axis: int | None = None, return_indices: bool = False, return_indices_tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """Maximum along ``axis``; with ``return_indices`` also its index (leftmost on ties)."""


@overload
def min(input: Tensor[NarrowT, R1], axis: Literal[0, -1] | None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R0]: ...
@overload
def min(input: Tensor[NarrowT, R2], axis: Literal[0, 1, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R1]: ...
@overload
def min(input: Tensor[NarrowT, R3], axis: Literal[0, 1, 2, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R2]: ...
@overload
def min(input: Tensor[NarrowT, R], axis: int | None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[Float[W32], R]: ...
@overload
def min(input: Tensor[BF16, R1], axis: Literal[0, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[Float[W32], R0], Tensor[Int[W32], R0]]: ...
@overload
def min(input: Tensor[BF16, R2], axis: Literal[0, 1, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[Float[W32], R1], Tensor[Int[W32], R1]]: ...
@overload
def min(input: Tensor[NarrowT, R], axis: None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Float[W32], R0]: ...
@overload
def min(input: Tensor[NumT, R1], axis: Literal[0, -1] | None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R0]: ...
@overload
def min(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R1]: ...
@overload
def min(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R2]: ...
@overload
def min(input: Tensor[NumT, R], axis: int | None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[NumT, R]: ...
@overload
def min(input: Tensor[NumT, R1], axis: Literal[0, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[NumT, R0], Tensor[Int[W32], R0]]: ...
@overload
def min(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], return_indices: Literal[True], return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> tuple[Tensor[NumT, R1], Tensor[Int[W32], R1]]: ...
@overload
def min(input: Tensor[NumT, R], axis: None = None, return_indices: Literal[False] = False, return_indices_tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[NumT, R0]: ...
@builtin
def min(input: Any, axis: int | None = None, return_indices: bool = False, return_indices_tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """Minimum along ``axis``; with ``return_indices`` also its index (leftmost on ties)."""


@overload
def argmax(input: Tensor[NumT, R1], axis: Literal[0, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R0]: ...
@overload
def argmax(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R1]: ...
@overload
def argmax(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R2]: ...
@overload
def argmax(input: Tensor[NumT, R], axis: int, tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[Int[W32], R]: ...
@builtin
def argmax(input: Any, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (the first on ties unless ``tie_break_left=False``)."""


@overload
def argmin(input: Tensor[NumT, R1], axis: Literal[0, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R0]: ...
@overload
def argmin(input: Tensor[NumT, R2], axis: Literal[0, 1, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R1]: ...
@overload
def argmin(input: Tensor[NumT, R3], axis: Literal[0, 1, 2, -1], tie_break_left: bool = True, keep_dims: Literal[False] = False) -> Tensor[Int[W32], R2]: ...
@overload
def argmin(input: Tensor[NumT, R], axis: int, tie_break_left: bool = True, *, keep_dims: Literal[True]) -> Tensor[Int[W32], R]: ...
@builtin
def argmin(input: Any, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """Index of the minimum along ``axis``."""


@overload
def reduce(input: Tensor[D, R1], axis: Literal[0, -1] | None, combine_fn: Combine[D], keep_dims: Literal[False] = False) -> Tensor[D, R0]: ...
@overload
def reduce(input: Tensor[D, R2], axis: Literal[0, 1, -1], combine_fn: Combine[D], keep_dims: Literal[False] = False) -> Tensor[D, R1]: ...
@overload
def reduce(input: Tensor[D, R3], axis: Literal[0, 1, 2, -1], combine_fn: Combine[D], keep_dims: Literal[False] = False) -> Tensor[D, R2]: ...
@overload
def reduce(input: Tensor[D, R], axis: int | None, combine_fn: Combine[D], keep_dims: Literal[True]) -> Tensor[D, R]: ...
@overload
def reduce(input: Tensor[D, R], axis: None, combine_fn: Combine[D], keep_dims: Literal[False] = False) -> Tensor[D, R0]: ...
# a tuple of two or three blocks (FlagGems' Welford mean, count and M2): the results keep the blocks' dtypes,
# as Triton's reduce requires of its combine function, and lose the axis
@overload
def reduce(input: tuple[Tensor[D, R1], Tensor[D2, R1]], axis: Literal[0, -1] | None, combine_fn: Func[..., Any],
           keep_dims: Literal[False] = False) -> tuple[Tensor[D, R0], Tensor[D2, R0]]: ...
@overload
def reduce(input: tuple[Tensor[D, R2], Tensor[D2, R2]], axis: Literal[0, 1, -1], combine_fn: Func[..., Any],
           keep_dims: Literal[False] = False) -> tuple[Tensor[D, R1], Tensor[D2, R1]]: ...
@overload
def reduce(input: tuple[Tensor[D, R1], Tensor[D2, R1], Tensor[D3, R1]], axis: Literal[0, -1] | None,
           combine_fn: Func[..., Any], keep_dims: Literal[False] = False) -> tuple[Tensor[D, R0], Tensor[D2, R0], Tensor[D3, R0]]: ...
@overload
def reduce(input: tuple[Tensor[D, R2], Tensor[D2, R2], Tensor[D3, R2]], axis: Literal[0, 1, -1],
           combine_fn: Func[..., Any], keep_dims: Literal[False] = False) -> tuple[Tensor[D, R1], Tensor[D2, R1], Tensor[D3, R1]]: ...
@overload
def reduce(input: tuple[Tensor[Any, R], ...], axis: int | None, combine_fn: Func[..., Any], keep_dims: bool = False) -> tuple[Any, ...]: ...
@builtin
def reduce(input: Any, axis: int | None, combine_fn: Any, keep_dims: bool = False) -> Any:
    """Reduce along ``axis`` with an associative, commutative ``@tl.func`` combine function. A
    tuple of N same-shaped blocks reduces together: ``combine_fn`` takes the N left values then
    the N right values and returns N; the result is an N-tuple."""


@overload
def associative_scan(input: Tensor[D, R], axis: int, combine_fn: Combine[D], reverse: bool = False) -> Tensor[D, R]: ...
@overload
def associative_scan(input: tuple[Tensor[Any, R], ...], axis: int, combine_fn: Func[..., Any], reverse: bool = False) -> tuple[Tensor[Any, R], ...]: ...
@builtin
def associative_scan(input: Any, axis: int, combine_fn: Any, reverse: bool = False) -> Any:
    """Inclusive scan along ``axis`` with an associative ``@tl.func`` combine function; a tuple
    of blocks scans together, as :func:`reduce`'s."""


@overload
def cumsum(input: Tensor[BF16, R], axis: int = 0, reverse: bool = False, dtype: None = None) -> Tensor[Float[W32], R]: ...
@overload
def cumsum(input: Tensor[NumT, R], axis: int = 0, reverse: bool = False, dtype: None = None) -> Tensor[NumT, R]: ...
@overload
def cumsum(input: Tensor[NumT, R], axis: int = 0, reverse: bool = False, *, dtype: type[D2]) -> Tensor[D2, R]: ...
@builtin
def cumsum(input: Any, axis: int = 0, reverse: bool = False, dtype: Any = None) -> Any:
    """Inclusive prefix sum along ``axis``, in ``dtype`` when given (the input converted to it
    first, as Triton's); bf16 sums in f32 and small integers in i32 or u32, as Triton 3.6's."""


@overload
def cumprod(input: Tensor[BF16, R], axis: int = 0, reverse: bool = False) -> Tensor[Float[W32], R]: ...
@overload
def cumprod(input: Tensor[NumT, R], axis: int = 0, reverse: bool = False) -> Tensor[NumT, R]: ...
@builtin
def cumprod(input: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive prefix product along ``axis`` (bf16 multiplied in f32, as Triton 3.6's)."""


@builtin
def sort(x: Tensor[NumT, R], dim: int | None = None, descending: bool = False) -> Tensor[NumT, R]:
    """Sort along ``dim`` (the last axis by default)."""


@builtin
def flip(x: Tensor[D, R], dim: int | None = None) -> Tensor[D, R]:
    """Reverse the order of elements along ``dim`` (the last axis by default)."""


@helper
def topk(x: Tensor[NumT, R], k: int, dim: int | None = None, descending: bool = True) -> Tensor[NumT, R]:
    """The ``k`` largest elements of the last axis, largest first (the smallest, smallest first,
    with ``descending=False``), as Triton's: ``x`` sorted, then the first of its chunks of ``k``,
    which is each position's max (min) over the chunks."""
    last = len(x.shape) - 1
    static_assert(dim is None or dim in (last, -1), "tl.topk: only the last dimension is supported")
    static_assert(k > 0 and k & (k - 1) == 0 and x.shape[last] % k == 0,
                  "tl.topk: k must be a power of two no larger than the last dimension")
    chunks = reshape(sort(x, last, descending), x.shape[:last] + (x.shape[last] // k, k))
    first = max(chunks, last, keep_dims=True) if descending else min(chunks, last, keep_dims=True)
    return reshape(first, x.shape[:last] + (k,)).to(x.dtype)  # a narrow float's max is f32: Triton's topk keeps x's


@func
def _bitwise_or(a: Tensor[IntT, R0], b: Tensor[IntT, R0]) -> Tensor[IntT, R0]:
    return binary(BinaryOp.OR, a, b)  # type: ignore[no-any-return]


@helper
def reduce_or(input: Tensor[IntT, R], axis: int | None, keep_dims: bool = False) -> Tensor[IntT, Any]:
    """Bitwise or of all elements along ``axis``, as Triton's (a ``tl.reduce`` with ``|``)."""
    static_assert(input.dtype.is_int(), "tl.reduce_or takes an integer block")
    return reduce(input, axis, _bitwise_or, keep_dims=keep_dims)  # type: ignore[call-overload, no-any-return]


@builtin
def histogram(input: Tensor[Int[W], R1], num_bins: int, mask: Tensor[Bool, R1] | None = None) -> Tensor[Int[W32], R1]:
    """Counts of each value in ``[0, num_bins)``; values outside are ignored."""


@builtin
def gather(src: Tensor[D, R], index: Tensor[IntT, R], axis: int) -> Tensor[D, R]:
    """``src`` values picked along ``axis`` by ``index`` (same rank, other axes matching)."""


@overload
def softmax(x: Tensor[NarrowT, R], dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> Tensor[Float[W32], R]: ...
@overload
def softmax(x: Tensor[Float[W], R], dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> Tensor[Float[W], R]: ...
@helper
def softmax(x: Any, dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``, as Triton 3.6's: axis 0 by default
    (not the last), and the max and sum ``keep_dims`` as given, so with ``keep_dims=False`` along
    another axis they broadcast against ``x`` from the right as Triton's do; floats narrower than
    32 bits give f32 (their max is f32)."""
    axis = 0 if dim is None else dim
    num = exp(x - max(x, axis, keep_dims=keep_dims))  # type: ignore[call-overload]
    return fdiv(num, sum(num, axis, keep_dims=keep_dims), ieee_rounding=ieee_rounding)  # type: ignore[call-overload]


tensor_members(sum, max, min, argmax, argmin, xor_sum, cumsum, cumprod, sort, flip, topk, softmax)
