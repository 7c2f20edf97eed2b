"""IR as text: one line per node, ``%n = op[attr](args) : type layout  @file:line``."""

from __future__ import annotations

from tile_lang.compiler.ir import Function, Mma, Node, Op, Region, Shared


class _Names:
    def __init__(self) -> None:
        self.ids: dict[Node, str] = {}

    def __getitem__(self, node: Node) -> str:
        if node not in self.ids:
            self.ids[node] = f"%{len(self.ids)}"
        return self.ids[node]


def print_function(fn: Function) -> str:
    """The whole kernel; stable numbering, so it diffs well between passes."""
    names = _Names()
    params = ", ".join(f"{names[p]}: {p.ty}" for p in fn.params)
    lines = [f"func @{fn.name}({params}) num_warps={fn.num_warps} num_stages={fn.num_stages} arch={fn.arch} {{"]
    _region(fn.body, names, lines, "  ")
    lines.append("}")
    return "\n".join(lines)


def _region(region: Region, names: _Names, lines: list[str], indent: str) -> None:
    for node in region.body:
        lines.append(indent + _node(node, names))
        for i, sub in enumerate(node.regions):
            params = ", ".join(f"{names[p]}: {p.ty}" for p in sub.params)
            lines.append(f"{indent}  ^{i}({params}):")
            _region(sub, names, lines, indent + "    ")
            if sub.results:
                lines.append(f"{indent}    yield {', '.join(names[r] for r in sub.results)}")


def _node(node: Node, names: _Names) -> str:
    attr = str(node.attr)
    head = node.op.value + (f"[{attr}]" if attr else "")
    text = f"{head}({', '.join(names[a] for a in node.args)})"
    if node.type is not None:
        text = f"{names[node]} = {text} : {node.type}"
    if node.layout is not None:
        text += f" {node.layout}"
    if node.loc is not None:
        text += f"  @{node.loc.line}"
    if node.op is Op.DOT and node.layout is not None:
        text += f"  ; {dot_unit(node)}"
    return text


def dot_unit(node: Node) -> str:
    """Which units a dot runs on, once layouts are assigned (why not tensor cores: see
    ``passes.layouts.mma_layout``)."""
    if not isinstance(node.layout, Mma):
        return "CUDA cores (no tensor-core instruction fits its shapes, dtypes and precision)"
    b = node.args[1].layout
    if not (isinstance(b, Shared) and b.swizzle):
        return "tensor cores: mma.sync"
    return "tensor cores: wgmma" + ("" if isinstance(node.args[0].layout, Shared) else ", A from registers")
