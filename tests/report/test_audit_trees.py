"""`ctxlint audit --trees A B ...`: findings per rule across trees (releases of a
codebase), charted like the commit history, with exact counts per tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO
from helpers import cli

BEGUN = REPO / "tests" / "fixtures" / "begun"


def test_findings_per_rule_across_trees(tmp_path: Path) -> None:
    old, new = tmp_path / "r1", tmp_path / "r2"
    shutil.copytree(BEGUN, old)
    shutil.copytree(BEGUN, new)
    app = new / "begun" / "app" / "scheduler.py"  # r2 fixed one write and one seed read
    app.write_text(
        app.read_text()
        .replace('        args.model_path = "/models/x"\n', "")
        .replace("get_server_args().tp_size", "get_parallel().tp_size")
    )
    page = tmp_path / "trees.html"
    res = cli(
        "audit", "--config", str(old / "pyproject.toml"), "--no-cache", "-j", "1",
        "--format", "json", "--html", str(page), "--trees", str(old),
        str(tmp_path / "gone"), str(new), cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["root"] == str(new)  # the audit itself: the last tree
    points = doc["history"]
    assert [p["short"] for p in points] == ["r1", "gone", "r2"]
    nonzero = [{r: c for r, c in p["counts"].items() if c} for p in points]
    assert nonzero == [
        {"CTX101": 2, "CTX201": 2, "CTX301": 1, "CTX601": 2},
        {},
        {"CTX101": 1, "CTX201": 1, "CTX301": 1, "CTX601": 2},
    ]
    assert [p["error"] for p in points] == [None, f"{tmp_path / 'gone'} is not a folder", None]
    html = page.read_text()
    assert 'data-chart="burndown"' in html and 'data-commits="3"' in html
    assert "Findings per rule at each of the 3 trees given, oldest on the left" in html
    # the terminal says what a tree's counts are: not "last 3 commits"
    text = cli(
        "audit", "--config", str(old / "pyproject.toml"), "-j", "1", "--color", "never",
        "--trees", str(old), str(new), cwd=tmp_path,
    ).stdout  # fmt: skip
    text = " ".join(text.split())  # (the title wraps at the runner's COLUMNS)
    assert "Findings per tree (2 trees, no baseline: pin findings included)" in text
    assert "last 2 commits" not in text


def test_trees_and_history_together_is_a_clean_error(tmp_path: Path) -> None:
    res = cli("audit", "--trees", str(tmp_path), "--history", "2", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr == "ctxlint: error: give --history or --trees, not both\n"
