"""After the rewrite: seed-accessor imports that nothing uses any more go."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ImportAssignment, MetadataWrapper, ParentNodeProvider, ScopeProvider

from ctxlint.facts.context import import_bindings
from ctxlint.fix.plan import FilePlan, _Apply, without_names


def drop_unused_imports(
    text: str, names: set[str], modules: set[str], module: str, is_package: bool
) -> str:
    """`text` less the `from M import name` aliases (M in `modules`, name in
    `names`) that bind a name nothing reads."""
    if not names:
        return text
    # a tree parsed here and shared with no one: no deep copy for the wrapper
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    unused: dict[int, tuple[cst.ImportFrom, set[str]]] = {}
    for scope in set(wrapper.resolve(ScopeProvider).values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            node = assignment.node
            if (
                isinstance(assignment, ImportAssignment)
                and assignment.name in names
                and not assignment.references
                and isinstance(node, cst.ImportFrom)
            ):
                target = import_bindings(node, module, is_package).get(assignment.name)
                if target and target.rpartition(".")[0] in modules:
                    unused.setdefault(id(node), (node, set()))[1].add(assignment.name)
    if not unused:
        return text
    parents = wrapper.resolve(ParentNodeProvider)
    edits = FilePlan(None, "")  # type: ignore[arg-type]  # edits only: no source needed
    for node, gone in unused.values():
        kept = without_names(node, gone)
        line = parents[node]
        if kept is None and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            edits.remove.add(id(line))
        elif kept is not None:
            edits.replace[id(node)] = kept
    return wrapper.module.visit(_Apply(edits)).code
