"""The HTML report's stylesheet and script, inlined into the page (no network,
no external assets: the file is the whole report)."""

CSS = """
:root {
  --bg: #f4f6f9; --card: #fff; --ink: #1c2330; --muted: #5f6b7d; --line: #e3e7ee;
  --accent: #3454d1; --new: #e5484d; --baselined: #f5a524; --stale: #9aa4b2; --ok: #2f9e44;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header.top { background: linear-gradient(120deg, #17213a, #2b3f7a); color: #fff; padding: 28px 40px 22px; }
header.top h1 { margin: 0; font-size: 24px; font-weight: 650; letter-spacing: .2px; }
header.top h1 small { font-weight: 400; opacity: .7; margin-left: 8px; font-size: 15px; }
header.top .where { opacity: .72; margin-top: 4px; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.kpis { display: flex; gap: 12px; flex-wrap: wrap; margin-top: 18px; }
.kpi { background: rgba(255,255,255,.09); border: 1px solid rgba(255,255,255,.14); border-radius: 10px;
  padding: 10px 16px; min-width: 120px; }
.kpi b { display: block; font-size: 24px; font-weight: 650; }
.kpi span { font-size: 12px; opacity: .75; text-transform: uppercase; letter-spacing: .6px; }
.kpi.new b { color: #ff8a8d; } .kpi.stale b { color: #ffd37a; } .kpi.good b { color: #8ce99a; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 24px 48px; }
nav.toc { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 18px; }
nav.toc a { color: var(--accent); text-decoration: none; background: var(--card); border: 1px solid var(--line);
  border-radius: 999px; padding: 3px 12px; font-size: 12.5px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 18px 22px 20px;
  margin-bottom: 20px; box-shadow: 0 1px 2px rgba(20,30,50,.04); }
section h2 { margin: 0 0 4px; font-size: 17px; }
section p.lead { margin: 0 0 14px; color: var(--muted); }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 20px; }
/* long qualnames and paths (SGLang's) wrap inside their cell instead of widening the card */
.grid2 code, .grid2 .path, td.wrap, td.wrap code { overflow-wrap: anywhere; }
.grid2 th:first-child { width: 62%; }  /* the name column; the chips wrap instead */
@media (max-width: 900px) { .grid2 { grid-template-columns: 1fr; } }
svg.chart { width: 100%; height: auto; display: block; font-size: 13px; }
svg .label { fill: var(--ink); } svg .label .rid { font-weight: 650; }
svg .value { fill: var(--muted); font-weight: 600; }
svg .track { fill: #f0f2f6; }
svg .bar:hover .track { fill: #e6eaf2; }
svg .frame { fill: #eef1f6; stroke: #fff; stroke-width: 2; }
svg .folder-label { fill: #3a4558; font-size: 11.5px; font-weight: 600; }
svg .cell rect { stroke: rgba(255,255,255,.8); stroke-width: 1; }
svg .cell:hover rect { stroke: #17213a; stroke-width: 2; }
svg .cell-label { fill: #3b2a12; font-size: 11px; pointer-events: none; }
svg .cell-count { fill: #3b2a12; font-size: 11px; font-weight: 700; pointer-events: none; }
svg .on-dark { fill: #fff; }
svg .grid { stroke: #e8ebf1; } svg .axis { stroke: #9aa4b2; }
svg .tick { fill: var(--muted); font-size: 11.5px; } svg .tick.date { font-size: 10.5px; opacity: .8; }
svg .dot { stroke: #fff; stroke-width: 1.2; }
svg.burndown .layer, svg.burndown .dot { transition: opacity .15s; }
svg.burndown.focus .layer:not(.hl), svg.burndown.focus .dot:not(.hl) { opacity: .12; }
.legend { display: flex; flex-wrap: wrap; gap: 6px; margin: 10px 0 4px; }
.legend .key { border: 1px solid var(--line); background: #fafbfc; border-radius: 999px; padding: 3px 10px 3px 6px;
  font: inherit; font-size: 12.5px; cursor: default; color: var(--ink); }
.legend .key span { color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; }
.swatches { display: flex; gap: 14px; font-size: 12.5px; color: var(--muted); margin-top: 6px; }
.swatches i { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 6px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .4px;
  position: sticky; top: 0; background: var(--card); }
th.sortable { cursor: pointer; } th.sortable:hover { color: var(--ink); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.new { color: var(--new); font-weight: 650; } td.stale { color: #b7791f; font-weight: 650; }
tr:hover td { background: #fafbfd; }
code, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.path { color: var(--muted); font-size: 12px; display: block; }
.chip { display: inline-block; border-radius: 999px; padding: 0 7px; margin: 1px 3px 1px 0; font-size: 11.5px;
  color: #fff; font-weight: 600; white-space: nowrap; }
.heat td.cell { text-align: center; font-variant-numeric: tabular-nums; min-width: 44px; }
.heat td.zero { color: #c3c9d3; }
.minibar { display: inline-block; height: 8px; border-radius: 4px; background: var(--accent); opacity: .75;
  vertical-align: middle; margin-right: 6px; }
.scroll { max-height: 460px; overflow: auto; border: 1px solid var(--line); border-radius: 8px; }
.scroll table th { box-shadow: 0 1px 0 var(--line); }
.scroll.tall { max-height: 640px; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 0 0 10px; }
.filters input, .filters select { font: inherit; font-size: 13px; padding: 4px 8px; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; color: var(--ink); }
.filters input { flex: 1 1 260px; min-width: 0; }
.filters .f-count { color: var(--muted); font-size: 12.5px; font-variant-numeric: tabular-nums; }
.status { border-radius: 999px; padding: 0 7px; font-size: 11.5px; font-weight: 600; color: #fff; }
.status.new { background: var(--new); } .status.baselined { background: var(--baselined); }
.status.stale { background: var(--stale); }
/* wrapping anywhere would squeeze short columns to a few letters: each keeps a floor */
table.findings td:nth-child(3) { min-width: 17em; } table.findings td:nth-child(4) { min-width: 11em; }
table.findings td:nth-child(5) { min-width: 18em; }
details { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px; margin: 6px 0; background: #fcfdfe; }
details summary { cursor: pointer; }
details summary .size { float: right; color: var(--muted); font-variant-numeric: tabular-nums; }
details ul { margin: 8px 0 4px; padding-left: 20px; max-height: 260px; overflow: auto; }
details li { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.sets h3 { font-size: 13px; margin: 14px 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .5px; }
.empty { color: var(--ok); font-weight: 600; }
.error { color: var(--new); }
footer { text-align: center; color: var(--muted); font-size: 12px; padding: 10px 0 30px; }
"""

# Hovering a legend key highlights that rule's layer; clicking a header of a
# sortable table sorts it; the findings table's controls hide the rows that do
# not match. Nothing else: the charts are drawn server-side.
JS = """
(function () {
  "use strict";
  document.querySelectorAll(".legend .key").forEach(function (key) {
    var svg = key.closest("section").querySelector("svg.burndown");
    if (!svg) { return; }
    key.addEventListener("mouseenter", function () {
      svg.classList.add("focus");
      svg.querySelectorAll("[data-rule]").forEach(function (el) {
        el.classList.toggle("hl", el.getAttribute("data-rule") === key.getAttribute("data-rule"));
      });
    });
    key.addEventListener("mouseleave", function () { svg.classList.remove("focus"); });
  });
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.classList.add("sortable");
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var desc = th.getAttribute("data-desc") !== "1";
        th.setAttribute("data-desc", desc ? "1" : "0");
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-sort") || a.cells[col].textContent;
          var y = b.cells[col].getAttribute("data-sort") || b.cells[col].textContent;
          var nx = parseFloat(x), ny = parseFloat(y);
          var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
          return desc ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll("section#findings").forEach(function (section) {
    var search = section.querySelector(".f-search"), rule = section.querySelector(".f-rule");
    var status = section.querySelector(".f-status"), count = section.querySelector(".f-count");
    var rows = section.querySelectorAll("tbody tr");
    if (!search) { return; }  // no findings: no controls
    function apply() {
      var q = search.value.trim().toLowerCase(), shown = 0;
      rows.forEach(function (tr) {
        var ok = (!rule.value || tr.getAttribute("data-rule") === rule.value) &&
          (!status.value || tr.getAttribute("data-status") === status.value) &&
          (!q || tr.textContent.toLowerCase().indexOf(q) !== -1);
        tr.hidden = !ok;
        if (ok) { shown++; }
      });
      count.textContent = shown + " of " + count.getAttribute("data-total");
    }
    [search, rule, status].forEach(function (el) {
      el.addEventListener("input", apply);
      el.addEventListener("change", apply);
    });
  });
})();
"""
