"""Fingerprints: a finding's identity without line numbers.

A finding is named by its rule, path, scope, normalised snippet and its index
among identical ones in that scope, so moving code inside a file keeps it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from ctxlint.core.findings import Finding, Span
from ctxlint.program.rule import RawFinding


def fingerprint(rule: str, path: str, scope: str, snippet: str, index: int) -> str:
    raw = "\0".join((rule, path, scope, snippet, str(index))).encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()[:20]


def to_findings(raw: list[RawFinding]) -> list[Finding]:
    """Fingerprint each finding by its occurrence among identical ones in a scope."""
    groups: dict[tuple[str, str, str, str], list[RawFinding]] = defaultdict(list)
    for r in raw:
        key_scope = r.scope if r.key_scope is None else r.key_scope
        groups[(r.rule, r.path, key_scope, r.snippet)].append(r)
    out: list[Finding] = []
    for (rule, path, key_scope, snippet), members in groups.items():
        members.sort(key=lambda r: tuple(r.span))
        for i, r in enumerate(members):
            out.append(
                Finding(
                    rule=rule,
                    path=path,
                    span=Span(*r.span),
                    scope=r.scope,
                    message=r.message,
                    snippet=snippet,
                    fingerprint=fingerprint(rule, path, key_scope, snippet, i),
                    details=r.details,
                    data=dict(r.data),
                    kind=r.kind,
                )
            )
    out.sort(key=Finding.sort_key)
    return out
