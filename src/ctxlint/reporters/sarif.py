"""SARIF 2.1.0: one run; new findings are errors, baselined ones suppressed notes.

Baseline states map onto SARIF's own vocabulary: "new", "unchanged" (baselined) and
"absent" (a stale baseline entry). Locations are relative to `%SRCROOT%`; the
absolute root is deliberately left out so the log is the same on every machine.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from ctxlint import __version__
from ctxlint.model import NEW, Finding, Result, RuleInfo, StaleEntry
from ctxlint.reporters._common import UPDATE_HINT, rule_catalogue

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/ctxlint/"
FINGERPRINT_KEY = "ctxlintFingerprint/v1"
SRCROOT = "%SRCROOT%"


def _uri(path: str) -> str:
    # A relative URI reference: percent-encode anything a URI cannot carry (spaces...).
    return quote(path.replace("\\", "/"), safe="/")


def _artifact(path: str) -> dict[str, Any]:
    return {"artifactLocation": {"uri": _uri(path), "uriBaseId": SRCROOT}}


def _descriptor(rule: RuleInfo) -> dict[str, Any]:
    d: dict[str, Any] = {"id": rule.id, "name": rule.name or rule.id}
    if rule.summary:
        d["shortDescription"] = {"text": rule.summary}
        d["fullDescription"] = {"text": rule.summary}
    if rule.spec_path:
        # The spec ships with the source tree; a relative path is not a valid helpUri.
        d["help"] = {"text": f"See {rule.spec_path} or run `ctxlint explain {rule.id}`."}
    else:
        d["help"] = {"text": f"Run `ctxlint explain {rule.id}`."}
    d["defaultConfiguration"] = {"level": "error"}
    return d


def _finding(f: Finding, index: int) -> dict[str, Any]:
    s = f.span
    res: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": "error" if f.status == NEW else "note",
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    **_artifact(f.path),
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
    if f.status != NEW:
        # Accepted by the ratchet baseline, which lives outside the source.
        res["suppressions"] = [{"kind": "external", "status": "accepted"}]
    return res


def _stale(e: StaleEntry, index: int) -> dict[str, Any]:
    return {
        "ruleId": e.rule,
        "ruleIndex": index,
        "level": "note",
        "message": {
            "text": f"Baseline entry no longer matches any finding (scope {e.scope}); {UPDATE_HINT}."
        },
        "locations": [
            {
                "physicalLocation": _artifact(e.path),
                "logicalLocations": [{"fullyQualifiedName": e.scope}],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: e.fingerprint},
        "baselineState": "absent",
    }


def to_document(result: Result) -> dict[str, Any]:
    rules = rule_catalogue(result)
    index = {r.id: i for i, r in enumerate(rules)}
    results = [_finding(f, index[f.rule]) for f in result.findings]
    results += [_stale(e, index[e.rule]) for e in result.stale]
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": _artifact(e.path)}],
        }
        for e in result.errors
    ]
    invocation: dict[str, Any] = {"executionSuccessful": not result.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {
        "tool": {
            "driver": {
                "name": "ctxlint",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_descriptor(r) for r in rules],
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
