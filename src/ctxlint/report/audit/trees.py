"""Findings per rule across several trees (releases of one codebase, say), each
checked with the same rules and config re-rooted there: the migration's
burn-down as ctxlint sees it, drawn by the same chart as the commit history.

A tree that cannot be checked (a missing folder, a broken derivation) is a point
with its error and no findings, so one bad tree does not hide the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlint import session
from ctxlint.baseline.ratchet import BaselineError
from ctxlint.core.errors import CtxlintError
from ctxlint.report.audit.model import HistoryPoint
from ctxlint.session import Setup


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


def run_tree(setup: Setup, root: Path) -> TreeRun:
    """Check all of `root` with the setup re-rooted there (its own fact cache, no baseline)."""
    label = root.name
    if not root.is_dir():
        return TreeRun(label, str(root), {}, error=f"{root} is not a folder")
    there = setup.other_tree(
        root.resolve(), cache_dir=root.resolve() / ".ctxlint_cache", baseline=None
    )
    there.filters = []  # the whole tree: a release is compared with the others whole
    try:
        checked = session.check(there)
    except (CtxlintError, BaselineError, OSError) as exc:
        return TreeRun(label, str(root), {}, error=str(exc))
    out = checked.out
    counts = {r.id: 0 for r in setup.selected if r.id not in out.disabled}
    for f in checked.result.findings:
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
    setup: Setup,
    trees: list[Path],
    *,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[HistoryPoint]:
    """One chart point per tree, in the order given (oldest first)."""
    points = []
    for i, tree in enumerate(trees, 1):
        if progress:
            progress(i, len(trees), tree.name)
        run = run_tree(setup, tree)
        counts = {r.id: run.counts.get(r.id, 0) for r in setup.selected}
        note = run.error or (
            "not run: " + ", ".join(sorted(run.disabled)) if run.disabled else None
        )
        points.append(HistoryPoint(run.root, run.label, "", run.root, counts, note))
    return points
