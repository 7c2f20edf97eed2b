"""The typed block values of a kernel: ``Tensor[D, R]`` and the scalar ``Pointer[D]``.

Both type parameters are invariant and ``self`` is restricted by *structure*
(``self: Tensor[Float[W], R]``), the encoding mypy really checks. At run time a tensor is a
dtype, a block shape and an engine-specific handle; operators dispatch to the active engine.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, Protocol, TypeAlias, TypeVar, final, overload

from tile_lang.dtypes import Bool, Dtype, DType, Float, Int, UInt, W16, W32, WBF16, Width, marker_of
from tile_lang.dtypes import WE4B8, WE4B15, WE4M3, WE5B16, WE5M2
from tile_lang.errors import UsageError
from tile_lang.operators import BinaryOp, UnaryOp, binary as _binary, index as _index
from tile_lang.operators import subscript as _subscript, truth as _truth, unary as _unary
from tile_lang.errors import SemanticError


class Shape(tuple[int, ...]):
    """``x.shape``: a tuple of ints that also equals a list of them, as Triton's (a list there),
    so ``tl.static_assert(x.shape == [BLOCK])`` holds."""

    __hash__ = tuple.__hash__

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other) is True

    def __ne__(self, other: object) -> bool:
        return not self == other


def permute_dims(dims: tuple[int | tuple[int, ...] | list[int], ...]) -> tuple[int, ...]:
    """The ints of ``x.permute(1, 0)`` or ``x.reshape((2, 4))``: Triton's tensor methods take
    axes or sizes as ints or as one tuple (or list) of ints."""
    flat = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    axes = tuple(d for d in flat if isinstance(d, int))
    if len(axes) != len(flat):
        raise SemanticError(f"a tensor method takes axes or sizes as ints or one tuple of ints, got {dims!r}")
    return axes


SHAPE_METHODS = frozenset({"permute", "trans", "reshape", "view", "broadcast_to"})
"""Tensor methods ``x.name(*ints)`` that are ``tl.name(x, ints)`` (one tuple of ints also taken)."""
FORWARDED_METHODS = SHAPE_METHODS | frozenset({
    "expand_dims", "ravel", "split", "sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum", "cumprod",
    "sort", "flip", "topk", "softmax", "abs",
})
"""Tensor methods ``x.name(...)`` that are ``tl.name(x, ...)``, as Triton's ``tl.tensor`` has them."""


Rounding = Literal["rtne", "rtz"]
"""``fp_downcast_rounding`` of ``.to``/``tl.cast``: round to nearest even, or toward zero."""


class Rank:
    """Marker base of the rank argument of ``Tensor``."""


class R0(Rank):
    """A scalar block (the result of a full reduction)."""


class R1(Rank): ...


class R2(Rank): ...


class R3(Rank): ...


D = TypeVar("D", bound=Dtype)
E = TypeVar("E", bound=Dtype)
W = TypeVar("W", bound=Width)
R = TypeVar("R", bound=Rank)
S = TypeVar("S", bound=Rank)
# floats narrower than 32 bits, whose softmax is f32 (their tl.max is)
Narrow = TypeVar("Narrow", Float[W16], Float[WBF16], Float[WE4M3], Float[WE5M2], Float[WE4B15], Float[WE4B8],
                 Float[WE5B16])


@final
class _Unsupported:
    """Never instantiated. Each binary operator ends with an overload taking it, so that an
    operator the dtype lacks (``/`` on ints, ``&`` on floats) is one ``[operator]`` error
    rather than an extra "Invalid self argument" ``[misc]`` error from mypy."""


class HostPointer(Protocol[E]):
    """A pointer that exists on the host, a ``Buffer[E]`` (a ``Pointer[E]`` with a shape), seen
    through its structure so that this module needs nothing above it."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __add__(self, offsets: int, /) -> Pointer[E]: ...


class _PointerDtype:
    """``ptr.dtype``: in a kernel (a ``Pointer[D]`` parameter) the :class:`PointerType` whose
    ``element_ty`` is ``D``, as Triton's; on the host (a ``Buffer[D]``) the element type ``type[D]``,
    e.g. ``tl.f32``, as a NumPy array's. The only pointers that exist on the host are buffers (a
    kernel's pointer parameters are rank-0 pointer tensors, answered by ``Tensor.dtype``)."""

    @overload
    def __get__(self, obj: HostPointer[E], owner: object) -> type[E]: ...
    @overload
    def __get__(self, obj: Pointer[E], owner: object) -> PointerType[E]: ...
    @overload
    def __get__(self, obj: None, owner: object) -> _PointerDtype: ...
    def __get__(self, obj: Any, owner: object) -> Any:
        return self if obj is None else marker_of(obj.type)


class Pointer(Dtype, Generic[D]):
    """A scalar pointer to elements of ``D``; also a dtype, so ``Tensor[Pointer[D], R]`` exists.

    ``ptr + offsets`` is the Rust bound ``Pointer<D>: AddOffsets<i32, R, I32Tensor>``.
    Inside a kernel the engine passes a rank-0 pointer tensor in its place, so a pointer plus a
    scalar offset (an ``int`` or a rank-0 int block) is a ``Pointer[D]`` again:
    ``x_ptr += tl.program_id(0).to(tl.int64) * stride`` re-binds the parameter.
    """

    @overload
    def __add__(self, offsets: Tensor[Int[W], R0] | Tensor[UInt[W], R0]) -> Pointer[D]: ...  # type: ignore[overload-overlap]
    @overload
    def __add__(self, offsets: Tensor[Int[W], R] | Tensor[UInt[W], R]) -> Tensor[Pointer[D], R]: ...
    @overload
    def __add__(self, offsets: int) -> Pointer[D]: ...
    def __add__(self, offsets: Any) -> Any:
        raise UsageError("pointer arithmetic (a pointer parameter + offsets) happens inside a kernel")

    @overload
    def __radd__(self, offsets: Tensor[Int[W], R0]) -> Pointer[D]: ...  # type: ignore[overload-overlap]
    @overload
    def __radd__(self, offsets: Tensor[Int[W], R]) -> Tensor[Pointer[D], R]: ...
    @overload
    def __radd__(self, offsets: int) -> Pointer[D]: ...
    def __radd__(self, offsets: Any) -> Any:
        """``offsets + ptr``, as Triton writes ``pid + mean_ptr``: the same as ``ptr + offsets``."""
        return self + offsets

    @overload
    def __sub__(self, offsets: Tensor[Int[W], R0]) -> Pointer[D]: ...  # type: ignore[overload-overlap]
    @overload
    def __sub__(self, offsets: Tensor[Int[W], R]) -> Tensor[Pointer[D], R]: ...
    @overload
    def __sub__(self, offsets: int) -> Pointer[D]: ...
    def __sub__(self, offsets: Any) -> Any:
        raise UsageError("pointer arithmetic (a pointer parameter - offsets) happens inside a kernel")

    def add_offsets(self, offsets: Tensor[Int[W], R]) -> Tensor[Pointer[D], R]:
        """Rust-book spelling of ``ptr + offsets``."""
        return self + offsets

    dtype: _PointerDtype = _PointerDtype()
    if TYPE_CHECKING:  # a rank-0 pointer tensor's attribute in a kernel, a buffer's own on the host
        type: _PointerTypeOf


if TYPE_CHECKING:
    class _PointerTypeOf:
        """``ptr.type``, Triton's other spelling of ``ptr.dtype`` (``Out.type.element_ty``, tutorial 06): in
        a kernel the :class:`PointerType` whose ``element_ty`` is the pointee; a buffer's runtime dtype on
        the host, where :class:`~tile_lang.buffer.Buffer` sets it (and declares it ``DType``)."""

        @overload
        def __get__(self, obj: HostPointer[E], owner: object) -> DType: ...
        @overload
        def __get__(self, obj: Pointer[E], owner: object) -> PointerType[E]: ...
        def __get__(self, obj: Any, owner: object) -> Any: ...
        def __set__(self, obj: HostPointer[Any], value: DType) -> None: ...


@dataclass(frozen=True)
class PointerType(Generic[D]):
    """The ``dtype`` of a pointer: ``ptr.dtype.element_ty`` is the pointee (e.g. ``tl.f32``),
    usable wherever a dtype is, so a kernel generic over ``D`` can name it."""

    element_ty: type[D]

    @property
    def scalar(self) -> PointerType[D]:
        """Triton's ``scalar`` of a non-block type: the type itself."""
        return self


@dataclass(frozen=True)
class BlockType:
    """``x.type`` of a block, as Triton's ``block_type``: ``element_ty`` (also ``scalar``) is what
    ``x.dtype`` is, ``shape`` the block shape, ``numel`` its element count."""

    element_ty: object
    shape: Shape

    @property
    def scalar(self) -> object:
        return self.element_ty

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def type_value(kind: DType, block_shape: tuple[int, ...]) -> object:
    """What ``x.type`` is for a value of ``kind`` and ``block_shape`` (both backends answer with
    this), as in Triton: a scalar's is its dtype (``x.dtype``: a pointer parameter's ``.type.element_ty``
    is its pointee), a block's a :class:`BlockType`."""
    return BlockType(dtype_value(kind), Shape(block_shape)) if block_shape else dtype_value(kind)


class _DtypeOf:
    """``x.dtype``: the element type (``type[D]``, e.g. ``tl.f32``) of a value block, the
    :class:`PointerType` of a pointer block; either is usable in ``.to`` and ``tl.zeros``."""

    @overload
    def __get__(self, obj: Tensor[Pointer[E], Any], owner: object) -> PointerType[E]: ...
    @overload
    def __get__(self, obj: Tensor[E, Any], owner: object) -> type[E]: ...
    def __get__(self, obj: Any, owner: object) -> Any:
        return dtype_value(obj.type)


def dtype_value(kind: DType) -> object:
    """What ``x.dtype`` is for a value of ``kind`` (both backends answer with this): the element
    marker (``tl.f32``), or for a pointer a :class:`PointerType` with it as ``element_ty``."""
    return PointerType(marker_of(kind.element)) if kind.element is not None else marker_of(kind)  # type: ignore[arg-type]


class Converts:
    """What a kernel's scalar (``tl.program_id(0)``, an ``IntScalar`` or ``FloatScalar`` parameter)
    adds to the Python ``int``/``float`` mypy sees: ``.to`` a rank-0 block, as Triton's
    ``eps.to(tl.float32)``. Never built: when a kernel runs, such a scalar is a rank-0 block."""

    def to(self, dtype: type[E], fp_downcast_rounding: Rounding | None = None, bitcast: bool = False) -> Tensor[E, R0]:
        raise UsageError("a scalar's .to(...) is only meaningful inside a kernel")

    cast = to  # Triton's other spelling of .to (``tl.program_id(0).cast(tl.int64)``)


class Tensor(Generic[D, R]):
    """A block of ``D`` values of rank ``R``; the block shape is known when the kernel runs."""

    __slots__ = ("handle", "type", "block_shape")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, handle: object, type: DType, block_shape: tuple[int, ...]) -> None:
        self.handle = handle
        self.type = type
        self.block_shape = block_shape

    @property
    def shape(self) -> Shape:
        """The block shape, as Triton's ``x.shape``."""
        return Shape(self.block_shape)

    @property
    def numel(self) -> int:
        """The number of elements, a compile-time int (Triton's ``x.numel``)."""
        return math.prod(self.block_shape)

    dtype: _DtypeOf = _DtypeOf()

    @property
    def ndim(self) -> int:
        return len(self.block_shape)

    def __repr__(self) -> str:
        return f"Tensor[{self.type!r}, {list(self.block_shape)}]"

    def __bool__(self) -> bool:
        return _truth(self)

    def __index__(self) -> int:
        return _index(self)

    def __int__(self) -> int:
        return _index(self)

    if not TYPE_CHECKING:  # hidden from mypy, so ``abs(block)`` is a type error there: write tl.abs

        def __abs__(self):
            """``abs(pid - 3)``: a scalar mypy sees as ``int`` is a tensor when the kernel runs."""
            return _forward("abs", self)

    def __iter__(self) -> NoReturn:
        raise SemanticError("a tile_lang tensor is not iterable; use tl.static_range over its indices")

    @overload
    def __add__(self: Tensor[Pointer[E], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | Tensor[UInt[W], R]
                | Tensor[UInt[W], R0] | int) -> Tensor[Pointer[E], R]: ...
    @overload
    def __add__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]: ...
    @overload
    def __add__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __add__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __add__(self: Tensor[Pointer[E], R0], other: Tensor[Int[W], S] | Tensor[UInt[W], S]) -> Tensor[Pointer[E], S]: ...
    @overload
    def __add__(self: Tensor[Float[W], R0], other: Tensor[Float[W], S]) -> Tensor[Float[W], S]: ...
    @overload
    def __add__(self: Tensor[Int[W], R0], other: Tensor[Int[W], S]) -> Tensor[Int[W], S]: ...
    @overload
    def __add__(self: Tensor[UInt[W], R0], other: Tensor[UInt[W], S]) -> Tensor[UInt[W], S]: ...
    @overload
    def __add__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __add__(self, other: Any) -> Any:
        return _binary(BinaryOp.ADD, self, other)

    @overload
    def __radd__(self: Tensor[Float[W], R], other: float) -> Tensor[Float[W], R]: ...
    @overload
    def __radd__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __radd__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __radd__(self, other: Any) -> Any:
        return _binary(BinaryOp.ADD, other, self)

    @overload
    def __sub__(self: Tensor[Pointer[E], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Pointer[E], R]: ...
    @overload
    def __sub__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]: ...
    @overload
    def __sub__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __sub__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __sub__(self: Tensor[Pointer[E], R0], other: Tensor[Int[W], S]) -> Tensor[Pointer[E], S]: ...
    @overload
    def __sub__(self: Tensor[Float[W], R0], other: Tensor[Float[W], S]) -> Tensor[Float[W], S]: ...
    @overload
    def __sub__(self: Tensor[Int[W], R0], other: Tensor[Int[W], S]) -> Tensor[Int[W], S]: ...
    @overload
    def __sub__(self: Tensor[UInt[W], R0], other: Tensor[UInt[W], S]) -> Tensor[UInt[W], S]: ...
    @overload
    def __sub__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __sub__(self, other: Any) -> Any:
        return _binary(BinaryOp.SUB, self, other)

    @overload
    def __rsub__(self: Tensor[Float[W], R], other: float) -> Tensor[Float[W], R]: ...
    @overload
    def __rsub__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rsub__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rsub__(self, other: Any) -> Any:
        return _binary(BinaryOp.SUB, other, self)

    @overload
    def __mul__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]: ...
    @overload
    def __mul__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __mul__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __mul__(self: Tensor[Float[W], R0], other: Tensor[Float[W], S]) -> Tensor[Float[W], S]: ...
    @overload
    def __mul__(self: Tensor[Int[W], R0], other: Tensor[Int[W], S]) -> Tensor[Int[W], S]: ...
    @overload
    def __mul__(self: Tensor[UInt[W], R0], other: Tensor[UInt[W], S]) -> Tensor[UInt[W], S]: ...
    @overload
    def __mul__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __mul__(self, other: Any) -> Any:
        return _binary(BinaryOp.MUL, self, other)

    @overload
    def __rmul__(self: Tensor[Float[W], R], other: float) -> Tensor[Float[W], R]: ...
    @overload
    def __rmul__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rmul__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rmul__(self, other: Any) -> Any:
        return _binary(BinaryOp.MUL, other, self)

    @overload
    def __truediv__(self: Tensor[Float[W16], R], other: Tensor[Float[W16], R] | Tensor[Float[W16], R0] | float) -> Tensor[Float[W32], R]: ...
    @overload
    def __truediv__(self: Tensor[Float[WBF16], R], other: Tensor[Float[WBF16], R] | Tensor[Float[WBF16], R0] | float) -> Tensor[Float[W32], R]: ...
    @overload
    def __truediv__(self: Tensor[Float[W16], R0], other: Tensor[Float[W16], S]) -> Tensor[Float[W32], S]: ...
    @overload
    def __truediv__(self: Tensor[Float[WBF16], R0], other: Tensor[Float[WBF16], S]) -> Tensor[Float[W32], S]: ...
    @overload
    def __truediv__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]: ...
    @overload
    def __truediv__(self: Tensor[Float[W], R0], other: Tensor[Float[W], S]) -> Tensor[Float[W], S]: ...
    @overload
    def __truediv__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __truediv__(self, other: Any) -> Any:
        return _binary(BinaryOp.TRUEDIV, self, other)

    @overload
    def __rtruediv__(self: Tensor[Float[W16], R], other: float) -> Tensor[Float[W32], R]: ...
    @overload
    def __rtruediv__(self: Tensor[Float[WBF16], R], other: float) -> Tensor[Float[W32], R]: ...
    @overload
    def __rtruediv__(self: Tensor[Float[W], R], other: float) -> Tensor[Float[W], R]: ...
    def __rtruediv__(self, other: Any) -> Any:
        return _binary(BinaryOp.TRUEDIV, other, self)

    @overload
    def __floordiv__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __floordiv__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __floordiv__(self: Tensor[Int[W], R0], other: Tensor[Int[W], S]) -> Tensor[Int[W], S]: ...
    @overload
    def __floordiv__(self: Tensor[UInt[W], R0], other: Tensor[UInt[W], S]) -> Tensor[UInt[W], S]: ...
    @overload
    def __floordiv__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __floordiv__(self, other: Any) -> Any:
        return _binary(BinaryOp.FLOORDIV, self, other)

    @overload
    def __rfloordiv__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rfloordiv__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rfloordiv__(self, other: Any) -> Any:
        return _binary(BinaryOp.FLOORDIV, other, self)

    @overload
    def __mod__(self: Tensor[Float[W16], R], other: Tensor[Float[W16], R] | Tensor[Float[W16], R0] | float) -> Tensor[Float[W32], R]: ...
    @overload
    def __mod__(self: Tensor[Float[WBF16], R], other: Tensor[Float[WBF16], R] | Tensor[Float[WBF16], R0] | float) -> Tensor[Float[W32], R]: ...
    @overload
    def __mod__(self: Tensor[Float[W16], R0], other: Tensor[Float[W16], S]) -> Tensor[Float[W32], S]: ...
    @overload
    def __mod__(self: Tensor[Float[WBF16], R0], other: Tensor[Float[WBF16], S]) -> Tensor[Float[W32], S]: ...
    @overload
    def __mod__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Float[W], R]: ...
    @overload
    def __mod__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __mod__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __mod__(self: Tensor[Float[W], R0], other: Tensor[Float[W], S]) -> Tensor[Float[W], S]: ...
    @overload
    def __mod__(self: Tensor[Int[W], R0], other: Tensor[Int[W], S]) -> Tensor[Int[W], S]: ...
    @overload
    def __mod__(self: Tensor[UInt[W], R0], other: Tensor[UInt[W], S]) -> Tensor[UInt[W], S]: ...
    @overload
    def __mod__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __mod__(self, other: Any) -> Any:
        return _binary(BinaryOp.MOD, self, other)

    @overload
    def __rmod__(self: Tensor[Float[W16], R], other: float) -> Tensor[Float[W32], R]: ...
    @overload
    def __rmod__(self: Tensor[Float[WBF16], R], other: float) -> Tensor[Float[W32], R]: ...
    @overload
    def __rmod__(self: Tensor[Float[W], R], other: float) -> Tensor[Float[W], R]: ...
    @overload
    def __rmod__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rmod__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rmod__(self, other: Any) -> Any:
        return _binary(BinaryOp.MOD, other, self)

    @overload
    def __lt__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __lt__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __lt__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __lt__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __lt__(self, other: Any) -> Any:
        return _binary(BinaryOp.LT, self, other)

    @overload
    def __le__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __le__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __le__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __le__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __le__(self, other: Any) -> Any:
        return _binary(BinaryOp.LE, self, other)

    @overload
    def __gt__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __gt__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __gt__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __gt__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __gt__(self, other: Any) -> Any:
        return _binary(BinaryOp.GT, self, other)

    @overload
    def __ge__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __ge__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __ge__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...  # type: ignore[misc]
    @overload
    def __ge__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __ge__(self, other: Any) -> Any:
        return _binary(BinaryOp.GE, self, other)

    @overload
    def lt(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def lt(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def lt(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def lt(self, other: Any) -> Any:
        return _binary(BinaryOp.LT, self, other)

    @overload
    def le(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def le(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def le(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def le(self, other: Any) -> Any:
        return _binary(BinaryOp.LE, self, other)

    @overload
    def gt(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def gt(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def gt(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def gt(self, other: Any) -> Any:
        return _binary(BinaryOp.GT, self, other)

    @overload
    def ge(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def ge(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def ge(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def ge(self, other: Any) -> Any:
        return _binary(BinaryOp.GE, self, other)

    @overload
    def eq(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def eq(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def eq(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def eq(self, other: Any) -> Any:
        return _binary(BinaryOp.EQ, self, other)

    @overload
    def ne(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def ne(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def ne(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    def ne(self, other: Any) -> Any:
        return _binary(BinaryOp.NE, self, other)

    @overload
    def __and__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __and__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __and__(self: Tensor[Bool, R], other: Tensor[Bool, R] | Tensor[Bool, R0] | bool) -> Tensor[Bool, R]: ...
    @overload
    def __and__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __and__(self, other: Any) -> Any:
        return _binary(BinaryOp.AND, self, other)

    @overload
    def __or__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __or__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __or__(self: Tensor[Bool, R], other: Tensor[Bool, R] | Tensor[Bool, R0] | bool) -> Tensor[Bool, R]: ...
    @overload
    def __or__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __or__(self, other: Any) -> Any:
        return _binary(BinaryOp.OR, self, other)

    @overload
    def __xor__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __xor__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __xor__(self: Tensor[Bool, R], other: Tensor[Bool, R] | Tensor[Bool, R0] | bool) -> Tensor[Bool, R]: ...
    @overload
    def __xor__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __xor__(self, other: Any) -> Any:
        return _binary(BinaryOp.XOR, self, other)

    @overload
    def __rand__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rand__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    @overload
    def __rand__(self: Tensor[Bool, R], other: bool) -> Tensor[Bool, R]: ...
    def __rand__(self, other: Any) -> Any:
        return _binary(BinaryOp.AND, other, self)

    @overload
    def __ror__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __ror__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    @overload
    def __ror__(self: Tensor[Bool, R], other: bool) -> Tensor[Bool, R]: ...
    def __ror__(self, other: Any) -> Any:
        return _binary(BinaryOp.OR, other, self)

    @overload
    def __rxor__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rxor__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    @overload
    def __rxor__(self: Tensor[Bool, R], other: bool) -> Tensor[Bool, R]: ...
    def __rxor__(self, other: Any) -> Any:
        return _binary(BinaryOp.XOR, other, self)

    @overload
    def __lshift__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __lshift__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __lshift__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __lshift__(self, other: Any) -> Any:
        return _binary(BinaryOp.LSHIFT, self, other)

    @overload
    def __rshift__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Int[W], R]: ...
    @overload
    def __rshift__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[UInt[W], R]: ...
    @overload
    def __rshift__(self, other: _Unsupported) -> Tensor[D, R]: ...
    def __rshift__(self, other: Any) -> Any:
        return _binary(BinaryOp.RSHIFT, self, other)

    @overload
    def __rlshift__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rlshift__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rlshift__(self, other: Any) -> Any:
        return _binary(BinaryOp.LSHIFT, other, self)

    @overload
    def __rrshift__(self: Tensor[Int[W], R], other: int) -> Tensor[Int[W], R]: ...
    @overload
    def __rrshift__(self: Tensor[UInt[W], R], other: int) -> Tensor[UInt[W], R]: ...
    def __rrshift__(self, other: Any) -> Any:
        return _binary(BinaryOp.RSHIFT, other, self)

    @overload
    def __neg__(self: Tensor[Float[W], R]) -> Tensor[Float[W], R]: ...
    @overload
    def __neg__(self: Tensor[Int[W], R]) -> Tensor[Int[W], R]: ...
    @overload
    def __neg__(self: Tensor[UInt[W], R]) -> Tensor[UInt[W], R]: ...
    def __neg__(self) -> Any:
        return _unary(UnaryOp.NEG, self)

    @overload
    def __pos__(self: Tensor[Float[W], R]) -> Tensor[Float[W], R]: ...
    @overload
    def __pos__(self: Tensor[Int[W], R]) -> Tensor[Int[W], R]: ...
    @overload
    def __pos__(self: Tensor[UInt[W], R]) -> Tensor[UInt[W], R]: ...
    def __pos__(self) -> Any:
        return _unary(UnaryOp.POS, self)

    @overload
    def __invert__(self: Tensor[Int[W], R]) -> Tensor[Int[W], R]: ...
    @overload
    def __invert__(self: Tensor[UInt[W], R]) -> Tensor[UInt[W], R]: ...
    @overload
    def __invert__(self: Tensor[Bool, R]) -> Tensor[Bool, R]: ...
    def __invert__(self) -> Any:
        return _unary(UnaryOp.INVERT, self)

    # Typed like ``<``: both sides share a dtype category (``==`` on f16 and i32 is an error).
    @overload  # type: ignore[override]
    def __eq__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def __eq__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def __eq__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def __eq__(self: Tensor[Bool, R], other: Tensor[Bool, R] | Tensor[Bool, R0] | bool) -> Tensor[Bool, R]: ...
    @overload
    def __eq__(self: Tensor[Pointer[E], R], other: Tensor[Pointer[E], R] | Tensor[Pointer[E], R0]) -> Tensor[Bool, R]: ...
    @overload
    def __eq__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __eq__(self, other: Any) -> Any:
        return _binary(BinaryOp.EQ, self, other)

    @overload  # type: ignore[override]
    def __ne__(self: Tensor[Float[W], R], other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float) -> Tensor[Bool, R]: ...
    @overload
    def __ne__(self: Tensor[Int[W], R], other: Tensor[Int[W], R] | Tensor[Int[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def __ne__(self: Tensor[UInt[W], R], other: Tensor[UInt[W], R] | Tensor[UInt[W], R0] | int) -> Tensor[Bool, R]: ...
    @overload
    def __ne__(self: Tensor[Bool, R], other: Tensor[Bool, R] | Tensor[Bool, R0] | bool) -> Tensor[Bool, R]: ...
    @overload
    def __ne__(self: Tensor[Pointer[E], R], other: Tensor[Pointer[E], R] | Tensor[Pointer[E], R0]) -> Tensor[Bool, R]: ...
    @overload
    def __ne__(self, other: _Unsupported) -> Tensor[Bool, R]: ...
    def __ne__(self, other: Any) -> Any:
        return _binary(BinaryOp.NE, self, other)

    # ---- x[:, None] style broadcasting ----
    @overload
    def __getitem__(self: Tensor[E, R0], key: None) -> Tensor[E, R1]: ...
    @overload
    def __getitem__(self: Tensor[E, R0], key: tuple[None, None] | tuple[None, None, slice]) -> Tensor[E, R2]: ...
    @overload
    def __getitem__(self: Tensor[E, R1], key: tuple[slice, None] | tuple[None, slice]) -> Tensor[E, R2]: ...
    @overload
    def __getitem__(
        self: Tensor[E, R1], key: tuple[slice, None, None] | tuple[None, None, slice] | tuple[None, slice, None]
    ) -> Tensor[E, R3]: ...
    @overload
    def __getitem__(self: Tensor[E, R1], key: None) -> Tensor[E, R2]: ...
    @overload
    def __getitem__(
        self: Tensor[E, R2], key: tuple[slice, slice, None] | tuple[None, slice, slice] | tuple[slice, None, slice]
    ) -> Tensor[E, R3]: ...
    @overload
    def __getitem__(self: Tensor[E, R2], key: None) -> Tensor[E, R3]: ...
    @overload
    def __getitem__(self: Tensor[E, R], key: slice) -> Tensor[E, R]: ...
    def __getitem__(self, key: Any) -> Any:
        return _subscript(self, key)

    # ---- methods (Triton and Rust-book spellings) ----
    def to(self, dtype: type[E], fp_downcast_rounding: Rounding | None = None, bitcast: bool = False) -> Tensor[E, R]:
        """Convert to ``dtype`` (round to nearest even), or reinterpret the bits with ``bitcast``."""
        out: Tensor[E, R] = _forward("cast", self, dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast)
        return out

    cast = to  # Triton's other spelling of .to

    def permute(self, *dims: int | tuple[int, ...] | list[int]) -> Tensor[D, R]:
        """Reorder the axes, as ``tl.permute``: ``x.permute(1, 0)`` or ``x.permute((1, 0))``."""
        out: Tensor[D, R] = _forward("permute", self, permute_dims(dims))
        return out

    @overload
    def reshape(self, d0: int | tuple[int], /, *, can_reorder: bool = False) -> Tensor[D, R1]: ...
    @overload
    def reshape(self, d0: int, d1: int, /, *, can_reorder: bool = False) -> Tensor[D, R2]: ...
    @overload
    def reshape(self, d0: tuple[int, int], /, *, can_reorder: bool = False) -> Tensor[D, R2]: ...
    @overload
    def reshape(self, d0: int, d1: int, d2: int, /, *, can_reorder: bool = False) -> Tensor[D, R3]: ...
    @overload
    def reshape(self, d0: tuple[int, int, int], /, *, can_reorder: bool = False) -> Tensor[D, R3]: ...
    @overload
    def reshape(self, d0: list[int], /, *, can_reorder: bool = False) -> Tensor[D, Any]: ...  # ranked by the plugin
    def reshape(self, *shape: Any, can_reorder: bool = False) -> Any:
        """``tl.reshape``: ``x.reshape(2, 4)`` or ``x.reshape((2, 4))``."""
        return _forward("reshape", self, permute_dims(shape), can_reorder=can_reorder)

    def view(self, *shape: int | tuple[int, ...] | list[int]) -> Tensor[D, Any]:
        """``tl.view``: ``x.view(2, 4)`` or ``x.view((2, 4))``."""
        out: Tensor[D, Any] = _forward("view", self, permute_dims(shape))
        return out

    def broadcast_to(self, *shape: int | tuple[int, ...] | list[int]) -> Tensor[D, R]:
        """``tl.broadcast_to``: ``x.broadcast_to(4, 8)`` or ``x.broadcast_to((4, 8))``."""
        out: Tensor[D, R] = _forward("broadcast_to", self, permute_dims(shape))
        return out

    def trans(self, *dims: int | tuple[int, ...] | list[int]) -> Tensor[D, R]:
        """``tl.trans``: the axes reversed, or reordered as ``dims``."""
        out: Tensor[D, R] = _forward("trans", self, permute_dims(dims))
        return out

    def expand_dims(self, axis: int | tuple[int, ...]) -> Tensor[D, Any]:
        """``tl.expand_dims``: a unit axis inserted at ``axis``."""
        out: Tensor[D, Any] = _forward("expand_dims", self, axis)
        return out

    def abs(self) -> Tensor[D, R]:
        """``tl.abs``: each element's absolute value (Triton's ``x.abs()``)."""
        out: Tensor[D, R] = _forward("abs", self)
        return out

    def ravel(self, can_reorder: bool = False) -> Tensor[D, R1]:
        """``tl.ravel``: the elements on one axis."""
        out: Tensor[D, R1] = _forward("ravel", self, can_reorder)
        return out

    def split(self) -> tuple[Tensor[D, Any], Tensor[D, Any]]:
        """``tl.split``: the two halves of the last axis (of size 2)."""
        halves: tuple[Tensor[D, Any], Tensor[D, Any]] = _forward("split", self)
        return halves

    @overload
    def sum(self, axis: int | None = None, keep_dims: bool = False, dtype: None = None) -> Tensor[D, Any]: ...
    @overload
    def sum(self, axis: int | None = None, keep_dims: bool = False, *, dtype: type[E]) -> Tensor[E, Any]: ...
    def sum(self, axis: int | None = None, keep_dims: bool = False, dtype: Any = None) -> Any:
        """``tl.sum`` along ``axis`` (all axes by default), in ``dtype`` when given."""
        return _forward("sum", self, axis, keep_dims, dtype)

    def xor_sum(self, axis: int | None = None, keep_dims: bool = False) -> Tensor[D, Any]:
        """``tl.xor_sum`` along ``axis``."""
        out: Tensor[D, Any] = _forward("xor_sum", self, axis, keep_dims)
        return out

    def max(self, axis: int | None = None, return_indices: bool = False, return_indices_tie_break_left: bool = True,
            keep_dims: bool = False) -> Any:
        """``tl.max`` along ``axis``; with ``return_indices`` a (values, indices) pair."""
        return _forward("max", self, axis, return_indices, return_indices_tie_break_left, keep_dims)

    def min(self, axis: int | None = None, return_indices: bool = False, return_indices_tie_break_left: bool = True,
            keep_dims: bool = False) -> Any:
        """``tl.min`` along ``axis``; with ``return_indices`` a (values, indices) pair."""
        return _forward("min", self, axis, return_indices, return_indices_tie_break_left, keep_dims)

    def argmax(self, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> Tensor[Int[W32], Any]:
        """``tl.argmax`` along ``axis``."""
        out: Tensor[Int[W32], Any] = _forward("argmax", self, axis, tie_break_left, keep_dims)
        return out

    def argmin(self, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> Tensor[Int[W32], Any]:
        """``tl.argmin`` along ``axis``."""
        out: Tensor[Int[W32], Any] = _forward("argmin", self, axis, tie_break_left, keep_dims)
        return out

    @overload
    def cumsum(self: Tensor[Float[WBF16], R], axis: int = 0, reverse: bool = False, dtype: None = None) -> Tensor[Float[W32], R]: ...
    @overload
    def cumsum(self, axis: int = 0, reverse: bool = False, dtype: None = None) -> Tensor[D, R]: ...
    @overload
    def cumsum(self, axis: int = 0, reverse: bool = False, *, dtype: type[E]) -> Tensor[E, R]: ...
    def cumsum(self, axis: int = 0, reverse: bool = False, dtype: Any = None) -> Any:
        """``tl.cumsum`` along ``axis`` (bf16 in f32)."""
        return _forward("cumsum", self, axis, reverse, dtype)

    @overload
    def cumprod(self: Tensor[Float[WBF16], R], axis: int = 0, reverse: bool = False) -> Tensor[Float[W32], R]: ...
    @overload
    def cumprod(self, axis: int = 0, reverse: bool = False) -> Tensor[D, R]: ...
    def cumprod(self, axis: int = 0, reverse: bool = False) -> Any:
        """``tl.cumprod`` along ``axis`` (bf16 in f32)."""
        return _forward("cumprod", self, axis, reverse)

    def sort(self, dim: int | None = None, descending: bool = False) -> Tensor[D, R]:
        """``tl.sort`` along ``dim`` (the last axis by default)."""
        out: Tensor[D, R] = _forward("sort", self, dim, descending)
        return out

    def flip(self, dim: int | None = None) -> Tensor[D, R]:
        """``tl.flip`` along ``dim`` (the last axis by default)."""
        out: Tensor[D, R] = _forward("flip", self, dim)
        return out

    def topk(self, k: int, dim: int | None = None, descending: bool = True) -> Tensor[D, R]:
        """``tl.topk``: the ``k`` largest elements of the last axis, largest first."""
        out: Tensor[D, R] = _forward("topk", self, k, dim, descending)
        return out

    @overload
    def softmax(self: Tensor[Narrow, R], dim: int | None = None, keep_dims: bool = False,
                ieee_rounding: bool = False) -> Tensor[Float[W32], R]: ...
    @overload
    def softmax(self, dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> Tensor[D, R]: ...
    def softmax(self, dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> Any:
        """``tl.softmax`` along ``dim`` (axis 0 by default, as Triton's)."""
        return _forward("softmax", self, dim, keep_dims, ieee_rounding)

    @property
    def T(self: Tensor[E, R2]) -> Tensor[E, R2]:
        """The transpose of a 2-D block, as ``tl.trans``."""
        out: Tensor[E, R2] = _forward("trans", self)
        return out

    def add_offsets(self: Tensor[Pointer[E], R], offsets: Tensor[Int[W], R] | int) -> Tensor[Pointer[E], R]:
        """Rust-book spelling of ``ptrs + offsets``."""
        return _binary(BinaryOp.ADD, self, offsets)  # type: ignore[no-any-return]

    def store(self: Tensor[Pointer[E], R], value: Tensor[E, R], mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None) -> None:
        """Rust-book spelling of ``tl.store(ptrs, value, mask)``."""
        _forward("store", self, value, mask=mask)


_MEMBERS: dict[str, Callable[..., Any]] = {}
"""The op behind each tensor method, by name, registered by the ops module that declares it (as
Triton's ``_tensor_member_fn``), so that this module, below the ops, imports none of them."""


def tensor_members(*ops: Callable[..., Any]) -> None:
    """Register ``ops`` as what the tensor methods of their names compute (``x.sum()`` is ``tl.sum(x)``)."""
    _MEMBERS.update((op.__name__, op) for op in ops)


def member(name: str) -> Callable[..., Any]:
    """The op the tensor method ``name`` computes: one of :data:`FORWARDED_METHODS`, or ``cast``,
    ``trans``, ``store``, ``abs``."""
    return _MEMBERS[name]


def _forward(name: str, *args: Any, **kwargs: Any) -> Any:
    """``tl.name(*args)``: what the tensor method ``name`` computes."""
    return member(name)(*args, **kwargs)


pi32_t: TypeAlias = Pointer[Int[W32]]
"""Triton's name for the pointer-to-int32 type."""


def pointer_type(element_ty: type[D]) -> type[Pointer[D]]:
    """Triton's ``tl.pointer_type(tl.float16)``: the type of pointers to ``element_ty``
    (``Pointer[element_ty]``, so ``tl.pointer_type(tl.int32) == tl.pi32_t``), a cast target:
    ``addr.to(tl.pointer_type(tl.float16))`` reads a 64-bit integer as an address. A compile-time
    function in kernels on both backends."""
    made: type[Pointer[D]] = Pointer[element_ty]  # type: ignore[valid-type]
    return made


def pointee(marker: object) -> object | None:
    """The element marker of a pointer type (``Pointer[E]``, ``tl.pi32_t``, or the
    :class:`PointerType` a pointer's ``.dtype`` is); None for anything else."""
    if isinstance(marker, PointerType):
        element: object = marker.element_ty
        return element
    if typing.get_origin(marker) is Pointer:
        args: tuple[object, ...] = typing.get_args(marker)
        return args[0]
    return None

# Rust-book style aliases
BoolTensor: TypeAlias = Tensor[Bool, R]
I32Tensor: TypeAlias = Tensor[Int[W32], R]
Tensor0: TypeAlias = Tensor[D, R0]
Tensor1: TypeAlias = Tensor[D, R1]
Tensor2: TypeAlias = Tensor[D, R2]
Tensor3: TypeAlias = Tensor[D, R3]

