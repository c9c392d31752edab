"""The plain data every phase exchanges: findings, stale entries, errors, results.

Everything here is immutable and serialisable so it can cross a process pool,
sit in the cache and be rendered by any reporter without touching the engine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

NEW = "new"
BASELINED = "baselined"

# What a finding is: a violation of a rule, or a pinned fact (a hook signature,
# say) that differs from the baseline's pin. A pin finding is never itself put
# in the baseline: `baseline update` records the new pin instead.
VIOLATION = "violation"
PIN = "pin"
KINDS = (VIOLATION, PIN)


@dataclass(frozen=True, slots=True)
class Span:
    """A source range: 1-based lines, 1-based columns, end column exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    path: str  # relative to the project root, forward slashes
    span: Span
    scope: str  # enclosing qualname ("<module>" at top level)
    message: str
    snippet: str  # normalised source of the offending node
    fingerprint: str
    status: str = NEW  # NEW or BASELINED
    details: str = ""  # what the one-sentence message leaves out (--show-details)
    # What the finding is about, for tools (the audit, JSON readers): "field",
    # "namespace", "key"... Never part of the fingerprint.
    data: dict[str, str] = field(default_factory=dict, hash=False)
    kind: str = VIOLATION

    @property
    def line(self) -> int:
        return self.span.line

    def sort_key(self) -> tuple[Any, ...]:
        s = self.span
        return (self.path, s.line, s.column, self.rule, self.fingerprint)

    def to_json(self) -> dict[str, Any]:
        s = self.span
        return {
            "rule": self.rule,
            "path": self.path,
            "line": s.line,
            "column": s.column,
            "end_line": s.end_line,
            "end_column": s.end_column,
            "scope": self.scope,
            "message": self.message,
            "fingerprint": self.fingerprint,
            "status": self.status,
        } | (
            ({"details": self.details} if self.details else {})
            | ({"kind": self.kind} if self.kind != VIOLATION else {})
            | ({"data": dict(sorted(self.data.items()))} if self.data else {})
        )


@dataclass(frozen=True, slots=True)
class StaleEntry:
    """A baseline entry that no finding matches any more."""

    rule: str
    path: str
    scope: str
    fingerprint: str
    snippet: str = ""

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.path, self.rule, self.scope, self.fingerprint)

    def to_json(self) -> dict[str, str]:
        out = {
            "rule": self.rule,
            "path": self.path,
            "scope": self.scope,
            "fingerprint": self.fingerprint,
        }
        if self.snippet:  # what it was: entries of one scope apart at a glance
            out["snippet"] = self.snippet
        return out


@dataclass(frozen=True, slots=True)
class FileError:
    """A file the engine could not check (unreadable, not UTF-8, syntax error)."""

    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """Catalogue metadata of a rule, for `ctxlint rules`, SARIF and JUnit."""

    id: str  # "CTX101"
    name: str  # "seed-read"
    summary: str  # one line
    spec_path: str = ""  # rules/CTX101.md, for help links


def pin_key(f: Finding) -> tuple[str, str]:
    """The (rule, pinned key) a pin finding is about: findings are counted one
    per place, pins one per key (CTX702 reports each site of a sticky setter,
    one key), as `baseline update` records them."""
    return (f.rule, f.data.get("key") or f.fingerprint)


def pin_changes(findings: list[Finding]) -> dict[str, int]:
    """Rule -> pinned keys whose value differs from the baseline's (the pin findings)."""
    keys = {pin_key(f) for f in findings if f.kind == PIN}
    out: dict[str, int] = {}
    for rule, _ in sorted(keys):
        out[rule] = out.get(rule, 0) + 1
    return out


@dataclass(frozen=True, slots=True)
class RuleSummary:
    """Per rule: findings (violations) found, new, baselined, stale; and `pins`,
    the pinned keys that changed (never baselined: `baseline update` records them)."""

    found: int = 0
    new: int = 0
    baselined: int = 0
    stale: int = 0
    pins: int = 0

    def to_json(self) -> dict[str, int]:
        out = asdict(self)
        if not self.pins:  # additive: schema 1 as it was where nothing is pinned anew
            del out["pins"]
        return out


@dataclass(slots=True)
class Result:
    """The outcome of one `ctxlint check`: what every reporter renders."""

    root: str  # absolute project root; finding paths are relative to it
    rules: list[RuleInfo]
    findings: list[Finding]  # sorted by Finding.sort_key
    stale: list[StaleEntry]  # sorted by StaleEntry.sort_key
    errors: list[FileError]  # sorted by path
    strict: bool = False
    files_checked: int = 0
    # with PATH arguments or --changed-since: how many of the checked files the
    # report covers (the whole program is analysed; findings are shown for these)
    files_reported: int | None = None
    timings: dict[str, float] = field(default_factory=dict)  # phase or rule -> seconds
    config_path: str = ""  # the config file the run used ("" for none), for the closing line
    baseline_path: str = ""  # the baseline file compared against ("" for none)
    disabled: dict[str, str] = field(default_factory=dict)  # rule -> why it could not run
    # `ctxlint baseline update` as typed from where the run was asked for (with its
    # project folder or --config), for the hints about stale entries
    update_command: str = "ctxlint baseline update"

    def summary(self) -> dict[str, RuleSummary]:
        zero = {"found": 0, "new": 0, "baselined": 0, "stale": 0, "pins": 0}
        counts: dict[str, dict[str, int]] = {r.id: dict(zero) for r in self.rules}
        for f in self.findings:
            if f.kind == PIN:
                continue
            c = counts.setdefault(f.rule, dict(zero))
            c["found"] += 1
            c[f.status] += 1
        for rule, n in pin_changes(self.findings).items():
            counts.setdefault(rule, dict(zero))["pins"] = n
        for s in self.stale:
            c = counts.setdefault(s.rule, dict(zero))
            c["stale"] += 1
        return {rule: RuleSummary(**counts[rule]) for rule in sorted(counts)}

    @property
    def new_findings(self) -> list[Finding]:
        """What fails the run: new findings, pin findings among them (listed apart
        from the counts: see `new_violations`, `pin_changes`)."""
        return [f for f in self.findings if f.status == NEW]

    @property
    def new_violations(self) -> list[Finding]:
        return [f for f in self.findings if f.status == NEW and f.kind != PIN]

    def exit_code(self, *, ignore_errors: bool = False) -> int:
        """0 clean, 1 new findings (or stale entries under --strict), 2 file errors."""
        if self.errors and not ignore_errors:
            return 2
        if self.new_findings or (self.strict and self.stale):
            return 1
        return 0
