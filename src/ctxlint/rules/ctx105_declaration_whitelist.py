"""CTX105 declaration-whitelist: a declaration names a field that may be declared.

Every name handed to the declaration function (derived, program.resolution:
SGLang's `declare_resolution(server_args, source, **fields)`) must be a field of
the record: the function refuses anything else at its slot, which is a crash
only when that path runs. The keys a registered model-override callable or a
post-process pass returns (`return {"page_size": 64}`) must name a field on the
whitelist, the fields whose declaration says `resolvable=True` (`Arg(...,
resolvable=True)`, `arg(..., resolvable=True)` or `field(metadata={"resolvable":
True})` in the record or its field classes): the gate validates those returns
against it before publish. A direct declaration is held to the whitelist too
when the declaration function itself consults it (it, or what it calls two
deep, names `resolvable`): ctxrt does, SGLang 0.5.23 checks field names only.

The whitelist, the declaration function, the registered callables and the
passes are all derived; one of them missing where the rule needs it is a
partial run with the reason, never a silent pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.reads import positional
from ctxlint.program.resolution import resolution
from ctxlint.program.resolvable import WORD, resolvable_fields
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX105"
GATE_DEPTH = 2  # how deep below the declaration function a whitelist check counts
NOTE = "no declaration function derived (no stash a view reads): no declaration is checked"


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


class DeclarationWhitelistVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.record_classes = {vocab.record_class, *vocab.record_classes, *vocab.field_classes}
        self.classes: dict[str, list[str]] = {}  # record/field class -> resolvable fields
        self.calls: list[KeywordCall] = []
        self.returns: dict[str, list[ReturnedKey]] = {}  # function -> returned keys
        self.gates: set[str] = set()  # functions naming the whitelist

    def _fn(self) -> str | None:
        return f"{self.ctx.module}.{self.ctx.qualname}" if self.ctx.in_function() else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        q = f"{self.ctx.module}.{self.ctx.qualname}"
        if q not in self.record_classes:
            return
        self.classes[q] = resolvable_fields(node, self.ctx.module_node)

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

    def finish(self) -> WhitelistFacts | None:
        if not (self.classes or self.calls or self.returns or self.gates):
            return None
        return WhitelistFacts(
            {q: tuple(names) for q, names in self.classes.items()},
            tuple(self.calls),
            {fn: tuple(keys) for fn, keys in self.returns.items()},
            tuple(sorted(self.gates)),
        )


def _facts(program: Program) -> Iterator[tuple[str, str, WhitelistFacts]]:
    return program.typed_facts(ID, WhitelistFacts)


def _whitelist(program: Program) -> dict[str, str]:
    """Resolvable field -> the class declaring it, over the record and its field classes."""
    out: dict[str, str] = {}
    for _, _, facts in _facts(program):
        for q, names in facts.classes.items():
            for n in names:
                out.setdefault(n, q)
    return out


def _gated(program: Program) -> list[str]:
    """The functions at most GATE_DEPTH calls below the declaration function that
    name the whitelist (empty: the declaration function checks field names only)."""
    res = resolution(program)
    if res.declaration is None:
        return []
    gates = {q for _, _, facts in _facts(program) for q in facts.gates}
    g = res.graph
    seen, layer = {res.declaration}, [res.declaration]
    for _ in range(GATE_DEPTH):
        nxt = [t for q in layer for ts in g.edges.get(q, ()) for t in ts if t not in seen]
        seen.update(nxt)
        layer = nxt
    return sorted(seen & gates)


class DeclarationWhitelist(Rule):
    id = ID
    name = "declaration-whitelist"
    summary = (
        "A declaration names a record field; an override's or pass's returned keys "
        "name a field declared resolvable"
    )
    visitor = DeclarationWhitelistVisitor
    requires = ("calls", "classes", "resolution")  # resolution() reads the class index too

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {f"module:{m}" for m in modules} | {WORD}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        out = res.wanted_tokens() | {q.rpartition(".")[2] for q in res.registrars}
        if res.declaration is not None:
            out.add(res.declaration.rpartition(".")[2])
            out.add(f"module:{res.graph.funcs[res.declaration].module}")
        return out

    def derive(self, program: Program) -> dict[str, Any]:
        res = resolution(program)
        return {
            "declaration function": [res.declaration] if res.declaration else [],
            "whitelist (resolvable fields)": sorted(_whitelist(program)),
            "whitelist checks below the declaration function": _gated(program),
            "registered callables and passes": sorted(res.registered | res.passes),
            **({"note": NOTE} if res.declaration is None else {}),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets.get("declaration function") and sets.get("registered callables and passes"):
            return "no declaration function derived: direct declarations are not checked"
        if not sets.get("whitelist (resolvable fields)") and (
            sets.get("registered callables and passes")
            or sets.get("whitelist checks below the declaration function")
        ):
            return (
                "no field declares resolvable=True: the whitelist is empty, so returned "
                "override and pass keys are checked against the record's fields only"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        res = resolution(program)
        vocab = program.vocab
        fields = set(vocab.fields)
        whitelist = _whitelist(program)
        record = vocab.record_name

        def problem(name: str, gated: bool) -> str | None:
            if name not in fields:
                close = difflib.get_close_matches(name, sorted(fields), n=1, cutoff=0.8)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                return f"`{name}` is not a {record} field{hint}"
            if gated and whitelist and name not in whitelist:
                return (
                    f"`{name}` is a {record} field not declared resolvable (`resolvable=True` "
                    "on its declaration): the whitelist refuses it"
                )
            return None

        decl = res.declaration
        gated = bool(_gated(program))
        short = decl.rpartition(".")[2] if decl else ""
        for path, _, facts in _facts(program):
            if decl is None:
                break
            for c in facts.calls:
                if decl not in res.graph.resolve_global(c.callee):
                    continue
                for k in c.keywords:
                    why = problem(k.name, gated)
                    if why is None:
                        continue
                    yield RawFinding(
                        ID,
                        path,
                        c.scope,
                        c.snippet,
                        k.span,
                        f"declaration `{short}(..., {k.name}=...)`: {why}; it is refused at "
                        "its slot when this path runs",
                        data=field_data(vocab, k.name),
                    )
        returning = res.registered | res.passes
        for path, module, facts in _facts(program):
            for fn, keys in sorted(facts.returns.items()):
                if fn not in returning:
                    continue
                what = "pass" if fn in res.passes else "registered override"
                scope = fn[len(module) + 1 :]
                for k in keys:
                    why = problem(k.key, True)
                    if why is None:
                        continue
                    yield RawFinding(
                        ID,
                        path,
                        scope,
                        k.snippet,
                        k.span,
                        f"{what} `{scope}` returns `{k.key}`: {why}; the gate refuses the "
                        "declaration before publish",
                        data=field_data(vocab, k.key),
                    )


RULE = DeclarationWhitelist()
