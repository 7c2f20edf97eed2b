"""One error hierarchy: everything tile_lang raises on purpose is a TileLangError, and an
exception escaping the compiler's own code (front end, a pass, CUDA code generation) is a
CompilerBug naming the kernel and the line being compiled, or with TILE_LANG_DEBUG=1 the original."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Pointer, constexpr, diskcache
from tile_lang.compiler import frontend, passes
from tile_lang.compiler.ir import Function, Node, Op
from tile_lang.errors import DEBUG_ENV_VAR, BackendError, CompilerBug, KernelError, LaunchError, TileLangError
from tile_lang_cupy.codegen import emitter

FILE = __file__


@tl.kernel
def scale_kernel(x_ptr: Pointer[tl.f32], out_ptr: Pointer[tl.f32], n: int, BLOCK: constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 3.0, mask=mask)


def line_of(text: str) -> int:
    """The line of ``scale_kernel`` holding ``text``."""
    lines, first = inspect.getsourcelines(scale_kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture(autouse=True)
def no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEBUG_ENV_VAR, raising=False)


def broken(exc: Exception) -> Callable[..., Any]:
    def fail(*args: Any) -> Any:
        raise exc
    return fail


def test_every_deliberate_error_is_a_tile_lang_error() -> None:
    for cls in (KernelError, LaunchError, BackendError, CompilerBug):
        assert issubclass(cls, TileLangError)
    assert issubclass(LaunchError, TypeError) and issubclass(BackendError, RuntimeError)  # as they were
    assert issubclass(diskcache.CacheWarning, RuntimeWarning) and not issubclass(diskcache.CacheWarning, TileLangError)
    assert tl.TileLangError is TileLangError and tl.CompilerBug is CompilerBug


def test_a_user_error_stays_a_kernel_error() -> None:
    with pytest.raises(TileLangError, match="kernel scale_kernel: missing constexpr") as missing:
        scale_kernel.cuda_source()
    assert isinstance(missing.value, LaunchError)
    x = tl.to_device(np.random.default_rng(0).standard_normal(8).astype(np.float32))
    with pytest.raises(KernelError, match="in kernel scale_kernel") as info:
        scale_kernel[(1,)](x, x, 8, BLOCK=6)  # not a power of two
    assert not isinstance(info.value, CompilerBug)


def test_a_code_generator_failure_is_a_compiler_bug_at_the_line_emitted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(emitter.STATEMENTS, Op.STORE, broken(KeyError("no layout for node 7")))
    with pytest.raises(CompilerBug) as info:
        scale_kernel.cuda_source(BLOCK=128)
    bug = info.value
    assert isinstance(bug.__cause__, KeyError)
    assert (bug.kernel, bug.filename, bug.lineno, bug.stage) == ("scale_kernel", FILE, line_of("tl.store"),
                                                                  "CUDA code generation")
    text = str(bug)
    assert "in kernel scale_kernel: internal compiler error in CUDA code generation: KeyError: 'no layout for node 7'" \
        in text
    assert "tl.store(out_ptr + offs, x * 3.0, mask=mask)" in text  # the user's line is shown
    assert "TILE_LANG_DEBUG=1" in text


def test_debug_raises_the_code_generators_own_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(emitter.STATEMENTS, Op.STORE, broken(KeyError("no layout for node 7")))
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    with pytest.raises(KeyError, match="no layout for node 7") as info:
        scale_kernel.cuda_source(BLOCK=128)
    assert not isinstance(info.value, TileLangError)


def test_a_feature_the_cuda_backend_lacks_is_a_kernel_error_at_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(emitter.STATEMENTS, Op.STORE, broken(BackendError("stores of f32 are not supported")))
    with pytest.raises(KernelError, match="in kernel scale_kernel: stores of f32 are not supported") as info:
        scale_kernel.cuda_source(BLOCK=128)
    assert info.value.lineno == line_of("tl.store")


@pytest.mark.parametrize("exc", [KeyError("f32"), AssertionError("operands of one shape")])
def test_a_front_end_failure_is_a_compiler_bug_at_the_kernel_line(monkeypatch: pytest.MonkeyPatch,
                                                                   exc: Exception) -> None:
    monkeypatch.setattr(frontend.Frontend, "binop", broken(exc))
    with pytest.raises(CompilerBug, match=f"internal compiler error in the front end: {type(exc).__name__}") as info:
        scale_kernel.inspect(BLOCK=128)
    bug = info.value
    assert bug.__cause__ is exc
    assert (bug.kernel, bug.filename, bug.lineno) == ("scale_kernel", FILE, line_of("tl.program_id(0) * BLOCK"))
    assert "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)" in str(bug)
    assert "frontend.py" not in str(bug)  # the user's line, not the compiler's


def test_debug_raises_the_front_ends_own_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontend.Frontend, "binop", broken(KeyError("f32")))
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    with pytest.raises(KeyError, match="f32"):
        scale_kernel.inspect(BLOCK=128)


def test_a_failing_pass_is_a_compiler_bug_naming_the_pass_and_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    def vectorize(fn: Function) -> Function:
        nodes: list[Node] = []
        return fn if nodes[0] else fn  # an IndexError: a pass that is wrong

    monkeypatch.setattr(passes, "PASSES", (*passes.PASSES[:2], vectorize))
    with pytest.raises(CompilerBug, match="internal compiler error in pass vectorize: IndexError") as info:
        scale_kernel.inspect(BLOCK=128)
    assert (info.value.kernel, info.value.lineno) == ("scale_kernel", scale_kernel.lineno)
    assert isinstance(info.value.__cause__, IndexError)

