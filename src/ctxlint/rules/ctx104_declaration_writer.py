"""CTX104 declaration-writer: the declaration stash has one writer.

Everything that decides configuration goes through the declaration function
(derived, program.resolution: the function appending to the stash a view reads,
through its parameter; SGLang's `declare_resolution`). Reported:

- a write to the stash anywhere else (an append, extend or `+=` on it, or an
  assignment of anything but a fresh or copied stash); where the writer is
  itself a copy or edit method of the record (`override`, `derive`,
  `replace_resolved`: CTX202's entry points), the remedy is CTX202's (remove
  it, change live config with `get_context().override`), not a declaration;
- a declaration made on the published record: a call reaching the declaration
  function after `publish` in a function that publishes (directly or through a
  helper of its module). The stash is projected at publish and never again, so
  the declaration is a silent no-op (CTX301's mirror image). A call reaching it
  only through the pass runner is not reported: a pass returning nothing is a
  validation, legal on the published record;
- a registered model-override callable or a pass handed to the pass runner that
  assigns a record field (`cfg.x = ...`, `setattr(cfg, "x", ...)`) instead of
  returning its declaration.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.declaration_writes import (
    assigning_overrides,
    declaring,
    late_declarations,
    stray_stash_writes,
)
from ctxlint.program.record_copies import COPY_METHODS, record_lineage
from ctxlint.program.resolution import KEY, resolution, start_tokens
from ctxlint.program.rule import RawFinding, Rule, field_data, finding_at

ID = "CTX104"
NOTE = "no declaration function derived (no stash a view reads): nothing is checked"


class DeclarationWriter(Rule):
    id = ID
    name = "declaration-writer"
    summary = (
        "The declaration function is the stash's one writer; nothing declares on the "
        "published record; overrides and passes return their declarations"
    )
    # the stash is what publish projects into the bags: a codebase with no bags
    # yet has no declaration stash to guard
    needs = (BAGS,)
    requires = ("calls", "classes", KEY)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return start_tokens(vocab) | {"publish"}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        res = resolution(program)
        return {
            "declaration function": [res.declaration] if res.declaration else [],
            "record methods resolving": res.entries,
            "stash slots": sorted(res.stash),
            "stash appenders (through a parameter)": res.appenders,
            "pass runners": sorted(res.pass_runners),
            "foreign-default wrappers": sorted(res.wrappers),
            "registered callables": sorted(res.registered),
            "passes handed to a pass runner": sorted(res.passes),
            "functions reaching the declaration (not through a pass runner)": len(declaring(res)),
            **({"note": NOTE} if res.declaration is None else {}),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        """Resolution code without a derived writer: nothing is checked (a codebase
        with neither has the note in its sets)."""
        if sets.get("declaration function") == [] and sets.get("record methods resolving"):
            return (
                "no declaration function derived: no function appends, through its "
                "parameter, to a record slot a view reads (no stash), so nothing is checked"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        res = resolution(program)
        if res.declaration is None:
            return
        decl = res.declaration.rpartition(".")[2]
        # the call as this tree's def declares it: a hint that binds where it stands
        call = res.declaration_call() or decl
        lineage = set(record_lineage(program))
        for path, s in stray_stash_writes(program):
            why = f"the declaration stash `{res.slot(s.slot)}` written outside `{decl}`: "
            owner, _, method = (s.fn or "").rpartition(".")
            more = ""
            if method in COPY_METHODS and owner in lineage:
                # the writer is itself an entry point the record may not define
                # (CTX202): declaring through it is no remedy after resolution
                why += f"`{owner.rpartition('.')[2]}.{method}` is an edit entry point the "
                why += "record may not define (CTX202): remove it"
                more = "change live config with get_context().override(source, ...)"
            else:
                why += f"declare through `{call}`, the stash's one writer"
            yield finding_at(ID, path, s.site, why, more)
        for path, w, what in assigning_overrides(program):
            why = f"a {what} assigns `{w.holder}.{w.field}`: return the declaration "
            why += "(`{field: value}`) instead; the runner declares it"
            yield finding_at(ID, path, w.site, why, **field_data(program.vocab, w.field))
        for late in late_declarations(program):
            via = "" if late.via is None else f" (through {late.via})"
            why = f"`{decl}` reached after publish{via}: a silent no-op (the stash is projected "
            why += "at publish and never again); declare before publish"
            more = "or change the live value with get_context().override(...)"
            yield finding_at(ID, late.path, late, why, more)


RULE = DeclarationWriter()
