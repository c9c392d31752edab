"""CTX202 record-copy: the no-copy contract.

A record is never copied-and-edited: resolution reads only its own input, so a
copy re-resolves to the parent's answers (or, marked resolved, arrives without
its memo), its edits are no declaration (published, they bypass resolution),
and a per-process difference travels as a declaration inside the one object. Reported: the record class (or an ancestor) defining `override`,
`derive` or `replace_resolved`; a call of one of those on a record instance or
on the record class; `dataclasses.replace`, `copy.copy`, `copy.deepcopy`,
`copy.replace` and `msgspec.structs.replace` of a record, under any import
spelling. Record instances are the ones CTX201 knows (records' one holder
classifier: seed and aliases, annotated names and attributes, the derived
record-parameter names, new records, copies of any), plus `self` inside the
record class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.declarable import FACTS_READ, declarable_fields
from ctxlint.program.record_conventions import COPY_HELPERS, record_names
from ctxlint.program.record_copies import (
    KEY,
    RecordCopyVisitor,
    copy_entry_points,
    copy_finding,
    record_copies,
    record_lineage,
)
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.program.resolution import resolution
from ctxlint.program.rule import RawFinding, Rule, finding_at

ID = KEY


class RecordCopy(Rule):
    id = ID
    name = "record-copy"
    summary = (
        "A record is never copied-and-edited: no override/derive/replace_resolved on it, "
        "no dataclasses.replace/copy/msgspec.structs.replace of one"
    )
    visitor = RecordCopyVisitor
    # the declaration function the remedy names is the tree's own (resolution)
    requires = ("calls", "classes", "records", RESOLUTION)
    reads_facts = FACTS_READ  # the whitelist (CTX105's facts)
    options: ClassVar[dict[str, Any]] = {COPY_HELPERS: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        # the record's modules too: resolution derives the declaration function from them
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name} | {f"module:{m}" for m in modules}

    def more_tokens(self, program: Program) -> set[str]:
        # record parameter names (calls on them), and the record's ancestors'
        # definitions (an inherited `derive` is defined on the record too)
        ancestors = {f"class {q.rpartition('.')[2]}" for q in record_lineage(program)[1:]}
        res = resolution(program)
        return record_names(program) | ancestors | res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        defined = [f"{q}.{d.name}" for q, _, c in copy_entry_points(program) for d in c.defs]
        return {
            "record lineage": record_lineage(program),
            "copy entry points defined on the record": sorted(defined),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        record = program.vocab.record_name
        can = declarable_fields(program)
        remedy = can.remedy()
        for q, path, c in copy_entry_points(program):
            where = "" if q == program.vocab.record_class else f" (inherited by {record})"
            for d in c.defs:
                yield RawFinding(
                    ID,
                    path,
                    d.site.scope,
                    d.site.snippet,
                    d.site.span,
                    f"`{q.rpartition('.')[2]}.{d.name}` defined on the record{where}: no "
                    f"copy or edit entry point may exist on {record}",
                    f"Remove it. {remedy}",
                )
        for path, module, c in record_copies(program):
            yield finding_at(ID, path, c.site, *copy_finding(program, path, module, c))


RULE = RecordCopy()
