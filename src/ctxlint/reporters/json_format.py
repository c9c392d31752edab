"""JSON output, schema 1 (documented in docs/json-schema.md)."""

from __future__ import annotations

import json
from typing import Any

from ctxlint import __version__
from ctxlint.model import Result

SCHEMA = 1


def to_document(result: Result) -> dict[str, Any]:
    return {
        "tool": "ctxlint",
        "version": __version__,
        "schema": SCHEMA,
        # Findings and stale entries are already sorted by the engine; keep that order.
        "findings": [f.to_json() for f in result.findings],
        "stale": [s.to_json() for s in result.stale],
        "summary": {rule: s.to_json() for rule, s in sorted(result.summary().items())},
        "errors": [e.to_json() for e in result.errors],
    }


def render(result: Result) -> str:
    return json.dumps(to_document(result), indent=2) + "\n"
