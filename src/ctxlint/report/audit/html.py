"""The audit as one self-contained HTML page: inline CSS, inline SVG charts, a
few lines of inline script, and nothing fetched from anywhere."""

from __future__ import annotations

from html import escape

from ctxlint import __version__
from ctxlint.report.audit.assets import CSS, JS
from ctxlint.report.audit.charts import (
    BASELINED_COLOR,
    NEW_COLOR,
    STALE_COLOR,
    legend,
    page_charts,
    rule_colors,
)
from ctxlint.report.audit.model import Audit, DerivedSet, Tally

TOP = 25  # rows of the "top" tables
SET_ITEMS = 400  # entries listed per derived set (its size is always shown)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _breakable(value: object, sep: str = "/") -> str:
    """Escaped, with a line-break opportunity after each `sep` (`/` in a path, `.` in
    a qualname): a long one wraps at its separators before it wraps inside a name."""
    return _e(value).replace(sep, sep + "<wbr>")


def _chips(counts: dict[str, int], colors: dict[str, str]) -> str:
    return "".join(
        f'<span class="chip" style="background:{colors.get(r, "#888")}">{_e(r)} {n}</span>'
        for r, n in counts.items()
    )


def _header(audit: Audit) -> str:
    new = sum(r.new for r in audit.rules)
    stale = sum(r.stale for r in audit.rules)
    where = audit.root + (f" · {', '.join(audit.paths)}" if audit.paths else "")
    if audit.baseline:
        where += f" · baseline {audit.baseline}"
    kpis = [
        ("", audit.total, "findings"),
        ("new" if new else "good", new, "new"),
        ("", audit.total - new, "baselined"),
        ("stale" if stale else "", stale, "stale"),
        ("", f"{len(audit.files)}/{audit.files_checked}", "files with findings"),
        ("", len(audit.rules), "rules"),
    ]
    if audit.errors:
        kpis.append(("new", len(audit.errors), "unparsable"))
    cards = "".join(
        f'<div class="kpi {c}"><b>{_e(v)}</b><span>{_e(t)}</span></div>' for c, v, t in kpis
    )
    return (
        f'<header class="top"><h1>ctxlint audit<small>{_e(audit.project)}</small></h1>'
        f'<div class="where">{_e(where)}</div><div class="kpis">{cards}</div></header>'
    )


def _rules(audit: Audit, chart: str) -> str:
    rows = "".join(
        f"<tr><td><b>{_e(r.id)}</b></td><td>{_e(r.name)}</td><td>{_e(r.summary)}</td>"
        f'<td class="num">{r.found}</td><td class="num{" new" if r.new else ""}">{r.new}</td>'
        f'<td class="num">{r.baselined}</td><td class="num{" stale" if r.stale else ""}">'
        f'{r.stale}</td><td class="num">{r.allowed}</td></tr>'
        for r in audit.rules
    )
    swatches = "".join(
        f'<span><i style="background:{c}"></i>{t}</span>'
        for c, t in ((NEW_COLOR, "new"), (BASELINED_COLOR, "baselined"), (STALE_COLOR, "stale"))
    )
    return (
        '<section id="rules"><h2>Findings by rule</h2><p class="lead">What each rule finds '
        "now, and what the baseline allows: <i>baselined</i> findings are accepted debt, "
        "<i>new</i> ones fail <code>ctxlint check</code>, <i>stale</i> allowances are fixed "
        "code the baseline still pins.</p>"
        f'{chart}<div class="swatches">{swatches}</div>'
        '<table class="sortable"><thead><tr><th>rule</th><th>name</th><th>reports</th>'
        '<th class="num">found</th><th class="num">new</th><th class="num">baselined</th>'
        '<th class="num">stale</th><th class="num">allowed</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _heat(audit: Audit) -> str:
    ids = audit.rule_ids
    top = max((n for t in audit.folders for n in t.counts.values()), default=0)

    def cell(n: int) -> str:
        if not n:
            return '<td class="cell zero">·</td>'
        alpha = 0.12 + 0.78 * n / top
        ink = "#fff" if alpha > 0.55 else "#3b1215"
        return (
            f'<td class="cell" style="background:rgba(229,72,77,{alpha:.2f});color:{ink}">{n}</td>'
        )

    head = "".join(f'<th class="num" title="{_e(r.name)}">{_e(r.id)}</th>' for r in audit.rules)
    rows = "".join(
        f'<tr><td class="mono">{_e(t.key)}</td><td class="num">{t.files}</td>'
        + "".join(cell(t.counts.get(rid, 0)) for rid in ids)
        + f'<td class="num"><b>{t.total}</b></td></tr>'
        for t in audit.folders
    )
    return (
        '<div class="scroll"><table class="heat sortable"><thead><tr><th>folder</th>'
        f'<th class="num">files</th>{head}<th class="num">total</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _package(audit: Audit, chart: str) -> str:
    if not audit.files:
        body = '<p class="empty">No findings: nothing to map.</p>' + chart
    else:
        body = f"{chart}<h3>Heat by package folder</h3>{_heat(audit)}"
    return (
        '<section id="package"><h2>Where they are</h2><p class="lead">Each box is a file with '
        "findings, grouped by its folder; its area and colour are its findings.</p>"
        f"{body}</section>"
    )


def _history(audit: Audit, chart: str) -> str:
    points = audit.history or []
    names = {r.id: r.name for r in audit.rules}
    head = "".join(f'<th class="num">{_e(rid)}</th>' for rid in audit.rule_ids)
    rows = "".join(
        f'<tr><td class="mono">{_e(p.short)}</td><td class="mono">{_e(p.date[:10])}</td>'
        f"<td>{_e(p.subject)}"
        + (f'<span class="path error">{_e(p.error)}</span>' if p.error else "")
        + "</td>"
        + "".join(f'<td class="num">{p.counts.get(rid, 0)}</td>' for rid in audit.rule_ids)
        + f'<td class="num"><b>{p.total}</b></td></tr>'
        for p in reversed(points)
    )
    first, last = (points[0].total, points[-1].total) if points else (0, 0)
    trend = f"{first} → {last} findings" if points else "no commits touch this tree"
    if points and not points[0].date:  # `audit --trees`: the points are trees, not commits
        what = f"the {len(points)} trees given"
    else:
        what = f"the last {len(points)} commits touching the tree"
    return (
        f'<section id="history"><h2>Burn-down</h2><p class="lead">Findings per rule at each of '
        f"{what}, oldest on the left: {_e(trend)}."
        f"</p>{chart}{legend(audit.rule_ids, names)}"
        '<div class="scroll"><table><thead><tr><th>commit</th><th>date</th><th>subject</th>'
        f'{head}<th class="num">total</th></tr></thead><tbody>{rows}</tbody></table></div>'
        "</section>"
    )


def _tally_table(rows: list[Tally], colors: dict[str, str], scoped: bool) -> str:
    body = []
    for t in rows[:TOP]:
        if scoped:
            path, _, scope = t.key.partition("::")
            label = (
                f'<code>{_breakable(scope, ".")}</code><span class="path">{_breakable(path)}</span>'
            )
        else:
            label = f"<code>{_breakable(t.key)}</code>"
        body.append(
            f'<tr><td>{label}</td><td class="num"><b>{t.total}</b></td>'
            f"<td>{_chips(t.counts, colors)}</td></tr>"
        )
    more = f'<p class="lead">and {len(rows) - TOP} more</p>' if len(rows) > TOP else ""
    return (
        "<table><thead><tr><th>" + ("scope" if scoped else "file") + '</th><th class="num">'
        f"findings</th><th>by rule</th></tr></thead><tbody>{''.join(body)}</tbody></table>{more}"
    )


def _top(audit: Audit) -> str:
    colors = rule_colors(audit.rule_ids)
    if not audit.files:
        return (
            '<section id="top"><h2>Top offenders</h2><p class="empty">No findings: '
            "nothing to migrate.</p></section>"
        )
    return (
        '<section id="top"><h2>Top offenders</h2><p class="lead">The files and scopes '
        "(functions, methods, module level) with the most findings: where a migration "
        'step pays most.</p><div class="grid2"><div><h3>Files</h3>'
        f"{_tally_table(audit.files, colors, False)}</div><div><h3>Scopes</h3>"
        f"{_tally_table(audit.scopes, colors, True)}</div></div></section>"
    )


def _findings(audit: Audit) -> str:
    """Every finding and stale entry: sortable (headers), filterable (rule, status)
    and searchable (any text); the script only hides rows, the data is all here."""
    rows = audit.findings
    if not rows:
        return (
            '<section id="findings"><h2>Findings</h2><p class="empty">No findings and no '
            "stale baseline entries.</p></section>"
        )
    statuses = [s for s in ("new", "baselined", "stale") if any(r.status == s for r in rows)]
    rule_opts = "".join(
        f'<option value="{_e(r.id)}">{_e(r.id)} {_e(r.name)}</option>'
        for r in audit.rules
        if any(f.rule == r.id for f in rows)
    )
    status_opts = "".join(f'<option value="{s}">{s}</option>' for s in statuses)
    # the file:line column sorts by path, then line as a number: each row's rank
    # in that order is its sort key (a number the page compares as one, and
    # printable: a NUL-joined key made the page binary to `file` and grep)
    order = sorted(range(len(rows)), key=lambda i: (rows[i].path, rows[i].line or 0))
    rank = {i: n for n, i in enumerate(order)}
    body = []
    for i, r in enumerate(rows):
        where = r.path if r.line is None else f"{r.path}:{r.line}"
        key = str(rank[i])
        body.append(
            f'<tr data-rule="{_e(r.rule)}" data-status="{_e(r.status)}">'
            f"<td><b>{_e(r.rule)}</b></td>"
            f'<td><span class="status {_e(r.status)}">{_e(r.status)}</span></td>'
            f'<td class="mono wrap" data-sort="{_e(key)}">{_breakable(where)}</td>'
            f'<td class="wrap"><code>{_breakable(r.scope, ".")}</code></td><td class="wrap">{_e(r.message)}</td></tr>'
        )
    return (
        '<section id="findings"><h2>Findings</h2><p class="lead">Every finding, and every '
        "baseline entry that no longer matches one (<i>stale</i>). Click a header to sort; "
        "filter by rule or status, or search any text.</p>"
        '<div class="filters"><input type="search" class="f-search" '
        'placeholder="search path, scope, message…" aria-label="search findings">'
        '<select class="f-rule" aria-label="rule"><option value="">all rules</option>'
        f'{rule_opts}</select><select class="f-status" aria-label="status">'
        f'<option value="">all statuses</option>{status_opts}</select>'
        f'<span class="f-count" data-total="{len(rows)}">{len(rows)} of {len(rows)}</span></div>'
        '<div class="scroll tall"><table class="sortable findings"><thead><tr><th>rule</th>'
        "<th>status</th><th>file:line</th><th>scope</th><th>message</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _fields(audit: Audit) -> str:
    if not audit.fields:
        return ""
    colors = rule_colors(audit.rule_ids)
    top = audit.fields[0].reads
    rows = "".join(
        f"<tr><td><code>{_e(f.field)}</code></td>"
        f'<td class="num" data-sort="{f.reads}"><span class="minibar" '
        f'style="width:{max(4, round(90 * f.reads / top))}px"></span>{f.reads}</td>'
        f'<td>{_chips(f.counts, colors)}</td><td class="mono">{_e(f.namespace or "")}</td>'
        f"<td><code>{_e(f.bag or '(no bag accessor)')}</code></td></tr>"
        for f in audit.fields
    )
    return (
        '<section id="fields"><h2>Fields read off records</h2><p class="lead">The record '
        "fields that business code reads off the seed (CTX101) or off a record it was handed "
        "(CTX102), most read first, with the bag each should come from.</p>"
        '<div class="scroll"><table class="sortable"><thead><tr><th>field</th>'
        '<th class="num">reads</th><th>by rule</th><th>namespace</th><th>read instead</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></div></section>"
    )


def _set_items(s: DerivedSet) -> str:
    value = s.value
    if isinstance(value, dict):
        items = [
            f"{k}: {v}" if not isinstance(v, (dict, list)) else f"{k}: {_flat(v)}"
            for k, v in value.items()
        ]
    elif isinstance(value, list):
        items = [_flat(v) for v in value]
    else:
        return f"<ul><li>{_e(value)}</li></ul>"
    shown = "".join(f"<li>{_e(i)}</li>" for i in items[:SET_ITEMS])
    if len(items) > SET_ITEMS:
        shown += f"<li>… {len(items) - SET_ITEMS} more (see --format json)</li>"
    return f"<ul>{shown}</ul>" if items else "<ul><li>(empty)</li></ul>"


def _flat(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(
            f"{k} {v}" if not isinstance(v, (dict, list)) else f"{k}" for k, v in value.items()
        )
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _sets(audit: Audit) -> str:
    parts, section = [], None
    names = {r.id: f"{r.id} {r.name}" for r in audit.rules}
    for s in audit.sets:
        if s.section != section:
            section = s.section
            parts.append(f"<h3>{_e(names.get(section, section))}</h3>")
        size = "" if s.size is None else str(s.size)
        if s.members is not None:
            size += f" · {s.members} inside"
        if s.size is None:
            size = str(s.value)[:60]
        parts.append(
            f'<details data-set="{_e(s.section)}:{_e(s.name)}" data-size="{"" if s.size is None else s.size}">'
            f'<summary>{_e(s.name)}<span class="size">{_e(size)}</span></summary>'
            f"{_set_items(s)}</details>"
        )
    return (
        '<section id="sets" class="sets"><h2>Derived sets</h2><p class="lead">Everything the '
        "rules derived from the code (nothing here is a hand list), with its size.</p>"
        f"{''.join(parts)}</section>"
    )


def _errors(audit: Audit) -> str:
    if not audit.errors:
        return ""
    rows = "".join(
        f'<tr><td class="mono">{_e(e["path"])}</td><td class="error">{_e(e["message"])}</td></tr>'
        for e in audit.errors
    )
    return (
        '<section id="errors"><h2>Files that could not be checked</h2>'
        f"<table><tbody>{rows}</tbody></table></section>"
    )


def render_html(audit: Audit) -> str:
    charts = page_charts(audit)
    toc = [("rules", "Rules")]
    if audit.history is not None:
        toc.append(("history", "Burn-down"))
    toc += [("package", "Package"), ("top", "Top offenders"), ("findings", "Findings")]
    if audit.fields:
        toc.append(("fields", "Fields"))
    toc.append(("sets", "Derived sets"))
    if audit.errors:
        toc.append(("errors", "Errors"))
    nav = "".join(f'<a href="#{a}">{t}</a>' for a, t in toc)
    body = (
        _header(audit)
        + f'<main><nav class="toc">{nav}</nav>'
        + _rules(audit, charts["rules"])
        + (_history(audit, charts["burndown"]) if audit.history is not None else "")
        + _package(audit, charts["treemap"])
        + _top(audit)
        + _findings(audit)
        + _fields(audit)
        + _sets(audit)
        + _errors(audit)
        + f"</main><footer>ctxlint {_e(__version__)} · <code>ctxlint audit</code></footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ctxlint audit · {_e(audit.project)}</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{JS}</script></body></html>\n"
    )
