#!/usr/bin/env python3
"""Time the server's answer to comment and blank-line edits of
`srt/managers/scheduler.py` on the unpacked sglang==0.5.23 wheel, in one
process (server.project.Project, the server's own check sequence, no LSP):

- the buffer opened and checked, its line states computed (as the server
  does when the editor is first quiet);
- `--edits` comment edits: a comment line appended to the end, reworded each
  time (the bench_server.py row's edit);
- `--edits` blank-line edits: a blank line added, cumulatively, before a
  `def`, `class` or decorator (between two definitions, a class's methods
  among them), at places spread over the file.

Each edit is timed from the buffer's new text (Project.edit, as didChange
calls it) to the reports moved (or, when the edit cannot be answered so, the
full check); the rows give the median,
the slowest, and how many edits took the layout path. A script, not a test:
the first check of the tree runs for minutes (the cache of the wheel's tree
warm: less). Exit 0 always.

    python bench/bench_layout_edits.py [--tree T] [--edits 20] [--json OUT] [--profile] [--full]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from pathlib import Path

from ctxlint import session
from ctxlint.server.checking import load
from ctxlint.server.project import Project

TARGET = "sglang/srt/managers/scheduler.py"


def blank_line_places(text: str, count: int) -> list[int]:
    """0-based lines, spread over the file, each a blank line before a `def`,
    `class` or decorator (between two definitions, a class's methods among
    them): a blank line added there is a layout edit."""
    lines = text.splitlines()
    heads = ("def ", "async def ", "class ", "@")
    places = [
        i
        for i in range(len(lines) - 1)
        if not lines[i].strip() and lines[i + 1].lstrip().startswith(heads)
    ]
    step = max(len(places) // count, 1)
    return places[::step][:count]


def timed(project: Project, path: str, text: str, full: bool = False) -> tuple[float, bool]:
    """Seconds from the editor's new text (the server's didChange) to the
    reports moved or checked (`full`: always checked, the baseline), and
    whether it was a layout edit."""
    began = time.perf_counter()
    project.edit(path, text)
    project.refresh(full=full)
    return time.perf_counter() - began, project.moved_only


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", type=Path, default=Path.home() / ".cache/ctxlint/wheels/sglang-0.5.23"
    )
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--json", type=Path, help="write the rows there too")
    parser.add_argument("--profile", action="store_true", help="profile the comment edits")
    parser.add_argument(
        "--full", action="store_true", help="the baseline: every edit takes the full check"
    )
    args = parser.parse_args(argv)
    setup = load(session.Request(paths=(str(args.tree),), profile="sglang"))
    project = Project(setup)
    rows: dict[str, float | int] = {}
    began = time.perf_counter()
    project.refresh()
    rows["first check (s)"] = time.perf_counter() - began
    original = (args.tree / TARGET).read_text(encoding="utf-8")
    rows["open: the full check (s)"] = timed(project, TARGET, original)[0]
    began = time.perf_counter()
    project.prepare_layouts()
    rows["line states of the buffer (s)"] = time.perf_counter() - began
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    comments = [
        timed(project, TARGET, original + f"# a comment, {i}\n", args.full)
        for i in range(args.edits)
    ]
    if profile is not None:
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    text = original + f"# a comment, {args.edits - 1}\n"
    blanks = []
    for shift, line in enumerate(blank_line_places(original, args.edits)):
        lines = text.splitlines(keepends=True)
        at = line + shift  # the blank lines added above it so far
        text = "".join([*lines[:at], "\n", *lines[at:]])
        blanks.append(timed(project, TARGET, text, args.full))
    for name, runs in (("comment edit", comments), ("blank-line edit", blanks)):
        times = [t for t, _ in runs]
        rows[f"{name}: median (ms)"] = statistics.median(times) * 1000
        rows[f"{name}: slowest (ms)"] = max(times) * 1000
        rows[f"{name}: layout edits of {len(runs)}"] = sum(fast for _, fast in runs)
    width = max(len(k) for k in rows)
    for name, value in rows.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{name:<{width}}  {shown}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
