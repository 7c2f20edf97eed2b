"""The fast path of repeat launches.

The first launch of a kernel with a new combination of argument binding, constexprs, options,
argument types, buffer dtypes and devices, and specialisation bits runs every check in
:mod:`tile_lang.kernel`. A backend that supports it (:class:`FastBackend`) then hands back a *runner* for that
specialisation, stored under a key made of exactly what those checks and the specialisation
depended on. A later launch with the same key skips binding, checks, adoption and ``Launch``
construction: it computes the key, reads the device addresses and calls the runner. A launch
whose key is new, or that the key cannot describe (a numpy integer for an ``int``, an array type
the backend cannot probe), takes the checked path, so a bad launch still fails before anything runs. A backend that runs the
checked launch itself (the NumPy reference) gets :class:`LastLaunch`: a launch like the kernel's
last one reuses its checks.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

import tile_lang.dtypes as dtypes
from tile_lang.launch import DEFAULT_OPTIONS, Launch, LaunchedKernel
from tile_lang.signature import Param, ParamKind

Probe: TypeAlias = Callable[[Any], tuple[Hashable, int]]
"""An array -> (validation token, device address). The token holds everything adoption and the
checks depend on besides the array's class (dtype, device kind, owning backend, and the device
index, which also picks the device-specific runner), so arrays of one class with equal tokens
pass the checks alike and run on the same device."""

Runner: TypeAlias = Callable[[tuple[int, int, int], tuple[Any, ...]], None]
"""Runs one compiled specialisation: (grid, raw arguments) -> None, where the raw arguments are
device addresses for pointers and the Python (or NumPy) scalars as passed otherwise."""


@runtime_checkable
class FastBackend(Protocol):
    """What a backend adds to :class:`tile_lang.registry.Backend` to get the fast path."""

    def probe(self, cls: type) -> Probe | None:
        """How to read arrays of class ``cls`` (exactly that class) passed to a pointer
        parameter, or None if launches with them should always take the checked path."""

    def runner(self, launch: Launch) -> Runner:
        """A runner for ``launch``'s specialisation (compiling it if needed). ``launch`` is
        checked; the runner is called with its grid and raw arguments right away, then reused."""


class ExpressLane(Protocol):
    """A kernel's launches remembered outside Python (the CUDA backend's ``express.c``)."""

    def __call__(self, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Launch if this call is like a remembered one (same classes, dtypes, devices, alignments,
        int widths, constexprs, backend, no launch hook); False, launching nothing, otherwise."""

    def record(self, args: tuple[Any, ...], kwargs: dict[str, Any], plan: tuple[Any, ...]) -> bool:
        """Remember a call the fast path just launched, with its target's plan; False if it cannot."""

    def entries(self) -> int:
        """How many calls it keeps (at most four)."""

    def bind(self, grid: Any, launcher: object) -> Any:
        """``kernel[grid]``: a callable trying this lane with the call's own arguments, then
        ``launcher``, whose attributes it shows as its own (so it stands in for the launcher)."""


class ExpressTarget(Protocol):
    """A prepared specialisation a backend can launch through an :class:`ExpressLane`."""

    def lane(self) -> ExpressLane | None:
        """A new, empty lane for a kernel (None where the backend has none here)."""

    def plan(self, roles: tuple[int, ...], backend: str, constexprs: dict[str, Any]) -> tuple[Any, ...]:
        """What the lane keeps for a call whose flat arguments (``(*args, *kwargs.values())``) fill
        ``roles``: each one's runtime parameter index, or -1 for a constexpr or option."""


@runtime_checkable
class ExpressBackend(FastBackend, Protocol):
    """A :class:`FastBackend` whose prepared specialisations may also launch through a lane."""

    def express_target(self, launch: Launch) -> ExpressTarget | None:
        """The target of ``launch``'s specialisation (checked, just launched), or None."""


GRID_LIMITS = (2**31 - 1, 65535, 65535)
"""The most programs along each grid axis: CUDA's limits, enforced on every backend."""
_MAX_X, _MAX_YZ, _ = GRID_LIMITS

_POINTER, _INT, _FLOAT, _OTHER, _TYPED = 0, 1, 2, 3, 4  # _TYPED: a scalar annotated with a dtype


def typed(value: Any) -> Hashable:
    """``value`` as a key that tells apart values equal under ``==`` but compiled differently:
    4, 4.0 and True by type, 0.0 and -0.0 by ``repr``, tuples element by element."""
    if isinstance(value, float):
        return type(value), repr(value)
    if isinstance(value, tuple):
        return type(value), tuple(map(typed, value))
    return type(value), value


_KEYED = frozenset({dtypes.I32, dtypes.I64, dtypes.F16, dtypes.F32, dtypes.F64})
"""The dtypes of annotated scalars (``n: tl.int64``) whose launches the fast path keys as it keys
unannotated ints and floats: an int's width class says whether it fits in i32 or i64."""

_PAD: dict[int, tuple[int, ...]] = {1: (1, 1), 2: (1,), 3: ()}
_FLOAT_INTS = 1 << 1023  # ints passed for a float below this in magnitude convert; the rest take the checked path


def int_class(value: int) -> int:
    """The facts about an ``int`` argument that its checks and specialisation depend on: the
    width it is passed in (0 when it fits in none, so such a launch is never cached; the bits
    above the low three), whether it is negative, divisible by 16, and equal to 1."""
    if -0x8000_0000 <= value < 0x8000_0000:
        width = 1
    elif -(1 << 63) <= value < 1 << 63:
        width = 2
    else:
        width = 3 if 0 <= value < 1 << 64 else 0
    return width << 3 | (value >= 0) << 2 | (value & 15 == 0) << 1 | (value == 1)


def plain_grid(grid: Any, constexprs: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """``grid`` (or what a callable grid returns) padded to three entries when it is a tuple of
    one to three Python ints within :data:`GRID_LIMITS`; None otherwise, for the checked path to
    resolve or reject."""
    if callable(grid):
        grid = grid(dict(constexprs))
    if type(grid) is not tuple:
        return None
    pad = _PAD.get(len(grid))
    if pad is None:
        return None
    for g in grid:
        if type(g) is not int or g < 0:
            return None
    padded: tuple[int, int, int] = grid + pad
    x, y, z = padded
    if x > _MAX_X or y > _MAX_YZ or z > _MAX_YZ:
        return None
    return padded


@dataclass(frozen=True)
class Entry:
    """A prepared specialisation: its runner, the constexprs a callable grid is given, and its
    express target (None: launched by its runner only)."""

    runner: Runner
    constexprs: Mapping[str, Any]
    express: ExpressTarget | None = None


@dataclass(frozen=True)
class Binding:
    """Where the runtime arguments and the constexpr and option values of calls with a given
    number of positional arguments and given keyword names sit in ``(*args, *kwargs.values())``,
    as ``Kernel.bind`` would map them."""

    runtime: tuple[int, ...]
    statics: tuple[int, ...]


Found: TypeAlias = tuple[Entry | None, tuple[Any, ...], dict[Hashable, Entry], Hashable]
"""A launch described by a key: the entry if the key was seen before, the raw arguments, where
to store a new entry, and the key (a plain tuple: it is built on every launch)."""

KeyFunction: TypeAlias = Callable[[Hashable, tuple[Any, ...], dict[str, Any]], Found | None]
"""(options, args, kwargs) -> the launch's :data:`Found`, or None if the key cannot describe it;
one per kernel and shape of call (:func:`key_function`)."""


class LaunchCache:
    """The fast path of one kernel on one backend."""

    def __init__(self, kernel: LaunchedKernel, backend: FastBackend, option_names: frozenset[str]) -> None:
        self.kernel = kernel
        self.backend = backend
        self.option_names = option_names
        self.kinds = tuple(_kind(p) for p in kernel.runtime_params)
        self.probes = _Probes(backend)
        self.keys: dict[tuple[int, tuple[str, ...]], KeyFunction | None] = {}

    def find(self, options: Hashable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Found | None:
        """The key and raw arguments of a call, or None if the key cannot describe it."""
        shape = len(args), tuple(kwargs)
        key = self.keys.get(shape, _UNSEEN)
        if key is _UNSEEN:
            binding = bind(self.kernel, self.option_names, *shape)
            key = self.keys[shape] = None if binding is None or _TYPED in self.kinds else key_function(
                self.kernel.name, self.kinds, binding, args + tuple(kwargs.values()), shape[1], self.probes)
        return None if key is None else key(options, args, kwargs)

    def remember(self, found: Found, launch: Launch) -> Runner:
        """Prepare and store the runner for a checked launch that ``find`` described."""
        runner = self.backend.runner(launch)
        target = self.backend.express_target(launch) if isinstance(self.backend, ExpressBackend) else None
        found[2][found[3]] = Entry(runner, launch.constexprs, target)
        return runner

    def roles(self, n_args: int, names: tuple[str, ...]) -> tuple[int, ...] | None:
        """For calls of this shape, each flat argument's runtime parameter index (-1: a constexpr or
        option), as :data:`ExpressTarget.plan` takes them; None if such calls take the checked path."""
        binding = bind(self.kernel, self.option_names, n_args, names)
        if binding is None:
            return None
        roles = [-1] * (n_args + len(names))
        for j, i in enumerate(binding.runtime):
            roles[i] = j
        return tuple(roles)


class _Probes(dict[type, Probe | None]):
    """The backend's probe of each array class met so far (None: the backend has none)."""

    def __init__(self, backend: FastBackend) -> None:
        super().__init__()
        self.backend = backend

    def __missing__(self, cls: type) -> Probe | None:
        probe = self[cls] = self.backend.probe(cls)
        return probe


def key_function(kernel: str, kinds: tuple[int, ...], binding: Binding, flat: tuple[Any, ...],
                 names: tuple[str, ...], probes: _Probes) -> KeyFunction:
    """The key of a kernel's calls shaped like ``flat`` (``(*args, *kwargs.values())``, keywords
    ``names``), as a function generated for it: it reads each argument once, in a fixed order,
    with no loop or dispatch per argument (a repeat launch runs it every time); each pointer's
    probe is found by comparing its class with the one in ``flat`` (the dictionary only for another).

    The key holds the options; each constexpr and option value with its type (:func:`typed` for
    a float or tuple: 0.0 == -0.0); for each pointer its class, the probe's token and its address
    mod 16; each int's :func:`int_class`; each other scalar's type. Anything it cannot describe
    raises inside (no probe: None is called; an unhashable constexpr) and gives None.
    """
    n_args = len(flat) - len(names)
    names_of = [f"a{i}" for i in range(n_args)] + [f"kwargs[{name!r}]" for name in names]
    namespace: dict[str, Any] = {"probes": probes, "typed": typed, "int_class": int_class, "big": _FLOAT_INTS,
                                 "default": DEFAULT_OPTIONS, "entries": {}}
    lines = [f"{', '.join(names_of[:n_args])}, = args"] if n_args else []
    parts, raw = ["None if options is default else options"], []  # hashing Options is a Python call
    for j, i in enumerate(binding.statics):
        lines += [f"s{j} = {names_of[i]}; k{j} = type(s{j})", f"if k{j} is float or k{j} is tuple: k{j} = typed(s{j})"]
        parts += [f"s{j}", f"k{j}"]
    for j, (i, kind) in enumerate(zip(binding.runtime, kinds)):
        raw.append(f"r{j}")
        if kind == _POINTER:
            namespace[f"C{j}"] = cls = type(flat[i])
            namespace[f"P{j}"] = probes[cls]
            lines.append(f"c{j} = type({names_of[i]}); t{j}, r{j} = (P{j} if c{j} is C{j} else probes[c{j}])({names_of[i]})")
            parts += [f"c{j}", f"t{j}", f"r{j} & 15"]  # the alignment, to the element as well as to 16 bytes
            continue
        lines.append(f"r{j} = {names_of[i]}")
        if kind == _INT:
            lines.append(f"if type(r{j}) is not int: return None")
            parts.append(f"int_class(r{j})")
        else:
            if kind == _FLOAT:
                lines.append(f"if type(r{j}) is int and not -big < r{j} < big: return None")
            parts.append(f"type(r{j})")
    lines += [f"key = ({', '.join(parts)},)", f"return entries.get(key), ({''.join(r + ', ' for r in raw)}), entries, key"]
    source = "def key(options, args, kwargs):\n    try:\n" + "".join(f"        {line}\n" for line in lines) + (
        "    except Exception:  # a probe failing or missing, an unhashable constexpr: the checked path\n"
        "        return None\n")
    exec(compile(source, f"<launch key of {kernel}>", "exec"), namespace)  # noqa: S102 (text built above)
    key: KeyFunction = namespace["key"]
    return key


class LastLaunch:
    """The fast path of repeat launches on a backend that runs a checked :class:`Launch` itself
    (the NumPy reference): the kernel's last checked launch is reused by a launch with the same
    Buffer objects (held weakly, so memory is freed as usual), the same kinds of runtime scalars
    (an ``int`` of the same passing width; a ``float`` as a float), equal constexprs and options,
    and a grid of plain ints: everything its checks depended on."""

    def __init__(self, kernel: LaunchedKernel, option_names: frozenset[str]) -> None:
        self.kernel = kernel
        self.option_names = option_names
        # an annotated scalar (``n: tl.int64``) is converted to its dtype by the checked path each time
        self.kinds = tuple(_TYPED if p.dtype is not None else _kind(p) for p in kernel.runtime_params)
        self._last: _Last | None = None

    def find(self, grid: Any, options: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Launch | None:
        """The checked launch this call makes, or None if it may differ from the last one in
        anything the checks look at (then the checked path decides)."""
        last = self._last
        if last is None or len(args) != last.count or tuple(kwargs) != last.names or (
                options is not last.given_options and options != last.given_options):
            return None
        flat = args + tuple(kwargs.values()) if kwargs else args
        try:
            if static_key(last.statics_of(flat)) != last.statics:
                return None
        except (TypeError, ValueError):  # a constexpr compared elementwise (an array): not compared here
            return None
        checked: list[Any] = []
        keep = checked.append
        for kind, value, held in zip(self.kinds, last.runtime_of(flat), last.buffers):
            if kind == _POINTER:
                if held is None or held() is not value:
                    return None
            elif kind == _INT:
                if type(value) is not int or not int_class(value) >> 3:  # width 0: fits in no integer type
                    return None
            elif kind == _FLOAT:
                if type(value) is int and -_FLOAT_INTS < value < _FLOAT_INTS:
                    value = float(value)
                elif type(value) is not float:
                    return None
            elif kind == _TYPED or type(value) is not bool:
                return None
            keep(value)
        shape = plain_grid(grid, last.constexprs)
        if shape is None:
            return None
        return Launch(self.kernel, shape, tuple(checked), last.constexprs, last.launch_options)

    def remember(self, options: object, args: tuple[Any, ...], kwargs: dict[str, Any], launch: Launch) -> None:
        """Keep ``launch``, checked from this call, for the calls like it that follow."""
        names = tuple(kwargs)
        binding = bind(self.kernel, self.option_names, len(args), names)
        if binding is None:
            return
        flat = args + tuple(kwargs.values()) if kwargs else args
        runtime_of, statics_of = _picker(binding.runtime), _picker(binding.statics)
        buffers: list[weakref.ref[Any] | None] = []
        for kind, value, checked in zip(self.kinds, runtime_of(flat), launch.args):
            if kind == _POINTER and value is not checked:  # adopted from an array: adoption runs each launch
                self._last = None
                return
            buffers.append(weakref.ref(value) if kind == _POINTER else None)
        self._last = _Last(len(args), names, options, static_key(statics_of(flat)), runtime_of, statics_of,
                           tuple(buffers), launch.constexprs, launch.options)


@dataclass(frozen=True)
class _Last:
    """What a :class:`LastLaunch` compares a call with."""

    count: int
    names: tuple[str, ...]
    given_options: object
    statics: tuple[tuple[Any, ...], tuple[Hashable, ...]]
    runtime_of: Callable[[tuple[Any, ...]], tuple[Any, ...]]  # (*args, *kwargs values) -> runtime args
    statics_of: Callable[[tuple[Any, ...]], tuple[Any, ...]]  # ... -> constexpr and option values
    buffers: tuple[weakref.ref[Any] | None, ...]  # by runtime parameter, for the pointers
    constexprs: Mapping[str, Any]
    launch_options: Any


_UNSEEN: Any = object()


def static_key(statics: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Hashable, ...]]:
    """Constexpr and option values with what tells apart those equal under ``==`` but compiled
    differently: their types, or :func:`typed` where 0.0 == -0.0 and (1, 2) == (1.0, 2.0)."""
    kinds: tuple[Hashable, ...] = tuple(map(type, statics))
    if float in kinds or tuple in kinds:
        kinds = tuple(map(typed, statics))
    return statics, kinds


def bind(kernel: LaunchedKernel, option_names: frozenset[str], n_args: int, names: tuple[str, ...]) -> Binding | None:
    """How calls with ``n_args`` positional arguments and keywords ``names`` bind (as
    ``Kernel.bind`` would bind them), or None if ``Kernel.bind`` would reject them or the kernel
    takes a host descriptor or a tuple holding buffers (passed as several arguments: its launches
    take the checked path)."""
    params = kernel.params
    if n_args > len(params) or any(p.kind in (ParamKind.DESCRIPTOR, ParamKind.TUPLE) for p in params):
        return None
    slot = {p.name: i for i, p in enumerate(params[:n_args])}
    options = []
    for i, name in enumerate(names, start=n_args):
        is_param = any(p.name == name for p in params)
        if name in option_names:
            options.append(i)
            if not is_param:
                continue  # a parameter named like an option takes the keyword too (tutorial 02's num_stages)
        if name in slot or not is_param:
            return None
        slot[name] = i
    if len(slot) != len(params):
        return None
    return Binding(tuple(slot[p.name] for p in kernel.runtime_params),
                   tuple(slot[p.name] for p in kernel.constexpr_params) + tuple(options))


def _kind(param: Param) -> int:
    if param.kind is ParamKind.POINTER:
        return _POINTER
    if param.dtype is not None and param.dtype not in _KEYED:
        return _TYPED
    return _INT if param.annotation is int else _FLOAT if param.annotation is float else _OTHER


def _picker(indices: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A function taking these positions of a tuple, as a tuple."""
    if not indices:
        return lambda flat: ()
    if len(indices) == 1:
        (i,) = indices
        return lambda flat: (flat[i],)
    getter: Callable[[tuple[Any, ...]], tuple[Any, ...]] = operator.itemgetter(*indices)
    return getter
