"""Random-number rules: ``tl.randint``/``randint4x``/``rand``/``randn`` take integer seeds and
offsets (blocks or scalars, broadcast together) and a constexpr round count."""

from __future__ import annotations

from typing import Any

from tile_lang.ops import random as tlrandom
from tile_lang.semantics.base import Args, Block, SemanticError, Shape, broadcast, constexpr_int, operand, rule


def philox(seed: Block, offset: Block, n_rounds: object) -> tuple[Shape, int]:
    """The result shape (seed and offsets broadcast together) and the Philox round count."""
    for what, arg in (("seed", seed), ("offset", offset)):
        if not arg.dtype.is_int:
            raise SemanticError(f"the {what} of a random function must be an integer, got {arg}")
    rounds = constexpr_int(n_rounds, "a random function", "n_rounds")
    if rounds < 0:
        raise SemanticError(f"a random function: n_rounds must not be negative, got {rounds}")
    return broadcast(seed.shape, offset.shape), rounds


@rule(tlrandom.randint, tlrandom.randint4x, tlrandom.rand, tlrandom.randn)
def _random(a: Args) -> dict[str, Any]:
    """``shape``: the result's (seed and offsets broadcast); ``n_rounds``: the checked round count."""
    shape, rounds = philox(operand(a["seed"]), operand(a["offset"]), a["n_rounds"])
    return {"shape": shape, "n_rounds": rounds}
