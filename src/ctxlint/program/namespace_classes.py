"""Which classes declare a namespace, and where each field of the record is
declared: every class with a literal `_NS_PATH` (its namespace, and the fields
it declares), and the record's fields, each at its first declaration in the
record's MRO (the class the vocabulary took its namespace from). The visitor's
facts are kept under CTX601's id; CTX601 asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.declarations import class_namespace, class_statements, field_name
from ctxlint.facts.typed import Site, Span, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.core import Program

KEY = "CTX601"  # the rule whose facts these are


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


class NamespaceCoverage:
    """The namespace classes (by path and line), those the record assembles, and
    the record's fields, each at its first declaration in the record's MRO (the
    class the vocabulary took its namespace from)."""

    def __init__(self, program: Program) -> None:
        vocab = self.vocab = program.vocab
        files = list(program.typed_facts(KEY, CoverageFacts))
        found = [(path, c) for path, _, facts in files for c in facts.classes]
        self.classes = sorted(found, key=lambda pc: (pc[0], pc[1].span))
        self.assembled = [(p, c) for p, c in self.classes if c.qual in vocab.field_classes]
        order = {q: i for i, q in enumerate(vocab.record_classes)}
        declared = [
            (order.get(f"{module}.{f.site.scope}", len(order)), path, f)
            for path, module, facts in files
            for f in facts.record_fields
        ]
        first: dict[str, tuple[str, DeclaredField]] = {}
        for _, path, f in sorted(declared, key=lambda t: (t[0], t[1], t[2].site.span)):
            first.setdefault(f.name, (path, f))
        self.record_fields = sorted(first.values(), key=lambda pf: (pf[0], pf[1].site.span))

    def unnamespaced(self) -> list[tuple[str, DeclaredField]]:
        """The record's fields with no namespace yet (the migration's to-do list); a
        private attribute is bookkeeping, not operator input."""
        return [
            (path, f)
            for path, f in self.record_fields
            if not self.vocab.fields.get(f.name) and not f.name.startswith("_")
        ]

    def redeclared(
        self,
    ) -> Iterator[tuple[str, NamespaceClass, DeclaredField, str, NamespaceClass]]:
        """(path, class, field, first path, first class): each field an assembled class
        declares that an earlier one (by path and line) declared first."""
        first: dict[str, tuple[str, NamespaceClass]] = {}  # field -> its first declaring class
        for path, c in self.assembled:
            for f in c.fields:
                if f.name in first:
                    yield (path, c, f, *first[f.name])
                else:
                    first[f.name] = (path, c)

    def accessorless(self) -> Iterator[tuple[str, str, NamespaceClass | DeclaredField]]:
        """(top namespace, path, where it is first declared): each top-level namespace
        with no bag accessor, at its first assembled class, else at the first record
        field an `NS("path")` marker puts in it."""
        covered = set(self.vocab.bag_accessors.values())
        reported: set[str] = set()
        declared: list[tuple[str, str, NamespaceClass | DeclaredField]] = [
            (c.namespace.split(".")[0], path, c) for path, c in self.assembled
        ]
        for path, f in self.record_fields:  # a field with no namespace declares none
            if top := (self.vocab.fields.get(f.name) or "").split(".")[0]:
                declared.append((top, path, f))
        for top, path, where in declared:
            if top not in covered and top not in reported:
                reported.add(top)
                yield top, path, where
