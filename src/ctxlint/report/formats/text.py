"""The human report, rendered with rich.

New findings are printed in full with a code frame; baselined ones only counted,
once, in the closing line (they are accepted debt, not news). Then stale
entries, errors and that one closing line, which also says what was checked; the
per-rule table comes with --statistics. A clean run is that line alone.
Paths are seen from the working folder, as in concise (and ruff). All user-controlled text goes through `Text`, never
markup, so a message containing "[red]" prints literally.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxlint.core.console import plain_console
from ctxlint.core.findings import PIN, Finding, Result, pin_changes
from ctxlint.core.pysource import SourceError, decode
from ctxlint.core.shown_paths import opener
from ctxlint.report.formats._common import (
    moved_findings,
    moved_hint,
    plural,
    rule_catalogue,
    rule_title,
    update_hint,
)

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
                with open(os.path.join(self.root, path), "rb") as fh:
                    data = fh.read()
            except OSError:
                self._lines[path] = None
            else:
                try:  # as the file was checked: its coding declaration or BOM decides
                    text = decode(data)
                except SourceError:  # (a file that was not checked: shown as best it can be)
                    text = data.decode("utf-8", errors="replace")
                # (no CR: str.split, 6 times the pattern's speed; a report reads
                # every file with a finding, 63 thousand lines on sglang 0.5.23)
                lines = text.split("\n") if "\r" not in text else _NEWLINE.split(text)
                if lines and lines[-1] == "":
                    lines.pop()  # a final newline ends the last line; it starts none
                self._lines[path] = lines
        return self._lines[path]


def _window(f: Finding, lines: list[str]) -> tuple[int, int] | None:
    """The first and last line a finding's code frame shows (None: off the file)."""
    if not 1 <= f.span.line <= len(lines):
        return None
    return max(1, f.span.line - CONTEXT), min(len(lines), f.span.line + CONTEXT)


def _frame(f: Finding, lines: list[str], indent: str = "    ") -> Text | None:
    s = f.span
    if (window := _window(f, lines)) is None:
        return None
    first, last = window
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


def _print_indented(console: Console, text: Text, indent: int) -> None:
    """`text` wrapped to the console's width less `indent`, every line indented:
    a line rich wraps keeps the indent of the first (no trailing blanks)."""
    width = max(20, console.width - indent)
    for line in text.wrap(console, width):
        line.rstrip()
        console.print(Text(" " * indent) + line, no_wrap=True)


def _group_by_path(findings: list[Finding]) -> Iterator[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f)
    yield from groups.items()


def _print_findings(
    result: Result, console: Console, show_source: bool, show_details: bool = False
) -> None:
    """New findings in full, grouped by file. Baselined ones are accepted debt,
    not news: only the closing line counts them (once, for the whole run). Pin
    changes are bookkeeping, not findings: their own section follows."""
    titles = {r.id: rule_title(r) for r in rule_catalogue(result)}
    sources = _Sources(result.root)
    shown = opener(result.root)  # as concise and ruff: openable from the working folder
    violations = [f for f in result.new_findings if f.kind != PIN]
    blocks = BLOCKS.to(console)
    for path, group in _group_by_path(violations):
        header = Text(shown(path), style="bold underline")
        header.append(f"  ({plural(len(group), 'new finding')})", style="")
        console.print(header)
        for f in group:
            lines = sources.lines(path) if show_source else None
            details = f.details if show_details else ""
            title = titles[f.rule]
            key = (shown(path), title, f.span, f.message, f.scope, details, _shows(f, lines))
            if console.record or console._buffer_index:  # (its buffer is read: no text)
                _print_block(console, f, title, shown(path), details, lines)
                continue
            drawn = blocks.get(key)
            if drawn is None:
                with console.capture() as capture:
                    _print_block(console, f, title, shown(path), details, lines)
                drawn = blocks.put(key, capture.get())
            console.file.write(drawn)
    blocks.done()
    _print_pins(result, console, titles)


def _print_block(
    console: Console, f: Finding, title: str, path: str, details: str, lines: list[str] | None
) -> None:
    """One new finding: its line, message, scope, details, code frame and a blank line."""
    _print_one(console, f, title, "  NEW", path)
    if details:
        _print_indented(console, Text(details), 6)
    frame = _frame(f, lines) if lines is not None else None
    if frame is not None:
        console.print(frame, crop=True)
    console.print()


def _shows(f: Finding, lines: list[str] | None) -> tuple[int, tuple[str, ...]] | None:
    """What a finding's code frame shows of its file (`_frame` reads no more):
    the lines around the finding's and how many the file has past them."""
    if lines is None or (window := _window(f, lines)) is None:
        return None
    first, last = window
    return last, tuple(lines[first - 1 : last])


class Blocks:
    """Each new finding's block as the last report drew it, by all it shows
    (path, title, span, message, scope, details, the frame's source lines)
    and the console it went to (width, colours, terminal): a resident
    renderer (the daemon) draws the report again after an edit moved the
    findings' lines of one file, and the other files' blocks are the same
    text (49% of such an answer on sglang 0.5.23 was the drawing). Only the
    blocks of the last report are kept."""

    def __init__(self) -> None:
        self.console: tuple[object, ...] | None = None
        self.last: dict[tuple[object, ...], str] = {}
        self.now: dict[tuple[object, ...], str] = {}

    def to(self, console: Console) -> Blocks:
        seen = (
            console.width,
            console.color_system,
            console.is_terminal,
            console.legacy_windows,
            console.encoding,
            console.no_color,
            console.tab_size,
        )
        if seen != self.console:
            self.console, self.last = seen, {}
        self.now = {}
        return self

    def get(self, key: tuple[object, ...]) -> str | None:
        drawn = self.last.get(key)
        if drawn is not None:
            self.now[key] = drawn
        return drawn

    def put(self, key: tuple[object, ...], drawn: str) -> str:
        self.now[key] = drawn
        return drawn

    def done(self) -> None:
        self.last, self.now = self.now, {}


BLOCKS = Blocks()


def _print_one(console: Console, f: Finding, title: str, tag: str, path: str) -> None:
    s = f.span
    line = Text("  ")
    line.append(f"{path}:{s.line}:{s.column}", style="bold")
    line.append("  ")
    line.append(title, style="bold red" if tag.strip() == "NEW" else "bold yellow")
    line.append(tag, style="red" if tag.strip() == "NEW" else "yellow")
    console.print(line)
    _print_indented(console, Text(f.message), 4)
    _print_indented(console, Text(f"in {f.scope}", style="dim"), 4)


def _print_pins(result: Result, console: Console, titles: dict[str, str]) -> None:
    """The sites of pin changes: what the derivation finds that the baseline does
    not pin yet (or pins otherwise). Not findings: `baseline update` records them."""
    pins = [f for f in result.new_findings if f.kind == PIN]
    if not pins:
        return
    head = Text(plural(len(pins), "pin change site"), style="bold yellow")
    head.append(
        f" (not findings: derived sets the baseline does not pin yet; after review, "
        f"{update_hint(result)} to record them)",
        style="",
    )
    console.print(head)
    shown = opener(result.root)
    for f in pins:
        _print_one(console, f, titles[f.rule], "  PIN", shown(f.path))
    console.print()


def _print_stale(result: Result, console: Console, *, entries: bool = True) -> None:
    if not result.stale:
        return
    style = "bold red" if result.strict else "bold yellow"
    head = Text(plural(len(result.stale), "stale baseline entry", "stale baseline entries"), style)
    moved = moved_findings(result)
    if moved:  # `baseline update` alone would drop these and refuse the findings they became
        head.append(
            f" (no longer found; {moved} moved to another file: after review, {moved_hint(result)} "
            "records the move)",
            style="",
        )
    else:
        head.append(f" (no longer found; {update_hint(result)} to drop them)", style="")
    console.print(head)
    if not entries:  # --statistics: the table counts them per rule
        console.print()
        return
    shown = opener(result.root)
    for e in result.stale:
        line = Text(f"  {shown(e.path)}  ")
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
    shown = opener(result.root)
    for err in result.errors:
        console.print(Text(f"  {shown(err.path)}: {err.message}"))
    console.print()


def summary_table(result: Result) -> Table:
    names = {r.id: r.name for r in rule_catalogue(result)}
    table = Table(title=None, show_footer=True, box=None, pad_edge=False, header_style="bold")
    summary = result.summary()
    # pin changes get a column only when there are some (counted by key, never baselined)
    keys = ("found", "baselined", "new", "stale") + (
        ("pins",) if any(s.pins for s in summary.values()) else ()
    )
    totals = [sum(getattr(s, k) for s in summary.values()) for k in keys]
    table.add_column("Rule", footer="total")
    table.add_column("Name")
    labels = {"found": "Found", "baselined": "Baselined", "new": "New", "stale": "Stale"}
    for key, total in zip(keys, totals, strict=True):
        table.add_column(labels.get(key, "Pin changes"), justify="right", footer=str(total))
    for rule, s in summary.items():
        table.add_row(
            rule,
            names.get(rule, ""),
            str(s.found),
            str(s.baselined),
            Text(str(s.new), style="bold red" if s.new else ""),
            Text(str(s.stale), style="yellow" if s.stale else ""),
            *([Text(str(s.pins), style="bold red" if s.pins else "")] if "pins" in keys else []),
        )
    return table


def _shown(path: str) -> str:
    """A path as the user would type it: relative to the working folder when under it."""
    try:
        rel = Path(path).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path
    return rel.as_posix() or "."


LISTED_RULES = 5  # a closing line names this many rules at most; more are counted


def _rules(ids: list[str]) -> str:
    """The rules a run checked: named when they are a few (`--select CTX101`),
    counted when they are many (every run would repeat the catalogue)."""
    if not ids:
        return "no rules"
    named = f" ({' '.join(ids)})" if len(ids) <= LISTED_RULES else ""
    return plural(len(ids), "rule") + named


def checked(result: Result) -> str:
    """What the run checked: files, root, rules, config and baseline (with its count)."""
    ids = [r.id for r in result.rules]
    n_base = len(result.findings) - len(result.new_findings)
    scope = f"{plural(result.files_checked, 'file')} under {_shown(result.root)}"
    if result.files_reported is not None:  # PATHs or --changed-since: the report is partial
        scope += f" (reporting on {result.files_reported})"
    parts = [
        scope,
        _rules(ids),
        f"config {_shown(result.config_path)}" if result.config_path else "no config file",
    ]
    if result.baseline_path:
        parts.append(
            f"baseline {_shown(result.baseline_path)} ({plural(n_base, 'baselined finding')})"
        )
    else:
        parts.append(plural(n_base, "baselined finding") if n_base else "no baseline")
    return ", ".join(parts)


def _per_rule(counts: dict[str, int]) -> str:
    return ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()))


def closing_line(result: Result) -> Text:
    """The one line every text run ends with: the verdict, then what was checked."""
    n_new, n_stale, n_err = len(result.new_violations), len(result.stale), len(result.errors)
    # pins are counted by key, apart from the findings, as `baseline update` counts them
    pins = pin_changes(result.findings)
    if n_new or pins or n_stale or n_err:
        msg = ", ".join(
            (
                plural(n_new, "new finding"),
                *(
                    [f"{plural(sum(pins.values()), 'pin change')} ({_per_rule(pins)})"]
                    if pins
                    else []
                ),
                plural(n_stale, "stale baseline entry", "stale baseline entries"),
                plural(n_err, "error"),
            )
        )
        failing = result.exit_code() != 0
        out = Text(msg, style="bold red" if failing else "bold yellow")
    else:
        out = Text("All clear", style="bold green")
    out.append(f": checked {checked(result)}")
    return out


def print_text(
    result: Result,
    console: Console,
    *,
    show_source: bool = True,
    statistics: bool = False,
    show_details: bool = False,
    quiet: bool = False,
) -> None:
    """Print the human report to `console`: new findings and stale entries (or,
    with `statistics`, the per-rule table that counts both instead, and only
    the stale entries' heading with its hint), errors, and the closing line
    (left out when `quiet`)."""
    if statistics:
        console.print(Text("ctxlint statistics", style="bold"))  # a table title would be padded
        console.print(summary_table(result))
        console.print()
    else:
        _print_findings(result, console, show_source, show_details)
    if result.strict or not quiet:  # -q: the stale entries only when they fail the run
        _print_stale(result, console, entries=not statistics)
    _print_errors(result, console)
    if not quiet:
        console.print(closing_line(result))


_RULE_PARTS = ("visit", "derive", "check")


def print_timings(result: Result, console: Console) -> None:
    """The `--timings` tables: wall seconds per phase, slowest first; then each
    rule's share, slowest first: its visitors' seconds during the walk (summed
    over the workers, and 0 for files whose facts came from the cache), its
    derive and its check."""
    if not result.timings:
        return
    phases: dict[str, float] = {}
    rules: dict[str, dict[str, float]] = {}
    for name, secs in result.timings.items():
        head, _, part = name.rpartition(" ")
        if part in _RULE_PARTS and head:
            rules.setdefault(head, {})[part] = secs
        else:
            phases[name] = secs
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("Phase")
    table.add_column("Seconds", justify="right")
    for name, secs in sorted(phases.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(name + (" (worker CPU)" if name == "parse" else ""), f"{secs:.3f}")
    console.print(table)
    if not rules:
        return
    console.print()
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("Rule")
    for part in (*_RULE_PARTS, "total"):
        table.add_column(part.capitalize(), justify="right")
    totals = {name: sum(parts.values()) for name, parts in rules.items()}
    for name in sorted(rules, key=lambda n: (-totals[n], n)):
        parts = rules[name]
        cells = [f"{parts[p]:.3f}" if p in parts else "-" for p in _RULE_PARTS]
        table.add_row(name, *cells, f"{totals[name]:.3f}")
    console.print(table)


def render_text(
    result: Result,
    *,
    show_source: bool = True,
    statistics: bool = False,
    quiet: bool = False,
    show_details: bool = False,
) -> str:
    """The text report as a plain, unwrapped string (for --output FILE and tests)."""
    buf = io.StringIO()
    print_text(
        result,
        plain_console(buf),
        show_source=show_source,
        statistics=statistics,
        show_details=show_details,
        quiet=quiet,
    )
    return buf.getvalue()
