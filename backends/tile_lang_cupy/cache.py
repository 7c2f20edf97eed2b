"""The CUDA backend's use of tile_lang's checked cache directory (:mod:`tile_lang.diskcache`,
re-exported here): its compiler version."""

from __future__ import annotations

from tile_lang.diskcache import ENV_VAR, CacheWarning, DiskCache, code_version, digest, open_cache

__all__ = ["ENV_VAR", "CacheWarning", "DiskCache", "compiler_version", "digest", "open_cache"]


def compiler_version() -> str:
    """A hash of the compiler's and code generator's own sources: a new library version
    invalidates every cached entry."""
    return code_version(__package__ or "tile_lang_cupy")

