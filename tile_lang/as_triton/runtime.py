"""Triton's runtime objects as libraries subclass and drive them: ``triton.KernelInterface``,
``triton.runtime.Autotuner`` and ``triton.runtime.Heuristics``, with Triton's constructors and its
``run(*args, grid=, warmup=, **kwargs)`` protocol, each launch returning the compiled-kernel handle
of the launch (:class:`~tile_lang.as_triton.compiled.CompiledKernel`). Libraries such as FlagGems
wrap ``@triton.jit`` functions in their own ``KernelInterface`` (a dispatch cache that relaunches
the handle) and subclass ``Autotuner`` (their own choice of config over ``_bench``).

``@triton.autotune`` and ``@triton.heuristics`` make these objects; their own ``run`` launches
through tile_lang's autotuner and heuristics (:mod:`tile_lang.autotune`), so on the NumPy reference
every config still runs and must agree with the first that fits.
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tile_lang
import tile_lang.testing as testing
from tile_lang.as_triton.compiled import CompiledKernel, TritonLauncher, named_grid, without_ignored
from tile_lang.as_triton.errors import missing
from tile_lang.as_triton.tools import launch_arguments
from tile_lang.autotune import Autotuner as TlAutotuner
from tile_lang.autotune import Config, Heuristics as TlHeuristics, PruneConfigs, Wrapper, misfits
from tile_lang.errors import KernelError, LaunchError, UsageError
from tile_lang.kernel import Kernel
from tile_lang.signature import CONSTEXPR

Launchable = Kernel[Any] | Wrapper[Any]


class KernelInterface:
    """``triton.KernelInterface``: ``obj[grid](*args, **kwargs)`` is ``obj.run(*args, grid=grid,
    warmup=False, **kwargs)``; ``obj.warmup(*args, grid=...)`` is ``run`` with ``warmup=True``."""

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        raise UsageError(f"{type(self).__name__} subclasses triton.KernelInterface without defining run()")

    def warmup(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return functools.partial(self.run, grid=grid, warmup=False)

    @property
    def native(self) -> bool:
        """Whether tile_lang's own autotuner and heuristics can launch this (:func:`native`)."""
        return False

    @property
    def launchable(self) -> Launchable:
        """What tile_lang launches for this object (a subclass of a library's own has none)."""
        missing(f"{type(self).__name__} inside triton.autotune/heuristics",
                "only @triton.jit functions and triton's own autotune/heuristics objects nest there")


def launchable(fn: Any) -> Launchable:
    """The tile_lang kernel or wrapper behind ``fn`` (a ``tl.Kernel`` for a closure ``@triton.jit``)."""
    return fn if isinstance(fn, (Kernel, Wrapper)) else fn.launchable


def native(fn: Any) -> bool:
    """Whether tile_lang's own autotuner and heuristics can launch ``fn``: a ``@triton.jit``
    function, or this module's Autotuner (without hooks or timer) or Heuristics around one, not a
    library's subclass."""
    return isinstance(fn, (Kernel, Wrapper)) or isinstance(fn, KernelInterface) and fn.native


def arg_names_of(fn: Any) -> list[str]:
    if hasattr(fn, "arg_names"):
        return list(fn.arg_names)
    inner = launchable(fn)
    kernel = inner if isinstance(inner, Kernel) else inner.kernel
    return [p.name for p in kernel.params]


def run_of(fn: Any, args: tuple[Any, ...], grid: Any, warmup: bool, kwargs: dict[str, Any]) -> Any:
    """``fn.run(*args, grid=grid, warmup=warmup, **kwargs)``, a closure kernel (a ``tl.Kernel``) included."""
    if not isinstance(fn, Kernel):
        return fn.run(*args, grid=grid, warmup=warmup, **kwargs)
    return handle(fn, args, grid, warmup, kwargs)


def handle(kernel: Kernel[Any], args: tuple[Any, ...], grid: Any, warmup: bool, kwargs: dict[str, Any]) -> CompiledKernel:
    """Launch ``kernel`` unless ``warmup``; the launch's handle either way (compiled when first read)."""
    if not warmup:
        return TritonLauncher(kernel[grid])(*args, **kwargs)
    names = [p.name for p in kernel.params]
    args, kept = launch_arguments(kernel.name, names, args, without_ignored(kwargs, names))
    return CompiledKernel(kernel[grid], args, kept)


class KernelParam:
    """An entry of ``JITFunction.params``: Triton's ``num``, ``name``, ``is_constexpr``,
    ``do_not_specialize``, ``default`` (``inspect.Parameter.empty`` when none)."""

    def __init__(self, num: int, param: inspect.Parameter, is_constexpr: bool, do_not_specialize: bool) -> None:
        self.num, self.name, self.default = num, param.name, param.default
        self.is_constexpr, self.do_not_specialize = is_constexpr, do_not_specialize

    def __repr__(self) -> str:
        return f"KernelParam({self.num}, {self.name!r})"


def constexpr_annotated(param: inspect.Parameter) -> bool:
    """Whether ``param`` is annotated ``tl.constexpr`` (or ``tl.Constexpr[T]``, or a string naming one)."""
    annotation = param.annotation
    if isinstance(annotation, str):
        return "constexpr" in annotation
    if typing.get_origin(annotation) is typing.Annotated:
        return CONSTEXPR in typing.get_args(annotation)[1:]
    return annotation is tile_lang.constexpr


def _zero(x: Any) -> None:
    x[...] = 0


def _copy(x: Any) -> Any:
    return x.clone() if hasattr(x, "clone") else x.copy()


class Autotuner(KernelInterface):
    """``triton.runtime.Autotuner(fn, arg_names, configs, key, reset_to_zero, restore_value, ...)``:
    Triton's attributes (``configs``, ``keys``, ``cache``, ``nargs``, ``best_config``, ``fn``,
    ``base_fn``, ``pre_hook``, ``post_hook``, ``do_bench``) and methods (``prune_configs``,
    ``_bench``) for a subclass's own ``run``; its own ``run`` is tile_lang's autotuner's launch."""

    def __init__(self, fn: Any, arg_names: Sequence[str], configs: Sequence[Config], key: Sequence[str],
                 reset_to_zero: Sequence[str] | None, restore_value: Sequence[str] | None,
                 pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
                 prune_configs_by: PruneConfigs | None = None, warmup: float | None = None, rep: float | None = None,
                 use_cuda_graph: bool = False, do_bench: Callable[..., Any] | None = None,
                 cache_results: bool = False) -> None:
        if use_cuda_graph:
            missing("triton.autotune(use_cuda_graph=True)", "tile_lang does not launch through CUDA graphs")
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn):
            self.base_fn = self.base_fn.fn
        self.arg_names = list(arg_names)
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.cache: dict[tuple[Any, ...], Config] = {}
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.prune = prune_configs_by or PruneConfigs()
        self.perf_model = self.prune.get("perf_model")
        self.configs_top_k = self.prune.get("top_k", 1.0)
        self.early_config_prune = self.prune.get("early_config_prune")
        self.user_defined_pre_hook, self.user_defined_post_hook = pre_hook is not None, post_hook is not None
        self.user_defined_hooks = pre_hook is not None or post_hook is not None
        self.pre_hook: Callable[..., Any] = pre_hook or self._reset_and_save
        self.post_hook: Callable[..., Any] = post_hook or self._restore
        self.num_warmups, self.num_reps, self.cache_results = warmup, rep, cache_results
        self._do_bench = do_bench
        self.nargs: dict[str, Any] | None = None
        self.best_config: Config | None = None
        self.restore_copies: dict[str, Any] = {}

    def _reset_and_save(self, nargs: dict[str, Any], reset_only: bool = False) -> None:
        """Triton's default pre-hook: zero ``reset_to_zero``, keep copies of ``restore_value``."""
        for name in self.reset_to_zero:
            _zero(nargs[name])
        if not reset_only:
            self.restore_copies = {name: _copy(nargs[name]) for name in self.restore_value}

    def _restore(self, nargs: dict[str, Any], exception: BaseException | None) -> None:
        """Triton's default post-hook: put back what ``_reset_and_save`` kept."""
        for name, saved in self.restore_copies.items():
            nargs[name][...] = saved
        self.restore_copies = {}

    @functools.cached_property
    def do_bench(self) -> Callable[..., Any]:
        if self._do_bench is not None:
            return self._do_bench
        warmup, rep = self.num_warmups or 25, self.num_reps or 100
        return lambda fn, quantiles=None: testing.do_bench(fn, warmup=warmup, rep=rep, quantiles=quantiles)

    def prune_configs(self, kwargs: Mapping[str, Any]) -> list[Config]:
        """The configs left by ``early_config_prune(configs, nargs, **kwargs)`` and, given a
        ``perf_model``, the ``top_k`` best estimates among them (``top_k`` a count or a fraction)."""
        nargs = self.nargs or {}
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise LaunchError(f"autotune of {self.base_fn.__name__}: early_config_prune left no config")
        if self.perf_model is not None:
            top = self.configs_top_k
            count = int(len(self.configs) * top) if isinstance(top, float) else top
            if len(configs) > count:
                model = self.perf_model
                estimate = {id(c): model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=lambda c: estimate[id(c)])[:count]
        return configs

    def _bench(self, *args: Any, config: Config, **meta: Any) -> list[float]:
        """Times of ``config``'s launches (median, 20th and 80th percentiles, ms) by ``do_bench``,
        the hooks around each; infinite for a config that does not fit (out of resources, a failed
        ``tl.static_assert``)."""
        clash = sorted(meta.keys() & config.kwargs.keys())
        if clash:
            raise UsageError(f"autotune of {self.base_fn.__name__}: {', '.join(clash)} set by the configs; "
                             "do not pass them")
        current = {**meta, **config.all_kwargs()}
        nargs = {**(self.nargs or {}), **current}
        grid, warmup = current.pop("grid"), current.pop("warmup", False)

        def call() -> None:
            if config.pre_hook is not None:
                config.pre_hook(nargs)
            self.pre_hook(nargs)
            try:
                run_of(self.fn, args, grid, warmup, current)
            except Exception as exc:
                self.post_hook(nargs, exception=exc)
                raise
            self.post_hook(nargs, exception=None)

        try:
            return list(self.do_bench(call, quantiles=(0.5, 0.2, 0.8)))
        except (KernelError, LaunchError) as exc:
            if misfits(exc):
                return [math.inf] * 3
            raise

    @property
    def native(self) -> bool:
        return type(self) is Autotuner and not self.user_defined_hooks and self._do_bench is None and native(self.fn)

    @functools.cached_property
    def launchable(self) -> TlAutotuner[Any]:
        """tile_lang's autotuner over the wrapped function (a key naming no parameter ignored, as in Triton)."""
        if self.user_defined_hooks or self._do_bench is not None:
            missing("triton.autotune(pre_hook=/post_hook=/do_bench=...)",
                    "tile_lang's autotuner has no hooks or custom timers")
        inner = launchable(self.fn)
        names = set(arg_names_of(self.fn))
        return TlAutotuner(inner, self.configs, [k for k in self.keys if k in names], self.prune,
                           self.reset_to_zero, self.restore_value, self.num_warmups or 25, self.num_reps or 100,
                           self.cache_results)

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        """Launch through tile_lang's autotuner (unless ``warmup``), the choice kept in ``cache`` under
        Triton's key (the key's values, then the dtypes of the arguments); the handle of the chosen config."""
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        key = tuple(named[k] for k in self.keys if k in named)
        key += tuple(str(v.dtype) for v in named.values() if hasattr(v, "dtype"))
        if not self.native:  # hooks, a timer or a library's launcher inside: Triton's way, each config timed
            return self._run_timed(args, grid, warmup, kwargs, key)
        tuner = self.launchable
        if not warmup:
            tuner[named_grid(grid, named)](*args, **kwargs)
        self.best_config = self.cache[key] = tuner.best_config or self.configs[0]
        return run_of(self.fn, args, grid, True, {**kwargs, **self.best_config.all_kwargs()})


    def _run_timed(self, args: tuple[Any, ...], grid: Any, warmup: bool, kwargs: dict[str, Any],
                   key: tuple[Any, ...]) -> Any:
        """Triton's autotuning around a launcher tile_lang's autotuner cannot drive: the fastest
        config by :meth:`_bench`, kept in ``cache`` under ``key``."""
        self.nargs = dict(zip(self.arg_names, args))
        if key not in self.cache:
            configs = self.prune_configs(kwargs)
            times = [self._bench(*args, config=c, grid=grid, **kwargs) for c in configs] if len(configs) > 1 else [[0.0]]
            self.cache[key] = configs[min(range(len(configs)), key=lambda i: times[i])]
            self.pre_hook({**self.nargs, **kwargs, **self.cache[key].all_kwargs()}, reset_only=True)
        self.best_config = config = self.cache[key]
        nargs = {**self.nargs, **kwargs, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook(nargs)
        self.nargs = None
        return run_of(self.fn, args, grid, warmup, {**kwargs, **config.all_kwargs()})


class Heuristics(KernelInterface):
    """``triton.runtime.Heuristics(fn, arg_names, values)``: each value's function of the named
    arguments (and those set before it) sets that constexpr, then ``fn.run`` launches."""

    def __init__(self, fn: Any, arg_names: Sequence[str], values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> None:
        self.fn, self.arg_names, self.values = fn, list(arg_names), dict(values)

    @property
    def native(self) -> bool:
        return type(self) is Heuristics and native(self.fn)

    @functools.cached_property
    def launchable(self) -> TlHeuristics[Any]:
        return TlHeuristics(launchable(self.fn), self.values)

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        for name, rule in self.values.items():
            kwargs[name] = rule({**dict(zip(self.arg_names, args)), **kwargs})
        return run_of(self.fn, args, grid, warmup, kwargs)
