"""Kernel parameters read from annotations: pointers, scalars and constexprs, and their checks."""

from __future__ import annotations

import enum
import inspect
import numbers
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeAlias, TypeVar

import numpy as np

import tile_lang.dtypes as dtypes
from tile_lang.descriptor import HostTensorDescriptor, Layout, part_names
from tile_lang.dtypes import DType
from tile_lang.errors import LaunchError, SemanticError, UsageError, python
from tile_lang.ops.memory import TensorDescriptor
from tile_lang.packing import Packing, is_packed, pack, part_names as tuple_part_names
from tile_lang.tensor import Converts, Pointer, Tensor

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class _ConstexprMarker:
    """The metadata that marks ``Constexpr[T]`` (a compile-time parameter of type ``T``)."""

    def __repr__(self) -> str:
        return "Constexpr"


CONSTEXPR = _ConstexprMarker()

CONSTANT = int | float | str
"""The annotation of a bare ``constexpr``: it takes what :func:`constant` accepts, as Triton's
``tl.constexpr`` does (an int, float, bool, str, None, dtype or a tuple of these)."""


class Constant:
    """``tl.constexpr(v)`` at run time: a compile-time constant holding ``v`` (an int, float, bool,
    str, None or dtype), as Triton's ``tl.constexpr`` (``LOG2_E = tl.constexpr(1.4426950408889634)``).
    Kernels read one by its ``value`` on both backends; ``tl.constexpr(tl.constexpr(v))`` is the first."""

    __slots__ = ("value",)
    value: object

    def __new__(cls, value: object) -> Constant:
        if isinstance(value, Constant):
            return value
        if isinstance(value, types.FunctionType):  # @tl.constexpr on a helper, as Triton allows
            return ConstexprFunction(value)
        made = super().__new__(cls)
        try:
            made.value = constant(value)
        except UsageError as exc:
            raise UsageError(f"tl.constexpr takes {exc}") from None
        return made

    def __repr__(self) -> str:
        return f"tl.constexpr({self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Constant) and type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


class ConstexprFunction(Constant):
    """``@tl.constexpr_function`` (Triton's ``@triton.constexpr_function``, or ``tl.constexpr`` applied
    to a function): a Python function a kernel calls at compile time on compile-time values
    (``H: tl.constexpr = half(BLOCK)``), its result a compile-time value, on both backends; a
    runtime argument is the kernel's error at the call. On the host it is the plain function."""

    __slots__ = ()

    def __new__(cls, value: object) -> ConstexprFunction:
        if not callable(value):
            raise UsageError(f"tl.constexpr_function takes a function, got {type(value).__name__}")
        made = object.__new__(cls)
        made.value = value
        return made

    @property
    def __name__(self) -> str:
        return str(getattr(self.value, "__name__", repr(self.value)))

    def __repr__(self) -> str:
        return f"<tl.constexpr_function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.at_compile_time(args, kwargs, lambda v: isinstance(v, Tensor))

    def at_compile_time(self, args: tuple[Any, ...], kwargs: dict[str, Any], runtime: Callable[[object], bool]) -> Any:
        """The call in a kernel, whose runtime values are those ``runtime`` says: the function
        of the arguments' compile-time values, its exception the kernel's error (as Python says it)."""
        named = [*(f"argument {i + 1}" for i in range(len(args))), *(f"argument {k!r}" for k in kwargs)]
        for name, value in zip(named, (*args, *kwargs.values())):
            if runtime(value):
                raise SemanticError(f"constexpr function {self.__name__}: {name} is a runtime value; it is called "
                                    "at compile time, on constexprs, Python numbers and dtypes")
        fn = self.value
        assert callable(fn)
        return python(fn, *map(plain, args), **{k: plain(v) for k, v in kwargs.items()})


def constexpr_function(fn: Callable[P, T]) -> Callable[P, T]:
    """Make ``fn`` callable in kernels at compile time (:class:`ConstexprFunction`); mypy sees ``fn``."""
    made: Callable[P, T] = ConstexprFunction(fn)
    return made


def constant(value: object) -> object:
    """``value`` as a compile-time constant holds it (a NumPy scalar as the Python one, a tuple
    element by element), or a UsageError saying what a constant may be."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str, DType)):
        return value
    if isinstance(value, tuple):
        return tuple(constant(v) for v in value)
    if not _is_dtype(value):
        raise UsageError(f"an int, float, bool, str, None, a dtype or a tuple of these, got {type(value).__name__}")
    return value


def plain(value: object) -> object:
    """What a kernel reads for ``value``: a :class:`Constant`'s value, anything else (a constexpr
    function too) itself."""
    return value.value if isinstance(value, Constant) and not isinstance(value, ConstexprFunction) else value


def value_attribute(value: object) -> object:
    """``x.value`` in a kernel. In Triton every compile-time value is a ``tl.constexpr``, whose
    ``value`` is what it holds: a ``dtype: tl.constexpr`` parameter of a jit function reads its
    dtype as ``dtype.value`` (FlagGems' ``get_dtype_min``), a constexpr int its int. Here a
    compile-time constant (what :func:`constant` accepts) is its own ``value``; anything else's
    ``value`` is its attribute."""
    if not hasattr(value, "value"):
        try:
            return constant(value)
        except UsageError:
            pass
    return python(getattr, value, "value")


if TYPE_CHECKING:
    constexpr: TypeAlias = int
    """A compile-time constant parameter, passed by keyword at launch: an int, bool, float or str
    (``ACTIVATION: tl.constexpr`` launched with ``ACTIVATION="relu"``). mypy sees an ``int``; with
    tile_lang_mypy, an ``int | ConstexprValue`` in the kernel and ``int | str`` at its
    launches, and ``tl.constexpr(v)`` typed as ``v``."""

    class ConstexprValue(int):
        """How mypy sees a bare ``constexpr`` parameter inside a kernel under tile_lang_mypy: an int
        for arithmetic and shapes, that may be a str at run time, so ``ACTIVATION == "relu"`` checks."""

        def __eq__(self, other: object) -> bool:
            return super().__eq__(other)

        def __ne__(self, other: object) -> bool:
            return super().__ne__(other)

        def __hash__(self) -> int:
            return super().__hash__()
else:
    constexpr = Constant

if TYPE_CHECKING:
    class IntScalar(Converts, int):
        """An ``int`` kernel parameter (and ``tl.program_id``) that also converts like the rank-0 block
        it is when the kernel runs: ``n.to(tl.int64)``. With tile_lang_mypy a launch passes an int."""

    class FloatScalar(Converts, float):
        """A ``float`` kernel parameter that also converts like the rank-0 f32 block it is when the
        kernel runs: ``eps.to(tl.float32)``. With tile_lang_mypy a launch passes a float."""
else:
    IntScalar = int
    FloatScalar = float

if TYPE_CHECKING:
    DtypeHint: TypeAlias = type[dtypes.Dtype]
    """``tl.dtype`` as an annotation, Triton's spelling for a dtype value: a parameter (``OUT: tl.dtype``,
    read as unannotated, so a dtype argument is a compile-time value) or a local (``out_dtype: tl.dtype =
    y_ptr.dtype.element_ty``). With tile_lang_mypy a dtype not known statically, as a bare constexpr
    holding one: ``x.to(out_dtype)`` is a block of that dtype, of ``x``'s rank."""
else:
    class DtypeHint:
        """``tl.dtype``: only an annotation (a parameter so annotated is read as unannotated)."""

        def __init__(self) -> None:
            raise UsageError("tl.dtype is an annotation only here; name a dtype as tl.float32, tl.int64...")


Constexpr: TypeAlias = Annotated[T, CONSTEXPR]
"""A compile-time parameter of one type, checked at launch: ``Constexpr[int]``, ``Constexpr[float]``,
``Constexpr[str]``."""


NO_DEFAULT: Any = inspect.Parameter.empty


class ParamKind(enum.Enum):
    POINTER = "pointer"
    SCALAR = "scalar"
    CONSTEXPR = "constexpr"
    DESCRIPTOR = "descriptor"  # a host tensor descriptor: a Layout once a launch specialises it (:func:`runtime_parts`)
    TUPLE = "tuple"  # a tuple holding buffers (or a NamedTuple): a Packing, once a launch specialises it
    UNANNOTATED = "unannotated"  # typed at each launch by its argument (:func:`infer`)


ANY_POINTEE: Any = object()
"""The pointee pattern of an unannotated parameter passed a buffer: every dtype fits."""


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its kind, and what a launch may pass for it."""

    name: str
    kind: ParamKind
    annotation: Any  # the pointee pattern for pointers, the Python type otherwise (CONSTANT for constexpr)
    default: Any = NO_DEFAULT  # what a launch that omits it passes (Python's default value)
    inferred: bool = False  # unannotated, typed by this launch's argument
    optional: bool = False  # ``Pointer[D] | None``: a launch may pass None, a compile-time None there
    dtype: DType | None = None  # a scalar annotated with a dtype (Triton's ``n: tl.int64``): passed as it

    def describe(self) -> str:
        if self.inferred:
            return f"unannotated, a {'pointer' if self.kind is ParamKind.POINTER else self.kind.value} here"
        if self.kind is ParamKind.DESCRIPTOR:
            pointee = self.annotation.pointee if isinstance(self.annotation, Layout) else self.annotation
            return f"TensorDescriptor[{_show(pointee)}]"
        if self.kind is ParamKind.POINTER:
            return f"Pointer[{_show(self.annotation)}]" + (" | None" if self.optional else "")
        if self.dtype is not None:
            return f"a tl.{self.dtype.name} scalar"
        name = getattr(self.annotation, "__name__", repr(self.annotation))
        return f"constexpr {name}" if self.kind is ParamKind.CONSTEXPR else name


def read_params(fn: Callable[..., object]) -> tuple[Param, ...]:
    """Classify ``fn``'s parameters from its annotations (``from __future__ import annotations`` ok)."""
    # a kernel defined in a function may name an alias bound there (``import tile_lang as tl`` in a
    # test): its string annotations resolve in its module and in the variables its body captures
    captured = {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())
                if _filled(cell)}
    try:
        hints = typing.get_type_hints(fn, localns=captured, include_extras=True)
    except Exception as exc:
        raise LaunchError(f"kernel {fn.__qualname__}: cannot resolve its annotations ({exc})") from None
    params = []
    defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()}
    for name in fn.__code__.co_varnames[: fn.__code__.co_argcount]:
        param = _classify(fn.__qualname__, name, hints[name]) if name in hints else Param(
            name, ParamKind.UNANNOTATED, None)
        params.append(replace(param, default=defaults[name]))
    return tuple(params)


def _filled(cell: Any) -> bool:
    """Whether a closure cell holds a value yet (a name assigned after the function is made does not)."""
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def infer(param: Param, value: object) -> Param:
    """An unannotated parameter as Triton's JIT types it from its argument: a bool, int or float
    scalar (an int's width and its ``== 1`` / ``% 16 == 0`` facts come from its value when it is
    compiled); None, a str, a dtype or a tuple of these as a compile-time constant, a tuple holding
    buffers or jit functions (or a NamedTuple) as a :class:`~tile_lang.packing.Packing`; anything
    else as a pointer to any dtype (the launch adopts it as a buffer, or says it is not one)."""
    if isinstance(value, (bool, np.bool_)):
        return replace(param, kind=ParamKind.SCALAR, annotation=bool, inferred=True)
    if isinstance(value, numbers.Integral):
        return replace(param, kind=ParamKind.SCALAR, annotation=int, inferred=True)
    if isinstance(value, numbers.Real):
        return replace(param, kind=ParamKind.SCALAR, annotation=float, inferred=True)
    if is_packed(value, constant):
        assert isinstance(value, tuple)
        return replace(param, kind=ParamKind.TUPLE, annotation=packed(value)[0], inferred=True)
    if value is None or isinstance(value, (str, tuple, DType, Constant)) or _is_dtype(value):
        return replace(param, kind=ParamKind.CONSTEXPR, annotation=CONSTANT, inferred=True)
    if isinstance(value, HostTensorDescriptor):
        return described(replace(param, kind=ParamKind.DESCRIPTOR, annotation=ANY_POINTEE, inferred=True), value)
    return replace(param, kind=ParamKind.POINTER, annotation=ANY_POINTEE, inferred=True)


_MARKER_CLASSES = frozenset(type(dtypes.marker_of(d)) for d in dtypes.ALL)


def typed_by_class(cls: type) -> bool:
    """Whether :func:`specialise` types every argument of class ``cls`` alike: so for every class
    but those of dtype markers (classes, typing aliases), whose instances may or may not be dtypes,
    host descriptors, whose block shapes specialise, and tuples, which may hold buffers."""
    return cls not in _MARKER_CLASSES and cls is not HostTensorDescriptor and not issubclass(cls, tuple)


def specialise(param: Param, value: object) -> Param:
    """``param`` as this launch's argument types it: an unannotated one by :func:`infer`; an optional
    pointer given None as a compile-time None (``if bias_ptr is not None:`` folds), else a pointer."""
    if param.kind is ParamKind.UNANNOTATED:
        return infer(param, value)
    if param.kind is ParamKind.DESCRIPTOR:
        return described(param, value)
    return replace(param, kind=ParamKind.CONSTEXPR, annotation=CONSTANT) if value is None else param


def described(param: Param, value: object) -> Param:
    """A descriptor parameter specialised by a host descriptor argument: its :class:`Layout`
    (anything else is left for the launch to refuse, naming the parameter)."""
    if not isinstance(value, HostTensorDescriptor):
        return param
    pointee = param.annotation.pointee if isinstance(param.annotation, Layout) else param.annotation
    block = value.block_shape
    shape = tuple(block) if isinstance(block, (list, tuple)) and all(type(d) is int for d in block) else ()
    return replace(param, annotation=Layout(pointee, shape, str(value.padding)))


def packed(value: tuple[Any, ...]) -> tuple[Packing, tuple[Any, ...]]:
    """A tuple argument's :class:`~tile_lang.packing.Packing` and the buffers it passes: its
    compile-time constants (``tl.constexpr(v)`` as ``v``) and jit functions stay in place."""
    from tile_lang.func import inlinable

    return pack(value, lambda v: constant(plain(v)), lambda v: inlinable(v) is not None)


def runtime_parts(param: Param) -> tuple[Param, ...]:
    """The runtime parameters ``param`` is passed as: itself for a pointer or scalar; for a
    specialised descriptor its base (a pointer), then its shape and strides (ints), named by
    ``descriptor.part_names``; for a specialised tuple its buffers' pointers (``packing.part_names``)."""
    if param.kind in (ParamKind.POINTER, ParamKind.SCALAR):
        return (param,)
    if param.kind is ParamKind.TUPLE and isinstance(param.annotation, Packing):
        return tuple(Param(n, ParamKind.POINTER, ANY_POINTEE, inferred=True)
                     for n in tuple_part_names(param.name, param.annotation.count))
    if param.kind is not ParamKind.DESCRIPTOR or not isinstance(param.annotation, Layout):
        return ()
    base, shapes, strides = part_names(param.name, param.annotation.ndim)
    return (Param(base, ParamKind.POINTER, param.annotation.pointee),
            *(Param(n, ParamKind.SCALAR, int) for n in (*shapes, *strides)))


def _is_dtype(value: object) -> bool:
    if not isinstance(value, DType) and not dtypes.is_marker(value):
        return False  # before dtype_of's error message formats it (a torch tensor's repr reads its elements)
    try:
        dtypes.dtype_of(value)
    except TypeError:  # not a dtype marker, or unhashable
        return False
    return True


def _classify(kernel: str, name: str, hint: Any) -> Param:
    if typing.get_origin(hint) is Annotated:
        base, *meta = typing.get_args(hint)
        if any(isinstance(marker, _ConstexprMarker) for marker in meta):
            return Param(name, ParamKind.CONSTEXPR, base)
        hint = base
    if hint is Constant:
        return Param(name, ParamKind.CONSTEXPR, CONSTANT)
    if hint is DtypeHint:  # ``out_dtype: tl.dtype``: typed at each launch, as Triton reads it
        return Param(name, ParamKind.UNANNOTATED, None)
    members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, type(int | str)) else ()
    if len(members) == 2 and type(None) in members:  # Pointer[D] | None
        pointer = _classify(kernel, name, next(m for m in members if m is not type(None)))
        if pointer.kind is ParamKind.POINTER:
            return replace(pointer, optional=True)
    if typing.get_origin(hint) is Pointer:
        return Param(name, ParamKind.POINTER, typing.get_args(hint)[0])
    if typing.get_origin(hint) is TensorDescriptor:  # launched with a host descriptor
        return Param(name, ParamKind.DESCRIPTOR, typing.get_args(hint)[0])
    if hint in (int, float, bool):
        return Param(name, ParamKind.SCALAR, hint)
    if _is_dtype(hint) and not (dtype := dtypes.dtype_of(hint)).coded and dtype.numpy.kind in "biuf":
        return Param(name, ParamKind.SCALAR, bool if dtype.is_bool else float if dtype.is_float else int, dtype=dtype)
    raise LaunchError(f"kernel {kernel}: parameter {name!r} has unsupported annotation {hint!r} "
                    "(expected Pointer[D], Pointer[D] | None, TensorDescriptor[D, R], int, float, bool, a scalar "
                    "dtype such as tl.int64, constexpr or Constexpr[T])")


def match_pointee(pattern: Any, dtype: DType, bindings: dict[Any, Any]) -> bool:
    """Whether ``dtype`` fits ``pattern`` (e.g. ``Float[W]``), binding type variables consistently."""
    return _unify(pattern, dtypes.marker_of(dtype), bindings)


def _unify(pattern: Any, actual: Any, env: dict[Any, Any]) -> bool:
    if pattern is ANY_POINTEE:
        return True
    if isinstance(pattern, TypeVar):
        if pattern in env:
            return bool(env[pattern] == actual)
        bound = pattern.__bound__
        if bound is not None and bound is not dtypes.Dtype and not _within(actual, bound):
            return False
        env[pattern] = actual
        return True
    p_origin, a_origin = typing.get_origin(pattern), typing.get_origin(actual)
    if p_origin is None or a_origin is None:
        return bool(pattern == actual)
    p_args, a_args = typing.get_args(pattern), typing.get_args(actual)
    return p_origin is a_origin and len(p_args) == len(a_args) and all(
        _unify(p, a, env) for p, a in zip(p_args, a_args))


def _within(actual: Any, bound: Any) -> bool:
    """``actual`` (a marker like ``Float[W32]`` or ``W32``) satisfies a TypeVar bound."""
    options = typing.get_args(bound) if typing.get_origin(bound) in (typing.Union, type(int | str)) else (bound,)
    cls = typing.get_origin(actual) or actual
    return any(isinstance(cls, type) and issubclass(cls, typing.get_origin(o) or o) for o in options)


def _show(pattern: Any) -> str:
    if isinstance(pattern, TypeVar):
        return pattern.__name__
    origin = typing.get_origin(pattern)
    if origin is None:
        name: str = getattr(pattern, "__name__", repr(pattern))
        return name
    return f"{origin.__name__}[{', '.join(_show(a) for a in typing.get_args(pattern))}]"


def show_dtype(dtype: DType) -> str:
    """A runtime dtype spelled as in annotations, e.g. ``Float[W16]`` (tl.f16)."""
    return f"{_show(dtypes.marker_of(dtype))} (tl.{dtype.name})"
