"""Ops that read many elements: conversions to shared memory, reductions, scans and dot."""

from __future__ import annotations

from tile_lang import dtypes
from tile_lang.compiler.ir import (
    REGISTER_LAYOUTS, DotAttr, Mma, MmaRows, Node, Op, Precision, ReduceAttr, ReduceFn, ScanAttr, Shared,
)
from tile_lang.dtypes import DType

from tile_lang_cupy.codegen.ctypes_ import const_decl, compute_dtype, ctype, literal
from tile_lang_cupy.codegen.emitter import Emitter, Index, emits, shared_align, shared_numel, shared_offset

_FUNCTORS = {ReduceFn.SUM: "tl::Sum()", ReduceFn.PROD: "tl::Prod()", ReduceFn.MAX: "tl::Max()",
             ReduceFn.MIN: "tl::Min()", ReduceFn.XOR: "tl::Xor()"}


@emits(Op.CONVERT)
def _convert(em: Emitter, node: Node) -> None:
    """Write the block to shared memory so any thread can read any element; a thread's run of
    consecutive registers goes as one vector store where the rows allow."""
    src = node.args[0]
    layout = node.layout if isinstance(node.layout, Shared) else Shared()
    t = ctype(node.ty.dtype)
    offset = em.shared(shared_numel(layout, node.ty.shape) * node.ty.dtype.itemsize, shared_align(layout), node)
    name = em.name(node, "s")
    em.line(f"{t}* {name} = reinterpret_cast<{t}*>(tl_smem + {offset});")
    em.line("__syncthreads();")
    own = em.layout(src)
    width = own.vector if isinstance(src.layout, REGISTER_LAYOUTS) and node.ty.shape[-1] % own.vector == 0 else 1
    if layout.transposed:
        width = 1
    if width * node.ty.dtype.itemsize > 16 or (layout.row_pad * node.ty.dtype.itemsize) % (width * node.ty.dtype.itemsize):
        width = 1
    with em.each(src, width) as idx:
        owner = em.owner(src)
        at = f"{name}[{shared_offset(layout, idx.coords, node.ty.shape, node.ty.dtype.itemsize)}]"
        store = f"{at} = {em.elem(src, idx)};" if width == 1 else f"tl::store<{width}>(&{at}, &{em.names[src]}[k]);"
        em.line(f"if ({owner}) {store}" if owner else store)
    if layout.swizzle:  # read next by wgmma, through the tensor cores' (async) proxy
        em.line("tl::fence_proxy_async();")
        em.fenced.add(node)
    em.line("__syncthreads();")


def work_dtype(dtype: DType) -> DType:
    """The type a reduction combines in: f32 for narrow floats, 32-bit for narrow ints."""
    if dtype.is_bool or dtype.is_int and dtype.bits < 32:
        return dtypes.U32 if dtype.kind is dtypes.Kind.UINT else dtypes.I32
    return compute_dtype(dtype)


def identity(fn: ReduceFn, dtype: DType) -> str:
    if fn in (ReduceFn.SUM, ReduceFn.XOR):
        return literal(0, dtype)
    if fn is ReduceFn.PROD:
        return literal(1, dtype)
    lowest = fn in (ReduceFn.MAX, ReduceFn.ARGMAX)
    if dtype.is_float and fn in (ReduceFn.MAX, ReduceFn.MIN):
        return literal(float("nan"), dtype)  # fmax/fmin drop it, so only an all-NaN input stays NaN
    if dtype.is_float:
        return literal(float("-inf") if lowest else float("inf"), dtype)
    if dtype.is_signed:
        return literal(-(2 ** (dtype.bits - 1)) if lowest else 2 ** (dtype.bits - 1) - 1, dtype)
    return literal(0 if lowest else 2**dtype.bits - 1, dtype)


def _combine(fn: ReduceFn, acc: str, value: str) -> str:
    return f"{acc} = {_FUNCTORS[fn]}({acc}, {value});"


@emits(Op.REDUCE)
def _reduce(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, ReduceAttr)
    if isinstance(node.layout, MmaRows) and isinstance(node.args[0].layout, Mma):
        _reduce_rows(em, node, node.attr, node.layout, node.args[0].layout)
    elif node.ty.numel == 1:
        _reduce_block(em, node, node.attr)
    else:
        _reduce_axis(em, node, node.attr)


def _is_arg(fn: ReduceFn) -> bool:
    return fn in (ReduceFn.ARGMAX, ReduceFn.ARGMIN)


def _reduce_block(em: Emitter, node: Node, attr: ReduceAttr) -> None:
    """Every element to one value: per thread, then warp shuffles, then across warps."""
    src = node.args[0]
    work = work_dtype(src.ty.dtype)
    w = ctype(work)
    acc, best = em.fresh("acc"), em.fresh("idx")
    em.line(f"{w} {acc} = {identity(attr.fn, work)};")
    arg = _is_arg(attr.fn)
    if arg:
        em.line(f"int {best} = -1;")  # no element yet (see tl::arg_combine)
    with em.each(src) as idx:
        value = f"tl::cvt<{w}>({em.elem(src, idx)})"
        position = idx.coords[attr.axis] if attr.axis is not None else idx.flat
        step = (f"tl::arg_combine<{_is_max(attr.fn)}, {_left(attr)}>({acc}, {best}, {value}, (int)({position}));"
                if arg else _combine(attr.fn, acc, value))
        owner = em.owner(src)
        em.line(f"if ({owner}) {step}" if owner else step)
    warps = em.fn.num_warps
    if arg:
        result = f"tl::block_argreduce<{warps}, {_is_max(attr.fn)}, {_left(attr)}>({acc}, {best}, tl_smem)"
    else:
        result = f"tl::cvt<{ctype(node.ty.dtype)}>(tl::block_reduce<{warps}>({acc}, {_FUNCTORS[attr.fn]}, tl_smem))"
    t = ctype(node.ty.dtype)
    if node.ty.is_scalar:
        em.line(f"{const_decl(node.ty.dtype, em.name(node))} = {result};")
    else:
        em.line(f"{t} {em.name(node)}[1] = {{{result}}};")


def _reduce_rows(em: Emitter, node: Node, attr: ReduceAttr, layout: MmaRows, source: Mma) -> None:
    """Each row of fragments to one value: the thread's own elements of the row (two per column
    tile), then the four lanes of the quad holding the row."""
    src = node.args[0]
    work = work_dtype(src.ty.dtype)
    w = ctype(work)
    tn = source.tiles_n
    name = em.declare(node)
    em.line("#pragma unroll")
    with em.block(f"for (int r = 0; r < {layout.per_thread}; ++r)"):
        em.line(f"{w} acc = {identity(attr.fn, work)};")
        em.line("#pragma unroll")
        with em.block(f"for (int ni = 0; ni < {tn}; ++ni)"):
            for j in (0, 1):
                value = f"tl::cvt<{w}>({em.names[src]}[((r >> 1) * {tn} + ni) * 4 + (r & 1) * 2 + {j}])"
                em.line(_combine(attr.fn, "acc", value))
        em.line(f"{name}[r] = tl::cvt<{ctype(node.ty.dtype)}>(tl::quad_reduce(acc, {_FUNCTORS[attr.fn]}));")


def _is_max(fn: ReduceFn) -> str:
    return "true" if fn is ReduceFn.ARGMAX else "false"


def _left(attr: ReduceAttr) -> str:
    return "true" if attr.tie_break_left else "false"


def _reduce_axis(em: Emitter, node: Node, attr: ReduceAttr) -> None:
    """Each output element loops over the reduced axis of the block in shared memory."""
    src = node.args[0]
    assert attr.axis is not None
    work = work_dtype(src.ty.dtype)
    w = ctype(work)
    name = em.declare(node)
    extent = src.ty.shape[attr.axis]
    with em.each(node) as idx:
        coords = idx.coords[:attr.axis] + ("r",) + idx.coords[attr.axis:]
        value = f"tl::cvt<{w}>({em.elem(src, Index(None, coords))})"
        em.line(f"{w} acc = {identity(attr.fn, work)};")
        if _is_arg(attr.fn):
            em.line("int best = -1;")  # no element yet
            step = f"tl::arg_combine<{_is_max(attr.fn)}, {_left(attr)}>(acc, best, {value}, (int)r);"
            result = "best"
        else:
            step, result = _combine(attr.fn, "acc", value), f"tl::cvt<{ctype(node.ty.dtype)}>(acc)"
        em.line(f"for (unsigned r = 0; r < {extent}u; ++r) {step}")
        em.line(f"{name}[k] = {result};")


@emits(Op.SCAN)
def _scan(em: Emitter, node: Node) -> None:
    """Inclusive scan: each element combines its prefix (or suffix) from shared memory."""
    assert isinstance(node.attr, ScanAttr)
    attr = node.attr
    src = node.args[0]
    work = work_dtype(src.ty.dtype)
    w = ctype(work)
    name = em.declare(node)
    extent = src.ty.shape[attr.axis]
    with em.each(node) as idx:
        coords = idx.coords[:attr.axis] + ("r",) + idx.coords[attr.axis + 1:]
        own = idx.coords[attr.axis]
        bounds = f"unsigned r = {own}; r < {extent}u; ++r" if attr.reverse else f"unsigned r = 0; r <= {own}; ++r"
        em.line(f"{w} acc = {identity(attr.fn, work)};")
        value = f"tl::cvt<{w}>({em.elem(src, Index(None, coords))})"
        em.line(f"for ({bounds}) {_combine(attr.fn, 'acc', value)}")
        em.line(f"{name}[k] = tl::cvt<{ctype(node.ty.dtype)}>(acc);")


@emits(Op.DOT)
def _dot(em: Emitter, node: Node) -> None:
    """On tensor cores when the layouts pass gave the result fragments (:class:`Mma`); else
    each output element is a K-long dot product of shared-memory rows and columns."""
    assert isinstance(node.attr, DotAttr)
    if isinstance(node.layout, Mma):
        _dot_mma(em, node, node.layout)
        return
    a, b, acc = node.args
    out = node.ty.dtype
    work = compute_dtype(out)
    w = ctype(work)
    inner = a.ty.shape[-1]
    name = em.declare(node)
    sums = em.fresh("s")
    em.line(f"{w} {sums}[{em.layout(node).per_thread}];")
    with em.each(node) as idx:
        em.line(f"{sums}[k] = tl::cvt<{w}>({em.elem(acc, idx)});")
    # K outermost and at run time, each step one multiply-add per element of the thread (unrolled, so
    # reads of one row or column from shared memory are shared): with K innermost and unrolled as
    # well, NVVM's time grew with the tile's area times K (96 s for an f32 128x128x32 tile)
    em.line(f"#pragma unroll {_K_UNROLL}")
    with em.block(f"for (unsigned q = 0; q < {inner}u; ++q)"):
        with em.each(node) as idx:
            *batch, m, n = idx.coords
            em.line(f"const {w} x = tl::cvt<{w}>({em.elem(a, Index(None, (*batch, m, 'q')))});")
            em.line(f"const {w} y = tl::cvt<{w}>({em.elem(b, Index(None, (*batch, 'q', n)))});")
            em.line(_dot_step(node.attr.precision, work, f"{sums}[k]"))
    with em.each(node) as idx:
        em.line(f"{name}[k] = tl::cvt<{ctype(out)}>({sums}[k]);")


_K_UNROLL = 4  # steps of K unrolled in a CUDA-core dot (compile time grows with it)


def _dot_step(precision: Precision, work: DType, s: str) -> str:
    """One multiply-accumulate into ``s`` of the K loop (tf32x3 never gets here: the lowering splits
    it into three tf32 dots, as Triton does)."""
    if not work.is_float:
        return f"{s} += x * y;"
    if precision is Precision.TF32:
        return f"{s} = fmaf(tl::tf32(x), tl::tf32(y), {s});"
    return f"{s} = {'fmaf' if work.bits == 32 else 'fma'}(x, y, {s});"


def _dot_mma(em: Emitter, node: Node, layout: Mma) -> None:
    """``tl::mma_block`` on the operand tiles in (padded) shared memory, accumulating into this
    thread's fragments (f32, or i32 for i8 operands), which start as ``acc`` (or wgmma on swizzled
    operand tiles)."""
    a, b, acc = node.args
    assert isinstance(b.layout, Shared)
    if node in em.inplace:  # accumulates in the loop's carried registers, asynchronously
        em.names[node] = em.inplace[node]
        _dot_wgmma(em, node, em.inplace[node], wait=1)
        return
    name = em.declare(node)
    with em.each(node) as idx:
        em.line(f"{name}[k] = tl::cvt<{ctype(node.ty.dtype)}>({em.elem(acc, idx)});")
    if b.layout.swizzle:
        _dot_wgmma(em, node, name, wait=0)
        return
    assert isinstance(a.layout, Shared) and not a.layout.transposed, "A of an mma.sync dot is row-major in shared memory"
    k, n = a.ty.shape[1], b.ty.shape[1]
    lda = k + a.layout.row_pad
    ldb = (k if b.layout.transposed else n) + b.layout.row_pad
    shape = f"{ctype(a.ty.dtype)}, {layout.warps_m}, {layout.warps_n}, {layout.tiles_m}, {layout.tiles_n}"
    transposed = "true" if b.layout.transposed else "false"
    assert isinstance(node.attr, DotAttr)
    if node.attr.imprecise is None:
        em.line(f"tl::mma_block<{shape}, {k}, {lda}, {ldb}, {transposed}>({name}, {em.names[a]}, {em.names[b]}, tid);")
        return
    # fp8 partial sums over chunks of K (m16n8k32 steps), each added into the f32 acc (see _dot_wgmma)
    chunk = 32 * max(1, -(-node.attr.imprecise // 32))
    partial = em.fresh("part")
    em.line(f"float {partial}[{layout.per_thread}];")
    for start in range(0, k, chunk):
        width = min(chunk, k - start)
        b_at = start if b.layout.transposed else start * ldb
        em.line("#pragma unroll")
        em.line(f"for (int q = 0; q < {layout.per_thread}; ++q) {partial}[q] = 0.0f;")
        em.line(f"tl::mma_block<{shape}, {width}, {lda}, {ldb}, {transposed}>({partial}, {em.names[a]} + {start}, "
                f"{em.names[b]} + {b_at}, tid);")
        em.line("#pragma unroll")
        em.line(f"for (int q = 0; q < {layout.per_thread}; ++q) {name}[q] += {partial}[q];")


_WGMMA_TYPES = {dtypes.F16: "f16", dtypes.BF16: "bf16", dtypes.F8E4M3: "e4m3", dtypes.F8E5M2: "e5m2"}


def _dot_wgmma(em: Emitter, node: Node, acc: str, wait: int) -> None:
    """Hopper's warpgroup MMA: each warpgroup multiplies its 64 rows of A (per m64 tile) by all
    of B, K in steps of 32 bytes (16 16-bit or 32 fp8 elements). Operands in shared memory are
    read by the tensor cores through descriptors over swizzled panels: a K-major operand (rows
    of 128, 64 or 32 bytes) moves 32 bytes along its rows per step (the next panel every 4, 2 or
    1 steps); an N-major B (16-bit, rows of 128, 64 or 32 bytes of N) 16 rows per step, its
    panels ``K`` rows apart. An A in registers
    (``p`` of attention) is passed as this thread's fragments of the step's 16 columns.
    Shared-memory writes from registers reach the tensor cores' (async) proxy through a proxy
    fence and a barrier. ``wait``: how many groups of wgmma may still run when this returns (1 in
    a loop accumulating in place)."""
    a, b, _ = node.args
    assert isinstance(b.layout, Shared) and isinstance(node.layout, Mma)
    (m, k), n = a.ty.shape, b.ty.shape[1]
    n_major = not b.layout.transposed  # B stored [K, N] (else [N, K], K-major like A)
    registers = not isinstance(a.layout, Shared)
    item = a.ty.dtype.itemsize
    step_k = 32 // item  # elements of one instruction's K
    row_a = a.layout.swizzle // item if isinstance(a.layout, Shared) else 0  # elements of a panel's row
    row_b = b.layout.swizzle // item
    types = (_WGMMA_TYPES[a.ty.dtype], _WGMMA_TYPES[b.ty.dtype])
    helper = f"tl_wgmma_m64n{n}k{step_k}_{'_'.join(types)}{'' if n_major else '_kb'}{'_rs' if registers else ''}"
    em.helpers.setdefault(helper, _wgmma_helper(helper, n, (a.ty.dtype, b.ty.dtype), n_major, registers))
    if not ({a, b} if not registers else {b}) <= em.fenced:
        em.line("tl::fence_proxy_async();")
        em.line("__syncthreads();")
    packed = em.fresh("pa")
    if registers:  # A's fragments, two 16-bit values a register, written before the fence
        count = node.layout.tiles_m * k // 2
        em.line(f"unsigned {packed}[{count}];")
        em.line("#pragma unroll")
        em.line(f"for (int k = 0; k < {count}; ++k) {packed}[k] = "
                f"tl::pack2({em.names[a]}[2 * k], {em.names[a]}[2 * k + 1]);")
    # one descriptor per operand; a step's is it plus the step's offset in 16-byte units (the
    # address field is the low 14 bits and shared memory ends below 2^18 bytes: no carry out)
    desc_b = em.fresh("db")
    em.line(f"const unsigned long long {desc_b} = {_descriptor(em, b, '', k * b.layout.swizzle if n_major else 16)};")
    desc_a = em.fresh("da")
    if not registers:  # this warpgroup's first 64 rows of A
        em.line(f"const unsigned long long {desc_a} = {_descriptor(em, a, f' + tl::warpgroup(tid) * {64 * row_a}u', 16)};")
    em.line(f"tl::fence_registers<{node.layout.per_thread}>({acc});")  # the accumulator is written by now
    em.line("tl::wgmma_fence();")
    groups = em.fn.num_warps // 4
    steps = range(k // step_k)
    assert isinstance(node.attr, DotAttr)
    chunk = len(steps) if node.attr.imprecise is None else max(1, -(-node.attr.imprecise // step_k))
    partial = None if node.attr.imprecise is None else em.fresh("part")
    if partial is not None:  # fp8 partial sums, added into the f32 acc every ``chunk`` instructions
        em.line(f"float {partial}[{n // 2}];")
    for tile in range(node.layout.tiles_m):
        for first_step in range(0, len(steps), chunk):
            target = f"{acc} + {tile * n // 2}"
            if partial is not None:
                em.line("#pragma unroll")
                em.line(f"for (int q = 0; q < {n // 2}; ++q) {partial}[q] = 0.0f;")
                em.line(f"tl::fence_registers<{n // 2}>({partial});")
                em.line("tl::wgmma_fence();")
                target = partial
            for step in steps[first_step:first_step + chunk]:
                if registers:  # this thread's A fragments of the step: n8 tiles 2 * step and + 1
                    first = (tile * (k // 8) + 2 * step) * 2
                    operand_a = ", ".join(f"{packed}[{first + i}]" for i in range(4))
                else:  # the tile's rows of A, the step's panel and columns
                    panel, within = divmod(step * step_k, row_a)
                    operand_a = f"{desc_a} + {(panel * m * row_a + tile * groups * 64 * row_a + within) * item // 16}ull"
                panel, within = divmod(step * step_k, row_b)
                offset = step * step_k * row_b if n_major else panel * n * row_b + within
                em.line(f"{helper}({target}, {operand_a}, {desc_b} + {offset * item // 16}ull);")
            if partial is not None:  # the chunk's products are in: add them in full f32 precision
                em.line("tl::wgmma_commit_and_wait<0>();")
                em.line(f"tl::fence_registers<{n // 2}>({partial});")
                em.line("#pragma unroll")
                em.line(f"for (int q = 0; q < {n // 2}; ++q) {acc}[{tile * n // 2} + q] += {partial}[q];")
    if partial is not None:  # every group has completed, the acc is written: work left for the wait runs now
        if em.under_wgmma is not None and em.under_wgmma[0] is node:
            hook, em.under_wgmma = em.under_wgmma[1], None
            hook()
        return
    if wait == 0 and em.under_wgmma is not None and em.under_wgmma[0] is node:  # work while the tensor cores run
        hook, em.under_wgmma = em.under_wgmma[1], None
        em.line("tl::wgmma_commit_and_wait<1>();")  # the group runs on
        hook()
        em.line("tl::wgmma_wait<0>();")
    else:
        em.line(f"tl::wgmma_commit_and_wait<{wait}>();")
    if wait == 0:  # the registers are read next: not before the wait
        em.line(f"tl::fence_registers<{node.layout.per_thread}>({acc});")


def _descriptor(em: Emitter, operand: Node, offset: str, lbo: int) -> str:
    """The wgmma descriptor of ``operand`` (plus ``offset`` elements). A pipelined copy's is its
    ring's, loop-invariant, plus the slot's offset in 16-byte units: one multiply-add an
    iteration before the first wgmma instead of the address arithmetic."""
    assert isinstance(operand.layout, Shared)
    swizzle = operand.layout.swizzle  # 8-row groups of panel rows: 8 * swizzle bytes apart
    slot = em.slots.get(operand)
    if slot is None:
        return f"tl::wgmma_desc({em.names[operand]}{offset}, {lbo}u, {8 * swizzle}u, {swizzle}u)"
    ring, index, size = slot
    return (f"tl::wgmma_desc({ring}{offset}, {lbo}u, {8 * swizzle}u, {swizzle}u) + "
            f"{index} * {size * operand.ty.dtype.itemsize // 16}ull")


def _wgmma_helper(name: str, n: int, types: tuple[DType, DType], n_major: bool, registers: bool) -> str:
    """One ``wgmma.mma_async m64nNkK`` (f32 += A * B; A from shared memory or 4 registers, B
    N-major or K-major) on ``n / 2`` accumulator registers, as a device function (the
    instruction names every register). Only 16-bit operands take transpose flags."""
    regs = n // 2
    wide = types[0].itemsize == 2
    outs = ", ".join(f"%{i}" for i in range(regs))
    binds = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    if registers:
        a_operand, a_params, a_binds, inputs = (
            f"{{%{regs}, %{regs + 1}, %{regs + 2}, %{regs + 3}}}", "unsigned a0, unsigned a1, unsigned a2, unsigned a3",
            '"r"(a0), "r"(a1), "r"(a2), "r"(a3), ', 4)
        flags = f"p, 1, 1, {int(n_major)}"
    else:
        a_operand, a_params, a_binds, inputs = f"%{regs}", "unsigned long long da", '"l"(da), ', 1
        flags = f"p, 1, 1, 0, {int(n_major)}" if wide else "p, 1, 1"
    shape = f"m64n{n}k{32 // types[0].itemsize}.f32.{_WGMMA_TYPES[types[0]]}.{_WGMMA_TYPES[types[1]]}"
    ptx = (rf"{{\n.reg .pred p;\nsetp.ne.b32 p, %{regs + inputs + 1}, 0;\n"
           f"wgmma.mma_async.sync.aligned.{shape} {{{outs}}}, {a_operand}, %{regs + inputs}, "
           rf"{flags};\n}}")
    ta, tb = ctype(types[0]), ctype(types[1])
    emulated = (f"  const unsigned a[4] = {{a0, a1, a2, a3}};\n  tl_emu::wgmma_rs<{ta}, {n}, {str(n_major).lower()}>(d, a, db);"
                if registers else f"  tl_emu::wgmma<{ta}, {tb}, {n}, {str(n_major).lower()}>(d, da, db);")
    return "\n".join([
        f"__device__ __forceinline__ void {name}(float* d, {a_params}, unsigned long long db) {{",
        "#if defined(TL_EMULATOR)",
        emulated,
        "#else",
        f'  asm volatile("{ptx}"',
        f"               : {binds}",
        f'               : {a_binds}"l"(db), "r"(1));',
        "#endif",
        "}", ""])
