"""The HTML audit page in a real headless browser (Debian's chromium).

The page is loaded from a copy with a probe injected: a first script that
records errors and console.error/warn calls, a last one that measures every
chart (its data points, and that they were laid out with a size) and writes
the result into the DOM, which `--dump-dom` hands back. Chromium's own console
log (`--enable-logging=stderr`) must stay silent too: the page logs nothing.

Run as a script to regenerate the README screenshot and terminal excerpt (the
test suite runs the same code and compares, see test_audit_layout.py):
    python tests/report/test_audit_browser.py docs/img/audit-report.png docs/img/audit-terminal.txt
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers import cli
from test_audit import HEAD, RULES, git, make_codebase

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
PROBE_HEAD = """<script>
window.__probe = {errors: [], console: []};
window.addEventListener("error", function (e) { window.__probe.errors.push(String(e.message)); });
["error", "warn"].forEach(function (level) {
  var orig = console[level];
  console[level] = function () {
    window.__probe.console.push(level + ": " + Array.prototype.join.call(arguments, " "));
    return orig.apply(console, arguments);
  };
});
</script>"""
PROBE_TAIL = """<script>
(function () {
  var charts = {};
  document.querySelectorAll("svg[data-chart]").forEach(function (svg) {
    var points = svg.querySelectorAll("[data-point]");
    var drawn = 0;
    points.forEach(function (p) { var r = p.getBoundingClientRect(); if (r.width > 0 && r.height > 0) { drawn++; } });
    var box = svg.getBoundingClientRect();
    charts[svg.getAttribute("data-chart")] = {
      declared: Number(svg.getAttribute("data-points")), points: points.length, drawn: drawn,
      width: box.width, height: box.height
    };
  });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({errors: window.__probe.errors, console: window.__probe.console,
    charts: charts, findings: document.querySelectorAll("section#findings tbody tr").length,
    sections: Array.prototype.map.call(document.querySelectorAll("main > section"),
    function (s) { return s.id; })});
  document.body.appendChild(out);
})();
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(
    binary: str, url: str, *extra: str, timeout: int = 60
) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="ctxlint-chromium-") as profile:
        return subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *extra, url],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def load(
    binary: str, page: Path, *, width: int = 1280, tail: str = PROBE_TAIL
) -> tuple[dict, list[str]]:
    """(the probe's findings, chromium's console log lines) for an HTML file."""
    html = page.read_text(encoding="utf-8")
    probed = page.with_name("probed-" + page.name)
    head_at = html.index("<head>") + len("<head>")
    body_end = html.rindex("</body>")
    probed.write_text(html[:head_at] + PROBE_HEAD + html[head_at:body_end] + tail + html[body_end:])
    done = run_chromium(
        binary,
        probed.as_uri(),
        "--enable-logging=stderr",
        "--v=0",
        f"--window-size={width},2000",
        "--virtual-time-budget=3000",
        "--dump-dom",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the probe did not run: {done.stdout[:500]!r}"
    probe = json.loads(
        found.group(1)
        .replace("&quot;", '"')
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return probe, console


# -- a legacy codebase with a history worth a picture ----------------------------------------

BAGS = {
    "tp_size": "get_parallel().tp_size",
    "dp_size": "get_parallel().dp_size",
    "model_path": "get_model().model_path",
    "context_length": "get_model().context_length",
    "attention_backend": "get_exec().kernel.attention_backend",
    "moe_runner_backend": "get_exec().moe.moe_runner_backend",
    "max_running_requests": "get_schedule().max_running_requests",
    "chunked_prefill_size": "get_schedule().chunked_prefill_size",
    "mem_fraction_static": "get_memory().mem_fraction_static",
}
LEGACY_HEAD = HEAD.replace("get_exec,", "get_exec, get_memory, get_model,")
FILES = {
    "legacy/entrypoints/http_server.py": 7,
    "legacy/entrypoints/engine.py": 4,
    "legacy/managers/scheduler.py": 9,
    "legacy/managers/tokenizer_manager.py": 5,
    "legacy/managers/detokenizer.py": 2,
    "legacy/model_executor/model_runner.py": 8,
    "legacy/model_executor/cuda_graph_runner.py": 3,
    "legacy/layers/attention/backend.py": 4,
    "legacy/layers/moe/router.py": 3,
    "legacy/lora/manager.py": 2,
    "legacy/utils.py": 1,
}


def legacy_findings() -> list[tuple[str, str, str]]:
    """(path, kind, field) for every finding, in a fixed, varied order."""
    kinds = ("CTX101", "CTX102", "CTX101", "CTX201", "CTX102", "CTX101", "CTX001")
    fields = sorted(BAGS)
    out, i = [], 0
    for path, n in FILES.items():
        for _ in range(n):
            out.append((path, kinds[i % len(kinds)], fields[(i * 5) % len(fields)]))
            i += 1
    return out


def write_legacy(root: Path, fixed: set[int], extra: int = 0) -> None:
    bodies: dict[str, list[str]] = {}
    for i, (path, kind, field) in enumerate(legacy_findings()):
        good = f"return {BAGS[field]}"
        bad = {
            "CTX101": f"return get_server_args().{field}",
            "CTX102": f"return server_args.{field}",
            "CTX201": f"server_args.{field} = None",
            "CTX001": "return 0  # ctxlint: ignore[CTX101] kept after a fix",
        }[kind]
        body = good if i in fixed else bad
        bodies.setdefault(path, [LEGACY_HEAD]).append(
            f"\n\ndef step_{i}(server_args: ServerArgs):\n    {body}\n"
        )
    for j in range(extra):  # regressions: new reads nobody allowed
        bodies["legacy/managers/scheduler.py"].append(
            f"\n\ndef hotfix_{j}():\n    return get_server_args().dp_size + {j}\n"
        )
    for rel, parts in bodies.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in target.relative_to(root).parents:
            if str(folder) != ".":
                (root / folder / "__init__.py").touch()
        target.write_text("".join(parts))


def legacy_history(repo: Path, commits: int = 12) -> Path:
    """A project whose findings burn down over `commits` commits, with a baseline
    taken at the start and refreshed midway, and a regression at the end."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    project = make_codebase(repo / "proj")
    shutil.rmtree(project / "app")  # the runtime only: the legacy package replaces it
    total = len(legacy_findings())
    order = list(range(total))
    random.Random(6).shuffle(order)  # fixes land all over the tree
    fixed: set[int] = set()
    per = max(1, round(total * 0.7 / (commits - 1)))
    for k in range(commits):
        if k:
            fixed |= set(order[(k - 1) * per : k * per])
        write_legacy(project, fixed, extra=2 if k == commits - 1 else 0)
        if k in (0, commits - 4):
            growth = ("--allow-growth", "--reason", "legacy import") if k == 0 else ()
            res = cli("baseline", "update", *growth, cwd=project)
            assert res.returncode == 0, res.stderr
        git(repo, "add", "-A")
        subject = f"migrate {per} reads to bags ({k})" if k else "legacy import"
        git(repo, "commit", "-q", "-m", subject, day=1 + 2 * k)
    return project


# -- tests --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> str:
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (.ci/run installs Debian's chromium when missing)")
    return binary


def test_the_probe_sees_console_errors(browser: str, tmp_path: Path) -> None:
    """A control page: a failing script must be caught, or a green result means nothing."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head></head><body><svg data-chart="x" data-points="1">'
        '<rect data-point="" width="5" height="5"/></svg>'
        "<script>console.error('boom'); nope();</script></body></html>"
    )
    probe, console = load(browser, page)
    assert probe["console"] == ["error: boom"]
    assert probe["errors"] and "nope" in probe["errors"][0]
    assert len(console) == 2
    assert probe["charts"]["x"] == {
        "declared": 1,
        "points": 1,
        "drawn": 1,
        "width": 300,
        "height": 150,
    }


def test_report_renders_with_every_chart_point(browser: str, tmp_path: Path) -> None:
    commits = 12
    project = legacy_history(tmp_path / "repo", commits)
    page = tmp_path / "audit.html"
    res = cli(
        "audit", "--history", str(commits), "--html", str(page), "--format", "json", cwd=project
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    probe, console = load(browser, page)
    assert probe["errors"] == [] and probe["console"] == [] and console == []
    charts = probe["charts"]
    assert set(charts) == {"rules", "treemap", "burndown"}
    for name, chart in charts.items():
        assert chart["points"] == chart["declared"], name
        assert chart["drawn"] == chart["points"], name  # laid out with a size
        assert chart["width"] > 600, name
    assert charts["rules"]["points"] == RULES
    assert charts["treemap"]["points"] == len(doc["files"])
    assert charts["burndown"]["points"] == commits * RULES
    assert probe["sections"] == ["rules", "history", "package", "top", "findings", "fields", "sets"]
    # one row per finding and per stale entry
    summary = doc["summary"]
    assert probe["findings"] == len(doc["findings"]) == summary["found"] + summary["stale"]
    totals = [p["total"] for p in doc["history"]]
    assert totals[0] == len(legacy_findings()) and totals[-1] < totals[0]
    summary = doc["summary"]
    assert summary["new"] == 2 and summary["stale"] > 0 and summary["baselined"] > 0


def test_an_empty_report_renders_too(browser: str, tmp_path: Path) -> None:
    project = make_codebase(tmp_path / "proj", fixed=10**6)
    page = tmp_path / "clean.html"
    res = cli("audit", "--no-cache", "--html", str(page), "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    probe, console = load(browser, page)
    assert probe["errors"] == [] and probe["console"] == [] and console == []
    assert probe["charts"]["rules"]["points"] == RULES
    assert probe["charts"]["treemap"]["points"] == 0
    assert probe["findings"] == 0


# -- the README picture -----------------------------------------------------------------------

DEMO = Path(tempfile.gettempdir()) / "ctxlint-legacy-demo"
SHOT_WIDTH = 1400


def make_images(png: Path, terminal: Path, page: Path | None = None) -> None:
    """The README's screenshot and terminal excerpt, from the scripted legacy codebase.

    The demo lives in a fixed folder, so the paths in the pictures do not change
    from run to run; a lock keeps concurrent test runs from sharing it. `page`
    keeps a copy of the HTML report (the tests check its layout)."""
    import fcntl

    binary = chromium()
    assert binary, "install chromium first"
    with open(f"{DEMO}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(DEMO, ignore_errors=True)
        DEMO.mkdir()
        try:
            project = legacy_history(DEMO / "repo")
            html = DEMO / "audit.html"
            argv = ("audit", "--history", "12", "--html", str(html), "--output", str(terminal))
            res = cli(*argv, cwd=project)
            assert res.returncode == 0, res.stderr
            size = f"--window-size={SHOT_WIDTH},2780"
            done = run_chromium(binary, html.as_uri(), size, f"--screenshot={png}")
            assert done.returncode == 0, done.stderr[-2000:]
            if page is not None:
                shutil.copy2(html, page)
        finally:
            shutil.rmtree(DEMO, ignore_errors=True)


if __name__ == "__main__":
    make_images(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
