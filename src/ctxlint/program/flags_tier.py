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

A rule's visitor inherits `FlagsTierVisitor`: it collects the declarations,
resolves paths (`path`, `below_flags`; a local's through the binding model),
tells a lazy default (`if <leaf> is None: <leaf> = ...`: `lazy`) and hands
each assignment to an attribute to the rule (`assigned`). A rule's facts extend `TierFacts`, and
`flags_tier` derives the tier from them: its root, groups and leaves, and the
modules still wanted (CTX703 and CTX705 ask it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import parse_string
from ctxlint.facts.context import FileContext
from ctxlint.facts.if_branches import IfBranches
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS

ACCESSOR = "get_flags"  # the design's flags accessor: a fixed name (facts key on content)
MODULE = "<module>"  # the writer of a module-level assignment
Fields = dict[str, str | None]  # a tier class's annotated fields -> their resolved annotation


@dataclass(frozen=True, slots=True)
class TierFacts:
    """One file's declarations of the tier; a rule's facts extend it."""

    classes: dict[str, Fields]  # classes whose annotated fields all default
    accessor: list[str | None]  # [the flags accessor's class] where the module defines one


def tier_fields(ctx: FileContext, node: cst.ClassDef) -> dict[str, str | None]:
    """A class's annotated fields -> their resolved annotation, when every one has a
    default (a flags group's or the root's shape); {} for any other class."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    fields: dict[str, str | None] = {}
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                if small.value is None:
                    return {}  # a required field: flags leaves all default
                ann = parse_string(small.annotation.annotation)
                fields[small.target.value] = (
                    ctx.resolve(ann) if isinstance(ann, (cst.Name, cst.Attribute)) else None
                )
    return fields


def tier_defaults(ctx: FileContext, node: cst.ClassDef) -> dict[str, str]:
    """A class's annotated fields -> their default's source text."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return {
        small.target.value: ctx.module_node.code_for_node(small.value)
        for stmt in body
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
        if isinstance(small, cst.AnnAssign)
        and isinstance(small.target, cst.Name)
        and small.value is not None
    }


def accessor_class(ctx: FileContext, node: cst.FunctionDef) -> list[str | None]:
    """[the class the flags accessor is annotated to return] where `node` is the
    runtime module's accessor ([None] unannotated); [] for any other function."""
    assert ctx.vocab is not None
    if ctx.module != ctx.vocab.runtime_module or len(ctx.scopes) != 2:
        return []
    if node.name.value != ACCESSOR:
        return []
    ann = parse_string(node.returns.annotation) if node.returns is not None else None
    return [ctx.resolve(ann) if isinstance(ann, (cst.Name, cst.Attribute)) else None]


def tier_groups(fields: dict[str, dict[str, str | None]], root: str | None) -> dict[str, str]:
    """Group -> its class: the root's fields annotated with a class of defaulted fields."""
    if root not in fields:
        return {}
    return {name: ann for name, ann in fields[root].items() if ann is not None and ann in fields}


def tier_modules(fields: dict[str, dict[str, str | None]], root: str | None) -> set[str]:
    """`module:` tokens for the root's and groups' classes not yet among the facts."""
    wanted = {root} if root else set()
    if root in fields:
        wanted |= {a for a in fields[root].values() if a}
    return {f"module:{q.rpartition('.')[0]}" for q in wanted if q not in fields}


class IsNoneBranches(IfBranches):
    """Which flags paths the enclosing `if` branches test: a write under
    `if <path> is None:` to the path it tests is a lazy default in a shim, not a
    materialisation; one under `if <path>:` (truthy) can only take back what was
    set (a clear, when it writes the leaf's default). A subclass says what path
    an expression denotes (`tested_path`)."""

    def tested_path(self, expr: cst.BaseExpression) -> list[str] | None:
        raise NotImplementedError

    def lazy(self, path: list[str]) -> bool:
        """The write to `path` sits in the body of an `if <path> is None:`."""
        return any(active and path in tested[0] for tested, active, _ in self.ifs)

    def under_truthy(self, path: list[str]) -> bool:
        """The write to `path` sits in the body of an `if <path>:` (alone or
        `and`-ed with other tests): the leaf was set when the write runs."""
        return any(active and path in tested[1] for tested, active, _ in self.ifs)

    def branch_test(self, test: cst.BaseExpression) -> tuple[list[list[str]], list[list[str]]]:
        """(paths tested `is None`, paths tested truthy)."""
        tested: list[list[str]] = []
        truthy = self._conjuncts(test)
        todo: list[cst.BaseExpression] = [test]
        while todo:
            test = todo.pop()
            if isinstance(test, cst.BooleanOperation):
                todo += [test.left, test.right]
            elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                comp = test.comparisons[0]
                none = isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None"
                if isinstance(comp.operator, cst.Is) and none:
                    found = self.tested_path(test.left)
                    if found:
                        tested.append(found)
        return tested, truthy

    def _conjuncts(self, test: cst.BaseExpression) -> list[list[str]]:
        """The paths a test's top-level `and` chain requires truthy."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._conjuncts(test.left) + self._conjuncts(test.right)
        found = self.tested_path(test)
        return [found] if found else []


class FlagsTierVisitor(IsNoneBranches):
    """Classes with defaulted annotated fields, the flags accessor's annotation, and
    the paths expressions denote; every assignment to an attribute goes to `assigned`."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.in_runtime = ctx.module == ctx.vocab.runtime_module
        self.bags = set(ctx.vocab.bag_accessors)
        self.classes: dict[str, dict[str, str | None]] = {}
        self.accessor: list[str | None] = []  # [its return class] when defined here
        # name -> the path it holds, asked of the binding model
        self.locals = ctx.parts[BINDINGS].track(self._holds_path)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        fields = tier_fields(self.ctx, node)
        if fields:
            self.classes[f"{self.ctx.module}.{self.ctx.qualname}"] = fields

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.accessor = accessor_class(self.ctx, node) or self.accessor

    # -- paths ------------------------------------------------------------------
    def path(self, expr: cst.BaseExpression) -> list[str] | None:
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
            inner = self.path(base)
            return None if inner is None else [*inner, expr.attr.value]
        if isinstance(expr, cst.Name):
            found = self.locals.here(expr.value)
            return list(found) if found is not None else None
        return None

    def below_flags(self, expr: cst.BaseExpression) -> list[str] | None:
        """The path below the flags root that `expr` denotes ([group, leaf, ...]), or None."""
        found = self.path(expr)
        return found[1:] if found and found[0] == "flags" else None

    def tested_path(self, expr: cst.BaseExpression) -> list[str] | None:
        return self.below_flags(expr)

    def _holds_path(self, bound: Bound, before: Any) -> list[str] | None:
        if bound.kind not in VALUE_KINDS or bound.value is None:
            return None
        return self.path(bound.value)

    def writer(self) -> str:
        """The function an assignment here is in (MODULE at module level)."""
        scope = self.ctx.scope
        return scope.qualname if scope.kind != "module" else MODULE

    # -- assignments (a name's binding is the model's) ------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assigned(t.target, node, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assigned(node.target, node, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assigned(node.target, node, None)

    def _assigned(
        self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._assigned(e.value, node, None)
        elif isinstance(target, cst.Attribute):
            self.assigned(target, node, value)

    def assigned(
        self, target: cst.Attribute, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        """`target = value` in the statement `node` (value None: augmented, unpacked)."""


@dataclass(frozen=True, slots=True)
class FlagsTier:
    defined: bool  # the runtime module defines the flags accessor
    root: str | None  # the class it is annotated to return
    classes: dict[str, Fields]  # every class of defaulted annotated fields
    groups: dict[str, str]  # group -> its class

    def leaves(self, group: str) -> list[str]:
        return list(self.classes[self.groups[group]])

    def wanted_modules(self) -> set[str]:
        return tier_modules(self.classes, self.root)


def flags_tier(files: Iterable[tuple[str, str, TierFacts]], runtime_module: str) -> FlagsTier:
    """The tier the files' facts declare."""
    classes: dict[str, Fields] = {}
    defined, root = False, None
    for _, module, f in files:
        classes.update(f.classes)
        if module == runtime_module and f.accessor:
            defined, root = True, f.accessor[0]
    return FlagsTier(defined, root, classes, tier_groups(classes, root))


# -- the derived sets of a rule over the tier ------------------------------------------
def no_tier(runtime_module: str) -> dict[str, str]:
    """The sets where the runtime module defines no flags accessor: nothing to check."""
    return {"flags root": f"(no {ACCESSOR}() in {runtime_module})"}


def missing_groups(sets: dict[str, Any]) -> str | None:
    """Why a run over the tier is partial: the accessor's class declares no groups."""
    if "groups" in sets and not sets["groups"]:
        return (
            f"no flags groups: the runtime module's {ACCESSOR}() is not annotated with "
            f"a class of groups (flags root: {sets.get('flags root')})"
        )
    return None
