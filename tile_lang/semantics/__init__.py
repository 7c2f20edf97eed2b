"""The rules of each op, written once: argument checks, dtype promotion and result types.

Both the NumPy reference (``backends/tile_lang_numpy``) and the compiler's lowering
(``tile_lang/compiler/lowering*.py``) call these functions on dtypes, shapes and compile-time
arguments before they execute or lower anything, so they accept and reject exactly the same
kernels with the same message. A broken rule raises :class:`SemanticError`; each backend
re-raises it as a :class:`~tile_lang.errors.KernelError` at the user's line. Execution stays
each backend's own. One module per op family; the op tables (:data:`elementwise.MATH`) drive
the declarations' implementations and lowerings.
"""

from tile_lang.semantics.base import SemanticError

__all__ = ["SemanticError"]
