"""CTX102's fix (unsafe): a read off a handed instance becomes its bag leaf: the value
changes from the operator's raw input to the resolved one, which is the
design's "decision, not a style question", so it runs only with --unsafe and
each site says so.
"""

from __future__ import annotations

import libcst as cst

from ctxlint.core.findings import Finding
from ctxlint.fix.context import FixContext, site
from ctxlint.fix.plan import FilePlan
from ctxlint.fix.reads import IMPORT_TIME, UNSAFE, at_import_time, locate, read_parts, rewrite_read
from ctxlint.fix.targets import INSTANCE_ACCESSOR, NEW_ACCESSOR
from ctxlint.program.function_locals import function_locals

# The rule whose guard says where a line runs before the record is published
# (the entry that runs it): a bag read there would be one of its findings.
PUBLISH_BEFORE_READ = "CTX301"
SUPPLIED_CHANGE = (
    "the value changes from the operator's raw input to the resolved one (and follows "
    "overrides): review this site"
)
# The seed holds the raw input too (the design: resolution writes no field), so a
# read of it that becomes a bag leaf changes value wherever resolution decides one


def _cached_in_global(plan: FilePlan, node: cst.CSTNode) -> str | None:
    """The module global an assignment holding `node` in its value caches
    (`global X` in the enclosing function, then `X = ...`): a bag read there
    would be a CTX602 finding, so the rewrite is left rather than made, checked
    and rolled back with its whole file."""
    stmt, up = None, plan.src.parent(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if stmt is None and isinstance(up, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            stmt = up
        up = plan.src.parent(up)
    if stmt is None or not isinstance(up, cst.FunctionDef):
        return None
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
    declared = function_locals(up).module_globals
    names = [t.value for t in targets if isinstance(t, cst.Name) and t.value in declared]
    return names[0] if names else None


def fix_supplied_reads(plan: FilePlan, findings: list[Finding], ctx: FixContext) -> None:
    for f in findings:
        s = site(plan, f)
        s.unsafe = True
        if not ctx.unsafe:
            s.reason = UNSAFE
            continue
        entry = ctx.guard(PUBLISH_BEFORE_READ, f.path, f.scope, f.line)
        if entry is not None:  # the bag read would come before publish: a CTX301 finding
            s.reason = (
                f"{entry} runs this line before its record is published, when no bag "
                "exists yet (CTX301): read the record through a view, or move the read"
            )
            continue
        parts = read_parts(node := locate(plan, f))
        if node is None or parts is None:
            s.reason = "the reported node was not found in the file"
            continue
        target = ctx.targets.target(parts[0])
        if isinstance(target, str):
            s.reason = target
        elif at_import_time(plan, node):
            s.reason = IMPORT_TIME
        elif cached := _cached_in_global(plan, node):
            s.reason = (
                f"the value is cached in the module global `{cached}`: a bag read there "
                "would miss later overrides (CTX602); read the bag where the value is used"
            )
        elif target.kind in (INSTANCE_ACCESSOR, NEW_ACCESSOR):
            s.reason = (
                f"`{parts[0]}` has no bag leaf (its accessor answers from the seed, "
                "not from this instance): pick its source by hand"
            )
        elif rewrite_read(plan, s, node, target):
            s.reason = SUPPLIED_CHANGE
