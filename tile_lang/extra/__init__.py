"""Triton's ``tl.extra`` namespace: ``tl.extra.libdevice`` and ``tl.extra.cuda.libdevice``."""

from tile_lang.extra import cuda, libdevice

__all__ = ["cuda", "libdevice"]
