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

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import NAMESPACES, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.namespace_classes import (
    NamespaceClass,
    NamespaceClassVisitor,
    NamespaceCoverage,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX601"


def _at_class(path: str, c: NamespaceClass, message: str, details: str = "") -> RawFinding:
    """A finding on a namespace class's name."""
    return RawFinding(ID, path, c.scope, f"class {c.scope}", c.span, message, details)


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

    def _model(self, program: Program) -> NamespaceCoverage:
        return program.memo(f"{ID}:model", lambda: NamespaceCoverage(program))

    def derive(self, program: Program) -> dict[str, Any]:
        vocab, model = program.vocab, self._model(program)
        accessors: dict[str, list[str]] = {}
        for name, ns in vocab.bag_accessors.items():
            accessors.setdefault(ns, []).append(f"{name}()")
        tops = sorted({ns.split(".")[0] for ns in vocab.namespaces})
        todo = [f"{f.name} ({path}:{f.site.span[0]})" for path, f in model.unnamespaced()]
        # the to-do list is shown while a migration has one (a finished one has none)
        return (
            {"record fields without a namespace (the migration's to-do list)": todo} if todo else {}
        ) | {
            "namespace classes": [
                f"{c.qual} ({c.namespace})"
                + ("" if c.qual in vocab.field_classes else ": not assembled")
                for _, c in model.classes
            ],
            "namespaces and their accessors": [
                f"{ns}: {', '.join(accessors.get(ns, ['(none)']))}" for ns in tops
            ],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab, model = program.vocab, self._model(program)
        record = vocab.record_name
        for path, c in model.classes:
            if c.qual not in vocab.field_classes:
                yield _at_class(
                    path,
                    c,
                    f"namespace class `{c.scope}` (`_NS_PATH = {c.namespace!r}`) is not assembled "
                    f"into the record `{record}`: its fields reach neither the record nor a bag",
                    "assemble it where the record's module lists its field classes, or drop it",
                )
        for path, c, f, other_path, other in model.redeclared():
            yield RawFinding(
                ID,
                path,
                c.scope,
                f.site.snippet,
                f.site.span,
                f"field `{f.name}` is declared by namespace `{c.namespace}` here and by "
                f"`{other.namespace}`: a field has one namespace, so one bag leaf; keep one",
                f"the other declaration: `{other.qual}` ({other_path})",
            )
        for top, path, where in model.accessorless():
            missing = (
                f"has no bag accessor in `{vocab.runtime_module}`: its fields cannot be read "
                f"from a bag; add `def get_{top}()` returning its bag"
            )
            if isinstance(where, NamespaceClass):
                yield _at_class(path, where, f"namespace `{top}` {missing}")
            else:  # a namespace declared by NS("path") markers
                yield RawFinding(
                    ID,
                    path,
                    where.site.scope,
                    where.site.snippet,
                    where.site.span,
                    f"namespace `{top}` (declared here by an NS marker) {missing}",
                )
        for path, f in model.unnamespaced():
            yield RawFinding(
                ID,
                path,
                f.site.scope,
                f.site.snippet,
                f.site.span,
                f"field `{f.name}` of `{record}` has no namespace yet: declare its namespace "
                "so that it gets a bag leaf",
                'move it to a field class with `_NS_PATH`, or mark it `NS("path")`',
            )


RULE = BagCoverage()
