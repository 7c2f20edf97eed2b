"""Memory: masked load/store through pointer blocks, block pointers and tensor descriptors."""

from __future__ import annotations

from typing import Any, Generic, Literal, overload

from tile_lang.builtin import builtin
from tile_lang.dtypes import W32, W64, Bool, DType, Float, Int, marker_of
from tile_lang.errors import SemanticError
from tile_lang.seen import Seen
from tile_lang.func import helper
from tile_lang.tensor import R0, R1, R2, R3, D, Pointer, PointerType, R, Tensor, W
from tile_lang.tensor import tensor_members

PaddingOption = Literal["", "zero", "nan"]
DescriptorPadding = Literal["zero", "nan"]
PADDINGS: tuple[str, ...] = ("", "zero", "nan")
DESCRIPTOR_PADDINGS: tuple[str, ...] = ("zero", "nan")
DESCRIPTOR_ALIGN = 16  # bytes: every stride but the last, the base, and the last block dim's extent
Extent = int | Tensor[Int[Any], R0]  # a shape, stride or offset: an int or a loaded / computed rank-0 int block
Offset32 = int | Tensor[Int[W32], R0]  # a tensor descriptor's offsets are 32-bit (semantics.memory.descriptor_offsets)
PointerLike = Pointer[D] | Tensor[Pointer[D], R0]  # a pointer parameter, or a loaded address ``.to(tl.pointer_type(...))``


def padding_fill(padding: object, dtype: DType, allowed: tuple[str, ...] = PADDINGS) -> float | None:
    """The value out-of-bounds elements read as under ``padding_option`` (None: undefined, the
    reference's poison); a SemanticError with the message both backends report."""
    if padding not in allowed:
        raise SemanticError(f"padding_option must be one of {', '.join(map(repr, allowed))}, got {padding!r}")
    if padding == "nan" and not dtype.is_float:
        raise SemanticError(f"padding_option 'nan' needs floating-point elements, not {dtype!r}")
    return None if padding == "" else float("nan") if padding == "nan" else 0.0
CacheModifier = Literal["", ".ca", ".cg", ".cv", ".wb", ".cs", ".wt"]
EvictionPolicy = Literal["", "evict_first", "evict_last", "evict_normal"]


class BlockPointer(Generic[D, R]):
    """A pointer to a rectangular block of a strided tensor (``tl.make_block_ptr``)."""

    __slots__ = ("handle",)

    def __init__(self, handle: object) -> None:
        self.handle = handle

    @property
    def dtype(self) -> PointerType[D]:
        """``p.dtype.element_ty`` (also ``p.type.element_ty``, as FlagGems writes it) is the element
        type, usable in ``.to`` and ``tl.zeros`` (Triton's is the block type, whose scalar it is)."""
        handle = self.handle
        assert isinstance(handle, Seen)
        return PointerType(marker_of(handle.seen().element))  # type: ignore[arg-type]

    type = dtype


class TensorDescriptor(Generic[D, R]):
    """A global tensor's shape and strides plus a block shape (``tl.make_tensor_descriptor``)."""

    __slots__ = ("handle",)

    def __init__(self, handle: object) -> None:
        self.handle = handle

    @property
    def dtype(self) -> type[D]:
        """``desc.dtype``: the element type, as Triton's ``tensor_descriptor.dtype`` (FlagGems' Hopper
        matmul converts its accumulator with ``acc.to(a_desc.dtype)``), usable in ``.to`` and ``tl.zeros``."""
        handle = self.handle
        assert isinstance(handle, Seen)
        return marker_of(handle.seen().element)  # type: ignore[return-value]

    @property
    def block_shape(self) -> list[int]:
        """``desc.block_shape``: the block each access moves, a list of ints as Triton's
        ``tensor_descriptor.block_shape`` (so ``desc.block_shape == [BM, BN]`` holds, as in Triton)."""
        handle = self.handle
        assert isinstance(handle, Seen)
        return list(handle.seen().shape)

    @property
    def shape(self) -> tuple[Tensor[Int[W32], R0], ...]:
        """``desc.shape``: the described tensor's shape, i32 scalars, as Triton's ``tensor_descriptor.shape``."""
        return descriptor_dims(self, "shape")

    @property
    def strides(self) -> tuple[Tensor[Int[W64], R0], ...]:
        """``desc.strides``: its strides in elements, i64 scalars, as Triton's ``tensor_descriptor.strides``."""
        return descriptor_dims(self, "strides")  # type: ignore[return-value]

    def load(self, offsets: list[Offset32] | tuple[Offset32, ...]) -> Tensor[D, R]:
        """Load the block at ``offsets``; out-of-bounds elements read as the descriptor's padding."""
        return descriptor_load(self, offsets)

    def store(self, offsets: list[Offset32] | tuple[Offset32, ...], value: Tensor[D, R]) -> None:
        """Store ``value`` at ``offsets``; out-of-bounds elements are dropped."""
        descriptor_store(self, offsets, value)

    def gather(self: TensorDescriptor[D, R2], x_offsets: Tensor[Int[Any], R1], y_offset: Offset32) -> Tensor[D, R2]:
        """Triton's row gather (TMA gather4 on Blackwell): of a 2-D descriptor with a one-row block,
        rows ``x_offsets`` from column ``y_offset`` on, a ``[len(x_offsets), block_shape[1]]``
        block; out-of-bounds elements read as the padding."""
        return descriptor_gather(self, x_offsets, y_offset)

    def scatter(self: TensorDescriptor[D, R2], value: Tensor[D, R2], x_offsets: Tensor[Int[Any], R1],
                y_offset: Offset32) -> None:
        """Triton's row scatter: ``value``'s rows stored to rows ``x_offsets`` from column
        ``y_offset`` on (out-of-bounds elements dropped); the converse of :meth:`gather`."""
        descriptor_scatter(self, value, x_offsets, y_offset)


# A Python float ``other`` only for float pointers (``other=0.5`` on an int pointer is an error, as
# ``store(i32_ptrs, 0.5)`` is); ints fit every dtype.
@overload
def load(
    pointer: Tensor[Pointer[D], R],
    mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None,
    other: Tensor[D, R] | Tensor[D, R0] | int | None = None,
    boundary_check: tuple[int, ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[D, R]: ...
@overload
def load(
    pointer: Tensor[Pointer[Float[W]], R],
    mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None,
    other: Tensor[Float[W], R] | Tensor[Float[W], R0] | float | None = None,
    boundary_check: tuple[int, ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[Float[W], R]: ...
@overload
def load(
    pointer: Pointer[D],
    mask: Tensor[Bool, R0] | bool | None = None,
    other: Tensor[D, R0] | int | None = None,
    boundary_check: tuple[int, ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[D, R0]: ...
@overload
def load(
    pointer: Pointer[Float[W]],
    mask: Tensor[Bool, R0] | bool | None = None,
    other: Tensor[Float[W], R0] | float | None = None,
    boundary_check: tuple[int, ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[Float[W], R0]: ...
@overload
def load(
    pointer: BlockPointer[D, R1],
    mask: None = None,
    other: None = None,
    boundary_check: tuple[()] | tuple[Literal[0]] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[D, R1]: ...
@overload
def load(
    pointer: BlockPointer[D, R2],
    mask: None = None,
    other: None = None,
    boundary_check: tuple[()] | tuple[Literal[0, 1]] | tuple[Literal[0, 1], Literal[0, 1]] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[D, R2]: ...
@overload
def load(
    pointer: BlockPointer[D, R3],
    mask: None = None,
    other: None = None,
    boundary_check: tuple[Literal[0, 1, 2], ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Tensor[D, R3]: ...
@builtin
def load(
    pointer: Any,
    mask: Any = None,
    other: Any = None,
    boundary_check: tuple[int, ...] = (),
    padding_option: PaddingOption = "",
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
    volatile: bool = False,
) -> Any:
    """Load a block. Masked-off lanes read ``other`` (poison when it is omitted) and never fault."""


@overload
def store(
    pointer: Tensor[Pointer[D], R],
    value: Tensor[D, R] | Tensor[D, R0] | float,
    mask: Tensor[Bool, R] | Tensor[Bool, R0] | bool | None = None,
    boundary_check: tuple[int, ...] = (),
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
) -> None: ...
@overload
def store(
    pointer: Pointer[D],
    value: Tensor[D, R0] | float,
    mask: Tensor[Bool, R0] | bool | None = None,
    boundary_check: tuple[int, ...] = (),
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
) -> None: ...
@overload
def store(
    pointer: BlockPointer[D, R],
    value: Tensor[D, R],
    mask: None = None,
    boundary_check: tuple[int, ...] = (),
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
) -> None: ...
@builtin
def store(
    pointer: Any,
    value: Any,
    mask: Any = None,
    boundary_check: tuple[int, ...] = (),
    cache_modifier: CacheModifier = "",
    eviction_policy: EvictionPolicy = "",
) -> None:
    """Store a block; masked-off lanes are not written."""


@overload
def make_block_ptr(
    base: PointerLike[D], shape: tuple[Extent], strides: tuple[Extent], offsets: tuple[Extent], block_shape: tuple[int],
    order: tuple[int],
) -> BlockPointer[D, R1]: ...
@overload
def make_block_ptr(
    base: PointerLike[D], shape: tuple[Extent, Extent], strides: tuple[Extent, Extent], offsets: tuple[Extent, Extent],
    block_shape: tuple[int, int], order: tuple[int, int],
) -> BlockPointer[D, R2]: ...
@overload
def make_block_ptr(
    base: PointerLike[D], shape: tuple[Extent, Extent, Extent], strides: tuple[Extent, Extent, Extent], offsets: tuple[Extent, Extent, Extent],
    block_shape: tuple[int, int, int], order: tuple[int, int, int],
) -> BlockPointer[D, R3]: ...
@builtin
def make_block_ptr(
    base: Any,
    shape: tuple[Extent, ...],
    strides: tuple[Extent, ...],
    offsets: tuple[Extent, ...],
    block_shape: tuple[int, ...],
    order: tuple[int, ...],
) -> Any:
    """A block pointer into a ``shape``/``strides`` tensor at ``offsets``."""


@overload
def advance(base: BlockPointer[D, R1], offsets: tuple[Extent]) -> BlockPointer[D, R1]: ...
@overload
def advance(base: BlockPointer[D, R2], offsets: tuple[Extent, Extent]) -> BlockPointer[D, R2]: ...
@overload
def advance(base: BlockPointer[D, R3], offsets: tuple[Extent, Extent, Extent]) -> BlockPointer[D, R3]: ...
@builtin
def advance(base: Any, offsets: tuple[Extent, ...]) -> Any:
    """The block pointer moved by ``offsets`` elements, one per axis."""


@overload
def make_tensor_descriptor(
    base: PointerLike[D], shape: tuple[Extent], strides: tuple[Extent], block_shape: tuple[int],
    padding_option: DescriptorPadding = "zero",
) -> TensorDescriptor[D, R1]: ...
@overload
def make_tensor_descriptor(
    base: PointerLike[D], shape: tuple[Extent, Extent], strides: tuple[Extent, Extent], block_shape: tuple[int, int],
    padding_option: DescriptorPadding = "zero",
) -> TensorDescriptor[D, R2]: ...
@overload
def make_tensor_descriptor(
    base: PointerLike[D], shape: tuple[Extent, Extent, Extent], strides: tuple[Extent, Extent, Extent], block_shape: tuple[int, int, int],
    padding_option: DescriptorPadding = "zero",
) -> TensorDescriptor[D, R3]: ...
@overload
def make_tensor_descriptor(
    base: PointerLike[D], shape: list[Extent], strides: list[Extent], block_shape: list[int],
    padding_option: DescriptorPadding = "zero",
) -> TensorDescriptor[D, Any]: ...
@builtin
def make_tensor_descriptor(
    base: Any, shape: list[Extent] | tuple[Extent, ...], strides: list[Extent] | tuple[Extent, ...],
    block_shape: list[int] | tuple[int, ...], padding_option: DescriptorPadding = "zero",
) -> Any:
    """A tensor descriptor; every stride but the last must be a multiple of 16 bytes. Loads read
    out-of-bounds elements as ``padding_option`` ("zero", or "nan" for floats), as in Triton.

    Tuples give the descriptor a static rank; Triton's list spelling leaves the rank unchecked.
    """


@builtin
def descriptor_dims(desc: TensorDescriptor[Any, Any], which: Literal["shape", "strides"]) -> tuple[Tensor[Int[W32], R0], ...]:
    """``desc.shape`` (i32 scalars) or ``desc.strides`` (i64 scalars): the parts the descriptor was made of."""


@builtin
def descriptor_gather(desc: TensorDescriptor[D, R2], x_offsets: Tensor[Int[Any], R1], y_offset: Offset32) -> Tensor[D, R2]:
    """``desc.gather(x_offsets, y_offset)``."""


@builtin
def descriptor_scatter(desc: TensorDescriptor[D, R2], value: Tensor[D, R2], x_offsets: Tensor[Int[Any], R1],
                       y_offset: Offset32) -> None:
    """``desc.scatter(value, x_offsets, y_offset)``."""


@builtin
def descriptor_load(desc: TensorDescriptor[D, R], offsets: list[Offset32] | tuple[Offset32, ...]) -> Tensor[D, R]:
    """``desc.load(offsets)``."""


@builtin
def descriptor_store(desc: TensorDescriptor[D, R], offsets: list[Offset32] | tuple[Offset32, ...], value: Tensor[D, R]) -> None:
    """``desc.store(offsets, value)``."""


@helper
def load_tensor_descriptor(desc: TensorDescriptor[D, R], offsets: list[Offset32] | tuple[Offset32, ...]) -> Tensor[D, R]:
    """``desc.load(offsets)`` under Triton's function name."""
    return descriptor_load(desc, offsets)


@helper
def store_tensor_descriptor(desc: TensorDescriptor[D, R], offsets: list[Offset32] | tuple[Offset32, ...],
                            value: Tensor[D, R]) -> None:
    """``desc.store(offsets, value)`` under Triton's function name."""
    descriptor_store(desc, offsets, value)


tensor_members(store)
