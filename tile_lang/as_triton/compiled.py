"""Triton's compiled-kernel handle: what ``fn[grid](...)`` and ``fn.warmup(..., grid=)`` return.

The handle is tile_lang's :class:`~tile_lang.compiled.Compiled` of the launch's
specialisation (the generated CUDA for the current device's target, sm_80 on the NumPy
reference), made when an attribute is first read, so a launch costs nothing more. On the CUDA
backend ``n_regs``, ``n_spills`` and ``metadata.shared`` are ptxas's figures; on the NumPy
reference, which has no registers, ``n_regs`` is :data:`REFERENCE_REGS` and ``n_spills`` 0, and
``metadata.shared`` is the shared memory of the generated CUDA (no toolkit needed), so
occupancy arithmetic such as tutorial 02's comes out as for a light kernel on an A100.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from collections.abc import Collection, Hashable, Mapping
from typing import Any

import tile_lang.registry as registry
import tile_lang.as_triton.device as device
from tile_lang.as_triton.tools import launch_arguments
from tile_lang.buffer import Buffer
from tile_lang.compiled import Compiled, Metadata
from tile_lang.compiler.inspect import compile_kernel
from tile_lang.kernel import Launcher
from tile_lang.launch_cache import LaunchCache

_HANDLES: dict[Hashable, Compiled] = {}  # by fast-path key: what repeated warmups of a specialisation share

REFERENCE_REGS = 32
"""``n_regs`` on the NumPy reference: a stand-in, as nothing there is measured in registers."""

IGNORED_OPTIONS = frozenset({"extern_libs", "maxnreg", "enable_fp_fusion", "debug",
                             "launch_pdl", "launch_cooperative_grid", "waves_per_eu", "matrix_instr_nonkdim",
                             "kpack", "allow_flush_denorm"})
"""Triton launch keywords that tune its compiler or name its libraries (``extern_libs``: tile_lang's
libdevice is its own); accepted and dropped."""


def without_ignored(kwargs: Mapping[str, Any], params: Collection[str] = ()) -> dict[str, Any]:
    """``kwargs`` less the ignored launch keywords, but for those naming one of the kernel's
    ``params``: Triton binds such a keyword to the parameter and reads it as the option too
    (vLLM's LoRA kernels take ``launch_pdl: tl.constexpr`` and launch with ``launch_pdl=``)."""
    return {k: v for k, v in kwargs.items() if k not in IGNORED_OPTIONS or k in params}


class CompiledKernel:
    """``fn[grid](...)``'s and ``fn.warmup(...)``'s result: ``name``, ``asm``, ``n_regs``,
    ``n_spills``, ``metadata`` (``.shared``, ``.num_warps``...), ``_init_handles()``, and
    ``handle[grid](*args)`` to launch it again with the options it was made with."""

    def __init__(self, launcher: Launcher[Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        self._launcher = launcher
        self._args = args
        self._kwargs = dict(kwargs)
        self.name = launcher.kernel.name

    @functools.cached_property
    def compiled(self) -> Compiled:
        """tile_lang's compiled specialisation of the launch this handle stands for; a repeat of
        a launch seen before finds it by the fast path's key (:mod:`tile_lang.launch_cache`)
        without the launch's checks, as cheaply as Triton's cache (tutorial 02 warms up before
        every launch it times)."""
        key = self._fast_key()
        found = _HANDLES.get(key) if key is not None else None
        if found is None:
            found = self._checked_compile()
            if key is not None:
                if len(_HANDLES) >= 1024:
                    _HANDLES.clear()
                _HANDLES[key] = found
        return found

    def _fast_key(self) -> Hashable | None:
        """What tells this handle's specialisation apart on a backend with a fast path (the
        key its launch cache files it under), or None."""
        launcher, backend = self._launcher, registry.current()
        kernel = launcher.kernel.specialised(self._args, self._kwargs) if launcher.kernel.specialising else launcher.kernel
        cache = kernel.launch_cache(backend)
        found = cache.find(launcher.options, self._args, self._kwargs) if isinstance(cache, LaunchCache) else None
        return None if found is None else (kernel, len(self._args), tuple(self._kwargs), found[3], device.facts())

    def _checked_compile(self) -> Compiled:
        launch = self._launcher.prepare(self._args, self._kwargs)
        pointees = {p.name: a.type for p, a in zip(launch.kernel.runtime_params, launch.args) if isinstance(a, Buffer)}
        facts = device.facts()
        spec = (launch.options.num_warps, launch.options.num_stages, 10 * facts.major + facts.minor)
        try:
            return _compiled(launch.kernel, tuple(sorted(launch.constexprs.items())), *spec,
                             tuple(sorted(pointees.items())))
        except TypeError:  # an unhashable constexpr: compiled for this handle alone
            return compile_kernel(launch.kernel, launch.constexprs, *spec, pointees)

    @property
    def asm(self) -> Mapping[str, str]:
        return self.compiled.asm

    @property
    def n_regs(self) -> int:
        return REFERENCE_REGS if _on_host() else self.compiled.n_regs

    @property
    def n_spills(self) -> int:
        return 0 if _on_host() else self.compiled.n_spills

    @property
    def metadata(self) -> Metadata:
        c = self.compiled
        if not _on_host():
            return c.metadata
        return Metadata(REFERENCE_REGS, 0, c.source.dynamic_shared, c.num_warps, 32 * c.num_warps, c.instructions)

    def _init_handles(self) -> None:
        """Triton loads the binary here; a tile_lang launch loads its own."""

    def __getitem__(self, grid: Any) -> TritonLauncher:
        given = {k: self._kwargs[k] for k in ("num_warps", "num_stages", "num_ctas") if k in self._kwargs}
        return TritonLauncher(self._launcher.kernel[grid, replace(self._launcher.options, **given)])


@functools.lru_cache(maxsize=256)
def _compiled(kernel: Any, constexprs: tuple[tuple[str, Any], ...], num_warps: int, num_stages: int, arch: int,
              pointees: tuple[tuple[str, Any], ...]) -> Compiled:
    """One specialisation compiled once in a process, its toolkit outputs (``n_regs``...) with it, as
    Triton's cache does: tutorial 02 calls ``warmup`` and reads ``n_regs`` before every launch."""
    return compile_kernel(kernel, dict(constexprs), num_warps, num_stages, arch, dict(pointees))


def _on_host() -> bool:
    """On a host backend (the reference, the CPU emulator) no toolkit counts registers: stand-ins."""
    return registry.current_is_host()


def named_grid(grid: Any, named: Mapping[str, Any]) -> Any:
    """``grid``, a function of it called with every argument by name as Triton calls it (``meta["M"]``
    of a runtime ``M`` included), where tile_lang's launch gives it the constexprs alone."""
    return (lambda meta: grid({**named, **meta})) if callable(grid) else grid


class TritonLauncher:
    """``fn[grid]``: launches as tile_lang does, Triton's compiler-only keywords dropped, and
    returns the :class:`CompiledKernel` of the launch."""

    def __init__(self, launcher: Launcher[Any]) -> None:
        self.launcher = launcher

    def __call__(self, *args: Any, **kwargs: Any) -> CompiledKernel:
        __tracebackhide__ = True
        kernel = self.launcher.kernel
        names = [p.name for p in kernel.params]
        args, kept = launch_arguments(kernel.name, names, args, without_ignored(kwargs, names))
        launcher = self.launcher
        if callable(launcher.grid):
            launcher = kernel[named_grid(launcher.grid, {**dict(zip(names, args)), **kept}), launcher.options]
        launcher(*args, **kept)
        return CompiledKernel(launcher, args, kept)
