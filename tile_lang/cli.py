"""``tile-lang``: the command line. ``tile-lang inspect MODULE:KERNEL --constexpr BLOCK=1024
[--ir|--cuda|--ptx|--sass|--resources]`` shows a kernel's IR, CUDA, PTX, SASS or registers, spills and
shared memory; ``tile-lang check PACKAGE_OR_FILE`` compiles every kernel it defines (for CI)."""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

from tile_lang.errors import KernelError, LaunchError, TileLangError

P = ParamSpec("P")

def _constexpr(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare string constexpr


def _pointee(text: str) -> tuple[str, Any]:
    """``x_ptr=f16``: the pointee dtype of a generic pointer parameter, by tile_lang's name."""
    import tile_lang

    name, sep, value = text.partition("=")
    dtype = getattr(tile_lang, value, None) if sep else None
    if dtype is None:
        raise argparse.ArgumentTypeError(f"expected POINTER=DTYPE such as x_ptr=f16, got {text!r}")
    return name, dtype


class _Usage(Exception):
    """A command line that names no kernel or bad constexprs: one line on stderr, exit code 2."""


def _kernel(target: str) -> Any:
    from tile_lang.kernel import Kernel

    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise _Usage(f"expected MODULE:KERNEL, got {target!r}")
    sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _Usage(f"cannot import module {module_name!r} ({exc})") from None
    found = getattr(module, attr, None)
    if found is None:
        kernels = sorted(name for name, value in vars(module).items() if isinstance(value, Kernel))
        raise _Usage(f"module {module_name} has no kernel {attr!r} (its kernels: {', '.join(kernels) or 'none'})")
    if not isinstance(found, Kernel):
        raise _Usage(f"{target} is a {type(found).__name__}, not a @tl.kernel")
    return found


def _specialization_arguments(parser: argparse.ArgumentParser) -> None:
    """The options naming one specialisation, shared by ``inspect`` and ``check``."""
    parser.add_argument("--constexpr", action="append", type=_constexpr, default=[], metavar="NAME=VALUE")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=3)
    parser.add_argument("--dtype", action="append", type=_pointee, default=[], metavar="POINTER=DTYPE",
                        help="the pointee of a generic pointer parameter, e.g. x_ptr=f16 (default f32)")
    parser.add_argument("--arch", default="80", help="target: 80 (mma.sync) or 90a (Hopper's wgmma); default 80")
    parser.add_argument("--divisible", action="append", default=[], metavar="INT_PARAM",
                        help="an int parameter taken as a multiple of 16, as a launch with such a value specialises "
                             "it (a descriptor's row stride: TMA on 90a)")
    parser.add_argument("--one", action="append", default=[], metavar="INT_PARAM",
                        help="an int parameter taken as 1, as a launch with 1 specialises it (a unit stride: the "
                             "vector loads a contiguous launch compiles)")


def _quiet_on_broken_pipe(command: Callable[P, int]) -> Callable[P, int]:
    """``command`` ending quietly when its reader goes away (``tile-lang inspect ... | head``)."""
    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor fail flushing at exit
            return 0

    return run


@_quiet_on_broken_pipe
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tile-lang", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser("inspect", help="print a kernel's IR or generated CUDA")
    inspect.add_argument("target", help="MODULE:KERNEL, e.g. examples.vector_add:vector_add")
    _specialization_arguments(inspect)
    shown = inspect.add_mutually_exclusive_group()
    shown.add_argument("--ir", action="store_true", help="the IR after the pass pipeline (default)")
    shown.add_argument("--ir-raw", action="store_true", help="the IR as the front end builds it")
    shown.add_argument("--cuda", action="store_true", help="the generated CUDA C++")
    shown.add_argument("--ptx", action="store_true", help="the PTX (nvcc on PATH; no GPU needed)")
    shown.add_argument("--sass", action="store_true", help="the SASS (nvcc, ptxas and cuobjdump or nvdisasm)")
    shown.add_argument("--resources", action="store_true",
                       help="registers, spills and shared memory a block, as ptxas reports them (nvcc, ptxas)")
    check = commands.add_parser("check", help="compile every kernel of a module or package (no GPU), report errors",
                                description="Run the compiler's front end and passes on each kernel's "
                                "specialisations: those the module lists in TILE_LANG_CHECK, an autotuner's "
                                "configs, and the command line's values (applied to each kernel having those "
                                "names). Exit status 1 if any error, 0 if clean, 2 on a usage error.")
    check.add_argument("target", help="a dotted module or package (walked), a .py file or a package directory")
    _specialization_arguments(check)
    check.add_argument("--fail-unchecked", action="store_true",
                       help="exit 1 also when a kernel is not checked (a constexpr without a value)")
    check.add_argument("-v", "--verbose", action="store_true", help="list each clean specialisation too")
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check(args)
    try:
        kernel = _kernel(args.target)
        constexprs = {**dict(args.constexpr), **dict(args.dtype)}
        asm = next((key for key in ("cuda", "ptx", "sass") if getattr(args, key)), None)
        if asm is not None or args.resources:
            compiled = kernel.compile(args.num_warps, args.arch, args.num_stages, args.divisible, args.one,
                                      **constexprs)
            print(compiled.asm[asm] if asm is not None else compiled.resources())
        else:
            print(kernel.inspect(args.num_warps, not args.ir_raw, args.arch, args.num_stages, args.divisible,
                                 args.one, **constexprs))
    except (_Usage, LaunchError) as exc:  # the command line is wrong: which kernel, which constexprs
        print(f"tile-lang: error: {exc}", file=sys.stderr)
        return 2
    except (KernelError, TileLangError) as exc:  # the kernel's own line (a compiler bug says so), no traceback
        print(exc, file=sys.stderr)
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    """``tile-lang check``: every error and unchecked kernel on stdout, then a one-line summary."""
    from tile_lang.check import Outcome, TargetNotFound, check

    given = {**dict(args.constexpr), **dict(args.dtype)}
    try:
        reports = check(args.target, given, args.num_warps, args.num_stages, args.arch)
    except TargetNotFound as exc:
        print(f"tile-lang: error: {exc}", file=sys.stderr)
        return 2
    for report in reports:
        spec = f"\n    checked as: {report.specialization.describe()}" if report.specialization else ""
        if report.outcome is Outcome.ERROR:
            print(f"{report.message}{spec}")
        elif report.outcome is Outcome.NOT_CHECKED or args.verbose:
            print(report.message or f"kernel {report.kernel}: clean{spec}")
    counts = {outcome: sum(r.outcome is outcome for r in reports) for outcome in Outcome}
    kernels = len({r.kernel for r in reports if r.kernel})
    print(f"tile-lang check: {kernels} kernel(s), {counts[Outcome.CLEAN] + counts[Outcome.ERROR]} check(s): "
          f"{counts[Outcome.ERROR]} error(s), {counts[Outcome.NOT_CHECKED]} kernel(s) not checked")
    failed = counts[Outcome.ERROR] or (args.fail_unchecked and counts[Outcome.NOT_CHECKED])
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
