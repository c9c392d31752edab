"""Run the engine in-process on a project folder (no CLI, no cache)."""

from __future__ import annotations

from pathlib import Path

from ctxlint.config import find_config, load_config
from ctxlint.engine import Engine, RunOutput
from ctxlint.rule import load_rules


def run_engine(
    root: Path, *, jobs: int = 1, use_cache: bool = False, select: set[str] | None = None
) -> RunOutput:
    rules = load_rules()
    cfg_path = find_config(root)
    assert cfg_path is not None
    config = load_config(
        cfg_path,
        rule_ids=[r.id for r in rules],
        rule_options={k: v for r in rules for k, v in r.options.items()},
    )
    return Engine(config, rules, jobs=jobs, use_cache=use_cache, selected=select).run()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if parent != Path(".") and not init.exists():
                init.write_text("")
        path.write_text(text)
