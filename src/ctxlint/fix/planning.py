"""Planning the rewrites, one file at a time, on the worker pool.

Each file with a fixable finding is planned on its own: read, parsed (only
when a fixer asks for the tree: CTX102 without --unsafe and CTX602's kinds
with no fix say why without it), its sites planned, the plan applied and the
seed-accessor imports nothing uses any more dropped. What comes back is plain
data (the sites, and the text before and after), so files are farmed out to
the same fork pool the check uses (core.pool), whose workers inherit the fix
context; the results are taken in path order, so the outcome is the same
whatever the job count.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ctxlint.core import pool, pysource
from ctxlint.core.findings import Finding
from ctxlint.fix.context import FixContext, Fixer
from ctxlint.fix.line_length import line_length
from ctxlint.fix.plan import FilePlan, Site, apply
from ctxlint.fix.source import SourceFile
from ctxlint.fix.unused import drop_unused_imports


@dataclass
class Planned:
    """One file's outcome: its sites, and its text before and after (None: unchanged)."""

    path: str
    sites: list[Site] = field(default_factory=list)
    before: str | None = None
    after: str | None = None


@dataclass
class Planner:
    """What planning a file needs; the pool's workers inherit it (fork)."""

    root: Path
    target_version: str
    modules: dict[str, str]  # path -> module, the checked files
    fixers: dict[str, tuple[Fixer, ...]]  # rule -> its fixers, in the order they plan a file
    ctx: FixContext
    broken: dict[str, str]  # path -> why the check could not read it
    lengths: dict[str, int] = field(default_factory=dict)  # folder -> fix.line_length's
    # a file's bytes by its path (default: read from root); the server's buffers
    read: Callable[[str], bytes] | None = None

    def plan(self, item: tuple[str, list[Finding]]) -> Planned:
        path, findings = item
        out = Planned(path)
        module = self.modules.get(path)
        why = self.broken.get(path)
        src = None
        if why is None and module is not None:
            try:
                data = self.read(path) if self.read else (self.root / path).read_bytes()
                src = SourceFile.read(path, module, data, self.target_version)
            except (OSError, pysource.SourceError) as exc:
                why = str(exc)
        if src is None:
            reason = f"the file is not touched: {why or 'not a checked module'}"
            out.sites = [_left(f, reason) for f in findings]
            return out
        folder = os.path.dirname(path)  # the settings are a folder's: read once for it
        if folder not in self.lengths:
            self.lengths[folder] = line_length(self.root, path)
        plan = FilePlan(src, self.ctx.vocab.runtime_module, line_length=self.lengths[folder])
        try:
            for rule, fixers in self.fixers.items():
                mine = [f for f in findings if f.rule == rule]
                for fixer in fixers if mine else ():
                    fixer(plan, mine, self.ctx)
            text = src.text
            if plan.changes():
                vocab = self.ctx.vocab
                seeds = {vocab.runtime_module, *vocab.accessor_modules.values()}
                text = drop_unused_imports(
                    apply(plan),
                    plan.drop_if_unused,
                    seeds,
                    src.module,
                    src.is_package,
                    plan.wrapped,
                    plan.line_length,
                )
        except Exception as exc:  # a bug in a fixer: this file is left as it is, and says so
            why = f"the fix failed on this file ({type(exc).__name__}: {exc}); please report it"
            out.sites = [_left(f, why) for f in findings]
            return out
        out.sites = plan.sites
        if text != src.text:
            out.before, out.after = src.text, text
        return out


def _left(f: Finding, reason: str) -> Site:
    return Site(f.rule, f.path, f.line, f.span.column, f.snippet, f.scope, reason=reason)


# The planner a pool worker runs (set by _start, inherited through fork).
_WORKER: dict[str, Planner] = {}


def _start(planner: Planner) -> None:
    _WORKER["planner"] = planner


def _plan_one(item: tuple[str, list[Finding]]) -> Planned:
    return _WORKER["planner"].plan(item)


def plan_all(
    planner: Planner,
    todo: dict[str, list[Finding]],
    jobs: int,
    before_fork: Callable[[], None] = lambda: None,
) -> Iterator[Planned]:
    """Each file's outcome, in path order: on `jobs` forked workers when there
    is more than one file (`before_fork` first loads what every worker would
    otherwise load on its own), else here."""
    items = sorted(todo.items())
    if len(items) < 2 or jobs < 2 or os.name != "posix":  # the pool forks its workers
        yield from map(planner.plan, items)
        return
    before_fork()

    def died(item: tuple[str, list[Finding]], how: str) -> Planned:
        path, findings = item
        reason = f"planning this file killed the worker ({how}); please report it"
        return Planned(path, [_left(f, reason) for f in findings])

    done = pool.run(_plan_one, items, jobs=jobs, initializer=_start, initargs=(planner,), died=died)
    yield from sorted(done, key=lambda p: p.path)
