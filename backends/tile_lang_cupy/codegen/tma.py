"""Bulk tensor copies (Hopper's TMA): an ASYNC_COPY with a box (passes/pipeline.py) lands a
descriptor's or block pointer's 2-D block in shared memory, one ``cp.async.bulk.tensor`` per
128-byte panel of its swizzled layout, issued by one thread and completing on an mbarrier.

Its tensor map is built on the device from the box's base, shape and strides (kernel values) by
one warp, into a 128-byte slot of ``tl_maps``, global memory the launch provides per map and
program (``CudaKernel.map_bytes``).
"""

from __future__ import annotations

from tile_lang.compiler.ir import ConstAttr, Node, Op, Shared, box_of

from tile_lang_cupy.codegen.ctypes_ import literal
from tile_lang_cupy.codegen.emitter import SCALAR, Emitter

MAP_BYTES = 128
PROGRAM = "(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))"
PROGRAMS = "(1ull * gridDim.x * gridDim.y * gridDim.z)"


def is_bulk(node: Node) -> bool:
    return box_of(node) is not None


def box_shape(copy: Node) -> tuple[int, int]:
    """The copied box's rows and columns: the block's, or its transpose's when the block is
    stored column by column (``k.T``: the box is ``k``)."""
    rows, cols = copy.ty.shape
    assert isinstance(copy.layout, Shared)
    return (cols, rows) if copy.layout.transposed else (rows, cols)


def copy_bytes(copies: list[Node]) -> int:
    """The bytes the copies deliver, out-of-bounds zeros included (what an mbarrier expects)."""
    return sum(c.ty.numel * c.ty.dtype.itemsize for c in copies)


def tensor_map(em: Emitter, copy: Node) -> str:
    """Build ``copy``'s tensor map in a fresh slot, by a warp of its own (the maps of a loop are
    built side by side); returns the slot's name. A barrier and :func:`acquire` must follow
    before the first copy through it."""
    box = box_of(copy)
    assert box is not None
    rows, _ = box_shape(copy)
    item = copy.ty.dtype.itemsize
    slot, name = em.maps, em.fresh("map")
    em.maps += 1
    stage = em.shared(MAP_BYTES, MAP_BYTES)
    dim1, dim0 = (_before_loop(em, n) for n in box.shape)
    em.line(f"unsigned char* {name} = tl_maps + ({slot}ull * {PROGRAMS} + {PROGRAM}) * {MAP_BYTES}ull;")
    warp = slot % em.fn.num_warps
    em.line(f"if ((tid >> 5) == {warp}u) tl::tensormap_2d<{item}>(tl_smem + {stage}, {name}, "
            f"{_before_loop(em, box.base)}, {dim0}, {dim1}, {item}ull * ({_before_loop(em, box.strides[0])}), "
            f"{128 // item}u, {rows}u, tid & 31u);")
    return name


def acquire(em: Emitter, maps: list[str]) -> None:
    """After the barrier that follows the maps' building: the copying thread's view of them."""
    em.line(f"if (tid == 0u) {{ {' '.join(f'tl::tensormap_acquire({m});' for m in maps)} }}")


def _before_loop(em: Emitter, node: Node) -> str:
    """A map field's value where the map is built: a value from before the loop, or a constant
    (the load's constants sit in the loop's body)."""
    if node.op is Op.CONST and isinstance(node.attr, ConstAttr):
        return literal(node.attr.value, node.ty.dtype)
    return em.elem(node, SCALAR)


def barriers(em: Emitter, count: int) -> str:
    """``count`` fresh mbarriers, initialised by thread 0 (a barrier must follow); returns their
    array's name."""
    name = em.fresh("bar")
    em.line(f"unsigned long long* {name} = reinterpret_cast<unsigned long long*>(tl_smem + {em.shared(8 * count, 8)});")
    em.line(f"if (tid == 0u) for (int s = 0; s < {count}; ++s) tl::mbar_init({name} + s);")
    return name


def issue(em: Emitter, copies: dict[Node, tuple[str, str]], bar: str) -> None:
    """Thread 0 announces the bytes on ``bar`` and copies each box (copy -> (map, destination)),
    a panel of 128-byte rows at a time."""
    with em.block("if (tid == 0u)"):
        em.line(f"tl::mbar_expect({bar}, {copy_bytes(list(copies))}u);")
        for copy, (map_, dst) in copies.items():
            box = box_of(copy)
            assert box is not None
            rows, cols = box_shape(copy)
            panel = 128 // copy.ty.dtype.itemsize
            row, col = (em.elem(n, SCALAR) for n in box.offsets)
            for p in range(cols // panel):
                em.line(f"tl::tma_load_2d({dst} + {p * rows * panel}u, {map_}, static_cast<int>({col}) + {p * panel}, "
                        f"static_cast<int>({row}), {bar});")


def release(em: Emitter, bar: str, count: int) -> None:
    """After a barrier past every thread's last wait: the mbarriers' memory may hold other data
    again when this returns."""
    em.line(f"if (tid == 0u) for (int s = 0; s < {count}; ++s) tl::mbar_inval({bar} + s);")
    em.line("__syncthreads();")
