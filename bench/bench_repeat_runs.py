#!/usr/bin/env python3
"""What a second run costs on sglang 0.5.23: the paths a user repeats (issue 34, item 8).

On a scratch git repository holding the wheel's tree (three commits: the tree,
then one edited file, then another), each row is one `ctxlint` process, timed
wall and CPU (the process and its workers):

- a warm check, the yardstick;
- the first check after `baseline update --allow-growth` (the facts must stay);
- `fix --diff --unsafe`, then the same again;
- `fix --unsafe` on a copy of the tree (its cache copied with it), which rewrites,
  then `fix` again with nothing to do (about a warm check), then a third time;
- `audit --history 3`, first and again.

    python bench/bench_repeat_runs.py [--work DIR] [--json OUT]

Run it alone on a quiet machine: the figures are compared as ratios to the
warm check of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_sglang import fetch_tree  # noqa: E402

VERSION = "0.5.23"
GIT = ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false"]


def timed(name: str, args: list[str], cwd: Path, rows: list[dict]) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *args], cwd=cwd, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode > 1:
        raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    rows.append({"row": name, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
    print(f"{name:<44} {wall:8.2f} s wall {cpu:8.2f} s CPU", flush=True)


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def make_repo(work: Path) -> Path:
    """The wheel's tree as three commits (the history the audit walks)."""
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(
        fetch_tree(Path.home() / ".cache/ctxlint/wheels", VERSION),
        repo,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    env_user = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, *env_user, "commit", "-qm", "tree")
    for rel in ("sglang/srt/utils/common.py", "sglang/srt/server_args.py"):
        with (repo / rel).open("a") as fh:
            fh.write("\n_BENCH_EDIT = 1\n")
        git(repo, *env_user, "commit", "-qam", f"edit {rel}")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=HERE / ".cache" / "repeat-runs")
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args()
    opts.work.mkdir(parents=True, exist_ok=True)
    repo = make_repo(opts.work)
    rows: list[dict] = []
    tree = ["--profile", "sglang", "."]
    baseline = str(opts.work / "baseline.json")
    timed("first check of the copy", ["check", *tree, "--exit-zero"], repo, rows)
    timed("check warm", ["check", *tree, "--exit-zero"], repo, rows)
    timed("baseline update --allow-growth", ["baseline", "update", *tree, "--baseline", baseline, "--allow-growth", "--reason", "bench"], repo, rows)  # fmt: skip
    timed("check after the baseline update", ["check", *tree, "--baseline", baseline], repo, rows)
    timed("fix --diff --unsafe", ["fix", "--diff", "--unsafe", *tree], repo, rows)
    timed("fix --diff --unsafe again", ["fix", "--diff", "--unsafe", *tree], repo, rows)
    copy = opts.work / "copy"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    timed("fix --unsafe on a copy (rewrites)", ["fix", "--unsafe", *tree], copy, rows)
    timed("fix --unsafe again, nothing to do", ["fix", "--unsafe", *tree], copy, rows)
    timed("fix --unsafe a third time", ["fix", "--unsafe", *tree], copy, rows)
    timed("audit --history 3", ["audit", *tree, "--history", "3", "--output", os.devnull], repo, rows)  # fmt: skip
    timed("audit --history 3 again", ["audit", *tree, "--history", "3", "--output", os.devnull], repo, rows)  # fmt: skip
    warm = next(r for r in rows if r["row"] == "check warm")
    for r in rows:
        r["cpu_vs_warm_check"] = round(r["cpu_s"] / warm["cpu_s"], 2)
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.2f}")
    if opts.json:
        opts.json.write_text(json.dumps({"version": VERSION, "load": load, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
