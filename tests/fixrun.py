"""Run `ctxlint fix` in-process on a project folder (the fix tests' helper)."""

from __future__ import annotations

from pathlib import Path

from helpers import project_setup

from ctxlint.fix_run import FixResult, FixRun


def fix_project(
    root: Path, select: set[str], *, unsafe: bool = False, write: bool = True, jobs: int = 1
) -> FixResult:
    run = FixRun(project_setup(root, jobs=jobs), select=select, unsafe=unsafe)
    result = run.run()
    if write:
        run.write(result)
    return result
