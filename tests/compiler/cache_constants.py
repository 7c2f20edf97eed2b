"""A constant that tests/compiler/test_cache.py reads as a module attribute from a kernel
(``cache_constants.OFFSET``), to check that the CUDA cache keys such reads."""

OFFSET = 0.5
