"""What a declaration names, and what it is held to: the keyword calls shaped
like a declaration (`callee(record, source, name=...)`) that reach the
declaration function, the literal keys a registered model override or a
post-process pass returns (`return {"page_size": 64}`, `dict(page_size=64)`),
the constant tables of declarations (`MODEL_OVERRIDES = {"Arch": {"dtype":
"bfloat16"}}`: a module constant mapping keys to literal field dicts, which the
pipeline reads and declares), the whitelist (the fields declared `resolvable=True`, program.resolvable), and
the functions at most GATE_DEPTH calls below the declaration function that
consult it (name `resolvable`; none: the function checks field names only).
Asked by CTX105 (its facts are kept under its id); `declared_fields`, every
field some declaration names, and `declarable_sites`, where the whitelist
names each, by CTX102 (program.whole_object).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.program.core import Program
from ctxlint.program.reach import Step, Walk, steps
from ctxlint.program.reads import positional
from ctxlint.program.resolution import resolution
from ctxlint.program.resolvable import WORD, ResolvableClasses, whitelist

KEY = "CTX105"  # the rule whose facts these are
GATE_DEPTH = 2  # how deep below the declaration function a whitelist check counts


@dataclass(frozen=True, slots=True)
class Keyword:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class KeywordCall:
    """A call shaped like a declaration: `callee(record, source, name=...)`."""

    callee: str
    keywords: tuple[Keyword, ...]
    scope: str
    snippet: str


@dataclass(frozen=True, slots=True)
class ReturnedKey:
    """A key of a dict a function returns (`return {"page_size": 64}`)."""

    key: str
    span: Span
    snippet: str  # the return statement


@dataclass(frozen=True, slots=True)
class WhitelistFacts:
    classes: dict[str, tuple[str, ...]]  # record/field class -> its resolvable fields
    calls: tuple[KeywordCall, ...]
    returns: dict[str, tuple[ReturnedKey, ...]]  # function -> the keys it returns
    gates: tuple[str, ...]  # functions naming the whitelist
    # module constant (qualified) -> the keys of its literal field dicts, where
    # its value maps keys to dict literals (`MODEL_OVERRIDES`)
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)


class DeclarationWhitelistVisitor(ResolvableClasses):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: list[KeywordCall] = []
        self.returns: dict[str, list[ReturnedKey]] = {}  # function -> returned keys
        self.gates: set[str] = set()  # functions naming the whitelist
        self.tables: dict[str, tuple[str, ...]] = {}  # module constant -> its field keys

    def _fn(self) -> str | None:
        return f"{self.ctx.module}.{self.ctx.qualname}" if self.ctx.in_function() else None

    def visit_Name(self, node: cst.Name) -> None:
        if WORD in node.value.split("_"):
            fn = self._fn()
            if fn is not None:
                self.gates.add(fn)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if string_value(node) == WORD:
            fn = self._fn()
            if fn is not None:
                self.gates.add(fn)

    def visit_Call(self, node: cst.Call) -> None:
        keywords = [a for a in node.args if a.keyword is not None]
        if not keywords or len(positional(node)) < 2:
            return  # the declaration's shape: (record, source, **fields)
        callee = self.ctx.resolve(node.func)
        if callee is None:
            return
        named = tuple(Keyword(a.keyword.value, self.ctx.anchor(a.keyword)) for a in keywords)  # type: ignore[union-attr, arg-type]
        self.calls.append(KeywordCall(callee, named, self.ctx.qualname, self.ctx.snippet(node)))

    def visit_Return(self, node: cst.Return) -> None:
        fn = self._fn()
        value = node.value
        if fn is None or value is None:
            return
        keys: list[tuple[str, cst.CSTNode]] = []
        if isinstance(value, cst.Dict):
            for e in value.elements:
                key = string_value(e.key) if isinstance(e, cst.DictElement) else None
                if key is not None:
                    keys.append((key, e.key))  # type: ignore[union-attr]
        elif (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value == "dict"
        ):
            keys = [(a.keyword.value, a.keyword) for a in value.args if a.keyword is not None]
        if keys:
            self.returns.setdefault(fn, []).extend(
                ReturnedKey(k, self.ctx.anchor(n), self.ctx.snippet(node))  # type: ignore[arg-type]
                for k, n in keys
            )

    # -- constant tables of declarations: `NAME = {key: {"field": value}, ...}`
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._table(node.targets[0].target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._table(node.target, node.value)

    def _table(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if self.ctx.scope.kind != "module" or not isinstance(target, cst.Name):
            return
        keys = _field_dict_keys(value)
        if keys:
            self.tables[f"{self.ctx.module}.{target.value}"] = keys

    def finish(self) -> WhitelistFacts | None:
        if not (self.resolvable or self.calls or self.returns or self.gates or self.tables):
            return None
        return WhitelistFacts(
            {q: tuple(names) for q, names in self.resolvable.items()},
            tuple(self.calls),
            {fn: tuple(keys) for fn, keys in self.returns.items()},
            tuple(sorted(self.gates)),
            self.tables,
        )


def _field_dict_keys(value: cst.BaseExpression) -> tuple[str, ...]:
    """The string keys of the dict literals a dict literal maps to, where every
    value is one (`{"Arch": {"dtype": "bfloat16"}}`); () for any other shape."""
    if not isinstance(value, cst.Dict) or not value.elements:
        return ()
    keys: list[str] = []
    for e in value.elements:
        if not isinstance(e, cst.DictElement) or not isinstance(e.value, cst.Dict):
            return ()
        for inner in e.value.elements:
            key = string_value(inner.key) if isinstance(inner, cst.DictElement) else None
            if key is None:
                return ()
            keys.append(key)
    return tuple(sorted(set(keys)))


def _facts(program: Program) -> Iterator[tuple[str, str, WhitelistFacts]]:
    return program.typed_facts(KEY, WhitelistFacts)


def declarable(program: Program) -> dict[str, str]:
    """Resolvable field -> the class declaring it, over the record and its field classes."""
    return whitelist(facts.classes for _, _, facts in _facts(program))


def declarable_sites(program: Program) -> dict[str, str]:
    """Resolvable field -> where the whitelist names it ("path Class
    (resolvable=True)", the first file's by path, as `declarable`)."""
    out: dict[str, str] = {}
    for path, _, facts in _facts(program):  # by path
        for q, names in facts.classes.items():
            for n in names:
                out.setdefault(n, f"{path} {q.rpartition('.')[2]} ({WORD}=True)")
    return out


def gated(program: Program) -> list[str]:
    """The functions at most GATE_DEPTH calls below the declaration function that
    name the whitelist (empty: the declaration function checks field names only)."""
    res = resolution(program)
    if res.declaration is None:
        return []
    gates = {q for _, _, facts in _facts(program) for q in facts.gates}
    g = res.graph

    def near(q: str) -> Iterable[Step]:  # the declaration function's callees, GATE_DEPTH deep
        return steps(g, q) if q in g.funcs and len(walk.path(q)) <= GATE_DEPTH else ()

    walk = Walk(g, steps=near)
    walk.seed(res.declaration)
    return sorted(set(walk.run()) & gates)


def declarations(program: Program) -> Iterator[tuple[str, KeywordCall]]:
    """(path, call) of each keyword call that may run the declaration function."""
    res = resolution(program)
    if res.declaration is None:
        return
    for path, _, facts in _facts(program):
        for c in facts.calls:
            if res.declaration in res.graph.resolve_global(c.callee):
                yield path, c


def returned_keys(program: Program) -> Iterator[tuple[str, str, bool, ReturnedKey]]:
    """(path, function scope, whether it is a pass, key) of each literal key a
    registered override or a pass returns."""
    res = resolution(program)
    returning = res.registered | res.passes
    for path, module, facts in _facts(program):
        for fn, keys in sorted(facts.returns.items()):
            if fn in returning:
                for k in keys:
                    yield path, fn[len(module) + 1 :], fn in res.passes, k


def declared_fields(program: Program) -> dict[str, list[str]]:
    """Record field -> where a declaration names it ("path:line", sorted): a
    keyword of a call that may run the declaration function, a key a registered
    override or a pass returns, or a key of a constant table of declarations
    (`MODEL_OVERRIDES`) that a pipeline function references."""
    fields = set(program.vocab.fields)
    out: dict[str, set[str]] = {}

    def add(name: str, where: str) -> None:
        if name in fields:
            out.setdefault(name, set()).add(where)

    for path, c in declarations(program):
        for k in c.keywords:
            add(k.name, f"{path}:{k.span[0]}")
    for path, _, _, k in returned_keys(program):
        add(k.key, f"{path}:{k.span[0]}")
    res = resolution(program)
    g = res.graph
    referenced = {r for q in res.pipeline for r in g.funcs[q].refs}
    for path, _, facts in _facts(program):
        for const, keys in facts.tables.items():
            if const in referenced:
                for k in keys:
                    add(k, f"{path} {const.rpartition('.')[2]}")
    return {name: sorted(where) for name, where in sorted(out.items())}
