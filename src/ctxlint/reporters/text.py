"""The human report, rendered with rich.

New findings are printed in full with a code frame; baselined ones only counted
(they are accepted debt, not news). Then stale entries, errors, a per-rule summary
table and one closing line. All user-controlled text goes through `Text`, never
markup, so a message containing "[red]" prints literally.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxlint.model import NEW, Finding, Result
from ctxlint.reporters._common import UPDATE_HINT, plural, rule_catalogue, rule_title

CONTEXT = 2  # source lines shown above and below the offending one
TAB = 4
# The line breaks Python's tokenizer and LibCST count; str.splitlines() knows more.
_NEWLINE = re.compile(r"\r\n|\r|\n")


class _Sources:
    """Reads each source once, lazily; a missing or unreadable file yields no frame."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            try:
                with open(os.path.join(self.root, path), encoding="utf-8", errors="replace") as fh:
                    lines = _NEWLINE.split(fh.read())
            except OSError:
                self._lines[path] = None
            else:
                if lines and lines[-1] == "":
                    lines.pop()  # a final newline ends the last line; it starts none
                self._lines[path] = lines
        return self._lines[path]


def _frame(f: Finding, lines: list[str], indent: str = "    ") -> Text | None:
    s = f.span
    if not 1 <= s.line <= len(lines):
        return None
    first, last = max(1, s.line - CONTEXT), min(len(lines), s.line + CONTEXT)
    width = len(str(last))
    out = Text(no_wrap=True, overflow="ellipsis")
    for n in range(first, last + 1):
        src = lines[n - 1].expandtabs(TAB)
        hit = n == s.line
        out.append(indent)
        out.append(" > " if hit else "   ", style="bold red" if hit else "")
        out.append(f"{n:>{width}} | ", style="blue")
        out.append(src + "\n", style="bold" if hit else "dim")
        if hit:
            raw = lines[n - 1]
            start = len(raw[: s.column - 1].expandtabs(TAB))
            end_col = s.end_column if s.end_line == s.line else len(raw) + 1
            end = max(start + 1, len(raw[: end_col - 1].expandtabs(TAB)))
            out.append(indent + "   " + " " * width + " | ", style="blue")
            out.append(" " * start + "^" * (end - start) + "\n", style="bold red")
    out.rstrip()
    return out


def _group_by_path(findings: list[Finding]) -> Iterator[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f)
    yield from groups.items()


def _print_findings(result: Result, console: Console, show_source: bool) -> None:
    titles = {r.id: rule_title(r) for r in rule_catalogue(result)}
    sources = _Sources(result.root)
    quiet: list[tuple[str, int]] = []  # files with baselined findings only
    for path, group in _group_by_path(result.findings):
        new = [f for f in group if f.status == NEW]
        n_base = len(group) - len(new)
        if not new:
            quiet.append((path, n_base))
            continue
        header = Text(path, style="bold underline")
        counts = [plural(len(new), "new finding")]
        if n_base:
            counts.append(f"{n_base} baselined")
        header.append(f"  ({', '.join(counts)})", style="")
        console.print(header)
        for f in new:
            s = f.span
            line = Text("  ")
            line.append(f"{path}:{s.line}:{s.column}", style="bold")
            line.append("  ")
            line.append(titles[f.rule], style="bold red")
            line.append("  NEW", style="red")
            console.print(line)
            console.print(Text("    " + f.message.replace("\n", "\n    ")))
            console.print(Text(f"    in {f.scope}", style="dim"))
            lines = sources.lines(path) if show_source else None
            frame = _frame(f, lines) if lines is not None else None
            if frame is not None:
                console.print(frame, crop=True)
            console.print()
        if n_base:
            console.print(Text(f"  + {plural(n_base, 'baselined finding')} not shown", style="dim"))
            console.print()
    if quiet:
        console.print(Text("Baselined findings (accepted, not shown):", style="dim"))
        for path, n in quiet:
            console.print(Text(f"  {path}: {n}", style="dim"))
        console.print()


def _print_stale(result: Result, console: Console) -> None:
    if not result.stale:
        return
    style = "bold red" if result.strict else "bold yellow"
    head = Text(plural(len(result.stale), "stale baseline entry", "stale baseline entries"), style)
    head.append(f" (no longer found; {UPDATE_HINT} to drop them)", style="")
    console.print(head)
    for e in result.stale:
        line = Text(f"  {e.path}  ")
        line.append(e.rule, style="bold")
        line.append(f"  in {e.scope}", style="dim")
        if e.snippet:
            line.append(f"  {e.snippet}", style="dim")
        console.print(line, no_wrap=True, overflow="ellipsis")
    console.print()


def _print_errors(result: Result, console: Console) -> None:
    if not result.errors:
        return
    head = Text(plural(len(result.errors), "error"), style="bold red")
    head.append(": these files were not checked", style="")
    console.print(head)
    for err in result.errors:
        console.print(Text(f"  {err.path}: {err.message}"))
    console.print()


def summary_table(result: Result) -> Table:
    names = {r.id: r.name for r in rule_catalogue(result)}
    table = Table(title=None, show_footer=True, box=None, pad_edge=False, header_style="bold")
    summary = result.summary()
    totals = [
        sum(getattr(s, k) for s in summary.values()) for k in ("found", "baselined", "new", "stale")
    ]
    table.add_column("Rule", footer="total")
    table.add_column("Name")
    for label, total in zip(("Found", "Baselined", "New", "Stale"), totals, strict=True):
        table.add_column(label, justify="right", footer=str(total))
    for rule, s in summary.items():
        table.add_row(
            rule,
            names.get(rule, ""),
            str(s.found),
            str(s.baselined),
            Text(str(s.new), style="bold red" if s.new else ""),
            Text(str(s.stale), style="yellow" if s.stale else ""),
        )
    return table


def closing_line(result: Result) -> Text:
    n_new, n_stale, n_err = len(result.new_findings), len(result.stale), len(result.errors)
    n_base = len(result.findings) - n_new
    if n_new or n_stale or n_err:
        msg = ", ".join(
            (
                plural(n_new, "new finding"),
                plural(n_stale, "stale baseline entry", "stale baseline entries"),
                plural(n_err, "error"),
            )
        )
        failing = result.exit_code() != 0
        return Text(msg, style="bold red" if failing else "bold yellow")
    return Text(
        f"All clear: {plural(result.files_checked, 'file')} checked, "
        f"{plural(n_base, 'baselined finding')}",
        style="bold green",
    )


def print_text(result: Result, console: Console, *, show_source: bool = True) -> None:
    """Print the full human report to `console`."""
    _print_findings(result, console, show_source)
    _print_stale(result, console)
    _print_errors(result, console)
    if result.rules or result.findings or result.stale:
        console.print(summary_table(result))
        console.print()
    console.print(closing_line(result))


def print_timings(result: Result, console: Console) -> None:
    """The `--timings` table: seconds per phase or rule, slowest first."""
    if not result.timings:
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("Phase / rule")
    table.add_column("Seconds", justify="right")
    for name, secs in sorted(result.timings.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(name, f"{secs:.3f}")
    console.print(table)


def render_text(result: Result, *, width: int = 100, show_source: bool = True) -> str:
    """The text report as a plain string (for --output FILE and tests)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True, color_system=None, highlight=False)
    print_text(result, console, show_source=show_source)
    return buf.getvalue()
