"""CTX602's removed `.config` hop: `get_parallel().config.tp_size` becomes
`get_parallel().tp_size` when `tp_size` is config of that bag (safe: the bag
answers the same leaf the hop used to reach). Its other kinds (import-time reads,
cached globals and memos, legacy accessors) move code around and are left to a
person, with the reason."""

from __future__ import annotations

import libcst as cst

from ctxlint.core.findings import Finding
from ctxlint.fix.context import FixContext, site
from ctxlint.fix.plan import FIXED, FilePlan
from ctxlint.program.reads import config_attribute
from ctxlint.rules.ctx602_import_time_config import FindingData


def fix_config_hops(plan: FilePlan, findings: list[Finding], ctx: FixContext) -> None:
    for f in findings:
        s = site(plan, f)
        data = FindingData.of(f.data)
        if data.kind != "hop":
            s.reason = (
                "no fix for this kind: move the read, drop the cache or the legacy call by hand"
            )
            continue
        sp = f.span
        node = plan.src.node_at((sp.line, sp.column, sp.end_line, sp.end_column), cst.Attribute)
        parent = plan.src.parent(node) if node is not None else None
        if not (
            isinstance(node, cst.Attribute)
            and isinstance(parent, cst.Attribute)
            and parent.value is node
            and isinstance(node.value, cst.Call)
        ):
            s.reason = "the hop is not followed by a leaf (`bag.config.leaf`): rewrite it by hand"
            continue
        leaf = parent.attr.value
        namespace = data.namespace
        if not config_attribute(ctx.vocab, namespace, leaf):
            s.reason = f"`{leaf}` is not config of the `{namespace}` bag: rewrite it by hand"
            continue
        plan.replace[id(node)] = node.value
        s.status, s.became = FIXED, f"{cst.Module([]).code_for_node(node.value)}.{leaf}"
