"""Triton's compiled-kernel handle: what ``fn[grid](...)`` and ``fn.warmup(..., grid=)`` return.

The handle is tile_lang's :class:`~tile_lang.compiler.inspect.Compiled` of the launch's
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
from collections.abc import Mapping
from typing import Any

import tile_lang.registry as registry
import tile_lang.as_triton.device as device
from tile_lang.as_triton.tools import launch_arguments
from tile_lang.buffer import Buffer
from tile_lang.compiler.inspect import Compiled, Metadata, compile_kernel
from tile_lang.kernel import Launcher

REFERENCE_REGS = 32
"""``n_regs`` on the NumPy reference: a stand-in, as nothing there is measured in registers."""

IGNORED_OPTIONS = frozenset({"extern_libs", "maxnreg", "enable_fp_fusion", "debug",
                             "launch_pdl", "launch_cooperative_grid", "waves_per_eu", "matrix_instr_nonkdim",
                             "kpack", "allow_flush_denorm"})
"""Triton launch keywords that tune its compiler or name its libraries (``extern_libs``: tile_lang's
libdevice is its own); accepted and dropped."""


def without_ignored(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k not in IGNORED_OPTIONS}


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
        """tile_lang's compiled specialisation of the launch this handle stands for."""
        launch = self._launcher.prepare(self._args, self._kwargs)
        pointees = {p.name: a.type for p, a in zip(launch.kernel.runtime_params, launch.args) if isinstance(a, Buffer)}
        facts = device.facts()
        return compile_kernel(launch.kernel, launch.constexprs, launch.options.num_warps, launch.options.num_stages,
                              10 * facts.major + facts.minor, pointees)

    @property
    def asm(self) -> Mapping[str, str]:
        return self.compiled.asm

    @property
    def n_regs(self) -> int:
        return REFERENCE_REGS if _on_reference() else self.compiled.n_regs

    @property
    def n_spills(self) -> int:
        return 0 if _on_reference() else self.compiled.n_spills

    @property
    def metadata(self) -> Metadata:
        c = self.compiled
        if not _on_reference():
            return c.metadata
        return Metadata(REFERENCE_REGS, 0, c.source.dynamic_shared, c.num_warps, 32 * c.num_warps, c.instructions)

    def _init_handles(self) -> None:
        """Triton loads the binary here; a tile_lang launch loads its own."""

    def __getitem__(self, grid: Any) -> TritonLauncher:
        given = {k: self._kwargs[k] for k in ("num_warps", "num_stages", "num_ctas") if k in self._kwargs}
        return TritonLauncher(self._launcher.kernel[grid, replace(self._launcher.options, **given)])


def _on_reference() -> bool:
    return registry.current_name() == "numpy"


class TritonLauncher:
    """``fn[grid]``: launches as tile_lang does, Triton's compiler-only keywords dropped, and
    returns the :class:`CompiledKernel` of the launch."""

    def __init__(self, launcher: Launcher[Any]) -> None:
        self.launcher = launcher

    def __call__(self, *args: Any, **kwargs: Any) -> CompiledKernel:
        __tracebackhide__ = True
        kernel = self.launcher.kernel
        args, kept = launch_arguments(kernel.name, [p.name for p in kernel.params], args, without_ignored(kwargs))
        self.launcher(*args, **kept)
        return CompiledKernel(self.launcher, args, kept)
