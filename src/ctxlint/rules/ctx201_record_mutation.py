"""CTX201 record-mutation: a write onto a record instance.

The record is the operator's raw input, sealed after resolution; a write
outside the resolution pipeline desyncs it from the bags it was projected into
(and raises at run time under the strict guard, which refuses any attribute,
declared field or not). Instances are the seed and its aliases, names and
attributes annotated with the record class, the names the codebase itself gives
record parameters (derived from annotations), names bound to a new record
(`args = ServerArgs(...)`), and copies of any of these.

A write followed, in the same function and on the same name, by a call of one
of the record's resolution entries (derived: the record's methods that set a
flag its `__setattr__` checks before refusing) happens before resolution: it is
reported as what it is, a write to the operator's input outside the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.declarable import FACTS_READ, declarable_fields
from ctxlint.program.declaration_writes import dropped_after
from ctxlint.program.override_seeds import OverrideSeeds
from ctxlint.program.reads import namespace_hint
from ctxlint.program.record_conventions import COPY_HELPERS, record_convention, record_names
from ctxlint.program.record_writes import (
    RecordWriteVisitor,
    bypasses_guard,
    override_seeds,
    provenance,
    record_writes,
    resolution_entries,
)
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.program.resolution import resolution
from ctxlint.program.rule import RawFinding, Rule
from ctxlint.program.test_code import OPTION, is_test_file, test_roots

ID = "CTX201"


def _not_config(
    program: Program, name: str, slots: dict[str, str], seeds: OverrideSeeds | None
) -> tuple[str, str]:
    """Why a write of a name that is no field (a private memo, a provenance
    note) is wrong, and its remedy: the config remedies do not fit
    (`get_context().override` refuses a non-field and the record's constructor
    takes no such argument). Where the name backs a record property (`_x`
    behind `x`), name it. In a test, where the runtime's test override seeds
    such a slot (`seeds`, only passed there), that call is the remedy."""
    if name in slots:  # the property returns the slot, from no other input
        return f"the record's provenance (its `{slots[name]}` property returns it)", (
            "write it where the record is built, before resolution, or keep it off"
        )
    if seeds is not None and seeds.seeds(name):
        return seeds.remedy(name)
    fix = (
        "get_context().override takes only fields and the record's constructor no such "
        "argument; keep the value off the record"
    )
    prop = name.lstrip("_")
    if prop != name and prop in program.vocab.properties:
        fix += (
            f" (it backs the record's `{prop}` property: give that property the inputs it "
            "is computed from instead of seeding it)"
        )
    return "it is not configuration: keep the value off the record", fix


class RecordMutation(Rule):
    id = ID
    name = "record-mutation"
    summary = "A write onto a record instance outside the resolution pipeline"
    visitor = RecordWriteVisitor
    # the resolution pipeline and its declaration function: a write inside
    # resolution is answered with the declaration this tree declares
    requires = ("records", "calls", "classes", RESOLUTION)
    reads_facts = FACTS_READ  # the whitelist (CTX105's facts)
    options: ClassVar[dict[str, Any]] = {COPY_HELPERS: [], OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name} | {f"module:{m}" for m in modules}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return record_names(program) | res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        convention = record_convention(program)
        return {
            "record parameter names": sorted(convention.names),
            "record parameter names meaning a rival record class": convention.describe(),
            "resolution entries": [
                f"{m} (sets {', '.join(flags)})" for m, flags in resolution_entries(program).items()
            ],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        entries, fields = resolution_entries(program), set(program.vocab.fields)
        res = resolution(program)
        can = declarable_fields(program)
        slots, apart = provenance(program), []
        seeds, roots = override_seeds(program), test_roots(program)
        for path, module, w in record_writes(program):
            if w.field is None:
                what = "write to a record attribute named at run time"
            elif w.field in fields:
                what = f"write to record field `{w.field}`"
            else:
                what = f"write to `{w.field}` on the record (not a declared field)"
            sealed_by = [m for m in w.then if m in entries]
            if w.field in slots and (sealed_by or bypasses_guard(w)):  # cannot raise, nor desync
                apart.append(f"{path}:{w.site.span[0]} {w.site.snippet}")
                continue
            inside = res.entry_reaching(f"{module}.{w.site.scope}")
            # a declaration only of a whitelisted field (program.declarable)
            refused = can.refused([w.field] if w.field in fields else [])
            declare = can.why(refused) if refused else f"declare it with {can.call}"
            # the message says what and why; the remedy (a declaration, an override, a
            # bag leaf) and the resolution entry it is reached from go to the details
            short = "the field is not declared resolvable yet" if refused else declare
            if sealed_by:
                why = f"the operator's input, before .{sealed_by[0]}() resolves it: {short}"
                fix = f"a launcher-stage decision is resolution: {declare}"
            elif inside is not None:
                why = f"inside resolution, where a decision is declared, not written: {short}"
                fix = f"reached from {inside}: {declare}{dropped_after(program, module, w.site)}"
            elif w.field is not None and w.field not in fields:
                test = is_test_file(path, roots)
                why, fix = _not_config(program, w.field, slots, seeds if test else None)
            else:
                why = "read-only after resolution: change it with get_context().override(...)"
                fix = (
                    "change config with get_context().override(source, ...) or pass the "
                    "value as a constructor argument"
                )
            if w.field in fields:  # where its value lives, or the step not yet taken
                fix += f"; {namespace_hint(program.vocab, w.field)}"
            s, msg = w.site, f"{what} ({w.form}): {why}"
            yield RawFinding(ID, path, s.scope, s.snippet, s.span, msg, details=fix)
        key = "provenance writes before resolution or past the guard (no bag: not reported)"
        program.sets.setdefault(ID, {})[key] = apart


RULE = RecordMutation()
