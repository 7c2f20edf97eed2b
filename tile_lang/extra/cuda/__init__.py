"""Triton's ``triton.language.extra.cuda``: its ``libdevice`` is ``tl.extra.libdevice``."""

from tile_lang.extra.cuda import libdevice

__all__ = ["libdevice"]
