"""Which record field a CTX101/CTX102 finding reads.

The rules' facts carry the field next to the span of the read, so that is the
first source; the message (which starts with the field in backticks) and the
snippet are fallbacks, so an audit never breaks when a rule reshapes its facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ctxlint.core.findings import Finding
from ctxlint.program.core import Program

FIELD_RULES = ("CTX101", "CTX102")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MESSAGE = re.compile(rf"^`({_IDENT})`")
_GETATTR = re.compile(rf"""getattr\(.*?,\s*['"]({_IDENT})['"]""")
_ATTRIBUTE = re.compile(rf"\.({_IDENT})\s*$")


def _reads(facts: Any) -> Iterator[dict[str, Any]]:
    """Every dict in a rule's facts that names a field and a span, at any depth."""
    if isinstance(facts, dict):
        if isinstance(facts.get("field"), str) and isinstance(facts.get("span"), list):
            yield facts
        for value in facts.values():
            yield from _reads(value)
    elif isinstance(facts, list):
        for value in facts:
            yield from _reads(value)


def field_index(program: Program) -> dict[tuple[str, str, tuple[int, ...]], str]:
    """(rule, path, span) -> field, from the facts of the field-reading rules."""
    index: dict[tuple[str, str, tuple[int, ...]], str] = {}
    for rule in FIELD_RULES:
        for path, _, facts in program.facts(rule):
            for read in _reads(facts):
                index.setdefault((rule, path, tuple(read["span"])), read["field"])
    return index


def field_of(
    finding: Finding, index: dict[tuple[str, str, tuple[int, ...]], str], known: set[str]
) -> str | None:
    """The field a finding reads, or None when it cannot be told."""
    s = finding.span
    hit = index.get((finding.rule, finding.path, (s.line, s.column, s.end_line, s.end_column)))
    if hit:
        return hit
    for pattern, text in (
        (_MESSAGE, finding.message),
        (_GETATTR, finding.snippet),
        (_ATTRIBUTE, finding.snippet),
    ):
        m = pattern.search(text)
        if m and (not known or m.group(1) in known):
            return m.group(1)
    return None
