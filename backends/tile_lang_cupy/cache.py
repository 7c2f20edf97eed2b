"""The CUDA backend's use of tile_lang's checked cache directory (:mod:`tile_lang.diskcache`,
re-exported here): its compiler version, and a scratch folder for cubins that cannot be stored."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from tile_lang.diskcache import ENV_VAR, CacheWarning, DiskCache, code_version, digest, open_cache

__all__ = ["ENV_VAR", "CacheWarning", "DiskCache", "compiler_version", "digest", "open_cache", "scratch_dir"]


def compiler_version() -> str:
    """A hash of the compiler's and code generator's own sources: a new library version
    invalidates every cached entry."""
    return code_version(__package__ or "tile_lang_cupy")


@lru_cache(maxsize=1)
def scratch_dir() -> Path:
    """A private folder, removed at exit, for module files that could not be cached (CuPy loads a
    cubin from a path)."""
    path = Path(tempfile.mkdtemp(prefix="tile_lang-"))
    atexit.register(shutil.rmtree, path, True)
    return path
