"""Every op is defined once and reaches both backends: each builtin has a NumPy implementation
and a compiler lowering (or is one of the Python operators the front end compiles itself), each
IR op an emitter, each unary and binary function a CUDA spelling. A new op that misses one of
them fails here, not in a user's kernel."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tile_lang as tl
from tile_lang import dtypes
from tile_lang.builtin import BUILTINS
from tile_lang.compiler.ir import BinaryAttr, BinaryFn, Node, Op, Type, UnaryAttr, UnaryFn
from tile_lang.compiler import lowering
from tile_lang.compiler.lowering import LOWERINGS
from tile_lang.errors import KernelError
from tile_lang_cupy.codegen.emitter import ELEMENTS, SCALAR, STATEMENTS, Emitter
from tile_lang_numpy.engine import CAPABILITIES, IMPLS

# Python syntax the compiler's front end handles directly (visit_Subscript, conditions, range bounds)
FRONT_END = frozenset({"subscript", "truth", "index"})


def test_every_builtin_runs_on_the_reference_and_compiles() -> None:
    """Every builtin has an implementation and a lowering, or its backend declares it lacks it
    (a capability, refused by the dispatcher with one message), never both."""
    builtins = set(BUILTINS.values())
    assert sorted(b.name for b in builtins - set(IMPLS) - set(CAPABILITIES.lacks)) == []
    assert sorted(b.name for b in builtins - set(LOWERINGS)) == sorted(FRONT_END)
    assert sorted(b.name for b in lowering.CAPABILITIES.lacks) == sorted(FRONT_END)
    assert set(CAPABILITIES.lacks) & set(IMPLS) == set()
    assert set(lowering.CAPABILITIES.lacks) & set(LOWERINGS) == set()


def test_every_ir_op_has_an_emitter() -> None:
    assert [op for op in Op if op not in STATEMENTS and op not in ELEMENTS] == []


def _spelled(node: Node) -> str:
    from tile_lang.compiler.ir import Function, Region

    em = Emitter(Function("k", (), Region()))
    for arg in node.args:
        em.names[arg] = "x"
    return ELEMENTS[node.op](em, node, SCALAR)


@pytest.mark.parametrize("fn", list(UnaryFn))
def test_every_unary_fn_has_a_cuda_spelling(fn: UnaryFn) -> None:
    dtype = dtypes.BOOL if fn is UnaryFn.NOT else dtypes.I32 if fn is UnaryFn.INVERT else dtypes.F32
    x = Node(Op.PARAM, Type(dtype))
    assert _spelled(Node(Op.UNARY, Type(dtype), (x,), UnaryAttr(fn)))


@pytest.mark.parametrize("fn", list(BinaryFn))
def test_every_binary_fn_has_a_cuda_spelling(fn: BinaryFn) -> None:
    integer = fn in (BinaryFn.AND, BinaryFn.OR, BinaryFn.XOR, BinaryFn.SHL, BinaryFn.SHR, BinaryFn.UMULHI)
    dtype = dtypes.U32 if fn is BinaryFn.UMULHI else dtypes.I32 if integer else dtypes.F32
    x, y = Node(Op.PARAM, Type(dtype)), Node(Op.PARAM, Type(dtype))
    result = dtypes.BOOL if fn.is_comparison else dtype
    assert _spelled(Node(Op.BINARY, Type(result), (x, y), BinaryAttr(fn)))


def test_the_math_table_drives_both_backends_and_the_ir() -> None:
    """Each builtin of the UNARY_MATH family has a row in the reference's and the compiler's
    MATH table, and is implemented and lowered from it; every float function of the IR has a
    row (the others are operators)."""
    from tile_lang.builtin import Family, builtin_of
    from tile_lang.compiler.lowering import MATH as LOWERED
    from tile_lang_numpy.elementwise import MATH as EVALUATED

    family = {op for op in BUILTINS.values() if op.family is Family.UNARY_MATH}
    assert {builtin_of(fn) for fn in EVALUATED} == family == {builtin_of(fn) for fn in LOWERED}
    assert all(op in IMPLS and op in LOWERINGS for op in family)
    operators = {UnaryFn.NEG, UnaryFn.INVERT, UnaryFn.NOT, UnaryFn.ABS, UnaryFn.ROUND_TF32}
    assert sorted(fn.value for fn in UnaryFn if fn not in operators) == sorted(fn.value for fn in LOWERED.values())


def test_the_libdevice_tables_drive_both_backends_and_the_ir() -> None:
    """Each builtin of the LIBDEVICE family has its overloads (the shared rule's row), a row in
    the reference's and the compiler's LIBDEVICE tables, and is implemented and lowered from
    them; every LibFn is some function's and has a CUDA spelling for each width its overloads take."""
    from tile_lang.builtin import Family, builtin_of
    from tile_lang.compiler.ir import LibAttr, LibFn
    from tile_lang.compiler.lowering import LIBDEVICE as LOWERED
    from tile_lang.semantics.base import RULES
    from tile_lang.semantics.libdevice import SIGNATURES
    from tile_lang_numpy.libdevice import LIBDEVICE as EVALUATED

    family = {op for op in BUILTINS.values() if op.family is Family.LIBDEVICE}
    assert {builtin_of(fn) for fn in SIGNATURES} == {builtin_of(fn) for fn in EVALUATED} == family
    assert family == {builtin_of(fn) for fn in LOWERED}
    assert all(op in IMPLS and op in LOWERINGS and op in RULES for op in family)
    assert sorted(fn.value for fn in LibFn) == sorted(fn.value for fn in LOWERED.values())
    for fn, lib in LOWERED.items():
        for overload in SIGNATURES[fn]:
            args = tuple(Node(Op.PARAM, Type(dtype)) for dtype in overload.operands)
            assert _spelled(Node(Op.LIBDEVICE, Type(overload.result), args, LibAttr(lib))), (lib, overload)


def test_the_operator_table_covers_every_operator_and_reaches_cuda() -> None:
    """Each Python operator has a row of tile_lang.operators.OPERATORS naming an IR function with a
    CUDA spelling and, except C-style integer division, the NumPy function the reference evaluates."""
    from tile_lang.operators import OPERATORS, BinaryOp

    assert sorted(op.value for op in BinaryOp if op not in OPERATORS) == []
    for op, row in OPERATORS.items():
        fn = BinaryFn(row.fn)
        assert fn.is_comparison == op.is_comparison, op
        dtype = dtypes.I32
        x, y = Node(Op.PARAM, Type(dtype)), Node(Op.PARAM, Type(dtype))
        assert _spelled(Node(Op.BINARY, Type(dtypes.BOOL if fn.is_comparison else dtype), (x, y), BinaryAttr(fn)))
    assert sorted(op.value for op, row in OPERATORS.items() if row.reference is None) == ["%", "//"]


# ---------------------------------------------------------------- adding an op of a family
#
# A unary function, a reduction and an atomic, each added as docs/compiler.md says: its
# declaration (the family's decorator) plus one row in each backend's table, registered as each
# backend module registers its rows at import. The family's rule checks them on both backends.

SCRATCH_SOURCE = """
def scratch_ops(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], p_ptr: Pointer[tl.f32], m_ptr: Pointer[tl.f32],
                B: constexpr) -> None:
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, scratch.tanh_like(x))
    rows = tl.arange(0, 4)[:, None] * (B // 4) + tl.arange(0, B // 4)[None, :]
    tl.store(p_ptr + tl.arange(0, 4), scratch.prod_like(tl.load(x_ptr + rows) + 0.5, 1))
    scratch.atomic_max_like(m_ptr + offs % 4, x)
"""

REJECTED_SOURCE = """
def scratch_rejected(o_ptr: Pointer[tl.f32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, scratch.tanh_like(offs))
"""


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The three ops declared and given their rows, in tables the test leaves as it found them."""
    import tile_lang.builtin as builtin
    import tile_lang_numpy.atomic as np_atomic
    import tile_lang_numpy.elementwise as np_elementwise
    import tile_lang_numpy.reduction as np_reduction
    from tile_lang.compiler import lowering_collective, lowering_memory
    from tile_lang.compiler.ir import AtomicFn, ReduceFn
    from tile_lang.compiler.lowering_base import Lowering, lowers
    from tile_lang_numpy.engine import Impl, implements

    monkeypatch.setattr(builtin, "BUILTINS", dict(BUILTINS))
    tables: list[dict[Any, Any]] = [IMPLS, LOWERINGS, np_elementwise.MATH, lowering.MATH, np_reduction.REDUCTIONS,
                                    lowering_collective.REDUCTIONS, np_atomic.ATOMICS, lowering_memory.ATOMICS]
    saved = [dict(table) for table in tables]

    def registered(fn: Any, impl: Impl, lowered: Lowering) -> None:
        """What each backend module does with each row of its tables at import."""
        implements(fn)(impl)
        lowers(fn)(lowered)

    @builtin.unary_math
    def tanh_like(x: Any) -> Any:
        """tanh, as a scratch unary function."""

    np_elementwise.MATH[tanh_like] = np.tanh
    lowering.MATH[tanh_like] = UnaryFn.TANH
    registered(tanh_like, np_elementwise.unary_math(np.tanh), lowering.unary_math(UnaryFn.TANH))

    @builtin.reduction
    def prod_like(input: Any, axis: Any = None, keep_dims: bool = False) -> Any:
        """The product along ``axis``, as a scratch reduction."""

    np_reduction.REDUCTIONS[prod_like] = np.multiply
    lowering_collective.REDUCTIONS[prod_like] = ReduceFn.PROD
    registered(prod_like, np_reduction.reduction("tl.prod_like", np.multiply),
               lowering_collective.reduction_lowering(ReduceFn.PROD))

    @builtin.read_modify_write
    def atomic_max_like(pointer: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> Any:
        """``*pointer = max(*pointer, val)``, as a scratch atomic."""

    np_atomic.ATOMICS[atomic_max_like] = np_atomic.scan_fold(np.maximum, ordered=True)
    lowering_memory.ATOMICS[atomic_max_like] = AtomicFn.MAX
    registered(atomic_max_like, np_atomic.read_modify_write("atomic_max_like", np_atomic.ATOMICS[atomic_max_like]),
               lowering_memory.atomic_lowering("atomic_max_like", AtomicFn.MAX))

    module = types.ModuleType("scratch")
    for fn in (tanh_like, prod_like, atomic_max_like):
        setattr(module, fn.__name__, fn)
    yield module
    for table, items in zip(tables, saved):
        table.clear()
        table.update(items)


def _scratch_kernel(name: str, source: str, scratch: types.ModuleType) -> Any:
    from tests.fuzz.runner import load

    kernel = load(name, "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n" + source.lstrip())
    kernel.fn.__globals__["scratch"] = scratch
    return kernel


def test_a_unary_function_a_reduction_and_an_atomic_added_by_declaration_and_rows(
        backend: str, scratch: types.ModuleType) -> None:
    kernel = _scratch_kernel("scratch_ops", SCRATCH_SOURCE, scratch)
    x = np.random.default_rng(18).uniform(-2, 2, 32).astype(np.float32)
    wide = x.astype(np.float64)
    with tl.backend(backend):
        out, prod = tl.to_device(np.full(32, np.nan, np.float32)), tl.to_device(np.full(4, np.nan, np.float32))
        maxima = tl.to_device(np.full(4, -np.inf, np.float32))
        kernel[(1,)](tl.to_device(x), out, prod, maxima, B=32)
        np.testing.assert_allclose(out.numpy(), np.tanh(wide), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(prod.numpy(), np.prod(wide.reshape(4, 8) + 0.5, axis=1), rtol=1e-5)
        np.testing.assert_array_equal(maxima.numpy(), x.reshape(8, 4).max(axis=0))


def test_an_added_unary_function_is_checked_by_its_family_rule(backend: str, scratch: types.ModuleType) -> None:
    kernel = _scratch_kernel("scratch_rejected", REJECTED_SOURCE, scratch)
    with tl.backend(backend), pytest.raises(KernelError, match=r"tl\.tanh_like needs a floating-point block, got tl\.i32") as caught:
        kernel[(1,)](tl.to_device(np.full(8, np.nan, np.float32)), B=8)
    assert caught.value.lineno == kernel.fn.__code__.co_firstlineno + 3


def test_the_generated_re_exports_and_op_list_are_current() -> None:
    """``tl.*``, ``tl.math.*`` and docs/ops.md are written from the declarations by
    scripts/generate_tables.py; a declaration added or changed without running it fails here."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "generate_tables.py"
    spec = importlib.util.spec_from_file_location("generate_tables", path)
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    assert generate.stale() == [], "run python scripts/generate_tables.py"
    declared = {name for module in generate.TL_MODULES for name in generate.ops_of(generate._module(module))}
    assert declared <= set(tl.__all__) and all(callable(getattr(tl, name)) for name in declared)
    assert {"exp", "tanh", "j0", "fast_expf"} <= set(tl.math.__all__)
