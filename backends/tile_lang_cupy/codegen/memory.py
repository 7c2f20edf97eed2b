"""Loads, stores and atomics: vectorised where the IR's vector width allows, masked, with
only the owning copy of a replicated block writing."""

from __future__ import annotations

from tile_lang import dtypes
from tile_lang.compiler.ir import AtomicAttr, AtomicFn, Blocked, MemAttr, Node, Op
from tile_lang.dtypes import DType

from tile_lang_cupy.codegen.ctypes_ import const_decl, ctype, literal
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, emits


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
        p = em.elem(ptr, idx)
        m = em.elem(mask, idx) if mask is not None else None
        load = f"{name}[k] = {deref(p)};" if width == 1 else f"tl::load<{width}>(&{name}[k], {p});"
        em.line(load if m is None else f"if ({m}) {load}")
        if m is not None and other is not None:
            fills = " ".join(f"{name}[k + {j}] = {em.elem(other, idx.at(j, node.ty.shape))};"
                             for j in range(width))
            em.line(f"else {{ {fills} }}")


@emits(Op.STORE)
def _store(em: Emitter, node: Node) -> None:
    assert isinstance(node.attr, MemAttr)
    ptr, value = node.args[0], node.args[1]
    mask = node.args[2] if node.attr.has_mask else None
    if ptr.ty.is_scalar:
        guard = _guard("tid == 0", em.elem(mask, SCALAR) if mask is not None else None)
        em.line(f"if ({guard}) *({em.elem(ptr, SCALAR)}) = {em.elem(value, SCALAR)};")
        return
    width = node.attr.vector
    t = ctype(value.ty.dtype)
    with em.each(ptr, width) as idx:
        guard = _guard(em.owner(ptr), em.elem(mask, idx) if mask is not None else None)
        p = em.elem(ptr, idx)
        if width == 1:
            stmt = f"*({p}) = {em.elem(value, idx)};"
        elif isinstance(value.layout, Blocked) and value.ty.numel > 1:
            stmt = f"tl::store<{width}>({p}, &{em.names[value]}[k]);"
        else:
            parts = ", ".join(em.elem(value, idx.at(j, ptr.ty.shape)) for j in range(width))
            stmt = f"{{ const {t} t[{width}] = {{{parts}}}; tl::store<{width}>({p}, t); }}"
        em.line(f"if ({guard}) {stmt}" if guard else stmt)


_PTX_TYPES: dict[DType, tuple[str, str, str]] = {  # arithmetic type, bit type, register constraint
    dtypes.I32: ("s32", "b32", "r"), dtypes.U32: ("u32", "b32", "r"), dtypes.I64: ("s64", "b64", "l"),
    dtypes.U64: ("u64", "b64", "l"), dtypes.F32: ("f32", "b32", "f"), dtypes.F64: ("f64", "b64", "d"),
}


def atomic_asm(attr: AtomicAttr, dtype: DType, old: str, ptr: str, operands: list[str]) -> str:
    """One ``atom`` instruction with the requested memory semantics and scope."""
    if dtype not in _PTX_TYPES:
        raise NotImplementedError(f"atomics on {dtype!r} are not supported by the CUDA backend yet")
    arith, bits, reg = _PTX_TYPES[dtype]
    fn = attr.fn
    if fn in (AtomicFn.MAX, AtomicFn.MIN) and dtype.is_float:
        raise NotImplementedError("atomic_max/atomic_min on floats are not supported by the CUDA backend yet")
    ptx_type = {AtomicFn.ADD: "u64" if arith == "s64" else arith, AtomicFn.MAX: arith, AtomicFn.MIN: arith}.get(
        fn, bits)
    placeholders = ", ".join(f"%{i + 2}" for i in range(len(operands)))
    ins = ", ".join(f'"{reg}"({o})' for o in operands)
    return (f'asm volatile("atom.{attr.sem.value}.{attr.scope.value}.global.{fn.value}.{ptx_type} %0, [%1], '
            f'{placeholders};" : "={reg}"({old}) : "l"({ptr}), {ins} : "memory");')


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
        asm = atomic_asm(node.attr, node.ty.dtype, name, em.elem(ptr, SCALAR),
                         [em.elem(o, SCALAR) for o in operands])
        em.line(f"if ({guard}) {asm}")
        if em.uses.get(node):
            em.line(f"{name} = tl::broadcast({name}, tl_smem);")
        return
    name = em.declare(node)
    with em.each(node) as idx:
        guard = _guard(em.owner(node), em.elem(mask, idx) if mask is not None else None)
        em.line(f"{name}[k] = {literal(0, node.ty.dtype)};")
        asm = atomic_asm(node.attr, node.ty.dtype, f"{name}[k]", em.elem(ptr, idx),
                         [em.elem(o, idx) for o in operands])
        em.line(f"if ({guard}) {asm}" if guard else asm)


