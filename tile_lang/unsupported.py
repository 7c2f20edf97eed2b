"""Names of Triton's language that tile_lang does not define yet: using one is a clear error.

A ported kernel that reads ``tl.reduce_or`` gets
``tl.reduce_or is not supported yet`` (an :class:`~tile_lang.errors.Unsupported`, which is an
AttributeError; in a kernel a KernelError at its line), never a bare AttributeError.
"""

from __future__ import annotations

from tile_lang.errors import Unsupported

# triton.language.__all__ (Triton 3.x) less what tile_lang defines.
TRITON_LANGUAGE = frozenset({
    "async_task", "bitonic_merge", "block_type", "condition", "const", "constexpr_type",
    "map_elementwise",
    "slice",
    "squeeze", "tensor", "unsqueeze", "void",
})


def missing(module: str, name: str, known: frozenset[str]) -> Unsupported:
    """The error for reading ``name`` from ``module``: "not supported yet" for a Triton name."""
    if name in known:
        return Unsupported(f"{module}.{name} is not supported yet")
    return Unsupported(f"{module} has no attribute {name!r} (nor does Triton's)")
