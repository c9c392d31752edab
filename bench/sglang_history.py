#!/usr/bin/env python3
"""ctxlint over the SGLang releases that carry the runtime-context design.

For each release it runs `ctxlint check --profile sglang TREE --format json` and
`ctxlint sets` on the unpacked wheel, and writes

- docs/sglang-history.md: per release the exit code, the rules disabled and why,
  the derived sets' sizes and the findings per rule (a table), and
- docs/img/sglang-history.svg: findings per rule per release (the chart the
  audit page draws for `ctxlint audit --trees ...`).

    python bench/sglang_history.py [--work DIR] [--jobs N] [--no-docs]
    python bench/sglang_history.py --pins > tests/data/sglang_history_pins.json

`--pins` prints the table tests/test_sglang_history.py pins (and writes no docs):
regenerate it with the second line when a change to ctxlint moves a count on
purpose. Wheels come from ~/.cache/ctxlint/wheels/sglang-X/ when unpacked there,
else `pip download --no-deps` into --cache (default bench/.cache) and unzip. Each
tree is copied into --work first (ctxlint writes its .ctxlint_cache into the tree
it checks; the cached wheel stays untouched), and the copy is reused on the next
run, so a second run with the same code is warm.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bench's own modules, as compare_guard_tests does
from bench_sglang import fetch_tree, held  # noqa: E402

REPO = HERE.parent
RELEASES = ("0.5.14", "0.5.17", "0.5.19", "0.5.21", "0.5.23")
WHEELS = Path.home() / ".cache" / "ctxlint" / "wheels"
DOC = REPO / "docs" / "sglang-history.md"
CHART = REPO / "docs" / "img" / "sglang-history.svg"


def unpacked(version: str, cache: Path) -> Path:
    """The folder holding `sglang/` for a release: the shared unpacked wheel, else
    a download into `cache` (once)."""
    shared = WHEELS / f"sglang-{version}"
    if (shared / "sglang" / "srt").is_dir():
        return shared
    return fetch_tree(cache, version)


def default_work() -> Path:
    """Where the trees are copied: $CTXLINT_SGLANG_HISTORY_WORK, else
    $TMPDIR/ctxlint-sglang-history."""
    default = Path(tempfile.gettempdir()) / "ctxlint-sglang-history"
    return Path(os.environ.get("CTXLINT_SGLANG_HISTORY_WORK", default))


def tree_cache(version: str, work: Path | None = None) -> Path:
    """The fact cache of a release's working copy (bench/sglang.toml's `cache-dir`).
    The cache is keyed by content alone, so the model-invariance test fills it from
    the unpacked wheel and a later history run here is warm."""
    return (work or default_work()) / f"sglang-{version}" / ".ctxlint_cache"


def working_copy(source: Path, work: Path, version: str) -> Path:
    """`source/sglang` copied to `work/sglang-VERSION/` (kept between runs)."""
    tree = work / f"sglang-{version}"
    with held(work / f"sglang-{version}.lock"):  # one copy, whoever else asks at once
        if not (tree / "sglang" / "srt").is_dir():  # (a cache already there is kept)
            shutil.rmtree(tree / "sglang", ignore_errors=True)
            tree.mkdir(parents=True, exist_ok=True)
            shutil.copytree(source / "sglang", tree / "sglang")
    return tree


def ctxlint(*argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def measure(tree: Path, jobs: int | None) -> dict[str, Any]:
    """Exit code, disabled rules, set sizes and findings per rule on one tree."""
    extra = [f"--jobs={jobs}"] if jobs else []
    check = ctxlint("check", "--profile", "sglang", str(tree), "--format", "json", *extra)
    try:
        doc = json.loads(check.stdout)
    except json.JSONDecodeError:  # a run that could not check the tree at all
        return {"exit": check.returncode, "error": check.stderr.strip().splitlines()[-1:]}
    sets = ctxlint("sets", "--profile", "sglang", str(tree), "--format", "json", *extra)
    vocab = json.loads(sets.stdout)["vocabulary"]
    fields = vocab["record fields by namespace"]
    return {
        "exit": check.returncode,
        "errors": len(doc["errors"]),
        "disabled": {d["rule"]: d["reason"] for d in doc.get("disabled", [])},
        "sizes": {
            "seed accessors": len(vocab["seed accessors"]),
            "bag accessors": len(vocab["bag accessors"]),
            "namespaces": len(vocab["namespaces"]),
            "field classes": len(vocab["field classes"]),
            "record fields": sum(len(v) for v in fields.values()),
            "fields with a namespace": sum(len(v) for k, v in fields.items() if k != "(record)"),
            "record properties": len(vocab["record properties"]),
        },
        "seed accessors": vocab["seed accessors"],
        "counts": {rule: s["found"] for rule, s in sorted(doc["summary"].items())},
    }


def chart(results: dict[str, dict[str, Any]]) -> str:
    """The audit page's burn-down chart, standalone (a white background, a legend)."""
    sys.path.insert(0, str(REPO / "src"))
    from ctxlint.report.audit.charts import burndown, rule_colors
    from ctxlint.report.audit.model import HistoryPoint

    ids = sorted({r for res in results.values() for r in res.get("counts", {})})
    points = [
        HistoryPoint(v, v, "", v, {r: res.get("counts", {}).get(r, 0) for r in ids})
        for v, res in results.items()
    ]
    svg = burndown(points, ids)
    colors = rule_colors(ids)
    keys = "".join(
        f'<rect x="{60 + i * 100}" y="392" width="12" height="12" fill="{colors[r]}"/>'
        f'<text x="{76 + i * 100}" y="402" font-size="12">{r}</text>'
        for i, r in enumerate(ids)
    )
    style = (
        "<style>.grid{stroke:#e3e6ea}.axis{stroke:#555}.tick{font:11px sans-serif;fill:#444}"
        "text{font-family:sans-serif}</style>"
    )
    inner = svg[svg.index(">") + 1 : -len("</svg>")]
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 420" width="1000" '
        f'height="420">{style}<rect width="1000" height="420" fill="#fff"/>'
        f"{inner}{keys}</svg>\n"
    )


def markdown(results: dict[str, dict[str, Any]]) -> str:
    ids = sorted({r for res in results.values() for r in res.get("counts", {})})
    sizes = list(next((r["sizes"] for r in results.values() if "sizes" in r), {}))
    lines = [
        "# ctxlint over the SGLang releases (0.5.14 to 0.5.23)",
        "",
        "Generated by `python bench/sglang_history.py` (do not edit by hand): each",
        "release's unpacked wheel checked with `ctxlint check --profile sglang TREE`,",
        "no baseline, so every finding counts. The chart is findings per rule per",
        "release, oldest on the left: the migration's burn-down as ctxlint sees it.",
        "A rule whose inputs a release has not reached yet is disabled for that run",
        "(\u2013 in the table), with the reason below.",
        "",
        "![findings per rule per release](img/sglang-history.svg)",
        "",
        "## Findings per rule",
        "",
        "| release | exit | " + " | ".join(ids) + " | total |",
        "|---|---:|" + "---:|" * (len(ids) + 1),
    ]
    for version, res in results.items():
        counts = res.get("counts", {})
        cells = [
            "\u2013" if rule in res.get("disabled", {}) else str(counts.get(rule, 0))
            for rule in ids
        ]
        lines.append(
            f"| {version} | {res['exit']} | " + " | ".join(cells) + f" | {sum(counts.values())} |"
        )
    lines += [
        "",
        "## Derived sets",
        "",
        "| release | " + " | ".join(sizes) + " | seed accessor names |",
        "|---|" + "---:|" * len(sizes) + "---|",
    ]
    for version, res in results.items():
        s = res.get("sizes", {})
        seeds = ", ".join(f"`{a}`" for a in res.get("seed accessors", []))
        lines.append(
            f"| {version} | " + " | ".join(str(s.get(k, "")) for k in sizes) + f" | {seeds} |"
        )
    lines += ["", "## Rules disabled, and why", ""]
    any_disabled = False
    for version, res in results.items():
        for rule, why in res.get("disabled", {}).items():
            any_disabled = True
            lines.append(f"- {version}, {rule}: {why}")
        if res.get("error"):
            lines.append(f"- {version}: could not be checked: {res['error']}")
    if not any_disabled:
        lines.append("- none")
    lines += [
        "",
        "The same chart for any list of trees: `ctxlint audit --profile sglang "
        "--trees TREE... --html out.html`.",
        "",
    ]
    return "\n".join(lines)


def pins(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the slow test pins per release (exactly; no slack)."""
    return {
        v: {k: res[k] for k in ("exit", "disabled", "sizes", "counts") if k in res}
        for v, res in results.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where the trees are copied and checked")
    parser.add_argument("--cache", type=Path, default=HERE / ".cache", help="wheel downloads")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--releases", nargs="+", default=list(RELEASES))
    parser.add_argument("--pins", action="store_true", help="print the slow test's pin table")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/")
    args = parser.parse_args()
    work = args.work or default_work()
    results: dict[str, dict[str, Any]] = {}
    for version in args.releases:
        tree = working_copy(unpacked(version, args.cache), work, version)
        print(f"sglang {version}: {tree}", file=sys.stderr)
        results[version] = measure(tree, args.jobs)
    if args.pins:
        sys.stdout.write(json.dumps(pins(results), indent=2, sort_keys=True) + "\n")
        return 0
    if not args.no_docs:
        CHART.parent.mkdir(parents=True, exist_ok=True)
        CHART.write_text(chart(results), encoding="utf-8")
        DOC.write_text(markdown(results), encoding="utf-8")
        print(f"wrote {DOC.relative_to(REPO)} and {CHART.relative_to(REPO)}", file=sys.stderr)
    json.dump(pins(results), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
