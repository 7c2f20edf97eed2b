"""The kernel-forms benchmark on a GPU, in one process: each form of ``benchmarks/form_kernels.py``
against its Triton twin (``benchmarks/triton_kernels.py``) on the same tiles, warps and stages,
with torch (cuBLAS, SDPA's flash backend, its row kernels) as a third column. Before timing, every
row's tile_lang and Triton results are checked against torch in f32 on outputs poisoned first.

    python -m benchmarks.forms_bench [--quick] [--only FORM ...] [--json PATH]

Prints a markdown table (TFLOP/s, GB/s for the row kernels; the ratio is tile_lang's speed over
Triton's, medians of ``triton.testing.do_bench``), then the median and the worst ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

try:
    import torch
    import triton

    from benchmarks import triton_kernels as T
except ImportError as missing:
    raise SystemExit(f"benchmarks.forms_bench needs torch and triton with a CUDA GPU: {missing}") from None

import tile_lang as tl
from benchmarks import dot_kernels as D
from benchmarks import form_kernels as F

Launch = Callable[[], Any]
NAN = float("nan")


@dataclass
class Row:
    """One measured case: its form, what it ran, medians in ms by column, errors by side."""

    form: str
    case: str
    unit: str  # "TFLOP/s" or "GB/s"
    work: float  # flops or bytes
    ms: dict[str, float] = field(default_factory=dict)
    err: dict[str, float] = field(default_factory=dict)
    first_launch_s: float = NAN

    def rate(self, who: str) -> float:
        scale = 1e12 if self.unit == "TFLOP/s" else 1e9
        return self.work / (self.ms[who] * 1e-3) / scale if who in self.ms else NAN

    @property
    def ratio(self) -> float:
        return self.ms["triton"] / self.ms["tile_lang"]


def median_ms(fn: Launch) -> float:
    ms: float = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
    return ms


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in f64; NaN (an unwritten poisoned element) stays NaN."""
    return float(((out.double() - ref.double()).norm() / ref.double().norm()).item())


def measure(row: Row, checks: list[tuple[torch.Tensor, torch.Tensor]], tol: float, sides: dict[str, Launch],
            torch_fn: Launch | None = None, prepare: Launch | None = None, reset: Launch | None = None) -> Row:
    """Check each side's outputs against their references (``checks``: (output, reference)
    pairs; each side run after ``prepare``, which poisons the outputs with NaN unless given), then
    time both sides (each launch after ``reset`` where given) and the torch column."""
    def poison() -> None:
        for out, _ in checks:
            out.fill_(NAN)

    for who, fn in sides.items():
        (prepare or poison)()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        if who == "tile_lang":
            row.first_launch_s = time.perf_counter() - start
        row.err[who] = max(rel_err(out, ref) for out, ref in checks)
        if not row.err[who] < tol:
            raise AssertionError(f"{row.form} {row.case} ({who}): relative error {row.err[who]:.2e} >= {tol}")
    timed = {who: (lambda fn=fn: (reset(), fn())) if reset else fn for who, fn in sides.items()}
    row.ms = {who: median_ms(fn) for who, fn in dict(timed, **({"torch": torch_fn} if torch_fn else {})).items()}
    return row


def opts(warps: int, stages: int) -> tl.Options:
    return tl.Options(num_warps=warps, num_stages=stages)


def randn(*shape: int, dtype: torch.dtype = torch.float16) -> torch.Tensor:
    return torch.randn(*shape, device="cuda").to(dtype)


def empty(*shape: int, dtype: torch.dtype = torch.float16) -> torch.Tensor:
    return torch.full(shape, NAN, device="cuda", dtype=dtype)


def f32_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(a.float(), b.float())


DT = {torch.float16: "f16", torch.bfloat16: "bf16"}
BM, BN, BK = 128, 256, 64  # the tutorial's Hopper config, 8 warps and 3 stages throughout
WARPS, STAGES = 8, 3
TOL = 1e-2  # 16-bit outputs of f32 accumulations


def _mm_row(form: str, shape: str, dtype: torch.dtype, flops: float) -> Row:
    return Row(form, f"{DT[dtype]} {shape}", "TFLOP/s", flops)


def tutorial(n: int, dtype: torch.dtype) -> Row:
    """(a) 2-D grid, pointers stepped, no masks."""
    a, b, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    grid = (n // BM, n // BN)
    return measure(_mm_row("tutorial", f"{n}^3", dtype, 2.0 * n**3), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_tutorial[grid, opts(WARPS, STAGES)](a, b, c, n, n, n, n, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_tutorial[grid](a, b, c, n, n, n, n, num_warps=WARPS, num_stages=STAGES, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def grouped(m: int, n: int, k: int, dtype: torch.dtype) -> Row:
    """(b) GROUP_M swizzle, masked K loop, int64 offsets, all strides passed."""
    a, b, c = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype), empty(m, n, dtype=dtype)
    grid = (triton.cdiv(m, BM) * triton.cdiv(n, BN),)
    args = (a, b, c, m, n, k, k, 1, n, 1, n, 1)  # the six strides, contiguous
    return measure(_mm_row("grouped", f"{m}x{n}x{k}", dtype, 2.0 * m * n * k), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_grouped[grid, opts(WARPS, STAGES)](*args, GROUP_M=8, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_grouped[grid](*args, num_warps=WARPS, num_stages=STAGES, GROUP_M=8, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def persistent(m: int, n: int, k: int, dtype: torch.dtype) -> Row:
    """(k) one program an SM walking the tiles in the grouped order, ``tl.range(..., flatten=True)``."""
    a, b, c = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype), empty(m, n, dtype=dtype)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = (min(sms, triton.cdiv(m, BM) * triton.cdiv(n, BN)),)
    args = (a, b, c, m, n, k, k, 1, n, 1, n, 1)
    return measure(_mm_row("persistent", f"{m}x{n}x{k}", dtype, 2.0 * m * n * k), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_persistent[grid, opts(WARPS, STAGES)](*args, BM=BM, BN=BN, BK=BK, GROUP_M=8,
                                                                          NUM_SMS=sms),
        "triton": lambda: T.tt_mm_persistent[grid](*args, num_warps=WARPS, num_stages=STAGES, BM=BM, BN=BN, BK=BK,
                                                  GROUP_M=8, NUM_SMS=sms)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def offsets(n: int, dtype: torch.dtype) -> Row:
    """(c) operand addresses recomputed from k each iteration."""
    a, b, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    grid = (n // BM, n // BN)
    return measure(_mm_row("offsets", f"{n}^3", dtype, 2.0 * n**3), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_offsets_from_k[grid, opts(WARPS, STAGES)](a, b, c, n, n, n, n, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_offsets_from_k[grid](a, b, c, n, n, n, n, num_warps=WARPS, num_stages=STAGES,
                                                       BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def transposed_b(n: int, dtype: torch.dtype) -> Row:
    """(d) C = A @ W.T, W [N, K] row-major, its tile transposed after the load."""
    a, w, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    grid = (n // BM, n // BN)
    return measure(_mm_row("transposed_b", f"{n}^3", dtype, 2.0 * n**3), [(c, f32_mm(a, w.T))], TOL, {
        "tile_lang": lambda: F.mm_bt[grid, opts(WARPS, STAGES)](a, w, c, n, n, n, n, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_bt[grid](a, w, c, n, n, n, n, num_warps=WARPS, num_stages=STAGES, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.matmul(a, w.T, out=c))


def batched(z: int, n: int, dtype: torch.dtype) -> Row:
    """(e) 3-D grid over the batch."""
    a, b, c = randn(z, n, n, dtype=dtype), randn(z, n, n, dtype=dtype), empty(z, n, n, dtype=dtype)
    grid = (n // BM, n // BN, z)
    args = (a, b, c, n, a.stride(0), n, b.stride(0), n, c.stride(0), n)
    return measure(_mm_row("batched", f"{z}x{n}^3", dtype, 2.0 * z * n**3), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_batched[grid, opts(WARPS, STAGES)](*args, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_batched[grid](*args, num_warps=WARPS, num_stages=STAGES, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.bmm(a, b, out=c))


def split_k(m: int, n: int, k: int, split: int, dtype: torch.dtype) -> Row:
    """(f) K in ``split`` slices added into an f32 C with atomics: checked from a random start
    value (every element must receive its sum), timed with the zeroing of C on both sides."""
    a, b, c = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype), empty(m, n, dtype=torch.float32)
    start = torch.randn(m, n, device="cuda")
    grid = (m // BM, n // BN, split)

    def ours() -> None:
        F.mm_split_k[grid, opts(WARPS, STAGES)](a, b, c, k, k, n, n, SPLIT_K=split, BM=BM, BN=BN, BK=BK)

    def theirs() -> None:
        T.tt_mm_split_k[grid](a, b, c, k, k, n, n, num_warps=WARPS, num_stages=STAGES, SPLIT_K=split, BM=BM, BN=BN, BK=BK)

    return measure(_mm_row("split_k", f"{m}x{n}x{k} split {split}", dtype, 2.0 * m * n * k),
                   [(c, start + f32_mm(a, b))], 1e-4, {"tile_lang": ours, "triton": theirs},
                   torch_fn=lambda: torch.matmul(a, b), prepare=lambda: c.copy_(start), reset=c.zero_)


def epilogue(n: int, leaky: bool, dtype: torch.dtype = torch.float16) -> Row:
    """(g) bias + ReLU or leaky ReLU fused, every edge masked (n need not divide the tiles)."""
    a, b, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    bias = randn(n, dtype=dtype)
    grid = (triton.cdiv(n, BM), triton.cdiv(n, BN))
    args = (a, b, bias, c, n, n, n, n, n, n)
    act: Callable[[torch.Tensor], torch.Tensor] = (
        (lambda x: torch.nn.functional.leaky_relu(x, 0.01)) if leaky else torch.relu)
    return measure(_mm_row("epilogue", f"{n}^3 +bias, {'leaky ' if leaky else ''}relu", dtype, 2.0 * n**3),
                   [(c, act(f32_mm(a, b) + bias.float()))], TOL, {
        "tile_lang": lambda: F.mm_bias_act[grid, opts(WARPS, STAGES)](*args, LEAKY=leaky, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_bias_act[grid](*args, num_warps=WARPS, num_stages=STAGES, LEAKY=leaky, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: act(torch.addmm(bias, a, b)))


def block_ptr(n: int, dtype: torch.dtype) -> Row:
    """(h) tl.make_block_ptr + tl.advance, both dims bounds-checked."""
    a, b, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    grid = (triton.cdiv(n, BM), triton.cdiv(n, BN))
    args = (a, b, c, n, n, n, n, n, n)
    return measure(_mm_row("block_ptr", f"{n}^3", dtype, 2.0 * n**3), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: F.mm_block_ptr[grid, opts(WARPS, STAGES)](*args, BM=BM, BN=BN, BK=BK),
        "triton": lambda: T.tt_mm_block_ptr[grid](*args, num_warps=WARPS, num_stages=STAGES, BM=BM, BN=BN, BK=BK)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def descriptor(n: int, dtype: torch.dtype) -> Row:
    """(h) tensor descriptors: ``dot_kernels.matmul_tma`` and its twin (grouped 1-D grid)."""
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    a, b, c = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype), empty(n, n, dtype=dtype)
    grid = (triton.cdiv(n, 128) * triton.cdiv(n, 256),)
    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
    return measure(_mm_row("descriptor", f"{n}^3", dtype, 2.0 * n**3), [(c, f32_mm(a, b))], TOL, {
        "tile_lang": lambda: D.matmul_tma[grid, opts(WARPS, STAGES)](a, b, c, n, n, n, BLOCK_M=128, BLOCK_N=256,
                                                                      BLOCK_K=64, GROUP_M=8),
        "triton": lambda: T.tt_matmul_tma[grid](a, b, c, n, n, n, num_warps=WARPS, num_stages=STAGES, **consts)},
        torch_fn=lambda: torch.matmul(a, b, out=c))


def attention(head: int, causal: bool, batch: int = 4, heads: int = 32, seq: int = 4096) -> Row:
    """(i) flash attention forward on [B, H, S, D]; the extra column is SDPA's flash backend."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    bm, bn, warps = (128, 64, 4) if head == 64 else (128, 32, 8)
    q, k, v = (randn(batch, heads, seq, head) for _ in range(3))
    o = empty(batch, heads, seq, head)
    scale = head ** -0.5
    ref = torch.stack([sdpa(q[z].float(), k[z].float(), v[z].float(), is_causal=causal, scale=scale)
                       for z in range(batch)])
    grid = (seq // bm, batch * heads)
    args = (q, k, v, o, q.stride(0), q.stride(1), q.stride(2), heads, seq, scale)
    consts = dict(BM=bm, BN=bn, HEAD=head, CAUSAL=causal)

    def flash() -> torch.Tensor:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return sdpa(q, k, v, is_causal=causal, scale=scale)

    flops = 4.0 * batch * heads * seq * seq * head * (0.5 if causal else 1.0)
    row = Row("attention", f"f16 {batch}x{heads}x{seq} d{head}{' causal' if causal else ''} ({bm}x{bn}, {warps} warps)",
              "TFLOP/s", flops)
    return measure(row, [(o, ref)], TOL, {
        "tile_lang": lambda: F.attention_4d[grid, opts(warps, STAGES)](*args, BM=bm, BN=bn, HEAD=head, CAUSAL=causal),
        "triton": lambda: T.tt_attention_4d[grid](*args, num_warps=warps, num_stages=STAGES, **consts)},
        torch_fn=flash)


def softmax(m: int, n: int, warps: int = 8) -> Row:
    """(j) row softmax, f16 in and out: bytes = one read and one write."""
    x, y = randn(m, n), empty(m, n)
    block = triton.next_power_of_2(n)
    return measure(Row("rows", f"softmax f16 {m}x{n} ({warps} warps)", "GB/s", 2.0 * 2 * m * n),
                   [(y, torch.softmax(x.float(), 1))], TOL, {
        "tile_lang": lambda: F.softmax_rows[(m,), tl.Options(num_warps=warps)](x, y, n, n, BLOCK=block),
        "triton": lambda: T.tt_softmax_rows[(m,)](x, y, n, n, BLOCK=block, num_warps=warps)},
        torch_fn=lambda: torch.softmax(x, 1))


def layer_norm(m: int, n: int, warps: int = 8) -> Row:
    """(j) layer norm forward, f16 in and out, the rows' mean and 1/std saved in f32."""
    x, y, w, b = randn(m, n), empty(m, n), randn(n), randn(n)
    mean, rstd = empty(m, dtype=torch.float32), empty(m, dtype=torch.float32)
    block = triton.next_power_of_2(n)
    args = (x, y, w, b, mean, rstd, n, n, 1e-5)
    x32 = x.float()
    checks = [(y, torch.nn.functional.layer_norm(x32, (n,), w.float(), b.float(), 1e-5)), (mean, x32.mean(1)),
              (rstd, (x32.var(1, unbiased=False) + 1e-5).rsqrt())]
    return measure(Row("rows", f"layer norm f16 {m}x{n} ({warps} warps)", "GB/s", 2.0 * 2 * m * n), checks, TOL, {
        "tile_lang": lambda: F.layer_norm_rows[(m,), tl.Options(num_warps=warps)](*args, BLOCK=block),
        "triton": lambda: T.tt_layer_norm_rows[(m,)](*args, BLOCK=block, num_warps=warps)},
        torch_fn=lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5))


F16, BF16 = torch.float16, torch.bfloat16
# form -> (the quick cases, the rest of the full run), each case a thunk making one row
FORMS: dict[str, tuple[list[Callable[[], Row]], list[Callable[[], Row]]]] = {
    "tutorial": ([lambda: tutorial(4096, F16)],
                 [lambda: tutorial(4096, BF16), lambda: tutorial(8192, F16), lambda: tutorial(8192, BF16)]),
    "grouped": ([lambda: grouped(4096, 4096, 4096, F16)],
                [lambda: grouped(8192, 8192, 8192, F16), lambda: grouped(4000, 4000, 4000, F16)]),
    "persistent": ([lambda: persistent(8192, 8192, 512, F16)], [lambda: persistent(4096, 4096, 4096, F16)]),
    "offsets": ([lambda: offsets(4096, F16)], [lambda: offsets(8192, F16)]),
    "transposed_b": ([lambda: transposed_b(4096, F16)], [lambda: transposed_b(8192, F16)]),
    "batched": ([lambda: batched(8, 2048, F16)], [lambda: batched(4, 4096, F16)]),
    "split_k": ([lambda: split_k(2048, 2048, 16384, 4, F16)], [lambda: split_k(4096, 4096, 4096, 2, F16)]),
    "epilogue": ([lambda: epilogue(4000, False)], [lambda: epilogue(4000, True)]),
    "block_ptr": ([lambda: block_ptr(4096, F16)], [lambda: block_ptr(8192, F16)]),
    "descriptor": ([lambda: descriptor(4096, F16)], [lambda: descriptor(8192, F16)]),
    "attention": ([lambda: attention(64, False)],
                  [lambda: attention(64, True), lambda: attention(128, False), lambda: attention(128, True)]),
    "rows": ([lambda: softmax(16384, 4096)], [lambda: layer_norm(16384, 4096)]),
}


def table(rows: list[Row]) -> str:
    lines = ["| form | case | unit | tile_lang | Triton | torch | ratio to Triton | first launch s |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.form} | {r.case} | {r.unit} | {r.rate('tile_lang'):.1f} | {r.rate('triton'):.1f} | "
              f"{r.rate('torch'):.1f} | {r.ratio:.3f} | {r.first_launch_s:.2f} |" for r in rows]
    ratios = [r.ratio for r in rows]
    worst = min(rows, key=lambda r: r.ratio)
    lines.append(f"\nratio to Triton over {len(rows)} rows: median {statistics.median(ratios):.3f}, "
                 f"worst {worst.ratio:.3f} ({worst.form} {worst.case})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="each kernel form against its Triton twin (benchmarks/form_kernels.py)")
    parser.add_argument("--quick", action="store_true", help="one case a form (a smoke run)")
    parser.add_argument("--only", action="append", choices=sorted(FORMS), metavar="FORM",
                        help=f"run only this form (repeatable): {', '.join(FORMS)}")
    parser.add_argument("--json", help="write the rows (medians in ms, errors, ratios) to this path")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("benchmarks.forms_bench: torch sees no CUDA GPU here; run it on the GPU machine")
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 references stay f32
    rows: list[Row] = []
    failed: list[str] = []  # a case that did not compile, run or check: the rest still run
    with tl.backend("cupy"):
        for form in args.only or FORMS:
            quick, rest = FORMS[form]
            for case in quick + ([] if args.quick else rest):
                try:
                    rows.append(case())
                except Exception as error:  # noqa: BLE001 (reported below and in the exit status)
                    failed.append(f"{form}: {type(error).__name__}: {error}")
                    print(f"FAILED {failed[-1]}", flush=True)
                    continue
                print(f"{rows[-1].form} {rows[-1].case}: ratio {rows[-1].ratio:.3f}", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            found = [dict(asdict(r), ratio=r.ratio, rates={who: r.rate(who) for who in r.ms}) for r in rows]
            json.dump({"device": torch.cuda.get_device_name(), "rows": found, "failed": failed}, out, indent=1)
    if rows:
        print(table(rows), flush=True)
    if failed:
        raise SystemExit("failed cases:\n" + "\n".join(failed))


if __name__ == "__main__":
    main()
