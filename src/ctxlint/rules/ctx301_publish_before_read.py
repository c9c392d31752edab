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
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.process_entries import PUBLISH, Analysis, analysis, runs_unpublished
from ctxlint.program.rule import FixGuard, PinSite, RawFinding, Rule, guard_until, pin_findings

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
        entries = []
        for q, roles in sorted(a.entries.items()):
            if q not in a.funcs:
                continue
            entries.append(f"{q} ({', '.join(roles)})")
        silent = sorted(q for q in a.own if q not in a.reaches_read)
        starts = []
        for path, s in a.graph.starts:
            got = ", ".join(a.graph.start_targets(s)) or "unresolved"
            starts.append(f"{path}:{s.site.span[0]} {s.kind.value} -> {got}")
        return {
            "process entries": entries,
            "publishers reaching no bag read": silent,
            "process starts": sorted(starts),
            "functions reaching a bag read": len(a.reaches_read),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        a = analysis(program)
        return {q: NO_READ for q in a.own if q not in a.reaches_read}

    def fix_guard(self, program: Program) -> FixGuard:
        return guard_until(program, runs_unpublished(program))  # a read added there: a finding

    def _pin_sites(self, a: Analysis) -> dict[str, PinSite]:
        sites: dict[str, PinSite] = {}
        for q in a.own:
            fn = a.funcs[q]
            site = next((e.site for e in fn.events if e.kind is PUBLISH and e.site), None)
            if site is not None:
                sites[q] = PinSite(fn.path, short(q, fn.module), site.snippet, site.span)
        return sites

    def check(self, program: Program) -> Iterable[RawFinding]:
        a = analysis(program)
        yield from pin_findings(ID, program, self.pins(program), self._pin_sites(a))
        for q in sorted(a.entries):
            if q in a.funcs:
                yield from self._entry(a, q)
        # only a constructor handed the record can assert_published(server_args)
        for q in a.unreached_constructors():
            yield from self._constructor(a, q)

    def _entry(self, a: Analysis, q: str) -> Iterable[RawFinding]:
        fn = a.funcs[q]
        leads, publish = a.order.first_steps(q)
        if not leads:
            return
        name = short(q, fn.module)
        if publish is not None:
            when = f"before publish at line {publish.line}: no bag exists there yet"
            fix = "Read it after the publish, or take the value as an argument."
        else:
            when = "in a process entry that never publishes"
            fix = "Add publish(...) at the top of the entry."
        start = a.entry_start.get(q)
        for event, hit in leads:
            msg = f"{hit.label()} {when}"
            details = f"path: {hit.path_text(a.funcs, name)}\n{fix}"
            data = hit.related()
            if event.site is not None:
                site = event.site
                yield RawFinding(ID, fn.path, name, site.snippet, site.span, msg, details, data)
            elif start is not None:  # the entry's module anchored nothing: the start site
                spath, s = start
                site = s.site
                details = f"entry: {q}\n{details}"
                yield RawFinding(ID, spath, s.scope, site.snippet, site.span, msg, details, data)
                return

    def _constructor(self, a: Analysis, q: str) -> Iterable[RawFinding]:
        """One finding per constructor, on its first statement leading to a read."""
        fn = a.funcs[q]
        found = a.order.first_steps(q, (PUBLISH, EventKind.ASSERT), near=True)[0]
        steps = [(e.site, hit) for e, hit in found if e.site is not None]
        if not steps:
            return
        name = short(q, fn.module)
        site, hit = steps[0]
        more = f"\n{len(steps) - 1} more statements read bags" if len(steps) > 1 else ""
        yield RawFinding(
            ID,
            fn.path,
            name,
            site.snippet,
            site.span,
            f"{hit.label()} in a constructor handed the record, with no assert_published "
            "first and no publishing entry reaching it",
            f"path: {hit.path_text(a.funcs, name)}{more}\nA process that forgot to publish fails "
            "here, far from the cause: call assert_published(server_args, role=...) first.",
            hit.related(),
        )


RULE = PublishBeforeRead()
