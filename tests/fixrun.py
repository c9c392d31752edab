"""Run `ctxlint fix` in-process on a project folder (the fix tests' helper)."""

from __future__ import annotations

from pathlib import Path

from ctxlint.config.settings import find_config, load_config
from ctxlint.engine.registry import load_rules
from ctxlint.fix.run import FixResult, FixRun


def fix_project(
    root: Path, select: set[str], *, unsafe: bool = False, write: bool = True
) -> FixResult:
    rules = load_rules()
    cfg_path = find_config(root)
    assert cfg_path is not None
    config = load_config(
        cfg_path,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    run = FixRun(config, rules, select=select, unsafe=unsafe, jobs=1, use_cache=False)
    result = run.run()
    if write:
        run.write(result)
    return result
