"""CTX403 resolved-field-assert: a test asserting a field that resolution decides, off
the record, after resolution ran: the field is the operator's raw input.

Everything is derived from the code:

- **test code**: pytest's file conventions plus the configured `test-roots`
  (program.test_code, as CTX402 decides it);
- the **resolved fields**: the declarable whitelist, fields declared
  `Arg(..., resolvable=True)` or `metadata={"resolvable": True}` on the record
  class, its bases or the field classes (program.resolvable, as CTX105 reads it);
- **resolution**: the declaration function the pipeline derives
  (program.resolution); the record's construction resolves when its
  `__post_init__` reaches it, a method call on the record or a call handing it
  the record resolves when the callee reaches it;
- the **reader of the decision**: a module-level function that reads the
  declaration stash off its first parameter and is neither a view nor a
  declarer (SGLang's `resolution_result(server_args, field)`).

In a test function, `x = Record(...)` followed (at or after resolution) by an
assertion on `x.field` (`assert`, or a `self.assert*(...)` argument) is
reported for a resolved field, with the reader as the fix. With no declaration
function, no resolved field or no reader, the rule reports itself partial: a
fix it cannot name is not offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, LineAnchor
from ctxlint.facts.typed import Site, site
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.decision_reader import SlotReaders, decision_reader
from ctxlint.program.resolution import KEY, resolution
from ctxlint.program.resolvable import resolvable_fields
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION, is_test_file, test_roots

ID = "CTX403"
NO_DECLARATION = "no declaration function derived: nothing is checked"


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


class AssertVisitor(SlotReaders):
    """Where a test function makes a record and asserts its fields, and (SlotReaders)
    the functions that may read resolution's decision."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.records = set(ctx.vocab.record_classes) | {ctx.vocab.record_class}
        self.fields = set(ctx.vocab.fields)
        self.resolvable: dict[str, list[str]] = {}
        self.events: list[RecordEvent] = []
        self.making: set[str] = set()  # functions making a record
        # the names holding a new record, asked of the binding model
        self.held = ctx.parts[BINDINGS].track(self._holds_record)

    def _fn(self) -> str | None:
        s = self.ctx.scope
        return f"{self.ctx.module}.{s.qualname}" if s.kind == "function" else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        marked = resolvable_fields(node, self.ctx.module_node)
        if marked:
            self.resolvable[f"{self.ctx.module}.{self.ctx.qualname}"] = marked

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


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.res = res = resolution(program)
        g = res.graph
        self.files = list(program.typed_facts(ID, AssertFacts))
        classes = set(vocab.record_classes) | {vocab.record_class} | set(vocab.field_classes)
        self.resolved = sorted(
            {
                x
                for _, _, f in self.files
                for c, fs in f.resolvable.items()
                if c in classes
                for x in fs
            }
        )
        self.reaching = g.reaching([res.declaration]) if res.declaration else set()
        self.constructs = any(
            f"{c}.__post_init__" in self.reaching for c in (*vocab.record_classes,)
        )
        self.reader = decision_reader(res, (f.readers for _, _, f in self.files))
        self.record_class = vocab.record_class

    def resolves(self, e: RecordEvent, g: Any) -> bool:
        if e.what == "made":
            return self.constructs
        if e.what == "method":
            return bool(set(g.method(self.record_class, e.name)) & self.reaching)
        return bool(set(g.resolve_global(e.name)) & self.reaching)


class ResolvedFieldAssert(Rule):
    id = ID
    name = "resolved-field-assert"
    summary = (
        "A test asserting a resolved field off the record after resolution: the field is "
        "the raw input; the decision is read with the resolution reader"
    )
    visitor = AssertVisitor
    needs = (BAGS,)
    requires = ("calls", "classes", KEY, BINDINGS)  # BINDINGS: the names holding a new record
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {f"module:{m}" for m in modules} | {vocab.record_name, "publish"}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return res.wanted_tokens() | res.slot_names

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        # a runtime with no resolution: said here, not on every run
        note = {} if m.res.declaration else {"note": NO_DECLARATION}
        return {
            "declaration function": m.res.declaration or "(none)",
            "construction resolves": m.constructs,
            "resolved fields": len(m.resolved),
            "reader of the decision": m.reader[0] if m.reader else "(none)",
            **note,
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets or sets.get("declaration function") == "(none)":
            return None  # disabled (said apart), or no resolution (the sets' note)
        if not sets.get("resolved fields"):
            return (
                "no resolved field derived (no `resolvable=True` declaration): nothing is checked"
            )
        if sets.get("reader of the decision") == "(none)":
            return (
                "no reader of the decision derived (a function reading the declaration stash "
                "off its first parameter): no fix to name, nothing is checked"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        if not (m.res.declaration and m.resolved and m.reader):
            return
        g = m.res.graph
        roots = test_roots(program)
        resolved = set(m.resolved)
        reader = m.reader[0].rpartition(".")[2]
        for path, _, f in m.files:
            if not is_test_file(path, roots):
                continue
            since: dict[tuple[str, str], int | None] = {}  # (fn, local) -> resolved at line
            for e in sorted(f.events, key=lambda e: e.line or (e.site.span[0] if e.site else 0)):
                key = (e.fn, e.local)
                if e.what == "made":
                    since[key] = e.line if m.resolves(e, g) else None
                elif e.what != "assert":
                    if since.get(key) is None and m.resolves(e, g):
                        since[key] = e.line
                elif e.field in resolved and since.get(key) is not None and e.site:
                    yield RawFinding(
                        ID,
                        path,
                        e.site.scope,
                        e.site.snippet,
                        e.site.span,
                        f"`{e.local}.{e.field}` is the raw input, not what resolution "
                        f'decided: assert `{reader}({e.local}, "{e.field}")` '
                        f"({m.reader[0].rpartition('.')[0]})",
                        "resolution ran at line "
                        f"{since[key]}; a case whose point is that the record stayed pristine "
                        "asserts the field and says so (suppress it with its reason)",
                        data=field_data(program.vocab, e.field),
                    )


RULE = ResolvedFieldAssert()
