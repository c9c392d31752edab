"""The program's process groups: which are aliased to another, which functions
hand out a group's handle, give its width or run a collective on it.

- an **aliased group**: a module-global process group that a function (with
  `global`) assigns from another module global (`_MOE_DP = _ATTN_CP` in
  `initialize_model_parallel`), or a group table's entry assigned another's
  (ctxrt's `joined["moe_dp"] = joined["attn_cp"]`): its live width can differ
  from the configured size leaf of the same name (`moe_dp` -> `moe_dp_size`,
  when the parallel bag has that leaf). An alias made in the body of
  `if a == b:` (`_ATTN_CP = _TP` when `attn_cp_size == tp_size`) joins two
  groups of equal width and is no hazard;
- a **group handle**: `<parallel>.<key>_group` (`<parallel>` is a call of the
  parallel bag's accessor, or a name the binding model says holds one), a
  module global of the aliased group, and the functions returning either
  (`get_moe_cp_group`), closed over calls;
- a **width function**: a function of no parameters returning a handle's
  `.world_size` (`get_moe_cp_size`);
- a **collective**: a method call on a handle (`all_reduce`, ...), and the
  functions making one, closed over calls.

A visitor inherits `ProcessGroupsVisitor` and keeps its `group_facts()` in its
facts; `ProcessGroups` answers from them (program.parallel_sizes extends both:
CTX704 asks it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.if_branches import IfBranches
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS

WIDTH_ATTR = "world_size"
PARALLEL = "parallel"  # the parallel bag's namespace
# what names a group: the parallel bag's `<key>_group`, a module global, a call's result
GroupRef = tuple[Literal["leaf", "global", "call"], str]


def group_key(global_name: str) -> str:
    """`_MOE_DP` -> `moe_dp`: a group global's name as the parallel leaves spell it."""
    return global_name.strip("_").lower()


def _entry(expr: cst.BaseExpression) -> tuple[str, str] | None:
    """`d["key"]` as (d, key)."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return expr.value.value, key
    return None


@dataclass(frozen=True, slots=True)
class Alias:
    target: str  # the module global (qualified), or `d["key"]`
    source: str
    key: str  # the group's key (`moe_dp`)


@dataclass(frozen=True, slots=True)
class GroupFacts:
    """One file's process groups (functions qualified), kept in a rule's facts."""

    aliases: list[Alias]
    group_returns: dict[str, list[GroupRef]]  # function -> the group refs it returns
    widths: dict[str, GroupRef]  # no-parameter function -> the group it gives the width of
    collectives: dict[str, list[GroupRef]]  # function -> the groups it calls a method on


class ProcessGroupsVisitor(IfBranches):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.parallel = {a for a, ns in ctx.vocab.bag_accessors.items() if ns == PARALLEL}
        self.module_names: set[str] = set()
        self.globals: dict[str, set[str]] = {}  # function -> names it declares global
        self.aliases: list[tuple[str, str, str]] = []  # (target, source, key)
        self.group_returns: dict[str, list[GroupRef]] = {}
        self.widths: dict[str, GroupRef] = {}
        self.collectives: dict[str, list[GroupRef]] = {}
        self.calls: dict[str, set[str]] = {}  # fn -> qualified callees
        # the names bound to the parallel bag's accessor, asked of the binding model
        self.held = ctx.parts[BINDINGS].track(self._holds_parallel)

    def _fn(self) -> str | None:
        scope = self.ctx.scope
        return scope.qualname if scope.kind == "function" else None

    def is_parallel(self, expr: cst.BaseExpression) -> bool:
        """`expr` is the parallel bag: its accessor's call, or a local bound to one."""
        if isinstance(expr, cst.Call) and not expr.args:
            name = self.ctx.resolve(expr.func) or ""
            return name.rpartition(".")[2] in self.parallel
        if isinstance(expr, cst.Name):
            return self._fn() is not None and bool(self.held.here(expr.value))
        return False

    def _holds_parallel(self, bound: Bound, before: Any) -> bool | None:
        value = bound.value
        held = bound.kind in VALUE_KINDS and value is not None and self.is_parallel(value)
        return True if held else None

    def _group_ref(self, expr: cst.BaseExpression) -> GroupRef | None:
        if isinstance(expr, cst.Attribute) and expr.attr.value.endswith("_group"):
            if self.is_parallel(expr.value):
                return ("leaf", expr.attr.value[: -len("_group")])
        if isinstance(expr, cst.Name) and expr.value.lstrip("_").isupper():
            return ("global", f"{self.ctx.module}.{expr.value}")
        if isinstance(expr, cst.Call) and not expr.args:
            name = self.ctx.resolve(expr.func)
            if name:
                return ("call", name)
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        p = node.params
        if p.params or p.posonly_params or p.kwonly_params or isinstance(p.star_arg, cst.Param):
            return
        ref = self._width(node)
        if ref is not None:
            self.widths[self.ctx.qualname] = ref

    def _width(self, node: cst.FunctionDef) -> GroupRef | None:
        """The group a function of no parameters returns the width of: its one
        statement past a docstring and imports is `return <group>.world_size` or
        `return <...>.get_world_size(<group>)`."""
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        rest = [
            small
            for stmt in body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if not isinstance(small, (cst.Import, cst.ImportFrom))
            and not (isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString))
        ]
        if len(rest) != 1 or any(not isinstance(st, cst.SimpleStatementLine) for st in body):
            return None
        value = rest[0].value if isinstance(rest[0], cst.Return) else None
        if isinstance(value, cst.Attribute) and value.attr.value == WIDTH_ATTR:
            return self._group_ref(value.value)
        if isinstance(value, cst.Call) and len(value.args) == 1:
            name = dotted(value.func) or ""
            if name.rpartition(".")[2] == f"get_{WIDTH_ATTR}":
                return self._group_ref(value.args[0].value)
        return None

    def branch_test(self, test: cst.BaseExpression) -> bool:
        return (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
        )

    def _equal_width(self) -> bool:
        """Inside the body of `if a == b:`: an alias made when two widths are
        equal (`_ATTN_CP = _TP` when attn_cp_size == tp_size) is no width hazard."""
        return bool(self.ifs) and self.ifs[-1][0] and self.ifs[-1][1]

    def visit_Global(self, node: cst.Global) -> None:
        fn = self._fn()
        if fn is not None:
            self.globals.setdefault(fn, set()).update(n.name.value for n in node.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self._fn()
        for t in node.targets:
            target = t.target
            entry, source = _entry(target), _entry(node.value)
            if self._equal_width():
                pass
            elif entry and source and entry[0] == source[0] and entry[1] != source[1]:
                # a group table's entry made another's (`joined["moe_dp"] = joined["attn_cp"]`)
                d = entry[0]
                self.aliases.append((f'{d}["{entry[1]}"]', f'{d}["{source[1]}"]', entry[1]))
            if not isinstance(target, cst.Name):
                continue
            if fn is None:
                self.module_names.add(target.value)
            elif (
                target.value in self.globals.get(fn, set())
                and isinstance(node.value, cst.Name)
                and not self._equal_width()
            ):
                self.aliases.append((target.value, node.value.value, group_key(target.value)))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._fn() is None and isinstance(node.target, cst.Name):
            self.module_names.add(node.target.value)

    def visit_Return(self, node: cst.Return) -> None:
        fn = self._fn()
        if fn is not None and node.value is not None:
            ref = self._group_ref(node.value)
            if ref is not None:
                self.group_returns.setdefault(fn, []).append(ref)

    def visit_Call(self, node: cst.Call) -> None:
        fn = self._fn()
        if fn is None:
            return
        func = node.func
        if isinstance(func, cst.Attribute):
            ref = self._group_ref(func.value)
            if ref is not None:
                self.collectives.setdefault(fn, []).append(ref)
        name = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if name:
            self.calls.setdefault(fn, set()).add(name)

    def group_facts(self) -> GroupFacts | None:
        """This file's process groups, functions qualified (None: it has none)."""
        module = self.ctx.module
        # a global's source must be a module global too; an entry's is the same table
        aliases = [a for a in self.aliases if a[1] in self.module_names or a[1].endswith('"]')]
        if not (aliases or self.group_returns or self.widths or self.collectives):
            return None
        return GroupFacts(
            [Alias(f"{module}.{t}", s, k) for t, s, k in aliases],
            {f"{module}.{q}": r for q, r in self.group_returns.items()},
            {f"{module}.{q}": r for q, r in self.widths.items()},
            {f"{module}.{q}": r for q, r in self.collectives.items()},
        )


class ProcessGroups:
    """The aliased groups, their handles, width functions and collectives."""

    def __init__(self, vocab: Vocabulary, found: Iterable[GroupFacts | None]) -> None:
        files = [f for f in found if f is not None]
        self.aliased: dict[str, str] = {}  # key -> "target = source" (where it is aliased)
        self.group_global: dict[str, str] = {}  # qualified global -> key
        for f in files:
            for a in f.aliases:
                if vocab.fields.get(f"{a.key}_size", "").startswith(PARALLEL):
                    self.aliased.setdefault(a.key, f"{a.target} = {a.source}")
                    self.group_global[a.target] = a.key
        returns = {q: r for f in files for q, r in f.group_returns.items()}
        self.group_fns: dict[str, str] = {}  # function -> the key of the group it returns
        changed = True
        while changed:
            changed = False
            for q, refs in sorted(returns.items()):
                key = next((k for k in map(self.group_of, refs) if k), None)
                if key and q not in self.group_fns:
                    self.group_fns[q] = key
                    changed = True
        self.widths: dict[str, list[str]] = {}  # key -> its width functions
        for f in files:
            for q, ref in f.widths.items():
                key = self.group_of(ref)
                if key:
                    self.widths.setdefault(key, []).append(q)
        self.wrappers: dict[str, set[str]] = {}  # key -> functions running a collective on it
        for f in files:
            for q, refs in f.collectives.items():
                for key in {k for k in map(self.group_of, refs) if k}:
                    self.wrappers.setdefault(key, set()).add(q)

    def _function(self, name: str, functions: Iterable[str]) -> str | None:
        """The function `name` calls: itself, or one a package re-exports under it."""
        module, _, short = name.rpartition(".")
        for q in sorted(functions):
            if q == name or (q.rpartition(".")[2] == short and q.startswith(module + ".")):
                return q
        return None

    def group_of(self, ref: GroupRef) -> str | None:
        """The aliased group's key `ref` names, if it names one."""
        kind, name = ref
        if kind == "leaf":
            return name if name in self.aliased else None
        if kind == "global":
            return self.group_global.get(name)
        q = self._function(name, self.group_fns)
        return self.group_fns[q] if q else None

    def collective(self, key: str, calls: list[str], refs: list[GroupRef]) -> bool:
        """A function calling a method on the group (`refs`) or a function that does."""
        if any(self.group_of(r) == key for r in refs):
            return True
        wrappers = self.wrappers.get(key, set())
        return any(self._function(c, wrappers) for c in calls)
