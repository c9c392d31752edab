"""Which bag reads run before their process publishes, and where each is told
(CTX301 asks; program.process_entries derives the entries and the walks).

- `early_reads`: each statement of a process entry that leads to a bag read
  before the entry's publish (or in an entry that never publishes), anchored
  on the statement; where the entry's module anchored none, once, on the
  process start that runs it;
- `constructor_reads`: a constructor handed the record that reads bags, is
  reached from no publishing entry and does not `assert_published` first: its
  first statement leading to a read;
- `publish_sites`: where each publisher that reaches no bag read publishes
  (the site of its pinned fact).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.ordered_reach import Hit
from ctxlint.program.process_entries import PUBLISH, Analysis, analysis
from ctxlint.program.rule import PinSite


@dataclass(frozen=True, slots=True)
class EarlyRead:
    """A statement (`snippet`, `span` in `scope` of file `path`) leading to a bag
    read `hit`; `chain`: the call path's text; `publish`: the line the function
    publishes at (None: it never does); `entry`: the entry, where the finding
    stands at the start that runs it."""

    path: str
    scope: str
    snippet: str
    span: list[int]
    hit: Hit
    chain: str
    publish: int | None = None
    entry: str | None = None
    more: int = 0  # a constructor's further statements leading to a read


def early_reads(program: Program) -> Iterator[EarlyRead]:
    """The bag reads each process entry runs before it publishes."""
    a = analysis(program)
    for q in sorted(a.entries):
        if q in a.funcs:
            yield from _entry(a, q)


def _entry(a: Analysis, q: str) -> Iterator[EarlyRead]:
    fn = a.funcs[q]
    leads, publish = a.order.first_steps(q)
    name = short(q, fn.module)
    line = publish.line if publish is not None else None
    start = a.entry_start.get(q)
    for event, hit in leads:
        chain = hit.path_text(a.funcs, name)
        if event.site is not None:
            site = event.site
            yield EarlyRead(fn.path, name, site.snippet, site.span, hit, chain, line)
        elif start is not None:  # the entry's module anchored nothing: the start site
            spath, s = start
            yield EarlyRead(spath, s.scope, s.site.snippet, s.site.span, hit, chain, line, q)
            return


def constructor_reads(program: Program) -> Iterator[EarlyRead]:
    """One read per unreached constructor, on its first statement leading to one
    (only a constructor handed the record can assert_published(server_args))."""
    a = analysis(program)
    for q in a.unreached_constructors():
        fn = a.funcs[q]
        found = a.order.first_steps(q, (PUBLISH, EventKind.ASSERT), near=True)[0]
        steps = [(e.site, hit) for e, hit in found if e.site is not None]
        if steps:
            name = short(q, fn.module)
            site, hit = steps[0]
            chain = hit.path_text(a.funcs, name)
            more = len(steps) - 1
            yield EarlyRead(fn.path, name, site.snippet, site.span, hit, chain, more=more)


def publish_sites(program: Program) -> dict[str, PinSite]:
    """Publisher -> its first publish's site, for each publisher of the program."""
    a = analysis(program)
    sites: dict[str, PinSite] = {}
    for q in a.own:
        fn = a.funcs[q]
        site = next((e.site for e in fn.events if e.kind is PUBLISH and e.site), None)
        if site is not None:
            sites[q] = PinSite(fn.path, short(q, fn.module), site.snippet, site.span)
    return sites
