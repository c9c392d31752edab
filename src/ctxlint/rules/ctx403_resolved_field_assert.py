"""CTX403 resolved-field-assert: a test asserting a field that resolution decides, off
the record, after resolution ran: the field is the operator's raw input.

Everything is derived from the code:

- **test code**: pytest's file conventions plus the configured `test-roots`
  (program.test_code, as CTX402 decides it);
- the **resolved fields**: the declarable whitelist, fields declared
  `Arg(..., resolvable=True)` or `metadata={"resolvable": True}` on the record
  class, its bases or the field classes (program.resolvable, as CTX105 reads it);
- **resolution**: the declaration function the pipeline derives
  (program.resolution); the record's construction resolves when its
  `__post_init__` reaches it, a method call on the record or a call handing it
  the record resolves when the callee reaches it;
- the **reader of the decision**: a module-level function that reads the
  declaration stash off its first parameter and is neither a view nor a
  declarer (SGLang's `resolution_result(server_args, field)`).

In a test function, `x = Record(...)` followed (at or after resolution) by an
assertion on `x.field` (`assert`, or a `self.assert*(...)` argument) is
reported for a resolved field, with the reader as the fix. With no declaration
function, no resolved field or no reader, the rule reports itself partial: a
fix it cannot name is not offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.resolution import KEY, resolution
from ctxlint.program.resolved_asserts import AssertVisitor, resolved_asserts
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION

ID = "CTX403"
NO_DECLARATION = "no declaration function derived: nothing is checked"


class ResolvedFieldAssert(Rule):
    id = ID
    name = "resolved-field-assert"
    summary = (
        "A test asserting a resolved field off the record after resolution: the field is "
        "the raw input; the decision is read with the resolution reader"
    )
    visitor = AssertVisitor
    needs = (BAGS,)
    requires = ("calls", "classes", KEY, BINDINGS)  # BINDINGS: the names holding a new record
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {f"module:{m}" for m in modules} | {vocab.record_name, "publish"}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        m = resolved_asserts(program)
        # a runtime with no resolution: said here, not on every run
        note = {} if m.res.declaration else {"note": NO_DECLARATION}
        return {
            "declaration function": m.res.declaration or "(none)",
            "construction resolves": m.constructs,
            "resolved fields": len(m.resolved),
            "reader of the decision": m.reader[0] if m.reader else "(none)",
            **note,
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets or sets.get("declaration function") == "(none)":
            return None  # disabled (said apart), or no resolution (the sets' note)
        if not sets.get("resolved fields"):
            return (
                "no resolved field derived (no `resolvable=True` declaration): nothing is checked"
            )
        if sets.get("reader of the decision") == "(none)":
            return (
                "no reader of the decision derived (a function reading the declaration stash "
                "off its first parameter): no fix to name, nothing is checked"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = resolved_asserts(program)
        if not (m.res.declaration and m.resolved and m.reader):
            return
        resolved = set(m.resolved)
        reader = m.reader[0].rpartition(".")[2]
        for path, e, since in m.after_resolution(program):
            if e.field in resolved and e.site:
                yield RawFinding(
                    ID,
                    path,
                    e.site.scope,
                    e.site.snippet,
                    e.site.span,
                    f"`{e.local}.{e.field}` is the raw input, not what resolution "
                    f'decided: assert `{reader}({e.local}, "{e.field}")` '
                    f"({m.reader[0].rpartition('.')[0]})",
                    "resolution ran at line "
                    f"{since}; a case whose point is that the record stayed pristine "
                    "asserts the field and says so (suppress it with its reason)",
                    data=field_data(program.vocab, e.field),
                )


RULE = ResolvedFieldAssert()
