"""Flash attention forward + backward and backward alone on a GPU, in one process: the tile_lang
kernels of ``examples/flash_attention.py`` against their Triton twins (``benchmarks/triton_kernels.py``,
the same tiles, warps and stages), against the twins with the backward's operands loaded once and
used transposed as Triton's tutorial loads them (``tl.trans``), and against torch SDPA's flash
backend on the same 4-D tensors.

    python -m benchmarks.attention_bench [--quick] [--json PATH]
    python -m tile_lang.as_triton -m benchmarks.attention_bench --cpu   # the checks alone, on the CPU

Before timing, every side's o, dq, dk and dv (outputs poisoned with NaN first), and the autograd
op of ``examples/torch_attention.py``, are checked against SDPA's f32 math backend on the same f16
inputs. TFLOP/s from ``triton.testing.do_bench`` medians; the forward does 4*B*H*S*S*D FLOPs (half
when causal), the backward 2.5 times that. ``--cpu`` runs the checks alone at small shapes on CPU
tensors: tile_lang on the NumPy reference, the Triton twins through tile_lang's Triton shim.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

try:
    import torch
    import triton
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from benchmarks import triton_kernels as T
except ImportError as missing:
    raise SystemExit(f"benchmarks.attention_bench needs torch and triton with a CUDA GPU: {missing}") from None

import tile_lang as tl
from examples import flash_attention as A
from examples.torch_attention import attention

NAN = float("nan")
TOL = 1e-2  # f16 outputs of f32 accumulations
SIDES = ("tile_lang", "triton", "triton_trans", "sdpa")  # triton_trans: the tutorial's single loads


@dataclass
class Row:
    """One case: its shape, medians in ms by (side, "fwd+bwd" | "bwd"), worst relative error by side."""

    head: int
    causal: bool
    shape: A.Shape
    ms: dict[str, float] = field(default_factory=dict)
    err: dict[str, float] = field(default_factory=dict)

    @property
    def fwd_flops(self) -> float:
        s = self.shape
        return 4.0 * s.batch * s.heads * s.seq * s.seq * s.head * (0.5 if self.causal else 1.0)

    def rate(self, side: str, what: str) -> float:
        flops = self.fwd_flops * (3.5 if what == "fwd+bwd" else 2.5)
        key = f"{side} {what}"
        return flops / (self.ms[key] * 1e-3) / 1e12 if key in self.ms else NAN


@dataclass
class Tensors:
    """One case's inputs, the outputs and scratch every side writes, and the f32 references."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    do: torch.Tensor
    o: torch.Tensor
    lse: torch.Tensor
    delta: torch.Tensor
    dq: torch.Tensor
    dk: torch.Tensor
    dv: torch.Tensor
    want: tuple[torch.Tensor, ...] = ()

    def outputs(self) -> tuple[torch.Tensor, ...]:
        return (self.o, self.dq, self.dk, self.dv)

    def poison(self) -> None:
        for t in (*self.outputs(), self.lse, self.delta):
            t.fill_(NAN)


def make(shape: A.Shape, causal: bool, scale: float, device: str) -> Tensors:
    dims = (shape.batch, shape.heads, shape.seq, shape.head)
    q, k, v, do = (torch.randn(dims, device=device, dtype=torch.float16) for _ in range(4))
    out = [torch.empty(dims, device=device, dtype=torch.float16) for _ in range(4)]
    rows = [torch.empty(dims[:3], device=device, dtype=torch.float32) for _ in range(2)]
    t = Tensors(q, k, v, do, out[0], rows[0], rows[1], out[1], out[2], out[3])
    t.want = reference(t, causal, scale)
    return t


def reference(t: Tensors, causal: bool, scale: float) -> tuple[torch.Tensor, ...]:
    """o, dq, dk, dv by SDPA's math backend in f32, one batch at a time (its score matrix is large)."""
    found: list[list[torch.Tensor]] = [[], [], [], []]
    for z in range(t.q.shape[0]):
        ins = [x[z].float().requires_grad_() for x in (t.q, t.k, t.v)]
        with sdpa_kernel(SDPBackend.MATH):
            o = sdpa(ins[0], ins[1], ins[2], is_causal=causal, scale=scale)
        grads = torch.autograd.grad(o, ins, t.do[z].float())
        for got, value in zip(found, (o.detach(), *grads)):
            got.append(value)
    return tuple(torch.stack(parts) for parts in found)


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in f64; NaN (a poisoned element left unwritten) stays NaN."""
    return float(((out.double() - ref.double()).norm() / ref.double().norm()).item())


def worst(got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...]) -> float:
    return max(rel_err(g, w) for g, w in zip(got, want))


@dataclass
class Side:
    """One side's forward and backward launches, and what they computed: (o, dq, dk, dv)."""

    fwd: Callable[[], None]
    bwd: Callable[[], None]
    results: Callable[[], tuple[torch.Tensor, ...]]

    def both(self) -> None:
        self.fwd()
        self.bwd()


def tile_lang_side(t: Tensors, shape: A.Shape, causal: bool, scale: float, config: A.Config) -> Side:
    """The forward and the backward launches of the tile_lang kernels (what the autograd op runs)."""
    q, k, v, o, do, dq, dk, dv = (tl.wrap(x, tl.f16) for x in (t.q, t.k, t.v, t.o, t.do, t.dq, t.dk, t.dv))
    lse, delta = tl.wrap(t.lse, tl.f32), tl.wrap(t.delta, tl.f32)

    def fwd() -> None:
        A.forward(q, k, v, o, lse, shape, causal, scale, config)

    def bwd() -> None:
        A.backward(q, k, v, o, do, lse, delta, dq, dk, dv, shape, causal, scale, config)

    return Side(fwd, bwd, t.outputs)


def triton_side(t: Tensors, shape: A.Shape, causal: bool, scale: float, config: A.Config, trans: bool) -> Side:
    """The same launches of the Triton twins: the grids of ``A.forward`` and ``A.backward``; with
    ``trans``, the backward's operands loaded once and used transposed too, as Triton's tutorial does."""
    f, kv, d, st = config.fwd, config.dkdv, config.dq, config.stages
    dkdv, dq = (T.tt_attention_dkdv_trans, T.tt_attention_dq_trans) if trans else (T.tt_attention_dkdv, T.tt_attention_dq)

    def fwd() -> None:
        T.tt_attention_fwd[shape.grid(f.bm)](t.q, t.k, t.v, t.o, t.lse, shape.seq, scale, BM=f.bm, BN=f.bn,
                                             HEAD=shape.head, CAUSAL=causal, num_warps=f.warps, num_stages=st)

    def bwd() -> None:
        T.tt_attention_preprocess[shape.grid(d.bm)](t.o, t.do, t.delta, shape.seq, BM=d.bm, HEAD=shape.head,
                                                    num_warps=d.warps)
        dkdv[shape.grid(kv.bn)](t.q, t.k, t.v, t.do, t.lse, t.delta, t.dk, t.dv, shape.seq, scale,
                                  BM=kv.bm, BN=kv.bn, HEAD=shape.head, CAUSAL=causal, num_warps=kv.warps,
                                  num_stages=st)
        dq[shape.grid(d.bm)](t.q, t.k, t.v, t.do, t.lse, t.delta, t.dq, shape.seq, scale, BM=d.bm, BN=d.bn,
                             HEAD=shape.head, CAUSAL=causal, num_warps=d.warps, num_stages=st)

    return Side(fwd, bwd, t.outputs)


def sdpa_side(t: Tensors, causal: bool, scale: float) -> Side:
    """SDPA's flash backend: the forward keeps its graph for the backward (o and the gradients
    are new tensors of torch's, not the shared outputs)."""
    ins = [x.detach().requires_grad_() for x in (t.q, t.k, t.v)]
    found: list[torch.Tensor] = [torch.full_like(t.q, NAN) for _ in range(4)]

    def fwd() -> None:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            found[0] = sdpa(ins[0], ins[1], ins[2], is_causal=causal, scale=scale)

    def bwd() -> None:
        found[1:] = torch.autograd.grad(found[0], ins, t.do, retain_graph=True)

    return Side(fwd, bwd, lambda: tuple(x.detach() for x in found))


def median_ms(fn: Callable[[], Any]) -> float:
    ms: float = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
    return ms


def check_op(t: Tensors, causal: bool, scale: float) -> float:
    """The autograd op (forward and backward through torch) against the reference."""
    ins = [x.detach().requires_grad_() for x in (t.q, t.k, t.v)]
    o = attention(ins[0], ins[1], ins[2], causal, scale)
    return worst((o.detach(), *torch.autograd.grad(o, ins, t.do)), t.want)


def measure(shape: A.Shape, causal: bool, device: str = "cuda") -> Row:
    """Check every side (poisoned outputs) and the autograd op, then on CUDA time fwd+bwd and
    bwd alone."""
    head = shape.head
    scale, config = head ** -0.5, A.hopper_config(head)
    t = make(shape, causal, scale, device)
    row = Row(head, causal, shape)
    sides = {"tile_lang": tile_lang_side(t, shape, causal, scale, config),
             "triton": triton_side(t, shape, causal, scale, config, trans=False),
             "triton_trans": triton_side(t, shape, causal, scale, config, trans=True), "sdpa": sdpa_side(t, causal, scale)}
    for side, run in sides.items():
        t.poison()
        run.fwd()
        run.bwd()
        if device == "cuda":
            torch.cuda.synchronize()
        row.err[side] = worst(run.results(), t.want)
        if not row.err[side] < TOL:
            raise AssertionError(f"d{head}{' causal' if causal else ''} ({side}): relative error {row.err[side]:.2e}")
    row.err["tile_lang op"] = check_op(t, causal, scale)
    if not row.err["tile_lang op"] < TOL:
        raise AssertionError(f"d{head} autograd op: relative error {row.err['tile_lang op']:.2e}")
    for side, run in sides.items() if device == "cuda" else ():
        run.fwd()
        row.ms[f"{side} bwd"] = median_ms(run.bwd)
        row.ms[f"{side} fwd+bwd"] = median_ms(run.both)
    return row


CASES = [(64, False), (64, True), (128, False), (128, True)]


def table(rows: list[Row]) -> str:
    """Rates by side and the ratios of tile_lang's to each other side's, then the ratios' medians."""
    lines = ["| case | what | tile_lang | Triton twin | Triton tl.trans | SDPA flash | to twin | to tl.trans | to SDPA |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios: dict[str, list[float]] = {side: [] for side in SIDES[1:]}
    for r in rows:
        for what in ("fwd+bwd", "bwd"):
            rates = [r.rate(side, what) for side in SIDES]
            for side, rate in zip(SIDES[1:], rates[1:]):
                ratios[side].append(rates[0] / rate)
            lines.append(f"| d{r.head}{' causal' if r.causal else ''} | {what} | "
                         + " | ".join(f"{x:.1f}" for x in rates) + " | "
                         + " | ".join(f"{rates[0] / x:.3f}" for x in rates[1:]) + " |")
    s = rows[0].shape
    lines.append(f"\nTFLOP/s, f16 {s.batch}x{s.heads} heads, seq {s.seq}; tile_lang's ratio, median (worst): "
                 + ", ".join(f"to {side} {statistics.median(v):.3f} ({min(v):.3f})" for side, v in ratios.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="flash attention backward against Triton's twin and SDPA")
    parser.add_argument("--quick", action="store_true", help="d64 non-causal only (a smoke run)")
    parser.add_argument("--json", help="write the rows (medians in ms, errors, rates) to this path")
    parser.add_argument("--cpu", action="store_true", help="the checks alone at 1x2 heads, seq 200 (a multiple of "
                        "none of the blocks), on CPU tensors (run under python -m tile_lang.as_triton)")
    args = parser.parse_args(argv)
    if args.cpu:
        with tl.backend("numpy"):
            for head, causal in CASES:
                print(f"d{head}{' causal' if causal else ''}: errors {measure(A.Shape(1, 2, 200, head), causal, 'cpu').err}")
        return
    if not torch.cuda.is_available():
        raise SystemExit("benchmarks.attention_bench: torch sees no CUDA GPU here; run it on the GPU machine")
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 references stay f32
    rows: list[Row] = []
    with tl.backend("cupy"):
        for head, causal in CASES[:1] if args.quick else CASES:
            rows.append(measure(A.Shape(4, 32, 4096, head), causal))
            print(f"d{head}{' causal' if causal else ''}: errors {rows[-1].err}", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            found = [dict(asdict(r), rates={f"{s} {w}": r.rate(s, w) for s in SIDES for w in ("fwd+bwd", "bwd")})
                     for r in rows]
            json.dump({"device": torch.cuda.get_device_name(), "rows": found}, out, indent=1)
    print(table(rows), flush=True)


if __name__ == "__main__":
    main()
