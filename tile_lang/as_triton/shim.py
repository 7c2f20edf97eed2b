"""The names of Triton's host API, mapped onto tile_lang's own objects.

``triton.jit`` makes a :class:`JITFunction`: a ``tl.Func`` (so a kernel may call it, as Triton's
kernels call other ``@triton.jit`` functions) that is also launched as a kernel,
``fn[grid](...)``, through the ``tl.Kernel`` of the same function. ``autotune``/``heuristics``
are tile_lang's, given that kernel. Names with no counterpart are a :class:`TritonNameError`.
"""

from __future__ import annotations

import functools
import hashlib
import linecache
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn


import tile_lang.dtypes as dtypes
import tile_lang.registry as registry
from tile_lang.errors import UsageError
from tile_lang.signature import constexpr_function
import tile_lang.as_triton.device as device
import tile_lang.as_triton.proton as proton
from tile_lang.as_triton.compiled import CompiledKernel, TritonLauncher, without_ignored
from tile_lang.as_triton.errors import DOCS, TritonNameError, missing
from tile_lang.autotune import Autotuner, Heuristics, PruneConfigs, Wrapper
from tile_lang.autotune import Config as TlConfig
from tile_lang.autotune import autotune as tl_autotune
from tile_lang.autotune import heuristics as tl_heuristics
from tile_lang.func import Func, refuse_captures
from tile_lang.kernel import Kernel
from tile_lang.reads import source_of

__all__ = ["DOCS", "TritonNameError", "missing"]

class JITFunction(Func[..., Any]):
    """``@triton.jit``: a device function kernels call, launched as a kernel by ``fn[grid](...)``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        """Made on a closure too (Triton's tests wrap a closure kernel in ``triton.JITFunction`` and
        replace its text, :meth:`_unsafe_update_src`); called from a kernel it must not capture."""
        self._wrap(fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        refuse_captures(self.fn)
        return self.fn(*args, **kwargs)

    @functools.cached_property
    def kernel(self) -> Kernel[...]:
        """The kernel of this function, made at its first launch (device functions never need one)."""
        return Kernel(self.fn)

    def __getitem__(self, grid: Any) -> TritonLauncher:
        return TritonLauncher(self.kernel[grid])

    def warmup(self, *args: Any, grid: Any, **kwargs: Any) -> CompiledKernel:
        """Triton's compile-without-launching: the handle of a launch with these arguments
        (compiled now, so an error shows here), launched later by ``handle[grid](...)``."""
        handle = CompiledKernel(self.kernel[grid], args, without_ignored(kwargs))
        handle.compiled  # noqa: B018 (compiling is the point)
        return handle

    @property
    def src(self) -> str:
        """The function's source from its ``def`` (Triton's attribute: decorators left out)."""
        text = textwrap.dedent(source_of(self.fn)[0])
        start = re.search(r"^def ", text, re.MULTILINE)
        return text[start.start():] if start else text

    def _unsafe_update_src(self, src: str) -> None:
        """Triton's way to patch a kernel's text (its tests' ``patch_kernel``): the function
        becomes ``src``, run in the function's module, its text kept in ``linecache`` so the
        compiler and the reference read it; the next launch makes a new kernel."""
        name = f"<patched {self.__qualname__} {hashlib.sha256(src.encode()).hexdigest()[:12]}>"
        linecache.cache[name] = (len(src), None, src.splitlines(keepends=True), name)
        namespace: dict[str, Any] = {}
        exec(compile(src, name, "exec"), self.fn.__globals__, namespace)  # the caller's own text, as Triton runs it
        made = namespace[self.__name__]
        self.fn = made.fn if isinstance(made, Func) else made
        self.__dict__.pop("kernel", None)

    def __repr__(self) -> str:
        return f"<triton.jit {self.__qualname__} on tile_lang>"


Launchable = JITFunction | Kernel[Any] | Wrapper[Any]


@dataclass(frozen=True)
class Config(TlConfig):
    """``triton.Config(kwargs, num_warps=, num_stages=, num_ctas=, maxnreg=, pre_hook=)``: tile_lang's
    Config (which runs ``pre_hook(nargs)`` before each launch of the config); ``maxnreg`` (a
    register cap) is accepted and ignored."""

    maxnreg: int | None = None


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@triton.jit`` or ``@triton.jit(do_not_specialize=..., debug=..., ...)``: the options tune
    Triton's compilation and are accepted and ignored (a tile_lang launch specialises ints by
    their width and the ``== 1``/``% 16`` facts, which changes no result), but for ``launch_metadata``,
    which names and measures each launch for proton (:mod:`tile_lang.as_triton.proton`)."""
    metadata = options.get("launch_metadata")
    if fn is None:
        return lambda f: _jit(f, metadata)
    return _jit(fn, metadata)


def _jit(fn: Callable[..., Any], launch_metadata: proton.Metadata | None = None) -> JITFunction | Kernel[Any]:
    if launch_metadata is not None:  # what proton's hook names and measures each launch with
        proton.LAUNCH_METADATA[fn] = launch_metadata
    # a function capturing local variables cannot be a tl.Func; it can still be launched
    return Kernel(fn) if fn.__code__.co_freevars else JITFunction(fn)


def _launchable(obj: Launchable) -> Kernel[Any] | Wrapper[Any]:
    return obj.kernel if isinstance(obj, JITFunction) else obj


def _kernel_of(obj: Launchable) -> Kernel[Any]:
    inner = _launchable(obj)
    return inner if isinstance(inner, Kernel) else inner.kernel


def autotune(configs: Sequence[Any], key: Sequence[str], prune_configs_by: PruneConfigs | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
             warmup: float = 25, rep: float = 100, use_cuda_graph: bool = False,
             do_bench: Callable[..., Any] | None = None,
             cache_results: bool = False) -> Callable[[Launchable], Autotuner[Any]]:
    """``@triton.autotune``: tile_lang's autotuner (on the NumPy reference every config runs and
    must agree with the first that fits, which is used; on CUDA the fastest is timed and cached; a
    config that fails a ``tl.static_assert`` or runs out of resources is skipped). A ``key``
    naming no parameter of the kernel is ignored, as Triton ignores it."""
    for name, value in (("pre_hook", pre_hook), ("post_hook", post_hook), ("do_bench", do_bench)):
        if value is not None:
            missing(f"triton.autotune({name}=...)", "tile_lang's autotuner has no hooks or custom timers")
    if use_cuda_graph:
        missing("triton.autotune(use_cuda_graph=True)", "tile_lang does not launch through CUDA graphs")

    def decorate(fn: Launchable) -> Autotuner[Any]:
        names = {p.name for p in _kernel_of(fn).params}
        return tl_autotune(configs, [k for k in key if k in names], prune_configs_by, reset_to_zero, restore_value,
                           warmup, rep, cache_results)(_launchable(fn))

    return decorate


def heuristics(values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Launchable], Heuristics[Any]]:
    """``@triton.heuristics({"NAME": lambda args: ...})``: tile_lang's heuristics."""
    decorate = tl_heuristics(values)
    return lambda fn: decorate(_launchable(fn))


@constexpr_function
def next_power_of_2(n: int) -> int:
    """The smallest power of two >= ``n`` (0 for 0, as in Triton); a kernel calls it at compile time."""
    if n < 0:
        raise UsageError(f"next_power_of_2 takes an int >= 0, got {n}")
    return 0 if n == 0 else 1 << (n - 1).bit_length()


_allocator: list[Callable[..., Any]] = []


def set_allocator(allocator: Callable[..., Any]) -> None:
    """Accepted and kept: Triton allocates global scratch (TMA descriptors) through it;
    tile_lang's launches need no scratch from the caller."""
    _allocator[:] = [allocator]


@dataclass(frozen=True)
class GPUTarget:
    """``driver.active.get_current_target()``: tile_lang's code is CUDA's, for the current GPU's
    compute capability (on the NumPy reference sm_80, the stand-in of :mod:`.device`)."""

    backend: str = "cuda"
    arch: int = 80
    warp_size: int = 32


class Utils:
    """``triton.runtime.driver.active.utils``: the device's properties under Triton's keys."""

    def get_device_properties(self, index: int | None = None) -> dict[str, int]:
        """Triton's keys (``multiprocessor_count``, ``max_num_regs``, ``max_shared_mem``,
        ``warpSize``, the clocks and bus width; ``max_threads_per_sm`` too)."""
        return device.facts(index).triton_properties()

    def __getattr__(self, name: str) -> NoReturn:
        missing(f"triton.runtime.driver.active.utils.{name}",
                "TMA descriptors are made in kernels on tile_lang (tl.make_tensor_descriptor)")


class ActiveDriver:
    """``triton.runtime.driver.active``: the few calls tutorials make to pick a device."""

    utils = Utils()

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        if device != 0:
            missing(f"triton.runtime.driver.active.set_current_device({device})",
                    "use tl.to_device(..., device=) or CuPy's current device")

    def get_current_stream(self, device: int | None = None) -> int:
        return 0  # the default stream

    def get_current_target(self) -> GPUTarget:
        facts = device.facts()
        return GPUTarget(arch=10 * facts.major + facts.minor, warp_size=facts.warp_size)

    def get_active_torch_device(self) -> Any:
        """Where torch tensors must live for the current backend: the CPU on the NumPy reference."""
        import torch

        return torch.device("cpu") if registry.current_name() == "numpy" else torch.device("cuda", 0)

    def get_device_interface(self) -> Any:
        import torch

        return torch.cuda

    def __getattr__(self, name: str) -> NoReturn:
        missing(f"triton.runtime.driver.active.{name}")


class Driver:
    """``triton.runtime.driver``."""

    active = ActiveDriver()

    def __getattr__(self, name: str) -> NoReturn:
        missing(f"triton.runtime.driver.{name}")


driver = Driver()


class Ptxas:
    """``triton.knobs.nvidia.ptxas``: the version of the ptxas on PATH ("13.0"; "0.0" without one),
    which Triton's test helpers read to decide whether TMA can be tested."""

    @property
    def version(self) -> str:
        tool = shutil.which("ptxas")
        if tool is None:
            return "0.0"
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
        found = re.search(r"release (\d+)\.(\d+)", done.stdout)
        return f"{found[1]}.{found[2]}" if found else "0.0"


class _DtypeCheck(type):
    def __instancecheck__(cls, obj: object) -> bool:
        try:
            dtypes.dtype_of(obj)
        except (TypeError, AttributeError):  # unhashable or not a dtype
            return False
        return True


class dtype(metaclass=_DtypeCheck):  # noqa: N801 (Triton's name)
    """``triton.language.dtype``: ``isinstance(x, tl.dtype)`` holds for tile_lang's dtypes
    (``tl.float32``...) and Triton's fp8 variants; ``tl.dtype("int8")`` is the dtype of that
    Triton name; the class lists Triton's names by kind (``tl.dtype.SINT_TYPES``...)."""

    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    def __new__(cls, name: str) -> Any:  # Triton's constructor: the dtype of that name
        return str_to_ty(name)


TRITON_NAMES: dict[str, Any] = {str(dtypes.triton_attributes(d)["name"]): dtypes.marker_of(d) for d in dtypes.ALL}
"""Each dtype by its Triton name (``"fp32"``, ``"int1"``, ``"bf16"``, ``"fp8e4b15"``...)."""

type_canonicalisation_dict = {d.numpy.name: str(dtypes.triton_attributes(d)["name"]) for d in dtypes.ALL if not d.coded}
"""``triton.runtime.jit.type_canonicalisation_dict``: a torch/NumPy dtype name to its Triton name."""


def str_to_ty(name: str, c: object = None) -> Any:
    """``tl.str_to_ty``: the dtype of a Triton type name (pointer types such as ``"*fp32"`` are not
    provided: tile_lang's pointer types come from parameters)."""
    if name not in TRITON_NAMES:
        missing(f"triton.language.str_to_ty({name!r})", f"the names are {', '.join(TRITON_NAMES)}")
    return TRITON_NAMES[name]
