"""Random-number rules: ``tl.randint``/``randint4x``/``rand``/``randn`` take integer seeds and
offsets (blocks or scalars, broadcast together) and a constexpr round count."""

from __future__ import annotations

from tile_lang.semantics.base import Block, SemanticError, Shape, broadcast


def philox(seed: Block, offset: Block, n_rounds: object) -> tuple[Shape, int]:
    """The result shape (seed and offsets broadcast together) and the Philox round count."""
    for what, arg in (("seed", seed), ("offset", offset)):
        if not arg.dtype.is_int:
            raise SemanticError(f"the {what} of a random function must be an integer, got {arg}")
    if not isinstance(n_rounds, int) or isinstance(n_rounds, bool) or n_rounds < 0:
        raise SemanticError(f"n_rounds must be a non-negative constexpr int, got {n_rounds!r}")
    return broadcast(seed.shape, offset.shape), n_rounds
