"""Memory hints and atomics as PTX spells them, as Triton's do: a cache modifier or eviction policy
becomes the qualified ``ld``/``st`` (Triton's tests read ``ld.global.cg`` and ``evict_last`` in the
PTX), an atomic ``atom.global.gpu.acq_rel.add`` / ``atom.global.acq_rel.gpu.cas``. The hints change
no value: both backends run them and match NumPy; both refuse one Triton refuses, alike."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import Constexpr, Pointer, constexpr, f32, i32
from tile_lang.ops.atomic import Sem
from tile_lang.ops.memory import CacheModifier, EvictionPolicy

from tests.compiler.conftest import NVCC, NVRTC, nvrtc_compile


@tl.kernel
def hinted_copy(dst: Pointer[f32], src: Pointer[f32], n: int, LOAD: Constexpr[CacheModifier],
                STORE: Constexpr[CacheModifier], EVICT: Constexpr[EvictionPolicy], B: constexpr) -> None:
    offs = tl.arange(0, B)
    x = tl.load(src + offs, mask=offs < n, other=2.0, cache_modifier=LOAD, eviction_policy=EVICT)
    first = tl.load(src, cache_modifier=LOAD)
    tl.store(dst + offs, x * 3.0 + first, mask=offs < n + 4, cache_modifier=STORE, eviction_policy=EVICT)
    tl.store(dst + B, first, cache_modifier=STORE)


@tl.kernel
def locked_add(data: Pointer[f32], lock: Pointer[i32], SEM: Constexpr[Sem]) -> None:
    while tl.atomic_cas(lock, 0, 1, sem=SEM) == 1:
        pass
    tl.atomic_add(data + tl.arange(0, 4), 1.5, sem=SEM)
    tl.atomic_xchg(lock, 0)


HINTS: list[tuple[CacheModifier, CacheModifier, EvictionPolicy]] = [(".cg", ".wt", ""), (".ca", ".cs", ""), (".cv", ".wb", ""), ("", ".cg", "evict_first"), ("", "", "evict_last"),
         ("", "", "evict_normal"), (".cg", "", "evict_last")]


@pytest.mark.parametrize(("load", "store", "evict"), HINTS)
def test_hints_change_no_value(backend: str, load: CacheModifier, store: CacheModifier, evict: EvictionPolicy) -> None:
    n, B = 37, 64
    src = np.random.default_rng(6).standard_normal(B).astype(np.float32)
    want = np.full(B + 1, np.nan)
    x = np.where(np.arange(B) < n, src.astype(np.float64), 2.0)
    live = np.arange(B) < n + 4
    want[:B][live] = (x * 3.0 + src[0])[live]
    want[B] = src[0]
    with tl.backend(backend):
        out = tl.to_device(np.full(B + 1, np.nan, np.float32))
        hinted_copy[(1,)](out, tl.to_device(src), n, LOAD=load, STORE=store, EVICT=evict, B=B)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(("what", "kwargs", "message"), [
    ("load", {"LOAD": ".wt"}, r"tl.load: cache_modifier '.wt' is not one of '.ca', '.cg', '.cv' \(or ''\)"),
    ("store", {"STORE": ".ca"}, r"tl.store: cache_modifier '.ca' is not one of '.wb', '.cg', '.cs', '.wt' \(or ''\)"),
    ("load", {"EVICT": "evict_often"}, r"tl.load: eviction_policy 'evict_often' is not one of 'evict_first'"),
])
def test_a_hint_triton_refuses_is_refused_alike(backend: str, what: str, kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"LOAD": "", "STORE": "", "EVICT": "", **kwargs}
    with tl.backend(backend):
        with pytest.raises(tl.KernelError, match=message):
            hinted_copy[(1,)](tl.empty(65, tl.f32), tl.to_device(np.ones(64, np.float32)), 4, B=64, **args)


def _accesses(ptx: str) -> set[str]:
    return set(re.findall(r"\b(?:ld|st|atom|red)\.global[\w:.]*", ptx))


needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH: the PTX cannot be made")


@needs_nvcc
@pytest.mark.parametrize(("load", "store", "evict"), HINTS)
def test_hints_are_the_qualified_ptx_accesses(load: CacheModifier, store: CacheModifier, evict: EvictionPolicy) -> None:
    """The cache operator when there is one (PTX has no access with both), else the L1 priority."""
    compiled = hinted_copy.compile(LOAD=load, STORE=store, EVICT=evict, B=64, arch="90a")
    assert compiled.cubin  # ptxas takes it
    seen = _accesses(compiled.asm["ptx"])
    for op, cache in (("ld", load), ("st", store)):
        qualifier = cache or (f".L1::{evict}" if evict else "")
        hinted = {a for a in seen if a.startswith(f"{op}.global{qualifier}.")} if qualifier else set()
        assert hinted if qualifier else not any(h in a for a in seen for h in (".L1::", ".cg", ".cs", ".wt")), seen
        others = {".ca", ".cg", ".cv", ".cs", ".wt", ".wb"} - {cache}
        assert not any(a.startswith(f"{op}.global{o}") for a in seen for o in others), seen


@needs_nvcc
@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
def test_atomics_spell_scope_and_semantics_as_triton(sem: Sem) -> None:
    """As Triton spells them; an add whose old values nothing reads is a ``red`` of its
    semantics when those have no acquire (an acquire half stays: the xchg after it reads memory)."""
    seen = _accesses(locked_add.compile(SEM=sem).asm["ptx"])
    assert f"atom.global.{sem}.gpu.cas.b32" in seen, seen
    add = f"red.global.gpu.{sem}.add" if sem in ("relaxed", "release") else f"atom.global.gpu.{sem}.add"
    assert any(a.startswith(add) for a in seen), seen
    assert "atom.global.gpu.acq_rel.exch.b32" in seen, seen  # xchg's default semantics


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc (the nvidia-cuda-nvrtc wheel) is not installed")
@pytest.mark.parametrize(("load", "store", "evict"), HINTS)
def test_hinted_accesses_compile_with_nvrtc(load: CacheModifier, store: CacheModifier, evict: EvictionPolicy) -> None:
    """As the cupy backend compiles them (NVRTC lacks builtins nvcc has: the first version failed there)."""
    for B in (1, 64, 512):
        ok, log = nvrtc_compile(hinted_copy.cuda_source(LOAD=load, STORE=store, EVICT=evict, B=B, arch="90a"),
                                "hinted_copy", "90a")
        assert ok, log
