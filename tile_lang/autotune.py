"""``@tl.autotune`` and ``@tl.heuristics``, Triton's spelling, on top of ``Kernel``'s public API.

Both wrap a kernel (or each other) and keep its ParamSpec, so ``tuned[grid](args...)`` is checked
by mypy against the kernel's parameters. The constexprs a config or a heuristic supplies need a
default in the kernel's signature (``BLOCK_M: constexpr = 64``) for mypy to accept the launch
without them; the wrapper always passes its own value, and passing one at the launch is an error.

On a timed backend (CUDA) the autotuner benchmarks every config per distinct value of ``key`` and
caches the winner in memory and on disk. On the NumPy reference nothing is timed: every config runs
on the call's inputs, which must agree with the first config's results (a config that breaks the
masks fails here, on the CPU), and the first config is used. As in Triton, a config that does not
fit (a failed ``tl.static_assert``, or more resources than the device has) is skipped, on both;
only when every config is skipped is the launch an error.
"""

from __future__ import annotations

import abc
import functools
import inspect
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, TypedDict, overload

import tile_lang.registry as registry
import tile_lang.testing as testing
from tile_lang.diskcache import DiskCache, code_version, digest, open_cache
from tile_lang.buffer import Buffer
from tile_lang.errors import CompilerBug, KernelError, LaunchError, OutOfResources
from tile_lang.host import MultiDeviceBackend
from tile_lang.kernel import Grid, Kernel, P
from tile_lang.launch import DEFAULT_OPTIONS, Launch, Options
from tile_lang.progress import progress
from tile_lang.signature import ParamKind

PRINT_ENV_VAR = "TILE_LANG_PRINT_AUTOTUNING"
CHECK_ENV_VAR = "TILE_LANG_AUTOTUNE_CHECK"
"""Set to ``0``, the reference runs only the first config that fits instead of checking every config
against it: for code whose results legitimately depend on the config, read back through
``best_config`` (Mamba's state-passing backward writes one partial sum per ``BLOCK_SIZE`` columns,
as many columns as the config has blocks, and the host sums those of ``best_config``)."""
REFERENCE = "numpy"  # the backend on which configs are checked against each other, not timed
AGREEMENT_SLACK = 64
"""On the reference, configs agree within this many times ``assert_close``'s default tolerance:
block sizes change the order of a reduction's sums, hence its rounding."""


@dataclass(frozen=True)
class Config:
    """One candidate: constexpr values and launch options (``tl.Config({"BLOCK": 128}, num_warps=4)``)."""

    kwargs: Mapping[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    pre_hook: Callable[[dict[str, Any]], Any] | None = None
    """Called before each launch of this config with the launch's arguments by name, the config's
    constexprs and options included (Triton's ``nargs``): e.g. to set host descriptors' block shapes."""

    _options: dict[Any, Options] = field(default_factory=dict, init=False, repr=False, compare=False)

    def options(self, stream: Any = None) -> Options:
        """The launch options of this config on ``stream``, checked once per stream (a tuned
        launch makes them on every call)."""
        found = self._options.get(stream)
        if found is None:
            found = self._options[stream] = Options(num_warps=self.num_warps, num_stages=self.num_stages,
                                                    num_ctas=self.num_ctas, stream=stream)
        return found

    def all_kwargs(self) -> dict[str, Any]:
        """The constexprs and the launch options by name (Triton's ``Config.all_kwargs``)."""
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": self.num_ctas}

    def __str__(self) -> str:
        return ", ".join([f"{k}: {v}" for k, v in self.kwargs.items()]
                         + [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}"])


class PruneConfigs(TypedDict, total=False):
    """``prune_configs_by``: ``early_config_prune(configs, named_args)`` drops configs before
    anything runs; ``perf_model(**named_args, **config.kwargs, num_warps=, num_stages=)`` estimates
    a time, and only the ``top_k`` best estimates (a count, or a fraction when a float) are run."""

    early_config_prune: Callable[[list[Config], dict[str, Any]], list[Config]]
    perf_model: Callable[..., float]
    top_k: int | float


class Wrapper(abc.ABC, Generic[P]):
    """A kernel behind ``autotune`` or ``heuristics``: launched like the kernel, ``w[grid](...)``."""

    def __init__(self, inner: Kernel[P] | Wrapper[P], supplies: Sequence[str], what: str) -> None:
        self.inner = inner
        self.kernel: Kernel[P] = inner.kernel if isinstance(inner, Wrapper) else inner
        self.supplies = tuple(supplies)  # the constexprs this wrapper sets
        constexprs = {p.name for p in self.kernel.constexpr_params}
        for name in self.supplies:
            if name not in constexprs:
                raise self.error(f"{what} sets {name!r}, which is not a constexpr parameter of kernel "
                                 f"{self.kernel.name} (constexprs: {', '.join(sorted(constexprs)) or 'none'})")

    def error(self, message: str) -> KernelError:
        """An error at the kernel's definition."""
        return KernelError(message, self.kernel.filename, self.kernel.lineno, kernel=self.kernel.name)

    @overload
    def __getitem__(self, key: Grid) -> TunedLauncher[P]: ...
    @overload
    def __getitem__(self, key: tuple[Grid, Options]) -> TunedLauncher[P]: ...
    def __getitem__(self, key: Any) -> TunedLauncher[P]:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], Options):
            return TunedLauncher(self, key[0], key[1])
        return TunedLauncher(self, key, DEFAULT_OPTIONS)

    @abc.abstractmethod
    def run(self, grid: Any, options: Options, named: dict[str, Any]) -> None:
        """Launch with the arguments by name, adding what this wrapper supplies."""

    def prepare(self, grid: Any, options: Options, named: dict[str, Any]) -> Launch | None:
        """The checked launch ``run`` would make, without running it; None when only running
        tells (an autotuner inside an autotuner)."""
        return None

    @functools.cached_property
    def supplied(self) -> frozenset[str]:
        """Every name this wrapper and the ones inside it set (read at every launch)."""
        inner = self.inner.supplied if isinstance(self.inner, Wrapper) else frozenset()
        return inner | frozenset(self.supplies)


class TunedLauncher(Generic[P]):
    """``wrapper[grid]``: calling it names the arguments and hands them to the wrapper."""

    def __init__(self, wrapper: Wrapper[P], grid: Any, options: Options) -> None:
        self.wrapper = wrapper
        self.grid = grid
        self.options = options

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        kernel = self.wrapper.kernel
        if len(args) > len(kernel.params):
            raise LaunchError(f"kernel {kernel.name} takes {len(kernel.params)} arguments, got {len(args)} positional")
        named = {p.name: value for p, value in zip(kernel.params, args)}
        for name, value in kwargs.items():
            if name in named:
                raise LaunchError(f"kernel {kernel.name}: parameter {name!r} given twice")
            named[name] = value
        clash = sorted(self.wrapper.supplied & named.keys())
        if clash:
            raise LaunchError(f"kernel {kernel.name}: {', '.join(clash)} set by autotune/heuristics; do not pass them")
        self.wrapper.run(self.grid, self.options, named)


def _launch(inner: Kernel[Any] | Wrapper[Any], grid: Any, options: Options, named: dict[str, Any]) -> None:
    if isinstance(inner, Wrapper):
        inner.run(grid, options, named)
    else:
        inner[grid, options](**named)


def _prepare(inner: Kernel[Any] | Wrapper[Any], grid: Any, options: Options, named: dict[str, Any]) -> Launch | None:
    """The checked launch :func:`_launch` would make (see :meth:`Wrapper.prepare`)."""
    if isinstance(inner, Wrapper):
        return inner.prepare(grid, options, named)
    return inner[grid, options].prepare((), named)


class Heuristics(Wrapper[P]):
    """Constexprs computed from the other arguments: ``@tl.heuristics({"EVEN_K": lambda a: a["K"] % 32 == 0})``."""

    def __init__(self, inner: Kernel[P] | Wrapper[P], values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> None:
        super().__init__(inner, list(values), "heuristics")
        self.values = dict(values)

    def run(self, grid: Any, options: Options, named: dict[str, Any]) -> None:
        _launch(self.inner, grid, options, self._with_values(named))

    def prepare(self, grid: Any, options: Options, named: dict[str, Any]) -> Launch | None:
        return _prepare(self.inner, grid, options, self._with_values(named))

    def _with_values(self, named: dict[str, Any]) -> dict[str, Any]:
        named = dict(named)
        for name, rule in self.values.items():  # in order: a rule sees the values set before it
            named[name] = rule(named)
        return named


class HeuristicsDecorator:
    """What ``tl.heuristics(values)`` returns; a class so that the mypy plugin types its application
    (the constexprs it sets need no default in the kernel's signature)."""

    def __init__(self, values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> None:
        self.values = values

    def __call__(self, inner: Kernel[P] | Wrapper[P]) -> Heuristics[P]:
        return Heuristics(inner, self.values)


def heuristics(values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> HeuristicsDecorator:
    """Set constexprs from functions of the named arguments (and of the config, under ``autotune``)."""
    return HeuristicsDecorator(values)


@dataclass
class _Tuned:
    """What one key value chose: the config, and the time of each config run (ms; empty on NumPy)."""

    config: Config
    timings: dict[str, float] = field(default_factory=dict)


class Autotuner(Wrapper[P]):
    """A kernel whose constexprs and launch options are chosen among ``configs`` per ``key`` value."""

    def __init__(self, inner: Kernel[P] | Wrapper[P], configs: Sequence[Config], key: Sequence[str],
                 prune_configs_by: PruneConfigs | None, reset_to_zero: Sequence[str], restore_value: Sequence[str],
                 warmup: float, rep: float, cache_results: bool) -> None:
        super().__init__(inner, sorted({k for c in configs for k in c.kwargs}), "a config")
        if not configs:
            raise self.error("autotune needs at least one config")
        self.configs = tuple(configs)
        self.key = tuple(key)
        self.prune = prune_configs_by or PruneConfigs()
        self.reset_to_zero = tuple(reset_to_zero)
        self.restore_value = tuple(restore_value)
        self.warmup, self.rep, self.cache_results = warmup, rep, cache_results
        names = {p.name: p for p in self.kernel.params}
        for name in self.key:
            if name not in names:
                raise self.error(f"autotune key {name!r} is not a parameter of kernel {self.kernel.name}")
        for name in self.reset_to_zero + self.restore_value:
            if name not in names or names[name].kind not in (ParamKind.POINTER, ParamKind.UNANNOTATED):
                raise self.error(f"autotune: {name!r} (reset_to_zero/restore_value) is not a pointer parameter "
                                 f"of kernel {self.kernel.name}")
        self.cache: dict[tuple[Any, ...], _Tuned] = {}
        self.best_config: Config | None = None  # the config of the last launch's key (Triton's best_config)

    def run(self, grid: Any, options: Options, named: dict[str, Any]) -> None:
        given = sorted({"num_warps", "num_stages"} & named.keys())
        if given:
            raise LaunchError(f"kernel {self.kernel.name}: {', '.join(given)} set by the autotune configs; "
                              "do not pass them")
        backend = registry.current()
        kernel = self.kernel.specialised((), named)
        keyed = _buffers(kernel, {k: named[k] for k in self.key}, backend)  # only the key's pointers
        key = (backend.name, *(_key_value(named[k], keyed.get(k)) for k in self.key), *_dtypes(named))
        tuned = self.cache.get(key)
        if tuned is not None:  # tuned already: only the buffers to zero are adopted here
            self.best_config = tuned.config
            zeroed = _buffers(kernel, {k: named[k] for k in self.reset_to_zero}, backend) if self.reset_to_zero else {}
            self._run(tuned.config, grid, options, named, zeroed)
            return
        buffers = _buffers(kernel, named, backend)
        start = time.perf_counter()
        configs = self._pruned(named)
        if backend.name == REFERENCE:  # leaves the first config's results in the buffers
            tuned = self.cache[key] = self._check_agreement(configs, grid, options, named, buffers)
        else:
            tuned = self.cache[key] = self._choose(configs, grid, options, named, buffers, key)
            self._run(tuned.config, grid, options, named, buffers)
        self.best_config = tuned.config
        if os.environ.get(PRINT_ENV_VAR) == "1":
            timing = f", {tuned.timings[str(tuned.config)]:.4f} ms" if tuned.timings else ""
            print(f"tile_lang autotune: kernel {self.kernel.name}, key {dict(zip(self.key, key[1:]))}: "
                  f"{tuned.config}{timing} (chosen among {len(configs)} in {time.perf_counter() - start:.2f} s)")

    def _run(self, config: Config, grid: Any, options: Options, named: dict[str, Any],
             buffers: Mapping[str, Buffer[Any]]) -> None:
        if config.pre_hook is not None:
            config.pre_hook({**named, **config.all_kwargs()})
        for name in self.reset_to_zero:
            _native(buffers[name])[...] = 0
        _launch(self.inner, grid, config.options(options.stream), {**named, **config.kwargs})

    def _choose(self, configs: list[Config], grid: Any, options: Options, named: dict[str, Any],
                buffers: Mapping[str, Buffer[Any]], key: tuple[Any, ...]) -> _Tuned:
        """The fastest config, timed here or read from the disk cache."""
        if len(configs) == 1:
            return _Tuned(configs[0])
        entry = self._disk_entry(key) if self.cache_results else None
        if entry is not None:
            cached = _read_winner(*entry, configs)
            if cached is not None:
                return cached
        self._precompile(configs, grid, options, named, buffers)
        saved = {name: _snapshot(buffers[name]) for name in self.restore_value}
        timings: dict[str, float] = {}
        for config in progress(configs, f"autotuning {self.kernel.name}", str):
            timings[str(config)] = self._bench(config, grid, options, named, buffers, saved)
        best = min(configs, key=lambda c: timings[str(c)])  # every config infinite: the first, whose launch
        if entry is not None and timings[str(best)] < float("inf"):  # then raises its error, as in Triton
            _write_winner(*entry, best, timings)
        return _Tuned(best, timings)

    def _precompile(self, configs: list[Config], grid: Any, options: Options, named: dict[str, Any],
                    buffers: Mapping[str, Buffer[Any]]) -> None:
        """Compile every config's kernel before any is timed, where the backend compiles several
        together (the CUDA backend: NVRTC side by side, 36 configs in about the time of a few).
        A config whose launch does not check is left to its timed run, which skips or reports it."""
        backend = registry.current()
        if not isinstance(backend, registry.Precompiler):
            return
        launches = []
        for config in configs:
            try:
                launch = _prepare(self.inner, grid, config.options(options.stream), {**named, **config.kwargs})
            except (KernelError, LaunchError):
                continue
            if launch is not None:
                launches.append(launch)
        with _on_buffers_device(buffers):
            backend.precompile(launches)

    def _bench(self, config: Config, grid: Any, options: Options, named: dict[str, Any],
               buffers: Mapping[str, Buffer[Any]], saved: Mapping[str, Any]) -> float:
        """Milliseconds per launch of ``config``; infinite if it does not fit (:func:`misfits`)."""
        try:
            with _on_buffers_device(buffers):  # CUDA events time the stream of the current device
                return float(testing.do_bench(lambda: self._run(config, grid, options, named, buffers),
                                              warmup=self.warmup, rep=self.rep))
        except (KernelError, LaunchError) as exc:
            if misfits(exc):
                return float("inf")
            raise  # a bug in the kernel or the launch, not a config that does not fit
        except CompilerBug:
            raise  # a bug in the compiler, not a config that does not fit
        except Exception:
            return float("inf")
        finally:
            for name, values in saved.items():
                _native(buffers[name])[...] = values

    def _check_agreement(self, configs: list[Config], grid: Any, options: Options, named: dict[str, Any],
                         buffers: Mapping[str, Buffer[Any]]) -> _Tuned:
        """Run every config from the same inputs; each must give the results of the first that
        fits, which the buffers hold afterwards and which is the choice (when none fits, the first
        config's error)."""
        inputs = {name: _snapshot(b) for name, b in buffers.items()}
        first: dict[str, Any] = {}
        chosen: Config | None = None
        misfit: KernelError | LaunchError | None = None  # the first config's that did not fit
        for config in progress(configs, f"autotuning {self.kernel.name} (checking configs agree)", str):
            for name, values in inputs.items():
                _native(buffers[name])[...] = values
            error = self._misfit(config, grid, options, named, buffers)
            if error is not None:
                misfit = misfit or error
                continue
            results = {name: testing.to_numpy(b) for name, b in buffers.items()}
            if chosen is None:
                first, chosen = results, config
                if os.environ.get(CHECK_ENV_VAR) == "0":
                    break
                continue
            for name, result in results.items():
                rtol, atol = testing.default_tolerance(result)
                report = testing.mismatch(result, first[name], rtol * AGREEMENT_SLACK, atol * AGREEMENT_SLACK)
                if report is not None:
                    raise self.error(f"autotune config {{{config}}} disagrees with config {{{chosen}}} "
                                     f"on {name!r}:\n{report}")
        if chosen is None:  # no config fits: the first one's error, as in Triton
            assert misfit is not None
            raise misfit
        for name, values in first.items():
            _native(buffers[name])[...] = values
        return _Tuned(chosen)

    def _misfit(self, config: Config, grid: Any, options: Options, named: dict[str, Any],
                buffers: Mapping[str, Buffer[Any]]) -> KernelError | LaunchError | None:
        """Run ``config``: None if it ran, its error if it does not fit (:func:`misfits`); any
        other error is raised, a KernelError naming the config."""
        try:
            self._run(config, grid, options, named, buffers)
        except KernelError as exc:
            error = KernelError(f"autotune config {{{config}}}: {exc.message}", exc.filename, exc.lineno,
                                exc.col, exc.kernel)
            if misfits(exc):
                return error
            raise error from exc
        except LaunchError as exc:
            if misfits(exc):
                return exc
            raise
        return None

    def _pruned(self, named: dict[str, Any]) -> list[Config]:
        configs = list(self.configs)
        if "early_config_prune" in self.prune:
            configs = list(self.prune["early_config_prune"](configs, dict(named)))
        if "perf_model" in self.prune and len(configs) > 1:
            model = self.prune["perf_model"]
            top = self.prune.get("top_k", len(configs))
            count = int(top * len(configs)) if isinstance(top, float) else int(top)
            estimate = {id(c): model(**named, **c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
                        for c in configs}
            configs = sorted(configs, key=lambda c: estimate[id(c)])[:max(1, count)]
        if not configs:
            raise LaunchError(f"autotune of kernel {self.kernel.name}: prune_configs_by left no config")
        return configs

    def _disk_entry(self, key: tuple[Any, ...]) -> tuple[DiskCache, str]:
        """The cache directory (with its checks and fault handling) and this key's name, which
        holds the versions of tile_lang and of the backend that generated the timed code."""
        package = type(registry.get(key[0])).__module__.partition(".")[0]
        parts = [self.kernel.name, _source(self.inner), repr(key), repr(self.key), *map(str, self.configs),
                 _device(key[0]), code_version(package)]
        return open_cache(), f"autotune-{self.kernel.name}-{digest(*parts)}.json"


class AutotuneDecorator:
    """What ``tl.autotune(...)`` returns; a class so that the mypy plugin types its application
    (the constexprs the configs set need no default in the kernel's signature)."""

    def __init__(self, make: Callable[[Kernel[Any] | Wrapper[Any]], Autotuner[Any]]) -> None:
        self.make = make

    def __call__(self, inner: Kernel[P] | Wrapper[P]) -> Autotuner[P]:
        return self.make(inner)


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: PruneConfigs | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             warmup: float = 25, rep: float = 100, cache_results: bool = True) -> AutotuneDecorator:
    """Choose each launch's constexprs and options among ``configs``, once per value of the
    ``key`` arguments (pointers contribute their dtype) and of every argument's dtype, as Triton's
    key. ``reset_to_zero`` buffers are zeroed before every run (accumulators the caller zeroed); ``restore_value`` buffers are restored
    after each timed run (data updated in place). ``warmup``/``rep`` are ``do_bench``'s budgets."""
    return AutotuneDecorator(lambda inner: Autotuner(inner, configs, key, prune_configs_by, reset_to_zero or (),
                                                     restore_value or (), warmup, rep, cache_results))


STATIC_ASSERT = "static_assert failed"
"""How the message of a failed ``tl.static_assert`` begins (on both backends)."""


def misfits(error: KernelError | LaunchError) -> bool:
    """Whether a config's error means it does not fit (skipped, as Triton's autotuner skips it)
    rather than a bug: more resources than the device has, or a failed ``tl.static_assert``."""
    if isinstance(error, OutOfResources):
        return True
    return isinstance(error, KernelError) and error.message.startswith(STATIC_ASSERT)


def _buffers(kernel: Kernel[Any], named: Mapping[str, Any], backend: registry.Backend) -> dict[str, Buffer[Any]]:
    """The pointer arguments as buffers (native arrays adopted); the launch itself checks them."""
    found = {}
    for param in kernel.runtime_params:
        value = named.get(param.name)
        if param.kind is ParamKind.POINTER and value is not None:
            buffer = value if isinstance(value, Buffer) else backend.adopt(value)
            if buffer is None:
                raise LaunchError(f"kernel {kernel.name}, parameter {param.name}: expected a tile_lang Buffer or a "
                                  f"{backend.name} array, got {type(value).__name__}")
            found[param.name] = buffer
    return found


def _key_value(value: Any, buffer: Buffer[Any] | None) -> Any:
    return buffer.type.name if buffer is not None else value


def _dtypes(named: dict[str, Any]) -> tuple[str, ...]:
    """The element types of every argument that has one, which Triton's autotuner adds to the key:
    a kernel tuned on f16 buffers tunes again for fp8 ones (tutorial 03 runs both at one size)."""
    return tuple(v.type.name if isinstance(v, Buffer) else str(v.dtype) for v in named.values()
                 if isinstance(v, Buffer) or hasattr(v, "dtype"))


def _native(buffer: Buffer[Any]) -> Any:
    """The array object behind a buffer (NumPy, CuPy, or the owning torch tensor), which all
    support ``a[...] = values``."""
    return getattr(buffer.data, "owner", buffer.data)


def _snapshot(buffer: Buffer[Any]) -> Any:
    data = _native(buffer)
    return data.clone() if hasattr(data, "clone") else data.copy()


def _source(inner: Kernel[Any] | Wrapper[Any]) -> str:
    kernel = inner.kernel if isinstance(inner, Wrapper) else inner
    try:
        return inspect.getsource(kernel.fn)
    except OSError:
        return kernel.fn.__code__.co_code.hex()


def _on_buffers_device(buffers: Mapping[str, Buffer[Any]]) -> AbstractContextManager[object]:
    """The launch's device current while it is timed (its buffers' device, where the backend
    has several)."""
    for buffer in buffers.values():
        if isinstance(buffer.backend, MultiDeviceBackend):
            return buffer.backend.on_device(buffer.device)
    return nullcontext()


def _device(backend_name: str) -> str:
    """The device and library versions a timing holds for."""
    if backend_name != "cupy":
        return backend_name
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return (f"{props['name']!r} cc{props['major']}.{props['minor']} cupy {getattr(cupy, '__version__', '?')} "
            f"runtime {cupy.cuda.runtime.runtimeGetVersion()} driver {cupy.cuda.runtime.driverGetVersion()}")


def _read_winner(disk: DiskCache, name: str, configs: list[Config]) -> _Tuned | None:
    """The stored winner among ``configs``; None if there is none, or (a ``CacheWarning``, then a
    re-tune overwrites it) if the entry is malformed: a ``config`` string, ``timings`` mapping
    each config run to milliseconds (>= 0, infinite for one that could not launch), the winner's
    finite. A winner not among ``configs`` (pruned away for these arguments) is re-tuned too."""
    stored = disk.read_json(name)
    if stored is None:
        return None
    config, timings = stored.get("config"), stored.get("timings")
    if not (isinstance(config, str) and isinstance(timings, dict) and _times(timings)
            and timings.get(config, float("inf")) < float("inf")):
        disk.corrupt(name, "not a 'config' string with its finite time among 'timings' of times >= 0")
        return None
    chosen = [c for c in configs if str(c) == config]
    return _Tuned(chosen[0], {k: float(t) for k, t in timings.items()}) if chosen else None


def _times(timings: dict[str, Any]) -> bool:
    """Whether every value is a time in milliseconds: a number >= 0 (not a bool, not NaN)."""
    return all(type(t) in (int, float) and t >= 0 for t in timings.values())


def _write_winner(disk: DiskCache, name: str, config: Config, timings: Mapping[str, float]) -> None:
    disk.write(name, json.dumps({"config": str(config), "timings": dict(timings)}, indent=1).encode())

