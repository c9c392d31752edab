"""After the rewrite: seed-accessor imports that nothing uses any more go."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import ImportAssignment, MetadataWrapper, ParentNodeProvider, ScopeProvider

from ctxlint.facts.context import import_bindings
from ctxlint.fix.plan import FilePlan, _Apply, node_text, one_line, without_names


def drop_unused_imports(
    text: str,
    names: set[str],
    modules: set[str],
    module: str,
    is_package: bool,
    wrapped: set[str] | None = None,
    limit: int = 88,
) -> str:
    """`text` less the `from M import name` aliases (M in `modules`, name in
    `names`) that bind a name nothing reads; an import the fix wrapped (its code
    in `wrapped`) goes back on one line when, shorter now, that fits `limit`."""
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
            if wrapped and node_text(node) in wrapped:
                kept = one_line(kept, _indent(line, parents, wrapper.module), limit)
            edits.replace[id(node)] = kept
    return wrapper.module.visit(_Apply(edits)).code


def _indent(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode], tree: cst.Module) -> int:
    """The columns a statement is indented by: its enclosing blocks' indents."""
    width = 0
    up = parents.get(node)
    while up is not None:
        if isinstance(up, cst.IndentedBlock):
            width += len(up.indent if up.indent is not None else tree.default_indent)
        up = parents.get(up)
    return width
