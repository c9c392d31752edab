"""The HTML audit's layout and findings table in headless Chromium, at 1400 and 1920 px.

The page is built from an audit with SGLang's shapes (long qualified scopes and
paths, every rule, 20 commits of history), so what overflowed on SGLang overflows
here: nothing may stick out of its section's card (a `.scroll` box may scroll,
but must itself fit), no two x labels of the burn-down may overlap, and the
findings table must sort, filter and search.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_audit_browser import SHOT_WIDTH, chromium, load, make_images

from ctxlint.engine.registry import load_rules
from ctxlint.report.audit.html import render_html
from ctxlint.report.audit.model import Audit, FindingRow, HistoryPoint, RuleRow, Tally

REPO = Path(__file__).resolve().parents[2]
IMG = REPO / "docs" / "img"
WIDTHS = (1400, 1920)
COMMITS = 20
LONG_SCOPE = (
    "SpeculativeDecodingEagleWorkerWithTreeAttention."
    "forward_target_extend_after_decode_with_cuda_graph_capture_and_replay"
)
PKG = "python/sglang/srt/speculative/eagle_worker_v2_with_overlap_scheduling"

LAYOUT_PROBE = """<script>
(function () {
  function box(el) { return el.getBoundingClientRect(); }
  var overflow = [];
  document.querySelectorAll("main > section").forEach(function (section) {
    var edge = box(section).right + 0.5;
    section.querySelectorAll("*").forEach(function (el) {
      if (el.closest(".scroll") && !el.classList.contains("scroll")) { return; }
      if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") { return; }
      var r = box(el);
      if (r.width > 0 && r.right > edge) {
        overflow.push(section.id + " " + el.tagName.toLowerCase() + "." + el.className + " +" +
          Math.round(r.right - edge));
      }
    });
  });
  var overlaps = [], labels = Array.prototype.map.call(
    document.querySelectorAll("svg.burndown text.tick.x"), box);
  for (var i = 0; i < labels.length; i++) {
    for (var j = i + 1; j < labels.length; j++) {
      var a = labels[i], b = labels[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
        overlaps.push([i, j]);
      }
    }
  }
  var section = document.querySelector("section#findings");
  function visible() {
    return Array.prototype.filter.call(section.querySelectorAll("tbody tr"),
      function (tr) { return !tr.hidden; }).length;
  }
  function set(sel, value) {
    var el = section.querySelector(sel); el.value = value;
    el.dispatchEvent(new Event(el.tagName === "INPUT" ? "input" : "change"));
  }
  var table = {total: visible()};
  set(".f-search", "NEEDLE"); table.search = visible(); set(".f-search", "");
  set(".f-rule", "CTX102"); table.rule = visible();
  set(".f-status", "stale"); table.rule_and_status = visible();
  table.count = section.querySelector(".f-count").textContent;
  set(".f-rule", ""); set(".f-status", "");
  var head = section.querySelectorAll("thead th")[2];
  head.click();
  table.first_desc = section.querySelector("tbody tr td:nth-child(3)").textContent;
  head.click();
  table.first_asc = section.querySelector("tbody tr td:nth-child(3)").textContent;
  table.labels = labels.length;
  var out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({overflow: overflow, overlaps: overlaps, table: table});
  document.body.appendChild(out);
})();
</script>"""


def sglang_shaped_audit() -> Audit:
    rules = load_rules()
    ids = [r.id for r in rules]
    rows = [RuleRow(r.id, r.name, r.summary, 3, 1, 2, 1, 3) for r in rules]
    findings = [
        FindingRow(
            rid,
            status,
            f"{PKG}/module_{k}.py",
            None if status == "stale" else 10 * k + 1,
            f"{LONG_SCOPE}_{k}",
            f"`tp_size` read off a record: read get_parallel().tp_size instead ({rid}, {k})"
            + (" NEEDLE" if k == 2 and rid == "CTX101" else ""),
        )
        for rid in ids
        for k, status in enumerate(("new", "baselined", "baselined", "stale"))
    ]
    scopes = [
        Tally(f"{PKG}/module_{k}.py::{LONG_SCOPE}_{k}", {ids[k % 9]: 30 - k}) for k in range(12)
    ]
    files = [Tally(f"{PKG}/module_{k}.py", {ids[k % 9]: 30 - k}) for k in range(12)]
    history = [
        HistoryPoint(
            f"{k:040x}",
            f"{k:07x}",
            f"2026-11-{1 + k:02d}T10:00:00+00:00",
            f"migrate step {k}",
            {rid: 40 - k for rid in ids},
        )
        for k in range(COMMITS)
    ]
    return Audit(
        project="sglang",
        root="/tmp/sglang-0.5.23",
        paths=[],
        files_checked=3020,
        rules=rows,
        folders=[Tally(PKG, {ids[0]: 5}, files=12)],
        files=files,
        scopes=scopes,
        fields=[],
        sets=[],
        errors=[],
        history=history,
        baseline="ctxlint-baseline.json",
        findings=findings,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (.ci/run installs Debian's chromium when missing)")
    out = tmp_path_factory.mktemp("layout") / "audit.html"
    out.write_text(render_html(sglang_shaped_audit()), encoding="utf-8")
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_overflows_and_labels_do_not_overlap(page: Path, width: int) -> None:
    binary = chromium()
    assert binary
    probe, console = load(binary, page, width=width)
    assert probe["errors"] == [] and probe["console"] == [] and console == []
    layout = _layout(page, binary, width)
    assert layout["overflow"] == []
    assert layout["overlaps"] == []
    assert layout["table"]["labels"] >= 2 * 2  # commit and date, first and last at least


def test_findings_table_sorts_filters_and_searches(page: Path) -> None:
    binary = chromium()
    assert binary
    table = _layout(page, binary, WIDTHS[0])["table"]
    rules = len(load_rules())
    assert table["total"] == 4 * rules
    assert table["search"] == 1
    assert table["rule"] == 4
    assert table["rule_and_status"] == 1
    assert table["count"] == f"1 of {4 * rules}"
    assert table["first_desc"] == f"{PKG}/module_3.py"  # a stale entry has no line
    assert table["first_asc"] == f"{PKG}/module_0.py:1"


def _layout(page: Path, binary: str, width: int) -> dict:
    from test_audit_browser import run_chromium

    html = page.read_text(encoding="utf-8")
    probed = page.with_name(f"layout-{width}-{page.name}")
    end = html.rindex("</body>")
    probed.write_text(html[:end] + LAYOUT_PROBE + html[end:], encoding="utf-8")
    done = run_chromium(
        binary,
        probed.as_uri(),
        f"--window-size={width},2000",
        "--virtual-time-budget=3000",
        "--dump-dom",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="layout">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[:500]
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    return json.loads(text.replace("&amp;", "&"))


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _readme_excerpt() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("```text", readme.index("docs/img/audit-terminal.txt"))
    block = readme[start + len("```text\n") : readme.index("```", start + 7)]
    return [line.rstrip() for line in block.splitlines() if line.strip()]


def test_readme_images_are_what_the_script_makes(tmp_path: Path) -> None:
    """The README's screenshot and terminal excerpt come from make_images (the
    script `python tests/report/test_audit_browser.py PNG TXT`): regenerated, the text is
    byte for byte the checked-in file, the PNG has its size, every line of the
    README's excerpt is in it with every rule, and the page lays out at both widths."""
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed")
    png, txt, html = tmp_path / "shot.png", tmp_path / "terminal.txt", tmp_path / "demo.html"
    make_images(png, txt, page=html)
    assert txt.read_text(encoding="utf-8") == (IMG / "audit-terminal.txt").read_text(
        encoding="utf-8"
    )
    assert _png_size(png) == _png_size(IMG / "audit-report.png") == (SHOT_WIDTH, 2780)
    lines = set(txt.read_text(encoding="utf-8").splitlines())
    excerpt = _readme_excerpt()
    assert [line for line in excerpt if line not in lines] == []
    rows = {line.split()[0] for line in excerpt if re.match(r"\s+CTX\d{3}\s", line)}
    assert rows == {r.id for r in load_rules()}
    for width in WIDTHS:
        layout = _layout(html, binary, width)
        assert (layout["overflow"], layout["overlaps"]) == ([], []), width
