"""Triton's ``triton.language.extra.cuda.libdevice``: the same functions as ``tl.extra.libdevice``."""

from tile_lang.extra.libdevice import *  # noqa: F403 (one namespace under Triton's two import paths)
from tile_lang.extra.libdevice import __getattr__ as __getattr__
