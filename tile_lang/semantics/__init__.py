"""The rules of each op, written once: argument checks, dtype promotion and result types.

Each family module registers its ops' rules (``@rule(tl.op)``, or ``@family_rule`` for every
member of a :class:`~tile_lang.builtin.Family`); the two dispatchers, the NumPy reference's
engine and the compiler's front end, apply them through :func:`dispatch.checked` on Blocks
(dtype and shape) before the backend's implementation or lowering runs, and hand it the checked,
normalised arguments. So both backends accept and reject exactly the same kernels with the same
message: a broken rule raises :class:`SemanticError`, which each re-raises as a
:class:`~tile_lang.errors.KernelError` at the user's line. Execution stays each backend's own.
"""

from tile_lang.semantics.base import SemanticError

__all__ = ["SemanticError"]
