"""One line per finding, `path:line:col: RULE message`, as ruff's
`--output-format concise`: for grep, editors' quickfix lists and CI logs.

Only new findings are listed (baselined ones are accepted debt); stale entries
and unreadable files follow, each on one line with the path first, then the
closing line of the text report unless `quiet`. Paths are relative to the
working folder (absolute outside it), as ruff prints them, so an editor or
`grep` run from there opens them whatever the project root is.
"""

from __future__ import annotations

from ctxlint.core.findings import PIN, Result
from ctxlint.core.shown_paths import opener


def _one_line(text: str) -> str:
    return " ".join(text.split())


def lines(result: Result, *, quiet: bool = False) -> list[str]:
    """The report's lines; `quiet` leaves out stale entries that do not fail
    the run (without --strict), as the text report's -q does."""
    shown = opener(result.root)
    out = [
        f"{shown(f.path)}:{f.span.line}:{f.span.column}: {f.rule}"
        + (" pin change:" if f.kind == PIN else "")  # bookkeeping, not a finding
        + f" {_one_line(f.message)}"
        for f in result.new_findings
    ]
    out += [  # the snippet tells entries of one scope apart (they were identical lines)
        f"{shown(s.path)}: {s.rule} stale baseline entry in {s.scope}"
        + (f" `{_one_line(s.snippet)}`" if s.snippet else "")
        + ": no longer found"
        for s in (result.stale if result.strict or not quiet else [])
    ]
    out += [f"{shown(e.path)}: error: {_one_line(e.message)}" for e in result.errors]
    return out


def render(result: Result, *, quiet: bool = False) -> str:
    from ctxlint.report.formats.text import closing_line  # rich: only for the closing line

    body = lines(result, quiet=quiet)
    if not quiet:
        body.append(closing_line(result).plain)
    return "".join(line + "\n" for line in body)
