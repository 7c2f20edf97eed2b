"""What one fuzz case is: kernel source text plus the buffers and scalars of its launch."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tile_lang import dtypes
from tile_lang.dtypes import DType


class Init(enum.Enum):
    """How an output buffer starts: poisoned (NaN or a sentinel) or random (atomics add to it)."""

    POISON = "poison"
    RANDOM = "random"


class Data(enum.Enum):
    """What an input buffer holds: random normal values (small ints for integer dtypes), or
    multiples of 1/4 from -2 to 2 (never 0), whose products sum exactly in f32 in any order,
    so a dot of them must match bit for bit; edge values (ints: the dtype's extremes, -1, 0 and
    shift amounts around its width; floats: +-0, +-inf and a few small numbers); or normal floats
    with NaNs (the first third of the buffer all NaN)."""

    NORMAL = "normal"
    GRID = "grid"
    EDGE = "edge"
    NAN = "nan"


@dataclass(frozen=True)
class Buffer:
    """One pointer parameter: its name, dtype and length (in elements); inputs say what they hold."""

    name: str
    dtype: DType
    size: int
    data: Data = Data.NORMAL


@dataclass(frozen=True)
class Output:
    """An output buffer; ``exact`` says whether both backends must agree bit for bit (ints) or
    within the float tolerance only (floats) versus a looser one (reordered or transcendental)."""

    buffer: Buffer
    init: Init
    exact: bool


@dataclass(frozen=True)
class Case:
    """A generated kernel and its launch. ``invalid`` marks a kernel with a statement both
    backends must reject with a KernelError; ``arch`` is the emulated target (80: mma.sync,
    90: wgmma); float outputs are compared at ``precision``'s tolerance when it is the looser.
    ``hazard`` names the edge case planted at its end (:mod:`tests.fuzz.hazards`), if any; ``expect`` is a phrase the reference's run-time error must hold (a planted race), and each
    pair in ``twins`` are two outputs that must be equal on each backend (one value spelled two
    ways: with a module-level constexpr and with its literal); ``forms`` names the address and mask
    forms its loads and stores take (:mod:`tests.fuzz.addresses`)."""

    seed: int
    name: str
    source: str
    inputs: tuple[Buffer, ...]
    outputs: tuple[Output, ...]
    scalars: tuple[tuple[str, int | float], ...]
    constexprs: tuple[tuple[str, int], ...]
    grid: int
    num_warps: int
    invalid: bool
    num_stages: int = 3
    arch: int = 80
    precision: DType = dtypes.F32  # the least precise float result a value passes through (a 16-bit dot's)
    hazard: str = ""
    expect: str = ""
    twins: tuple[tuple[int, int], ...] = ()
    forms: tuple[str, ...] = ()
