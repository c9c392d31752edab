"""Spelling a runtime accessor at a site, and the import that binds it.

The import follows the style the file already uses for the runtime module:
the accessor joins the `from RUNTIME import ...` that bound the name being
replaced (a function-local import stays local), else the module's own
`from RUNTIME import ...`; a call through a module alias (`rc.get_server_args()`)
stays one (`rc.get_exec()`); only a file with none of these gets a new import
after its header. A name bound once is never bound twice, and a name that
means something else at the site (a loader's `get_model`) is not taken over.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ImportAssignment

from ctxlint.fix.plan import FilePlan


def bindings(plan: FilePlan, node: cst.CSTNode, name: str) -> list[object]:
    """What binds `name` where `node` is (LibCST's scope analysis)."""
    if not plan.src.mentions(name):
        # a name the file never spells binds nothing in it (a star import's
        # names are not scope assignments either): no scope analysis, which
        # costs about twice the parse of a large module
        return []
    scope = plan.src.scopes.get(node)
    if scope is None:
        return []
    return list(scope[name])


def is_runtime_import(plan: FilePlan, assignment: object, name: str, modules: set[str]) -> bool:
    """The binding imports `name` itself from one of `modules`."""
    if not isinstance(assignment, ImportAssignment):
        return False
    target = plan.src.imported(assignment.node).get(assignment.name, "")  # type: ignore[arg-type]
    module, _, imported = target.rpartition(".")
    return module in modules and imported == name


def binding_statement(plan: FilePlan, node: cst.CSTNode, name: str) -> cst.ImportFrom | None:
    """The `from ... import` that binds `name` where `node` is, if exactly one does."""
    found = bindings(plan, node, name)
    if len(found) == 1 and isinstance(found[0], ImportAssignment):
        stmt = found[0].node
        return stmt if isinstance(stmt, cst.ImportFrom) else None
    return None


def _dotted(expr: cst.BaseExpression) -> tuple[str, cst.Name] | None:
    """`pkg.mod` and its leftmost name, for a chain of names; None otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value, expr
    if isinstance(expr, cst.Attribute):
        inner = _dotted(expr.value)
        return (f"{inner[0]}.{expr.attr.value}", inner[1]) if inner else None
    return None


def module_alias(plan: FilePlan, expr: cst.BaseExpression, runtime: str) -> bool:
    """`expr` names the runtime module: `rc` after `from pkg import context as rc`,
    or `pkg.context` itself after `import pkg.context`."""
    if isinstance(expr, cst.Attribute):
        dotted = _dotted(expr)
        if dotted is None or dotted[0] != runtime:
            return False
        head = dotted[1]
        found = bindings(plan, head, head.value)
        return bool(found) and all(isinstance(a, ImportAssignment) for a in found)
    return isinstance(expr, cst.Name) and binds_module(plan, expr, expr.value, runtime)


def binds_module(plan: FilePlan, node: cst.CSTNode, local: str, module: str) -> bool:
    """`local`, where `node` is, is `module`: every binding of it imports that module."""
    found = bindings(plan, node, local)
    return bool(found) and all(
        isinstance(a, ImportAssignment) and plan.src.imported(a.node).get(a.name) == module  # type: ignore[arg-type]
        for a in found
    )


def spell(
    plan: FilePlan,
    node: cst.CSTNode,
    accessor: str,
    *,
    near: cst.ImportFrom | None = None,
    via: cst.BaseExpression | None = None,
) -> cst.BaseExpression | str:
    """The expression that names `accessor` at `node` (planning its import), or
    why it cannot be named there. `near`: the import statement of the name
    being replaced; `via`: the runtime module's alias the site called through."""
    runtime = plan.runtime_module
    if via is not None:
        return cst.Attribute(value=via, attr=cst.Name(accessor))
    found = bindings(plan, node, accessor)
    if found:
        if all(is_runtime_import(plan, a, accessor, {runtime}) for a in found):
            return cst.Name(accessor)
        if accessor not in plan.freed:  # the name is another object's: through the module
            return through_module(plan, node, accessor) or (
                f"`{accessor}` means something else here (it is bound to another object)"
            )
    if accessor in plan.planned:
        return cst.Name(accessor)
    if near is not None and is_from(plan, near, runtime):
        plan.add_names.setdefault(id(near), []).append(accessor)
        return cst.Name(accessor)
    tree = plan.src.tree
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and is_from(plan, small, runtime):
                    if not isinstance(small.names, cst.ImportStar):
                        plan.add_names.setdefault(id(small), []).append(accessor)
                        plan.planned.add(accessor)
                        return cst.Name(accessor)
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for local, target in plan.src.imported(small).items():
                        if target == runtime and local != runtime.partition(".")[0]:
                            return cst.Attribute(value=cst.Name(local), attr=cst.Name(accessor))
    plan.header_imports.append(accessor)
    plan.planned.add(accessor)
    return cst.Name(accessor)


def through_module(plan: FilePlan, node: cst.CSTNode, accessor: str) -> cst.Attribute | None:
    """`module.accessor`, where `accessor` names something else at `node` (a
    local of the same name): through the file's own top-level import of the
    runtime module, else a new `from PACKAGE import MODULE` when the file never
    spells MODULE's name (None: neither)."""
    runtime = plan.runtime_module
    for stmt in plan.src.tree.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import) or (
                isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar)
            ):
                for local, target in plan.src.imported(small).items():
                    if (
                        target == runtime
                        and "." not in local
                        and binds_module(plan, node, local, runtime)
                    ):
                        return cst.Attribute(value=cst.Name(local), attr=cst.Name(accessor))
    package, _, last = runtime.rpartition(".")
    if package and (plan.module_import or not plan.src.mentions(last)):
        plan.module_import = True
        return cst.Attribute(value=cst.Name(last), attr=cst.Name(accessor))
    return None


def is_from(plan: FilePlan, stmt: cst.ImportFrom, module: str) -> bool:
    """`from MODULE import ...` (relative forms resolved)."""
    if isinstance(stmt.names, cst.ImportStar):
        return False
    targets = plan.src.imported(stmt).values()
    return bool(targets) and all(t.rpartition(".")[0] == module for t in targets)


def call(func: cst.BaseExpression, path: str) -> cst.BaseExpression:
    """`func()` followed by `path` (".moe.field")."""
    expr: cst.BaseExpression = cst.Call(func=func)
    for part in [p for p in path.split(".") if p]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr
