"""CTX601 bag-coverage: the config namespaces, the record and the bag accessors agree.

Bag membership is where a field is declared: one field class per namespace,
each carrying a literal `_NS_PATH`, and the record assembled from them. The
coverage is checked two ways, over sets derived from the code:

- every class in the tree that declares an `_NS_PATH` is one the record
  assembles (else its fields reach neither the record nor any bag);
- no field is declared by two of the record's field classes (a field has one
  namespace, so it has one bag leaf);
- every top-level namespace (of the field classes, the `NS("path")` markers
  and the accessors) has a bag accessor in the runtime module;
- every field of the record has a namespace: while a codebase migrates, the
  fields that have none yet are the migration's to-do list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.declarations import class_namespace, class_statements, field_name
from ctxlint.facts.typed import Site, Span, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import NAMESPACES, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX601"


@dataclass(frozen=True, slots=True)
class DeclaredField:
    name: str
    site: Site  # its declaration, in its class


@dataclass(frozen=True, slots=True)
class NamespaceClass:
    """A class with a literal `_NS_PATH`."""

    qual: str
    scope: str
    namespace: str
    span: Span  # its name
    fields: tuple[DeclaredField, ...]


@dataclass(frozen=True, slots=True)
class CoverageFacts:
    classes: tuple[NamespaceClass, ...]
    record_fields: tuple[DeclaredField, ...]  # of the record and its bases


class NamespaceClassVisitor(FileVisitor):
    """Classes with a literal `_NS_PATH`, and the fields each declares; and the
    fields of the record and its bases (where a field without a namespace is)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.classes: list[NamespaceClass] = []
        self.record_fields: list[DeclaredField] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        ctx = self.ctx
        assert ctx.vocab is not None
        record = f"{ctx.module}.{ctx.qualname}" in ctx.vocab.record_classes
        namespace = class_namespace(node)
        if not record and namespace is None:
            return
        fields = tuple(
            DeclaredField(name, site(ctx, small))
            for small in class_statements(node)
            if (name := field_name(small, ctx.module_node)) is not None
        )
        if record:
            self.record_fields += fields
        if namespace is None:
            return
        qual = f"{ctx.module}.{ctx.qualname}"
        span = ctx.anchor(node.name)
        self.classes.append(NamespaceClass(qual, ctx.qualname, namespace, span, fields))  # type: ignore[arg-type]

    def finish(self) -> CoverageFacts | None:
        if not (self.classes or self.record_fields):
            return None
        return CoverageFacts(tuple(self.classes), tuple(self.record_fields))


def _facts(program: Program) -> Iterator[tuple[str, str, CoverageFacts]]:
    return program.typed_facts(ID, CoverageFacts)


def _classes(program: Program) -> list[tuple[str, NamespaceClass]]:
    """(path, class facts) of every namespace class, by path and line."""
    out = [(path, c) for path, _, facts in _facts(program) for c in facts.classes]
    return sorted(out, key=lambda pc: (pc[0], pc[1].span))


def _record_fields(program: Program) -> list[tuple[str, DeclaredField]]:
    """(path, field facts) of each record field, at its first declaration in the
    record's MRO (the class the vocabulary took its namespace from)."""
    order = {q: i for i, q in enumerate(program.vocab.record_classes)}
    found = [
        (order.get(f"{module}.{f.site.scope}", len(order)), path, f)
        for path, module, facts in _facts(program)
        for f in facts.record_fields
    ]
    first: dict[str, tuple[str, DeclaredField]] = {}
    for _, path, f in sorted(found, key=lambda t: (t[0], t[1], t[2].site.span)):
        first.setdefault(f.name, (path, f))
    return sorted(first.values(), key=lambda pf: (pf[0], pf[1].site.span))


def _at_class(path: str, c: NamespaceClass, message: str) -> RawFinding:
    """A finding on a namespace class's name."""
    return RawFinding(ID, path, c.scope, f"class {c.scope}", c.span, message)


class BagCoverage(Rule):
    id = ID
    name = "bag-coverage"
    summary = (
        "Every namespace class is assembled into the record, declares fields no other "
        "namespace declares, and has its bag accessor"
    )
    visitor = NamespaceClassVisitor
    needs = (NAMESPACES,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"_NS_PATH"} | {f"module:{q.rpartition('.')[0]}" for q in vocab.record_classes}

    def derive(self, program: Program) -> dict[str, Any]:
        vocab = program.vocab
        accessors: dict[str, list[str]] = {}
        for name, ns in vocab.bag_accessors.items():
            accessors.setdefault(ns, []).append(f"{name}()")
        tops = sorted({ns.split(".")[0] for ns in vocab.namespaces})
        todo = [
            f"{f.name} ({path}:{f.site.span[0]})"
            for path, f in _record_fields(program)
            if not vocab.fields.get(f.name) and not f.name.startswith("_")
        ]
        # the to-do list is shown while a migration has one (a finished one has none)
        return (
            {"record fields without a namespace (the migration's to-do list)": todo} if todo else {}
        ) | {
            "namespace classes": [
                f"{c.qual} ({c.namespace})"
                + ("" if c.qual in vocab.field_classes else ": not assembled")
                for _, c in _classes(program)
            ],
            "namespaces and their accessors": [
                f"{ns}: {', '.join(accessors.get(ns, ['(none)']))}" for ns in tops
            ],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        record = vocab.record_name
        classes = _classes(program)
        assembled = [(p, c) for p, c in classes if c.qual in vocab.field_classes]
        for path, c in classes:
            if c.qual not in vocab.field_classes:
                yield _at_class(
                    path,
                    c,
                    f"namespace class `{c.scope}` (`_NS_PATH = {c.namespace!r}`) is not assembled "
                    f"into the record `{record}`: its fields reach neither the record nor a bag; "
                    f"assemble it where the record's module lists its field classes, or drop it",
                )
        first: dict[str, tuple[str, NamespaceClass]] = {}  # field -> its first declaring class
        for path, c in assembled:
            for f in c.fields:
                if f.name not in first:
                    first[f.name] = (path, c)
                    continue
                other_path, other = first[f.name]
                yield RawFinding(
                    ID,
                    path,
                    c.scope,
                    f.site.snippet,
                    f.site.span,
                    f"field `{f.name}` is declared by namespace `{c.namespace}` here and by "
                    f"`{other.namespace}` in `{other.qual}` ({other_path}): a field has one "
                    "namespace, so one bag leaf; keep one declaration",
                )
        covered = set(vocab.bag_accessors.values())
        reported: set[str] = set()
        for path, c in assembled:
            top = c.namespace.split(".")[0]
            if top in covered or top in reported:
                continue
            reported.add(top)
            yield _at_class(
                path,
                c,
                f"namespace `{top}` has no bag accessor in `{vocab.runtime_module}`: its fields "
                f"cannot be read from a bag; add `def get_{top}()` returning its bag",
            )
        fields = _record_fields(program)
        for path, f in fields:  # namespaces declared by NS("path") markers
            top = (vocab.fields.get(f.name) or "").split(".")[0]
            if not top or top in covered or top in reported:
                continue
            reported.add(top)
            yield RawFinding(
                ID,
                path,
                f.site.scope,
                f.site.snippet,
                f.site.span,
                f"namespace `{top}` (declared here by an NS marker) has no bag accessor in "
                f"`{vocab.runtime_module}`: its fields cannot be read from a bag; add "
                f"`def get_{top}()` returning its bag",
            )
        for path, f in fields:
            if vocab.fields.get(f.name) or f.name.startswith("_"):
                continue  # a private attribute is bookkeeping, not operator input
            yield RawFinding(
                ID,
                path,
                f.site.scope,
                f.site.snippet,
                f.site.span,
                f"field `{f.name}` of `{record}` has no namespace yet: declare its namespace "
                '(move it to a field class with `_NS_PATH`, or mark it `NS("path")`) so '
                "that it gets a bag leaf",
            )


RULE = BagCoverage()
