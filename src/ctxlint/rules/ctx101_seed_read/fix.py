"""CTX101's fix: a read off the seed (`get_server_args().f`, `getattr(...)`, the
accessor through a module alias) becomes the target. The seed holds the raw
input, so a bag leaf (or the parallel context's member) is an unsafe fix: the
value becomes the resolved one; the runtime's instance-derived accessor answers
from the seed as the read did, a safe one. An alias of the seed
(`sa = get_server_args()`, module-level, or parked on `self`) is rewritten when
every use of it is a reported field read, and the alias goes. A seed-accessor
import nothing uses any more goes too.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst
from libcst.metadata import Assignment, GlobalScope, ImportAssignment

from ctxlint.core.findings import Finding
from ctxlint.fix import default_param
from ctxlint.fix import reads as fix_reads
from ctxlint.fix.accessors import binding_statement, bindings, module_alias
from ctxlint.fix.context import FixContext, site
from ctxlint.fix.plan import FIXED, FilePlan, Site
from ctxlint.fix.reads import IMPORT_TIME, UNSAFE, at_import_time, locate, read_parts, rewrite_read
from ctxlint.fix.targets import INSTANCE_ACCESSOR, Target


def _seed_call(plan: FilePlan, expr: cst.BaseExpression, seeds: set[str]) -> bool:
    """`expr` calls a seed accessor: by its name, through a module, or imported
    under another name (`from rt import get_server_args as seed`)."""
    if not isinstance(expr, cst.Call) or expr.args:
        return False
    func = expr.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in seeds
    if not isinstance(func, cst.Name):
        return False
    if func.value in seeds:
        return True
    return any(
        isinstance(a, ImportAssignment)
        and plan.src.imported(a.node).get(a.name, "").rpartition(".")[2] in seeds  # type: ignore[arg-type]
        for a in bindings(plan, func, func.value)
    )


def fix_seed_reads(plan: FilePlan, findings: list[Finding], ctx: FixContext) -> None:
    seeds = set(ctx.vocab.seed_accessors)
    aliases: dict[tuple[str, int], list[tuple[Site, cst.CSTNode, Target]]] = defaultdict(list)
    for f in findings:
        s = site(plan, f)
        node = locate(plan, f)
        parts = read_parts(node)
        if node is None or parts is None:
            s.reason = "the reported node was not found in the file"
            continue
        field, base = parts
        target = ctx.targets.target(field)
        if isinstance(target, str):
            s.reason = target
            continue
        if at_import_time(plan, node):  # the rewrite would be a CTX602 finding
            s.reason = IMPORT_TIME
            continue
        # an instance-derived accessor answers from the seed as the read did
        s.unsafe = target.kind != INSTANCE_ACCESSOR
        if _seed_call(plan, base, seeds):
            if s.unsafe and not ctx.unsafe:
                s.reason = UNSAFE
                continue
            assert isinstance(base, cst.Call)
            func = base.func
            if isinstance(func, cst.Name):
                near = binding_statement(plan, func, func.value)
                if rewrite_read(plan, s, node, target, near=near):
                    plan.drop_if_unused.add(func.value)
            elif isinstance(func, cst.Attribute) and module_alias(
                plan, func.value, ctx.vocab.runtime_module
            ):
                rewrite_read(plan, s, node, target, via=func.value)
            else:
                rewrite_read(plan, s, node, target)
            if s.status == FIXED and s.unsafe:
                s.reason = fix_reads.seed_change(s, plan.runtime_module)
        elif isinstance(base, cst.Name):
            found = bindings(plan, base, base.value)
            if not found or not all(type(a) is Assignment for a in found):
                s.reason = (
                    f"`{base.value}` is also bound otherwise (a parameter, an import, a loop)"
                )
                continue
            aliases[("name", min(id(a) for a in found))].append((s, node, target))
        elif isinstance(base, cst.Attribute) and _is_self(base.value):
            cls = _enclosing_class(plan, node)
            if cls is None:
                s.reason = "the alias on self is read outside a class"
                continue
            aliases[(f"self.{base.attr.value}", id(cls))].append((s, node, target))
        else:
            s.reason = "the seed is reached through an expression the fix does not follow"
    for (kind, _), reads in aliases.items():
        if not ctx.unsafe and any(s.unsafe for s, _, _ in reads):  # all or nothing
            for s, _, _ in reads:
                s.reason = (
                    UNSAFE if s.unsafe else f"the alias's other reads need --unsafe ({UNSAFE})"
                )
            continue
        if kind == "name":
            _fix_name_alias(plan, reads, ctx, seeds)
        else:
            _fix_self_alias(plan, kind[5:], reads, ctx, seeds)


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _enclosing_class(plan: FilePlan, node: cst.CSTNode) -> cst.ClassDef | None:
    cur = plan.src.parent(node)
    while cur is not None and not isinstance(cur, cst.ClassDef):
        cur = plan.src.parent(cur)
    return cur


def _single_assign(plan: FilePlan, target: cst.CSTNode) -> tuple[cst.Assign, cst.CSTNode] | None:
    """The `x = value` statement (alone on its line, one target) `target` is the target of."""
    at = plan.src.parent(target)
    assign = plan.src.parent(at) if isinstance(at, cst.AssignTarget) else None
    line = plan.src.parent(assign) if isinstance(assign, cst.Assign) else None
    if (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
    ):
        return assign, line
    return None


def _guarded(plan: FilePlan, node: cst.CSTNode) -> bool:
    """`node` runs in a `try` body of its function: removing it moves the seed
    accessor's failure out of the handler's reach."""
    cur = plan.src.parent(node)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
        if isinstance(cur, (cst.Try, cst.TryStar)):
            return True
        cur = plan.src.parent(cur)
    return False


def _give_up(reads: list[tuple[Site, cst.CSTNode, Target]], reason: str) -> None:
    for s, _, _ in reads:
        s.reason = reason


def _seed_import(
    plan: FilePlan, value: cst.BaseExpression
) -> tuple[str | None, cst.ImportFrom | None]:
    func = value.func if isinstance(value, cst.Call) else None
    if isinstance(func, cst.Name):
        return func.value, binding_statement(plan, func, func.value)
    return None, None


def _rewrite_all(
    plan: FilePlan,
    reads: list[tuple[Site, cst.CSTNode, Target]],
    assigns: list[tuple[cst.Assign, cst.CSTNode]],
    keep: bool = False,
) -> None:
    """Rewrite every read of an alias, and remove its assignments (`keep`: the
    alias has other uses, and stays): all or nothing."""
    for _, line in [] if keep else assigns:
        if _guarded(plan, line):
            _give_up(reads, "the alias is assigned inside a `try` (its failure is handled there)")
            return
    value = assigns[0][0].value
    name, near = _seed_import(plan, value)
    via = None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if module_alias(plan, value.func.value, plan.runtime_module):
            via = value.func.value
    saved = (dict(plan.replace), {k: list(v) for k, v in plan.add_names.items()})
    saved_header, saved_planned = list(plan.header_imports), set(plan.planned)
    for s, node, target in reads:
        if not rewrite_read(plan, s, node, target, near=near, via=via):
            reason = s.reason
            plan.replace, plan.add_names = saved
            plan.header_imports, plan.planned = saved_header, saved_planned
            for other, _, _ in reads:
                other.status, other.became = "left", ""
                other.reason = reason
            return
    for s, _, _ in reads:
        if s.unsafe:
            s.reason = fix_reads.seed_change(s, plan.runtime_module)
    for _, line in [] if keep else assigns:
        plan.remove.add(id(line))
    if name and not keep:
        plan.drop_if_unused.add(name)


def _fix_name_alias(
    plan: FilePlan,
    reads: list[tuple[Site, cst.CSTNode, Target]],
    ctx: FixContext,
    seeds: set[str],
) -> None:
    base = read_parts(reads[0][1])[1]  # type: ignore[index]
    assert isinstance(base, cst.Name)
    name = base.value
    found = bindings(plan, base, name)
    params = [a for a in found if isinstance(a.node, cst.Param)]  # type: ignore[attr-defined]
    assigns = [_single_assign(plan, a.node) for a in found if a not in params]  # type: ignore[attr-defined]
    if any(a is None or not _seed_call(plan, a[0].value, seeds) for a in assigns):
        _give_up(reads, f"the alias `{name}` is not only `{name} = <seed accessor>()`")
        return
    reported = {id(read_parts(n)[1]) for _, n, _ in reads}  # type: ignore[index]
    if params:  # `def f(name=None): if name is None: name = <seed>()`
        guards = default_param.checked(plan, params[0].node, assigns, ctx)  # type: ignore[arg-type]
        if isinstance(guards, str) or len(params) > 1:
            _give_up(reads, guards if isinstance(guards, str) else "more than one parameter")
            return
        reported |= {id(g.test.left) for g in guards}  # type: ignore[attr-defined]
    others = [
        plan.src.line(access.node)
        for assignment in found
        for access in assignment.references  # type: ignore[attr-defined]
        if id(access.node) not in reported
    ]
    if others and params:  # a parameter's other uses may hand its record on
        why = f"the alias `{name}` is also used other than as a reported field read"
        _give_up(reads, f"{why} (line {others[0]})")
        return
    if others:  # its reads are rewritten, and it stays for its other uses
        _rewrite_all(plan, reads, assigns, keep=True)  # type: ignore[arg-type]
        return
    if any(isinstance(a.scope, GlobalScope) for a in found):  # type: ignore[attr-defined]
        if ctx.named_elsewhere([rf"\b{name}\b"], plan.src.path):
            _give_up(reads, f"the module-level alias `{name}` is named in another file")
            return
    if not params:
        _rewrite_all(plan, reads, assigns)  # type: ignore[arg-type]
        return
    _rewrite_all(plan, reads, [(a, g) for (a, _), g in zip(assigns, guards, strict=True)])  # type: ignore[misc]
    default_param.drop(plan, params[0].node, [s for s, _, _ in reads])  # type: ignore[attr-defined]


def _fix_self_alias(
    plan: FilePlan,
    attr: str,
    reads: list[tuple[Site, cst.CSTNode, Target]],
    ctx: FixContext,
    seeds: set[str],
) -> None:
    reported = {id(read_parts(n)[1]) for _, n, _ in reads}  # type: ignore[index]
    assigns: list[tuple[cst.Assign, cst.CSTNode]] = []
    for node in _attributes(plan, attr):
        if id(node) in reported:
            continue
        found = _single_assign(plan, node) if _is_self(node.value) else None
        if found is None:
            where = plan.src.line(node)
            _give_up(
                reads,
                f"`self.{attr}` is also used other than as a reported field read (line {where})",
            )
            return
        assigns.append(found)
    if len(assigns) != 1 or not _seed_call(plan, assigns[0][0].value, seeds):
        _give_up(reads, f"`self.{attr}` is not bound once, to the seed accessor's value")
        return
    if ctx.named_elsewhere([rf"\.{attr}\b"], plan.src.path):
        _give_up(reads, f"`{attr}` is named in another file")
        return
    _rewrite_all(plan, reads, assigns)


def _attributes(plan: FilePlan, attr: str) -> list[cst.Attribute]:
    """Every `<x>.<attr>` in the file, in source order (the plan's one walk)."""
    return [n for n in plan.src.walk.nodes if isinstance(n, cst.Attribute) and n.attr.value == attr]
