"""The names of Triton's host API, mapped onto tile_lang's own objects.

``triton.jit`` makes a :class:`JITFunction`: a ``tl.Func`` (so a kernel may call it, as Triton's
kernels call other ``@triton.jit`` functions) that is also launched as a kernel,
``fn[grid](...)``, through the ``tl.Kernel`` of the same function. ``autotune``/``heuristics``
are tile_lang's, given that kernel. Names with no counterpart are a :class:`TritonNameError`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
import re
import shutil
import subprocess
import textwrap
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn


import tile_lang.dtypes as dtypes
import tile_lang.registry as registry
import tile_lang.tensor as tensor_module
import tile_lang.testing as testing
from tile_lang.errors import UsageError
from tile_lang.signature import constexpr_function
import tile_lang.as_triton.device as device
import tile_lang.as_triton.proton as proton
import tile_lang.as_triton.runtime as runtime
from tile_lang.as_triton.compiled import CompiledKernel, TritonLauncher, without_ignored
from tile_lang.as_triton.errors import DOCS, TritonNameError, missing
from tile_lang.autotune import PruneConfigs
from tile_lang.autotune import Config as TlConfig
from tile_lang.func import Func, refuse_captures
from tile_lang.kernel import Kernel
from tile_lang.reads import source_of

__all__ = ["DOCS", "TritonNameError", "missing"]

class JITFunction(Func[..., Any], runtime.KernelInterface):
    """``@triton.jit``: a device function kernels call, launched as a kernel by ``fn[grid](...)``
    or ``fn.run(*args, grid=, warmup=)``, with Triton's ``params``, ``arg_names``, ``signature``."""

    def __init__(self, fn: Callable[..., Any], do_not_specialize: Sequence[int | str] = ()) -> None:
        """Made on a closure too (Triton's tests wrap a closure kernel in ``triton.JITFunction`` and
        replace its text, :meth:`_unsafe_update_src`); called from a kernel it must not capture."""
        self._wrap(fn)
        self.do_not_specialize = tuple(do_not_specialize)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        refuse_captures(self.fn)
        return self.fn(*args, **kwargs)

    @functools.cached_property
    def kernel(self) -> Kernel[...]:
        """The kernel of this function, made at its first launch (device functions never need one);
        a ``tl.tensor`` annotation, a type hint Triton ignores, is left out (:func:`_without_tensor_hints`)."""
        return Kernel(_without_tensor_hints(self.fn))

    @property
    def native(self) -> bool:
        return True

    @property
    def launchable(self) -> Kernel[...]:
        return self.kernel

    def __getitem__(self, grid: Any) -> TritonLauncher:
        return TritonLauncher(self.kernel[grid])

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> CompiledKernel:
        """Triton's launch protocol: launch unless ``warmup``; the launch's handle either way
        (with ``warmup``, compiled when first read: :meth:`warmup` compiles at once)."""
        return runtime.handle(self.kernel, args, grid, warmup, kwargs)

    @property
    def __globals__(self) -> dict[str, Any]:
        """The function's module namespace (Triton's attribute; FlagGems' generated kernels copy it)."""
        return self.fn.__globals__

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fn)

    @property
    def arg_names(self) -> list[str]:
        return list(self.signature.parameters)

    @property
    def params(self) -> list[runtime.KernelParam]:
        """Triton's parameter records, read from the annotations as Triton reads them (no kernel is
        made: a FlagGems-style dispatcher reads them at its definition)."""
        return [runtime.KernelParam(i, p, runtime.constexpr_annotated(p), i in self.do_not_specialize
                                    or p.name in self.do_not_specialize)
                for i, p in enumerate(self.signature.parameters.values())]

    @property
    def cache_key(self) -> str:
        """A hash of the function's text (Triton's key of its compiled kernels)."""
        return hashlib.sha256(self.src.encode()).hexdigest()

    def warmup(self, *args: Any, grid: Any, **kwargs: Any) -> CompiledKernel:
        """Triton's compile-without-launching: the handle of a launch with these arguments
        (compiled now, so an error shows here), launched later by ``handle[grid](...)``."""
        handle = CompiledKernel(self.kernel[grid], args, without_ignored(kwargs, self.arg_names))
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


@dataclass(frozen=True)
class Config(TlConfig):
    """``triton.Config(kwargs, num_warps=, num_stages=, num_ctas=, maxnreg=, pre_hook=)``: tile_lang's
    Config (which runs ``pre_hook(nargs)`` before each launch of the config); ``maxnreg`` (a
    register cap) is accepted and ignored. Hashable, as Triton's are (libraries key timings by config)."""

    maxnreg: int | None = None

    def __hash__(self) -> int:
        return hash(str(self))


def _without_tensor_hints(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, or a copy of it (same code and globals) without the parameter annotations Triton
    reads as none: ``x: tl.tensor`` (FlagGems' generated pointwise kernels write it on every
    pointer; on the shim ``tl.tensor`` names tile_lang's tensor module), ``out_dtype: tl.dtype``
    (Unsloth's grouped GEMM: a dtype argument is a compile-time value, as Triton specialises it)
    and a union of plain Python types, ``stride: int | None = None`` (vLLM's optional strides,
    typed by the argument: None a compile-time None, an int an int)."""
    def ignored(hint: Any) -> bool:
        if isinstance(hint, str):
            try:
                hint = eval(hint, fn.__globals__)  # a postponed annotation, read as typing would
            except Exception:
                return False
        return hint is tensor_module or hint is dtype or _plain_union(hint) or _foreign_class(hint)

    hints = getattr(fn, "__annotations__", {})
    kept = {name: hint for name, hint in hints.items() if not ignored(hint)}
    if len(kept) == len(hints):
        return fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__annotations__ = fn.__kwdefaults__, kept
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return copy


def _foreign_class(hint: Any) -> bool:
    """Whether ``hint`` is a class neither Python's nor tile_lang's (``torch.Tensor``): Triton
    reads no meaning in it, so the parameter is typed by its argument."""
    return isinstance(hint, type) and hint.__module__.partition(".")[0] not in ("builtins", "tile_lang", "typing")


def _plain_union(hint: Any) -> bool:
    """Whether ``hint`` is a union of builtin types and None (``int | None``, ``Optional[float]``),
    a type name Triton does not know, so an annotation it ignores (tile_lang's own ``Pointer[D] |
    None`` is no such union)."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return False
    return all(member in (int, float, bool, type(None)) for member in typing.get_args(hint))


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@triton.jit`` or ``@triton.jit(do_not_specialize=..., debug=..., ...)``: the options tune
    Triton's compilation and are accepted and ignored (a tile_lang launch specialises ints by
    their width and the ``== 1``/``% 16`` facts, which changes no result; ``do_not_specialize`` is
    kept for ``params``), but for ``launch_metadata``, which names and measures each launch for
    proton (:mod:`tile_lang.as_triton.proton`)."""
    metadata = options.get("launch_metadata")
    keep = tuple(options.get("do_not_specialize") or ())
    if fn is None:
        return lambda f: _jit(f, metadata, keep)
    return _jit(fn, metadata, keep)


def _jit(fn: Callable[..., Any], launch_metadata: proton.Metadata | None = None,
         do_not_specialize: Sequence[int | str] = ()) -> JITFunction | Kernel[Any]:
    if launch_metadata is not None:  # what proton's hook names and measures each launch with
        proton.LAUNCH_METADATA[fn] = launch_metadata
    # a function capturing local variables cannot be a tl.Func; it can still be launched
    return Kernel(fn) if fn.__code__.co_freevars else JITFunction(fn, do_not_specialize)


def autotune(configs: Sequence[Any], key: Sequence[str], prune_configs_by: PruneConfigs | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
             warmup: float | None = None, rep: float | None = None, use_cuda_graph: bool = False,
             do_bench: Callable[..., Any] | None = None,
             cache_results: bool = False) -> Callable[[Any], runtime.Autotuner]:
    """``@triton.autotune``: a :class:`~tile_lang.as_triton.runtime.Autotuner` launching through
    tile_lang's autotuner (on the NumPy reference every config runs and must agree with the first
    that fits, which is used; on CUDA the fastest is timed and cached; a config that fails a
    ``tl.static_assert`` or runs out of resources is skipped). A ``key`` naming no parameter of
    the kernel is ignored, as Triton ignores it. With ``pre_hook``, ``post_hook`` or ``do_bench``
    each config is timed as Triton times it (:meth:`~tile_lang.as_triton.runtime.Autotuner._bench`,
    the hooks around each launch, ``do_bench(call, quantiles=...)`` the timer)."""
    def decorate(fn: Any) -> runtime.Autotuner:
        return runtime.Autotuner(fn, runtime.arg_names_of(fn), configs, key, reset_to_zero, restore_value,
                                 pre_hook=pre_hook, post_hook=post_hook, prune_configs_by=prune_configs_by,
                                 warmup=warmup, rep=rep, use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                                 cache_results=cache_results)

    return decorate


def heuristics(values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Any], runtime.Heuristics]:
    """``@triton.heuristics({"NAME": lambda args: ...})``: a :class:`~tile_lang.as_triton.runtime.Heuristics`."""
    def decorate(fn: Any) -> runtime.Heuristics:
        return runtime.Heuristics(fn, runtime.arg_names_of(fn), values)

    return decorate


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

        return torch.device("cpu") if registry.current_is_host() else torch.device("cuda", 0)

    def get_benchmarker(self) -> Callable[..., Any]:
        """Triton's default timer of autotune configs: ``tl.testing.do_bench``."""
        return testing.do_bench

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


@constexpr_function
def get_int_dtype(bitwidth: int, signed: bool) -> Any:
    """``tl.core.get_int_dtype(bitwidth, signed)``: the integer dtype of that width (``int1`` for 1)."""
    name = "int1" if bitwidth == 1 else f"{'' if signed else 'u'}int{bitwidth}"
    if name not in TRITON_NAMES:
        raise UsageError(f"get_int_dtype: no {'signed' if signed else 'unsigned'} integer dtype of {bitwidth} bits")
    return TRITON_NAMES[name]


@constexpr_function
def log2_floor(n: int) -> int:
    """``triton.language.standard._log2(n)``: the floor of the base-2 logarithm of a compile-time
    int, 0 below 2 (its bitonic sorts count their stages so; FlagGems' sort and topk import it)."""
    return max(int(n), 1).bit_length() - 1
