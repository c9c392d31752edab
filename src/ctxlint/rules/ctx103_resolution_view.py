"""CTX103 resolution-view: inside the resolution pipeline, read through a view.

Resolution writes nothing onto the record (a handler declares into the stash):
in the pipeline a direct field read answers with the raw input, not with what
resolution has decided so far. The pipeline is derived (program.resolution): the
record's `__post_init__` and what it reaches, the record-taking functions of the
resolution and field-class modules, registered overrides, passes, and the
resolvers the runtime wraps for foreign defaults. Reported there:

- a direct field read of the record: `server_args.x`, `self.x` in a method of
  the record class, a literal `getattr(server_args, "x")`, instead of through
  a derived view function (`cfg = resolving_view(server_args)`); where the read
  is the receiver of an in-place edit (`server_args.x.part = ...`, a mutator
  call, a local bound to part of it and edited so), the hint is a declaration
  for a whitelisted field (program.declarable), else the step it needs first;
- a bag accessor call (no bag exists before publish): only derived accessors.

Not reported: a read off a parameter the pipeline hands only a view
(program.view_handed); a read in `__post_init__` before its first call that may
declare (pipeline_reads.undeclared_prefixes), or in a function only those early
calls run (undeclared_callees): there a view answers the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.declarable import FACTS_READ, declarable_fields
from ctxlint.program.pipeline_reads import (
    pipeline_bag_reads,
    raw_read_misses,
    reported_raw_reads,
)
from ctxlint.program.resolution import KEY, resolution, start_tokens
from ctxlint.program.rule import RawFinding, Rule, field_data, finding_at
from ctxlint.program.view_handed import view_params_shown

ID = "CTX103"
ENTRIES = "pipeline entries (the record's __post_init__ and methods reaching the declaration)"
NEEDED = (ENTRIES, "declaration function", "view functions")
NOTE = (
    "no resolution pipeline derived (no record __post_init__ or method reaching a "
    "declaration function, no stash, no view): nothing is checked"
)


class ResolutionView(Rule):
    id = ID
    name = "resolution-view"
    summary = (
        "Inside the resolution pipeline, read the record through a view, never its "
        "raw fields or a bag"
    )
    needs = (BAGS,)
    requires = ("calls", "classes", KEY)
    reads_facts = FACTS_READ  # the whitelist (CTX105's facts)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return start_tokens(vocab)

    def more_tokens(self, program: Program) -> set[str]:
        return resolution(program).wanted_tokens()

    def derive(self, program: Program) -> dict[str, Any]:
        res = resolution(program)
        return {
            ENTRIES: res.entries,
            "declaration function": [res.declaration] if res.declaration else [],
            "resolution modules": res.resolution_modules,
            "view functions": sorted(res.view_functions),
            "view bindings (name: view functions)": {
                n: sorted(v) for n, v in sorted(res.view_bindings.items())
            },
            "registered callables": sorted(res.registered),
            "passes handed to a pass runner": sorted(res.passes),
            "foreign-default resolvers": sorted(res.resolvers),
            "parameters the pipeline hands only a view": view_params_shown(program),
            "pipeline functions": len(res.pipeline),
            **(
                {"note": NOTE} if not (res.entries or res.declaration or res.view_functions) else {}
            ),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        """A pipeline half derived: the rule cannot check it (none at all is the
        note in the sets: a codebase that has no resolution pipeline yet)."""
        missing = [name for name in NEEDED if name in sets and not sets[name]]
        if missing and len(missing) < len(NEEDED):
            return (
                f"no {', no '.join(missing)} derived: the resolution pipeline cannot be "
                "checked (entries: the record's __post_init__ and its methods reaching "
                "the declaration function; the declaration function appends to a record "
                "slot a view reads)"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        res = resolution(program)
        if not res.entries or not res.view_functions:
            return
        spelled = ", ".join(sorted(q.rpartition(".")[2] for q in res.view_functions))
        can = declarable_fields(program)
        for path, r in reported_raw_reads(program):
            fix = ""  # the details: the step a declaration off the whitelist needs first
            if r.edits:  # a view is read-only: a new declared value, on the whitelist only
                todo, fix = can.declare(r.field)
                why = f"`{r.holder}.{r.field}` edited in place inside the resolution pipeline "
                why += f"writes the operator's input, and a view is read-only: {todo}"
            else:
                why = f"`{r.holder}.{r.field}` read {raw_read_misses(program, r)}: read it "
                why += f"through a view ({spelled})"
            yield finding_at(ID, path, r.site, why, fix, **field_data(program.vocab, r.field))
        for b in pipeline_bag_reads(program):
            why = f"`{b.accessor}()` inside the resolution pipeline ({b.chain}): no bag exists "
            why += f"before publish; read the record through a view ({spelled})"
            yield finding_at(ID, b.path, b, why, accessor=b.accessor)


RULE = ResolutionView()
