"""Findings and file errors as LSP diagnostics, as ruff's server gives them:
the rule id as the code with a link to its doc, the finding's range, a new
finding an error and a baselined one a hint; the place a finding names
besides its own (CTX301's read in a callee) as related information."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from ctxlint.core.findings import NEW, PIN, FileError, Finding, RuleInfo
from ctxlint.report.formats.sarif import RELATED, RELATED_WHAT, project_home, related_place

SOURCE = "ctxlint"
# where CPython stopped, in a syntax error's message (core.pysource)
_WHERE = re.compile(r"at line (\d+), column (\d+)")


def rule_links(rules: list[RuleInfo]) -> dict[str, str]:
    """Rule id -> its doc's address (as SARIF's helpUri), for the rules that have one."""
    home = project_home()
    if not home:
        return {}
    return {r.id: f"{home}/blob/main/{r.spec_path}" for r in rules if r.spec_path}


def utf16(line: str, column: int) -> int:
    """A code-point column of `line` as the UTF-16 offset LSP counts by default."""
    head = line[:column]
    return len(head.encode("utf-16-le")) // 2


def _position(lines: list[str], line: int, column: int) -> types.Position:
    """1-based line and column -> an LSP position (0-based, UTF-16)."""
    row = max(line - 1, 0)
    text = lines[row] if row < len(lines) else ""
    return types.Position(line=row, character=utf16(text, max(column - 1, 0)))


def diagnostic(
    f: Finding,
    lines: list[str],
    links: dict[str, str],
    uri_of: Callable[[str], str],
) -> types.Diagnostic:
    s = f.span
    start = _position(lines, s.line, s.column)
    end = _position(lines, s.end_line, s.end_column)
    link = links.get(f.rule)
    message = f.message + (f"\n{f.details}" if f.details else "")
    data: dict[str, Any] = {"fingerprint": f.fingerprint, "rule": f.rule, "line": s.line}
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=_severity(f),
        code=f.rule,
        code_description=types.CodeDescription(href=link) if link else None,
        source=SOURCE,
        related_information=_hops(f, start, end, uri_of),
        data=data,
    )


def _severity(f: Finding) -> types.DiagnosticSeverity:
    """A new violation is an error; a pinned one a hint; a new pin (bookkeeping
    that `baseline update` records, as the GitHub format's notice) information."""
    if f.status != NEW:
        return types.DiagnosticSeverity.Hint
    return types.DiagnosticSeverity.Information if f.kind == PIN else types.DiagnosticSeverity.Error


def _hops(
    f: Finding, start: types.Position, end: types.Position, uri_of: Callable[[str], str]
) -> list[types.DiagnosticRelatedInformation] | None:
    """A finding that names a place besides its own (its data's `related`, as
    SARIF's related location: CTX301's bag read in a callee): the statement
    that leads there, with the call path from the details, and that place."""
    where = related_place(f.data.get(RELATED, ""))
    if where is None:
        return None
    path, line = where
    hops = next((x[6:] for x in f.details.splitlines() if x.startswith("path: ")), "")
    return [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri_of(f.path), range=types.Range(start=start, end=end)),
            message=f"call path starts here: {hops}" if hops else "the statement leading there",
        ),
        types.DiagnosticRelatedInformation(
            location=types.Location(
                uri=uri_of(path),
                range=types.Range(
                    start=types.Position(line=line - 1, character=0),
                    end=types.Position(line=line, character=0),
                ),
            ),
            message=str(f.data.get(RELATED_WHAT, "related")),
        ),
    ]


def error_diagnostic(e: FileError, lines: list[str]) -> types.Diagnostic:
    """A file that could not be checked (a syntax error): at CPython's position."""
    m = _WHERE.search(e.message)
    if m:
        start = _position(lines, int(m.group(1)), int(m.group(2)))
        end = types.Position(line=start.line, character=start.character + 1)
    else:
        start, end = types.Position(line=0, character=0), types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=e.message,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )
