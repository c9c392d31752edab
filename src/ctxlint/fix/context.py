"""What every fixer is handed: the vocabulary, the targets, the run's switches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctxlint.core.findings import Finding
from ctxlint.facts.vocab import Vocabulary
from ctxlint.fix.plan import FilePlan, Site
from ctxlint.fix.targets import Targets
from ctxlint.program.rule import FixGuard


@dataclass
class FixContext:
    vocab: Vocabulary
    targets: Targets
    unsafe: bool
    # (regexes, path): does a checked file other than `path` match all of them?
    # A name another module may use is not removed or renamed.
    named_elsewhere: Callable[[list[str], str], bool]
    # rule id -> its fix guard (Rule.fix_guard), for the rules some fixer of the
    # run reads (Rule.fix_guards)
    guards: dict[str, FixGuard] = field(default_factory=dict)
    # (path, "function:parameter") -> why a parameter whose calls hand it a record
    # stays (fix.param_chain, asked after a first planning: the file is planned again)
    refused: dict[tuple[str, str], str] = field(default_factory=dict)

    def guard(self, rule: str, path: str, scope: str, line: int) -> str | None:
        """Why a rewrite at that line would add a finding of `rule`, or None
        (also when the rule gave no guard: it is not run, say)."""
        found = self.guards.get(rule)
        return found(path, scope, line) if found is not None else None


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
