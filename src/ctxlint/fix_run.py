"""The fix run: check, plan each file's rewrites, check again, keep what holds.

1. The whole program is checked (every rule, so that a rewrite adding any
   finding is seen).
2. Each file with a fixable finding of a selected rule is parsed again (a file
   that does not parse is never touched) and each fixer plans its sites; a
   file planned by an earlier run whose fixers' answers still hold is replayed
   from the cache instead (fix.plan_cache), so a fix with nothing to do costs
   about a warm check.
3. The rewritten texts are checked again as a whole program, in memory: a file
   whose rewrite leaves a fixed finding, adds one (in it, or naming it from
   another file), or does not parse, is rolled back, and the rest checked
   again until what is left holds.
4. Unless only the diff is asked for, each kept file is written atomically.
The baseline is never rewritten: the fixed findings show as stale.

Each rule brings its fixers (Rule.fixers); fix/ holds what they are written
with (the plan, the source and its scopes, the line length) and the planning.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ctxlint.core import pysource
from ctxlint.core.findings import Finding
from ctxlint.core.outfiles import write_text
from ctxlint.facts.declarations import schema_facts
from ctxlint.facts.extract import parse
from ctxlint.fix import param_chain, plan_cache
from ctxlint.fix.added_accessors import Additions, annotations
from ctxlint.fix.context import FixContext, Fixer
from ctxlint.fix.elsewhere import NamedElsewhere, tree_digest
from ctxlint.fix.plan import FIXED, LEFT, ROLLED_BACK
from ctxlint.fix.plan_cache import RunInputs
from ctxlint.fix.planning import Planner, PlanStore, plan_files
from ctxlint.fix.result import FixResult
from ctxlint.fix.targets import Targets
from ctxlint.program.core import Program
from ctxlint.program.rule import FixGuard, GuardUntil, Rule
from ctxlint.session import RunOutput, Runs, Setup


def fixable(rules: list[Rule]) -> dict[str, tuple[str, ...]]:
    """Rule id -> the kinds of fix it has ("safe", "unsafe"), for the rules that have one."""
    return {r.id: r.fixes for r in rules if r.fixes}


def fixers(rules: list[Rule]) -> dict[str, tuple[Fixer, ...]]:
    """Rule id -> its fixers, in the order the rules plan a file (Rule.fix_order,
    then id): a rename (CTX401) frees a name a read's target (CTX101, CTX102)
    may need."""
    ordered = sorted((r for r in rules if r.fixes), key=lambda r: (r.fix_order, r.id))
    return {r.id: r.fixers() for r in ordered}


class FixRun:
    """The fix of a setup's tree: `select` the rules whose fixers run, `paths`
    the files they may rewrite, `pins` the baseline's (the checks compare them)."""

    def __init__(
        self,
        setup: Setup,
        *,
        select: set[str],
        unsafe: bool = False,
        paths: Callable[[str], bool] = lambda _p: True,
        pins: dict[str, dict[str, Any]] | None = None,
        texts: Mapping[str, str] | None = None,
        only: Callable[[Finding], bool] = lambda _f: True,
    ) -> None:
        """`texts` (path -> text) stand in for those files' bytes throughout (the
        language server's unsaved buffers); `only` keeps the findings to fix
        (one quick fix), as `paths` keeps their files."""
        self.config, self.rules = setup.config, setup.rules
        self.buffers = dict(texts or {})
        self.only = only
        self.fixers = {k: v for k, v in fixers(self.rules).items() if k in select and v}
        self.select = set(self.fixers)
        self.unsafe = unsafe
        self.paths = paths
        # every rule checked (a rewrite that adds any finding is rolled back), all
        # the checks sharing one fact cache, each re-check started where the first ended
        self.runs = Runs(setup, pins=pins, every_rule=True, shared=True)
        jobs = setup.request.run.jobs
        self.jobs = max(1, jobs or os.cpu_count() or 1)  # as the engine counts them
        self.use_cache = setup.request.run.use_cache
        # the checked files (path -> module), as the first check read them
        self._files: dict[str, str] = {}
        self.elsewhere = NamedElsewhere([], self._bytes)
        self._guards: dict[str, FixGuard] | None = None  # asked of the tree as it is
        self._additions: Additions | None = None  # accessors added to the runtime module
        # CTX102's "is this attribute the published record", asked of the tree as it is
        self._handed: param_chain.HandedRecords | None = None
        self.guards_built = 0  # programs built again only to ask the guards

    # -- the tree ---------------------------------------------------------------
    def _bytes(self, rel: str) -> bytes:
        """A checked file's bytes as the first check read them (a buffer's, for
        one the server holds; b"" for one it could not read)."""
        sources = self.runs.sources
        return sources[rel] if sources is not None and rel in sources else b""

    def _seen(self) -> None:
        """The tree as the first check read it: what the fix plans on, and what
        "named elsewhere" searches (its answers kept for exactly that tree)."""
        sources = self.runs.sources
        if sources is None:
            return
        self._files = {f.rel: f.module for f in self.runs.files}
        self.elsewhere.paths = list(self._files)
        if self.use_cache:
            self.elsewhere.tree = tree_digest(self._files, sources.hashes)
            self.elsewhere.cache = self.runs.cache

    def _schema_facts(self, rel: str, module: str) -> dict[str, Any] | None:
        """A module's schema facts: kept by content (plan_cache.schema_key), else parsed."""
        sources, cache = self.runs.sources, self.runs.cache
        if sources is None or rel not in sources:
            return None
        target = self.config.target_version
        package = rel.endswith("__init__.py")
        key = plan_cache.schema_key(sources.hashes[rel], module, package, target)
        if self.use_cache and cache is not None:
            blob = cache.get_many([key]).get(key)
            try:
                kept = json.loads(blob) if blob is not None else False
            except ValueError:
                kept = False
            if kept is None or isinstance(kept, dict):
                return kept
        try:
            facts = schema_facts(parse(pysource.read(sources[rel], target)), module, package)
        except pysource.SourceError:
            facts = None
        if self.use_cache and cache is not None:
            cache.put_many({key: json.dumps(facts).encode()})
        return facts

    def _schema(self) -> Callable[[str], dict[str, Any] | None]:
        by_module = {m: rel for rel, m in self._files.items()}
        cache = dict(self.runs.schemas)  # what the check's vocabulary read; the rest read here

        def load(module: str) -> dict[str, Any] | None:
            if module not in cache:
                rel = by_module.get(module)
                cache[module] = None if rel is None else self._schema_facts(rel, module)
            return cache[module]

        return load

    def _check(
        self, texts: dict[str, str], *, memo: bool = True, start: RunOutput | None = None
    ) -> RunOutput:
        """The tree, with `texts` in place of those files; a re-check's rounds
        start where the check of the tree as it is (`start`) ended."""
        if texts:
            out = self.runs.recheck(self.buffers | texts, start)
        else:
            out = self.runs.check(memo=memo, texts=self.buffers)
            self._seen()
        # what the fix reads of a check is its vocabulary, findings and errors:
        # the program's indexes go now, or the next check would build its own
        # beside them (twice the peak memory); the facts the next check takes
        # as they are (engine.start) are kept in self.runs.decoded
        p = out.program
        if not texts and p.files and self._guarding:  # the tree as it is
            self._guards = self._ask_guards(p)
        if not texts and p.files and self.unsafe and "CTX101" in self.select:
            self._handed = param_chain.HandedRecords(p)
        out.program = Program(p.config, p.vocab, {}, sets=p.sets, pinned=p.pinned, paths=p.paths)
        return out

    @property
    def _readers(self) -> set[str]:
        """The rules of this run whose fixers read a fix guard (Rule.fix_guards)
        and rewrite: a rule with an unsafe fix only rewrites with --unsafe."""
        return {
            r.id
            for r in self.rules
            if r.fix_guards and r.id in self.select and (self.unsafe or "safe" in r.fixes)
        }

    @property
    def _guarding(self) -> set[str]:
        """The rules whose fix guards the readers read."""
        readers = self._readers
        return {g for r in self.rules if r.id in readers for g in r.fix_guards}

    def _ask_guards(self, program: Program) -> dict[str, FixGuard]:
        out: dict[str, FixGuard] = {}
        for r in self.rules:
            if r.id in self._guarding and r.disabled_because(program.vocab) is None:
                guard = r.fix_guard(program)
                if guard is not None:
                    out[r.id] = guard
        return out

    def _guards_for(self, before: RunOutput) -> dict[str, FixGuard]:
        """The guards the run's fixers read, from the tree's program: when the
        first check replayed a stored outcome, the program is built once more
        (the answer must not depend on the cache), if a finding of a rule that
        reads them is to be fixed."""
        readers = self._readers
        if not readers:
            return {}
        if not any(f.rule in readers for f in before.findings):
            return self._guards or {}
        key = self._guards_key(before)
        if self._guards is None:
            self._guards = self._stored_guards(key)
        if self._guards is None:
            self._check({}, memo=False)
            self.guards_built += 1
        if key is not None and self._guards is not None:
            self._store_guards(key, self._guards)  # for the next run, which replays
        return self._guards or {}

    def _guards_key(self, before: RunOutput) -> str | None:
        """The guards are a function of exactly the check's inputs: they are kept
        beside its stored outcome (None: the check stored none, as with --no-cache)."""
        if before.memo_key is None or self.runs.cache is None:
            return None
        parts = json.dumps([before.memo_key, sorted(self._guarding)]).encode()
        return "fixguards:" + hashlib.blake2b(parts, digest_size=16).hexdigest()

    def _stored_guards(self, key: str | None) -> dict[str, FixGuard] | None:
        cache = self.runs.cache
        if key is None or cache is None:
            return None
        blob = cache.get_many([key]).get(key)
        try:
            data = json.loads(blob) if blob is not None else None
        except ValueError:
            return None
        if not (isinstance(data, dict) and set(data) <= self._guarding):
            return None  # a miss: an entry of another shape is never trusted
        guards = {rule: GuardUntil.from_json(value) for rule, value in data.items()}
        return None if None in guards.values() else guards  # type: ignore[return-value]

    def _store_guards(self, key: str, guards: dict[str, FixGuard]) -> None:
        if self.runs.cache is not None:
            data = {rule: g.to_json() for rule, g in guards.items()}
            self.runs.cache.put_many({key: json.dumps(data, sort_keys=True).encode()})

    # -- the run ----------------------------------------------------------------
    def run(self) -> FixResult:
        # The cyclic GC is paused, as the engine pauses it for a check (the pool's
        # workers inherit that): between checks the heap still holds a check's
        # millions of acyclic objects, which every collection the fixers'
        # LibCST trees set off would traverse again.
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            self.runs.close()
            if paused:
                gc.enable()

    def _run(self) -> FixResult:
        result = FixResult()
        before = self._check({})
        result.checks = 1
        result.output = before
        result.errors = list(before.errors)
        vocab = before.program.vocab
        ctx = FixContext(
            vocab,
            Targets(vocab, self._schema(), add=self.unsafe),
            self.unsafe,
            self.elsewhere,
            self._guards_for(before),
        )
        todo: dict[str, list[Finding]] = {}
        for f in before.findings:
            if f.rule in self.select and self.paths(f.path) and self.only(f):
                todo.setdefault(f.path, []).append(f)
        broken = {e.path: e.message for e in before.errors}
        planner = Planner(
            self.config.root,
            self.config.target_version,
            self._files,
            self.fixers,
            ctx,
            broken,
            read=self._bytes,
        )
        store = self._store(vocab)
        for planned in plan_files(
            planner, todo, self.jobs, store, before_fork=self.elsewhere.prepare
        ):
            result.plans[planned.path] = planned.sites
            result.sites.extend(planned.sites)
            if planned.after is not None:
                assert planned.before is not None
                result.before[planned.path], result.after[planned.path] = (
                    planned.before,
                    planned.after,
                )
        result.planned, result.replayed = store.planned, store.replayed
        self._chain(result, planner, todo)
        self._additions = self._added(result, ctx.targets)
        self._settle(result)
        self._verify(before, result)
        return result

    def _chain(self, result: FixResult, planner: Planner, todo: dict[str, list[Finding]]) -> None:
        """The parameters whose calls hand them a record (fix.param_chain): each
        dropped with the argument at every call, as one unit, or its file planned
        again with the reason it stays (until every one left holds)."""

        def text(texts: dict[str, str]) -> Callable[[str], str]:
            return lambda p: texts.get(p) or self._bytes(p).decode("utf-8", "replace")

        vocab = planner.ctx.vocab
        seeds = set(vocab.seed_accessors)
        modules = {vocab.runtime_module, *vocab.accessor_modules.values()}
        while True:
            markers = sorted({(s.path, s.drops) for s in result.sites if s.drops})
            chains = param_chain.Chains(
                self._files,
                text(result.after),
                text(result.before),
                seeds,
                modules,
                self._handed_records,
            )
            refused = {m: why for m in markers if (why := self._refused(chains.drop(*m), m[1]))}
            if not refused:
                break
            ctx = replace(planner.ctx, refused={**planner.ctx.refused, **refused})
            planner = replace(planner, ctx=ctx)
            for path in sorted({p for p, _ in refused}):
                again = planner.plan((path, todo[path]))
                result.plans[path] = again.sites
                result.before.pop(path, None)
                result.after.pop(path, None)
                if again.before is not None and again.after is not None:
                    result.before[path], result.after[path] = again.before, again.after
            result.sites = [s for p in sorted(result.plans) for s in result.plans[p]]
        for path, marker in markers:  # each on the texts the ones before it left
            unit = chains.drop(path, marker)
            for p, new in unit.texts.items():
                result.before.setdefault(p, self._bytes(p).decode("utf-8", "replace"))
                result.after[p] = new
            for s in result.plans.get(path, []):
                if s.drops == marker and unit.also:
                    s.reason += ", and with it " + ", ".join(unit.also)
            _join(result, {path, *unit.texts})

    def _refused(self, unit: param_chain.Unit, marker: str) -> str:
        """Why a parameter's drop does not go ahead ("" : it does)."""
        outside = sorted(p for p in unit.texts if not self.paths(p))
        if unit.refused or not outside:
            return unit.refused
        param = marker.partition(":")[2]
        return (
            f"the parameter `{param}` stays: its calls in {outside[0]} are outside this run's files"
        )

    def _handed_records(self, path: str, module: str, cls: str | None, attr: str) -> bool:
        if self._handed is None:  # the first check replayed: the program once more
            self._check({}, memo=False)
        return self._handed is not None and self._handed(path, module, cls, attr)

    def _settle(self, result: FixResult) -> None:
        """The runtime module's text in step with the sites fixed now: a file
        calling an accessor that cannot be added is rolled back, until none is."""
        added = self._additions
        while added is not None and (bad := added.sync(result)):
            _roll_back(result, bad)

    def _added(self, result: FixResult, targets: Targets) -> Additions | None:
        """The runtime module's file, for the accessors the fixed sites call
        that it lacks (None: no site calls one)."""
        if not any(s.adds for s in result.sites) or targets.record_getter is None:
            return None
        vocab = targets.vocab
        by_module = {m: rel for rel, m in self._files.items()}
        path = by_module.get(vocab.runtime_module)
        if path is None:
            return None
        before = result.before.get(path) or self._bytes(path).decode("utf-8", "replace")
        module, _, cls = vocab.record_class.rpartition(".")
        record = by_module.get(module)
        shapes = annotations(self._bytes(record), cls, before) if record else {}
        return Additions(path, before, result.after.get(path), targets.record_getter, shapes)

    def _store(self, vocab: Any) -> PlanStore:
        """Where this run keeps each file's plan (fix.plan_cache), keyed by what
        the plans depend on beyond the file: the vocabulary, the fixers, --unsafe
        and the target version."""
        run = RunInputs(
            vocab.full_key(),
            tuple(
                f"{rule}:{f.__module__}.{f.__qualname__}"
                for rule, fs in self.fixers.items()
                for f in fs
            ),
            self.unsafe,
            self.config.target_version,
        )
        sources = self.runs.sources
        assert sources is not None
        cache = self.runs.cache if self.use_cache else None
        return PlanStore(cache, run, sources.hashes, self.elsewhere)

    def _verify(self, before: RunOutput, result: FixResult) -> None:
        """Check the rewritten program; roll back the files that do not hold."""
        old = _by_file(before.findings)
        while result.after:
            after = self._check(result.after, start=before)
            result.checks += 1
            result.output = after
            new = _by_file(after.findings)
            bad: dict[str, str] = {}
            for e in after.errors:
                if e.path in result.after:
                    bad[e.path] = f"the rewritten file does not parse: {e.message}"
            for path in sorted(set(new) | set(result.after)):
                fixed = (
                    [
                        (s.rule, s.scope, s.snippet)
                        for s in result.plans.get(path, [])
                        if s.status == FIXED
                    ]
                    if path in result.after
                    else []
                )
                extra = _unmatched(new.get(path, []), old.get(path, []), fixed)
                for f in extra:
                    if path in result.after:
                        kind = "left" if (f.rule, f.scope, f.snippet) in fixed else "added"
                        bad.setdefault(path, f"the rewrite {kind} a {f.rule} finding: {f.message}")
                        continue
                    # a finding in an unchanged file: the rewrite it names, else every one
                    named = [p for p in result.after if p in f.message or p in f.details]
                    for p in named or list(result.after):
                        bad.setdefault(
                            p, f"the rewrite added a {f.rule} finding in {path}: {f.message}"
                        )
            if not bad:
                return
            added = self._additions
            if added is not None and added.path in bad:  # the module the accessors go to
                added.refused, added.planned = bad.pop(added.path), None
                _roll_back(result, {added.path: added.refused})
            _roll_back(result, bad)
            self._settle(result)
        result.output = before  # every rewrite rolled back: the first check stands

    def write(self, result: FixResult) -> None:
        for path, text in sorted(result.after.items()):
            write_text(self.config.root / path, text, "the fixed file")


def _join(result: FixResult, paths: set[str]) -> None:
    """`paths` are kept or rolled back together (with any unit they meet)."""
    meet = [u for u in result.units if u & paths]
    result.units = [u for u in result.units if not u & paths] + [paths.union(*meet)]


def _roll_back(result: FixResult, bad: dict[str, str]) -> None:
    """Leave each of those files as it was, its fixed sites rolled back (why),
    and every file of a unit one of them is in."""
    for unit in result.units:
        hit = sorted(p for p in unit if p in bad)
        for p in sorted(unit - set(bad)) if hit else ():
            bad[p] = (
                f"rolled back with {hit[0]} (one parameter dropped across files): {bad[hit[0]]}"
            )
    for path, why in bad.items():
        result.after.pop(path, None)
        result.before.pop(path, None)
        for s in result.plans.get(path, []):
            if s.status == FIXED:
                s.status, s.reason = ROLLED_BACK, why


def _by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.path, []).append(f)
    return out


def _unmatched(
    after: list[Finding], before: list[Finding], fixed: list[tuple[str, str, str]]
) -> list[Finding]:
    """The findings after the rewrite that are none of those before it, less
    the fixed ones. A finding is the same one when its rule and scope are, and
    its snippet (or, when the rewrite was inside its node, its message) is."""
    pool = Counter((f.rule, f.scope, f.snippet) for f in before) - Counter(fixed)
    by_message = Counter((f.rule, f.scope, f.message) for f in before)
    by_message.subtract((r, sc, m) for r, sc, m in _messages(before, fixed))
    out = []
    for f in after:
        key = (f.rule, f.scope, f.snippet)
        if pool[key] > 0:
            pool[key] -= 1
        elif by_message[(f.rule, f.scope, f.message)] > 0 and key not in fixed:
            by_message[(f.rule, f.scope, f.message)] -= 1
        else:
            out.append(f)
    return out


def _messages(
    before: list[Finding], fixed: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """The messages of the fixed findings (each fixed key once)."""
    todo = Counter(fixed)
    out = []
    for f in before:
        key = (f.rule, f.scope, f.snippet)
        if todo[key] > 0:
            todo[key] -= 1
            out.append((f.rule, f.scope, f.message))
    return out


__all__ = ["FIXED", "LEFT", "ROLLED_BACK", "FixResult", "FixRun", "fixable", "fixers"]
