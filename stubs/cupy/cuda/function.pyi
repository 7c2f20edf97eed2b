# ``cupy.cuda.function``: the subset tile_lang uses (see ../__init__.pyi).

from collections.abc import Sequence

from cupy import _KernelArg
from cupy.cuda.stream import _BaseStream

class Module:
    """A CUDA module: ``load`` takes a cubin's bytes (cuModuleLoadData), ``load_file`` a path
    (cuModuleLoad); on the current device."""

    ptr: int
    @property
    def mapping(self) -> dict[str, str] | None: ...  # name expression -> mangled name
    def __init__(self) -> None: ...
    def load_file(self, filename: str | bytes) -> None: ...
    def load(self, cubin: bytes) -> None: ...
    def get_global_var(self, name: str | bytes) -> int: ...
    def get_function(self, name: str | bytes) -> Function: ...

class Function:
    """A kernel of a loaded module (cuModuleGetFunction)."""

    module: Module
    ptr: int
    def __init__(self, module: Module, funcname: str) -> None: ...
    def __call__(
        self,
        grid: tuple[int, ...],  # a tuple (not a list); padded with 1s to three dimensions
        block: tuple[int, ...],
        args: Sequence[_KernelArg],
        shared_mem: int = 0,
        stream: _BaseStream | None = None,  # None: the current stream
        enable_cooperative_groups: bool = False,
    ) -> None: ...
    def linear_launch(
        self,
        size: int,
        args: Sequence[_KernelArg],
        shared_mem: int = 0,
        block_max_size: int = 128,
        stream: _BaseStream | None = None,
        enable_cooperative_groups: bool = False,
    ) -> None: ...
