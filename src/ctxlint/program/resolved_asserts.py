"""Where test code asserts a field of a record it made, after resolution ran on
that record: the field is then the operator's raw input, not the decision.

Per file, `AssertVisitor` keeps what each function does with a local holding a
new record (the binding model's answer): makes it, calls a method on it, hands
it to a call, asserts a field (`assert`, or a `self.assert*(...)` argument);
with the functions that may read the decision (program.decision_reader) and
the record's classes declaring resolvable fields (program.resolvable). The
program side (`resolved_asserts`) derives the declaration function
(program.resolution), whether constructing the record resolves it (its
`__post_init__` reaches the declaration function), the resolved fields, the
reader of the decision, and, in statement order, the line from which each
local's record is resolved (a method call on it or a call handing it on that
reaches the declaration function). Asked by CTX403 (its facts are kept under
its id).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, LineAnchor
from ctxlint.facts.typed import Site, site
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.decision_reader import SlotReaders, decision_reader
from ctxlint.program.resolution import resolution
from ctxlint.program.resolvable import ResolvableClasses, whitelist
from ctxlint.program.test_code import is_test_file, test_roots

KEY = "CTX403"  # the rule whose facts these are


def _attributes(node: cst.CSTNode) -> Iterable[cst.Attribute]:
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Attribute):
            yield n
        if isinstance(n, (cst.Lambda, cst.FunctionDef)):
            continue
        todo.extend(n.children)


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """What a function does with a local holding a new record: makes it, calls a
    method on it (`name`), hands it to a call (`name`: the callee), asserts a field."""

    fn: str
    local: str
    what: Literal["made", "method", "call", "assert"]
    line: int = 0  # where, but for an assertion (its site)
    name: str = ""
    field: str = ""
    site: Site | None = None


@dataclass(frozen=True, slots=True)
class AssertFacts:
    resolvable: dict[str, list[str]]  # class -> its fields declared resolvable
    readers: dict[str, list[str]]  # module-level fn reading a private slot of its first param
    events: list[RecordEvent] = field(default_factory=list)


class AssertVisitor(SlotReaders, ResolvableClasses):
    """Where a function makes a record and asserts its fields, (SlotReaders) the
    functions that may read resolution's decision, and (ResolvableClasses) the
    record's classes declaring resolvable fields."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.records = set(ctx.vocab.record_classes) | {ctx.vocab.record_class}
        self.fields = set(ctx.vocab.fields)
        self.events: list[RecordEvent] = []
        self.making: set[str] = set()  # functions making a record
        # the names holding a new record, asked of the binding model
        self.held = ctx.parts[BINDINGS].track(self._holds_record)

    def _fn(self) -> str | None:
        s = self.ctx.scope
        return f"{self.ctx.module}.{s.qualname}" if s.kind == "function" else None

    def _made(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.ctx.resolve(value.func) in self.records

    def _holds_record(self, bound: Bound, before: Any) -> bool | None:
        value = bound.value
        return (
            True if bound.kind in VALUE_KINDS and value is not None and self._made(value) else None
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self._fn()
        if fn is None or not self._made(node.value):
            return
        self.making.add(fn)
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                self.events.append(RecordEvent(fn, t.target.value, "made", self._line(node)))

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.anchor(node, LineAnchor)  # type: ignore[return-value]

    def _held(self, expr: cst.BaseExpression) -> str | None:
        fn = self._fn()
        if fn and isinstance(expr, cst.Name) and self.held.here(expr.value):
            return expr.value
        return None

    def _asserted(self, expr: cst.CSTNode, node: cst.CSTNode) -> None:
        fn = self._fn()
        for a in _attributes(expr):
            local = self._held(a.value)
            if fn and local and a.attr.value in self.fields:
                where = site(self.ctx, node)
                self.events.append(RecordEvent(fn, local, "assert", field=a.attr.value, site=where))

    def visit_Assert(self, node: cst.Assert) -> None:
        if self._fn():
            self._asserted(node.test, node)

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        func, fn = node.func, self._fn()
        if fn is None or fn not in self.making:  # (no local can hold a record)
            return
        if isinstance(func, cst.Attribute):
            local = self._held(func.value)
            if local:
                line = self._line(node)
                self.events.append(RecordEvent(fn, local, "method", line, func.attr.value))
                return
            me = self.ctx.scope.self_name
            if (
                isinstance(func.value, cst.Name)
                and func.value.value == me
                and func.attr.value.startswith("assert")
            ):
                for arg in node.args:
                    self._asserted(arg.value, node)
                return
        callee = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        for arg in node.args:
            local = self._held(arg.value)
            if local and callee:
                self.events.append(RecordEvent(fn, local, "call", self._line(node), callee))

    def finish(self) -> AssertFacts | None:
        if not (self.resolvable or self.readers or self.events):
            return None
        return AssertFacts(self.resolvable, self.readers, self.events)


class ResolvedAsserts:
    """The declaration function, whether constructing the record resolves it, the
    resolved fields, the reader of the decision, and which calls resolve (once per
    Program: resolved_asserts)."""

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.res = res = resolution(program)
        self.files = list(program.typed_facts(KEY, AssertFacts))
        self.resolved = sorted(whitelist(f.resolvable for _, _, f in self.files))
        self.reaching = res.graph.reaching([res.declaration]) if res.declaration else set()
        self.constructs = any(
            f"{c}.__post_init__" in self.reaching for c in (*vocab.record_classes,)
        )
        self.reader = decision_reader(res, (f.readers for _, _, f in self.files))
        self.record_class = vocab.record_class

    def resolves(self, e: RecordEvent) -> bool:
        g = self.res.graph
        if e.what == "made":
            return self.constructs
        if e.what == "method":
            return bool(set(g.method(self.record_class, e.name)) & self.reaching)
        return bool(set(g.resolve_global(e.name)) & self.reaching)

    def after_resolution(self, program: Program) -> Iterator[tuple[str, RecordEvent, int]]:
        """(path, assertion, the line resolution ran at) of each assertion in test
        code on a field of a record resolution has run on, by path and line."""
        roots = test_roots(program)
        for path, _, f in self.files:
            if not is_test_file(path, roots):
                continue
            since: dict[tuple[str, str], int | None] = {}  # (fn, local) -> resolved at line
            for e in sorted(f.events, key=lambda e: e.line or (e.site.span[0] if e.site else 0)):
                key = (e.fn, e.local)
                if e.what == "made":
                    since[key] = e.line if self.resolves(e) else None
                elif e.what != "assert":
                    if since.get(key) is None and self.resolves(e):
                        since[key] = e.line
                elif (line := since.get(key)) is not None and e.site:
                    yield path, e, line


def resolved_asserts(program: Program) -> ResolvedAsserts:
    return program.memo(f"{KEY}:model", lambda: ResolvedAsserts(program))
