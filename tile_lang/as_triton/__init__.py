"""Run unmodified Triton code on tile_lang: after :func:`install`, ``import triton`` and
``import triton.language as tl`` give namespaces backed by tile_lang (``triton.language`` is
tile_lang's language, ``triton.testing`` is ``tl.testing``, ``triton.jit`` makes kernels), the
way ``TRITON_INTERPRET=1`` runs Triton code on Triton's interpreter. ``python -m
tile_lang.as_triton script.py`` (or ``-m pytest ...``) installs them and runs the target.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tile_lang
import tile_lang.as_triton.compiled as compiled
import tile_lang.as_triton.cublas as cublas
import tile_lang.as_triton.device as device
import tile_lang.as_triton.proton as proton
import tile_lang.as_triton.runtime as runtime
import tile_lang.as_triton.shim as shim
import tile_lang.as_triton.tools as tools
from tile_lang.as_triton.errors import unprovided_class
from tile_lang.as_triton.shim import TritonNameError, missing
from tile_lang.errors import TileLangError

__all__ = ["ENV_VAR", "TritonNameError", "install"]

ENV_VAR = "TILE_LANG_AS_TRITON"
"""Set to ``1`` by :func:`install`, so that new Python processes started from this one (pytest-xdist's
workers) install the shim too, through tile_lang's pytest plugin."""


class Namespace(types.ModuleType):
    """A ``triton.*`` module: its own names, then its submodules (imported when first named), then
    the names of the tile_lang module it stands for; anything else is a TritonNameError."""

    def __init__(self, name: str, names: Mapping[str, Any], base: types.ModuleType | None = None) -> None:
        super().__init__(name, f"tile_lang's stand-in for {name}" + (f" (names from {base.__name__})" if base else ""))
        self.__dict__.update(names)
        self.__path__: list[str] = []  # a package: submodules come from the finder below
        self._base = base

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # probes such as __file__ or __wrapped__
            raise AttributeError(attr)
        if f"{self.__name__}.{attr}" in _MODULES:
            return importlib.import_module(f"{self.__name__}.{attr}")
        if self._base is not None:
            try:
                return getattr(self._base, attr)
            except TileLangError:
                raise  # tile_lang's own word on a Triton name it knows of ("not supported yet")
            except AttributeError:
                pass
        missing(f"{self.__name__}.{attr}")


def _optional(name: str, instead: Callable[[], types.ModuleType] | None = None) -> types.ModuleType:
    """The tile_lang module ``name`` if this tile_lang has it, else ``instead()``."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name and not name.startswith(f"{exc.name}."):
            raise  # the module exists but fails to import
        if instead is None:
            raise ModuleNotFoundError(f"tile_lang's Triton shim maps this module onto {name}, which this tile_lang "
                                      f"does not have (see {shim.DOCS})", name=name) from None
        return instead()


TRITON_VERSION = "3.6.0"
"""The Triton release whose language and semantics tile_lang follows: the shim's ``triton.__version__``
(projects compare it to pick code paths, e.g. Liger-Kernel's ``compare_version("triton", ...)``)."""


def _top() -> types.ModuleType:
    return Namespace("triton", {
        "__version__": TRITON_VERSION,
        "jit": shim.jit, "autotune": shim.autotune, "heuristics": shim.heuristics, "Config": shim.Config,
        "cdiv": tile_lang.cdiv, "next_power_of_2": shim.next_power_of_2,
        "constexpr_function": tile_lang.constexpr_function, "set_allocator": shim.set_allocator,
        "CompilationError": tile_lang.KernelError, "OutOfResources": tile_lang.OutOfResources,
        "JITFunction": shim.JITFunction, "TritonError": TileLangError, "reinterpret": tools.reinterpret,
        "KernelInterface": runtime.KernelInterface,
    })


def _runtime() -> types.ModuleType:
    return Namespace("triton.runtime", {
        "driver": shim.driver, "Autotuner": runtime.Autotuner, "Heuristics": runtime.Heuristics,
        "KernelInterface": runtime.KernelInterface,
        "Config": shim.Config, "JITFunction": shim.JITFunction, "OutOfResources": tile_lang.OutOfResources,
    })


def _alias(name: str, base: Callable[[], types.ModuleType],
           names: Mapping[str, Any] | None = None) -> Callable[[], types.ModuleType]:
    """A maker of the ``triton`` module ``name`` holding ``names``, then the names of ``base()``
    (a Namespace of its own: the import system rewrites the ``__spec__`` of the module it is given)."""
    return lambda: Namespace(name, names or {}, base())


def _names(name: str, names: Mapping[str, Any]) -> Callable[[], types.ModuleType]:
    """A maker of the ``triton`` module ``name`` holding just ``names``."""
    return lambda: Namespace(name, names)


def _triton_key() -> str:
    """``triton.compiler.compiler.triton_key()``: a string naming the compiler, which torch's inductor
    reads (at import, for its cache keys) whenever ``import triton`` works."""
    return f"tile_lang-{TRITON_VERSION}"


def _libdevice() -> types.ModuleType:
    return _optional("tile_lang.extra.libdevice")


def _extra() -> types.ModuleType:
    return _optional("tile_lang.extra", lambda: types.ModuleType("tile_lang.extra"))


def _extra_cuda() -> types.ModuleType:
    return _optional("tile_lang.extra.cuda", _extra)


_MODULES: dict[str, Callable[[], types.ModuleType]] = {
    "triton": _top,
    "triton.language": _alias("triton.language", lambda: tile_lang, {"dtype": shim.dtype, "str_to_ty": shim.str_to_ty}),
    "triton.language.core": _alias("triton.language.core", lambda: tile_lang,
                                   {"dtype": shim.dtype, "str_to_ty": shim.str_to_ty, "get_int_dtype": shim.get_int_dtype,
                                    "CONSTEXPR_0": tile_lang.constexpr(0)}),
    "triton.language.standard": _alias("triton.language.standard", lambda: tile_lang, {"_log2": shim.log2_floor}),
    "triton.language.math": _alias("triton.language.math", lambda: _optional("tile_lang.math", lambda: tile_lang.math)),
    "triton.language.extra": _alias("triton.language.extra", _extra),
    "triton.language.extra.libdevice": _alias("triton.language.extra.libdevice", _libdevice),
    "triton.language.extra.cuda": _alias("triton.language.extra.cuda", _extra_cuda),
    "triton.language.extra.cuda.libdevice": _alias("triton.language.extra.cuda.libdevice", _libdevice),
    "triton.testing": _alias("triton.testing", lambda: tile_lang.testing),
    "triton.runtime": _runtime,
    # a module holding `driver` (Triton's `from triton.runtime.driver import driver`); importing it makes it
    # `triton.runtime.driver`, so it answers `.active` as the driver does
    "triton.runtime.driver": _names("triton.runtime.driver", {"driver": shim.driver, "active": shim.driver.active}),
    "triton.runtime.autotuner": _names("triton.runtime.autotuner", {
        "Autotuner": runtime.Autotuner, "Heuristics": runtime.Heuristics, "Config": shim.Config,
        "autotune": shim.autotune, "heuristics": shim.heuristics, "OutOfResources": tile_lang.OutOfResources}),
    "triton.runtime.jit": _names("triton.runtime.jit", {
        "JITFunction": shim.JITFunction, "KernelInterface": runtime.KernelInterface, "TensorWrapper": tools.TensorWrapper, "reinterpret": tools.reinterpret,
        "type_canonicalisation_dict": shim.type_canonicalisation_dict}),
    "triton.runtime.errors": _names("triton.runtime.errors", {
        "InterpreterError": tile_lang.KernelError, "OutOfResources": tile_lang.OutOfResources}),
    "triton.compiler": _names("triton.compiler", {"CompilationError": tile_lang.KernelError,
                                                  "CompiledKernel": compiled.CompiledKernel}),
    "triton.compiler.errors": _names("triton.compiler.errors", {"CompilationError": tile_lang.KernelError}),
    # torch._inductor imports these whenever `import triton` works (torch._dynamo, so transformers, imports it);
    # what it then looks up in them is absent, and its feature tests (hasattr) take their fallbacks
    "triton.compiler.compiler": _names("triton.compiler.compiler", {"triton_key": _triton_key}),
    "triton.backends": _names("triton.backends", {}),
    "triton.backends.compiler": _names("triton.backends.compiler", {}),
    "triton.knobs": _names("triton.knobs", {"nvidia": types.SimpleNamespace(ptxas=shim.Ptxas())}),
    "triton.tools": _names("triton.tools", {}),
    "triton.tools.tensor_descriptor": _names("triton.tools.tensor_descriptor", {"TensorDescriptor": tools.TensorDescriptor}),
    "triton.tools.experimental_descriptor": _names("triton.tools.experimental_descriptor", {}),
    "triton.tools.mxfp": _names("triton.tools.mxfp", {name: unprovided_class(
        f"triton.tools.mxfp.{name}", "tile_lang has no microscaling (MX) formats") for name in ("MXFP4Tensor", "MXScaleTensor")}),
    "triton.profiler": _names("triton.profiler", {name: getattr(proton, name) for name in (
        "start", "finalize", "activate", "deactivate", "scope", "enter_scope", "exit_scope")}),
    "triton.profiler.viewer": _names("triton.profiler.viewer", {"parse": proton.parse, "print_tree": proton.print_tree}),
    "triton._C": _names("triton._C", {}),
    "triton._C.libtriton": _names("triton._C.libtriton", {"nvidia": cublas.NVIDIA}),
}
"""Each ``triton`` module the shim provides, made when first imported."""


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers every import of ``triton`` and its submodules from :data:`_MODULES`."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        if fullname not in _MODULES:
            raise ModuleNotFoundError(f"No module named {fullname!r} in tile_lang's Triton shim (it provides "
                                      f"{', '.join(_MODULES)}; see {shim.DOCS})", name=fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _MODULES[spec.name]()

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module was made whole by :meth:`create_module`."""


def install() -> None:
    """Make ``import triton...`` resolve to the shim from now on in this process (a real Triton
    imported before is dropped from ``sys.modules``), and on the NumPy reference let a torch without
    CUDA answer ``torch.cuda``'s device queries for the stand-in device (:mod:`.device`); set
    :data:`ENV_VAR` so that pytest processes started from this one install it too. Idempotent."""
    os.environ[ENV_VAR] = "1"
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    device.install_torch_hook()
    for name, module in list(sys.modules.items()):
        if (name == "triton" or name.startswith("triton.")) and not isinstance(module, Namespace):
            del sys.modules[name]
