"""`cst`: LibCST, imported on first use.

A warm run replays a stored outcome and parses nothing, yet every rule module
names LibCST, whose import is a fifth of that run's budget (the target is
ruff's time). Modules that only need LibCST inside functions import `cst` from
here; each attribute is fetched once and then kept on the proxy, so the hot
paths of a traversal pay a plain attribute lookup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import libcst as cst
else:

    class _LibCST:
        def __getattr__(self, name: str) -> Any:
            import libcst

            value = getattr(libcst, name)
            setattr(self, name, value)
            return value

    cst = _LibCST()

__all__ = ["cst"]
