"""The on-disk cache directory: checked whenever it is opened, read defensively, written atomically.

Shared by everything tile_lang stores between processes (a backend's compiled kernels, the
autotuner's winners). A directory is used only if it is ours (a real directory, not a link, owned
by the current user, not writable by group or others) and no one else can swap it or a directory
above it (each owned by us or root, writable by no one else unless sticky, as /tmp). Entries are read only when they are regular files we own, opened
without following links or blocking (a FIFO cannot hang a launch). Every file is written to a
temporary name and moved into place with ``os.replace``, so a reader sees either nothing or a
complete file. Any fault is one :class:`CacheWarning` naming the path and cause; the caller then
works in memory.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import stat
import tempfile
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

ENV_VAR = "TILE_LANG_CACHE_DIR"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class CacheWarning(RuntimeWarning):
    """The disk cache could not be used for an entry or at all; the caller works in memory (a
    kernel is compiled, a config tuned, without storing it)."""


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:40]


@lru_cache(maxsize=None)
def code_version(package: str) -> str:
    """A hash of tile_lang's sources and those of ``package`` (a backend's top-level module): a
    new version of either invalidates every entry derived from them."""
    files = sorted({*_sources("tile_lang"), *_sources(package)})
    return digest(*(p.read_bytes() for p in files))


def _sources(name: str) -> list[Path]:
    module = importlib.import_module(name)
    path = Path(module.__file__ or "")
    if not hasattr(module, "__path__"):  # a plain module, e.g. a backend defined in a test file
        return [path]
    return [p for p in path.parent.rglob("*") if p.suffix in (".py", ".cuh")]


def warn(path: Path, cause: str) -> None:
    warnings.warn(f"tile_lang cache: {path}: {cause}", CacheWarning, stacklevel=2)


class DiskCache:
    """One cache directory (``root``; None: nothing is read or stored). Writing stops, with one
    warning, at the first write that fails."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.writable = root is not None

    @classmethod
    def open(cls, root: Path) -> DiskCache:
        """The cache in ``root`` (created, private, if missing), or one that stores nothing (with a
        warning) if it cannot be created or is not ours alone."""
        problem = private_directory(root)
        if problem is None:
            return cls(root)
        warn(root, f"{problem}; not using it, kernels are compiled in memory")
        return cls(None)

    def path(self, name: str) -> Path | None:
        return None if self.root is None else self.root / name

    def read(self, name: str) -> bytes | None:
        """The entry's bytes; None if absent, or (with a warning) if it is not a regular file of
        ours or cannot be read."""
        path = self.path(name)
        if path is None:
            return None
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):  # never open a FIFO or device
                warn(path, "not a regular file; ignoring it and rebuilding")
                return None
            fd = os.open(path, _READ_FLAGS)
            with os.fdopen(fd, "rb") as f:
                problem = _untrusted(os.fstat(f.fileno()), "file")
                if problem is None:
                    return f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            problem = f"cannot read it ({exc.strerror or exc})"
        warn(path, f"{problem}; ignoring it and rebuilding")
        return None

    def read_json(self, name: str) -> dict[str, Any] | None:
        data = self.read(name)
        if data is None:
            return None
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep
            parsed = exc
        if isinstance(parsed, dict):
            return parsed
        self.corrupt(name, "not a JSON object")
        return None

    def corrupt(self, name: str, cause: str) -> None:
        """Report an entry whose contents are unusable (the caller rebuilds and overwrites it)."""
        warn(self.root / name if self.root else Path(name), f"corrupt entry ({cause}); rebuilding it")

    def write(self, name: str, data: bytes) -> Path | None:
        """Store an entry; its path, or None if nothing is stored (after the first failure, with
        its warning, nothing more is tried)."""
        path = self.path(name)
        if path is None or not self.writable:
            return None
        try:
            write_atomic(path, data)
        except OSError as exc:
            self.writable = False
            warn(path, f"cannot write it ({exc.strerror or exc}); kernels are compiled in memory, not stored")
            return None
        return path

    def write_json(self, name: str, data: dict[str, Any]) -> Path | None:
        return self.write(name, json.dumps(data, indent=1).encode())


def private_directory(root: Path) -> str | None:
    """Create ``root`` (mode 700) if missing; why it must not hold files that are read back and
    loaded, or None. Checked on every open (a few stats): a directory that was safe may not be."""
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return _untrusted(os.lstat(root), "directory") or _unsafe_parents(root)
    except OSError as exc:
        return f"cannot create or read the directory ({exc.strerror or exc})"


def _unsafe_parents(root: Path) -> str | None:
    """Why someone else could replace ``root`` through a directory above it, or None. Every
    directory a lookup of ``root`` passes through is checked: those of the path as given (each
    stat follows a link to the directory that holds the next name) and those of the path resolved."""
    absolute = Path(os.path.abspath(root))
    resolved = Path(os.path.realpath(absolute.parent))
    for directory in dict.fromkeys([*absolute.parents, resolved, *resolved.parents]):
        st = os.stat(directory)
        if st.st_uid not in (_uid(st), 0):
            return f"the directory above it {directory} is owned by uid {st.st_uid}, not by you or root"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
            return (f"the directory above it {directory} is writable by group or others and not sticky "
                    f"(mode {stat.S_IMODE(st.st_mode):o})")
    return None


def _uid(st: os.stat_result) -> int:
    return os.geteuid() if hasattr(os, "geteuid") else st.st_uid


def _untrusted(st: os.stat_result, what: str) -> str | None:
    """Why a cache directory or entry with this status must not be used, or None."""
    if stat.S_ISLNK(st.st_mode):
        return f"the {what} is a symbolic link (name the {what} itself)"
    if what == "directory" and not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if what == "file" and not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    uid = _uid(st)
    if st.st_uid != uid:
        return f"the {what} is owned by uid {st.st_uid}, not by you (uid {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"the {what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}; chmod go-w it)"
    return None


_opened: dict[str, DiskCache] = {}
_OPEN_LOCK = threading.Lock()  # threads compiling at once share one handle (and its one warning)


def open_cache() -> DiskCache:
    """The cache directory ``$TILE_LANG_CACHE_DIR`` or ``~/.cache/tile_lang``, checked with the
    directories above it on every call (once per compile, not per launch). A directory refused, or
    found unsafe after it was accepted, warns once and is not used again by this process."""
    root = os.environ.get(ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "tile_lang")
    with _OPEN_LOCK:
        found = _opened.get(root)
        if found is None or (found.root is not None and private_directory(found.root) is not None):
            found = _opened[root] = DiskCache.open(Path(root))
        return found


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
