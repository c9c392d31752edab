"""Manager-owned fields: which record fields a class answers off its own
instance, and where a config override of fields is made, directly or through a
wrapper.

Per file: the module constants of string literals (`FIELDS = (...)`), each
method answering `getattr(self, name)` for the names of one (`for name in C:`
or `if name in C:` around it), the calls naming record fields as keywords
(the context's `get_context().override(...)`, or a call on `self` or by name
that may be a wrapper's), and the wrappers: functions handing their own
`**fields` to the context's override. `Model` joins them: the owned fields with
the classes answering them (the managers), and `overrides` the calls that are
an override of owned fields, with the name they are made through. Asked by
CTX303, whose facts these are; `Model.overridden`, every field a post-publish
override names, by CTX102 (program.handed_reads).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program

ID = "CTX303"  # the rule whose facts these are
CONTEXT = "get_context"


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
    ("context"), or a call that may be a wrapper's, on self, by name or on
    another object ("other")."""

    fn: str
    cls: str | None
    kind: Literal["context", "self", "name", "other"]
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
        kind: Literal["context", "self", "name", "other"]
        if to_context:
            kind = "context"
        elif receiver is None:
            kind = "name"
        elif isinstance(receiver, cst.Name) and receiver.value == self.ctx.scope.self_name:
            kind = "self"
        else:
            kind = "other"  # another object's method (`tokenizer_manager.record_config_updates`)
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

    def overrides(self, program: Program) -> Iterator[tuple[str, FieldsCall, list[str], str]]:
        """(path, call, its owned fields, the name it overrides through) for each
        call that overrides manager-owned fields: the context's override, or a
        wrapper called by name or on `self` (on the class, or, a mixin's `self`,
        on the manager it is mixed into)."""
        g = call_graph(program)
        short_wrappers = {w.rpartition(".")[2] for w in self.wrappers}
        for path, _, f in self.files:
            for c in f.calls:
                owned = [x for x in c.fields if x in self.owned]
                if not owned:
                    continue
                if c.kind == "context":
                    via = "get_context().override"
                elif c.kind == "self" and c.name in short_wrappers and c.cls:
                    owners = [c.cls, *(x for x in self.managers if c.cls in g.mro(x))]
                    if not {q for o in owners for q in g.method(o, c.name)} & self.wrappers:
                        continue
                    via = c.name
                elif c.kind == "name" and c.resolved in self.wrappers:
                    via = c.name
                else:
                    continue
                yield path, c, owned, via

    def overridden(self) -> dict[str, list[str]]:
        """Record field -> where a post-publish override names it ("path:line",
        sorted): a keyword of the context's `override(...)`, or of a call of a
        wrapper handing its `**fields` to it (`record_config_updates`), by name
        (what it resolves to) or as a method (by its name: on `self` or on
        another object, such as `tokenizer_manager.record_config_updates(...)`)."""
        out: dict[str, set[str]] = {}
        for path, c in self._override_calls():
            for name in c.fields:
                out.setdefault(name, set()).add(f"{path}:{c.site.span[0]}")
        return {name: sorted(where) for name, where in sorted(out.items())}

    def overriders(self) -> dict[str, frozenset[str]]:
        """Record field -> the functions (qualified) making an override that names
        it, as `overridden` counts them (CTX102 asks which process runs each)."""
        out: dict[str, set[str]] = {}
        for _, c in self._override_calls():
            for name in c.fields:
                out.setdefault(name, set()).add(c.fn)
        return {name: frozenset(fns) for name, fns in out.items()}

    def _override_calls(self) -> Iterator[tuple[str, FieldsCall]]:
        short_wrappers = {w.rpartition(".")[2] for w in self.wrappers}
        for path, _, f in self.files:
            for c in f.calls:
                if c.kind == "name":
                    counts = c.resolved in self.wrappers
                else:
                    counts = c.kind == "context" or c.name in short_wrappers
                if counts:
                    yield path, c


def manager_model(program: Program) -> Model:
    """The model, once a run (a prefilter round builds its own: the facts grow)."""
    return program.memo(f"{ID}:model", lambda: Model(program))
