"""After the rewrite: seed-accessor imports that nothing uses any more go."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ImportAssignment, MetadataWrapper, ScopeProvider

from ctxlint.facts.context import import_bindings
from ctxlint.fix.plan import without_names


def drop_unused_imports(
    text: str, names: set[str], modules: set[str], module: str, is_package: bool
) -> str:
    """`text` less the `from M import name` aliases (M in `modules`, name in
    `names`) that bind a name nothing reads."""
    if not names:
        return text
    wrapper = MetadataWrapper(cst.parse_module(text))
    unused: dict[int, set[str]] = {}
    for scope in set(wrapper.resolve(ScopeProvider).values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            if (
                isinstance(assignment, ImportAssignment)
                and assignment.name in names
                and not assignment.references
                and isinstance(assignment.node, cst.ImportFrom)
            ):
                target = import_bindings(assignment.node, module, is_package).get(assignment.name)
                if target and target.rpartition(".")[0] in modules:
                    unused.setdefault(id(assignment.node), set()).add(assignment.name)
    if not unused:
        return text

    class Drop(cst.CSTTransformer):
        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:  # type: ignore[override]
            if id(original) in unused and isinstance(updated, cst.ImportFrom):
                kept = without_names(updated, unused[id(original)])
                return cst.RemoveFromParent() if kept is None else kept
            if isinstance(updated, cst.SimpleStatementLine) and not updated.body:
                return cst.RemoveFromParent()
            if isinstance(updated, cst.IndentedBlock) and not updated.body:
                return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
            return updated

    return wrapper.module.visit(Drop()).code
