"""The on-disk cache: generated CUDA source (with its metadata) and compiled modules.

Safe across processes: every file is written to a temporary name and moved into place with
``os.replace``, so a reader sees either nothing or a complete file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

ENV_VAR = "TILE_LANG_CACHE_DIR"


def cache_dir() -> Path:
    root = os.environ.get(ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "tile_lang")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:40]


@lru_cache(maxsize=None)
def compiler_version() -> str:
    """A hash of the compiler's and code generator's own sources: a new library version
    invalidates every cached entry."""
    import tile_lang

    roots = [Path(tile_lang.__file__).parent, Path(__file__).parent]
    files = sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".py", ".cuh"))
    return digest(*(p.read_bytes() for p in files))


@lru_cache(maxsize=1024)
def file_digest(path: str, mtime_ns: int) -> str:
    return digest(Path(path).read_bytes())


def current_digest(path: str) -> str:
    try:
        return file_digest(path, os.stat(path).st_mtime_ns)
    except OSError:
        return "missing"


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(data, indent=1).encode())
