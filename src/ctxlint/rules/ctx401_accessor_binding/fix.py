"""CTX401: an accessor name bound to something else, or used as a member.

- A same-named import from another module (`from loader import get_model`) is
  renamed at the import and at every use in the file (safe: the module binds
  the name once, or only to the runtime's accessor above it, and no other file
  imports it from here): the new name is the
  source module's last part joined to it (`model_loader_get_model`), so it says
  where it comes from and collides with nothing.
- A no-argument member call of an accessor (`mgr.get_disagg()`, where the
  object has no such member) becomes the bare accessor (unsafe: the receiver
  is no longer evaluated, and a test that swapped the member no longer can);
  a member binding of the accessor itself (`self.get_exec = get_exec`) goes
  with its last member call.
- Every other shape (a def, a parameter, an argument) is left, with the reason.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ImportAssignment

from ctxlint.core.findings import Finding
from ctxlint.fix.accessors import bindings, is_from, is_runtime_import, spell
from ctxlint.fix.context import FixContext, site
from ctxlint.fix.plan import FIXED, REMOVED, FilePlan, Site

MEMBER_CHANGE = "the receiver is no longer evaluated, and a test can no longer swap the member"


def fix_accessor_bindings(plan: FilePlan, findings: list[Finding], ctx: FixContext) -> None:
    accessors = set(ctx.vocab.bag_accessors) | set(ctx.vocab.seed_accessors)
    members: list[tuple[Site, cst.Call, str]] = []
    member_bindings: list[tuple[Site, cst.CSTNode, str]] = []
    for f in findings:
        s = site(plan, f)
        sp = f.span
        span = (sp.line, sp.column, sp.end_line, sp.end_column)
        node = plan.src.node_at(span, cst.Call, cst.Attribute, cst.Name, cst.ImportFrom)
        parent = plan.src.parent(node) if node is not None else None
        if isinstance(node, cst.ImportFrom):
            _drop_repeated_import(plan, s, node)
            continue
        if isinstance(node, cst.Name) and isinstance(parent, cst.ImportAlias):
            _rename_import(plan, s, node, parent, ctx)
            continue
        if isinstance(node, cst.Name) and isinstance(parent, cst.Attribute) and parent.attr is node:
            node, parent = parent, plan.src.parent(parent)  # the member, as the rule anchors it
            if isinstance(parent, cst.AssignTarget):
                member_bindings.append((s, node, node.attr.value))
                continue
        call = node if isinstance(node, cst.Call) else parent
        if (
            isinstance(node, cst.Attribute) and isinstance(call, cst.Call) and call.func is node
        ) or (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            name = call.func.attr.value
            declared = _declared_member(plan, call.func)
            if declared:
                s.reason = f"the class declares `{name}` ({declared}): rename the member by hand"
                continue
            if name in accessors and not call.args:
                members.append((s, call, name))
                continue
        s.reason = "no fix for this shape (a definition, parameter or argument is renamed by hand)"
    for s, call, name in members:
        s.unsafe = True
        if not ctx.unsafe:
            s.reason = f"an unsafe fix ({MEMBER_CHANGE}): run with --unsafe"
            continue
        func = spell(plan, call, name)
        if isinstance(func, str):
            s.reason = func
            continue
        new = cst.Call(func=func)
        plan.replace[id(call)] = new
        # the finding names the member: it becomes the accessor's name
        s.status, s.became, s.reason = FIXED, plan.src.tree.code_for_node(func), MEMBER_CHANGE
    fixed_calls = {id(c.func) for s, c, _ in members if s.status == FIXED}
    for s, attr, name in member_bindings:
        _drop_member_binding(plan, s, attr, name, fixed_calls, ctx)


def _drop_member_binding(
    plan: FilePlan,
    s: Site,
    attr: cst.CSTNode,
    name: str,
    fixed_calls: set[int],
    ctx: FixContext,
) -> None:
    s.unsafe = True
    target = plan.src.parent(attr)
    assign = plan.src.parent(target) if isinstance(target, cst.AssignTarget) else None
    line = plan.src.parent(assign) if isinstance(assign, cst.Assign) else None
    if not (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(assign.value, cst.Name)
        and assign.value.value == name
        and all(
            is_runtime_import(plan, a, name, {plan.runtime_module})
            for a in bindings(plan, assign, name) or [None]
        )
    ):
        s.reason = "a member binding of something other than the accessor itself: rename it by hand"
        return
    if not ctx.unsafe:
        s.reason = f"an unsafe fix ({MEMBER_CHANGE}): run with --unsafe"
        return
    others = [
        n
        for n in _named_attributes(plan.src.tree, name)
        if n is not attr and id(n) not in fixed_calls
    ]
    if others:
        s.reason = f"`.{name}` is still used (line {plan.src.line(others[0])})"
        return
    if ctx.named_elsewhere([rf"\.{name}\b"], plan.src.path):
        s.reason = f"`.{name}` may be used from another file"
        return
    plan.remove.add(id(line))
    s.status, s.became, s.reason = FIXED, REMOVED, MEMBER_CHANGE


def _declared_member(plan: FilePlan, member: cst.Attribute) -> str:
    """For `self.name`: how the enclosing class declares `name` itself (an
    annotated field or a method), so the call means the member; else ""."""
    if not (isinstance(member.value, cst.Name) and member.value.value == "self"):
        return ""
    cls = plan.src.parent(member)
    while cls is not None and not isinstance(cls, cst.ClassDef):
        cls = plan.src.parent(cls)
    if cls is None or not isinstance(cls.body, cst.IndentedBlock):
        return ""
    name = member.attr.value
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return "a method"
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.AnnAssign)
                    and isinstance(small.target, cst.Name)
                    and small.target.value == name
                ):
                    return "a field"
    return ""


def _drop_repeated_import(plan: FilePlan, s: Site, stmt: cst.ImportFrom) -> None:
    """A second import of the runtime's own accessor (in the same scope, or in a
    function when the module already imports it) goes: the name keeps its
    meaning, and a use above a function-local import no longer raises
    UnboundLocalError. Safe."""
    line = plan.src.parent(stmt)
    if not (
        is_from(plan, stmt, plan.runtime_module)
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
    ):
        s.reason = "no fix for this import shape"
        return
    for local in plan.src.imported(stmt):
        found = bindings(plan, stmt, local)
        module_scope = plan.src.scopes.get(plan.src.tree.body[0]) if plan.src.tree.body else None
        outer = list(module_scope[local]) if module_scope is not None else []
        others = [a for a in [*found, *outer] if getattr(a, "node", None) is not stmt]
        if not others or not all(
            is_runtime_import(plan, a, local, {plan.runtime_module}) for a in others
        ):
            s.reason = (
                f"`{local}` is not imported from the runtime elsewhere in scope: keep this import"
            )
            return
        if not any(plan.src.line(a.node) < plan.src.line(stmt) or a in outer for a in others):  # type: ignore[attr-defined]
            s.reason = "the first import of the accessor: keep it"
            return
    plan.remove.add(id(line))
    s.status, s.became = FIXED, REMOVED


def _named_attributes(tree: cst.Module, name: str) -> list[cst.Attribute]:
    found: list[cst.Attribute] = []

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value == name:
                found.append(node)

    tree.visit(Collect())
    return found


def _accessor_above(plan: FilePlan, stmt: cst.ImportFrom, local: str, others: list) -> bool:
    """No other binding, or only module-level imports of the runtime's own accessor
    above `stmt` (a module-level import itself): renaming `stmt` and every use
    keeps what each use calls, since the later import is what they all see."""
    if not others:
        return True
    module = plan.src.scopes.get(plan.src.tree.body[0]) if plan.src.tree.body else None
    return (
        module is not None
        and plan.src.scopes.get(stmt) is module
        and all(
            is_runtime_import(plan, a, local, {plan.runtime_module})
            and plan.src.scopes.get(a.node) is module
            and plan.src.line(a.node) < plan.src.line(stmt)
            for a in others
        )
    )


def _rename_import(
    plan: FilePlan, s: Site, name: cst.Name, alias: cst.ImportAlias, ctx: FixContext
) -> None:
    stmt = plan.src.parent(alias)
    local = alias.evaluated_alias or alias.evaluated_name
    if not isinstance(stmt, cst.ImportFrom) or alias.asname is not None:
        s.reason = "no fix for this import shape"
        return
    if is_from(plan, stmt, plan.runtime_module):
        _drop_repeated_import(plan, s, stmt)
        return
    source = next(iter(plan.src.imported(stmt).values()), "").rpartition(".")[0]
    new = f"{source.rpartition('.')[2]}_{local}"
    found = bindings(plan, stmt, local)
    mine = [a for a in found if isinstance(a, ImportAssignment) and a.node is stmt]
    # the runtime's own accessor imported above this one (the design's "same-named
    # import next to the bag one"): from here on every use means this import
    accessor = [a for a in found if a not in mine]
    if len(mine) != 1 or not _accessor_above(plan, stmt, local, accessor):
        s.reason = f"`{local}` is bound more than once in the module: rename by hand"
        return
    if any(True for _ in bindings(plan, stmt, new)) or new in plan.src.text:
        s.reason = f"the new name `{new}` is taken"
        return
    uses = list(mine[0].references)
    if accessor and any(plan.src.line(u.node) < plan.src.line(stmt) for u in uses):
        s.reason = f"`{local}` is used between the two imports: rename by hand"
        return
    if any(not isinstance(u.node, cst.Name) for u in uses):
        s.reason = f"`{local}` is named in a string (`__all__` or an annotation): rename by hand"
        return
    tail = plan.src.module.rpartition(".")[2]
    if ctx.named_elsewhere([rf"\b{tail}\b", rf"\b{local}\b"], plan.src.path):
        s.reason = f"another file may import `{local}` from {plan.src.module}"
        return
    plan.replace[id(alias)] = alias.with_changes(asname=cst.AsName(name=cst.Name(new)))
    for u in uses:
        plan.replace[id(u.node)] = cst.Name(new)
    plan.freed.add(local)
    s.status, s.became = FIXED, f"{local} as {new}"
