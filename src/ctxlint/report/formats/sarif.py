"""SARIF 2.1.0: one run; new findings are errors, baselined ones suppressed notes.

A pin change (a derived set the baseline does not pin yet) is bookkeeping, not
a finding: a note, new, with `properties.kind` "pin" and the tag "pin" (the
JSON's `kind`), so code scanning lists it apart from the errors.

Baseline states map onto SARIF's own vocabulary: "new", "unchanged" (baselined) and
"absent" (a stale baseline entry). Locations are relative to `%SRCROOT%`, the
repository's root (the git work tree holding the project, else the working
folder), which `originalUriBaseIds` gives; code scanning resolves them from the
repository root, so a project in `python/` is reported as `python/...`.
Each rule carries its spec as `help.markdown`, and links to the project's home
when the installed package's metadata names one.
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any
from urllib.parse import quote

from ctxlint import __version__
from ctxlint.core.findings import NEW, PIN, Finding, Result, RuleInfo, StaleEntry
from ctxlint.engine.registry import spec_path
from ctxlint.report.formats._common import ReportBase, report_base, rule_catalogue, update_hint

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
HOME_LABELS = ("repository", "source", "source code", "homepage", "home")
FINGERPRINT_KEY = "ctxlintFingerprint/v1"
SRCROOT = "%SRCROOT%"
# a finding's data keys naming one more place it is about (`path:line`) and what is there
RELATED, RELATED_WHAT = "related", "related_what"


def _uri(path: str) -> str:
    # A relative URI reference: percent-encode anything a URI cannot carry (spaces...),
    # and a name's raw bytes where it is not UTF-8 (held as surrogate escapes).
    return quote(path.replace("\\", "/").encode("utf-8", "surrogateescape"), safe="/")


def project_home() -> str | None:
    """The project's home (its repository) from the installed package's metadata
    (`[project.urls]`); None when it names none: never a guessed address."""
    try:
        urls = metadata.metadata("ctxlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    found = {}
    for entry in urls:
        label, _, url = entry.partition(",")
        found[label.strip().lower()] = url.strip().rstrip("/")
    return next((found[k] for k in HOME_LABELS if found.get(k)), None)


def _artifact(path: str, base: ReportBase) -> dict[str, Any]:
    return {"artifactLocation": {"uri": _uri(base.path(path)), "uriBaseId": SRCROOT}}


def _descriptor(rule: RuleInfo, home: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {"id": rule.id, "name": rule.name or rule.id}
    if rule.summary:
        d["shortDescription"] = {"text": rule.summary}
        d["fullDescription"] = {"text": rule.summary}
    spec = spec_path(rule.id)
    text = f"Run `ctxlint explain {rule.id}`" + (
        f" or see {rule.spec_path}." if rule.spec_path else "."
    )
    d["help"] = {"text": text}
    if rule.spec_path and spec.is_file():
        d["help"]["markdown"] = spec.read_text(encoding="utf-8")
    if rule.spec_path and home:
        d["helpUri"] = f"{home}/blob/main/{rule.spec_path}"
    d["defaultConfiguration"] = {"level": "error"}
    return d


def _finding(f: Finding, index: int, base: ReportBase) -> dict[str, Any]:
    s = f.span
    res: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": "error" if f.status == NEW and f.kind != PIN else "note",
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    **_artifact(f.path, base),
                    "region": {
                        "startLine": s.line,
                        "startColumn": s.column,
                        "endLine": s.end_line,
                        "endColumn": s.end_column,
                        "snippet": {"text": f.snippet},
                    },
                },
                "logicalLocations": [{"fullyQualifiedName": f.scope}],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "baselineState": "new" if f.status == NEW else "unchanged",
    }
    props: dict[str, Any] = {"details": f.details} if f.details else {}  # --show-details
    if f.kind == PIN:  # bookkeeping that `baseline update` records, not a finding
        props |= {"kind": PIN, "tags": [PIN]}
    if props:
        res["properties"] = props
    related = related_place(f.data.get(RELATED, ""))
    if related is not None:  # a place the finding is about besides its own (CTX301: the read)
        path, line = related
        res["relatedLocations"] = [
            {
                "id": 1,
                "physicalLocation": {**_artifact(path, base), "region": {"startLine": line}},
                "message": {"text": f.data.get(RELATED_WHAT, "related")},
            }
        ]
    if f.status != NEW:
        # Accepted by the ratchet baseline, which lives outside the source.
        res["suppressions"] = [{"kind": "external", "status": "accepted"}]
    return res


def related_place(where: str) -> tuple[str, int] | None:
    """`path:line` from a finding's data, else None."""
    path, _, line = where.rpartition(":")
    return (path, int(line)) if path and line.isdigit() and int(line) > 0 else None


def _stale(e: StaleEntry, index: int, base: ReportBase, hint: str) -> dict[str, Any]:
    return {
        "ruleId": e.rule,
        "ruleIndex": index,
        "level": "note",
        "message": {
            "text": f"Baseline entry no longer matches any finding (scope {e.scope}); {hint}."
        },
        "locations": [
            {
                "physicalLocation": _artifact(e.path, base),
                "logicalLocations": [{"fullyQualifiedName": e.scope}],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: e.fingerprint},
        "baselineState": "absent",
    }


def to_document(result: Result) -> dict[str, Any]:
    rules = rule_catalogue(result)
    index = {r.id: i for i, r in enumerate(rules)}
    base = report_base(result.root)
    home = project_home()
    results = [_finding(f, index[f.rule], base) for f in result.findings]
    results += [_stale(e, index[e.rule], base, update_hint(result)) for e in result.stale]
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": _artifact(e.path, base)}],
        }
        for e in result.errors
    ]
    invocation: dict[str, Any] = {"executionSuccessful": not result.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    driver: dict[str, Any] = {"name": "ctxlint", "version": __version__}
    if home:
        driver["informationUri"] = home
    driver["rules"] = [_descriptor(r, home) for r in rules]
    run = {
        "tool": {"driver": driver},
        # a trailing slash: the base is a folder the result uris are resolved against
        "originalUriBaseIds": {
            SRCROOT: {
                "uri": base.folder.as_uri() + "/",
                "description": {"text": "the repository root"},
            }
        },
        "invocations": [invocation],
        # LibCST columns count code points, not UTF-16 units.
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: Result) -> str:
    return json.dumps(to_document(result), indent=2) + "\n"
