"""The CUDA emitter's core: naming, element access by coordinates, loops, ``#line``, registries.

Each op registers how it is emitted: ``@emits(Op.X)`` for the statements that compute a node,
``@element(Op.X)`` for the C++ expression of one element (elementwise ops and views), used both
to fill register arrays and to recompute ``#computed`` values where they are read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tile_lang.compiler.ir import (
    REGISTER_LAYOUTS, Category, Computed, Function, Mma, MmaRows, Node, Op, Region, Registers, Shared, held_in, use_counts,
    walk,
)
from tile_lang.dtypes import DType

from tile_lang_cupy.codegen.ctypes_ import c_string, const_decl, ctype, feature
from tile_lang_cupy.codegen.shared import SharedMemory

SCRATCH_BYTES = 512  # reductions and broadcasts: 32 values and 32 indices of up to 8 bytes


@dataclass(frozen=True)
class Index:
    """Which element is read: ``k``, its number in the reader's register layout (None when the
    coordinates are not the reader's own), and its coordinates as C++ unsigned expressions."""

    k: str | None
    coords: tuple[str, ...]
    flat: str = ""  # the flat (row-major) index, when iterating a register layout
    layout: Registers | None = None  # the register layout ``k`` counts in
    transposed: bool = False  # ``k`` counts in ``layout`` over the reversed shape (a copy walked by columns)

    def at(self, j: int, shape: tuple[int, ...]) -> Index:
        """The element ``j`` positions further inside this thread's vector (same row)."""
        if j == 0:
            return self
        flat = f"({self.flat} + {j}u)"
        return Index(f"(k + {j})" if self.k == "k" and not self.transposed else None, coords_of(flat, shape), flat,
                     self.layout)


SCALAR = Index("0", ())

Statement = Callable[["Emitter", Node], None]
Element = Callable[["Emitter", Node, Index], str]
STATEMENTS: dict[Op, Statement] = {}
ELEMENTS: dict[Op, Element] = {}


def emits(*ops: Op) -> Callable[[Statement], Statement]:
    def register(fn: Statement) -> Statement:
        for op in ops:
            STATEMENTS[op] = fn
        return fn
    return register


def element(*ops: Op) -> Callable[[Element], Element]:
    def register(fn: Element) -> Element:
        for op in ops:
            ELEMENTS[op] = fn
        return fn
    return register


def coords_of(flat: str, shape: tuple[int, ...]) -> tuple[str, ...]:
    """Row-major coordinates of flat index ``flat`` in ``shape``."""
    out = []
    stride = math.prod(shape)
    for d, size in enumerate(shape):
        stride //= size
        if size == 1:
            out.append("0u")
            continue
        text = flat if stride == 1 else f"({flat} / {stride}u)"
        out.append(text if d == 0 else f"({text} % {size}u)")
    return tuple(out)


@dataclass(frozen=True)
class Held:
    """A computed block from before a pipelined loop held in registers ``name[k]`` for walks in
    ``layout`` (its copies' loop-invariant addresses, to which each copy adds its carried offset)."""

    name: str
    layout: Registers
    transposed: bool = False  # filled by a walk over the reversed shape (``Index.transposed``)


def flat_index(layout: Registers, shape: tuple[int, ...], k: str) -> str:
    """The row-major index of register ``k`` of this thread in ``layout`` (C++ expression)."""
    if isinstance(layout, Mma):
        il = ", true" if layout.interleaved else ""
        return (f"tl::mma_flat<{shape[-1]}, {layout.warps_m}, {layout.warps_n}, {layout.tiles_m}, "
                f"{layout.tiles_n}{il}>({k}, tid)")
    if isinstance(layout, MmaRows):
        il = ", true" if layout.interleaved else ""
        return f"tl::mma_row<{layout.warps_m}, {layout.warps_n}, {layout.tiles_m}{il}>({k}, tid)"
    return f"tl::flat<{layout.threads}, {layout.vector}>({k}, tid)"


def shared_offset(layout: Shared, coords: tuple[str, ...], shape: tuple[int, ...], itemsize: int = 2) -> str:
    """Where the element at ``coords`` sits in a shared-memory block (rows padded by ``row_pad``;
    a transposed block is stored column by column; a swizzled one in panels of ``swizzle``-byte
    rows, the 16-byte chunks of each row permuted by XOR with address bits 7 and up: the row's
    low 3 bits for 128-byte rows, bits 1-2 for 64, bit 2 for 32, as wgmma's swizzle modes)."""
    if layout.swizzle:  # transposed: the block's transpose, swizzled (K-major rows for wgmma)
        r, c = coords[::-1] if layout.transposed else coords
        rows = shape[1] if layout.transposed else shape[0]
        row, chunk = layout.swizzle // itemsize, 16 // itemsize  # elements of a panel's row, of a 16-byte chunk
        chunks, shift = layout.swizzle // 16, {128: "", 64: " / 2u", 32: " / 4u"}[layout.swizzle]
        return (f"(({c}) / {row}u) * {rows * row}u + ({r}) * {row}u + (((({c}) / {chunk}u) % {chunks}u) ^ "
                f"((({r}){shift}) & {chunks - 1}u)) * {chunk}u + (({c}) % {chunk}u)")
    if layout.transposed:
        return f"{coords[1]} * {shape[0] + layout.row_pad}u + {coords[0]}"
    if not layout.row_pad:
        return flat_of(coords, shape)
    return f"{coords[0]} * {shape[1] + layout.row_pad}u + {coords[1]}"


def index_function(expr: str, names: tuple[str, ...]) -> Callable[..., int]:
    """A generated unsigned index expression (``12u`` literals, ``+ * / % ^ &``, parentheses) as
    a Python function of ``names``: the generator folds arithmetic it wrote once, without a
    second copy of the formula. Operands are non-negative, so ``//`` is C's ``/``."""
    python = re.sub(r"\b(\d+)u\b", r"\1", expr).replace("/", "//")
    assert re.fullmatch(r"[\w\s+*/%^&()]*", python), expr
    code = compile(f"lambda {', '.join(names)}: {python}", "<index>", "eval")
    fn: Callable[..., int] = eval(code, {"__builtins__": {}})
    return fn


def shared_align(layout: Shared) -> int:
    """Byte alignment of a shared-memory block: a swizzle pattern repeats every 1024 bytes."""
    return 1024 if layout.swizzle else 16


def shared_numel(layout: Shared, shape: tuple[int, ...]) -> int:
    """Elements a shared-memory block of ``shape`` occupies, padding included."""
    if layout.transposed and not layout.swizzle:
        return shape[1] * (shape[0] + layout.row_pad)
    return shape[0] * (shape[1] + layout.row_pad) if layout.row_pad else math.prod(shape)


def flat_of(coords: tuple[str, ...], shape: tuple[int, ...]) -> str:
    terms = []
    stride = math.prod(shape)
    for c, size in zip(coords, shape):
        stride //= size
        if size != 1:
            terms.append(c if stride == 1 else f"{c} * {stride}u")
    return " + ".join(terms) or "0u"



BARRIER = "__syncthreads();"
_INERT = re.compile(r"#line |[\w:]+\* s\d+ = reinterpret_cast<[\w:]+\*>\(tl_smem \+ \d+\);$")
"""Lines that touch no memory: a ``#line`` directive, a shared buffer's pointer declaration."""


def line_directive(filename: str, line: int) -> str:
    """``#line`` naming a Python source line; the file name escaped as a C string (a quote or
    newline in a path can neither break the directive nor start another)."""
    return f"#line {line} {c_string(filename)}"

class Emitter:
    """Emits one kernel. ``names`` maps nodes to C++ variables (or literals)."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict[Node, str] = {}
        self.counter = 0
        self.smem = SharedMemory(SCRATCH_BYTES)
        self.owned: dict[Node, int] = {}  # a block staged in shared memory -> its offset, released after its last reader
        self.last_line: tuple[str, int] | None = None
        self.uses: dict[Node, int] = use_counts(fn)  # how many times each node is read
        self.results: dict[Node, list[str]] = {}
        self.combined: dict[tuple[Node, ...], tuple[list[str], int]] = {}  # see cooperative._combined
        self.helpers: dict[str, str] = {}  # device functions the kernel calls, emitted before it
        self.fenced: set[Node] = set()  # shared-memory operands already visible to the tensor cores' proxy
        self.inplace: dict[Node, str] = {}  # dots accumulating into a loop's carried variable (its name)
        self.hoisted: dict[Node, Held] = {}  # computed blocks held in registers for walks in one layout
        self.slots: dict[Node, tuple[str, str, int]] = {}  # a pipelined copy's ring, slot and slot size
        self.maps = 0  # tensor maps of bulk copies: 128-byte slots of ``tl_maps`` per program
        self.under_wgmma: tuple[Node, Callable[[], None]] | None = None  # a dot's wgmma, and what runs under it

    # ---------------------------------------------------------------- text

    def line(self, text: str) -> None:
        if text.startswith(BARRIER) and self._after_barrier():
            return  # a second barrier with no memory access since the first (a reused buffer's, then a copy's)
        self.lines.append("  " * self.depth + text)

    def _after_barrier(self) -> bool:
        """Whether the statements since the last line, back to a barrier at this depth, are only
        ``#line`` directives and shared-memory pointer declarations (no memory access)."""
        indent = "  " * self.depth
        for prev in reversed(self.lines):
            body = prev.strip()
            if body.startswith(BARRIER):
                return prev.startswith(indent) and not prev.startswith(indent + " ")
            if not _INERT.match(body):
                return False
        return False

    @contextmanager
    def block(self, head: str, close: str = "}") -> Iterator[None]:
        self.line(head + " {")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            self.line(close)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def locate(self, node: Node, force: bool = False) -> None:
        """A ``#line`` directive for ``node``'s source line when it changes (or ``force``: the
        next emitted line is then exactly that source line, for ``__LINE__``)."""
        if node.loc is not None and (force or (node.loc.filename, node.loc.line) != self.last_line):
            self.lines.append(line_directive(node.loc.filename, node.loc.line))
            self.last_line = (node.loc.filename, node.loc.line)

    # ---------------------------------------------------------------- values

    def name(self, node: Node, prefix: str = "v") -> str:
        if node not in self.names:
            self.names[node] = self.fresh(prefix)
        return self.names[node]

    def layout(self, node: Node) -> Registers:
        """The register layout ``node`` is held in, or walked in when it has no registers."""
        return held_in(node, self.fn)

    def elem(self, node: Node, index: Index) -> str:
        """The C++ expression of ``node``'s element at ``index``."""
        if node.ty.is_scalar:
            return self.names[node] if node in self.names else ELEMENTS[node.op](self, node, SCALAR)
        if isinstance(node.layout, Computed):
            held = self.hoisted.get(node)
            if (held is not None and index.k is not None and index.layout == held.layout
                    and index.transposed == held.transposed):
                return f"{held.name}[{index.k}]"
            return ELEMENTS[node.op](self, node, index)
        if isinstance(node.layout, Shared):
            return f"{self.names[node]}[{shared_offset(node.layout, index.coords, node.ty.shape, node.ty.dtype.itemsize)}]"
        if node.ty.numel == 1:
            return f"{self.names[node]}[0]"
        assert index.k is not None and not index.transposed, f"register value read at foreign coordinates: {node.op}"
        if isinstance(node.layout, MmaRows) and isinstance(index.layout, Mma) and node.layout.spans(index.layout):
            return f"{self.names[node]}[tl::mma_row_of<{index.layout.tiles_n}>({index.k})]"
        assert index.layout is None or index.layout == self.layout(node), (
            f"register value read in another layout: {node.op} {self.layout(node)} at {index.layout}")
        return f"{self.names[node]}[{index.k}]"

    def declare(self, node: Node, prefix: str = "v") -> str:
        """Declare storage for ``node`` (an array for blocks); returns its name."""
        name = self.name(node, prefix)
        if node.ty.is_scalar:
            self.line(f"{ctype(node.ty.dtype)} {name};")
        else:
            self.line(f"{ctype(node.ty.dtype)} {name}[{self.layout(node).per_thread}];")
        return name

    @contextmanager
    def each(self, node: Node, step: int = 1, unroll: int = 0) -> Iterator[Index]:
        """A loop over this thread's elements of ``node``'s register layout."""
        with self.walk(self.layout(node), node.ty.shape, step, unroll) as idx:
            yield idx

    @contextmanager
    def walk(self, lay: Registers, shape: tuple[int, ...], step: int = 1, unroll: int = 0) -> Iterator[Index]:
        """A loop over this thread's elements of a block of ``shape`` in layout ``lay``, unrolled
        ``unroll`` iterations at a time (0: all)."""
        flat = self.fresh("f")
        self.line(f"#pragma unroll {unroll}" if unroll else "#pragma unroll")
        with self.block(f"for (int k = 0; k < {lay.per_thread}; k += {step})"):
            if isinstance(lay, Mma) and len(shape) == 2:  # the fragment's row and column, not a division
                il = ", true" if lay.interleaved else ""
                row, col = f"{flat}r", f"{flat}c"
                self.line(f"const unsigned {row} = tl::mma_frag_row<{lay.warps_m}, {lay.warps_n}, {lay.tiles_m}, "
                          f"{lay.tiles_n}{il}>(k, tid);")
                self.line(f"const unsigned {col} = tl::mma_frag_col<{lay.warps_m}, {lay.warps_n}, {lay.tiles_n}>(k, tid);")
                self.line(f"const unsigned {flat} = {row} * {shape[1]}u + {col};")
                yield Index("k", (row, col), flat, lay)
                return
            self.line(f"const unsigned {flat} = {flat_index(lay, shape, 'k')};")
            yield Index("k", coords_of(flat, shape), flat, lay)

    def owner(self, node: Node) -> str | None:
        """The condition that this thread holds the canonical copy (blocks smaller than the CTA
        are replicated: only the first copy stores or performs atomics)."""
        lay = self.layout(node)
        used = None if lay.threads == self.fn.threads else f"tid < {lay.threads}u"
        if isinstance(lay, MmaRows):  # the four lanes of a quad hold the same rows
            return "(tid & 3u) == 0u" + (f" && {used}" if used else "")
        return used

    def define(self, node: Node, value: Callable[[Index], str]) -> None:
        """``node`` as a ``const`` scalar, or as registers filled element by element, with
        ``value(index)`` giving each element's expression."""
        if node.ty.is_scalar:
            self.line(f"{const_decl(node.ty.dtype, self.name(node))} = {value(SCALAR)};")
            return
        name = self.declare(node)
        with self.each(node) as idx:
            self.line(f"{name}[k] = {value(idx)};")

    def assign_from(self, target: Node, value: Node, name: str) -> None:
        """``name`` (storage shaped like ``target``) = ``value`` element by element (through shared
        memory when ``value`` sits in registers of another layout)."""
        if target.ty.is_scalar:
            self.line(f"{name} = {self.elem(value, SCALAR)};")
            return
        if isinstance(value.layout, REGISTER_LAYOUTS) and value.ty.numel > 1 and value.layout != self.layout(target):
            value = self.random_access(value)
        with self.each(target) as idx:
            self.line(f"{name}[k] = {self.elem(value, idx)};")

    def shared(self, nbytes: int, align: int = 16, owner: Node | None = None) -> int:
        """Reserve ``nbytes`` of dynamic shared memory aligned to ``align`` bytes; returns the
        byte offset. An ``owner`` (a block staged there) gives it back after its last reader."""
        offset, fence = self.smem.reserve(nbytes, align)
        if fence:
            self.line("__syncthreads();  // these bytes held a block released above: its readers are done")
        if owner is not None:
            self.owned[owner] = offset
        return offset

    @property
    def smem_bytes(self) -> int:
        """The kernel's dynamic shared memory: the most reserved at once."""
        return self.smem.peak

    @contextmanager
    def shared_scope(self) -> Iterator[None]:
        """Shared memory reserved inside is free again after it: the code that follows reuses it
        (what a loop or a branch stages, a pipelined loop's rings)."""
        mark = self.smem.mark()
        try:
            yield
        finally:
            self.smem.release_since(mark)

    def scratch(self, dtype: DType, count: int, prefix: str = "s") -> str:
        """A fresh shared-memory array of ``count`` elements of ``dtype``; returns its name."""
        t = ctype(dtype)
        name = self.fresh(prefix)
        self.line(f"{t}* {name} = reinterpret_cast<{t}*>(tl_smem + {self.shared(count * max(1, dtype.bits // 8))});")
        return name

    def stage(self, node: Node) -> str:
        """A private row-major copy of block ``node`` in shared memory, visible to every thread
        when this returns (the ops that read or update elements at any coordinates use it)."""
        name = self.scratch(node.ty.dtype, node.ty.numel)
        self.line("__syncthreads();")  # earlier readers of this buffer (in a loop) are done
        with self.each(node) as idx:
            owner = self.owner(node)
            store = f"{name}[{idx.flat}] = {self.elem(node, idx)};"
            self.line(f"if ({owner}) {store}" if owner else store)
        self.line("__syncthreads();")
        return name

    def random_access(self, node: Node) -> Node:
        """``node``, or its copy in shared memory when its elements sit in other threads'
        registers: the result can be read at any coordinates with :meth:`elem`."""
        if node.ty.is_scalar or node.ty.numel == 1 or isinstance(node.layout, (Shared, Computed)):
            return node
        staged = Node(Op.CONVERT, node.ty, (node,), loc=node.loc, layout=Shared())
        self.names[staged] = self.stage(node)
        return staged

    @contextmanager
    def strided(self, count: str) -> Iterator[str]:
        """A loop dealing ``count`` work items (a C++ expression) to the block's threads."""
        w = self.fresh("w")
        with self.block(f"for (unsigned {w} = tid; {w} < {count}; {w} += {self.fn.threads}u)"):
            yield w

    # ---------------------------------------------------------------- nodes

    def region(self, region: Region) -> None:
        last = _last_readers(region)
        done: dict[int, list[Node]] = {}
        for node, i in last.items():
            done.setdefault(i, []).append(node)
        for i, node in enumerate(region.body):
            if node.type is not None and not node.ty.is_scalar and isinstance(node.layout, Computed):
                continue  # evaluated where it is read
            self.locate(node)
            if node.regions and not any(isinstance(r.layout, Shared) for sub in node.regions for r in sub.results):
                with self.shared_scope():  # nothing it stages in shared memory outlives it
                    STATEMENTS[node.op](self, node)
            else:
                STATEMENTS[node.op](self, node)
            for staged in done.get(i, ()):
                offset = self.owned.pop(staged, None)
                if offset is not None and offset in self.smem.live:
                    self.smem.release(offset)

    def features(self) -> list[str]:
        """The header's optional parts this kernel needs (fp16/bf16/fp8 types, assertions)."""
        nodes = walk(self.fn.body)
        found = {feature(n.ty.dtype) for n in nodes if n.type is not None}
        found |= {feature(p.ty.dtype) for p in self.fn.params}
        if any(n.op is Op.ASSERT for n in nodes):
            found.add("TL_USE_ASSERT")
        if any(isinstance(n.layout, (Mma, MmaRows)) or n.op is Op.ASYNC_COPY for n in nodes):
            found.add("TL_USE_MMA")
        if self.maps:
            found.add("TL_USE_TMA")
        return sorted(f for f in found if f is not None)


def _last_readers(region: Region) -> dict[Node, int]:
    """For each block ``region`` stages in shared memory, the index of the last statement of its
    body reading it (itself if none), anything inside that statement's loops or branches
    included; a view or a copy of it read later keeps it (they may read its bytes); a block
    the region yields, none (it outlives the region)."""
    index = {node: i for i, node in enumerate(region.body)}
    last: dict[Node, int] = {}

    def read(node: Node, at: int) -> None:
        for arg in node.args:
            if arg in index:
                last[arg] = max(last.get(arg, -1), at)
        for sub in node.regions:
            for inner in sub.body:
                read(inner, at)
            for result in sub.results:
                if result in index:
                    last[result] = max(last.get(result, -1), at)

    for i, node in enumerate(region.body):
        read(node, i)
    for node in reversed(region.body):  # a view of a block (or a block read lazily) reads it where it is read
        if node in last and (node.op.info.category is Category.VIEW or isinstance(node.layout, (Shared, Computed))):
            for arg in node.args:
                if arg in last:
                    last[arg] = max(last[arg], last[node])
    yielded = set(region.results)
    return {node: last.get(node, i) for i, node in enumerate(region.body)
            if node.op is Op.CONVERT and isinstance(node.layout, Shared) and node not in yielded}
