"""Flash attention forward (with its saved log-sum-exp) and backward (examples/flash_attention.py)
on the NumPy reference and the emulated CUDA against float64 NumPy, outputs poisoned with NaN
first; the torch autograd op (examples/torch_attention.py) against SDPA's gradients on CPU; and the
kernels at the benchmark's configs through ptxas for sm_90a: wgmma, no spills, no serialised wgmma."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from examples import flash_attention as A
from tests.compiler.conftest import NVCC, sm90a_report
from tests.compiler.emulator import EMULATOR, NAME as EMU
from tests.test_form_kernels import BENCHMARKS, _statements
from tile_lang import dtypes, registry
from tile_lang.compiler import compile_ir, static_spec
from tile_lang.compiler.ir import LoopAttr, Op, walk
from tile_lang.compiler.spec import Spec, int_spec
from tile_lang_cupy.codegen import generate

Array = np.ndarray[Any, Any]
SMALL = A.Config(A.Tiles(16, 16, 1), A.Tiles(16, 32, 1), A.Tiles(32, 16, 1), stages=2)  # one warp: emulator-sized


def causal_mask(s: int) -> Array:
    return np.tril(np.ones((s, s), bool))


def attention_f64(q: Array, k: Array, v: Array, do: Array, causal: bool, scale: float) -> dict[str, Array]:
    """o, the natural log-sum-exp of the scaled scores, and dq, dk, dv of sum(o * do), in float64."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(causal_mask(s.shape[-1]), s, -np.inf)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - top)
    p = e / e.sum(-1, keepdims=True)
    o = p @ v
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (do * o).sum(-1, keepdims=True))
    return {"o": o, "lse": (top + np.log(e.sum(-1, keepdims=True)))[..., 0], "dq": ds @ k * scale,
            "dk": np.swapaxes(ds, -1, -2) @ q * scale, "dv": np.swapaxes(p, -1, -2) @ do}


def rel_err(out: Array, want: Array) -> float:
    """||out - want|| / ||want||; NaN where a poisoned element was left unwritten."""
    return float(np.linalg.norm(out.astype(np.float64) - want) / np.linalg.norm(want))


def run_attention(backend: str, shape: A.Shape, causal: bool, seed: int) -> tuple[dict[str, Array], dict[str, Array]]:
    """The kernels' results (lse in natural log) and the float64 reference, random f16 inputs."""
    rng = np.random.default_rng(seed)
    dims = (shape.batch, shape.heads, shape.seq, shape.head)
    q, k, v, do = (rng.standard_normal(dims).astype(np.float16) for _ in range(4))
    scale = shape.head ** -0.5
    with registry.backend(backend):
        ins = [tl.to_device(x) for x in (q, k, v, do)]
        o, dq, dk, dv = (tl.to_device(np.full(dims, np.nan, np.float16)) for _ in range(4))
        lse, delta = (tl.to_device(np.full(dims[:3], np.nan, np.float32)) for _ in range(2))
        A.forward(ins[0], ins[1], ins[2], o, lse, shape, causal, scale, SMALL)
        A.backward(ins[0], ins[1], ins[2], o, ins[3], lse, delta, dq, dk, dv, shape, causal, scale, SMALL)
        got = {"o": o.numpy(), "lse": lse.numpy() * np.log(2.0), "dq": dq.numpy(), "dk": dk.numpy(),
               "dv": dv.numpy()}
    return got, attention_f64(q, k, v, do, causal, scale)


@pytest.mark.parametrize("seq, head", [(64, 16), (128, 32), (40, 64)])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_and_gradients_match_float64(backend: str, seq: int, head: int, causal: bool) -> None:
    """o, the log-sum-exp, dq, dk and dv; 40 is not a multiple of the 16- or 32-row blocks, so
    the masked rows and keys are exercised."""
    got, want = run_attention(backend, A.Shape(1, 2, seq, head), causal, seed=seq + head + causal)
    for name in want:
        err = rel_err(got[name], want[name])
        assert err < (1e-5 if name == "lse" else 1e-2), (name, err)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq, head", [(128, 64), (72, 32)])
def test_autograd_op_matches_sdpa_gradients(causal: bool, seq: int, head: int) -> None:
    """examples/torch_attention.py on CPU float16 tensors (the NumPy reference) against torch's
    scaled_dot_product_attention and its backward in float64 on the same inputs."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from examples.torch_attention import attention

    gen = torch.Generator().manual_seed(seq + head + causal)
    q, k, v, do = (torch.randn(1, 2, seq, head, generator=gen).half() for _ in range(4))
    scale = 0.3
    ins = [x.clone().requires_grad_() for x in (q, k, v)]
    ref = [x.double().requires_grad_() for x in (q, k, v)]
    with tl.backend("numpy"):
        out = attention(ins[0], ins[1], ins[2], causal, scale)
        grads = torch.autograd.grad(out, ins, do)
    want = sdpa(ref[0], ref[1], ref[2], is_causal=causal, scale=scale)
    want_grads = torch.autograd.grad(want, ref, do.double())
    for name, got, exp in zip(("o", "dq", "dk", "dv"), (out, *grads), (want, *want_grads)):
        assert got.dtype == torch.float16, name
        err = float((got.detach().double() - exp.detach()).norm() / exp.detach().norm())
        assert err < 1e-2, (name, err)


def test_backward_runs_on_the_forwards_backend_from_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch runs a CUDA backward in a thread of its own, outside the caller's ``with
    tl.backend(...)``: the op's backward launches on the backend its forward ran on, not on the
    thread's default (here the emulator, by TILE_LANG_BACKEND, which cannot take torch tensors)."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    import threading

    from examples.torch_attention import attention

    gen = torch.Generator().manual_seed(3)
    q, k, v, do = (torch.randn(1, 1, 32, 16, generator=gen).half() for _ in range(4))
    ins = [x.clone().requires_grad_() for x in (q, k, v)]
    with tl.backend("numpy"):
        out = attention(ins[0], ins[1], ins[2], False, 0.25)
        want = torch.autograd.grad(out, ins, do, retain_graph=True)
    registry.register(EMULATOR)
    monkeypatch.setenv(registry.ENV_VAR, EMU)
    grads: list[Any] = []
    thread = threading.Thread(target=lambda: grads.extend(torch.autograd.grad(out, ins, do)))
    thread.start()
    thread.join()
    assert len(grads) == 3
    for got, exp in zip(grads, want):
        assert torch.equal(got, exp)


def test_autograd_op_refuses_other_dtypes() -> None:
    """A float32 input is a ValueError naming it, before anything runs."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    from examples.torch_attention import attention

    q = torch.zeros(1, 1, 16, 16, dtype=torch.float16)
    with pytest.raises(ValueError, match="k must be a 4-D float16 tensor"):
        attention(q, q.float(), q, False, 0.25)


HOPPER = {head: A.hopper_config(head) for head in (64, 128)}
PTXAS_CASES = [(name, head, causal) for name in ("attention_fwd", "attention_dkdv", "attention_dq")
               for head in (64, 128) for causal in (False, True)]


def _tiles(name: str, head: int) -> A.Tiles:
    config = HOPPER[head]
    return {"attention_fwd": config.fwd, "attention_dkdv": config.dkdv, "attention_dq": config.dq}[name]


def _bench_spec(kernel: Any, tiles: A.Tiles, stages: int, head: int, causal: bool) -> Spec:
    """The specialisation of a launch at seq 4096 (an int divisible by 16), aligned pointers."""
    static = static_spec(kernel, dict(BM=tiles.bm, BN=tiles.bn, HEAD=head, CAUSAL=causal), tiles.warps, dtypes.F16,
                         num_stages=stages, arch=90, pointees={"lse_ptr": dtypes.F32, "delta_ptr": dtypes.F32})
    return replace(static, args=tuple(int_spec(4096) if a.dtype == dtypes.I32 else a for a in static.args))


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: ptxas cannot check the sm_90a code")
@pytest.mark.parametrize("name, head, causal", PTXAS_CASES, ids=[f"{n}-d{h}-{'causal' if c else 'full'}"
                                                                for n, h, c in PTXAS_CASES])
def test_benchmark_configs_pass_ptxas_for_sm_90a(tmp_path: Path, name: str, head: int, causal: bool) -> None:
    """At the benchmark's tiles (seq a multiple of 16, as 4096 is): the key or query loop is
    pipelined, every 2-D block copied to shared memory by cp.async (none through registers), the
    dots on wgmma; ptxas neither spills nor serialises the wgmma;
    prints the registers a thread."""
    kernel = getattr(A, name)
    tiles = _tiles(name, head)
    fn = compile_ir(kernel, _bench_spec(kernel, tiles, HOPPER[head].stages, head, causal))
    nodes = walk(fn.body)
    (loop,) = [n for n in nodes if n.op is Op.FOR]
    assert isinstance(loop.attr, LoopAttr) and loop.attr.stages == HOPPER[head].stages
    # 2-D loads only of a row broadcast onto the fragments (lse[None, :], delta[None, :] of dk/dv)
    assert all(n.args[0].op is Op.BROADCAST for n in nodes if n.op is Op.LOAD and len(n.ty.shape) == 2)
    source = generate(fn).source
    assert "wgmma.mma_async" in source and "tl::cp_async<" in source
    report = sm90a_report(source, tmp_path)
    registers = re.search(r"Used (\d+) registers", report)
    assert registers is not None, report
    print(f"{name} d{head}{' causal' if causal else ''} {tiles}: {registers.group(1)} registers")


@pytest.mark.parametrize("head", [64, 128])
def test_rows_loaded_before_a_loop_are_staged_once_before_it(head: int) -> None:
    """dq's ``lse[:, None]`` and ``delta[:, None]``, rows loaded before its key loop and viewed
    inside it: their conversions to shared memory (and the views) leave the loop, so no
    iteration stages them behind two barriers each."""
    tiles = _tiles("attention_dq", head)
    fn = compile_ir(A.attention_dq, _bench_spec(A.attention_dq, tiles, HOPPER[head].stages, head, False))
    (loop,) = [n for n in fn.body.body if n.op is Op.FOR]
    rows = [n for n in fn.body.body if n.op is Op.CONVERT and n.ty.shape == (tiles.bm, 1)]
    assert [n.ty.dtype for n in rows] == [dtypes.F32, dtypes.F32]
    assert not [n for n in walk(loop.regions[0]) if n.op is Op.CONVERT and n.ty.dtype == dtypes.F32]


@pytest.mark.parametrize("head", [64, 128])
def test_dkdv_schedule_is_tritons(head: int) -> None:
    """dk/dv's loop as Triton schedules it: ``dv += p^T do`` and ``dk += ds^T q`` (A in registers)
    accumulate in place and run on while the next dot issues (a wait for the group before last,
    not for all), and the rows ``lse`` and ``delta`` are loaded before the dots that precede their
    use, so their latency hides under the tensor cores' work."""
    tiles = _tiles("attention_dkdv", head)
    source = generate(compile_ir(A.attention_dkdv, _bench_spec(A.attention_dkdv, tiles, HOPPER[head].stages, head,
                                                               False))).source
    loop = source[source.index("for (unsigned"):]
    waits = re.findall(r"tl::wgmma_commit_and_wait<(\d)>", loop)
    assert waits == ["0", "1", "0", "1"], waits  # p^T, dv, v do^T, dk
    dots = [m.start() for m in re.finditer(r"tl_wgmma_m64n\d+k16_f16_f16_kb\(", loop)]
    for row, dot in (("p_lse_ptr", 0), ("p_delta_ptr", 1)):
        first_dot = dots[0] if dot == 0 else dots[len(dots) // 2]  # the first of p^T's and of v do^T's
        assert loop.index(row) < first_dot, row


def test_every_kernel_has_a_triton_twin_statement_for_statement() -> None:
    """benchmarks/attention_bench.py compares one algorithm: each tt_attention_* twin in
    benchmarks/triton_kernels.py is its kernel's body with Triton's names (read by ast)."""
    names = {"ttl.float32": "tl.f32", "ttl.float16": "tl.f16", "ttl.": "tl."}
    twins = _statements(BENCHMARKS / "triton_kernels.py", "tt_")
    kernels = {name: body for name, body in _statements(Path(A.__file__), "").items()
               if name.startswith("attention_")}
    assert sorted(kernels) == ["attention_dkdv", "attention_dq", "attention_fwd", "attention_preprocess"]
    for name, body in kernels.items():
        twin = twins[name]
        for theirs, ours in names.items():
            twin = twin.replace(theirs, ours)
        assert twin == body, name


@pytest.mark.slow
def test_benchmark_checks_pass_on_the_cpu() -> None:
    """benchmarks/attention_bench.py --cpu: its checks of every side (tile_lang on the reference,
    the Triton twins through the shim, SDPA's flash backend, the autograd op) at seq 200."""
    pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    done = subprocess.run([sys.executable, "-m", "tile_lang.as_triton", "-m", "benchmarks.attention_bench", "--cpu"],
                          cwd=BENCHMARKS.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("errors") == 4, done.stdout
