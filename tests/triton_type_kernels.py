"""Triton-style kernels reading ``.type`` (Triton's types), discarding hints and retyping names, for
tests/test_host_descriptors.py; unannotated (Any to mypy, which sees a block's DType slot)."""

from __future__ import annotations

import tile_lang as tl


@tl.func
def triton_type(x):
    """``x.type``, read where mypy sees ``x`` as Any."""
    return x.type


@tl.kernel
def typed_copy(x_ptr, out_ptr, info_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    block = triton_type(x)
    tl.static_assert(block.shape == [BLOCK])
    tl.static_assert(block.numel == BLOCK)
    tl.static_assert(block.element_ty == x.dtype)
    tl.static_assert(block.scalar == x_ptr.type.element_ty)
    tl.static_assert((x_ptr + offs).type.element_ty == x_ptr.type)
    tl.static_assert(x_ptr.type.scalar == x_ptr.type)
    tl.static_assert(triton_type(tl.sum(x, axis=0)) == x.dtype)
    y = x.to(out_ptr.type.element_ty) * 2  # tutorial 06's Out.type.element_ty
    tl.store(out_ptr + offs, y, mask=offs < n)
    tl.store(info_ptr, out_ptr.type.element_ty.primitive_bitwidth)


@tl.kernel
def discarded_hints(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ptrs = x_ptr + offs * 3
    tl.multiple_of(ptrs, (16,))  # false promises, discarded: no effect, as in Triton
    tl.max_contiguous(ptrs, (BLOCK,))
    tl.max_constancy(offs, (BLOCK,))
    tl.store(out_ptr + offs, tl.load(ptrs, mask=offs < n) + 1, mask=offs < n)


@tl.kernel
def used_false_hint(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.max_contiguous(tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) * 3, (BLOCK,))
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tl.kernel
def scale_tiles(src, dst, alpha, BM: tl.constexpr, BN: tl.constexpr):
    """``dst = alpha * src`` tile by tile through host descriptors (ragged edges dropped/zeroed)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    tile = src.load([pm * BM, pn * BN])
    tl.static_assert(tile.type.shape == [BM, BN])
    dst.store([pm * BM, pn * BN], tile * alpha)


@tl.kernel
def retyped_in_divergent_loop(x_ptr, out_ptr, B: tl.constexpr):
    """Programs leave the loop after different trip counts; ``p`` changes dtype inside it (tutorial
    06's ``p = p.to(dtype)`` on its host-descriptor path)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, B)
    acc = tl.zeros([B], dtype=tl.float32)
    for i in range(0, pid + 1):
        p = tl.load(x_ptr + i * B + offs) * 2.0
        p = p.to(tl.float16)
        tl.static_assert(p.dtype == tl.float16)
        acc += p.to(tl.float32)
    tl.store(out_ptr + pid * B + offs, acc)


@tl.kernel
def discarded_hint_of_wrong_arity(x_ptr, BLOCK: tl.constexpr):
    tl.multiple_of(x_ptr + tl.arange(0, BLOCK), (16, 16))  # discarded, but its arguments are still checked
