"""The audit in the terminal, with rich: tables, bars and a heat table.

User-controlled text (paths, scopes, messages) always goes through `Text` or
plain cells with markup off, so "[red]" in a scope name prints literally.
"""

from __future__ import annotations

import io
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ctxlint.core.console import UNWRAPPED, plain_console
from ctxlint.core.shown_paths import opener
from ctxlint.report.audit.model import Audit, DerivedSet, Tally

TOP = 10  # rows of the "top" tables
HEAT = ("grey50", "yellow", "dark_orange", "red", "bold white on red")
SPARK = "▁▂▃▄▅▆▇█"


def _heat(n: int, top: int) -> Text:
    if n == 0:
        return Text("·", style="grey35")
    level = min(len(HEAT) - 1, 1 + (n * (len(HEAT) - 2)) // max(top, 1))
    return Text(str(n), style=HEAT[level])


def _bar(n: int, top: int, width: int = 20) -> Text:
    cells = round(width * n / top) if top else 0
    return Text("█" * cells + "·" * (width - cells) if n else "", style="red")


def _room(room: int, width: int) -> int:
    """A path column's room: `room` at a terminal; whole paths when the console
    is not one (a pipe or file is never wrapped, so nothing needs cutting)."""
    return width if width >= UNWRAPPED else room


def _left_trim(text: str, width: int) -> str:
    """Paths lose their head, not their tail: the file name is what matters."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _of(shown: int, total: int) -> str:
    return f" (top {shown} of {total})" if total > shown else f" ({total})"


def _breakdown(counts: dict[str, int]) -> str:
    return "  ".join(f"{rule}×{n}" for rule, n in counts.items())


def _table(title: str, *cols: str, **kw: Any) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, **kw)
    for col in cols:
        right = col in ("found", "new", "baselined", "stale", "allowed", "files", "total", "reads")
        table.add_column(col, justify="right" if right else "left")
    return table


def _header(audit: Audit) -> Panel:
    new = sum(r.new for r in audit.rules)
    stale = sum(r.stale for r in audit.rules)
    line = Text()
    line.append(f"{audit.total}", style="bold")
    line.append(f" findings in {len(audit.files)} of {audit.files_checked} files   ")
    line.append(f"{new} new", style="bold red" if new else "green")
    line.append(f"   {audit.total - new} baselined   ")
    line.append(f"{stale} stale", style="yellow" if stale else "")
    if audit.errors:
        line.append(f"   {len(audit.errors)} unparsable", style="bold red")
    where = audit.root + (f"  ({', '.join(audit.paths)})" if audit.paths else "")
    sub = Text(where, style="dim")
    if audit.baseline:  # root-relative (or absolute): as it opens from here
        sub.append(f"   baseline {opener(audit.root)(audit.baseline)}", style="dim")
    return Panel(
        Group(line, sub),
        title=Text(f"ctxlint audit · {audit.project}"),  # a project name is not markup
        title_align="left",
        expand=False,
    )


def _rules(audit: Audit, width: int) -> Table:
    table = _table("Findings by rule", "rule", "name", "found", "new", "baselined", "stale")
    table.add_column("allowed", justify="right")
    table.add_column("")
    top = max((r.found for r in audit.rules), default=0)
    for r in audit.rules:
        table.add_row(
            r.id,
            r.name,
            str(r.found),
            Text(str(r.new), style="bold red" if r.new else ""),
            str(r.baselined),
            Text(str(r.stale), style="yellow" if r.stale else ""),
            str(r.allowed),
            _bar(r.found, top, 20 if width >= 100 else 8),
        )
    return table


def _heat_table(audit: Audit, width: int) -> Table:
    ids = audit.rule_ids
    table = _table(f"Heat by package folder{_of(TOP, len(audit.folders))}", "folder")
    table.add_column("files", justify="right")
    for rid in ids:
        table.add_column(rid.removeprefix("CTX"), justify="right")
    table.add_column("total", justify="right", style="bold")
    top = max((n for t in audit.folders for n in t.counts.values()), default=0)
    # paths lose their head, not rich's ellipsis on their tail: leave the numbers their room
    room = _room(max(12, min(44, width - 6 * len(ids) - 24)), width)
    for t in audit.folders[:TOP]:
        cells = [_heat(t.counts.get(rid, 0), top) for rid in ids]
        table.add_row(Text(_left_trim(t.key, room)), str(t.files), *cells, str(t.total))
    return table


def _tally_table(title: str, rows: list[Tally], scoped: bool, width: int) -> Table:
    table = _table(title, "file" if not scoped else "scope", "total", "by rule")
    widest = max((len(_breakdown(t.counts)) for t in rows[:TOP]), default=0)
    room = _room(max(16, min(56, width - widest - 16)), width)
    for t in rows[:TOP]:
        if scoped:
            path, _, scope = t.key.partition("::")
            label = Text(_left_trim(scope, room), style="bold")
            label.append(f"\n{_left_trim(path, room)}", style="dim")
        else:
            label = Text(_left_trim(t.key, room))
        table.add_row(label, str(t.total), _breakdown(t.counts))
    return table


def _fields(audit: Audit) -> Table:
    table = _table(
        f"Fields read off records most often{_of(TOP + 5, len(audit.fields))}",
        "field",
        "reads",
        "by rule",
        "should come from",
    )
    for f in audit.fields[: TOP + 5]:
        source = f.bag or (f"namespace {f.namespace}" if f.namespace else "(no bag: not a field)")
        table.add_row(f.field, str(f.reads), _breakdown(f.counts), Text(source, style="cyan"))
    return table


def _preview(s: DerivedSet, width: int = 60) -> str:
    value = s.value
    if isinstance(value, dict):
        items = [f"{k}: {v}" if isinstance(v, str) else str(k) for k, v in value.items()]
    elif isinstance(value, list):
        items = [str(v) for v in value]
    else:
        return str(value)
    text = ", ".join(items)
    return text if len(text) <= width else text[: width - 1] + "…"


def _sets(audit: Audit, width: int) -> Table:
    # rich drops whole no_wrap columns when a row is too wide: size the preview
    # to what the other columns leave instead
    name_w = min(34, max((len(s.name) for s in audit.sets), default=4))
    room = min(160, max(12, width - name_w - 10 - 9 - 12))  # a preview, whatever the width
    table = _table("Derived sets", "from", "set", "size")
    table.add_column("entries", no_wrap=True, overflow="ellipsis", max_width=room)
    last = None
    for s in audit.sets:
        size = "" if s.size is None else str(s.size)
        if s.members is not None:
            size += f" ({s.members})"
        preview = "" if isinstance(s.value, int) else _preview(s, room)
        table.add_row(
            s.section if s.section != last else "", Text(s.name), size, Text(preview, style="dim")
        )
        last = s.section
    return table


def _spark(values: list[int]) -> str:
    top = max(values, default=0)
    if not top:
        return SPARK[0] * len(values)
    return "".join(SPARK[min(len(SPARK) - 1, v * (len(SPARK) - 1) // top)] for v in values)


def _history(audit: Audit) -> Table:
    points = audit.history or []
    # `--trees` points have no commit date: each is a whole tree checked with
    # no baseline, so its counts are every finding, pin findings included
    title = (
        f"Burn-down: last {len(points)} commits"
        if any(p.date for p in points) or not points
        else f"Findings per tree ({len(points)} trees, no baseline: pin findings included)"
    )
    table = _table(title, "rule", min_width=56)
    table.add_column("trend")
    table.add_column("first", justify="right")
    table.add_column("now", justify="right")
    table.add_column("change", justify="right")
    for rid in audit.rule_ids:
        values = [p.counts.get(rid, 0) for p in points]
        first, last = (values[0], values[-1]) if values else (0, 0)
        delta = last - first
        style = "green" if delta < 0 else "red" if delta > 0 else "dim"
        table.add_row(rid, _spark(values), str(first), str(last), Text(f"{delta:+d}", style=style))
    totals = [p.total for p in points]
    if totals:
        delta = totals[-1] - totals[0]
        table.add_section()
        table.add_row(
            Text("total", style="bold"),
            _spark(totals),
            str(totals[0]),
            str(totals[-1]),
            Text(f"{delta:+d}", style="bold green" if delta < 0 else "bold"),
        )
    broken = [p for p in points if p.error]
    if broken:
        table.caption = f"{len(broken)} commit(s) could not be checked (counted as 0)"
    return table


def print_audit(audit: Audit, console: Console) -> None:
    console.print(_header(audit))
    width = console.width
    console.print(_rules(audit, width))
    if audit.folders:
        console.print(_heat_table(audit, width))
        files = f"Top files{_of(TOP, len(audit.files))}"
        console.print(_tally_table(files, audit.files, False, width))
        scopes = f"Top scopes{_of(TOP, len(audit.scopes))}"
        console.print(_tally_table(scopes, audit.scopes, True, width))
    if audit.fields:
        console.print(_fields(audit))
    console.print(_sets(audit, width))
    if audit.history is not None:
        console.print(_history(audit))
    if audit.errors:
        table = _table("Files that could not be checked", "path", "error")
        for e in audit.errors:
            table.add_row(Text(e["path"]), Text(e["message"]))
        console.print(table)


def render_terminal(audit: Audit, *, width: int | None = None) -> str:
    """The terminal report as plain text (for --output and the docs); unwrapped
    unless a width is given."""
    buf = io.StringIO()
    console = plain_console(buf)
    if width is not None:
        console.width = width
    print_audit(audit, console)
    # rich pads every line to the width: trailing blanks only bloat files and diffs
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
