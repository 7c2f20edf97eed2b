"""``triton.tools.tensor_descriptor.TensorDescriptor`` (host-side descriptors) and an inert
``triton.profiler`` (proton), as the tutorials import them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tile_lang.as_triton.errors import missing


@dataclass
class TensorDescriptor:
    """Triton's host-side tensor descriptor: a tensor with a shape, strides and a block shape.
    It can be made and inspected (``block_shape`` may be set later, as autotune pre-hooks do), but
    a launch refuses it: tile_lang's kernels make descriptors inside, with ``tl.make_tensor_descriptor``."""

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = "zero"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: Sequence[int], padding: str = "zero") -> TensorDescriptor:
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), list(block_shape), padding)


def refuse_host_descriptors(kernel_name: str, args: Sequence[Any]) -> None:
    """A TritonNameError if a launch passes a host TensorDescriptor."""
    if any(isinstance(a, TensorDescriptor) for a in args):
        missing(f"a host TensorDescriptor passed to kernel {kernel_name}",
                "kernels on tile_lang take the tensor and build the descriptor with tl.make_tensor_descriptor")


_session = [0]


def start(name: str | None = None, **options: Any) -> int:
    """``proton.start``: profiling is not done on tile_lang; the session id is 0 and nothing is recorded."""
    return _session[0]


def finalize(session: int | None = None, output_format: str = "hatchet") -> None:
    """``proton.finalize``: nothing was recorded, so no profile file is written."""


def activate(session: int | None = None) -> None:
    """``proton.activate``: inert."""


def deactivate(session: int | None = None) -> None:
    """``proton.deactivate``: inert."""


@contextlib.contextmanager
def scope(name: str, metrics: dict[str, Any] | None = None) -> Iterator[None]:
    """``with proton.scope(name, metrics):``: runs the block, records nothing."""
    yield


def enter_scope(name: str, metrics: dict[str, Any] | None = None) -> None:
    """``proton.enter_scope``: inert."""


def exit_scope(name: str | None = None, metrics: dict[str, Any] | None = None) -> None:
    """``proton.exit_scope``: inert."""


PROFILER = {"start": start, "finalize": finalize, "activate": activate, "deactivate": deactivate, "scope": scope,
            "enter_scope": enter_scope, "exit_scope": exit_scope}
"""``triton.profiler``'s names: an inert proton (``triton.profiler.viewer``'s readers are missing names)."""
