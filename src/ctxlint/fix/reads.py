"""A field read off a record rewritten as the read of its target: what the
fixers of CTX101 (a read off the seed) and CTX102 (a read off a handed
instance) share. Each rule's fixer is in its package (rules/<rule>/fix.py)."""

from __future__ import annotations

import libcst as cst

from ctxlint.core.findings import Finding
from ctxlint.facts.context import string_value
from ctxlint.fix.accessors import call, spell
from ctxlint.fix.plan import FIXED, FilePlan, Site
from ctxlint.fix.targets import NEW_ACCESSOR, Target

UNSAFE = "an unsafe fix (the value changes to the resolved one): run with --unsafe"
SEED_CHANGE = (
    "the value changes from the raw input the seed holds to the resolved one (and "
    "follows overrides): review this site"
)
IMPORT_TIME = (
    "read at import time (module level, a class body, a default or a decorator): no bag "
    "exists when the module is imported (CTX602); move the read into the code that uses it"
)


def at_import_time(plan: FilePlan, node: cst.CSTNode) -> bool:
    """`node` runs when its module is imported: outside any function body, or in
    a default, decorator or annotation of a def that runs then."""
    child, up = node, plan.src.parent(node)
    while up is not None:
        if isinstance(up, (cst.FunctionDef, cst.Lambda)) and child is up.body:
            return False
        child, up = up, plan.src.parent(up)
    return True


def read_parts(node: cst.CSTNode | None) -> tuple[str, cst.BaseExpression] | None:
    """(field, the object it is read off) for `x.f` and `getattr(x, "f"[, d])`."""
    if isinstance(node, cst.Attribute):
        return node.attr.value, node.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        args = [a for a in node.args if a.keyword is None and not a.star]
        if node.func.value == "getattr" and len(args) >= 2:
            name = string_value(args[1].value)
            if name is not None:
                return name, args[0].value
    return None


def locate(plan: FilePlan, f: Finding) -> cst.CSTNode | None:
    s = f.span
    return plan.src.node_at((s.line, s.column, s.end_line, s.end_column), cst.Attribute, cst.Call)


def rewrite_read(
    plan: FilePlan,
    s: Site,
    node: cst.CSTNode,
    target: Target,
    *,
    near: cst.ImportFrom | None = None,
    via: cst.BaseExpression | None = None,
) -> bool:
    func = spell(plan, node, target.accessor, near=near, via=via)
    if isinstance(func, str):
        s.reason = func
        return False
    new = call(func, target.path)
    plan.replace[id(node)] = new
    s.status, s.became = FIXED, plan.src.tree.code_for_node(new)
    if target.kind == NEW_ACCESSOR:
        s.adds = target.accessor
    return True


def seed_change(s: Site, runtime: str) -> str:
    """What an unsafe rewrite of a seed read changes: the value, or the runtime
    module (an accessor added there, which returns what the read did)."""
    if s.adds:
        return f"adds `{s.adds}()` to {runtime}, returning the published record's own member"
    return SEED_CHANGE
