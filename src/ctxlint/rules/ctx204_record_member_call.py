"""CTX204 record-member-call: a method called on a record is one the record defines.

`server_args.method(...)` on a record instance must name a member of the record
class or of a class it inherits from (the class index's C3 lineage): a method,
a property, a field or a class attribute. A removed `override`/`derive`, or a
typo, is an `AttributeError` only when that path runs. Record instances are the
ones CTX201/CTX202 know (records' one holder classifier), plus `self` inside the
record class. Dunder names are the object protocol's, never reported. When the
lineage has an ancestor outside the parsed tree (other than `object`) its
members are unknown, and the rule says so (partial) instead of passing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.record_member_calls import (
    REQUIRES,
    RecordMemberCallVisitor,
    called_members,
    member_calls,
    wanted_tokens,
)
from ctxlint.program.rule import RawFinding, Rule, finding_at

ID = "CTX204"


class RecordMemberCall(Rule):
    id = ID
    name = "record-member-call"
    summary = "A method called on a record is one the record class (or a base) defines"
    visitor = RecordMemberCallVisitor
    requires = REQUIRES

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name, *(f"module:{m}" for m in modules)}

    def more_tokens(self, program: Program) -> set[str]:
        return wanted_tokens(program)

    def derive(self, program: Program) -> dict[str, Any]:
        m = called_members(program)
        return {
            "record lineage": m.lineage,
            "record members (methods, properties, class attributes)": sorted(m.members),
            "ancestors outside the tree": m.unknown,
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        unknown = sets.get("ancestors outside the tree")
        if unknown:
            return (
                f"the record inherits from {', '.join(unknown)}, outside the parsed tree: "
                "calls of names the tree does not define are not checked"
            )
        if sets.get("record lineage") == []:
            return "the record class is not in the parsed tree: no call is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = called_members(program)
        if not m.lineage or m.unknown:
            return
        record = program.vocab.record_name
        fields = set(program.vocab.fields)
        known = m.members | fields
        public = sorted(n for n in known if not n.startswith("_"))
        for path, c in member_calls(program):
            name = c.method
            if name in known:
                continue
            close = difflib.get_close_matches(name, public, n=1, cutoff=0.8)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            yield finding_at(
                ID,
                path,
                c.site,
                f"`.{name}()` called on a record: {record} (with its bases) defines no "
                f"`{name}`, so this raises AttributeError when the path runs{hint}",
                details="record lineage: " + " -> ".join(m.lineage),
                member=name,
            )


RULE = RecordMemberCall()
