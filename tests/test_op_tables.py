"""Every op is defined once and reaches both backends: each builtin has a NumPy implementation
and a compiler lowering (or is one of the Python operators the front end compiles itself), each
IR op an emitter, each unary and binary function a CUDA spelling. A new op that misses one of
them fails here, not in a user's kernel."""

from __future__ import annotations

import pytest

from tile_lang import dtypes
from tile_lang.builtin import BUILTINS
from tile_lang.compiler.ir import BinaryAttr, BinaryFn, Node, Op, Type, UnaryAttr, UnaryFn
from tile_lang.compiler.lowering import LOWERINGS
from tile_lang_cupy.codegen.emitter import ELEMENTS, SCALAR, STATEMENTS, Emitter
from tile_lang_numpy.engine import IMPLS

# Python syntax the compiler's front end handles directly (visit_Subscript, conditions, range bounds)
FRONT_END = frozenset({"subscript", "truth", "index"})


def test_every_builtin_runs_on_the_reference_and_compiles() -> None:
    builtins = set(BUILTINS.values())
    assert sorted(b.name for b in builtins - set(IMPLS)) == []
    assert sorted(b.name for b in builtins - set(LOWERINGS)) == sorted(FRONT_END)


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


def test_the_operator_table_covers_every_operator_and_reaches_cuda() -> None:
    """Each Python operator has a row of semantics.OPERATORS naming an IR function with a CUDA
    spelling and, except C-style integer division, the NumPy function the reference evaluates."""
    from tile_lang.operators import BinaryOp
    from tile_lang.semantics.operators import OPERATORS

    assert sorted(op.value for op in BinaryOp if op not in OPERATORS) == []
    for op, row in OPERATORS.items():
        fn = BinaryFn(row.fn)
        assert fn.is_comparison == op.is_comparison, op
        dtype = dtypes.I32
        x, y = Node(Op.PARAM, Type(dtype)), Node(Op.PARAM, Type(dtype))
        assert _spelled(Node(Op.BINARY, Type(dtypes.BOOL if fn.is_comparison else dtype), (x, y), BinaryAttr(fn)))
    assert sorted(op.value for op, row in OPERATORS.items() if row.reference is None) == ["%", "//"]
