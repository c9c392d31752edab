"""The engine's runs over one resolved setup: the only place that starts one.

`session.check` makes one run of a tree; the fix makes a run of the tree as it
is and re-checks of its rewrites, each started where that first run ended and
all sharing one fact cache in memory; the bench and a resident front end (a
language server) call the engine's steps one by one: the tree's sources, its
vocabulary, each file's facts, the derivations, the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlint.cache.shared import SharedCache
from ctxlint.core.findings import FileError, Finding
from ctxlint.discover.files import SourceFile
from ctxlint.discover.sources import Sources
from ctxlint.engine import checks
from ctxlint.engine.run import Engine, RunOutput, discover_files
from ctxlint.engine.start import Decoded, Start
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.session.setup import Setup


@dataclass
class Runs:
    """Runs of the engine over one setup's config and rules.

    `every_rule` checks every rule, not only the selected ones (the fix: a
    rewrite that adds a finding of any rule is rolled back). With `shared`,
    the runs share one fact cache in memory (call `close` when done) and a
    re-check (`recheck`) starts where the check of the tree as it is ended.
    """

    setup: Setup
    pins: dict[str, dict[str, Any]] | None = None  # the baseline's (None: the setup's)
    every_rule: bool = False
    shared: bool = False
    decoded: Decoded = field(default_factory=dict)  # the tree's facts, as its check decoded them
    schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # module -> schema
    _cache: SharedCache | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.pins is None:
            self.pins = self.setup.pins
        if self.shared:
            config, options = self.setup.config, self.setup.request.run
            self._cache = SharedCache(config.cache_dir if options.use_cache else None)

    def engine(
        self,
        *,
        texts: Mapping[str, str] | None = None,
        start: Start | None = None,
        memo: bool = True,
        files: list[SourceFile] | None = None,
        folder_errors: list[FileError] | None = None,
    ) -> Engine:
        """The engine for one run: `texts` in place of those files' bytes,
        starting where `start` says, over `files` when they were discovered."""
        setup, options = self.setup, self.setup.request.run
        return Engine(
            setup.config,
            setup.rules,
            jobs=options.jobs,
            selected={r.id for r in (setup.rules if self.every_rule else setup.selected)},
            use_cache=options.use_cache and not self.shared,
            progress=options.progress,
            pinned=self.pins,
            memo=memo,
            time_rules=options.time_rules,
            files=files,
            folder_errors=folder_errors,
            start=start,
            texts=texts,
            cache=self._cache,
        )

    def check(
        self,
        *,
        memo: bool = True,
        files: list[SourceFile] | None = None,
        folder_errors: list[FileError] | None = None,
    ) -> RunOutput:
        """One run over the tree as it is; its decoded facts (when it derived)
        serve the re-checks."""
        engine = self.engine(memo=memo, files=files, folder_errors=folder_errors)
        out = engine.run()
        self.decoded, self.schemas = engine.decoded, engine.schemas
        return out

    def recheck(self, texts: Mapping[str, str], after: RunOutput | None) -> RunOutput:
        """The tree with `texts` in place of those files, its rounds started
        where the check of the tree as it is (`after`) ended (engine.start)."""
        start = None
        if after is not None and after.rounds is not None:
            start = Start(after.rounds, frozenset(texts), self.decoded)
        return self.engine(texts=texts, start=start).run()

    def close(self) -> None:
        """Close the shared cache (`shared`): later runs open their own."""
        if self._cache is not None:
            self._cache.finish()

    def steps(self, texts: Mapping[str, str] | None = None) -> Steps:
        """One run's steps, to call one by one (`texts` in place of those files)."""
        return Steps(self, self.engine(texts=texts, memo=False))


@dataclass
class Steps:
    """The engine's steps called one by one, as a run calls them in order: the
    bench times them; a resident front end (a language server) keeps the
    program between edits and calls `facts`, `derive` and `findings` again
    for what an edit changed."""

    runs: Runs
    engine: Engine

    def sources(self) -> tuple[list[SourceFile], Sources, list[FileError]]:
        """The tree's files, their content (hashed; read when needed), the unreadable ones."""
        return self.engine.read_sources()

    def vocabulary(self, files: list[SourceFile], sources: Sources) -> Vocabulary:
        """The derived vocabulary (the runtime module's sets) every fact depends on."""
        return self.engine.vocabulary(files, sources)

    def facts(
        self, items: list[tuple[str, str]], sources: Sources, vocab: Vocabulary
    ) -> dict[str, dict[str, Any]]:
        """Each (path, module)'s facts for the vocabulary, cached or extracted:
        the entry `program.files[path]` holds (or {"module", "error"} for a
        file that does not parse)."""
        return self.engine.facts(items, sources, vocab)

    def derive(self, program: Program) -> None:
        """Every runnable rule's derived sets into `program.sets`, from its facts."""
        checks.derive(program, runnable(self.runs.setup, program.vocab), self.engine.timed)

    def findings(self, program: Program) -> list[Finding]:
        """The selected rules' findings on a derived program, its pins compared."""
        runs = self.runs
        setup = runs.setup
        selected = {r.id for r in (setup.rules if runs.every_rule else setup.selected)}
        program.pinned = runs.pins or {}
        rules = runnable(setup, program.vocab)
        return checks.check(program, rules, selected, setup.config, self.engine.timed)


def runnable(setup: Setup, vocab: Vocabulary) -> list[Any]:
    """The setup's rules whose vocabulary sets this codebase has (Rule.needs)."""
    return [r for r in setup.rules if r.disabled_because(vocab) is None]


def discover(setup: Setup, errors: list[FileError]) -> list[SourceFile]:
    """The files a run over the setup checks (folders it cannot read: `errors`)."""
    return discover_files(setup.config, errors)
