"""Differential fuzzing of the compiler: random kernels (as source text) run on the NumPy
reference and on the generated CUDA under the CPU emulator, and must agree.

``python -m tests.fuzz --seconds 900 --seed N`` runs seeds N, N+1, ... for that long;
``tests/compiler/test_fuzz.py`` runs a fixed set of seeds in CI.
"""
