"""LibCST's scope analysis (ScopeProvider) without rebuilding the tree.

`CSTNode.visit` rebuilds every node it passes (`_visit_and_replace_children`:
a dataclass construction and validation per node) even for a visitor that
changes nothing, and resolving ScopeProvider walks the tree that way three
times (ExpressionContextProvider, the metadata batch, the scope visitor). On a
large module that was three fifths of planning its fixes. While the scopes
are resolved here, `visit` reads each node's children in LibCST's own order
and rebuilds nothing, and it skips layout (whitespace, comments, brackets:
facts.walk's trivia), which neither provider looks at. ScopeProvider's code is
LibCST's, unchanged, so its answers are too: tests/fix/test_fix_scopes.py compares
them with the stock resolution, node for node (layout nodes get no scope).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from ctxlint.facts.walk import WALKED, walked_fields

_SEQUENCES = (list, tuple)
_stock_visit = cst.CSTNode.visit
_FIELDS: dict[type, tuple[str, ...]] = {}
_READ_ONLY: dict[type, bool] = {}  # visitor class -> a CSTVisitor (an ABC check once)


def _read_only_visit(self: cst.CSTNode, visitor: Any) -> Any:
    kind = type(visitor)
    read_only = _READ_ONLY.get(kind)
    if read_only is None:
        read_only = _READ_ONLY[kind] = isinstance(visitor, cst.CSTVisitor)
    if not read_only:  # a transformer: its way, unchanged
        return _stock_visit(self, visitor)
    if visitor.on_visit(self):
        names = _FIELDS.get(type(self))
        if names is None:
            names = _FIELDS[type(self)] = walked_fields(type(self))
        for name in names:
            value = getattr(self, name)
            if type(value) in _SEQUENCES:
                for item in value:
                    if type(item) in WALKED:
                        item.visit(visitor)
            elif type(value) in WALKED:
                value.visit(visitor)
    visitor.on_leave(self)
    return self


@contextlib.contextmanager
def _read_only() -> Iterator[None]:
    cst.CSTNode.visit = _read_only_visit  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.visit = _stock_visit  # type: ignore[method-assign]


def resolve_scopes(module: cst.Module) -> Any:
    """Node -> its Scope, as `MetadataWrapper(module).resolve(ScopeProvider)`
    gives it, on this very tree (the wrapper shares it: no copy)."""
    with _read_only():
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
