#!/usr/bin/env python3
"""How much a resident session derives again after an edit (engine.check_memo).

Runs the server's own check sequence in this process (session.check with a
session.Resident that keeps the program, as `ctxlint server` does) on a tree,
first with the per-rule check memo and then without it (every rule derives
and checks after every edit: the code before it), the same edits each time:

- a new statement inside `run_scheduler_process`, before its first one (as
  bench_server.py edits; the lines below it move), a different one each time;
- a same-line edit in a function body: a literal in the entry's body
  changed, no line moved;
- a comment appended at the end of the file.

For each (median of `--edits`): how many rules derived again, the seconds of
the check phase (the engine's "derive" timing plus every rule's "rule X
check": a part the rounds built is not in it), of the whole check, and the CPU
seconds of this process over the whole check (the pool's parse aside: a
shared machine's wall seconds vary with its load, CPU seconds less so). The findings of the two sessions are compared after each edit.

    python bench/bench_check_memo.py --tree T --config C [--target REL] [--edits 3]

A script, not a test: on sglang 0.5.23 one check of a resident session costs
seconds, and the first minutes on a cold cache (warm it with `ctxlint check`).
"""

from __future__ import annotations

import argparse
import ast
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ctxlint import session
from ctxlint.config.settings import load_config
from ctxlint.engine.registry import load_rules

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_server import entry_edit_point  # noqa: E402

# the run's own timings (--timings), beside each rule's
PHASES = ("discover+read", "vocabulary", "facts", "check memo", "derive")


def with_statement(text: str, line: int, indent: int, value: str) -> str:
    """`text` with one new statement before `line` (the lines below it move)."""
    lines = text.splitlines(keepends=True)
    new = f"{' ' * indent}_ctxlint_bench_edit = {value!r}\n"
    return "".join([*lines[: line - 1], new, *lines[line - 1 :]])


def same_line_edit(text: str, value: str) -> str:
    """A literal in `run_scheduler_process`'s body (past its first statement)
    replaced by the string `value`: no line moves."""
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == "run_scheduler_process":
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Constant)
                    and type(sub.value) in (int, str)  # (not a docstring: past the first)
                    and sub.lineno == sub.end_lineno
                    and sub.lineno > node.body[0].lineno
                ):
                    line = lines[sub.lineno - 1]
                    new = f"{line[: sub.col_offset]}{value!r}{line[sub.end_col_offset :]}"
                    lines[sub.lineno - 1] = new
                    return "".join(lines)
    raise SystemExit("bench: no literal in run_scheduler_process")


def setup_for(config_path: Path, tree: Path, memo: bool) -> session.Setup:
    rules = load_rules()
    config = load_config(
        config_path,
        root=tree,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    resident = session.Resident(keep_program=True)
    if not memo:
        resident.checks = None  # every rule derives and checks after every edit
    run = session.RunOptions(use_cache=True, resident=resident)
    report = session.Report(disabled=session.QUIET, warn=None)
    return session.Setup(config, [], rules, rules, request=session.Request(run=run, report=report))


def one(setup: session.Setup, texts: dict[str, str]) -> tuple[dict[str, Any], list[Any]]:
    began, cpu = time.perf_counter(), time.process_time()
    out = session.check(setup, texts=texts).out
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    t = out.timings
    derived = [k.split()[1] for k in t if k.startswith("rule ") and k.endswith(" derive")]
    phase = t.get("derive", 0.0) + sum(v for k, v in t.items() if k.endswith(" check"))
    shown = [(f.rule, f.path, f.line, f.fingerprint, f.message) for f in out.findings]
    phases = {k: v for k, v in t.items() if k in PHASES}
    row = {"derived": len(derived), "phase": phase, "wall": wall, "cpu": cpu, "rules": derived}
    return row | phases, shown


def run(args: argparse.Namespace, memo: bool) -> dict[str, list[tuple[dict[str, Any], list[Any]]]]:
    target = args.tree / args.target
    original = target.read_text(encoding="utf-8")
    line, indent = entry_edit_point(original)
    setup = setup_for(args.config, args.tree, memo)
    rel = args.target
    rows: dict[str, list[tuple[dict[str, Any], list[Any]]]] = {}
    rows["first check"] = [one(setup, {})]
    rows["no edit"] = [one(setup, {})]
    salt = f"{time.time_ns():x}"  # each edit's text new to the fact cache: it is parsed
    edits = {
        "new statement in run_scheduler_process": lambda i: with_statement(
            original, line, indent, f"{salt}-{i}"
        ),
        "same-line edit in run_scheduler_process": lambda i: same_line_edit(
            original, f"{salt}-{i}"
        ),
        "comment appended": lambda i: original + f"# a comment, {salt}-{i}\n",
    }
    for name, make in edits.items():
        rows[name] = []
        for i in range(args.edits):
            rows[name].append(one(setup, {rel: make(i)}))
            one(setup, {})  # back to the tree as it is (not timed)
    del setup
    gc.collect()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--target", default="sglang/srt/managers/scheduler.py")
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args(argv)
    after = run(args, memo=True)
    before = run(args, memo=False)
    print(
        f"{'edit':<42} {'rules derived':>14} {'check phase s':>20} {'whole check s':>20}"
        f" {'its CPU s (parent)':>20}"
    )
    print(f"{'':<42} {'memo / none':>14}" + f" {'memo / none':>20}" * 3)
    for name in after:
        a, b = after[name], before[name]
        same = all(x[1] == y[1] for x, y in zip(a, b, strict=True))

        def med(rows: list[tuple[dict[str, Any], list[Any]]], key: str) -> float:
            return statistics.median(r[0][key] for r in rows)

        print(
            f"{name:<42} {med(a, 'derived'):>6.0f} / {med(b, 'derived'):<6.0f} "
            f"{med(a, 'phase'):>9.2f} / {med(b, 'phase'):<8.2f} "
            f"{med(a, 'wall'):>9.2f} / {med(b, 'wall'):<8.2f}"
            f"{med(a, 'cpu'):>9.2f} / {med(b, 'cpu'):<8.2f}"
            f"{'' if same else '  FINDINGS DIFFER'}"
        )
        if name != "first check":
            print(f"{'':<44}derived again: {' '.join(a[-1][0]['rules'])}")
        for rows, which in ((a, "memo"), (b, "none")):
            split = ", ".join(f"{k} {med(rows, k):.2f}" for k in PHASES if k in rows[0][0])
            print(f"{'':<44}{which}: {split}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
