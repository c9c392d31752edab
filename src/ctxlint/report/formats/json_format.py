"""JSON output, schema 1 (documented in docs/json-schema.md)."""

from __future__ import annotations

import json
from typing import Any

from ctxlint import __version__
from ctxlint.core.findings import Result

SCHEMA = 1


def statistics(result: Result) -> list[dict[str, Any]]:
    """`--statistics`: one row per rule of the run (and per rule only the baseline names)."""
    names = {r.id: r.name for r in result.rules}
    return [
        {"rule": rule, "name": names.get(rule, ""), **s.to_json()}
        for rule, s in sorted(result.summary().items())
    ]


def to_document(result: Result, *, with_statistics: bool = False) -> dict[str, Any]:
    doc = {
        "tool": "ctxlint",
        "version": __version__,
        "schema": SCHEMA,
        # Findings and stale entries are already sorted by the engine; keep that order.
        "findings": [f.to_json() for f in result.findings],
        "stale": [s.to_json() for s in result.stale],
        "summary": {rule: s.to_json() for rule, s in sorted(result.summary().items())},
        "errors": [e.to_json() for e in result.errors],
        # rules the codebase cannot run yet (a vocabulary set is missing), with why
        "disabled": [
            {"rule": rule, "reason": why} for rule, why in sorted(result.disabled.items())
        ],
    }
    if with_statistics:  # additive: a schema-1 reader that ignores it loses nothing
        doc["statistics"] = statistics(result)
        doc["files_checked"] = result.files_checked
    return doc


def render(result: Result, *, statistics: bool = False) -> str:
    return json.dumps(to_document(result, with_statistics=statistics), indent=2) + "\n"
