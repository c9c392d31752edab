"""GitHub Actions workflow commands: one annotation per new finding.

A pin change is bookkeeping, not a finding: a `notice` (titled so), never an
`error`, though it fails the run until `baseline update` records it.

Paths are relative to the repository's root (the git work tree holding the
project, else the working folder), where the runner resolves them.
Escaping follows the runner's toolkit: in the message `%`, CR and LF are encoded;
property values additionally encode `:` and `,`, which delimit the properties.
"""

from __future__ import annotations

from ctxlint.core.findings import PIN, Result
from ctxlint.report.formats._common import report_base, rule_catalogue, rule_title, update_hint


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: object) -> str:
    """`::kind k=v,...::message`, properties in the order given, None values dropped."""
    body = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{kind}{' ' + body if body else ''}::{escape_data(message)}"


def render(result: Result) -> str:
    titles = {r.id: rule_title(r) for r in rule_catalogue(result)}
    base = report_base(result.root)  # the runner resolves `file=` from the repository root
    lines = []
    for f in result.new_findings:
        s = f.span
        lines.append(
            command(
                "notice" if f.kind == PIN else "error",
                f.message,
                file=base.path(f.path),
                line=s.line,
                col=s.column,
                endLine=s.end_line,
                endColumn=s.end_column,
                # a pin change fails the run as a finding does, but it is bookkeeping
                title=titles[f.rule]
                + (" (a pin change that baseline update records)" if f.kind == PIN else ""),
            )
        )
    # Stale entries fail only under --strict; otherwise they are a nudge.
    kind = "error" if result.strict else "warning"
    for e in result.stale:
        lines.append(
            command(
                kind,
                f"Baseline entry for {e.rule} in {e.scope} no longer matches any finding; "
                f"{update_hint(result)}.",
                file=base.path(e.path),
                title=f"{titles[e.rule]}: stale baseline entry",
            )
        )
    for err in result.errors:
        lines.append(
            command(
                "error", err.message, file=base.path(err.path), title="ctxlint: file not checked"
            )
        )
    return "".join(line + "\n" for line in lines)
