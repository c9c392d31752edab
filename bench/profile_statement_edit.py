#!/usr/bin/env python3
"""Profile the server's answer to a new statement inside
`run_scheduler_process` of sglang 0.5.23's `srt/managers/scheduler.py`, in
one process (server.project.Project.refresh, no LSP), after the first check.

The tree is checked, the file opened (checked), `--warm` statement edits are
checked unprofiled (each a new text: i + 1 new statements, as bench_server.py
edits), then `--edits` more under cProfile. Prints each edit's engine phases
(the run's timings), their median shares of the check, and the profile's top
functions by cumulative and by own time. A script, not a test: a cold cache
costs minutes (`--cache-dir` keeps it for the next run). Exit 0 always.

    python bench/profile_statement_edit.py [--tree T] [--cache-dir D] [--edits 3] [--out F]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

from ctxlint import session
from ctxlint.server.checking import load
from ctxlint.server.project import Project

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_server import entry_edit_point, with_statements  # noqa: E402

TARGET = "sglang/srt/managers/scheduler.py"
# the engine's own phases (Engine.timings), in the order a run goes
PHASES = ("discover+read", "vocabulary", "facts", "check memo", "derive")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", type=Path, default=Path.home() / ".cache/ctxlint/wheels/sglang-0.5.23"
    )
    parser.add_argument("--cache-dir", default=None, help="the fact cache (default: the profile's)")
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--warm", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the pstats dump there too")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="then derive every rule again on the last edit's text and compare the reports",
    )
    parser.add_argument(
        "--inline",
        action="store_true",
        help="run the deep thread's calls (LibCST's part of the extraction) on the"
        " main thread, so that cProfile sees them",
    )
    args = parser.parse_args(argv)
    if args.inline:
        inline_deep_calls()
    overrides = session.Overrides(cache_dir=args.cache_dir)
    request = session.Request(paths=(str(args.tree),), profile="sglang", overrides=overrides)
    project = Project(load(request))
    began = time.perf_counter()
    project.refresh()
    print(f"first check: {time.perf_counter() - began:.2f} s", flush=True)
    original = (args.tree / TARGET).read_text(encoding="utf-8")
    line, indent = entry_edit_point(original)
    project.edit(TARGET, original)
    began = time.perf_counter()
    project.refresh()
    print(f"open: {time.perf_counter() - began:.2f} s", flush=True)
    # each run's texts new to the fact cache, of the same sizes as every run's
    # (edit n adds n + 1 statements, as bench_server.py's; the salt was once
    # added to the count: edits of up to 1,000 statements, a run's own size)
    salt = time.time_ns() % 997
    n = 0

    def edit() -> tuple[float, dict[str, float]]:
        nonlocal n
        n += 1
        text = with_statements(original, line, indent, n)
        project.edit(TARGET, text.replace(f"_edit = {n}\n", f"_edit = {salt * 1000 + n}\n"))
        began = time.perf_counter()
        project.refresh()
        wall = time.perf_counter() - began
        assert project.checked is not None
        return wall, dict(project.checked.out.timings)

    for _ in range(args.warm):
        print(f"warm-up edit: {edit()[0]:.2f} s", flush=True)
    profile = cProfile.Profile()
    rows = []
    for _ in range(args.edits):
        profile.enable()
        rows.append(edit())
        profile.disable()
        wall, t = rows[-1]
        derived = sorted(k.split()[1] for k in t if k.startswith("rule ") and k.endswith("derive"))
        print(f"edit: {wall:.2f} s; derived again {len(derived)}: {' '.join(derived)}")
    wall = statistics.median(r[0] for r in rows)
    print(f"\nmedian of {len(rows)} edits: {wall:.2f} s (shares of that median)")
    for phase in PHASES:
        v = statistics.median(r[1].get(phase, 0.0) for r in rows)
        print(f"  {phase:<16} {v:6.2f} s  {v / wall:5.0%}")
    rules = sorted(
        {k for r in rows for k in r[1] if k.startswith("rule ")},
        key=lambda k: -statistics.median(r[1].get(k, 0.0) for r in rows),
    )
    for k in rules[:15]:
        v = statistics.median(r[1].get(k, 0.0) for r in rows)
        print(f"  {k:<28} {v:6.3f} s  {v / wall:5.0%}")
    stats = pstats.Stats(profile, stream=(buf := io.StringIO()))
    stats.sort_stats("cumulative").print_stats(60)
    stats.sort_stats("tottime").print_stats(40)
    print(buf.getvalue())
    if args.out:
        stats.dump_stats(args.out)
    if args.compare:
        print(compare(project))
    return 0


def inline_deep_calls() -> None:
    """deepstack.call made a plain call (the recursion limit raised for it)."""
    from ctxlint.core import deepstack

    def call(fn, *args):  # type: ignore[no-untyped-def]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, deepstack.RECURSION_LIMIT))
        try:
            return fn(*args)
        finally:
            sys.setrecursionlimit(limit)

    deepstack.call = call  # type: ignore[assignment]


def compare(project: Project) -> str:
    """The reports of the last (moved) check against every rule derived again
    on the same text (the check memo forgotten): the same, or what differs."""
    held = dict(project.reports)
    memo = project.checker.resident.checks
    assert memo is not None
    moved = memo.moved
    memo.forget()
    project.refresh(full=True)
    derived = len(memo.derived)
    if project.reports == held:
        return f"compare: the {len(moved)} moved rules' reports equal {derived} rules derived again"
    differ = sorted(
        p for p in held.keys() | project.reports.keys() if held.get(p) != project.reports.get(p)
    )
    return f"compare: REPORTS DIFFER in {differ[:10]}"


if __name__ == "__main__":
    raise SystemExit(main())
