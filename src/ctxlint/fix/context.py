"""What every fixer is handed: the vocabulary, the targets, the run's switches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxlint.core.findings import Finding
from ctxlint.facts.vocab import Vocabulary
from ctxlint.fix.plan import FilePlan, Site
from ctxlint.fix.targets import Targets


@dataclass
class FixContext:
    vocab: Vocabulary
    targets: Targets
    unsafe: bool
    # (regexes, path): does a checked file other than `path` match all of them?
    # A name another module may use is not removed or renamed.
    named_elsewhere: Callable[[list[str], str], bool]
    # (path, scope, line) -> the process entry (or constructor) that runs that line
    # with no record published yet (CTX301's walks), or None
    unpublished: Callable[[str, str, int], str | None] = lambda _p, _s, _l: None


def site(plan: FilePlan, finding: Finding) -> Site:
    s = Site(
        finding.rule,
        finding.path,
        finding.span.line,
        finding.span.column,
        finding.snippet,
        finding.scope,
    )
    plan.sites.append(s)
    return s


def left(s: Site, reason: str) -> None:
    s.reason = reason


Fixer = Callable[[FilePlan, list[Finding], FixContext], None]
