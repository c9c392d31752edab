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


def _facts(program: Program) -> Iterator[tuple[str, str, CoverageFacts]]:
    return program.typed_facts(KEY, CoverageFacts)


def namespace_classes(program: Program) -> list[tuple[str, NamespaceClass]]:
    """(path, class facts) of every namespace class, by path and line."""
    out = [(path, c) for path, _, facts in _facts(program) for c in facts.classes]
    return sorted(out, key=lambda pc: (pc[0], pc[1].span))


def record_fields(program: Program) -> list[tuple[str, DeclaredField]]:
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
