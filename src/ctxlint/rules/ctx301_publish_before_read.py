"""CTX301 publish-before-read: a bag read that can run before its process publishes.

Process entries are derived: functions and constructors that call the runtime
module's `publish` (directly or through a same-module helper), and every target
handed to a process start (`Process(target=...)`, a process pool's `submit`, a
Ray actor's `__init__` or a Ray task). From each entry the calls are followed in
statement order, across modules, and a bag read reached before the publish is
reported on the entry's statement that leads to it, with the path. A publisher
that reaches no read at all is pinned in the baseline, so a derivation that
silently stops finding reads fails; a constructor that reads bags, is reached
from no publishing entry and does not `assert_published` first is reported too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.process_entries import analysis, runs_unpublished
from ctxlint.program.rule import FixGuard, RawFinding, Rule, finding_at, guard_until, pin_findings
from ctxlint.program.unpublished_reads import constructor_reads, early_reads, publish_sites

ID = "CTX301"
NO_READ = "publishes, reaches no bag read"


class PublishBeforeRead(Rule):
    id = ID
    name = "publish-before-read"
    summary = "A bag read that can run before its process entry publishes the config"
    needs = (BAGS,)
    requires = ("calls", "classes", "records")  # the call graph, its class questions

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return set(vocab.bag_accessors) | {
            "publish",
            "assert_published",
            "Process",
            "submit",
            "remote",
        }

    def more_tokens(self, program: Program) -> set[str]:
        """Modules the walks need and have not seen: for every unresolved call on
        a path the checks follow (before an entry's publish, and all of a
        publisher that reaches no read yet), the modules its qualified name runs
        through (`module:` tokens select exactly those files)."""
        return analysis(program).wanted_tokens()

    def derive(self, program: Program) -> dict[str, Any]:
        a = analysis(program)
        return {
            "process entries": a.entry_roles(),
            "publishers reaching no bag read": a.silent_publishers(),
            "process starts": a.start_lines(),
            "functions reaching a bag read": len(a.reaches_read),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        return dict.fromkeys(analysis(program).silent_publishers(), NO_READ)

    def fix_guard(self, program: Program) -> FixGuard:
        return guard_until(program, runs_unpublished(program))  # a read added there: a finding

    def check(self, program: Program) -> Iterable[RawFinding]:
        yield from pin_findings(ID, program, self.pins(program), publish_sites(program))
        for r in early_reads(program):
            if r.publish is not None:
                when = f"before publish at line {r.publish}: no bag exists there yet"
                fix = "Read it after the publish, or take the value as an argument."
            else:
                when = "in a process entry that never publishes"
                fix = "Add publish(...) at the top of the entry."
            details = f"path: {r.chain}\n{fix}"
            if r.entry is not None:
                details = f"entry: {r.entry}\n{details}"
            yield finding_at(ID, r.path, r, f"{r.hit.label()} {when}", details, **r.hit.related())
        for r in constructor_reads(program):
            more = f"\n{r.more} more statements read bags" if r.more else ""
            why = f"{r.hit.label()} in a constructor handed the record, with no assert_published "
            why += "first and no publishing entry reaching it"
            details = f"path: {r.chain}{more}\nA process that forgot to publish fails here, far "
            details += "from the cause: call assert_published(server_args, role=...) first."
            yield finding_at(ID, r.path, r, why, details, **r.hit.related())


RULE = PublishBeforeRead()
