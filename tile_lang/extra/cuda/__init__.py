"""Triton's ``triton.language.extra.cuda``: its ``libdevice`` is ``tl.extra.libdevice``,
``gdc_wait`` and ``gdc_launch_dependents`` are no-ops (no launch is made dependent); its other
names (``smid``, ``globaltimer``, ...) are a clear "not supported yet" error."""

from tile_lang.errors import Unsupported
from tile_lang.extra.cuda import libdevice
from tile_lang.ops.debug import gdc_launch_dependents, gdc_wait
from tile_lang.unsupported import missing

__all__ = ["gdc_launch_dependents", "gdc_wait", "libdevice"]

TRITON_EXTRA_CUDA = frozenset({
    "globaltimer", "smid", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents",
    "convert_fp8e4b15_to_float16", "convert_float16_to_fp8e4b15", "convert_custom_float8",
    "convert_custom_float8_sm70", "convert_custom_float8_sm80",
})
"""triton.language.extra.cuda's names (Triton 3.6) besides libdevice."""


def __getattr__(name: str) -> Unsupported:
    raise missing("tl.extra.cuda", name, TRITON_EXTRA_CUDA)
