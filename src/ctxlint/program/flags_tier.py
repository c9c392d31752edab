"""The runtime-flags tier, derived from the code: its groups and their leaves, and
the expressions that denote a flags object or a config-bag leaf.

- the **flags root**: the class the runtime module's flags accessor
  (`get_flags`) is annotated to return;
- the **groups**: the root's annotated fields whose annotation is a class with
  defaulted annotated fields; each such class's fields are the group's leaves;
- a **flags path**: `get_flags()`, `get_context().flags`, the `flags` slot of a
  name inside the runtime module, attributes below one, or a local bound to one;
- a **bag path**: a call of a bag accessor (`get_exec()`), attributes below it,
  or a local bound to one.

A rule's visitor inherits `FlagsTierVisitor` to collect the declarations, and
resolves paths with `flags_path` / `bag_path` over its own per-function locals.
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import parse_string
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor

ACCESSOR = "get_flags"  # the design's flags accessor (a fixed name, as CTX703's)
Env = dict[str, list[str]]  # local -> path ([kind, *parts]); kind "flags" or an accessor


class FlagsTierVisitor(FileVisitor):
    """Classes with defaulted annotated fields, and the flags accessor's annotation."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.in_runtime = ctx.module == ctx.vocab.runtime_module
        self.bags = set(ctx.vocab.bag_accessors)
        self.classes: dict[str, dict[str, str | None]] = {}
        self.accessor: list[str | None] = []  # [its return class] when defined here

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        fields: dict[str, str | None] = {}
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    if small.value is None:
                        return  # a required field: flags leaves all default
                    ann = parse_string(small.annotation.annotation)
                    fields[small.target.value] = (
                        self.ctx.resolve(ann)
                        if isinstance(ann, (cst.Name, cst.Attribute))
                        else None
                    )
        if fields:
            self.classes[f"{self.ctx.module}.{self.ctx.qualname}"] = fields

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.in_runtime or len(self.ctx.scopes) != 2 or node.name.value != ACCESSOR:
            return
        ann = parse_string(node.returns.annotation) if node.returns is not None else None
        resolved = self.ctx.resolve(ann) if isinstance(ann, (cst.Name, cst.Attribute)) else None
        self.accessor = [resolved]

    def tier_facts(self) -> dict[str, Any]:
        return {"classes": self.classes, "accessor": self.accessor}

    # -- paths ------------------------------------------------------------------
    def path(self, expr: cst.BaseExpression, env: Env) -> list[str] | None:
        """["flags", *attrs] or [bag accessor, *attrs] for what `expr` denotes."""
        if isinstance(expr, cst.Call):
            if expr.args:
                return None
            name = (self.ctx.resolve(expr.func) or "").rpartition(".")[2]
            if name == ACCESSOR:
                return ["flags"]
            return [name] if name in self.bags else None
        if isinstance(expr, cst.Attribute):
            base = expr.value
            if expr.attr.value == "flags":
                if isinstance(base, cst.Call) and not base.args:
                    if (self.ctx.resolve(base.func) or "").rpartition(".")[2] == "get_context":
                        return ["flags"]
                if self.in_runtime and isinstance(base, cst.Name):
                    return ["flags"]  # the context's own slot, inside the runtime module
            inner = self.path(base, env)
            return None if inner is None else [*inner, expr.attr.value]
        if isinstance(expr, cst.Name):
            found = env.get(expr.value)
            return list(found) if found is not None else None
        return None


def flags_groups(
    files: list[tuple[str, str, dict[str, Any]]], runtime_module: str
) -> tuple[bool, str | None, dict[str, list[str]]]:
    """(the runtime defines the accessor, the flags root, group -> its leaves)."""
    classes: dict[str, dict[str, str | None]] = {}
    tier, root = False, None
    for _, module, f in files:
        classes.update(f["classes"])
        if module == runtime_module and f["accessor"]:
            tier, root = True, f["accessor"][0]
    groups: dict[str, list[str]] = {}
    if root in classes:
        for name, ann in classes[root].items():
            if ann in classes:
                groups[name] = list(classes[ann])
    return tier, root, groups
