"""The kernel forms of ``benchmarks/forms_bench.py`` (``benchmarks/form_kernels.py``) at tiny shapes
on the NumPy reference and the emulated CUDA against float64 NumPy, outputs poisoned first; and
each one's CUDA at the benchmark's config through ptxas for sm_90a: wgmma fed by asynchronous
copies (the loop pipelined), no spills, no wgmma serialised."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tile_lang as tl
from benchmarks import form_kernels as F
from tests.compiler.conftest import NVCC, sm90a_report
from tests.compiler.test_tensor_cores import _aligned_spec
from tile_lang import dtypes, registry
from tile_lang.compiler import compile_ir
from tile_lang_cupy.codegen import generate

pytestmark = pytest.mark.filterwarnings("ignore::tile_lang_numpy.engine.DivergenceWarning")  # the grouped form's min() on numpy

Array = np.ndarray[Any, Any]
BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
TILE = dict(BM=16, BN=32, BK=16)
HALF = {"f16": (np.float16, tl.f16), "bf16": (ml_dtypes.bfloat16, tl.bf16)}


def rand(rng: np.random.Generator, *shape: int, dt: str = "f16") -> Array:
    return rng.standard_normal(shape).astype(HALF[dt][0])


def dev(x: Array) -> tl.Buffer[Any]:
    return tl.to_device(x)


def run(backend: str, launch: Callable[..., None], *arrays: Array) -> list[Array]:
    """``launch`` on device copies of ``arrays`` under ``backend``; the copies back, in order."""
    with registry.backend(backend):
        bufs = [dev(x) for x in arrays]
        launch(*bufs)
        return [b.numpy() for b in bufs]


def close(out: Array, want: Array, tol: float) -> None:
    err = np.linalg.norm(out.astype(np.float64) - want) / np.linalg.norm(want)
    assert err < tol, err  # NaN (a poisoned element left unwritten) fails too


def poison(*shape: int, dt: str = "f16") -> Array:
    return np.full(shape, np.nan, HALF[dt][0])


def f64(x: Array) -> Array:
    return x.astype(np.float64)


def grid2(m: int, n: int) -> tuple[int, int]:
    return (tl.cdiv(m, TILE["BM"]), tl.cdiv(n, TILE["BN"]))


ONE_WARP = tl.Options(num_warps=1)


@pytest.mark.parametrize("name, dt", [("mm_tutorial", "f16"), ("mm_tutorial", "bf16"), ("mm_offsets_from_k", "bf16"),
                                      ("mm_bt", "f16")])
def test_unmasked_2d_forms_match_float64(backend: str, name: str, dt: str) -> None:
    """(a), (c), (d): M, N, K multiples of the tiles; B [K, N], or [N, K] for mm_bt."""
    rng = np.random.default_rng(len(name) + len(dt))
    m, n, k = 32, 64, 48
    bt = name == "mm_bt"
    a, b = rand(rng, m, k, dt=dt), rand(rng, *((n, k) if bt else (k, n)), dt=dt)
    kernel = getattr(F, name)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        kernel[grid2(m, n), ONE_WARP](a_, b_, c_, k, k, k if bt else n, n, BM=16, BN=32, BK=16)

    c = run(backend, launch, a, b, poison(m, n, dt=dt))[2]
    close(c, f64(a) @ (f64(b).T if bt else f64(b)), 1e-2 if dt == "bf16" else 2e-3)


@pytest.mark.parametrize("m, n, k", [(64, 96, 48), (40, 56, 40)])
def test_grouped_form_matches_float64_on_ragged_edges(backend: str, m: int, n: int, k: int) -> None:
    """(b): the swizzled 1-D grid covers every tile (a last group of fewer rows too), the
    wrapped rows and columns are stored only inside C, the K loop's ragged block reads zeros."""
    rng = np.random.default_rng(m + n + k)
    a, b = rand(rng, m, k), rand(rng, k, n)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        grid = (tl.cdiv(m, 16) * tl.cdiv(n, 32),)
        F.mm_grouped[grid, ONE_WARP](a_, b_, c_, m, n, k, k, 1, n, 1, n, 1, BM=16, BN=32, BK=16, GROUP_M=3)

    close(run(backend, launch, a, b, poison(m, n))[2], f64(a) @ f64(b), 2e-3)


@pytest.mark.parametrize("programs, k", [(3, 40), (7, 32), (64, 24)])
def test_persistent_form_covers_every_tile_once(backend: str, programs: int, k: int) -> None:
    """(k): fewer programs than tiles (each walks several, in the grouped order), as many, or more
    (the spare ones walk none); a ragged K block reads zeros; every C element written once."""
    rng = np.random.default_rng(programs + k)
    m, n = 48, 96  # 3 x 3 tiles: the contiguity hints hold
    a, b = rand(rng, m, k), rand(rng, k, n)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        F.mm_persistent[(programs,), ONE_WARP](a_, b_, c_, m, n, k, k, 1, n, 1, n, 1, **TILE, GROUP_M=2,
                                                NUM_SMS=programs)

    close(run(backend, launch, a, b, poison(m, n))[2], f64(a) @ f64(b), 2e-3)


def test_batched_form_matches_float64(backend: str) -> None:
    """(e): the batch on grid axis 2, each operand moved by its batch stride."""
    rng = np.random.default_rng(5)
    z, m, n, k = 3, 32, 64, 32
    a, b = rand(rng, z, m, k), rand(rng, z, k, n)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        F.mm_batched[(*grid2(m, n), z), ONE_WARP](a_, b_, c_, k, m * k, k, k * n, n, m * n, n, BM=16, BN=32, BK=16)

    close(run(backend, launch, a, b, poison(z, m, n))[2], f64(a) @ f64(b), 2e-3)


def test_split_k_form_adds_every_slice_into_the_start_value(backend: str) -> None:
    """(f): C starts random (not zero), so an element no slice reached, or one reached twice, shows."""
    rng = np.random.default_rng(6)
    m, n, k, split = 32, 64, 96, 3
    a, b = rand(rng, m, k), rand(rng, k, n)
    start = rng.standard_normal((m, n)).astype(np.float32)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        F.mm_split_k[(*grid2(m, n), split), ONE_WARP](a_, b_, c_, k, k, n, n, BM=16, BN=32, BK=16, SPLIT_K=split)

    close(run(backend, launch, a, b, start)[2], f64(start) + f64(a) @ f64(b), 1e-5)


@pytest.mark.parametrize("leaky", [False, True])
def test_bias_activation_form_matches_float64_on_ragged_edges(backend: str, leaky: bool) -> None:
    """(g): bias then ReLU or leaky ReLU, M, N and K off the tiles."""
    rng = np.random.default_rng(7 + leaky)
    m, n, k = 40, 56, 40
    a, b, bias = rand(rng, m, k), rand(rng, k, n), rand(rng, n)

    def launch(a_: Any, b_: Any, bias_: Any, c_: Any) -> None:
        F.mm_bias_act[grid2(m, n), ONE_WARP](a_, b_, bias_, c_, m, n, k, k, n, n, BM=16, BN=32, BK=16, LEAKY=leaky)

    pre = f64(a) @ f64(b) + f64(bias)
    close(run(backend, launch, a, b, bias, poison(m, n))[3], np.where(pre > 0, pre, pre * 0.01 if leaky else 0.0),
          2e-3)


def test_block_pointer_form_matches_float64_on_ragged_edges(backend: str) -> None:
    """(h): loads padded with zeros past M, N and K, the store clipped to C."""
    rng = np.random.default_rng(8)
    m, n, k = 40, 56, 48
    a, b = rand(rng, m, k), rand(rng, k, n)

    def launch(a_: Any, b_: Any, c_: Any) -> None:
        F.mm_block_ptr[grid2(m, n), ONE_WARP](a_, b_, c_, m, n, k, k, n, n, BM=16, BN=32, BK=16)

    close(run(backend, launch, a, b, poison(m, n))[2], f64(a) @ f64(b), 2e-3)


def attention_f64(q: Array, k: Array, v: Array, causal: bool) -> Array:
    s = f64(q) @ np.swapaxes(f64(k), -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.asarray((p / p.sum(-1, keepdims=True)) @ f64(v))


@pytest.mark.parametrize("causal", [False, True])
def test_attention_4d_form_matches_float64(backend: str, causal: bool) -> None:
    """(i): [B, H, S, D] through its strides, batch and head split from grid axis 1."""
    rng = np.random.default_rng(9 + causal)
    z, h, s, d = 2, 3, 64, 16
    q, k, v = (rand(rng, z, h, s, d) for _ in range(3))

    def launch(q_: Any, k_: Any, v_: Any, o_: Any) -> None:
        F.attention_4d[(s // 16, z * h), ONE_WARP](q_, k_, v_, o_, h * s * d, s * d, d, h, s, d ** -0.5,
                                                    BM=16, BN=16, HEAD=d, CAUSAL=causal)

    close(run(backend, launch, q, k, v, poison(z, h, s, d))[3], attention_f64(q, k, v, causal), 2e-3)


def test_row_forms_match_float64(backend: str) -> None:
    """(j): softmax and layer norm (with its saved mean and 1/std) over rows shorter than BLOCK."""
    rng = np.random.default_rng(10)
    m, n = 6, 40
    x, w, b = rand(rng, m, n, dt="bf16"), rand(rng, n, dt="bf16"), rand(rng, n, dt="bf16")

    def softmax(x_: Any, y_: Any) -> None:
        F.softmax_rows[(m,), ONE_WARP](x_, y_, n, n, BLOCK=64)

    def layer_norm(x_: Any, y_: Any, w_: Any, b_: Any, mean_: Any, rstd_: Any) -> None:
        F.layer_norm_rows[(m,), ONE_WARP](x_, y_, w_, b_, mean_, rstd_, n, n, 1e-5, BLOCK=64)

    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    close(run(backend, softmax, x, poison(m, n, dt="bf16"))[1], e / e.sum(1, keepdims=True), 1e-2)
    nan32 = np.full(m, np.nan, np.float32)
    _, y, _, _, mean, rstd = run(backend, layer_norm, x, poison(m, n, dt="bf16"), w, b, nan32, nan32.copy())
    centred = f64(x) - f64(x).mean(1, keepdims=True)
    want_rstd = 1 / np.sqrt((centred ** 2).mean(1) + 1e-5)
    close(y, centred * want_rstd[:, None] * f64(w) + f64(b), 1e-2)
    close(mean, f64(x).mean(1), 1e-5)
    close(rstd, want_rstd, 1e-5)


MM = dict(BM=128, BN=256, BK=64)  # forms_bench's tiles: 8 warps, 3 stages
ONES = ("stride_ak", "stride_bn", "stride_cn")  # mm_grouped's unit strides, specialised to 1 at launch
PTXAS_CASES = [
    ("mm_tutorial", 8, dtypes.F16, MM), ("mm_tutorial", 8, dtypes.BF16, MM), ("mm_grouped", 8, dtypes.F16,
                                                                                 dict(MM, GROUP_M=8)),
    ("mm_offsets_from_k", 8, dtypes.F16, MM), ("mm_bt", 8, dtypes.F16, MM), ("mm_batched", 8, dtypes.F16, MM),
    ("mm_split_k", 8, dtypes.F16, dict(MM, SPLIT_K=4)), ("mm_bias_act", 8, dtypes.F16, dict(MM, LEAKY=False)),
    ("mm_bias_act", 8, dtypes.F16, dict(MM, LEAKY=True)), ("mm_block_ptr", 8, dtypes.F16, MM),
    ("mm_persistent", 8, dtypes.F16, dict(MM, GROUP_M=8, NUM_SMS=132)),
    ("attention_4d", 4, dtypes.F16, dict(BM=128, BN=64, HEAD=64, CAUSAL=True)),
    ("attention_4d", 8, dtypes.F16, dict(BM=128, BN=32, HEAD=128, CAUSAL=False)),
    ("softmax_rows", 8, dtypes.F16, dict(BLOCK=4096)), ("layer_norm_rows", 8, dtypes.BF16, dict(BLOCK=4096)),
]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: ptxas cannot check the sm_90a code")
@pytest.mark.parametrize("name, warps, pointee, constexprs", PTXAS_CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(PTXAS_CASES)])
def test_benchmark_configs_pass_ptxas_for_sm_90a(tmp_path: Path, name: str, warps: int, pointee: dtypes.DType,
                                                 constexprs: dict[str, Any]) -> None:
    """At the benchmark's tiles (ints multiples of 16 as its shapes are): the dots are wgmma fed by
    cp.async or bulk tensor copies (block pointers), ptxas neither spills nor serialises them."""
    kernel = getattr(F, name)
    ones = tuple(o for o in ONES if (name, o) != ("mm_bt", "stride_bn"))  # mm_bt's B rows are K apart
    spec = _aligned_spec(kernel, 4096, warps, 3, pointee, ones, {"c_ptr": pointee} if name != "mm_split_k" else {},
                         **constexprs)
    source = generate(compile_ir(kernel, replace(spec, arch=90))).source
    if name.startswith(("mm_", "attention")):
        assert "wgmma.mma_async" in source
        assert re.search(r"tl::tma_load_2d\(" if name == "mm_block_ptr" else r"tl::cp_async<", source)
    if name == "mm_bt":  # B's [BN, BK] tile copied as stored, read by wgmma K-major
        assert "_kb(" in source and source.count("tl::cp_async<16>") == 6
    sm90a_report(source, tmp_path)


def _statements(path: Path, prefix: str) -> dict[str, str]:
    """Each top-level function's body past its docstring, unparsed, by name less ``prefix``."""
    bodies = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith(prefix):
            body = node.body[1:] if ast.get_docstring(node) else node.body
            bodies[node.name.removeprefix(prefix)] = "\n".join(ast.unparse(s) for s in body)
    return bodies


def test_every_form_has_a_triton_twin_statement_for_statement() -> None:
    """The benchmark compares one algorithm: each twin in triton_kernels.py is its form's body with
    Triton's names for the module and dtypes (read from the source: Triton need not be installed)."""
    names = {"ttl.float32": "tl.f32", "ttl.float16": "tl.f16", "ttl.int64": "tl.i64", "ttl.": "tl."}
    twins = _statements(BENCHMARKS / "triton_kernels.py", "tt_")
    forms = _statements(BENCHMARKS / "form_kernels.py", "")
    assert len(forms) == 12
    for name, body in forms.items():
        twin = twins[name]
        for theirs, ours in names.items():
            twin = twin.replace(theirs, ours)
        assert twin == body, name
