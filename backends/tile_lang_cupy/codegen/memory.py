"""Loads, stores and atomics: vectorised where the IR's vector width allows, masked, with
only the owning copy of a replicated block writing."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tile_lang import dtypes
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, MemAttr, Mma, Node, Op, Sem, Shared, stored_walk
from tile_lang.dtypes import DType
from tile_lang.errors import BackendError

from tile_lang_cupy.codegen.ctypes_ import const_decl, ctype, literal
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, Index, emits


def _hint(attr: MemAttr) -> str:
    """The suffix of the header's access with this cache modifier or eviction policy (``_cg``,
    ``_evict_first``; PTX has no access with both: the cache modifier is kept), or ``""``."""
    return f"_{attr.cache[1:]}" if attr.cache else f"_{attr.evict}" if attr.evict else ""


def _guard(*conds: str | None) -> str | None:
    parts = [c for c in conds if c]
    return " && ".join(f"({c})" for c in parts) if parts else None


@emits(Op.LOAD)
def _load(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, MemAttr)
    ptr = node.args[0]
    mask = node.args[1] if node.attr.has_mask else None
    other = node.args[2] if node.attr.has_other else None
    t = ctype(node.ty.dtype)
    volatile = node.attr.volatile

    def deref(p: str) -> str:
        return f"*(volatile {t}*)({p})" if volatile else f"*({p})"

    hint = "" if volatile else _hint(node.attr)
    if node.ty.is_scalar and hint:
        name = em.name(node)
        em.line(f"{t} {name};")
        fill = em.elem(other, SCALAR) if other is not None else literal(0, node.ty.dtype)
        load = f"tl::load{hint}<1>(&{name}, {em.elem(ptr, SCALAR)});"
        em.line(load if mask is None else f"if ({em.elem(mask, SCALAR)}) {load} else {name} = {fill};")
        return
    if node.ty.is_scalar:
        value = deref(em.elem(ptr, SCALAR))
        if mask is not None:
            fill = em.elem(other, SCALAR) if other is not None else literal(0, node.ty.dtype)
            value = f"({em.elem(mask, SCALAR)} ? {value} : {fill})"
        em.line(f"{const_decl(node.ty.dtype, em.name(node))} = {value};")
        return
    name = em.declare(node)
    width = node.attr.vector
    with em.each(node, width) as idx:
        if _rows_alike(node):  # a register whose column an earlier one holds copies it
            assert isinstance(node.layout, Mma)
            first = f"((k >> 2) % {node.layout.tiles_n}u) * 4u + (k & 1u)"
            copies = " ".join(f"{name}[k + {j}] = {name}[{first} + {j}];" for j in range(width))
            em.line(f"if ({first} != (unsigned)k) {{ {copies} }} else")
        p = em.elem(ptr, idx)
        m = em.elem(mask, idx) if mask is not None else None
        load = f"{name}[k] = {deref(p)};" if width == 1 and not hint else f"tl::load{hint}<{width}>(&{name}[k], {p});"
        if m is None:
            em.line(load)
            return
        fills = " ".join(f"{name}[k + {j}] = {_fill(em, other, idx.at(j, node.ty.shape), node)};" for j in range(width))
        if _predicated(node):  # the fill, then a predicated load over it, with no branch (Triton's form)
            em.line(f"{{ {fills} tl::load_if{hint}<{width}>(&{name}[k], {p}, {m}); }}")
        else:
            em.line(f"{{ if ({m}) {load} else {{ {fills} }} }}")


PREDICATED_BYTES = 16
"""Masked accesses of at least this many bytes a thread are predicated PTX (``tl::load_if``,
``tl::store_if``), as Triton issues them: as branches, ptxas kept a masked f16 layer norm's
16-byte rows at 48 registers a thread against 40. Narrower ones stay branches: predicated, the
8-byte rows attention's backward reloads onto its fragments each iteration (inline PTX, which the
compiler does not move other accesses across) cost it 1-2% (A/B on the H200). A store staged
through shared memory stays a branch too: its shared read, predicated, unpacked and repacked the
16-bit elements (dq's epilogue 80 PTX instructions longer)."""


def _predicated(access: Node) -> bool:
    assert isinstance(access.attr, MemAttr)
    value = access.args[1] if access.op is Op.STORE else access
    return access.attr.vector * value.ty.dtype.bits >= 8 * PREDICATED_BYTES


def _fill(em: Emitter, other: Node | None, idx: Index, load: Node) -> str:
    """What a masked-off element of ``load`` holds: its ``other`` there, else 0 (as Triton fills)."""
    return em.elem(other, idx) if other is not None else literal(0, load.ty.dtype)


def _rows_alike(load: Node) -> bool:
    """Whether a load on tensor-core fragments reads the same elements for every row: its
    operands broadcast along the first dimension (a row loaded onto the fragments, as
    ``layouts._reloaded`` makes it), so each thread loads each of its columns once."""
    return isinstance(load.layout, Mma) and all(
        a.op is Op.SPLAT or a.op is Op.BROADCAST and a.args[0].ty.shape[0] == 1 for a in load.args)


@emits(Op.STORE)
def _store(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, MemAttr)
    ptr, value = node.args[0], node.args[1]
    mask = node.args[2] if node.attr.has_mask else None
    hint = _hint(node.attr)
    if ptr.ty.is_scalar:
        guard = _guard("tid == 0", em.elem(mask, SCALAR) if mask is not None else None)
        p, v = em.elem(ptr, SCALAR), em.elem(value, SCALAR)
        stmt = f"{{ const {ctype(value.ty.dtype)} t = {v}; tl::store{hint}<1>({p}, &t); }}" if hint else f"*({p}) = {v};"
        em.line(f"if ({guard}) {stmt}")
        return
    width = node.attr.vector
    walked = stored_walk(node)
    staged = width > 1 and _rows_in_shared(value, width)
    # a staged block's loop unrolled 4 at a time: fully unrolled, ptxas issued all its shared
    # loads and addresses at once (attention d=64: 168 -> 206 registers, a block fewer an SM)
    with em.each(walked, width, unroll=4 if staged else 0) as idx:
        guard = _guard(em.owner(walked), em.elem(mask, idx) if mask is not None else None)
        p = em.elem(ptr, idx)
        if width == 1 and not hint:
            stmt = f"*({p}) = {em.elem(value, idx)};"
            em.line(f"if ({guard}) {stmt}" if guard else stmt)
        elif guard and (staged or not _predicated(node)):  # a staged run: its shared read under the branch
            em.line(f"if ({guard}) {_vector_store(em, node, idx, p, None, staged)}")
        else:
            em.line(_vector_store(em, node, idx, p, guard, staged))


def _vector_store(em: Emitter, store: Node, idx: Index, p: str, guard: str | None, staged: bool) -> str:
    """The store of this thread's run of ``store``'s value at ``idx`` to address ``p``; given a
    ``guard``, a predicated store with no branch (a branch cost a masked layer norm 4 registers)."""
    assert isinstance(store.attr, MemAttr)
    ptr, value, width, hint = store.args[0], store.args[1], store.attr.vector, _hint(store.attr)
    t = ctype(value.ty.dtype)
    if stored_walk(store) is value:
        before, src = "", f"&{em.names[value]}[k]"
    elif staged:  # one vector read of shared memory
        before, src = f"{t} t[{width}]; tl::load<{width}>(t, &{em.elem(value, idx)}); ", "t"
    else:
        parts = ", ".join(em.elem(value, idx.at(j, ptr.ty.shape)) for j in range(width))
        before, src = f"const {t} t[{width}] = {{{parts}}}; ", "t"
    access = f"tl::store_if{hint}<{width}>({p}, {src}, {guard});" if guard else f"tl::store{hint}<{width}>({p}, {src});"
    return f"{{ {before}{access} }}"


def _rows_in_shared(value: Node, width: int) -> bool:
    """Whether runs of ``width`` elements of ``value`` lie contiguous and aligned in shared memory
    (row-major, unswizzled, rows padded by a multiple of the run)."""
    layout = value.layout
    return (isinstance(layout, Shared) and not layout.transposed and not layout.swizzle
            and layout.row_pad % width == 0 and value.ty.shape[-1] % width == 0)


@dataclass(frozen=True)
class PtxType:
    """How an element type goes through ``atom``: its arithmetic and bit type names, the
    register constraint, and the C++ type of that register."""

    arith: str
    bits: str
    reg: str
    ctype: str


_PTX_TYPES: dict[DType, PtxType] = {
    dtypes.I32: PtxType("s32", "b32", "r", "int"), dtypes.U32: PtxType("u32", "b32", "r", "unsigned"),
    dtypes.I64: PtxType("s64", "b64", "l", "long long"), dtypes.U64: PtxType("u64", "b64", "l", "unsigned long long"),
    dtypes.F32: PtxType("f32", "b32", "f", "float"), dtypes.F64: PtxType("f64", "b64", "d", "double"),
    dtypes.I16: PtxType("s16", "b16", "h", "unsigned short"), dtypes.U16: PtxType("u16", "b16", "h", "unsigned short"),
    dtypes.F16: PtxType("noftz.f16", "b16", "h", "unsigned short"),
    dtypes.BF16: PtxType("noftz.bf16", "b16", "h", "unsigned short"),
}
_SIGNED_BITS = {32: dtypes.I32, 64: dtypes.I64}
_UNSIGNED_BITS = {32: dtypes.U32, 64: dtypes.U64}


def atomic_asm(attr: AtomicAttr, fn: AtomicFn, ptx: PtxType, old: str, ptr: str, operands: list[str]) -> str:
    """One ``atom`` instruction with the requested memory semantics and scope (operands and
    ``old`` are C++ lvalues/expressions of ``ptx.ctype``)."""
    ptx_type = {AtomicFn.ADD: "u64" if ptx.arith == "s64" else ptx.arith, AtomicFn.MAX: ptx.arith,
                AtomicFn.MIN: ptx.arith}.get(fn, ptx.bits)
    ins = ", ".join(f'"{ptx.reg}"({o})' for o in operands)
    if attr.discard:  # ``red``: no old value
        placeholders = ", ".join(f"%{i + 1}" for i in range(len(operands)))
        return (f'asm volatile("{_atom(attr, fn)}.{fn.value}.{ptx_type} [%0], {placeholders};" :: '
                f'"l"({ptr}), {ins} : "memory");')
    placeholders = ", ".join(f"%{i + 2}" for i in range(len(operands)))
    return (f'asm volatile("{_atom(attr, fn)}.{fn.value}.{ptx_type} %0, [%1], '
            f'{placeholders};" : "={ptx.reg}"({old}) : "l"({ptr}), {ins} : "memory");')


# ``red`` orders as relaxed or release: an acquire half it drops is one the pass found vacuous
_RED_SEM = {Sem.RELAXED: Sem.RELAXED, Sem.ACQUIRE: Sem.RELAXED, Sem.RELEASE: Sem.RELEASE, Sem.ACQ_REL: Sem.RELEASE}


def _atom(attr: AtomicAttr, fn: AtomicFn) -> str:
    """``atom`` (``red`` for a discarded result) with its state space, scope and semantics,
    ordered as Triton's PTX spells them (``atom.global.gpu.acq_rel.add``,
    ``atom.global.acq_rel.gpu.cas``), so tools and tests that read the PTX find the same text;
    ptxas takes the qualifiers in either order."""
    scope = attr.scope.value
    if attr.discard:
        return f"red.global.{scope}.{_RED_SEM[attr.sem].value}"
    sem = attr.sem.value
    return f"atom.global.{sem}.{scope}" if fn is AtomicFn.CAS else f"atom.global.{scope}.{sem}"


def atomic_update(attr: AtomicAttr, dtype: DType, old: str, ptr: str, operands: list[str]) -> str:
    """The statement that applies one lane's atomic to ``*ptr`` and sets ``old`` (of ``dtype``)."""
    if dtype not in _PTX_TYPES:
        raise BackendError(f"atomics on {dtype!r} are not supported by the CUDA backend")
    if attr.fn in (AtomicFn.MAX, AtomicFn.MIN) and dtype.is_float:
        return _float_extreme(attr, dtype, old, ptr, operands[0])
    if attr.fn is AtomicFn.ADD and dtype == dtypes.BF16:
        return _bf16_add(attr, old, ptr, operands[0])
    ptx = _PTX_TYPES[dtype]
    if ptx.ctype == ctype(dtype):
        return atomic_asm(attr, attr.fn, ptx, old, ptr, operands)
    # 16-bit elements travel in unsigned short registers
    asm = atomic_asm(attr, attr.fn, ptx, "r", ptr, [f"tl::bitcast<{ptx.ctype}>({o})" for o in operands])
    return asm if attr.discard else f"{{ {ptx.ctype} r; {asm} {old} = tl::bitcast<{ctype(dtype)}>(r); }}"


def vector_add(attr: AtomicAttr, dtype: DType, olds: list[str], ptr: str, values: list[str]) -> str:
    """One Hopper vector ``atom.add`` (``.v2``/``.v4`` f32, up to ``.v8`` f16/bf16) updating
    ``len(values)`` consecutive elements at ``ptr`` (each element atomically, as Triton's), the
    old values into ``olds``."""
    ptx, w = _PTX_TYPES[dtype], len(values)
    kind = f"noftz.v{w}.{ptx.arith.removeprefix('noftz.')}" if ptx.arith.startswith("noftz.") else f"v{w}.{ptx.arith}"
    operands = values if ptx.ctype == ctype(dtype) else [f"tl::bitcast<{ptx.ctype}>({v})" for v in values]
    ins_list = ", ".join(f'"{ptx.reg}"({o})' for o in operands)
    if attr.discard:  # ``red``: no old values
        ins = "{" + ", ".join(f"%{1 + i}" for i in range(w)) + "}"
        return f'asm volatile("{_atom(attr, AtomicFn.ADD)}.add.{kind} [%0], {ins};" :: "l"({ptr}), {ins_list} : "memory");'
    outs = "{" + ", ".join(f"%{i}" for i in range(w)) + "}"
    ins = "{" + ", ".join(f"%{w + 1 + i}" for i in range(w)) + "}"
    regs = [f"r{i}" for i in range(w)] if ptx.ctype != ctype(dtype) else olds
    asm = (f'asm volatile("{_atom(attr, AtomicFn.ADD)}.add.{kind} {outs}, [%{w}], {ins};" : '
           + ", ".join(f'"={ptx.reg}"({r})' for r in regs) + f' : "l"({ptr}), ' + ins_list + ' : "memory");')
    if regs is olds:
        return asm
    back = " ".join(f"{old} = tl::bitcast<{ctype(dtype)}>({r});" for old, r in zip(olds, regs))
    return f"{{ {ptx.ctype} {', '.join(regs)}; {asm} {back} }}"


def _atom_lambda(attr: AtomicAttr, fn: AtomicFn, ptx: PtxType, ptr: str, count: int) -> str:
    """A C++ lambda running one ``atom`` on ``ptr`` with ``count`` register operands."""
    names = [f"a{i}" for i in range(count)]
    params = ", ".join(f"{ptx.ctype} {n}" for n in names)
    return f"[&]({params}) {{ {ptx.ctype} o; {atomic_asm(attr, fn, ptx, 'o', ptr, names)} return o; }}"


def _float_extreme(attr: AtomicAttr, dtype: DType, old: str, ptr: str, value: str) -> str:
    """Float max/min through integer atomics on the bits (``tl::atomic_float_order``)."""
    on_positive, on_negative = (AtomicFn.MAX, AtomicFn.MIN) if attr.fn is AtomicFn.MAX else (AtomicFn.MIN, AtomicFn.MAX)
    signed = _atom_lambda(attr, on_positive, _PTX_TYPES[_SIGNED_BITS[dtype.bits]], ptr, 1)
    unsigned = _atom_lambda(attr, on_negative, _PTX_TYPES[_UNSIGNED_BITS[dtype.bits]], ptr, 1)
    return f"{old} = tl::atomic_float_order({value}, {signed}, {unsigned});"


def _bf16_add(attr: AtomicAttr, old: str, ptr: str, value: str) -> str:
    """bf16 add through a 16-bit compare-and-swap loop (``tl::atomic_add_by_cas``)."""
    cas = _atom_lambda(replace(attr, fn=AtomicFn.CAS), AtomicFn.CAS, _PTX_TYPES[dtypes.BF16], ptr, 2)
    return f"{old} = tl::atomic_add_by_cas({ptr}, {value}, {cas});"


@emits(Op.ATOMIC)
def _atomic(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, AtomicAttr)
    ptr = node.args[0]
    count = 2 if node.attr.fn is AtomicFn.CAS else 1
    operands = node.args[1:1 + count]
    mask = node.args[1 + count] if node.attr.has_mask else None
    t = ctype(node.ty.dtype)
    if ptr.ty.is_scalar:
        name = em.name(node)
        em.line(f"{t} {name} = {literal(0, node.ty.dtype)};")
        guard = _guard("tid == 0", em.elem(mask, SCALAR) if mask is not None else None)
        update = atomic_update(node.attr, node.ty.dtype, name, em.elem(ptr, SCALAR),
                               [em.elem(o, SCALAR) for o in operands])
        em.line(f"if ({guard}) {update}")
        if em.uses.get(node):
            em.line(f"{name} = tl::broadcast({name}, tl_smem);")
        return
    # The operands are read into registers first: an ``atom`` is an asm statement with a memory
    # clobber, so an operand read from shared memory between two of them would wait each time.
    values = []
    for operand in operands:
        values.append(em.fresh("av"))
        em.line(f"{ctype(operand.ty.dtype)} {values[-1]}[{em.layout(node).per_thread}];")
        with em.each(node) as idx:
            em.line(f"{values[-1]}[k] = {em.elem(operand, idx)};")
    name = em.declare(node)
    w = node.attr.vector
    with em.each(node, w) as idx:
        guard = _guard(em.owner(node), em.elem(mask, idx) if mask is not None else None)
        em.line(" ".join(f"{name}[k + {i}] = {literal(0, node.ty.dtype)};" for i in range(w)))
        if w > 1:
            update = vector_add(node.attr, node.ty.dtype, [f"{name}[k + {i}]" for i in range(w)], em.elem(ptr, idx),
                                [f"{values[0]}[k + {i}]" for i in range(w)])
        else:
            update = atomic_update(node.attr, node.ty.dtype, f"{name}[k]", em.elem(ptr, idx),
                                   [f"{v}[k]" for v in values])
        em.line(f"if ({guard}) {update}" if guard else update)
    if node.ty.numel == 1 and em.uses.get(node):  # every thread reads its copy, thread 0 updated it
        em.line(f"{name}[0] = tl::broadcast({name}[0], tl_smem);")
