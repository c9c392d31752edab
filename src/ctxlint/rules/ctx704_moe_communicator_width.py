"""CTX704 moe-communicator-width: a configured parallel size used where the live
communicator's width is meant, and a size test where the enabled leaf is meant.

The process groups are the program model's (program.process_groups: the groups
the code aliases to another, their handles, width functions and collectives).

A read of `<parallel>.<key>_size` in a function that runs a collective on that
group is reported: the width of the communicator is the width function's
answer. Separately, `<parallel>.<size> > 1` where the runtime module defines a
leaf as exactly that test (`dcp_enabled=cfg.dcp_size > 1`, or a property named
so whose body makes it) is reported with the leaf to read instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.property_answers import PropertyAnswers
from ctxlint.facts.typed import Site, site
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.process_groups import (
    PARALLEL,
    WIDTH_ATTR,
    GroupFacts,
    ProcessGroups,
    ProcessGroupsVisitor,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX704"
NOTE_GROUPS = "no aliased process group derived (no `_G = _OTHER` in a function with `global _G`)"
NOTE_WIDTH = "no width function derived (a function of no parameters returning a group's "


@dataclass(frozen=True, slots=True)
class SizeRead:
    """`<parallel>.<leaf>` (a `_size` leaf) read in `fn`."""

    fn: str
    leaf: str
    site: Site


@dataclass(frozen=True, slots=True)
class SizeTest:
    """`<receiver>.<leaf> > 1` in `fn`."""

    fn: str
    leaf: str
    receiver: str
    site: Site


@dataclass(frozen=True, slots=True)
class WidthFacts:
    groups: GroupFacts | None  # program.process_groups
    calls: dict[str, list[str]]  # what a function reading a size calls
    sizes: list[SizeRead]
    tests: list[SizeTest]
    enabled: dict[str, str]  # leaf -> the size it tests (the runtime module)


def _is_one(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "1"


def _size_test(expr: cst.BaseExpression) -> str | None:
    """`x.dcp_size > 1` (or `1 < x.dcp_size`) as "dcp_size"."""
    if not isinstance(expr, cst.Comparison) or len(expr.comparisons) != 1:
        return None
    comp = expr.comparisons[0]
    left, right, op = expr.left, comp.comparator, comp.operator
    if isinstance(op, cst.LessThan) and _is_one(left):
        left, right, op = right, left, cst.GreaterThan()
    if isinstance(op, cst.GreaterThan) and _is_one(right) and isinstance(left, cst.Attribute):
        return left.attr.value
    return None


class WidthVisitor(ProcessGroupsVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        vocab = ctx.vocab
        # the runtime module and its siblings: where an enabled leaf is defined
        self.in_runtime = ctx.module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]
        self.sizes: list[SizeRead] = []  # reads of <parallel>.X_size
        self.tests: list[SizeTest] = []  # <parallel>.X > 1
        self.enabled: dict[str, str] = {}  # leaf -> the size it tests (runtime module)
        self.answers = PropertyAnswers()  # inside the runtime module: what a property answers

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.in_runtime:
            self.answers.enter(node)
        super().visit_FunctionDef(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        answered = self.answers.leave() if self.in_runtime else None
        if answered is not None:
            # a property binds the test only when it is all it answers (0.5.17's
            # `dcp_enabled` also answers False while the DCP group is missing)
            sizes = {_size_test(v) for v in answered[1]}
            if len(sizes) == 1 and None not in sizes:
                self.enabled.setdefault(answered[0], sizes.pop())  # type: ignore[arg-type]

    def visit_Return(self, node: cst.Return) -> None:
        if self.in_runtime:
            self.answers.returned(node)
        super().visit_Return(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        fn = self._fn()
        leaf = node.attr.value
        if fn is not None and leaf.endswith("_size") and self.is_parallel(node.value):
            self.sizes.append(SizeRead(fn, leaf, site(self.ctx, node)))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        size = _size_test(node)
        if size is None:
            return
        if self.in_runtime and self._binding is not None and self._binding[1] == id(node):
            self.enabled.setdefault(self._binding[0], size)  # `dcp_enabled=cfg.dcp_size > 1`
        left = (
            node.left if _is_one(node.comparisons[0].comparator) else node.comparisons[0].comparator
        )
        assert isinstance(left, cst.Attribute)
        fn = self._fn()
        if fn is not None and self.is_parallel(left.value):
            receiver = self.ctx.snippet(left.value)
            self.tests.append(SizeTest(fn, size, receiver, site(self.ctx, node)))

    _binding: tuple[str, int] | None = None  # (keyword or key, id of its value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if self.in_runtime and node.keyword is not None:
            self._binding = (node.keyword.value, id(node.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key) if self.in_runtime else None
        if key is not None:
            self._binding = (key, id(node.value))

    def finish(self) -> WidthFacts | None:
        sized = {s.fn for s in self.sizes}
        # what a function reading a size calls: a collective may be a helper's
        calls = {f"{self.ctx.module}.{q}": sorted(c) for q, c in self.calls.items() if q in sized}
        groups = self.group_facts()
        if not (groups or calls or self.sizes or self.tests or self.enabled):
            return None
        return WidthFacts(groups, calls, self.sizes, self.tests, self.enabled)


# -- the program ---------------------------------------------------------------------
class Model(ProcessGroups):
    """The process groups (program.process_groups), and the enabled leaves."""

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.typed_facts(ID, WidthFacts))
        super().__init__(vocab, (f.groups for _, _, f in self.files))
        # the runtime module's enabled leaves: size -> leaf (`dcp_size` -> `dcp_enabled`)
        self.enabled: dict[str, str] = {}
        for _, module, f in self.files:
            if module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]:
                for leaf, size in sorted(f.enabled.items()):
                    self.enabled.setdefault(size, leaf)


class MoeCommunicatorWidth(Rule):
    id = ID
    name = "moe-communicator-width"
    summary = (
        "A configured parallel size read to size a collective on a group the code can "
        "alias to another (the MoE communicator), and a `size > 1` test where the runtime "
        "defines an enabled leaf"
    )
    visitor = WidthVisitor
    needs = (BAGS,)
    requires = (BINDINGS,)  # the names bound to the parallel bag

    def tokens(self, vocab: Vocabulary) -> set[str]:
        parallel = {a for a, ns in vocab.bag_accessors.items() if ns == PARALLEL}
        # a group table's entry named for a parallel size (`joined["moe_dp"]`); `_size > 1`:
        # a test, or the runtime binding a leaf to one
        keys = [
            f[: -len("_size")]
            for f, ns in vocab.fields.items()
            if ns == PARALLEL and f.endswith("_size")
        ]
        entries = {f"{q}{k}{q}]" for k in keys for q in "'\""}
        return (
            parallel
            | entries
            | {WIDTH_ATTR, "global", "_size > 1", f"module:{vocab.runtime_module}"}
        )

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        return {
            "aliased groups": dict(sorted(m.aliased.items())),
            "group functions": dict(sorted(m.group_fns.items())),
            "width functions": {k: sorted(v) for k, v in sorted(m.widths.items())},
            # an aliased group with no width function to name: its size reads are not checked
            "unchecked groups": sorted(set(m.aliased) - set(m.widths)),
            "collective functions": {k: len(v) for k, v in sorted(m.wrappers.items())},
            "enabled leaves": dict(sorted(m.enabled.items())),
        } | (
            # no group the code aliases: no hazard here (said in the sets, not on every run)
            {} if m.aliased else {"note": f"{NOTE_GROUPS}: no size read is checked"}
        )

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets or not sets.get("aliased groups"):
            return None  # disabled (said apart), or nothing aliased (the sets' note)
        if not sets.get("width functions"):
            return f"{NOTE_WIDTH}.world_size) for an aliased group: nothing is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        for path, module, f in m.files:
            for s in f.sizes:
                key = s.leaf[: -len("_size")]
                if key not in m.aliased or key not in m.widths:
                    continue
                fn = f"{module}.{s.fn}"
                refs = f.groups.collectives.get(fn, []) if f.groups else []
                if not m.collective(key, f.calls.get(fn, []), refs):
                    continue
                width = sorted(m.widths[key])[0]
                wmod, _, wname = width.rpartition(".")
                yield RawFinding(
                    ID,
                    path,
                    s.site.scope,
                    s.site.snippet,
                    s.site.span,
                    f"`{s.site.snippet}` is the configured size, not the width of the "
                    f"`{key}` communicator this function runs a collective on (the group "
                    f"can be another's alias); ask `{wname}()` ({wmod})",
                    f"aliased at: {m.aliased[key]}\nwidth functions: "
                    + ", ".join(sorted(m.widths[key])),
                    data={"leaf": s.leaf},
                )
            for t in f.tests:
                leaf = m.enabled.get(t.leaf)
                if leaf is None:
                    continue
                yield RawFinding(
                    ID,
                    path,
                    t.site.scope,
                    t.site.snippet,
                    t.site.span,
                    f"`{t.site.snippet}` spells what the leaf `{leaf}` answers: read "
                    f"`{t.receiver}.{leaf}`",
                    f"beside {program.vocab.runtime_module}, `{leaf}` is bound to `{t.leaf} > 1`",
                    data={"leaf": t.leaf},
                )


RULE = MoeCommunicatorWidth()
