"""The fix run: check, plan each file's rewrites, check again, keep what holds.

1. The whole program is checked (every rule, so that a rewrite adding any
   finding is seen).
2. Each file with a fixable finding of a selected rule is parsed again (a file
   that does not parse is never touched) and each fixer plans its sites.
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
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from ctxlint.core import pysource
from ctxlint.core.findings import Finding
from ctxlint.core.outfiles import write_text
from ctxlint.discover.files import discover
from ctxlint.facts.declarations import schema_facts
from ctxlint.facts.extract import parse
from ctxlint.fix.context import FixContext, Fixer
from ctxlint.fix.plan import FIXED, LEFT, ROLLED_BACK
from ctxlint.fix.planning import Planner, plan_all
from ctxlint.fix.result import FixResult
from ctxlint.fix.targets import Targets
from ctxlint.program.core import Program
from ctxlint.program.rule import FixGuard, Rule
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
        config = self.config
        self._files = {f.rel: f.module for f in discover(config.root, config.src, config.exclude)}
        self._texts: dict[str, str] = {}
        self._guards: dict[str, FixGuard] | None = None  # asked of the tree as it is

    # -- the tree ---------------------------------------------------------------
    def _bytes(self, rel: str) -> bytes:
        if rel in self.buffers:
            return self.buffers[rel].encode("utf-8")
        return (self.config.root / rel).read_bytes()

    def _text(self, rel: str) -> str:
        if rel not in self._texts:
            try:
                self._texts[rel] = self._bytes(rel).decode("utf-8", "replace")
            except OSError:
                self._texts[rel] = ""
        return self._texts[rel]

    def _read_all(self) -> None:
        """Every checked file's text, read once here rather than by each worker."""
        for rel in self._files:
            self._text(rel)

    def named_elsewhere(self, patterns: list[str], path: str) -> bool:
        compiled = [re.compile(p) for p in patterns]
        # a plain substring test first: the regexes run on the few files holding the words
        words = [max(re.findall(r"\w+", p.replace("\\b", "")), key=len) for p in patterns]
        for rel in self._files:
            if rel == path:
                continue
            text = self._text(rel)
            if all(w in text for w in words) and all(c.search(text) for c in compiled):
                return True
        return False

    def _schema(self) -> Callable[[str], dict[str, Any] | None]:
        by_module = {m: rel for rel, m in self._files.items()}
        cache = dict(self.runs.schemas)  # what the check's vocabulary read; the rest parsed here

        def load(module: str) -> dict[str, Any] | None:
            if module not in cache:
                rel = by_module.get(module)
                try:
                    tree = parse(pysource.read(self._bytes(rel), self.config.target_version))
                except (TypeError, OSError, pysource.SourceError):
                    cache[module] = None
                else:
                    cache[module] = schema_facts(tree, module, rel.endswith("__init__.py"))  # type: ignore[union-attr]
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
        # what the fix reads of a check is its vocabulary, findings and errors:
        # the program's indexes go now, or the next check would build its own
        # beside them (twice the peak memory); the facts the next check takes
        # as they are (engine.start) are kept in self.runs.decoded
        p = out.program
        if not texts and p.files and self._guarding:  # the tree as it is
            self._guards = self._ask_guards(p)
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
        if self._guards is None and any(f.rule in readers for f in before.findings):
            self._check({}, memo=False)
        return self._guards or {}

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
            Targets(vocab, self._schema()),
            self.unsafe,
            self.named_elsewhere,
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
        for planned in plan_all(planner, todo, self.jobs, before_fork=self._read_all):
            result.plans[planned.path] = planned.sites
            result.sites.extend(planned.sites)
            if planned.after is not None:
                assert planned.before is not None
                result.before[planned.path], result.after[planned.path] = (
                    planned.before,
                    planned.after,
                )
        self._verify(before, result)
        return result

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
                    [(s.rule, s.scope, s.snippet) for s in result.plans[path] if s.status == FIXED]
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
            for path, why in bad.items():
                del result.after[path]
                del result.before[path]
                for s in result.plans[path]:
                    if s.status == FIXED:
                        s.status, s.reason = ROLLED_BACK, why
        result.output = before  # every rewrite rolled back: the first check stands

    def write(self, result: FixResult) -> None:
        for path, text in sorted(result.after.items()):
            write_text(self.config.root / path, text, "the fixed file")


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
