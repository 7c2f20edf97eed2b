"""One verdict for one kernel: Python the compiler's front end does not translate is refused by
the reference too, with the same message at the same line, before anything runs (no host call,
no write), and by ``tile-lang check`` (the rules live once, in :mod:`tile_lang.legality`)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import registry
from tile_lang.check import Outcome, check

from tests.compiler.emulator import NAME, EmuBackend
from tests.fuzz.runner import load

_BACKEND = EmuBackend()
pytestmark = pytest.mark.skipif(_BACKEND.unavailable_reason() is not None,
                                reason=str(_BACKEND.unavailable_reason()))
HEADER = "import os\nimport tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\nHITS = []\n\n\n@tl.kernel\n"
SIGNATURE = "def {name}(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], n: int, B: constexpr) -> None:\n"
# Each body first stores 2x into o (so a refusal found late would leave a write to roll back),
# then holds one construct the compiler refuses, on the line marked `# here`.
PRELUDE = "    offs = tl.arange(0, B)\n    tl.store(o_ptr + offs, tl.load(x_ptr + offs) * 2.0)\n"
REFUSED = {
    "open_file": ("open(os.devnull, 'w')  # here", "call to open: a kernel may only call tl builtins"),
    "os_system": ("os.system('true')  # here", "call to system: a kernel may only call"),
    "host_builtin": ("id(n)  # here", "call to id: a kernel may only call"),
    "list_append": ("xs = []\n    xs.append(1)  # here", "'append' is not a method a kernel may call"),
    "global_append": ("HITS.append(1)  # here", "call to list.append: a kernel may only call"),
    "for_else": ("for i in range(n):  # here\n        pass\n    else:\n        pass", r"for \.\.\. else is not supported"),
    "while_else": ("while n > 0:  # here\n        n -= 1\n    else:\n        pass", r"while \.\.\. else is not supported"),
    "break_loop": ("for i in range(n):\n        break  # here", r"unsupported Python in a kernel: Break \('break'\)"),
    "continue_loop": ("for i in range(n):\n        continue  # here", "unsupported Python in a kernel: Continue"),
    "raise_error": ("raise ValueError('no')  # here", r"a kernel cannot raise \(\"raise ValueError\('no'\)\" is reached\)"),
    "try_block": ("try:  # here\n        pass\n    finally:\n        pass", "unsupported Python in a kernel: Try"),
    "nested_def": ("def helper() -> None:  # here\n        pass", "unsupported Python in a kernel: FunctionDef"),
    "comprehension": ("ys = [i for i in range(4)]  # here", "unsupported Python in a kernel: ListComp"),
    "dict_display": ("d = {1: 2}  # here", "unsupported Python in a kernel: Dict"),
    "walrus": ("if (m := n) > 0:  # here\n        pass", "unsupported Python in a kernel: NamedExpr"),
    "chained": ("c = 0 < n < 4  # here", "chained comparisons are not supported"),
    "item_target": ("t = (1, 2)\n    t[0] = 3  # here", r"unsupported assignment target 't\[0\]'"),
    "attribute_augassign": ("tl.x += 1  # here", "augmented assignment only to a plain name"),
    "lambda_combine": ("y = tl.reduce(offs, 0, lambda a, b: a + b)  # here", "combine_fn must be a @tl.func"),
    "starred_outside_call": ("a = (0, B)\n    r = [*a]  # here", r"\*a is only allowed as a call's argument"),
    "range_value": ("r = range(4)  # here", r"range\(\) is only allowed as a for loop's iterator"),
    "tuple_loop": ("for i in (1, 2):  # here\n        pass", "a kernel loop iterates over range"),
    "dead_branch": ("if B < 0:\n        id(n)  # here", "call to id: a kernel may only call"),
    "host_callee": ("g = HITS.append\n    g(n)  # here", "call to list.append: a kernel may only call"),
}


def _kernel(name: str) -> Any:
    body = REFUSED[name][0]
    return load(f"legality_{name}", HEADER + SIGNATURE.format(name=f"legality_{name}") + PRELUDE + f"    {body}\n")


@pytest.fixture(autouse=True)
def emulator() -> None:
    registry.register(_BACKEND)


def _marked_line(kernel: Any) -> int:
    """The line of the kernel's file marked ``# here``."""
    lines = Path(kernel.fn.__code__.co_filename).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if "# here" in text)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_both_backends_refuse_with_one_message_at_one_line_before_running(name: str) -> None:
    kernel = _kernel(name)
    hits: list[int] = kernel.fn.__globals__["HITS"]
    x = np.random.default_rng(len(name)).standard_normal(16).astype(np.float32)
    errors = []
    for backend in ("numpy", NAME):
        with tl.backend(backend), pytest.raises(tl.KernelError, match=REFUSED[name][1]) as caught:
            out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
            kernel[(4,)](tl.to_device(x, tl.f32), out, 3, B=16)
        assert np.isnan(out.numpy()).all(), f"{backend} wrote before refusing"
        errors.append(caught.value)
    assert hits == []  # no host call ran
    line = _marked_line(kernel)
    assert [(e.message, e.filename, e.lineno) for e in errors] == [(errors[1].message, errors[1].filename, line)] * 2


def test_a_host_callee_in_divergent_code_never_runs() -> None:
    """Programs that disagree rerun the group masked: a host call there would run twice; it is
    refused before it runs once."""
    kernel = load("legality_divergent", HEADER + SIGNATURE.format(name="legality_divergent") + PRELUDE +
                  "    pid = tl.program_id(0)\n    if pid < n:\n        g = HITS.append\n        g(pid)  # here\n")
    calls: list[object] = kernel.fn.__globals__["HITS"]
    x = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    with tl.backend("numpy"), pytest.raises(tl.KernelError, match="call to list.append: a kernel may only") as caught:
        out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        kernel[(4,)](tl.to_device(x, tl.f32), out, 2, B=16)
    assert calls == [] and np.isnan(out.numpy()).all()
    assert caught.value.lineno == _marked_line(kernel)


def test_tile_lang_check_reports_the_same_refusal(tmp_path: Path) -> None:
    path = tmp_path / "bad_kernels.py"
    path.write_text(HEADER + SIGNATURE.format(name="bad") + PRELUDE + "    while n > 0:\n        n -= 1\n    else:\n"
                    "        pass\n")
    reports = [r for r in check(str(path), {"B": 16}) if r.kernel == "bad"]
    assert [r.outcome for r in reports] == [Outcome.ERROR]
    assert f"{path}:{9 + 3}:" in reports[0].message and "while ... else is not supported" in reports[0].message


@pytest.mark.parametrize("backend", ["numpy", NAME])
def test_what_the_compiler_accepts_still_runs(backend: str) -> None:
    """Tensor methods, tl builtins, min/max/len on constexprs, isinstance, f-strings, static_print."""
    kernel = load("legality_accepted", HEADER + SIGNATURE.format(name="legality_accepted") + textwrap.indent(
        textwrap.dedent("""\
            offs = tl.arange(0, min(B, 64))
            tl.static_print(f"B={B}", len((1, 2)))
            x = tl.load(x_ptr + offs)
            y = x.to(tl.f32) * max(2, 1) if isinstance(B, int) else x
            for i in tl.static_range(2):
                y = y + i
            tl.store(o_ptr + offs, y, mask=offs.lt(n))
        """), "    "))
    x = np.random.default_rng(2).standard_normal(16).astype(np.float32)
    with tl.backend(backend):
        out = tl.to_device(np.full(16, np.nan, np.float32), tl.f32)
        kernel[(1,)](tl.to_device(x, tl.f32), out, 12, B=16)
    got = out.numpy()
    np.testing.assert_allclose(got[:12], x[:12].astype(np.float64) * 2 + 1, rtol=1e-6)
    assert np.isnan(got[12:]).all()
