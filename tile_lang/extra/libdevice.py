"""Triton's ``triton.language.extra.libdevice``: the math builtins under their libdevice names
(``from tile_lang.extra.libdevice import tanh`` is ``tl.tanh``)."""

from tile_lang.math import *  # noqa: F403 (the namespace is tl.math's, re-exported whole)
from tile_lang.unsupported import missing


def __getattr__(name: str) -> object:
    raise missing("libdevice", name, frozenset())  # every one of Triton's is defined
