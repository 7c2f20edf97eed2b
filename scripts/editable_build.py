"""The PEP 517 build backend: setuptools, except that ``pip install -e .`` installs a plain
``tile_lang.pth`` naming two directories: ``build/editable/top`` (symlinks to the top-level
packages the README promises anywhere: tile_lang and its mypy plugin, tile_lang_mypy) and ``backends/``.

setuptools' own editable install of this layout (packages in ``.`` and in ``backends/``) is an
import hook, which mypy and other type checkers cannot see, so ``mypy`` on a kernel file outside
the repository would not find ``tile_lang``. Path entries are seen by every tool, and new modules
inside the packages are picked up without reinstalling. The symlinks keep the repository's other
directories (tests, examples, benchmarks, scripts) off the path: they import only from the repository
root (Python puts the current directory first on the path for ``python -m``, and ``tile-lang`` does too).
"""

from __future__ import annotations

import base64
import hashlib
import tempfile
import zipfile
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import (  # noqa: F401 (re-exported hooks)
    build_sdist, build_wheel, get_requires_for_build_sdist, get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent
TOP_LEVEL = ("tile_lang", "tile_lang_mypy")  # importable from any directory once installed (the mypy plugin too)
LINKS = ROOT / "build" / "editable" / "top"
PATH_ENTRIES = (LINKS, ROOT / "backends")  # backends/ holds only the backend packages


def get_requires_for_build_editable(config_settings: dict[str, object] | None = None) -> list[str]:
    return []  # the editable wheel is written here, with the standard library


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: dict[str, object] | None = None) -> str:
    name: str = build_meta.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
    return name


def build_editable(wheel_directory: str, config_settings: dict[str, object] | None = None,
                   metadata_directory: str | None = None) -> str:
    """A wheel holding the project's metadata (entry points included) and ``tile_lang.pth``;
    (re)makes the directory of symlinks that the .pth names."""
    link_top_level()
    with tempfile.TemporaryDirectory() as scratch:
        dist_info = (Path(metadata_directory) if metadata_directory is not None  # the .dist-info itself
                     else Path(scratch, prepare_metadata_for_build_editable(scratch, config_settings)))
        stem = dist_info.name.removesuffix(".dist-info")
        files: dict[str, bytes] = {"tile_lang.pth": "".join(f"{p}\n" for p in PATH_ENTRIES).encode()}
        for path in sorted(dist_info.rglob("*")):
            if path.is_file() and path.name not in ("RECORD", "WHEEL"):
                files[f"{dist_info.name}/{path.relative_to(dist_info).as_posix()}"] = path.read_bytes()
        files[f"{dist_info.name}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: tile_lang editable_build\n"
                                            b"Root-Is-Purelib: true\nTag: py3-none-any\n")
        record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files.items())
        files[f"{dist_info.name}/RECORD"] = (record + f"{dist_info.name}/RECORD,,\n").encode()
        wheel_name = f"{stem}-py3-none-any.whl"
        with zipfile.ZipFile(Path(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
            for name, data in files.items():
                wheel.writestr(name, data)
    return wheel_name


def link_top_level() -> None:
    """``LINKS`` holds exactly one symlink per ``TOP_LEVEL`` package, to its directory here. A
    link already right is left alone, and others are replaced atomically, so reinstalling never
    leaves a moment in which a running program cannot import tile_lang."""
    LINKS.mkdir(parents=True, exist_ok=True)
    for entry in LINKS.iterdir():
        if entry.name not in TOP_LEVEL:
            entry.unlink()  # a package no longer exposed (only symlinks are ever made here)
    for name in TOP_LEVEL:
        link, target = LINKS / name, ROOT / name
        if not (link.is_symlink() and Path(link.readlink()) == target):
            fresh = LINKS / f".{name}.new"
            fresh.unlink(missing_ok=True)
            fresh.symlink_to(target, target_is_directory=True)
            fresh.replace(link)


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
