"""Planning the rewrites, one file at a time, on the worker pool.

Each file with a fixable finding is planned on its own: read, parsed (only
when a fixer asks for the tree: CTX102 without --unsafe and CTX602's kinds
with no fix say why without it), its sites planned, the plan applied and the
seed-accessor imports nothing uses any more dropped. What comes back is plain
data (the sites, and the text before and after), so files are farmed out to
the same fork pool the check uses (core.pool), whose workers inherit the fix
context; the results are taken in path order, so the outcome is the same
whatever the job count. A file planned by an earlier run, whose fixers' answers
about the rest of the tree still hold, is not planned again (fix.plan_cache).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ctxlint.cache.store import FactCache
from ctxlint.core import pool, pysource
from ctxlint.core.findings import Finding
from ctxlint.discover.sources import content_hash
from ctxlint.fix import plan_cache
from ctxlint.fix.context import FixContext, Fixer
from ctxlint.fix.elsewhere import NamedElsewhere
from ctxlint.fix.line_length import line_length
from ctxlint.fix.plan import FilePlan, Site, apply
from ctxlint.fix.plan_cache import Outcome, RunInputs, Trace
from ctxlint.fix.source import SourceFile
from ctxlint.fix.unused import drop_unused_imports


@dataclass
class Planned:
    """One file's outcome: its sites, and its text before and after (None: unchanged)."""

    path: str
    sites: list[Site] = field(default_factory=list)
    before: str | None = None
    after: str | None = None
    # what an outcome worth keeping was planned from: the questions its fixers
    # asked and the content hash of the bytes planned (None: not to be kept)
    trace: Trace | None = None
    content: str = ""
    replayed: bool = False  # taken from the plan cache, not planned here


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
        data = b""
        if why is None and module is not None:
            try:
                data = self.bytes_of(path)
                src = SourceFile.read(path, module, data, self.target_version)
            except (OSError, pysource.SourceError) as exc:
                why = str(exc)
        if src is None:
            reason = f"the file is not touched: {why or 'not a checked module'}"
            out.sites = [_left(f, reason) for f in findings]
            return out
        plan = FilePlan(src, self.ctx.vocab.runtime_module, line_length=self.line_length(path))
        ctx, trace = plan_cache.recording(self.ctx, path)
        try:
            for rule, fixers in self.fixers.items():
                mine = [f for f in findings if f.rule == rule]
                for fixer in fixers if mine else ():
                    fixer(plan, mine, ctx)
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
        out.trace, out.content = trace, content_hash(data)
        return out

    def bytes_of(self, path: str) -> bytes:
        """The file's bytes as the fix plans on them (`read`'s, else the disk's)."""
        return self.read(path) if self.read else (self.root / path).read_bytes()

    def line_length(self, path: str) -> int:
        folder = os.path.dirname(path)  # the settings are a folder's: read once for it
        if folder not in self.lengths:
            self.lengths[folder] = line_length(self.root, path)
        return self.lengths[folder]


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


@dataclass
class PlanStore:
    """Where a fix run keeps each file's outcome (fix.plan_cache): `cache`
    (None: --no-cache), the run's inputs, the content hash of every file as
    the check read it, and the run's "named elsewhere" answers."""

    cache: FactCache | None
    run: RunInputs
    hashes: dict[str, str]
    elsewhere: NamedElsewhere | None = None
    replayed: int = 0  # files whose outcome was replayed (the tests read these)
    planned: int = 0  # files planned


def _key(store: PlanStore, planner: Planner, path: str, content: str, found: list[Finding]) -> str:
    return plan_cache.plan_key(
        store.run,
        content,
        planner.modules[path],
        path.endswith("__init__.py"),
        planner.line_length(path),
        found,
    )


def _replay(planner: Planner, path: str, kept: Outcome, content: str) -> Planned | None:
    """A kept outcome as this run's, or None when the file is not as it was
    planned (then it is planned again)."""
    out = Planned(path, plan_cache.sites(kept, path), replayed=True)
    if kept.after is not None:  # the text before: read again, as planned
        try:
            data = planner.bytes_of(path)
        except OSError:
            return None
        if content_hash(data) != content:
            return None
        out.before, out.after = data.decode("utf-8"), kept.after
    return out


def plan_files(
    planner: Planner,
    todo: dict[str, list[Finding]],
    jobs: int,
    store: PlanStore,
    before_fork: Callable[[], None] = lambda: None,
) -> list[Planned]:
    """Each file's outcome, in path order: replayed from the cache when its
    fixers' answers still hold, else planned (plan_all) and kept."""
    cache = store.cache
    keys = {
        path: _key(store, planner, path, store.hashes[path], found)
        for path, found in todo.items()
        if cache is not None
        and path in planner.modules
        and path in store.hashes
        and path not in planner.broken
    }
    stored = cache.get_many(keys.values()) if cache is not None else {}
    kept = {p: plan_cache.decode(stored.get(k)) for p, k in keys.items()}
    elsewhere = store.elsewhere
    if elsewhere is not None:  # the kept answers to every question, read at once
        elsewhere.load(
            (a[1], p)
            for p, k in kept.items()
            if k is not None
            for a in k.asked
            if a[0] == "elsewhere"
        )
    done: dict[str, Planned] = {}
    for path, k in sorted(kept.items()):
        if k is not None and plan_cache.still_holds(k, path, planner.ctx):
            again = _replay(planner, path, k, store.hashes[path])
            if again is not None:
                done[path] = again
    store.replayed += len(done)
    rest = {p: found for p, found in todo.items() if p not in done}
    new: dict[str, Outcome] = {}
    yes = plan_cache.answer(True)
    for planned in plan_all(planner, rest, jobs, before_fork=before_fork):
        store.planned += 1
        done[planned.path] = planned
        trace = planned.trace
        if trace is None:
            continue
        if elsewhere is not None:  # what the workers found out, kept for the next run
            for a in trace.asked:
                if a[0] == "elsewhere":
                    elsewhere.learn(a[1], planned.path, a[2] == yes)
        kept_now = plan_cache.outcome(trace, planned.sites, planned.after, planned.before)
        if kept_now is not None and cache is not None:
            key = _key(store, planner, planned.path, planned.content, todo[planned.path])
            new[key] = kept_now
    if cache is not None:
        plan_cache.store(cache, new)
    if elsewhere is not None:
        elsewhere.save()
    return [done[p] for p in sorted(done)]
