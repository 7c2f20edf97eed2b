"""``python -m tests.compiler.emulator [--arch 90] script.py [args...]``: runs a script that imports
``triton`` through tile_lang's runner on the emulated generated CUDA, with its own NumPy arrays and
torch CPU tensors, as ``python -m tile_lang.as_triton`` runs it on the reference. A project's
kernels and host code then test the compiler without a GPU (the emulator has no bounds checks: run
them on the reference first)."""

from __future__ import annotations

import argparse
import os
import runpy
import sys

from tile_lang import registry

from tests.compiler.emulator import NAME, EmuBackend


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.compiler.emulator", description=__doc__)
    parser.add_argument("--arch", type=int, default=80, help="the target the code is generated for (default 80)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    registry.register(EmuBackend(ns.arch))
    os.environ[registry.ENV_VAR] = NAME  # the runner's processes and checks read the backend from here
    import tile_lang.as_triton as runner

    runner.install()
    sys.argv = [ns.script, *ns.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))  # as `python script.py` has it
    runpy.run_path(ns.script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
