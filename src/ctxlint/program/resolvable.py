"""The declarable whitelist, as a class body declares it: the fields marked
`resolvable=True`.

A field is on the whitelist when its declaration says `resolvable=True` (a
keyword of any call in its annotation or value: `Arg(..., resolvable=True)`,
`Annotated[T, arg(..., resolvable=True)]`) or `{"resolvable": True}` (a
`field(metadata=...)` dict). CTX105 holds returned keys to it and CTX403 reads
the fields resolution decides from it: their visitors inherit
`ResolvableClasses` (the record's classes declaring such fields, per file) and
their checks ask `whitelist`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.declarations import class_statements, field_name
from ctxlint.facts.visitor import FileVisitor

WORD = "resolvable"


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def declared_resolvable(small: cst.AnnAssign) -> bool:
    """The field's declaration says `resolvable=True` or `{"resolvable": True}`."""
    stack: list[cst.CSTNode] = [small]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Arg) and node.keyword is not None:
            if node.keyword.value == WORD and _is_true(node.value):
                return True
        if isinstance(node, cst.DictElement) and string_value(node.key) == WORD:
            if _is_true(node.value):
                return True
        stack.extend(node.children)
    return False


def resolvable_fields(cls: cst.ClassDef, module_node: cst.Module) -> list[str]:
    """The fields this class body declares resolvable, in order (no ClassVar)."""
    return [
        name
        for small in class_statements(cls)
        if isinstance(small, cst.AnnAssign)
        and (name := field_name(small, module_node)) is not None
        and declared_resolvable(small)
    ]


class ResolvableClasses(FileVisitor):
    """Per file: each of the record's classes (the record class, its record
    classes, its field classes) declaring resolvable fields -> those fields."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self._classes = {vocab.record_class, *vocab.record_classes, *vocab.field_classes}
        self.resolvable: dict[str, list[str]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        q = f"{self.ctx.module}.{self.ctx.qualname}"
        if q in self._classes and (marked := resolvable_fields(node, self.ctx.module_node)):
            self.resolvable[q] = marked


def whitelist(declared: Iterable[Mapping[str, Sequence[str]]]) -> dict[str, str]:
    """Resolvable field -> the class declaring it (the first file's, by path), from
    each file's `ResolvableClasses.resolvable`."""
    out: dict[str, str] = {}
    for classes in declared:
        for q, names in classes.items():
            for n in names:
                out.setdefault(n, q)
    return out
