"""Inline SVG charts for the HTML report, laid out here (not in the browser) so
the page is deterministic and needs no script to draw.

Every chart is an <svg data-chart=NAME data-points=N> whose N data points are
the elements marked `data-point`, so a test (or a reader of the DOM) can count
and read them.
"""

from __future__ import annotations

import math
from html import escape

from ctxlint.report.audit.model import Audit, HistoryPoint, RuleRow, Tally, folder_of

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
NEW_COLOR = "#e5484d"
BASELINED_COLOR = "#f5a524"
STALE_COLOR = "#9aa4b2"


def rule_colors(ids: list[str]) -> dict[str, str]:
    return {rid: PALETTE[i % len(PALETTE)] for i, rid in enumerate(ids)}


def _a(value: object) -> str:
    return escape(str(value), quote=True)


def _n(x: float) -> str:
    """Coordinates rounded so the bytes do not depend on float noise."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _nice_max(value: int) -> int:
    if value <= 5:
        return max(value, 1)
    step = 10 ** int(math.log10(value))
    for mult in (1, 2, 2.5, 5, 10):
        if value <= mult * step:
            return int(mult * step)
    return int(10 * step)


def _ticks(top: int, count: int = 5) -> list[int]:
    step = max(1, math.ceil(top / count))
    return list(range(0, top + 1, step))


# -- findings by rule ------------------------------------------------------------------


def rules_chart(rules: list[RuleRow]) -> str:
    label_w, row_h, width = 230, 34, 1000
    plot_w = width - label_w - 70
    height = row_h * len(rules) + 16
    top = max((r.found + r.stale for r in rules), default=0) or 1
    parts = [
        f'<svg class="chart" data-chart="rules" data-points="{len(rules)}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="findings by rule">'
    ]
    for i, r in enumerate(rules):
        y = 8 + i * row_h
        x = label_w
        parts.append(
            f'<g class="bar" data-point="" data-rule="{_a(r.id)}" data-found="{r.found}" '
            f'data-new="{r.new}" data-baselined="{r.baselined}" data-stale="{r.stale}">'
            f"<title>{_a(r.id)} {_a(r.name)}: {r.found} found, {r.new} new, "
            f"{r.baselined} baselined, {r.stale} stale</title>"
            f'<text class="label" x="{label_w - 12}" y="{_n(y + row_h / 2)}" '
            f'text-anchor="end" dominant-baseline="middle"><tspan class="rid">{_a(r.id)}</tspan>'
            f" {_a(r.name)}</text>"
            f'<rect class="track" x="{x}" y="{y + 5}" width="{plot_w}" height="{row_h - 10}" rx="4"/>'
        )
        for value, color, cls in (
            (r.baselined, BASELINED_COLOR, "baselined"),
            (r.new, NEW_COLOR, "new"),
            (r.stale, STALE_COLOR, "stale"),
        ):
            if value:
                w = plot_w * value / top
                parts.append(
                    f'<rect class="seg {cls}" x="{_n(x)}" y="{y + 5}" width="{_n(w)}" '
                    f'height="{row_h - 10}" rx="3" fill="{color}"/>'
                )
                x += w
        parts.append(
            f'<text class="value" x="{_n(x + 8)}" y="{_n(y + row_h / 2)}" '
            f'dominant-baseline="middle">{r.found}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


# -- treemap of the package ------------------------------------------------------------

Rect = tuple[str, float, float, float, float]


def _worst(areas: list[float], short: float) -> float:
    s = sum(areas)
    return max(max(short * short * a / (s * s), s * s / (short * short * a)) for a in areas)


def squarify(values: list[tuple[str, float]], x: float, y: float, w: float, h: float) -> list[Rect]:
    """Squarified treemap (Bruls, Huizing, van Wijk): values sorted descending."""
    total = sum(v for _, v in values)
    if total <= 0 or w <= 0 or h <= 0:
        return []
    items = [(k, v * w * h / total) for k, v in values if v > 0]
    out: list[Rect] = []
    while items:
        short = min(w, h)
        row = [items[0]]
        i = 1
        while i < len(items) and _worst([a for _, a in [*row, items[i]]], short) <= _worst(
            [a for _, a in row], short
        ):
            row.append(items[i])
            i += 1
        items = items[i:]
        area = sum(a for _, a in row)
        if w >= h:  # a column on the left
            t = area / h
            yy = y
            for k, a in row:
                out.append((k, x, yy, t, a / t))
                yy += a / t
            x, w = x + t, w - t
        else:  # a row on top
            t = area / w
            xx = x
            for k, a in row:
                out.append((k, xx, y, a / t, t))
                xx += a / t
            y, h = y + t, h - t
    return out


def _heat_fill(value: int, top: int) -> str:
    """Light amber to deep red, by share of the largest value."""
    t = 0.0 if top <= 1 else (value - 1) / (top - 1)
    t = math.sqrt(t)  # one huge file should not wash out the rest
    lo, hi = (253, 219, 150), (190, 30, 45)
    r, g, b = (round(lo[i] + (hi[i] - lo[i]) * t) for i in range(3))
    return f"#{r:02x}{g:02x}{b:02x}"


def _fit(text: str, width: float, char: float = 6.6) -> str | None:
    room = int((width - 8) / char)
    if room < 4:
        return None
    return text if len(text) <= room else "…" + text[-(room - 1) :]


def treemap(folders: list[Tally], files: list[Tally], width: int = 1000, height: int = 460) -> str:
    head = (
        f'<svg class="chart treemap" data-chart="treemap" data-points="{len(files)}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="findings by folder and file">'
    )
    if not files:  # an empty box would only be blank space on the page
        return head.replace(f'viewBox="0 0 {width} {height}"', 'width="0" height="0"') + "</svg>"
    by_folder: dict[str, list[Tally]] = {}
    for f in files:
        by_folder.setdefault(folder_of(f.key), []).append(f)
    top = max((f.total for f in files), default=0)
    parts = [head]
    for key, x, y, w, h in squarify([(t.key, t.total) for t in folders], 0, 0, width, height):
        total = sum(f.total for f in by_folder.get(key, []))
        parts.append(
            f'<g class="folder" data-folder="{_a(key)}"><title>{_a(key)}: {total} findings</title>'
            f'<rect class="frame" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"/>'
        )
        label = _fit(f"{key}  {total}", w) if h > 44 else None
        if label:
            parts.append(
                f'<text class="folder-label" x="{_n(x + 5)}" y="{_n(y + 13)}">{_a(label)}</text>'
            )
            inner = (x + 2, y + 18, w - 4, h - 20)
        else:
            inner = (x + 1.5, y + 1.5, w - 3, h - 3)
        members = [(f.key, f.total) for f in by_folder.get(key, [])]
        tallies = {f.key: f for f in by_folder.get(key, [])}
        for path, fx, fy, fw, fh in squarify(members, *inner):
            t = tallies[path]
            detail = ", ".join(f"{r} {n}" for r, n in t.counts.items())
            parts.append(
                f'<g class="cell" data-point="" data-path="{_a(path)}" data-value="{t.total}">'
                f"<title>{_a(path)}: {t.total} findings ({_a(detail)})</title>"
                f'<rect x="{_n(fx + 0.5)}" y="{_n(fy + 0.5)}" width="{_n(max(fw - 1, 0.5))}" '
                f'height="{_n(max(fh - 1, 0.5))}" rx="2" fill="{_heat_fill(t.total, top)}"/>'
            )
            name = _fit(path.rsplit("/", 1)[-1], fw) if fh > 17 else None
            if name:
                dark = t.total > top * 0.35
                parts.append(
                    f'<text class="cell-label{" on-dark" if dark else ""}" x="{_n(fx + 5)}" '
                    f'y="{_n(fy + 14)}">{_a(name)}</text>'
                )
                if fh > 32:
                    parts.append(
                        f'<text class="cell-count{" on-dark" if dark else ""}" x="{_n(fx + 5)}" '
                        f'y="{_n(fy + 28)}">{t.total}</text>'
                    )
            parts.append("</g>")
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


# -- burn-down ---------------------------------------------------------------------------


LABEL_W = 72  # a date label (10 characters at 10.5 px) and a gap, in viewBox units


def _x_labels(n: int, plot_w: float) -> list[int]:
    """Which commits get an x label: evenly spaced, the first and the last always,
    and never two closer than a label's width (the last one used to land on its
    neighbour: 20 commits labelled every other ended with 18 and 19)."""
    if n <= 1:
        return list(range(n))
    every = max(1, math.ceil(LABEL_W * (n - 1) / plot_w))
    shown = list(range(0, n, every))
    if shown[-1] != n - 1:
        if n - 1 - shown[-1] < every:
            shown.pop()
        shown.append(n - 1)
    return shown


def burndown(points: list[HistoryPoint], ids: list[str]) -> str:
    """Stacked areas, one layer per rule, oldest commit left; a dot per (commit, rule)."""
    width, height = 1000, 380
    left, right, top_m, bottom = 52, 44, 16, 64
    plot_w, plot_h = width - left - right, height - top_m - bottom
    colors = rule_colors(ids)
    n = len(points)
    ymax = _nice_max(max((p.total for p in points), default=0))

    def px(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def py(v: float) -> float:
        return top_m + plot_h - plot_h * v / ymax

    parts = [
        f'<svg class="chart burndown" data-chart="burndown" data-points="{n * len(ids)}" '
        f'data-commits="{n}" data-rules="{len(ids)}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="findings per rule over the last commits">'
    ]
    for tick in _ticks(ymax):
        y = py(tick)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{_n(y)}" y2="{_n(y)}"/>'
            f'<text class="tick" x="{left - 8}" y="{_n(y)}" text-anchor="end" '
            f'dominant-baseline="middle">{tick}</text>'
        )
    for i in _x_labels(n, plot_w):
        p, x = points[i], px(i)
        parts.append(
            f'<text class="tick x" x="{_n(x)}" y="{height - bottom + 18}" '
            f'text-anchor="middle">{_a(p.short)}</text>'
            f'<text class="tick x date" x="{_n(x)}" y="{height - bottom + 33}" '
            f'text-anchor="middle">{_a(p.date[:10])}</text>'
        )
    base = [0] * n
    layers, dots = [], []
    for rid in ids:
        values = [p.counts.get(rid, 0) for p in points]
        tops = [b + v for b, v in zip(base, values, strict=True)]
        upper = [f"{_n(px(i))},{_n(py(t))}" for i, t in enumerate(tops)]
        lower = [f"{_n(px(i))},{_n(py(b))}" for i, b in reversed(list(enumerate(base)))]
        color = colors[rid]
        if n > 1 and any(values):  # an all-zero layer would only redraw the edge below
            layers.append(
                f'<g class="layer" data-rule="{_a(rid)}">'
                f'<polygon points="{" ".join(upper + lower)}" fill="{color}" fill-opacity="0.55"/>'
                f'<polyline points="{" ".join(upper)}" fill="none" stroke="{color}" '
                f'stroke-width="2"/></g>'
            )
        for i, (p, v) in enumerate(zip(points, values, strict=True)):
            dots.append(
                f'<circle class="dot" data-point="" data-rule="{_a(rid)}" '
                f'data-commit="{_a(p.short)}" data-value="{v}" cx="{_n(px(i))}" '
                f'cy="{_n(py(tops[i]))}" r="3.5" fill="{color}">'
                f"<title>{_a(p.short)} {_a(rid)}: {v}</title></circle>"
            )
        base = tops
    parts += layers + dots
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{_n(py(0))}" y2="{_n(py(0))}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def legend(ids: list[str], names: dict[str, str]) -> str:
    colors = rule_colors(ids)
    items = "".join(
        f'<button type="button" class="key" data-rule="{_a(rid)}">'
        f'<i style="background:{colors[rid]}"></i>{_a(rid)} <span>{_a(names.get(rid, ""))}</span>'
        "</button>"
        for rid in ids
    )
    return f'<div class="legend">{items}</div>'


def page_charts(audit: Audit) -> dict[str, str]:
    """Every chart of the page, by name."""
    out = {"rules": rules_chart(audit.rules), "treemap": treemap(audit.folders, audit.files)}
    if audit.history is not None:
        out["burndown"] = burndown(audit.history, audit.rule_ids)
    return out
