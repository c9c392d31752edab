"""Python's rule that a name bound anywhere in a function is local throughout
it: the names a whole function binds, read off its tree.

Part of the scope model (program.bindings answers "what is this name here"
in statement order; this answers "is it the function's own"); a module of
its own because it subclasses LibCST's visitor, which a warm run never loads.
The record tracker asks it whether a module-level seed alias is shadowed.
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import dotted
from ctxlint.facts.walk import descend
from ctxlint.program.binding_syntax import all_params, target_names


def _names(target: cst.BaseExpression) -> list[str]:
    return [n.value for n in target_names(target)]


class LocalNames(cst.CSTVisitor):
    """Names a function binds locally (Python: local if bound anywhere in it)."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.globals: set[str] = set()  # declared global or nonlocal: not its own
        self.module_globals: set[str] = set()  # declared global
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self.depth:
            self.bound.add(node.name.value)
            return False
        self.depth += 1
        self.bound.update(p.name.value for p in all_params(node.params))
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bound.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> None:
        self.globals.update(n.name.value for n in node.names)
        self.module_globals.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.globals.update(n.name.value for n in node.names)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.bound.update(_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bound.update(_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bound.update(_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.bound.update(_names(node.target))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bound.update(_names(node.asname.name))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.bound.add(node.name.name.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bound.update(_names(node.target))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self.bound.add(node.asname.name.value)
        else:
            self.bound.add((dotted(node.name) or "").partition(".")[0])

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        return True  # comprehension targets are their own scope: not collected

    def visit_Del(self, node: cst.Del) -> None:
        self.bound.update(_names(node.target))


def function_locals(node: cst.CSTNode) -> LocalNames:
    """The names the function `node` binds anywhere, and those it declares
    global or nonlocal. Its `visit_X` called as LibCST's `node.visit` would
    (a False skips the node's children), by the facts walk's reading of the
    tree (facts.walk.descend): LibCST's visit rebuilds every node."""
    collector = LocalNames()
    calls: dict[type, Any] = {}

    def on_visit(item: cst.CSTNode) -> object:
        kind = type(item)
        call = calls.get(kind, _UNSEEN)
        if call is _UNSEEN:
            call = calls[kind] = getattr(collector, f"visit_{kind.__name__}", None)
        return True if call is None else call(item)

    descend(node, on_visit)
    return collector


_UNSEEN = object()
