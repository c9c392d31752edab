"""Findings per rule across several trees (releases of one codebase, say), each
checked with the same rules and config re-rooted there: the migration's
burn-down as ctxlint sees it, drawn by the same chart as the commit history.

A tree that cannot be checked (a missing folder, a broken derivation) is a point
with its error and no findings, so one bad tree does not hide the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxlint.baseline.ratchet import BaselineError
from ctxlint.config.settings import Config
from ctxlint.core.errors import CtxlintError
from ctxlint.engine.run import Engine
from ctxlint.program.rule import Rule
from ctxlint.report.audit.model import HistoryPoint


@dataclass
class TreeRun:
    """One tree's outcome: findings per rule, the rules it could not run, its sets."""

    label: str
    root: str
    counts: dict[str, int]  # every selected rule that ran, zeros included
    disabled: dict[str, str] = field(default_factory=dict)  # rule -> why
    sizes: dict[str, int] = field(default_factory=dict)  # vocabulary set -> size
    errors: int = 0  # files that did not parse
    error: str | None = None  # the tree could not be checked at all


def vocabulary_sizes(vocab: Any) -> dict[str, int]:
    """The size of each derived vocabulary set (what a history pins)."""
    return {
        "seed accessors": len(vocab.seed_accessors),
        "bag accessors": len(vocab.bag_accessors),
        "namespaces": len(vocab.namespaces),
        "field classes": len(vocab.field_classes),
        "record fields": len(vocab.fields),
        "fields with a namespace": sum(1 for ns in vocab.fields.values() if ns),
        "record properties": len(vocab.properties),
    }


def run_tree(
    config: Config,
    rules: list[Rule],
    selected: list[Rule],
    root: Path,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
) -> TreeRun:
    """Check `root` with `config` re-rooted there (its own fact cache, no baseline)."""
    label = root.name
    if not root.is_dir():
        return TreeRun(label, str(root), {}, error=f"{root} is not a folder")
    there = replace(config, root=root.resolve(), cache_dir=root.resolve() / ".ctxlint_cache")
    there = replace(there, baseline=None)
    try:
        out = Engine(
            there, rules, jobs=jobs, selected={r.id for r in selected}, use_cache=use_cache
        ).run()
    except (CtxlintError, BaselineError, OSError) as exc:
        return TreeRun(label, str(root), {}, error=str(exc))
    counts = {r.id: 0 for r in selected if r.id not in out.disabled}
    for f in out.findings:
        if f.rule in counts:
            counts[f.rule] += 1
    return TreeRun(
        label,
        str(root),
        counts,
        dict(sorted(out.disabled.items())),
        vocabulary_sizes(out.program.vocab),
        len(out.errors),
    )


def across_trees(
    config: Config,
    rules: list[Rule],
    selected: list[Rule],
    trees: list[Path],
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[HistoryPoint]:
    """One chart point per tree, in the order given (oldest first)."""
    points = []
    for i, tree in enumerate(trees, 1):
        if progress:
            progress(i, len(trees), tree.name)
        run = run_tree(config, rules, selected, tree, jobs=jobs, use_cache=use_cache)
        counts = {r.id: run.counts.get(r.id, 0) for r in selected}
        note = run.error or (
            "not run: " + ", ".join(sorted(run.disabled)) if run.disabled else None
        )
        points.append(HistoryPoint(run.root, run.label, "", run.root, counts, note))
    return points
