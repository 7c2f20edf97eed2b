"""``@tl.kernel`` and ``kernel[grid](...)``: argument binding and checking, then dispatch.

Every check here runs before a backend sees the launch, so a bad launch fails naming the
kernel and the parameter, with nothing executed.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import numbers
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeAlias, overload

import numpy as np

import tile_lang.dtypes as dtypes
import tile_lang.registry as registry
from tile_lang.dtypes import DType
from tile_lang.buffer import Buffer
from tile_lang.errors import KernelError, LaunchError, TileLangError, UsageError, trimmed
from tile_lang.launch import DEFAULT_OPTIONS, OPTION_NAMES, Launch as Launch, Options as Options
from tile_lang.launch_cache import GRID_LIMITS, Entry, ExpressLane, FastBackend, LastLaunch, LaunchCache, plain_grid
from tile_lang.descriptor import HostTensorDescriptor, Layout, part_names
from tile_lang.ops.memory import DESCRIPTOR_ALIGN, DESCRIPTOR_PADDINGS, padding_fill
from tile_lang.semantics import SemanticError, memory as memory_rules
from tile_lang.packing import Packing
from tile_lang.signature import (CONSTANT, NO_DEFAULT, Param, ParamKind, constant, match_pointee, packed, plain,
                                 read_params, runtime_parts, show_dtype, specialise, typed_by_class)

if TYPE_CHECKING:
    from tile_lang.compiled import Compiled, Compiler

P = ParamSpec("P")

Grid: TypeAlias = (
    tuple[int] | tuple[int, int] | tuple[int, int, int] | Callable[[dict[str, Any]], tuple[int, ...]]
)
StaticArgs: TypeAlias = tuple[dict[str, Any], int, int, int, dict[str, DType], frozenset[str], frozenset[str]]
"""What the compiler's inspect functions take after the kernel, for a specialisation without a launch."""


def _compiler() -> Compiler:
    """:mod:`tile_lang.compiler.inspect`, imported on first use and by name: an import statement,
    even inside a function, would make mypy analyse the whole compiler for every file importing
    ``tile_lang`` (see :class:`~tile_lang.compiled.Compiler`)."""
    from tile_lang.compiled import Compiler

    module = importlib.import_module("tile_lang.compiler.inspect")
    assert isinstance(module, Compiler)
    return module


class Kernel(Generic[P]):
    """A tile kernel: a typed Python function run by one program of a launch grid. A kernel with
    unannotated parameters launches through :meth:`specialised`, one kernel per kind of argument."""

    def __init__(self, fn: Callable[P, None], params: tuple[Param, ...] | None = None) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.params: tuple[Param, ...] = read_params(fn) if params is None else params
        self.unannotated = tuple((i, p) for i, p in enumerate(self.params) if p.kind is ParamKind.UNANNOTATED)
        self.specialising = tuple((i, p) for i, p in enumerate(self.params)  # typed by each launch's argument
                                  if p.kind in (ParamKind.UNANNOTATED, ParamKind.DESCRIPTOR)
                                  or (p.optional and p.kind is ParamKind.POINTER))
        self._specialised: dict[tuple[tuple[ParamKind, Any], ...], Kernel[P]] = {}
        self._by_classes: dict[tuple[type, ...], Kernel[P]] = {}  # the same, by the arguments' classes
        self._by_positional: dict[tuple[type, ...], Kernel[P]] = {}  # the same, by all positional arguments' classes
        self.runtime_params = tuple(part for p in self.params for part in runtime_parts(p))
        self.descriptors = tuple(p for p in self.params if isinstance(p.annotation, Layout))  # specialised ones
        self.tuples = tuple(p for p in self.params if isinstance(p.annotation, Packing))  # tuples holding buffers
        self.constexpr_params = tuple(p for p in self.params if p.kind is ParamKind.CONSTEXPR)
        self.filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        self.lineno = fn.__code__.co_firstlineno
        # A parameter named like a launch option takes the keyword too (Triton's rule: tutorial 02's
        # `num_stages: tl.constexpr` is also the launch's num_stages); a stream cannot be a parameter.
        self.option_params = frozenset(p.name for p in self.params if p.name in OPTION_NAMES)
        if "stream" in self.option_params:
            raise KernelError("parameter 'stream' is the name of a launch option (the CUDA stream a launch runs on); "
                              "rename the parameter", self.filename, self.lineno, kernel=self.name)
        self.__doc__ = fn.__doc__
        self.matched_pointees: set[tuple[Any, ...]] = set()  # pointer dtypes already checked
        self._launch_caches: dict[str, tuple[registry.Backend, LaunchCache | LastLaunch]] = {}  # by backend name
        self._last_launcher: tuple[Any, Launcher[P]] | None = None  # (key, kernel[key]), held: its id stays unique
        self.lane: ExpressLane | None = None  # launches with the default options remembered outside Python
        self._lane_tries = 0  # calls it could not remember (a class it does not read...): it stops trying at 16

    def specialised(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Kernel[P]:
        """This kernel with each unannotated or optional parameter typed by its argument in this call
        (:func:`~tile_lang.signature.specialise`): one kernel per combination of kinds, with its
        own checks and fast path; the compile caches key on the arguments' dtypes and values.
        Found by the arguments' classes, which decide the kinds (:func:`~tile_lang.signature.typed_by_class`):
        those of all positional arguments first (one tuple, no loop), when they hold every such parameter."""
        if not self.specialising:
            return self
        found = self._by_positional.get(tuple(map(type, args)))
        if found is not None:
            return found
        values = []
        for index, param in self.specialising:
            value = args[index] if index < len(args) else kwargs.get(param.name, param.default)
            if value is NO_DEFAULT:
                return self  # binding reports the missing argument
            values.append(value)
        classes = tuple(map(type, values))
        found = self._by_classes.get(classes)
        if found is None:
            inferred = [specialise(param, value) for (_, param), value in zip(self.specialising, values)]
            key = tuple((p.kind, p.annotation) for p in inferred)
            found = self._specialised.get(key)
            if found is None:
                by_name = {p.name: p for p in inferred}
                found = self._specialised[key] = Kernel(self.fn, tuple(by_name.get(p.name, p) for p in self.params))
            if all(map(typed_by_class, classes)):
                self._by_classes[classes] = found
        if self.specialising[-1][0] < len(args) and all(map(typed_by_class, classes)):  # all passed by position
            self._by_positional[tuple(map(type, args))] = found
        return found

    def require_annotations(self, what: str) -> None:
        """A LaunchError if ``what`` (which needs every parameter's type without a launch) meets an
        unannotated parameter."""
        if self.unannotated:
            names = ", ".join(p.name for _, p in self.unannotated)
            raise LaunchError(f"kernel {self.name}: {what} needs the types of {names}, which have no annotation "
                              "(a launch types them from its arguments): annotate them (Pointer[D], int, float, "
                              "bool or constexpr), or launch the kernel with example arguments")

    def launch_cache(self, backend: registry.Backend) -> LaunchCache | LastLaunch:
        """This kernel's fast path on ``backend``: runners for a backend that makes them, else
        the last checked launch."""
        known = self._launch_caches.get(backend.name)
        if known is None or known[0] is not backend:
            cache: LaunchCache | LastLaunch = (LaunchCache(self, backend, OPTION_NAMES) if isinstance(backend, FastBackend)
                                               else LastLaunch(self, OPTION_NAMES))
            known = self._launch_caches[backend.name] = (backend, cache)
        return known[1]

    def current_cache(self) -> tuple[registry.Backend, LaunchCache | LastLaunch]:
        """The current backend and this kernel's fast path on it (:meth:`launch_cache`); a backend
        this kernel launched on before is found by its name alone, without the registry's checks."""
        known = self._launch_caches.get(registry.current_name())
        if known is None or not registry.is_loaded(known[0]):
            backend = registry.current()
            return backend, self.launch_cache(backend)
        return known

    @overload
    def __getitem__(self, key: Grid) -> Launcher[P]: ...
    @overload
    def __getitem__(self, key: tuple[Grid, Options]) -> Launcher[P]: ...
    def __getitem__(self, key: Any) -> Launcher[P]:
        last = self._last_launcher
        if last is not None and last[0] is key:  # the same grid object (a constant tuple): its launcher again
            if self.lane is None or type(last[1]) is not Launcher or last[1].options is not DEFAULT_OPTIONS:
                return last[1]
            launcher = last[1]  # remembered before the lane was: bound to it now
        elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], Options):
            launcher = Launcher(self, key[0], key[1])
        else:
            launcher = Launcher(self, key, DEFAULT_OPTIONS)
        called: Launcher[P] = launcher
        if self.lane is not None and launcher.options is DEFAULT_OPTIONS:
            called = self.lane.bind(launcher.grid, launcher)  # tries the lane, then the launcher
        if launcher.fixed_grid is not None:  # a tuple of ints; a callable grid may hold on to arrays
            self._last_launcher = key, called
        return called

    def __repr__(self) -> str:
        return f"<tl.kernel {self.name} at {self.filename}:{self.lineno}>"

    if not typing.TYPE_CHECKING:  # mypy keeps reporting a call as an error; at run time it says what to write
        def __call__(self, *args: Any, **kwargs: Any) -> None:
            raise UsageError(f"kernel {self.name} is not called directly: launch it with {self.name}[grid](...), "
                            "the grid a tuple of program counts such as (tl.cdiv(n, BLOCK),)")

    def inspect(self, num_warps: int = 4, optimized: bool = True, arch: str = "80", num_stages: int = 3,
                divisible: Sequence[str] = (), ones: Sequence[str] = (), **constexprs: Any) -> str:
        """The compiler's IR for these constexprs (after the pass pipeline unless ``optimized=False``),
        for target ``arch`` ("80": mma.sync, "90a": Hopper's wgmma); the int parameters named in
        ``divisible`` taken as multiples of 16 and those in ``ones`` as 1 (a unit stride), as a
        launch with such values specialises them."""
        args = self._static_args("inspect", num_warps, num_stages, arch, divisible, ones, constexprs)
        return _compiler().ir_text(self, *args, optimized=optimized)

    def cuda_source(self, num_warps: int = 4, arch: str = "80", num_stages: int = 3, divisible: Sequence[str] = (),
                    ones: Sequence[str] = (), **constexprs: Any) -> str:
        """The CUDA C++ the ``cupy`` backend generates for these constexprs and target ``arch``
        ("80", "90a"...), without a GPU: CI and reviewers see which instructions a kernel uses
        (``divisible`` and ``ones`` as for :meth:`inspect`: a descriptor's row strides must be known
        multiples of 16 bytes for its loads to become bulk tensor copies, and a unit stride named in
        ``ones`` gives the vector loads a launch with stride 1 compiles)."""
        args = self._static_args("cuda_source", num_warps, num_stages, arch, divisible, ones, constexprs)
        return _compiler().cuda_text(self, *args)

    def compile(self, num_warps: int = 4, arch: str = "80", num_stages: int = 3, divisible: Sequence[str] = (),
                ones: Sequence[str] = (), **constexprs: Any) -> Compiled:
        """The compiled kernel for these constexprs, as Triton's ``kernel.warmup`` returns it, without a
        GPU: ``.asm["ir" | "cuda" | "ptx" | "sass"]``, ``.cubin``, ``.n_regs``, ``.n_spills``, ``.shared``,
        ``.instructions``, ``.metadata`` (the PTX onwards from the CUDA toolkit on PATH, made on first use; arguments as for :meth:`inspect`)."""
        args = self._static_args("compile", num_warps, num_stages, arch, divisible, ones, constexprs)
        return _compiler().compile_kernel(self, *args)

    warmup = compile  # Triton's name for compiling without launching

    def _static_args(self, what: str, num_warps: int, num_stages: int, arch: str, divisible: Sequence[str],
                     ones: Sequence[str], constexprs: Mapping[str, Any]) -> StaticArgs:
        """The checked arguments of :meth:`inspect`, :meth:`cuda_source` and :meth:`compile` (``what``,
        named in their errors), in the compiler's order: constexprs, warps, stages, capability,
        pointees, the ints taken as multiples of 16 and those taken as 1."""
        self.require_annotations(what)
        options = checked_options(self, {"num_warps": num_warps, "num_stages": num_stages})
        pointees, named = self.split_pointees(constexprs)
        return (self.check_constexprs(named), options.num_warps, options.num_stages, _capability(self, arch), pointees,
                self._int_params("divisible", divisible), self._int_params("ones", ones))

    def _int_params(self, what: str, names: Sequence[str]) -> frozenset[str]:
        """``names`` (the argument ``what``), each an int parameter of the kernel (else a
        LaunchError naming it)."""
        ints = {p.name for p in self.runtime_params if p.annotation is int}
        for name in names:
            if name not in ints:
                raise LaunchError(f"kernel {self.name}: {what} names {name!r}, which is not an int parameter "
                                  f"(its int parameters: {', '.join(sorted(ints)) or 'none'})")
        return frozenset(names)

    def split_pointees(self, given: Mapping[str, Any]) -> tuple[dict[str, DType], dict[str, Any]]:
        """The pointee dtypes given for generic pointer parameters by name (``x_ptr=tl.f16`` in
        ``inspect``/``cuda_source``; checked against the parameter's pattern), and the rest."""
        pointers = {p.name: p for p in self.runtime_params if p.kind is ParamKind.POINTER}
        pointees: dict[str, DType] = {}
        bindings: dict[Any, Any] = {}
        for name, value in given.items():
            if name not in pointers:
                continue
            try:
                dtype = dtypes.dtype_of(value)
            except TypeError:
                raise LaunchError(f"kernel {self.name}: {name} takes a dtype here (e.g. tl.f16), got {value!r}") from None
            if not match_pointee(pointers[name].annotation, dtype, bindings):
                raise LaunchError(f"kernel {self.name}: {name} is {pointers[name].describe()}, which "
                                  f"{show_dtype(dtype)} does not fit")
            pointees[name] = dtype
        return pointees, {k: v for k, v in given.items() if k not in pointees}

    def check_constexprs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Constexprs given by name without a launch (``inspect``, ``cuda_source``), checked as a launch
        checks them: every one given, none unknown, each of its declared type."""
        names = [p.name for p in self.constexpr_params]
        unknown = [name for name in given if name not in names]
        if unknown:
            raise LaunchError(f"kernel {self.name} has no constexpr {unknown[0]!r} "
                              f"(its constexprs: {', '.join(names) or 'none'})")
        given = {**{p.name: p.default for p in self.constexpr_params if p.default is not NO_DEFAULT}, **given}
        missing = [name for name in names if name not in given]
        if missing:
            raise LaunchError(f"kernel {self.name}: missing constexpr(s) {', '.join(missing)}")
        return {p.name: _check_constexpr(self, p, given[p.name]) for p in self.constexpr_params}

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Split a call into runtime arguments (in parameter order) and constexprs, by name."""
        by_name: dict[str, Any] = {}
        if len(args) > len(self.params):
            raise LaunchError(f"kernel {self.name} takes {len(self.params)} arguments, got {len(args)} positional")
        for param, value in zip(self.params, args):
            by_name[param.name] = value
        for name, value in kwargs.items():
            if name not in {p.name for p in self.params}:
                raise LaunchError(f"kernel {self.name} has no parameter {name!r}")
            if name in by_name:
                raise LaunchError(f"kernel {self.name}: parameter {name!r} given twice")
            by_name[name] = value
        for param in self.params:
            if param.name not in by_name and param.default is not NO_DEFAULT:
                by_name[param.name] = param.default
        missing = [p.name for p in self.params if p.name not in by_name]
        if missing:
            raise LaunchError(f"kernel {self.name}: missing argument(s) {', '.join(missing)}")
        runtime = tuple(part for p in self.params for part in _passed(self, p, by_name[p.name]))
        constexprs = {p.name: _check_constexpr(self, p, by_name[p.name]) for p in self.constexpr_params}
        for param in self.descriptors:  # the block shape and padding are compile-time
            assert isinstance(param.annotation, Layout)
            constexprs[param.name] = param.annotation.static()
        for param in self.tuples:  # the structure and constants are compile-time, the buffers are passed
            constexprs[param.name] = param.annotation
        return runtime, constexprs


LaunchHook: TypeAlias = Callable[["Launcher[Any]", tuple[Any, ...], dict[str, Any]],
                                 contextlib.AbstractContextManager[object] | None]
LAUNCH_HOOKS: list[LaunchHook] = []
"""Called with each launch (the launcher, its positional and keyword arguments) before it runs; a
context manager returned is entered around the launch (a profiler times it: see Triton's proton,
:mod:`tile_lang.as_triton.proton`)."""


class Launcher(Generic[P]):
    """``kernel[grid]``: calling it checks the arguments and launches on the current backend."""

    def __init__(self, kernel: Kernel[P], grid: Any, options: Options) -> None:
        self.kernel = kernel
        self.grid = grid
        self.options = options
        self.fixed_grid = None if callable(grid) else plain_grid(grid, {})  # a tuple of ints, padded: fixed

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Launch; an error is raised from here without tile_lang's frames (:func:`~tile_lang.errors.trimmed`)."""
        __tracebackhide__ = True  # pytest's traceback starts at the user's launch line
        lane = self.kernel.lane
        if lane is not None and self.options is DEFAULT_OPTIONS and lane(self.grid, args, kwargs):
            return
        try:
            self.checked(*args, **kwargs)
        except TileLangError as error:
            raise trimmed(error)  # one library frame, this one

    def checked(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """The launch without the express lane: hooks, the fast path or every check (a bound lane
        that did not launch a call comes here, so the lane is not tried twice)."""
        __tracebackhide__ = True
        try:
            if LAUNCH_HOOKS:
                with contextlib.ExitStack() as around:
                    for hook in LAUNCH_HOOKS:
                        entered = hook(self, args, kwargs)
                        if entered is not None:
                            around.enter_context(entered)
                    self._launch(args, kwargs)
            else:
                self._launch(args, kwargs)
        except TileLangError as error:
            raise trimmed(error)

    def _launch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Through the fast path when this call looks like an earlier checked one (see
        :mod:`tile_lang.launch_cache`), else check everything first. As in Triton, a grid with a
        zero entry launches nothing."""
        kernel = self.kernel.specialised(args, kwargs) if self.kernel.specialising else self.kernel
        backend, cache = kernel.current_cache()
        if isinstance(cache, LastLaunch):
            self._launch_checked(cache, backend, args, kwargs)
            return
        found = cache.find(self.options, args, kwargs)
        if found is not None and found[0] is not None:  # prepared, unless the grid needs the checked path
            entry = found[0]
            grid = self.fixed_grid if self.fixed_grid is not None else plain_grid(self.grid, entry.constexprs)
            if grid is not None:
                if grid[0] and grid[1] and grid[2]:
                    entry.runner(grid, found[1])
                    if entry.express is not None and self.options is DEFAULT_OPTIONS and self.kernel._lane_tries < 16:
                        self._remember(entry, cache, backend.name, args, kwargs)
                return
        launch = self.prepare(args, kwargs, backend)
        if min(launch.grid) == 0:
            return
        if found is None:
            backend.launch(launch)
        else:
            runner = found[0].runner if found[0] is not None else cache.remember(found, launch)
            runner(launch.grid, found[1])

    def _remember(self, entry: Entry, cache: LaunchCache, backend: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> None:
        """Remember a call the fast path just launched in the kernel's express lane, so calls like it
        launch without Python frames; an unannotated kernel only where the arguments' classes decide
        its specialisation."""
        owner, target = self.kernel, entry.express
        assert target is not None
        owner._lane_tries += 1  # each try counts: a call the lane keeps missing stops being remembered
        roles = cache.roles(len(args), tuple(kwargs))
        if owner.specialising and not all(typed_by_class(type(a)) for a in (*args, *kwargs.values())):
            return
        lane = owner.lane if owner.lane is not None else target.lane()
        if roles is not None and lane is not None and lane.record(args, kwargs, target.plan(roles, backend,
                                                                                            dict(entry.constexprs))):
            owner.lane = lane

    def _launch_checked(self, last: LastLaunch, backend: registry.Backend, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> None:
        """Launch on a backend that runs checked launches: the last one's checks reused when
        this call is like it, else checked and remembered."""
        launch = last.find(self.grid, self.options, args, kwargs)
        if launch is None:
            launch = self.prepare(args, kwargs, backend)
            last.remember(self.options, args, kwargs, launch)
        if launch.grid[0] and launch.grid[1] and launch.grid[2]:
            backend.launch(launch)

    def prepare(self, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                backend: registry.Backend | None = None) -> Launch:
        """Bind, check and adopt the arguments; the grid is resolved against the constexprs."""
        kernel = self.kernel.specialised(args, kwargs)
        option_kw = {k: v for k, v in kwargs.items() if k in OPTION_NAMES}
        launch_options = checked_options(kernel, option_kw, self.options) if option_kw else self.options
        if launch_options.num_ctas != 1:
            raise LaunchError(f"kernel {kernel.name}: num_ctas={launch_options.num_ctas}: clusters are not supported "
                              "yet (each program runs as one CTA; use num_ctas=1)")
        if launch_options.launch_cooperative_grid:
            raise LaunchError(f"kernel {kernel.name}: launch_cooperative_grid=True: cooperative launches (all programs "
                              "resident at once, so they may wait on each other) are not supported yet")
        runtime, constexprs = kernel.bind(args, {k: v for k, v in kwargs.items()
                                                 if k not in OPTION_NAMES or k in kernel.option_params})
        backend = backend or registry.current()
        checked = _check_runtime_args(kernel, runtime, backend)
        _check_descriptors(kernel, checked)
        grid = _resolve_grid(kernel, self.grid, constexprs)
        return Launch(kernel, grid, checked, constexprs, launch_options)


def kernel(fn: Callable[P, None]) -> Kernel[P]:
    """Declare a tile kernel. Its parameters are ``Pointer[D]``, ``int``/``float``/``bool``
    scalars and ``constexpr`` compile-time constants (passed by keyword at launch); an unannotated
    one is typed at each launch by its argument, as in Triton."""
    return Kernel(fn)


def checked_options(kernel: Kernel[Any], given: Mapping[str, Any], base: Options = DEFAULT_OPTIONS) -> Options:
    """``base`` with the options given as keywords, checked, a bad one named with the kernel."""
    try:
        return replace(base, **given)
    except LaunchError as exc:
        raise LaunchError(f"kernel {kernel.name}: {exc}") from None


def _check_constexpr(kernel: Kernel[Any], param: Param, value: Any) -> Any:
    """``value`` if the constexpr's annotation takes it (a NumPy integer as an int, an int for a float,
    a ``tl.constexpr(v)`` as ``v``), else a LaunchError naming the kernel, the constexpr and the types it takes."""
    value = plain(value)
    expected = param.annotation
    if expected is CONSTANT:
        try:
            return constant(value)
        except UsageError as exc:
            raise LaunchError(f"kernel {kernel.name}: constexpr {param.name} must be {exc} {value!r}") from None
    takes = typing.get_args(expected) if isinstance(expected, types.UnionType) else (expected,)
    if int in takes and isinstance(value, np.integer):
        return int(value)
    if not isinstance(expected, (type, types.UnionType)) or expected is object or isinstance(value, expected):
        return value  # a generic annotation (Constexpr[tuple[int, ...]]) is not checked here
    if float in takes and isinstance(value, int) and not isinstance(value, bool):
        return value
    raise LaunchError(f"kernel {kernel.name}: constexpr {param.name} must be "
                      f"{getattr(expected, '__name__', repr(expected))}, got {type(value).__name__} {value!r}")


def _check_runtime_args(kernel: Kernel[Any], values: tuple[Any, ...], backend: registry.Backend) -> tuple[Any, ...]:
    checked = tuple(_check_pointer(kernel, param, value, backend) if param.kind is ParamKind.POINTER
                    else _check_scalar(kernel, param, value) for param, value in zip(kernel.runtime_params, values))
    _check_one_device(kernel, checked)
    pointees = tuple(b.type for b in checked if isinstance(b, Buffer))
    if pointees not in kernel.matched_pointees:  # dtype matching is slow; each combination is checked once
        bindings: dict[Any, Any] = {}
        for param, value in zip(kernel.runtime_params, checked):
            if param.kind is ParamKind.POINTER and not match_pointee(param.annotation, value.type, bindings):
                raise LaunchError(f"{_where(kernel, param)}: got a buffer of {show_dtype(value.type)}")
        kernel.matched_pointees.add(pointees)
    return checked


def _passed(kernel: Kernel[Any], param: Param, value: Any) -> tuple[Any, ...]:
    """The runtime arguments ``value`` is passed as for ``param`` (see ``signature.runtime_parts``):
    a host descriptor as its base, shape and strides, after the checks that need no dtype; a
    tuple holding buffers as those buffers."""
    if param.kind in (ParamKind.POINTER, ParamKind.SCALAR):
        return (value,)
    if param.kind is ParamKind.TUPLE:
        packing, buffers = packed(value)
        if packing != param.annotation:
            raise LaunchError(f"{_where(kernel, param)}: the tuple changed during the launch")
        return buffers
    if param.kind is not ParamKind.DESCRIPTOR:
        return ()
    if not isinstance(value, HostTensorDescriptor):
        raise LaunchError(f"{_where(kernel, param)}: expected a host tensor descriptor (tl.HostTensorDescriptor, "
                          f"Triton's TensorDescriptor), got {type(value).__name__}")
    layout = param.annotation
    assert isinstance(layout, Layout)
    try:
        block = memory_rules.block_shape(value.block_shape, "its block_shape")
    except SemanticError as exc:
        raise LaunchError(f"{_where(kernel, param)}: {exc}") from None
    shape, strides = list(value.shape), list(value.strides)
    if not len(shape) == len(strides) == len(block):
        raise LaunchError(f"{_where(kernel, param)}: shape {shape}, strides {strides} and block_shape "
                          f"{list(block)} must have one entry per dim")
    if block != layout.block_shape:
        raise LaunchError(f"{_where(kernel, param)}: block_shape changed during the launch")
    return (value.base, *shape, *strides)


def _check_descriptors(kernel: Kernel[Any], checked: tuple[Any, ...]) -> None:
    """The rules Triton's host descriptors follow, checked on the adopted arguments: a 16-byte
    aligned base, a last stride of 1, the others multiples of 16 bytes, a block at least 16 bytes
    wide (``semantics.memory``); a LaunchError naming the parameter."""
    at = {p.name: i for i, p in enumerate(kernel.runtime_params)}
    for param in kernel.descriptors:
        assert isinstance(param.annotation, Layout)
        first = at[part_names(param.name, param.annotation.ndim)[0]]
        base, rest = checked[first], checked[first + 1:first + 1 + 2 * param.annotation.ndim]
        assert isinstance(base, Buffer)
        try:
            memory_rules.descriptor_block(param.annotation.block_shape, base.type)
            memory_rules.descriptor_strides(tuple(rest[param.annotation.ndim:]), base.type)
            padding_fill(param.annotation.padding, base.type, DESCRIPTOR_PADDINGS)
        except (SemanticError, ValueError) as exc:
            raise LaunchError(f"{_where(kernel, param)}: {exc}") from None
        address = _address(base)
        if address is not None and address % DESCRIPTOR_ALIGN:
            raise LaunchError(f"{_where(kernel, param)}: its base must be {DESCRIPTOR_ALIGN}-byte "
                              f"aligned, got address {address:#x}")


def _address(buffer: Buffer[Any]) -> int | None:
    """The device address of a buffer's first element, read through the array interfaces (None
    when its array has neither)."""
    data = buffer.data
    for name in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(data, name, None)
        if isinstance(interface, dict):
            return int(interface["data"][0])
    ptr = getattr(data, "ptr", None)
    return ptr if isinstance(ptr, int) else None


def _check_one_device(kernel: Kernel[Any], checked: tuple[Any, ...]) -> None:
    """A launch runs on the device holding its buffers, so they must all be on one."""
    buffers = [(param, value) for param, value in zip(kernel.runtime_params, checked) if isinstance(value, Buffer)]
    if len({b.device for _, b in buffers}) > 1:
        where = ", ".join(f"{param.name} on device {b.device}" for param, b in buffers)
        raise LaunchError(f"kernel {kernel.name}: its buffers are on different devices ({where}); a launch runs on "
                          "the device holding its buffers: copy them to one device first")


def _where(kernel: Kernel[Any], param: Param) -> str:
    return f"kernel {kernel.name}, parameter {param.name} ({param.describe()})"


def _check_pointer(kernel: Kernel[Any], param: Param, value: Any, backend: registry.Backend) -> Buffer[Any]:
    try:
        buffer = value if isinstance(value, Buffer) else backend.adopt(value)
    except LaunchError as exc:  # an array adoption refuses (its dtype, its layout): say where
        raise LaunchError(f"{_where(kernel, param)}: {exc}") from None
    if buffer is None:
        raise LaunchError(f"{_where(kernel, param)}: expected a tile_lang Buffer or a {backend.name} array, "
                          f"got {type(value).__name__}")
    if buffer.backend is not backend:
        raise LaunchError(f"{_where(kernel, param)}: the buffer lives on backend {buffer.backend.name!r} but this "
                          f"launch runs on {backend.name!r}; create it inside `with tl.backend({backend.name!r})`")
    return buffer


def _check_scalar(kernel: Kernel[Any], param: Param, value: Any) -> Any:
    expected = param.annotation
    if expected is bool:
        ok = isinstance(value, (bool, np.bool_))
    elif expected is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not ok:
        raise LaunchError(f"kernel {kernel.name}, parameter {param.name}: expected {expected.__name__}, "
                          f"got {type(value).__name__} {value!r}")
    try:
        if param.dtype is not None:
            return _typed_scalar(param.dtype, expected(value))
        if expected is int:
            dtypes.scalar_dtype(int(value))  # passed as i32, i64 or u64, the first that holds it (Triton's rule)
        return expected(value)
    except (OverflowError, SemanticError):  # float() of a huge int; an int beyond 64 bits or the annotation's
        fits = (f"tl.{param.dtype.name}" if param.dtype is not None and param.dtype.is_int
                else "i64 or u64 (-2**63 to 2**64 - 1)" if expected is int else "a float")
        raise LaunchError(f"kernel {kernel.name}, parameter {param.name}: {value} does not fit in {fits}") from None


def _typed_scalar(dtype: DType, value: bool | int | float) -> np.generic:
    """A scalar of a parameter annotated with ``dtype`` as the NumPy scalar both backends pass it
    as (``dtypes.scalar_dtype`` reads its dtype back); an int outside the dtype's range is a SemanticError."""
    if dtype.is_int:
        low, high = dtypes.int_limits(dtype)
        if not low <= int(value) <= high:
            raise SemanticError(f"{value} is out of range")
    made: np.generic = dtype.numpy.type(value)
    return made


def _resolve_grid(kernel: Kernel[Any], grid: Any, constexprs: Mapping[str, Any]) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(dict(constexprs))
    if isinstance(grid, numbers.Integral) and not isinstance(grid, (bool, np.bool_)):
        grid = (grid,)
    if not isinstance(grid, tuple) or not 1 <= len(grid) <= 3:
        raise LaunchError(f"kernel {kernel.name}: the grid must be a tuple of 1 to 3 ints, got {grid!r}")
    if not all(isinstance(g, numbers.Integral) and not isinstance(g, (bool, np.bool_)) for g in grid):
        raise LaunchError(f"kernel {kernel.name}: grid entries must be ints, got {grid!r}")
    for axis, (g, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if not 0 <= g <= limit:
            raise LaunchError(f"kernel {kernel.name}: grid axis {axis} is {g}, outside 0..{limit} (CUDA's grid limits "
                              f"are {' x '.join(map(str, GRID_LIMITS))} programs); got the grid {grid!r}")
    padded = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    return (padded[0], padded[1], padded[2])


def _capability(kernel: Kernel[Any], arch: str) -> int:
    """A target like "80", "90a" or "sm_90a" as the compute capability the compiler keys on."""
    digits = arch.removeprefix("sm_").removesuffix("a")
    if not digits.isdigit() or int(digits) < 80:
        raise LaunchError(f"kernel {kernel.name}: arch must be a compute capability of 80 or more, such as "
                          f"'80' or '90a', got {arch!r}")
    return int(digits)
