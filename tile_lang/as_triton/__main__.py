"""``python -m tile_lang.as_triton script.py [args]`` or ``python -m tile_lang.as_triton -m module
[args]`` (``-m pytest tests/``): run Triton code on tile_lang, as ``python`` would run it, with
``import triton`` answered by the shim (:func:`tile_lang.as_triton.install`)."""

from __future__ import annotations

import os
import runpy
import sys

from tile_lang.as_triton import install

USAGE = "usage: python -m tile_lang.as_triton (script.py | -m module) [args...]"


def main(argv: list[str]) -> int:
    """Run the target with ``sys.argv`` and ``sys.path[0]`` as ``python`` would set them."""
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(USAGE, file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]  # runpy puts the module's path in sys.argv[0]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
