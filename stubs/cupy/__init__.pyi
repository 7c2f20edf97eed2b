# Stubs for the part of CuPy that tile_lang calls (arrays, RawModule/RawKernel, cupy.cuda
# devices, streams, memory, runtime, NVRTC): CuPy ships no py.typed and PyPI's cupy-stubs lacks
# RawModule/RawKernel/Device. Only what both CuPy 13 and 14 accept is declared; extend as needed.

from collections.abc import Iterator, Sequence
from typing import Any, Generic, Literal, Protocol, SupportsIndex, TypeAlias, overload, type_check_only

import numpy as np
from numpy.typing import DTypeLike
from typing_extensions import CapsuleType, TypeVar

from cupy import cuda as cuda
from cupy.cuda.function import Function, Module
from cupy.cuda.memory import MemoryPointer
from cupy.cuda.stream import ExternalStream, Stream

_ShapeT_co = TypeVar("_ShapeT_co", bound=tuple[int, ...], default=tuple[int, ...], covariant=True)
_DTypeT_co = TypeVar("_DTypeT_co", bound=np.dtype[Any], default=np.dtype[Any], covariant=True)
_DTypeT = TypeVar("_DTypeT", bound=np.dtype[Any])
_ScalarT = TypeVar("_ScalarT", bound=np.generic)

_ShapeLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex]
_DTypeLike: TypeAlias = type[_ScalarT] | np.dtype[_ScalarT]  # a dtype that names its scalar type
_OrderCF: TypeAlias = Literal["C", "F"] | None
_OrderKACF: TypeAlias = Literal["K", "A", "C", "F"] | None
_AnyStream: TypeAlias = Stream | ExternalStream
_Array: TypeAlias = ndarray[tuple[int, ...], _DTypeT]  # what CuPy functions return
_HostArray: TypeAlias = np.ndarray[tuple[int, ...], _DTypeT]

# An argument of a kernel launch (``cupy/cuda/function.pyx: _pointer``): an array or memory
# pointer is passed as its device address, ``None`` as a null pointer, a NumPy or Python scalar
# (or a size-1 NumPy array) by value.
_KernelArg: TypeAlias = (
    ndarray[Any, Any] | MemoryPointer | np.generic | np.ndarray[Any, Any] | int | float | complex | None
)

@type_check_only
class _SupportsDLPack(Protocol):
    def __dlpack__(self, /, *, stream: Any = ...) -> CapsuleType: ...

class ndarray(Generic[_ShapeT_co, _DTypeT_co]):
    """Multi-dimensional array on a CUDA device (``cupy._core.core.ndarray``)."""

    def __init__(
        self,
        shape: _ShapeLike,
        dtype: DTypeLike = ...,
        memptr: MemoryPointer | None = None,
        strides: Sequence[SupportsIndex] | None = None,
        order: Literal["C", "F"] = "C",
    ) -> None: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @shape.setter
    def shape(self, value: _ShapeLike) -> None: ...  # reshapes in place, without a copy
    @property
    def dtype(self) -> _DTypeT_co: ...
    @property
    def data(self) -> MemoryPointer: ...
    @property
    def device(self) -> cuda.Device: ...  # the device holding the array (``data.device_id`` as a Device)
    @property
    def base(self) -> ndarray[Any, Any] | None: ...
    @property
    def strides(self) -> tuple[int, ...]: ...  # in bytes
    @property
    def size(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    def __dlpack__(self, *, stream: int | None = None) -> CapsuleType: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __int__(self) -> int: ...
    def __float__(self) -> float: ...
    def __bool__(self) -> bool: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    def __setitem__(self, key: Any, value: Any, /) -> None: ...
    def get(
        self,
        stream: _AnyStream | None = None,
        order: Literal["C", "F", "A"] = "C",
        out: np.ndarray[Any, Any] | None = None,
        blocking: bool = True,
    ) -> _HostArray[_DTypeT_co]: ...
    def set(self, arr: np.ndarray[Any, Any], stream: _AnyStream | None = None) -> None: ...
    def item(self) -> Any: ...
    def tolist(self) -> Any: ...
    def fill(self, value: Any) -> None: ...
    def copy(self, order: _OrderKACF = "K") -> _Array[_DTypeT_co]: ...
    @overload
    def astype(
        self, dtype: _DTypeLike[_ScalarT], order: _OrderKACF = "K", casting: None = None, subok: None = None,
        copy: bool = True,
    ) -> _Array[np.dtype[_ScalarT]]: ...
    @overload
    def astype(
        self, dtype: DTypeLike, order: _OrderKACF = "K", casting: None = None, subok: None = None, copy: bool = True
    ) -> _Array[np.dtype[Any]]: ...
    @overload
    def view(self, dtype: None = None, type: None = None) -> _Array[_DTypeT_co]: ...
    @overload
    def view(self, dtype: _DTypeLike[_ScalarT], type: None = None) -> _Array[np.dtype[_ScalarT]]: ...
    @overload
    def view(self, dtype: DTypeLike, type: None = None) -> _Array[np.dtype[Any]]: ...
    @overload
    def reshape(self, shape: _ShapeLike, /, *, order: Literal["C", "F", "A"] = "C") -> _Array[_DTypeT_co]: ...
    @overload
    def reshape(self, *shape: SupportsIndex, order: Literal["C", "F", "A"] = "C") -> _Array[_DTypeT_co]: ...
    def ravel(self, order: _OrderKACF = "C") -> _Array[_DTypeT_co]: ...

# Creation and host transfer.

@overload
def asarray(
    a: ndarray[Any, _DTypeT] | np.ndarray[Any, _DTypeT], dtype: None = None, order: _OrderKACF = None, *,
    blocking: bool = False,
) -> _Array[_DTypeT]: ...
@overload
def asarray(
    a: object, dtype: _DTypeLike[_ScalarT], order: _OrderKACF = None, *, blocking: bool = False
) -> _Array[np.dtype[_ScalarT]]: ...
@overload
def asarray(
    a: object, dtype: DTypeLike | None = None, order: _OrderKACF = None, *, blocking: bool = False
) -> _Array[np.dtype[Any]]: ...
@overload
def empty(shape: _ShapeLike, dtype: None = None, order: _OrderCF = "C") -> _Array[np.dtype[np.float64]]: ...
@overload
def empty(shape: _ShapeLike, dtype: _DTypeLike[_ScalarT], order: _OrderCF = "C") -> _Array[np.dtype[_ScalarT]]: ...
@overload
def empty(shape: _ShapeLike, dtype: DTypeLike, order: _OrderCF = "C") -> _Array[np.dtype[Any]]: ...
@overload
def zeros(shape: _ShapeLike, dtype: None = None, order: _OrderCF = "C") -> _Array[np.dtype[np.float64]]: ...
@overload
def zeros(shape: _ShapeLike, dtype: _DTypeLike[_ScalarT], order: _OrderCF = "C") -> _Array[np.dtype[_ScalarT]]: ...
@overload
def zeros(shape: _ShapeLike, dtype: DTypeLike, order: _OrderCF = "C") -> _Array[np.dtype[Any]]: ...
@overload
def full(
    shape: _ShapeLike, fill_value: Any, dtype: _DTypeLike[_ScalarT], order: _OrderCF = "C"
) -> _Array[np.dtype[_ScalarT]]: ...
@overload
def full(  # dtype None: the dtype of fill_value
    shape: _ShapeLike, fill_value: Any, dtype: DTypeLike | None = None, order: _OrderCF = "C"
) -> _Array[np.dtype[Any]]: ...
def from_dlpack(array: _SupportsDLPack | CapsuleType) -> _Array[np.dtype[Any]]: ...
@overload
def asnumpy(
    a: ndarray[Any, _DTypeT] | np.ndarray[Any, _DTypeT], stream: _AnyStream | None = None,
    order: Literal["C", "F", "A"] = "C", out: np.ndarray[Any, Any] | None = None, *, blocking: bool = True,
) -> _HostArray[_DTypeT]: ...
@overload
def asnumpy(
    a: object, stream: _AnyStream | None = None, order: Literal["C", "F", "A"] = "C",
    out: np.ndarray[Any, Any] | None = None, *, blocking: bool = True,
) -> _HostArray[np.dtype[Any]]: ...

# User-defined kernels (``cupy._core.raw``).

class RawKernel:
    """A kernel compiled from CUDA source on first use (or loaded from a ``RawModule``)."""

    def __init__(
        self,
        code: str,
        name: str,
        options: tuple[str, ...] = (),
        backend: Literal["nvrtc", "nvcc"] = "nvrtc",
        *,
        translate_cucomplex: bool = False,
        enable_cooperative_groups: bool = False,
        jitify: bool = False,  # deprecated in CuPy 14 (a warning whenever it is passed)
    ) -> None: ...
    @property
    def code(self) -> str | None: ...  # None for a kernel of a module loaded from a file
    @property
    def file_path(self) -> str | None: ...
    @property
    def name(self) -> str: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def backend(self) -> str: ...
    @property
    def enable_cooperative_groups(self) -> bool: ...
    @property
    def kernel(self) -> Function: ...  # compiles/loads for the current device
    def __call__(
        self,
        grid: tuple[int, ...],
        block: tuple[int, ...],
        args: Sequence[_KernelArg],
        *,
        shared_mem: int = 0,
        stream: _AnyStream | None = None,  # None: the current stream
    ) -> None: ...
    def compile(self, log_stream: Any = None) -> None: ...
    @property
    def attributes(self) -> dict[str, int]: ...
    @property
    def max_threads_per_block(self) -> int: ...
    @property
    def shared_size_bytes(self) -> int: ...
    @property
    def const_size_bytes(self) -> int: ...
    @property
    def local_size_bytes(self) -> int: ...
    @property
    def num_regs(self) -> int: ...
    @property
    def ptx_version(self) -> int: ...
    @property
    def binary_version(self) -> int: ...
    @property
    def cache_mode_ca(self) -> int: ...
    @property
    def max_dynamic_shared_size_bytes(self) -> int: ...
    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, bytes: int) -> None: ...
    @property
    def preferred_shared_memory_carveout(self) -> int: ...
    @preferred_shared_memory_carveout.setter
    def preferred_shared_memory_carveout(self, fraction: int) -> None: ...

class RawModule:
    """CUDA source compiled (lazily) as one module, or a cubin/PTX file loaded from ``path``.
    Exactly one of ``code`` and ``path``; with ``path`` the compile options do not apply."""

    @overload
    def __init__(
        self,
        *,
        code: str,
        options: tuple[str, ...] = (),
        backend: Literal["nvrtc", "nvcc"] = "nvrtc",
        translate_cucomplex: bool = False,
        enable_cooperative_groups: bool = False,
        name_expressions: Sequence[str] | None = None,  # NVRTC only
        jitify: bool = False,  # deprecated in CuPy 14 (a warning whenever it is passed)
    ) -> None: ...
    @overload
    def __init__(self, *, path: str, enable_cooperative_groups: bool = False) -> None: ...
    @property
    def code(self) -> str | None: ...
    @property
    def file_path(self) -> str | None: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def backend(self) -> str: ...
    @property
    def enable_cooperative_groups(self) -> bool: ...
    @property
    def name_expressions(self) -> tuple[str, ...] | None: ...
    @property
    def module(self) -> Module: ...  # compiles/loads for the current device
    def compile(self, log_stream: Any = None) -> None: ...
    def get_function(self, name: str) -> RawKernel: ...  # name: a kernel name or one of name_expressions
    def get_global(self, name: str) -> MemoryPointer: ...
