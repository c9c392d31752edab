"""The ratchet: a pinned, fingerprinted baseline of accepted findings that may only shrink.

The file is JSON written so that a pull request diff reads well: entries sorted by
(path, rule, scope, fingerprint), one per fingerprint, keys sorted, indent 2 and a
trailing newline, so the same content always produces the same bytes.

    {"schema": 1, "tool": "ctxlint",
     "entries": [{"rule", "path", "scope", "fingerprint", "snippet", "reason"?}, ...],
     "pins": {RULE: {KEY: VALUE}}}

`pins` is opaque here: later rules store derived sets in it (e.g. plugin hook
signatures); this module only round-trips it and diffs it (`compare_pins`).
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxlint.core.findings import BASELINED, NEW, Finding, StaleEntry
from ctxlint.core.outfiles import write_text

SCHEMA = 1
TOOL = "ctxlint"

_REQUIRED = ("rule", "path", "scope", "fingerprint", "snippet")
_ENTRY_KEYS = frozenset((*_REQUIRED, "reason"))
_TOP_KEYS = frozenset(("schema", "tool", "entries", "pins"))

Pins = dict[str, dict[str, Any]]


class BaselineError(ValueError):
    """A baseline that cannot be read or an update that is not allowed (CLI: exit 2)."""


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    rule: str
    path: str
    scope: str
    fingerprint: str
    snippet: str
    reason: str | None = None  # why the allowance was granted (set by --allow-growth)

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.path, self.rule, self.scope, self.fingerprint)

    def to_json(self) -> dict[str, str]:
        d = {
            "rule": self.rule,
            "path": self.path,
            "scope": self.scope,
            "fingerprint": self.fingerprint,
            "snippet": self.snippet,
        }
        if self.reason is not None:
            d["reason"] = self.reason
        return d

    def to_stale(self) -> StaleEntry:
        return StaleEntry(self.rule, self.path, self.scope, self.fingerprint, self.snippet)

    @classmethod
    def from_finding(cls, f: Finding, reason: str | None = None) -> BaselineEntry:
        return cls(f.rule, f.path, f.scope, f.fingerprint, f.snippet, reason)


@dataclass(frozen=True, slots=True)
class Baseline:
    """Entries keyed by fingerprint, plus the opaque pins."""

    entries: Mapping[str, BaselineEntry] = field(default_factory=dict)
    pins: Pins = field(default_factory=dict)

    @classmethod
    def from_entries(cls, entries: Iterable[BaselineEntry], pins: Pins | None = None) -> Baseline:
        by_fp: dict[str, BaselineEntry] = {}
        for e in entries:
            by_fp.setdefault(e.fingerprint, e)  # one entry per fingerprint; first wins
        return cls(by_fp, dict(pins or {}))

    def sorted_entries(self) -> list[BaselineEntry]:
        return sorted(self.entries.values(), key=BaselineEntry.sort_key)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self.entries

    def to_json(self) -> str:
        doc = {
            "schema": SCHEMA,
            "tool": TOOL,
            "entries": [e.to_json() for e in self.sorted_entries()],
            "pins": self.pins,
        }
        # sort_keys also sorts the pins at every depth, so equal content -> equal bytes.
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically: a crash, a full disk or a read-only folder leaves the
        old file intact, and the error names the path."""
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BaselineError(f"cannot write baseline {target}: {exc.strerror or exc}") from None
        write_text(target, self.to_json(), "baseline")


# -- loading -------------------------------------------------------------------------


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline; a missing file is an empty baseline, anything broken a BaselineError."""
    name = os.fspath(path)
    try:
        # a device or a pipe would block or never end (/dev/zero): files only
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise BaselineError(f"baseline {name}: not a regular file")
        with open(name, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return Baseline()
    except UnicodeDecodeError as exc:
        raise BaselineError(f"baseline {name}: not UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise BaselineError(f"baseline {name}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"baseline {name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return parse_baseline(doc, name)


def parse_baseline(doc: Any, name: str = "<baseline>") -> Baseline:
    """Validate an already-decoded baseline document."""

    def fail(msg: str) -> BaselineError:
        return BaselineError(f"baseline {name}: {msg}")

    if not isinstance(doc, dict):
        raise fail(f"expected a JSON object at the top level, got {_kind(doc)}")
    if doc.get("schema") != SCHEMA:
        raise fail(f"unsupported schema {doc.get('schema')!r} (this ctxlint reads schema {SCHEMA})")
    if doc.get("tool", TOOL) != TOOL:
        raise fail(f"written by {doc.get('tool')!r}, not {TOOL!r}")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise fail(f"unknown top-level key(s): {', '.join(unknown)}")
    if "entries" not in doc:  # read as empty, every accepted finding would be new
        raise fail('no "entries" list (an empty baseline has "entries": [])')
    raw_entries = doc["entries"]
    if not isinstance(raw_entries, list):
        raise fail(f'"entries" must be a list, got {_kind(raw_entries)}')

    entries: dict[str, BaselineEntry] = {}
    for i, raw in enumerate(raw_entries):
        where = f"entry {i}"
        if not isinstance(raw, dict):
            raise fail(f"{where}: expected an object, got {_kind(raw)}")
        missing = [k for k in _REQUIRED if k not in raw]
        if missing:
            raise fail(f"{where}: missing {', '.join(repr(k) for k in missing)}")
        extra = sorted(set(raw) - _ENTRY_KEYS)
        if extra:
            raise fail(f"{where}: unknown key(s): {', '.join(extra)}")
        for k in _REQUIRED:
            if not isinstance(raw[k], str):
                raise fail(f"{where}: {k!r} must be a string, got {_kind(raw[k])}")
        reason = raw.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise fail(f"{where}: 'reason' must be a string, got {_kind(reason)}")
        fp = raw["fingerprint"]
        if not fp:
            raise fail(f"{where}: empty fingerprint")
        if fp in entries:
            raise fail(f"{where}: duplicate fingerprint {fp}")
        entries[fp] = BaselineEntry(
            raw["rule"], raw["path"], raw["scope"], fp, raw["snippet"], reason
        )

    pins = doc.get("pins", {})
    if not isinstance(pins, dict) or not all(isinstance(v, dict) for v in pins.values()):
        raise fail('"pins" must be an object of objects ({RULE: {KEY: VALUE}})')
    return Baseline(entries, pins)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


# -- comparing -----------------------------------------------------------------------


def _in_scope(rule: str, rules: Collection[str] | None) -> bool:
    return rules is None or rule in rules


def compare(
    findings: Iterable[Finding],
    baseline: Baseline,
    *,
    rules: Collection[str] | None = None,
) -> tuple[list[Finding], list[StaleEntry]]:
    """Mark each finding "new" or "baselined" and list the baseline entries nothing matched.

    `rules` limits staleness to the rules that actually ran (`--select`/`--ignore`):
    an entry of a rule that did not run is neither matched nor stale.
    """
    marked: list[Finding] = []
    seen: set[str] = set()
    for f in findings:
        if f.fingerprint in baseline.entries:
            seen.add(f.fingerprint)
            status = BASELINED
        else:
            status = NEW
        marked.append(f if f.status == status else replace(f, status=status))
    stale = [
        e.to_stale()
        for fp, e in baseline.entries.items()
        if fp not in seen and _in_scope(e.rule, rules)
    ]
    marked.sort(key=Finding.sort_key)
    stale.sort(key=StaleEntry.sort_key)
    return marked, stale


# -- pins ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PinDiff:
    """(rule, key) pairs whose pinned value appeared, disappeared or changed."""

    added: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def compare_pins(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> PinDiff:
    old_flat = {(r, k): v for r, kv in old.items() for k, v in kv.items()}
    new_flat = {(r, k): v for r, kv in new.items() for k, v in kv.items()}
    return PinDiff(
        added=sorted(new_flat.keys() - old_flat.keys()),
        removed=sorted(old_flat.keys() - new_flat.keys()),
        changed=sorted(k for k in old_flat.keys() & new_flat.keys() if old_flat[k] != new_flat[k]),
    )


# -- updating ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UpdateReport:
    removed: list[BaselineEntry]  # entries no finding matched any more
    added: list[BaselineEntry]  # growth, only with allow_growth
    left_out: list[Finding]  # new findings NOT added (growth refused): the CLI tells the user
    kept: int
    pins: PinDiff = field(default_factory=PinDiff)

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.added or self.pins)


def update(
    baseline: Baseline,
    findings: Iterable[Finding],
    *,
    allow_growth: bool = False,
    reason: str | None = None,
    rules: Collection[str] | None = None,
    pins: Pins | None = None,
) -> tuple[Baseline, UpdateReport]:
    """Shrink the baseline to what is still found; grow it only when explicitly allowed.

    Matching is by fingerprint only, and the path is part of the fingerprint, so a
    finding moved to another file is a new allowance (growth) plus a removed one.
    Entries of rules outside `rules` are kept untouched. `pins`, when given, replaces
    the stored pins (the diff is reported); None keeps them.
    """
    if allow_growth and not (reason and reason.strip()):
        raise BaselineError("growing the baseline needs a non-empty reason (--reason)")
    findings = sorted(findings, key=Finding.sort_key)
    found = {f.fingerprint for f in findings}

    kept: list[BaselineEntry] = []
    removed: list[BaselineEntry] = []
    for e in baseline.sorted_entries():
        (kept if e.fingerprint in found or not _in_scope(e.rule, rules) else removed).append(e)

    added: list[BaselineEntry] = []
    left_out: list[Finding] = []
    new_fps: set[str] = set()
    for f in findings:
        if f.fingerprint in baseline.entries or f.fingerprint in new_fps:
            continue
        if allow_growth:
            assert reason is not None
            added.append(BaselineEntry.from_finding(f, reason.strip()))
            new_fps.add(f.fingerprint)
        else:
            left_out.append(f)

    new_pins = baseline.pins if pins is None else pins
    new = Baseline.from_entries([*kept, *added], new_pins)
    report = UpdateReport(
        removed=removed,
        added=sorted(added, key=BaselineEntry.sort_key),
        left_out=left_out,
        kept=len(kept),
        pins=compare_pins(baseline.pins, new_pins),
    )
    return new, report


# -- show ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BaselineOverview:
    """What `ctxlint baseline show` prints."""

    total: int
    per_rule: dict[str, int]  # sorted by rule id
    per_path: dict[str, int]  # sorted by path
    entries: list[BaselineEntry]  # sorted like the file
    pins: Pins

    def to_text(self) -> str:
        lines = [f"{self.total} baseline entr{'y' if self.total == 1 else 'ies'}"]
        for rule, n in self.per_rule.items():
            lines.append(f"  {rule}: {n}")
        for e in self.entries:
            reason = f"  # {e.reason}" if e.reason else ""
            lines.append(f"{e.path}  {e.rule}  {e.scope}  {e.snippet}{reason}")
        for rule in sorted(self.pins):
            lines.append(f"pins {rule}: {len(self.pins[rule])} key(s)")
        return "\n".join(lines) + "\n"


def show(baseline: Baseline) -> BaselineOverview:
    entries = baseline.sorted_entries()
    per_rule = Counter(e.rule for e in entries)
    per_path = Counter(e.path for e in entries)
    return BaselineOverview(
        total=len(entries),
        per_rule=dict(sorted(per_rule.items())),
        per_path=dict(sorted(per_path.items())),
        entries=entries,
        pins=baseline.pins,
    )
