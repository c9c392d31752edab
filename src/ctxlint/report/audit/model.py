"""The audit's data: one plain, sorted, serialisable snapshot of a run.

Every renderer (terminal, HTML, JSON) reads this and nothing else, so the three
always agree, and sorting everything here is what makes the output
deterministic (same tree, same bytes).
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ctxlint import __version__
from ctxlint.baseline.ratchet import Baseline
from ctxlint.core.findings import BASELINED, PIN, Finding, RuleInfo, StaleEntry, pin_changes
from ctxlint.program.core import Program
from ctxlint.program.reads import bag_spelling

SCHEMA = 1
KIND = "ctxlint-audit"


@dataclass(frozen=True, slots=True)
class RuleRow:
    id: str
    name: str
    summary: str
    found: int
    new: int
    baselined: int
    stale: int
    allowed: int  # baseline entries of this rule (baselined + stale)
    # pinned keys that changed, apart from the findings: counted as check and
    # `baseline update` count them (core.findings.pin_changes)
    pins: int = 0

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class Tally:
    """Findings of one place (a folder, a file, a scope), by rule."""

    key: str  # folder, path, or "path::scope"
    counts: dict[str, int]  # rule -> findings (rules with none left out)
    files: int = 0  # folders: Python files checked there

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self, name: str) -> dict[str, Any]:
        """`name` is what the key is: "folder", "path", or "scope" ("path::scope")."""
        if name == "scope":
            path, _, scope = self.key.partition("::")
            head: dict[str, Any] = {"path": path, "scope": scope}
        else:
            head = {name: self.key}
        if name == "folder":
            head["files"] = self.files
        return {**head, "total": self.total, "counts": self.counts}


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One finding (or stale baseline entry) as the audit lists it."""

    rule: str
    status: str  # "new", "baselined" or "stale"
    path: str
    line: int | None  # None: a stale entry has no location any more
    scope: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


STALE_MESSAGE = "baseline entry no longer matches any finding: run `ctxlint baseline update`"


def finding_rows(findings: list[Finding], stale: list[StaleEntry]) -> list[FindingRow]:
    """Every finding and stale entry, by path, line and rule (stale entries last in a file)."""
    rows = [FindingRow(f.rule, f.status, f.path, f.line, f.scope, f.message) for f in findings]
    rows += [FindingRow(s.rule, "stale", s.path, None, s.scope, STALE_MESSAGE) for s in stale]
    big = 1 << 62
    return sorted(rows, key=lambda r: (r.path, r.line or big, r.rule, r.scope, r.message))


@dataclass(frozen=True, slots=True)
class FieldRow:
    field: str
    namespace: str | None  # None: not a record field the vocabulary knows
    bag: str | None  # where it should be read from, e.g. get_exec().moe.x
    reads: int
    counts: dict[str, int]  # rule -> reads

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class DerivedSet:
    section: str  # "vocabulary" or a rule id
    name: str
    size: int | None  # entries (None for a scalar note)
    members: int | None  # entries of entries, for nested sets (plugin bases -> hooks)
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    commit: str
    short: str
    date: str  # committer date, ISO 8601
    subject: str
    counts: dict[str, int]  # every audited rule, zeros included
    error: str | None = None  # the tree at this commit could not be checked

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "short": self.short,
            "date": self.date,
            "subject": self.subject,
            "counts": self.counts,
            "total": self.total,
            "error": self.error,
        }


@dataclass(slots=True)
class Audit:
    project: str  # the root folder's name
    root: str
    paths: list[str]  # path filters (relative to root); empty: the whole tree
    files_checked: int
    rules: list[RuleRow]
    folders: list[Tally]  # by total, descending
    files: list[Tally]
    scopes: list[Tally]
    fields: list[FieldRow]
    sets: list[DerivedSet]
    errors: list[dict[str, str]]
    history: list[HistoryPoint] | None = None  # oldest first
    baseline: str | None = None
    findings: list[FindingRow] = field(default_factory=list)

    @property
    def rule_ids(self) -> list[str]:
        return [r.id for r in self.rules]

    @property
    def total(self) -> int:
        return sum(r.found for r in self.rules)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "ctxlint",
            "kind": KIND,
            "schema": SCHEMA,
            "version": __version__,
            "project": self.project,
            "root": self.root,
            "paths": self.paths,
            "baseline": self.baseline,
            "files_checked": self.files_checked,
            "summary": {
                "found": self.total,
                "new": sum(r.new for r in self.rules),
                "baselined": sum(r.baselined for r in self.rules),
                "stale": sum(r.stale for r in self.rules),
                "pins": sum(r.pins for r in self.rules),
                "files_with_findings": len(self.files),
                "errors": len(self.errors),
            },
            "rules": [r.to_json() for r in self.rules],
            "folders": [t.to_json("folder") for t in self.folders],
            "files": [t.to_json("path") for t in self.files],
            "scopes": [t.to_json("scope") for t in self.scopes],
            "fields": [f.to_json() for f in self.fields],
            "sets": [s.to_json() for s in self.sets],
            "history": None if self.history is None else [p.to_json() for p in self.history],
            "errors": self.errors,
            "findings": [f.to_json() for f in self.findings],
        }


# -- building ------------------------------------------------------------------------


def folder_of(path: str) -> str:
    return posixpath.dirname(path) or "."


def _tallies(
    keyed: Iterable[tuple[str, str]], order: list[str], files: dict[str, int] | None = None
) -> list[Tally]:
    """(key, rule) pairs -> tallies sorted by total descending, then key."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for key, rule in keyed:
        counts[key][rule] += 1
    rows = [
        Tally(key, {r: c[r] for r in order if c[r]}, (files or {}).get(key, 0))
        for key, c in counts.items()
    ]
    return sorted(rows, key=lambda t: (-t.total, t.key))


def rule_rows(
    rules: list[RuleInfo],
    findings: list[Finding],
    stale: list[StaleEntry],
    baseline: Baseline | None,
) -> list[RuleRow]:
    found = Counter(f.rule for f in findings if f.kind != PIN)
    baselined = Counter(f.rule for f in findings if f.status == BASELINED and f.kind != PIN)
    pins = pin_changes(findings)
    stale_n = Counter(s.rule for s in stale)
    allowed = Counter(e.rule for e in baseline.entries.values()) if baseline else Counter()
    return [
        RuleRow(
            r.id,
            r.name,
            r.summary,
            found[r.id],
            found[r.id] - baselined[r.id],
            baselined[r.id],
            stale_n[r.id],
            allowed[r.id],
            pins.get(r.id, 0),
        )
        for r in rules
    ]


def field_rows(program: Program, findings: list[Finding]) -> list[FieldRow]:
    """Findings per record field they read: the field each finding's rule
    names in its data (CTX101 and CTX102 do)."""
    vocab = program.vocab
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for f in findings:
        name = f.data.get("field")
        if name:
            counts[name][f.rule] += 1
    rows = [
        FieldRow(
            name,
            vocab.fields.get(name),
            bag_spelling(vocab, name),
            sum(c.values()),
            dict(sorted(c.items())),
        )
        for name, c in counts.items()
    ]
    return sorted(rows, key=lambda r: (-r.reads, r.field))


def _size(value: Any) -> tuple[int | None, int | None]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None, None
    if isinstance(value, int):
        return value, None
    if isinstance(value, (list, tuple, set, dict)):
        inner = list(value.values()) if isinstance(value, dict) else list(value)
        nested = [len(v) for v in inner if isinstance(v, (list, tuple, set, dict))]
        return len(value), (sum(nested) if nested and len(nested) == len(inner) else None)
    return None, None


def _plain(value: Any) -> Any:
    """JSON-ready, with set-like values sorted (deterministic output)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def derived_sets(program: Program, rule_ids: list[str]) -> list[DerivedSet]:
    vocab = program.vocab
    by_ns: dict[str, list[str]] = defaultdict(list)
    for name, ns in vocab.fields.items():
        by_ns[ns or "(record)"].append(name)
    vocabulary: list[tuple[str, Any]] = [
        ("seed accessors", list(vocab.seed_accessors)),
        ("bag accessors", dict(vocab.bag_accessors)),
        ("field classes", dict(vocab.field_classes)),
        ("record fields", sorted(vocab.fields)),
        *((f"record fields: {ns}", sorted(names)) for ns, names in sorted(by_ns.items())),
        ("record properties", list(vocab.properties)),
    ]
    out = []
    for section, items in [("vocabulary", vocabulary)] + [
        (rid, sorted(program.sets.get(rid, {}).items())) for rid in rule_ids
    ]:
        for name, value in items:
            plain = _plain(value)
            size, members = _size(plain)
            out.append(DerivedSet(section, name, size, members, plain))
    return out


def build_audit(
    *,
    root: str,
    paths: list[str],
    rules: list[RuleInfo],
    findings: list[Finding],
    stale: list[StaleEntry],
    baseline: Baseline | None,
    baseline_path: str | None,
    program: Program,
    files_by_folder: dict[str, int],
    files_checked: int,
    errors: list[dict[str, str]],
) -> Audit:
    """`findings` are already compared with the baseline and filtered to `paths`."""
    order = [r.id for r in rules]
    # where the findings are: violations only, as the rule rows count them (a pin
    # change is counted once per key there, never per site)
    found = [f for f in findings if f.kind != PIN]
    return Audit(
        project=posixpath.basename(root.rstrip("/")) or root,
        root=root,
        paths=list(paths),
        files_checked=files_checked,
        rules=rule_rows(rules, findings, stale, baseline),
        folders=_tallies(((folder_of(f.path), f.rule) for f in found), order, files_by_folder),
        files=_tallies(((f.path, f.rule) for f in found), order),
        scopes=_tallies(((f"{f.path}::{f.scope}", f.rule) for f in found), order),
        fields=field_rows(program, findings),
        sets=derived_sets(program, order),
        errors=errors,
        baseline=baseline_path,
        findings=finding_rows(findings, stale),
    )
