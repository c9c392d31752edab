"""Run `ctxlint fix` in-process on a project folder (the fix tests' helper)."""

from __future__ import annotations

from pathlib import Path

from helpers import project_config

from ctxlint.fix_run import FixResult, FixRun


def fix_project(
    root: Path, select: set[str], *, unsafe: bool = False, write: bool = True, jobs: int = 1
) -> FixResult:
    config, rules = project_config(root)
    run = FixRun(config, rules, select=select, unsafe=unsafe, jobs=jobs, use_cache=False)
    result = run.run()
    if write:
        run.write(result)
    return result
