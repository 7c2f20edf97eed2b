"""tile_lang's CUDA backend: kernels compiled to CUDA C++ and run through CuPy (NVRTC).

Importing this package needs neither CuPy nor a GPU; ``CupyBackend.unavailable_reason`` says
what is missing. The code generator (:mod:`tile_lang_cupy.codegen`) needs neither either.
"""

from tile_lang_cupy.backend import CupyBackend

__all__ = ["CupyBackend"]
