"""Where the hand-written runtime headers the generated CUDA includes live. A module of its own
so that finding them (NVRTC's include path on a warm launch) imports no code generator."""

from __future__ import annotations

from pathlib import Path

INCLUDE_DIR = Path(__file__).resolve().parent
HEADER = "tile_lang.cuh"
