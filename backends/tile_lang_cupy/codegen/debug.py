"""Debugging and escape hatches: ``device_assert`` (the device's assertion, at the user's line),
``device_print`` (printf, one line per element as Triton prints) and ``inline_asm_elementwise``."""

from __future__ import annotations

import re

from tile_lang import dtypes
from tile_lang.compiler.ir import AsmAttr, AssertAttr, Node, Op, PrintAttr
from tile_lang.dtypes import DType
from tile_lang.errors import BackendError

from tile_lang_cupy.codegen.ctypes_ import c_string, ctype
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter, Index, coords_of, emits, flat_index


@emits(Op.ASSERT)
def _assert(em: Emitter, node: Node) -> None:
    """Each false element fails the device's assert; ``#line`` makes ``__FILE__``/``__LINE__``
    the kernel's own source line, which CUDA reports with the message."""
    assert isinstance(node.attr, AssertAttr)
    cond = node.args[0]
    fail = f"tl::assert_fail({c_string(node.attr.message)}, __FILE__, __LINE__, {c_string(em.fn.name)});"
    if cond.ty.is_scalar:
        em.locate(node, force=True)
        em.line(f"if (!({em.elem(cond, SCALAR)})) {fail}")
        return
    with em.each(cond) as idx:
        guard = " && ".join(f"({g})" for g in (em.owner(cond), f"!({em.elem(cond, idx)})") if g)
        em.locate(node, force=True)
        em.line(f"if ({guard}) {fail}")


# ---------------------------------------------------------------- printing


def _format(dtype: DType, value: str, hex: bool) -> tuple[str, str]:
    """The printf conversion and argument of one value."""
    if dtype.is_pointer:
        return "%p", f"(const void*)({value})"
    if hex:
        bits = {8: "unsigned char", 16: "unsigned short", 32: "unsigned", 64: "unsigned long long"}[max(8, dtype.bits)]
        raw = f"(unsigned)({value})" if dtype.is_bool else f"tl::bitcast<{bits}>({value})"
        return ("0x%llx", f"(unsigned long long){raw}") if dtype.bits == 64 else ("0x%x", f"(unsigned){raw}")
    if dtype.is_float:
        return ("%.17g", f"(double)({value})") if dtype.bits == 64 else ("%.9g", f"(double)tl::cvt<float>({value})")
    if dtype.bits == 64:
        return ("%lld", f"(long long)({value})") if dtype.is_signed else ("%llu", f"(unsigned long long)({value})")
    return ("%d", f"(int)({value})") if dtype.is_signed or dtype.is_bool else ("%u", f"(unsigned)({value})")


def _printf(em: Emitter, attr: PrintAttr, operands: tuple[Node, ...], index: Index | None, guard: str | None) -> None:
    """One printf: the program id, the element's coordinates, the prefix and the values."""
    text = ["pid (%u, %u, %u)"]
    args = ["blockIdx.x", "blockIdx.y", "blockIdx.z"]
    if index is not None:
        text.append(" idx (" + ", ".join("%u" for _ in index.coords) + ")")
        args.extend(f"(unsigned)({c})" for c in index.coords)
    text.append(attr.prefix.replace("%", "%%"))
    values = iter(operands)
    shown = []
    for item in attr.items:
        if item is not None:
            shown.append(item.replace("%", "%%"))
            continue
        operand = next(values)
        spec, arg = _format(operand.ty.dtype, em.elem(operand, index or SCALAR), attr.hex)
        shown.append(spec)
        args.append(arg)
    call = f"printf({c_string(''.join(text) + ' '.join(shown) + chr(10))}, {', '.join(args)});"
    em.line(f"if ({guard}) {call}" if guard else call)


@emits(Op.PRINT)
def _print(em: Emitter, node: Node) -> None:
    """Scalars print one line per program (thread 0); blocks one line per element (its owner)."""
    assert isinstance(node.attr, PrintAttr)
    blocks = [a for a in node.args if not a.ty.is_scalar]
    if not blocks:
        _printf(em, node.attr, node.args, None, "tid == 0")
        return
    with em.each(blocks[0]) as idx:
        _printf(em, node.attr, node.args, idx, em.owner(blocks[0]))


# ---------------------------------------------------------------- inline PTX

_REGISTERS = {"r": ("unsigned", 32), "l": ("unsigned long long", 64), "h": ("unsigned short", 16),
              "f": ("float", 32), "d": ("double", 64)}
_UNSIGNED = {8: "unsigned char", 16: "unsigned short", 32: "unsigned", 64: "unsigned long long"}


def _lanes(dtype: DType, pack: int) -> int:
    """Elements one register holds: several narrow ones packed into 32 bits, else one."""
    return max(1, min(pack, 32 // max(8, dtype.bits)))


def _operand_count(dtype: DType, pack: int) -> int:
    return pack // _lanes(dtype, pack)


def ptx_template(asm: str) -> str:
    """Triton's ``$n`` operands as GCC-style ``%n`` (literal ``%`` doubled)."""
    return re.sub(r"\$(\d+)", r"%\1", asm.replace("%", "%%"))


def _register(code: str, dtype: DType) -> tuple[str, int]:
    letter = code.lstrip("=&+")
    if letter not in _REGISTERS:
        raise BackendError(f"inline asm constraint {code!r} is not supported by the CUDA backend")
    return _REGISTERS[letter]


def _pack(dtype: DType, register: str, values: list[str]) -> str:
    """Elements as the bits of one register (narrow ones side by side, the first lowest)."""
    if len(values) == 1 and register in ("float", "double") and ctype(dtype) == register:
        return values[0]
    width = max(8, dtype.bits)
    parts = [f"(({register})tl::bitcast<{_UNSIGNED[width]}>({v}) << {j * width})" if dtype.bits > 1 else
             f"(({register})({v}) << {j * width})" for j, v in enumerate(values)]
    return " | ".join(parts) if register not in ("float", "double") else f"tl::bitcast<{register}>({parts[0]})"


def _unpack(dtype: DType, register: str, name: str, j: int) -> str:
    width = max(8, dtype.bits)
    if register in ("float", "double"):
        return name if ctype(dtype) == register else f"tl::bitcast<{ctype(dtype)}>({name})"
    bits = f"({_UNSIGNED[width]})({name} >> {j * width})"
    return f"({bits} != 0)" if dtype.is_bool else f"tl::bitcast<{ctype(dtype)}>({bits})"


@emits(Op.ASM)
def _asm(em: Emitter, node: Node) -> None:
    """``pack`` elements per asm statement: registers of narrow types hold several side by side.
    A node is one output of the statement; the other outputs go to temporaries."""
    assert isinstance(node.attr, AsmAttr)
    attr = node.attr
    codes = [c.strip() for c in attr.constraints.split(",") if c.strip()]
    n_out = sum(_operand_count(d, attr.pack) for d in attr.outputs)
    n_in = sum(_operand_count(a.ty.dtype, attr.pack) for a in node.args)
    if len(codes) != n_out + n_in or not all(c.startswith("=") for c in codes[:n_out]):
        raise BackendError(f"inline asm: {len(codes)} constraints for {n_out} output and {n_in} input "
                           f"registers (pack={attr.pack})")
    name = em.declare(node)
    held = em.layout(node).per_thread  # fewer than pack: the group is padded with repeats
    with em.each(node, min(attr.pack, held)) as first:
        items = [first] + [_element_index(em, node, f"(k + {j % held})") for j in range(1, attr.pack)]
        outs, ins = _operands(em, node, codes[:n_out], codes[n_out:], items)
        volatile = "" if attr.pure else " volatile"
        em.line(f"asm{volatile}({c_string(ptx_template(attr.asm))} : {', '.join(outs)} : {', '.join(ins)});")
        dtype = attr.outputs[attr.output]
        lanes = _lanes(dtype, attr.pack)
        base = sum(_operand_count(d, attr.pack) for d in attr.outputs[:attr.output])
        register = _register(codes[base], dtype)[0]
        for j in range(min(attr.pack, held)):
            em.line(f"{name}[k + {j}] = {_unpack(dtype, register, f'o{base + j // lanes}', j % lanes)};")


def _element_index(em: Emitter, node: Node, k: str) -> Index:
    lay = em.layout(node)
    flat = flat_index(lay, node.ty.shape, k)
    return Index(k, coords_of(flat, node.ty.shape), flat, lay)


def _operands(em: Emitter, node: Node, out_codes: list[str], in_codes: list[str], items: list[Index]
              ) -> tuple[list[str], list[str]]:
    """Declare the output registers (``o0``...) and build the constraint lists."""
    assert isinstance(node.attr, AsmAttr)
    pack = node.attr.pack
    outs = []
    for i, code in enumerate(out_codes):
        register = _register(code, dtypes.U32)[0]
        em.line(f"{register} o{i};")
        outs.append(f'"{code}"(o{i})')
    ins = []
    codes = iter(in_codes)
    for arg in node.args:
        lanes = _lanes(arg.ty.dtype, pack)
        for r in range(pack // lanes):
            code = next(codes)
            register = _register(code, arg.ty.dtype)[0]
            values = [em.elem(arg, items[r * lanes + j]) for j in range(lanes)]
            ins.append(f'"{code}"({_pack(arg.ty.dtype, register, values)})')
    return outs, ins
