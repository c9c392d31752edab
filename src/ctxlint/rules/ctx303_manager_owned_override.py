"""CTX303 manager-owned-override: a config override of a field the manager answers
for itself, made in the manager's process, records a process-wide change that no
other process sees.

Everything is derived from the code:

- the **manager-owned fields**: a module constant of string literals that a
  method answers off its own instance, `for name in C: ... getattr(self, name)`
  or `if name in C: return getattr(self, name)` (SGLang's
  `_MANAGER_OWNED_FIELDS` in `TokenizerManager.config_value` and
  `resolved_config_dict`), restricted to record fields; the class doing it is
  the **manager**;
- the **overrides**: `get_context().override(source, **fields)` (or a local
  bound to `get_context()`), and a **wrapper**: a function taking `**fields`
  that hands them to such a call (`record_config_updates`), called on `self`
  or by name;
- the **manager's process**: a method of the manager or of a class in its MRO
  (its mixins), or a function reached from the process entries of a role that
  reaches a manager method and from no other role (program.process_roles).

An override naming a manager-owned field in the manager's process is reported.
Elsewhere (the scheduler's `ModelRunner.update_model_fields`, which rewrites its
own process's copy) it is not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.process_roles import class_process
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX303"
CONTEXT = "get_context"
NOTE = (
    "no manager-owned fields derived (no constant of field names that a method answers "
    "with getattr(self, name)): nothing is checked"
)


def _strings(expr: cst.BaseExpression) -> list[str] | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and len(expr.args) == 1:
        if expr.func.value not in ("frozenset", "set", "tuple"):
            return None
        expr = expr.args[0].value
    if not isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return None
    out = [string_value(e.value) for e in expr.elements if isinstance(e, cst.Element)]
    return [s for s in out if s is not None] if all(s is not None for s in out) else None


@dataclass(frozen=True, slots=True)
class Answer:
    """`getattr(self, name)` for each name of a constant, in a method of `cls`."""

    cls: str
    const: str  # the constant, qualified
    fn: str


@dataclass(frozen=True, slots=True)
class FieldsCall:
    """A call in `fn` naming record fields as keywords: the context's override
    ("context"), or a call that may be a wrapper's, on self or by name."""

    fn: str
    cls: str | None
    kind: Literal["context", "self", "name"]
    name: str  # the called name
    resolved: str | None  # by name: what it resolves to
    fields: list[str]
    site: Site


@dataclass(frozen=True, slots=True)
class OwnedFacts:
    consts: dict[str, list[str]]  # module constant of strings, qualified -> its strings
    answers: list[Answer]
    calls: list[FieldsCall]
    wrappers: list[str]  # functions handing their **fields to the context's override


class OwnedVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.fields = set(ctx.vocab.fields)
        self.consts: dict[str, list[str]] = {}
        self.answers: list[Answer] = []
        self.tests: list[tuple[str, str]] = []  # (loop or test name, qualified constant)
        self.calls: list[FieldsCall] = []
        self.wrappers: list[str] = []
        self.star: dict[str, str] = {}  # function -> its `**name`
        # the names bound to get_context(), asked of the binding model
        self.context = ctx.parts[BINDINGS].track(self._holds_context)

    def _fn(self) -> str:
        scope = self.ctx.scope
        return f"{self.ctx.module}.{scope.qualname}" if scope.kind == "function" else ""

    def _cls(self) -> str | None:
        cls = self.ctx.enclosing_class()
        return f"{self.ctx.module}.{cls}" if cls else None

    def _is_context(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call) and not expr.args:
            return (self.ctx.resolve(expr.func) or "").rpartition(".")[2] == CONTEXT
        return isinstance(expr, cst.Name) and bool(self._fn() and self.context.here(expr.value))

    def _holds_context(self, bound: Bound, before: Any) -> bool | None:
        value = bound.value
        held = bound.kind in VALUE_KINDS and value is not None and self._is_context(value)
        return True if held else None

    # -- the constants (`FIELDS = (...)`, annotated or not), the answers off the instance
    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._constant(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._constant(node.target, node.value)

    def _constant(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name) and target.value.lstrip("_").isupper() and not self._fn():
            values = _strings(value)
            if values is not None:
                self.consts[target.value] = values

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        star = node.params.star_kwarg
        if star is not None:
            self.star[self._fn()] = star.name.value

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.iter, (cst.Name, cst.Attribute)):
            self.tests.append((node.target.value, self.ctx.resolve(node.iter) or ""))
        else:
            self.tests.append(("", ""))

    def leave_For(self, node: cst.For) -> None:
        self.tests.pop()

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In)
            and isinstance(test.left, cst.Name)
            and isinstance(test.comparisons[0].comparator, (cst.Name, cst.Attribute))
        ):
            const = self.ctx.resolve(test.comparisons[0].comparator) or ""
            self.tests.append((test.left.value, const))
        else:
            self.tests.append(("", ""))

    def leave_If(self, node: cst.If) -> None:
        self.tests.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        fn = self._fn()
        if isinstance(func, cst.Name) and func.value == "getattr" and len(node.args) >= 2:
            obj, name = node.args[0].value, node.args[1].value
            me = self.ctx.scope.self_name
            if me and isinstance(obj, cst.Name) and obj.value == me and isinstance(name, cst.Name):
                for var, const in reversed(self.tests):
                    if var == name.value and const:
                        cls = self._cls()
                        if cls:
                            self.answers.append(Answer(cls, const, fn))
                        break
            return
        if not isinstance(func, cst.Attribute) and not isinstance(func, cst.Name):
            return
        keywords = [a.keyword.value for a in node.args if a.keyword is not None]
        starred = [a.value for a in node.args if a.star == "**"]
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value
        receiver = func.value if isinstance(func, cst.Attribute) else None
        to_context = name == "override" and receiver is not None and self._is_context(receiver)
        # a wrapper: hands its own **fields to the context's override
        if to_context and fn in self.star:
            if any(isinstance(s, cst.Name) and s.value == self.star[fn] for s in starred):
                self.wrappers.append(fn)
        fields = sorted(set(keywords) & self.fields)
        if not fields or not fn:
            return
        kind: Literal["context", "self", "name"]
        if to_context:
            kind = "context"
        elif receiver is None:
            kind = "name"
        elif isinstance(receiver, cst.Name) and receiver.value == self.ctx.scope.self_name:
            kind = "self"
        else:
            return  # another object's method
        resolved = self.ctx.resolve(func) if kind == "name" else None
        where = site(self.ctx, node)
        self.calls.append(FieldsCall(fn, self._cls(), kind, name, resolved, fields, where))

    def finish(self) -> OwnedFacts | None:
        consts = {f"{self.ctx.module}.{k}": v for k, v in self.consts.items()}
        found = self.answers or self.calls or self.wrappers or consts
        return OwnedFacts(consts, self.answers, self.calls, self.wrappers) if found else None


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.typed_facts(ID, OwnedFacts))
        consts = {q: v for _, _, f in self.files for q, v in f.consts.items()}
        self.owned: dict[str, list[str]] = {}  # field -> "Class (CONSTANT)" answering it
        self.managers: set[str] = set()
        answers = [a for _, _, f in self.files for a in f.answers]
        for a in answers:
            label = f"{a.cls} ({a.const.rpartition('.')[2]})"
            for name in consts.get(a.const, ()):
                if name in vocab.fields:
                    self.owned.setdefault(name, []).append(label)
                    self.managers.add(a.cls)
        self.wrappers = {w for _, _, f in self.files for w in f.wrappers}
        self.wanted = {a.const.rpartition(".")[0] for a in answers if a.const not in consts}


class ManagerOwnedOverride(Rule):
    id = ID
    name = "manager-owned-override"
    summary = (
        "A config override of a field the manager answers off itself, made in the "
        "manager's process: it records a change other processes never see"
    )
    visitor = OwnedVisitor
    needs = (BAGS,)
    # the call graph, for the process; the names bound to get_context()
    requires = ("calls", "classes", "records", BINDINGS)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        # `.override(`: an override call or a wrapper's body (a docstring naming
        # `override(**kw)` is no reason to parse a file); wrappers' callers follow
        return {".override(", "getattr(self,"}

    def more_tokens(self, program: Program) -> set[str]:
        m = Model(program)  # not memoised: the facts grow each round
        # a wrapper's callers, and the module of a constant an answer names
        return {w.rpartition(".")[2] for w in m.wrappers} | {f"module:{x}" for x in m.wanted}

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        roles = class_process(program, m.managers).roles if m.owned else frozenset()
        # a runtime with no manager: said here, not on every run
        note = {} if m.owned else {"note": NOTE}
        return {
            "manager-owned fields": {k: sorted(set(v)) for k, v in sorted(m.owned.items())},
            "override wrappers": sorted(m.wrappers),
            "manager roles": sorted(roles),
            **note,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        if not m.owned:
            return
        g = call_graph(program)
        process = class_process(program, m.managers)
        short_wrappers = {w.rpartition(".")[2] for w in m.wrappers}
        for path, _, f in m.files:
            for c in f.calls:
                owned = [x for x in c.fields if x in m.owned]
                if not owned:
                    continue
                if c.kind == "context":
                    via = "get_context().override"
                elif c.kind == "self" and c.name in short_wrappers and c.cls:
                    # on the class, or (a mixin's `self`) on the manager it is mixed into
                    owners = [c.cls, *(x for x in m.managers if c.cls in g.mro(x))]
                    if not {q for o in owners for q in g.method(o, c.name)} & m.wrappers:
                        continue
                    via = c.name
                elif c.kind == "name" and c.resolved in m.wrappers:
                    via = c.name
                else:
                    continue
                in_manager = c.cls in process.classes
                if not in_manager and c.fn not in process.only:
                    continue
                where = (
                    f"a method of {(c.cls or '').rpartition('.')[2]}"
                    if in_manager
                    else f"reached only under role {', '.join(sorted(process.roles))}"
                )
                owner = m.owned[owned[0]][0]
                yield RawFinding(
                    ID,
                    path,
                    c.site.scope,
                    c.site.snippet,
                    c.site.span,
                    f"`{via}({', '.join(f'{x}=...' for x in owned)})` in the manager's "
                    f"process records a process-wide change no other process sees: "
                    f"{', '.join(owned)} is answered off the manager ({owner}); set it on "
                    "the manager, and let each process that reloads record its own",
                    f"where: {where}\nmanager-owned fields: "
                    + ", ".join(
                        f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(m.owned.items())
                    ),
                    data=field_data(program.vocab, owned[0]),
                )


RULE = ManagerOwnedOverride()
