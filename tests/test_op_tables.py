"""Every op is defined once and reaches both backends: each builtin has a NumPy implementation
and a compiler lowering (or is one of the Python operators the front end compiles itself), each
IR op an emitter, each unary and binary function a CUDA spelling. A new op that misses one of
them fails here, not in a user's kernel."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
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


# ---- every member of the function families reaches both backends and computes the same ----------

ATOMIC_SOURCE = """
def {name}(p_ptr: Pointer[tl.i32], v_ptr: Pointer[tl.i32], old_ptr: Pointer[tl.i32], B: constexpr) -> None:
    offs = tl.arange(0, B)
    old = {call}
    tl.store(old_ptr + offs, old)
"""
Fold = Callable[[np.ndarray[Any, Any], np.ndarray[Any, Any]], Any]
ATOMIC_CALLS: dict[str, tuple[str, Fold]] = {
    "atomic_add": ("tl.atomic_add(p_ptr + offs, tl.load(v_ptr + offs))", np.add),
    "atomic_max": ("tl.atomic_max(p_ptr + offs, tl.load(v_ptr + offs))", np.maximum),
    "atomic_min": ("tl.atomic_min(p_ptr + offs, tl.load(v_ptr + offs))", np.minimum),
    "atomic_and": ("tl.atomic_and(p_ptr + offs, tl.load(v_ptr + offs))", np.bitwise_and),
    "atomic_or": ("tl.atomic_or(p_ptr + offs, tl.load(v_ptr + offs))", np.bitwise_or),
    "atomic_xor": ("tl.atomic_xor(p_ptr + offs, tl.load(v_ptr + offs))", np.bitwise_xor),
    "atomic_xchg": ("tl.atomic_xchg(p_ptr + offs, tl.load(v_ptr + offs))", lambda p, v: v),
    "atomic_cas": ("tl.atomic_cas(p_ptr + offs, offs % 3, tl.load(v_ptr + offs))",
                   lambda p, v: np.where(p == np.arange(p.size) % 3, v, p)),
}


def test_every_atomic_fn_is_some_atomic_builtin() -> None:
    from tile_lang.compiler.ir import AtomicFn
    from tile_lang.compiler.lowering_memory import ATOMICS

    assert set(ATOMICS.values()) == set(AtomicFn)
    assert {getattr(fn, "__name__", "") for fn in ATOMICS} == set(ATOMIC_CALLS)


@pytest.mark.parametrize("name", sorted(ATOMIC_CALLS))
def test_every_atomic_runs_on_both_backends(backend: str, name: str) -> None:
    from tests.fuzz.runner import load

    call, fold = ATOMIC_CALLS[name]
    kernel = load(f"family_{name}", "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
                  + ATOMIC_SOURCE.format(name=f"family_{name}", call=call).lstrip())
    rng = np.random.default_rng(len(name))
    start, values = rng.integers(-3, 3, 16).astype(np.int32), rng.integers(-9, 9, 16).astype(np.int32)
    with tl.backend(backend):
        p, old = tl.to_device(start), tl.to_device(np.full(16, -99, np.int32))
        kernel[(1,)](p, tl.to_device(values), old, B=16)
        np.testing.assert_array_equal(old.numpy(), start)
        np.testing.assert_array_equal(p.numpy(), fold(start, values))


COLLECTIVE_SOURCE = """
def {name}(x_ptr: Pointer[tl.f32], o_ptr: Pointer[tl.f32], B: constexpr) -> None:
    rows = tl.arange(0, 4)[:, None] * B + tl.arange(0, B)[None, :]
    x = tl.load(x_ptr + rows)
    out = {call}
    tl.store(o_ptr + {where}, out.to(tl.float32))
"""
ROWS = "tl.arange(0, 4)"
COLLECTIVES: dict[str, tuple[str, str, Callable[[np.ndarray[Any, Any]], Any]]] = {  # each builtin reaching a ReduceFn (a reduction or a scan), with NumPy's answer along axis 1
    "sum": ("tl.sum(x, 1)", ROWS, lambda x: x.sum(1)),
    "max": ("tl.max(x, 1)", ROWS, lambda x: x.max(1)),
    "min": ("tl.min(x, 1)", ROWS, lambda x: x.min(1)),
    "argmax": ("tl.argmax(x, 1)", ROWS, lambda x: x.argmax(1)),
    "argmin": ("tl.argmin(x, 1)", ROWS, lambda x: x.argmin(1)),
    "xor_sum": ("tl.xor_sum(x.to(tl.int32, bitcast=True), 1)", ROWS,
                lambda x: np.bitwise_xor.reduce(x.astype(np.float32).view(np.int32), 1)),
    "cumsum": ("tl.cumsum(x, 1)", "rows", lambda x: np.cumsum(x, 1)),
    "cumprod": ("tl.cumprod(x, 1)", "rows", lambda x: np.cumprod(x, 1)),
}


def test_every_reduce_fn_is_reached_by_some_collective() -> None:
    """ReduceFn's members are the reductions' and scans' combine functions: each is some builtin's."""
    from tile_lang.compiler.ir import ReduceFn

    reached = {"sum": ReduceFn.SUM, "max": ReduceFn.MAX, "min": ReduceFn.MIN, "argmax": ReduceFn.ARGMAX,
               "argmin": ReduceFn.ARGMIN, "xor_sum": ReduceFn.XOR, "cumprod": ReduceFn.PROD}
    assert set(reached.values()) == set(ReduceFn) and set(reached) <= set(COLLECTIVES)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_every_collective_runs_on_both_backends(backend: str, name: str) -> None:
    from tests.fuzz.runner import load

    call, where, expect = COLLECTIVES[name]
    kernel = load(f"family_{name}", "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n"
                  "@tl.kernel\n" + COLLECTIVE_SOURCE.format(name=f"family_{name}", call=call, where=where).lstrip())
    x = np.random.default_rng(len(name)).uniform(0.5, 1.5, (4, 8)).astype(np.float32)
    want = expect(x if name == "xor_sum" else x.astype(np.float64))  # xor_sum: of the f32 bits
    with tl.backend(backend):
        out = tl.to_device(np.full(want.size, np.nan, np.float32))
        kernel[(1,)](tl.to_device(x), out, B=8)
        got = out.numpy().reshape(want.shape)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5)


def test_every_rand_fn_is_some_random_builtin_and_runs_on_both(backend: str) -> None:
    """tl.randint, tl.rand and tl.randn (RandFn's members) give the same numbers on both backends."""
    from tile_lang.compiler.ir import RandFn
    from tests.fuzz.runner import load

    assert {fn.value for fn in RandFn} == {"randint", "rand", "randn"}
    kernel = load("random_family", "import tile_lang as tl\nfrom tile_lang import Pointer, constexpr\n\n\n@tl.kernel\n"
                  "def random_family(o_ptr: Pointer[tl.f32], i_ptr: Pointer[tl.uint32], seed: int, B: constexpr) -> None:\n"
                  "    offs = tl.arange(0, B)\n"
                  "    tl.store(o_ptr + offs, tl.rand(seed, offs))\n"
                  "    tl.store(o_ptr + B + offs, tl.randn(seed, offs))\n"
                  "    tl.store(i_ptr + offs, tl.randint(seed, offs))\n")
    results = {}
    for name in ("numpy", backend):
        with tl.backend(name):
            floats, ints = tl.to_device(np.full(32, np.nan, np.float32)), tl.to_device(np.zeros(16, np.uint32))
            kernel[(1,)](floats, ints, 1234, B=16)
            results[name] = floats.numpy(), ints.numpy()
    (f_ref, i_ref), (f_got, i_got) = results["numpy"], results[backend]
    assert ((f_ref[:16] >= 0) & (f_ref[:16] < 1)).all() and np.unique(i_ref).size == 16
    np.testing.assert_allclose(f_got, f_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(i_got, i_ref)
