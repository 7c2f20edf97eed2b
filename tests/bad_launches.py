"""Bad arguments to ``copy_kernel(src, dst, n, BLOCK)`` that every launch path must refuse, even
right after a good launch took a fast path: (args, kwargs, message) rows for parametrize, with
"src"/"dst" standing for the caller's buffers."""

from __future__ import annotations

from typing import Any

BAD_ARGUMENTS: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
    (("src", "dst", 1.5), {"BLOCK": 64}, "parameter n: expected int, got float"),
    (("src", "dst", True), {"BLOCK": 64}, "parameter n: expected int, got bool"),
    (("src", "dst", 2**64), {"BLOCK": 64}, "parameter n: 18446744073709551616 does not fit in i64 or u64"),
    (("src", "dst", 100), {"BLOCK": [64]}, "constexpr BLOCK must be an int, float, bool, str, None, a dtype or a tuple of these, got list"),
    (("src", "dst", 100), {}, "missing argument(s) BLOCK"),
    (("src", "dst", 100), {"BLOCK": 64, "BLOCKK": 64}, "has no parameter 'BLOCKK'"),
    (("src", "dst", 100, 64), {"BLOCK": 64}, "parameter 'BLOCK' given twice"),
]
