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
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, LineAnchor
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.resolution import KEY, resolution
from ctxlint.program.resolvable import resolvable_fields
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION, is_test_file, test_roots

ID = "CTX403"


def _attributes(node: cst.CSTNode) -> Iterable[cst.Attribute]:
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Attribute):
            yield n
        if isinstance(n, (cst.Lambda, cst.FunctionDef)):
            continue
        todo.extend(n.children)


class AssertVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.records = set(ctx.vocab.record_classes) | {ctx.vocab.record_class}
        self.fields = set(ctx.vocab.fields)
        self.resolvable: dict[str, list[str]] = {}
        self.readers: dict[str, list[str]] = {}  # module-level fn -> its parameters
        self.top: tuple[str, str] | None = None  # (module-level fn, its first parameter)
        self._params: list[str] = []
        self.locals: dict[str, set[str]] = {}  # function -> locals holding a new record
        self.events: list[dict[str, Any]] = []

    def _fn(self) -> str | None:
        s = self.ctx.scope
        return f"{self.ctx.module}.{s.qualname}" if s.kind == "function" else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        marked = resolvable_fields(node, self.ctx.module_node)
        if marked:
            self.resolvable[f"{self.ctx.module}.{self.ctx.qualname}"] = marked

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2:
            params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
            self.top = (f"{self.ctx.module}.{node.name.value}", params[0]) if params else None
            if self.top and len(params) >= 2:
                self.readers[self.top[0]] = []
                self._params = params

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2:
            if self.top and self.top[0] in self.readers and not self.readers[self.top[0]]:
                del self.readers[self.top[0]]  # read no private slot of its first parameter
            self.top = None

    def _private_read(self, obj: cst.BaseExpression) -> None:
        if self.top and self.top[0] in self.readers and not self.readers[self.top[0]]:
            if isinstance(obj, cst.Name) and obj.value == self.top[1]:
                self.readers[self.top[0]] = self._params

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value  # `p._slot`, or `p.__dict__[SLOT]`
        if attr == "__dict__" or (attr.startswith("_") and not attr.startswith("__")):
            self._private_read(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self._fn()
        if fn is None:
            return
        for t in node.targets:
            if not isinstance(t.target, cst.Name):
                continue
            made = isinstance(node.value, cst.Call) and (
                self.ctx.resolve(node.value.func) in self.records
            )
            held = self.locals.setdefault(fn, set())
            if made:
                held.add(t.target.value)
                self.events.append(
                    {"fn": fn, "local": t.target.value, "what": "made", "line": self._line(node)}
                )
            else:
                held.discard(t.target.value)

    def _line(self, node: cst.CSTNode) -> Any:
        return self.ctx.anchor(node, LineAnchor)

    def _held(self, expr: cst.BaseExpression) -> str | None:
        fn = self._fn()
        if fn and isinstance(expr, cst.Name) and expr.value in self.locals.get(fn, ()):
            return expr.value
        return None

    def _asserted(self, expr: cst.CSTNode, node: cst.CSTNode) -> None:
        for a in _attributes(expr):
            local = self._held(a.value)
            if local and a.attr.value in self.fields:
                self.events.append(
                    self.ctx.site(
                        node, fn=self._fn(), local=local, what="assert", field=a.attr.value
                    )
                )

    def visit_Assert(self, node: cst.Assert) -> None:
        if self._fn():
            self._asserted(node.test, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "getattr" and len(node.args) >= 2:
            slot = node.args[1].value
            if not isinstance(slot, cst.SimpleString) or slot.value.strip("\"'").startswith("_"):
                self._private_read(node.args[0].value)  # a literal private slot, or a constant
        fn = self._fn()
        if fn is None or not self.locals.get(fn):
            return
        if isinstance(func, cst.Attribute):
            local = self._held(func.value)
            if local:
                self.events.append(
                    {
                        "fn": fn,
                        "local": local,
                        "what": "method",
                        "name": func.attr.value,
                        "line": self._line(node),
                    }
                )
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
                self.events.append(
                    {
                        "fn": fn,
                        "local": local,
                        "what": "call",
                        "name": callee,
                        "line": self._line(node),
                    }
                )

    def finish(self) -> Any:
        facts = {"resolvable": self.resolvable, "readers": self.readers, "events": self.events}
        return facts if any(facts.values()) else None


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.res = res = resolution(program)
        g = res.graph
        self.files = list(program.facts(ID))
        classes = set(vocab.record_classes) | {vocab.record_class} | set(vocab.field_classes)
        self.resolved = sorted(
            {
                x
                for _, _, f in self.files
                for c, fs in f["resolvable"].items()
                if c in classes
                for x in fs
            }
        )
        self.reaching = g.reaching([res.declaration]) if res.declaration else set()
        self.constructs = any(
            f"{c}.__post_init__" in self.reaching for c in (*vocab.record_classes,)
        )
        stash_readers = {
            fn for _, _, f in res.files for fn, key in f.slot_reads if res.slot(key) in res.stash
        }
        blocked = res.view_functions | set(res.appenders)
        candidates = sorted(
            (q, ps)
            for _, _, f in self.files
            for q, ps in f["readers"].items()
            if q in stash_readers and q not in blocked
        )
        home = g.funcs[res.declaration].module if res.declaration in g.funcs else ""
        candidates.sort(key=lambda c: (c[0].rpartition(".")[0] != home, c[0]))
        self.reader = candidates[0] if candidates else None
        self.record_class = vocab.record_class

    def resolves(self, e: dict[str, Any], g: Any) -> bool:
        if e["what"] == "made":
            return self.constructs
        if e["what"] == "method":
            return bool(set(g.method(self.record_class, e["name"])) & self.reaching)
        return bool(set(g.resolve_global(e["name"])) & self.reaching)


class ResolvedFieldAssert(Rule):
    id = ID
    name = "resolved-field-assert"
    summary = (
        "A test asserting a resolved field off the record after resolution: the field is "
        "the raw input; the decision is read with the resolution reader"
    )
    visitor = AssertVisitor
    needs = (BAGS,)
    requires = ("calls", "classes", KEY)
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
        out: dict[str, Any] = {
            "declaration function": m.res.declaration or "(none)",
            "construction resolves": m.constructs,
            "resolved fields": len(m.resolved),
            "reader of the decision": m.reader[0] if m.reader else "(none)",
        }
        if not m.res.declaration:  # a runtime with no resolution: said here, not on every run
            out["note"] = "no declaration function derived: nothing is checked"
        return out

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
            for e in sorted(f["events"], key=lambda e: e.get("line") or e["span"][0]):
                key = (e["fn"], e["local"])
                if e["what"] == "made":
                    since[key] = e["line"] if m.resolves(e, g) else None
                elif e["what"] != "assert":
                    if since.get(key) is None and m.resolves(e, g):
                        since[key] = e["line"]
                elif e["field"] in resolved and since.get(key) is not None:
                    yield RawFinding(
                        ID,
                        path,
                        e["scope"],
                        e["snippet"],
                        e["span"],
                        f"`{e['local']}.{e['field']}` is the raw input, not what resolution "
                        f'decided: assert `{reader}({e["local"]}, "{e["field"]}")` '
                        f"({m.reader[0].rpartition('.')[0]})",
                        "resolution ran at line "
                        f"{since[key]}; a case whose point is that the record stayed pristine "
                        "asserts the field and says so (suppress it with its reason)",
                        data=field_data(program.vocab, e["field"]),
                    )


RULE = ResolvedFieldAssert()
