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
from functools import partial
from pathlib import Path
from typing import Any

from ctxlint.cache.pending import PendingCache
from ctxlint.cache.shared import SharedCache
from ctxlint.cache.store import FactCache
from ctxlint.core.findings import FileError, Finding
from ctxlint.discover.files import SourceFile
from ctxlint.discover.sources import Sources
from ctxlint.engine import checks
from ctxlint.engine.check_memo import CheckMemo
from ctxlint.engine.kept_tree import KeptTree
from ctxlint.engine.outcome import RoundsEnd
from ctxlint.engine.run import Engine, RunOutput, TreeMemo, discover_files
from ctxlint.engine.start import Decoded, Start
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.session.setup import Setup


@dataclass
class Resident:
    """Where a resident front end's last run ended (a language server, the
    daemon): its rounds, the facts it decoded and the content it hashed. Each
    run given it (`Runs.check(resident=)`) starts there, the files whose
    content changed since (an edit, a save, a file added) scanned again, and
    leaves it where it ended. The findings are a plain run's."""

    # the program's per-file facts wanted after each run (a language server's
    # navigation asks them): its runs derive again instead of replaying a
    # stored outcome, which holds findings and sets but no facts
    keep_program: bool = False
    rounds: RoundsEnd | None = None
    decoded: Decoded = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)  # path -> content the rounds read
    # each rule's last outcome by what it read: a run derives again only the
    # rules whose facts changed (engine.check_memo); None: every rule, every run
    checks: CheckMemo | None = field(default_factory=CheckMemo)
    # the last edited buffer's LibCST module: its next edit parses one statement
    kept: KeptTree | None = field(default_factory=KeptTree)
    # the stat signatures, syntax verdicts and vocabulary of the last runs
    tree: TreeMemo = field(default_factory=TreeMemo)
    # the fact cache its runs read and put into, kept open: what they put is
    # written after their answers (cache.pending), always before it is dropped
    store: PendingCache | None = field(default=None, repr=False)

    def cache(self, folder: Path | None) -> PendingCache:
        """The runs' fact cache in `folder` (another folder: the last one's
        writes are made, and it is closed)."""
        if self.store is None or self.store.folder != folder:
            if self.store is not None:
                self.store.finish()
            self.store = PendingCache(folder)
        return self.store

    def flush(self) -> None:
        """Write what the runs put and is held (cache.pending) now."""
        if self.store is not None:
            self.store.flush()

    def start(self, hashes: Mapping[str, str]) -> Start | None:
        if self.rounds is None:
            return None
        changed = frozenset(p for p, h in hashes.items() if self.hashes.get(p) != h)
        return Start(self.rounds, changed, self.decoded)

    def ended(self, engine: _Resumed, out: RunOutput) -> None:
        # A run that replayed its whole outcome has no rounds: the last rounds
        # stay, with the hashes of the tree they were decided on, so that the
        # next run scans every file that differs from that tree
        if engine.cache is self.store and self.store is not None:
            self.store.idle()  # (its writes, once the front end is idle)
        if out.rounds is not None:
            self.rounds, self.hashes = out.rounds, engine.hashes
        # a replayed outcome decoded nothing: the facts decoded before stay
        decoded = {**self.decoded, **engine.decoded}
        self.decoded = {p: v for p, v in decoded.items() if p in self.hashes}

    def forget(self) -> None:
        """The next run starts afresh (a rule left out, a config read again)."""
        self.rounds, self.decoded, self.hashes = None, {}, {}
        if self.kept is not None:
            self.kept.release()
        if self.checks is not None:
            self.checks.forget()


class _Resumed(Engine):
    """The engine of a run that starts where a resident's last run ended: its
    start is known once the tree's content is hashed, before anything reads it."""

    def __init__(self, *args: Any, resident: Resident, **kwargs: Any) -> None:
        super().__init__(
            *args, check_memo=resident.checks, kept=resident.kept, tree=resident.tree, **kwargs
        )
        self.resident = resident
        self.hashes: dict[str, str] = {}

    def read_sources(self) -> tuple[list[SourceFile], Sources, list[FileError]]:
        files, sources, errors = super().read_sources()
        self.hashes = dict(sources.hashes)
        self.start = self.resident.start(self.hashes)
        return files, sources, errors


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
    # the files and their content (an editor's buffers in place) as `check` read them
    files: list[SourceFile] = field(default_factory=list)
    sources: Sources | None = None
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
        resident: Resident | None = None,
    ) -> Engine:
        """The engine for one run: `texts` in place of those files' bytes,
        starting where `start` (or `resident`'s last run) says, over `files`
        when they were discovered."""
        setup, options = self.setup, self.setup.request.run
        make: Any = Engine if resident is None else partial(_Resumed, resident=resident)
        cache: FactCache | None = self._cache
        if cache is None and resident is not None and options.use_cache:
            cache = resident.cache(setup.config.cache_dir)  # (kept open, writes held)
            cache.begin()
        return make(
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
            cache=cache,
        )

    def check(
        self,
        *,
        memo: bool = True,
        files: list[SourceFile] | None = None,
        folder_errors: list[FileError] | None = None,
        texts: Mapping[str, str] | None = None,
        resident: Resident | None = None,
    ) -> RunOutput:
        """One run over the tree as it is (with `texts` in place of those
        files: an editor's buffers); its decoded facts (when it derived) serve
        the re-checks. With `resident`, it starts where that one's last run
        ended, and leaves it where it ends."""
        memo = memo and not (resident is not None and resident.keep_program)
        engine = self.engine(
            texts=texts, memo=memo, files=files, folder_errors=folder_errors, resident=resident
        )
        out = engine.run()
        self.decoded, self.schemas = engine.decoded, engine.schemas
        if engine.read is not None:
            self.files, self.sources = engine.read
        if resident is not None:
            assert isinstance(engine, _Resumed)
            resident.ended(engine, out)
        return out

    def recheck(self, texts: Mapping[str, str], after: RunOutput | None) -> RunOutput:
        """The tree with `texts` in place of those files, its rounds started
        where the check of the tree as it is (`after`) ended (engine.start)."""
        start = None
        if after is not None and after.rounds is not None:
            start = Start(after.rounds, frozenset(texts), self.decoded)
        return self.engine(texts=texts, start=start).run()

    @property
    def cache(self) -> SharedCache | None:
        """The fact cache the runs share (`shared`; None otherwise)."""
        return self._cache

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
