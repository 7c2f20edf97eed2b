"""PyTorch integration (the optional ``torch`` extra; torch is imported when this module is).

``custom_op`` registers a host function that launches tile_lang kernels on torch tensors as a
``torch.library`` custom op, with a fake implementation that computes the outputs' metadata
without running anything (for meta tensors and ``torch.compile``). Launches accept torch tensors
directly, without copying (``tl.wrap(t)`` types them for mypy): CUDA tensors on the cupy
backend, CPU tensors on the NumPy one; of any dtype a pointer takes (bf16 and fp8 too), strided
or not, requiring grad or not, as Triton reads them through their pointer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

try:
    import torch
except ImportError as exc:  # the optional extra is not installed
    raise ModuleNotFoundError("tile_lang.torch needs PyTorch: pip install torch (or, from a clone, pip install -e '.[torch]')",
                      name=exc.name) from None

from tile_lang.errors import LaunchError

F = TypeVar("F", bound=Callable[..., Any])


def custom_op(name: str, *, mutates_args: Sequence[str] = (),
              fake: Callable[..., Any] | None = None) -> Callable[[F], Any]:
    """Register ``fn`` (annotated with ``torch.Tensor`` parameters) as the custom op ``name``
    (``"namespace::op"``); ``fake`` takes the same arguments and returns empty outputs of the
    right shapes and dtypes. The result is a ``torch.library.CustomOpDef``: call it like ``fn``,
    and add a backward with ``.register_autograd(backward, setup_context=...)``."""
    if "::" not in name:
        raise LaunchError(f"custom op name {name!r} must be 'namespace::name'")

    def register(fn: F) -> Any:
        op = torch.library.custom_op(name, mutates_args=tuple(mutates_args))(fn)
        if fake is not None:
            op.register_fake(fake)
        return op

    return register


def tensor_args(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The tensors as launches take them: detached (autograd's saved inputs may require grad)
    and contiguous (the kernels index rows as ``row * n_cols``)."""
    return tuple(t.detach().contiguous() for t in tensors)
