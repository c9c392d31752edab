"""The run: discover, hash, vocabulary, facts (cached, pooled), derive, check.

Facts for a file depend only on its bytes, its path and module, the ctxlint
version and the vocabulary, so they are cached under exactly that key. Files
are chosen by a byte-level prefilter built from derived names, iterated to a
fixed point as rules learn new names from facts (record parameter names, say).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlint.cache.entries import facts_entry, learnt_entry, outcome_entry
from ctxlint.cache.pending import PendingCache
from ctxlint.cache.store import FactCache
from ctxlint.config.settings import Config
from ctxlint.core import deepstack, heap
from ctxlint.core.errors import CtxlintError
from ctxlint.core.findings import FileError
from ctxlint.discover.files import SourceFile, buffer_file, discover
from ctxlint.discover.sources import Signatures, Sources, content_hash
from ctxlint.engine import checks
from ctxlint.engine.blobs import Blobs, digest_of, gather
from ctxlint.engine.check_memo import CheckMemo
from ctxlint.engine.code_alias import CodeAliases
from ctxlint.engine.decoding import FactsDecoder
from ctxlint.engine.fingerprints import fingerprint, to_findings
from ctxlint.engine.kept_tree import KeptTree
from ctxlint.engine.keys import CODE_VERSION, RUN_VERSION, fact_key, facts_key, run_inputs, run_key
from ctxlint.engine.moved_outcomes import note_part_texts
from ctxlint.engine.outcome import RoundsEnd, RunOutput, record, replay
from ctxlint.engine.part_digests import PartDigests
from ctxlint.engine.prefilter import MODULE_TOKEN, prefilter, token_matcher
from ctxlint.engine.rounds import RoundMemo
from ctxlint.engine.start import Decoded, Start
from ctxlint.engine.vocabulary import VocabMemo, run_vocabulary
from ctxlint.engine.workers import (
    _PYTHON,
    SYNTAX_ONLY,
    Result,
    _died,
    _init_pool_worker,
    _init_worker,
    _work,
    used_entry,
)
from ctxlint.facts.entry import text as piece_text
from ctxlint.facts.typed import Decoder
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.calls import read_ahead
from ctxlint.program.core import Program
from ctxlint.program.fact_kinds import decode_parts, fact_decoders
from ctxlint.program.rule import Rule

# (done, total, phase): one count over every phase of the run, so a progress
# bar never restarts; `total` grows as later rounds find more files to parse.
Progress = Callable[[int, int, str], None]
# A resident's files changed on disk since its last run whose texts it keeps
# to move outcomes by (Engine._edited_texts): more is a checkout, not an edit.
MOVED_FILES = 8
# What code that reads well-formed cache entries of an unexpected content raises.
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


@dataclass
class TreeMemo:
    """What a resident front end's runs keep of reading the tree, between them:
    the stat signatures (discover.sources), each syntax-only entry's verdict
    (the files no rule gathers: about 2,800 of sglang 0.5.23's 4,700) and the
    last vocabulary with its keys, reused while an equal one is derived."""

    signatures: Signatures = field(default_factory=Signatures)
    verdicts: dict[str, str | None] = field(default_factory=dict)  # fact key -> its error
    # the vocabulary, its key(), to_json() and full_key()
    vocab: tuple[Vocabulary, str, dict[str, Any], str] | None = None
    # the last run's entry digests by fact key (engine.blobs.gather's `known`):
    # an edit's run asks the cache for the edited files' alone
    digests: dict[str, bytes] = field(default_factory=dict)
    # the last vocabulary derived and what it read: replayed while that is the same
    reads: VocabMemo = field(default_factory=VocabMemo)

    def vocabulary(self, vocab: Vocabulary) -> tuple[Vocabulary, str, dict[str, Any], str]:
        """The kept vocabulary and its keys when `vocab` equals it, else `vocab`'s."""
        if self.vocab is None or self.vocab[0] != vocab:
            self.vocab = (vocab, vocab.key(), vocab.to_json(), vocab.full_key())
        return self.vocab


def discover_files(config: Config, errors: list[FileError] | None = None) -> list[SourceFile]:
    """The files a run over `config` checks (a missing src root: a CtxlintError);
    folders that cannot be read go to `errors`, as files that cannot be checked."""
    try:
        return discover(config.root, config.src, config.exclude, errors)
    except FileNotFoundError as exc:
        raise CtxlintError(str(exc)) from None


class Engine:
    def __init__(
        self,
        config: Config,
        rules: list[Rule],
        *,
        jobs: int | None = None,
        selected: set[str] | None = None,
        use_cache: bool = True,
        progress: Progress | None = None,
        pinned: dict[str, dict[str, Any]] | None = None,
        memo: bool = True,
        time_rules: bool = False,
        files: list[SourceFile] | None = None,
        folder_errors: list[FileError] | None = None,
        start: Start | None = None,
        texts: Mapping[str, str] | None = None,
        cache: FactCache | None = None,
        check_memo: CheckMemo | None = None,
        kept: KeptTree | None = None,
        tree: TreeMemo | None = None,
    ) -> None:
        self.config = config
        self.tree = tree  # a resident front end's (see TreeMemo)
        # a resident front end's last edited module: an edit's one miss is
        # parsed here, one statement of it where it can be (engine.kept_tree)
        self.kept = kept
        # each rule's outcome by what it read (a resident front end's, in memory):
        # a rule whose key is its last run's is replayed, not derived again
        self.check_memo = check_memo
        # files as an edit holds them, in place of the disk's bytes (a fix's rewrites)
        self.texts = dict(texts or {})
        self.start = start  # where a check of nearly this tree ended (engine.start)
        self.decoded: Decoded = {}  # after a run that derived: its facts, for a Start
        self.schemas: dict[str, dict[str, Any] | None] = {}  # module -> schema facts read
        self.files = files  # the tree's files, when the caller discovered them already
        self.folder_errors = list(folder_errors or ())  # what that discovery could not read
        self.read: tuple[list[SourceFile], Sources] | None = None  # the files and content read
        # --timings: charge the walk's visitor calls, each derive and each check
        # to their rule (the visitors' share is otherwise hidden in "facts")
        self.time_rules = time_rules
        # A run over byte-identical inputs replays the stored outcome instead of
        # reloading every fact and re-deriving (the warm path). Callers that
        # need Program.files (the per-file facts) pass memo=False.
        self.memo = memo
        # Every rule extracts facts and derives its sets (so the cache does not
        # depend on the selection); only the selected rules' checks run.
        self.rules = rules
        self.selected = selected if selected is not None else {r.id for r in rules}
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        # a cache shared with other runs (cache.shared), else this run's own
        self.cache = (
            cache if cache is not None else FactCache(config.cache_dir if use_cache else None)
        )
        self.progress = progress
        self.pinned = pinned or {}
        self.timings: dict[str, float] = {}
        self.parsed = 0
        self._done = 0  # files through the pool so far, all phases together (progress)
        self._unstored: set[str] = set()  # paths whose entries were not stored (a dead worker)
        self._vocab: tuple[Any, str, Any] = (None, "", None)  # vocabulary, its tag and JSON
        # vocabulary, the run's memo heads (without, with what only the checks read)
        self._heads: tuple[Any, tuple[str, str]] = (None, ("", ""))
        # The parent's own work while the pool parses a round's misses: decoding
        self._meanwhile: FactsDecoder | None = None
        self._parts: dict[str, PartDigests] = {}  # entry digest -> part digests (workers')
        self._round_memo: RoundMemo | None = None  # the last run's rounds

    # -- phases -------------------------------------------------------------
    def timed(self, name: str, start: float) -> None:
        """Charge the time since `start` to the run's timing `name`."""
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start

    _timed = timed

    def _charge(self, clock: dict[str, float]) -> None:
        """Add a worker's per-visitor seconds: "rule X visit", "records visit", "parse"."""
        for name, secs in clock.items():
            key = (
                "parse"
                if name == "parse"
                else f"{'rule ' if name[:3] == 'CTX' else ''}{name} visit"
            )
            self.timings[key] = self.timings.get(key, 0.0) + secs

    def read_sources(self) -> tuple[list[SourceFile], Sources, list[FileError]]:
        """The files, their content (hashed now, read when needed) and the unreadable ones."""
        t = time.perf_counter()
        folders = list(self.folder_errors)
        files = self.files if self.files is not None else discover_files(self.config, folders)
        # an editor's buffer of a file discovery did not list is checked as the
        # file it would be once saved (a new one), or not at all (an excluded one)
        listed = {f.rel for f in files}
        config = self.config
        more = [
            found
            for rel in sorted(set(self.texts) - listed)
            if (found := buffer_file(config.root, config.src, config.exclude, rel)) is not None
        ]
        if more:
            files = sorted([*files, *more], key=lambda f: f.rel)
        signatures = self.tree.signatures if self.tree is not None else None
        sources = Sources(config.root, [f.rel for f in files], self.cache, signatures)
        for rel, text in self.texts.items():
            if rel in listed or any(f.rel == rel for f in more):
                sources.edit(rel, text)
        self._timed("discover+read", t)
        self.read = (files, sources)
        return files, sources, sorted([*sources.errors, *folders], key=lambda e: e.path)

    def _extract(
        self,
        items: list[tuple[str, str]],
        sources: Sources,
        vocab: Vocabulary | str | None,
        *,
        read: bool = True,
    ) -> dict[str, bytes]:
        """Encoded facts per (path, module) (for a vocabulary; None: schema
        facts; SYNTAX_ONLY: just a parse error, if any): cache hits first
        (unless `read` is False: the cached entries were not of our shape),
        misses (only these are read) on the pool."""
        tag, vocab_json = self._tag(vocab)
        syntax_only = vocab == SYNTAX_ONLY
        keys = {
            p: fact_key(sources.hashes[p], tag, None if syntax_only else (p, m)) for p, m in items
        }
        cached = self.cache.get_many(keys.values()) if read else {}
        out = {p: cached[keys[p]] for p, _ in items if keys[p] in cached}
        misses = [(p, m, sources[p]) for p, m in items if keys[p] not in cached]
        # an edit that touched no fact (a comment): its earlier content's facts
        aliases = CodeAliases(self.cache, misses if read else [], tag, syntax_only)
        phase = "declarations" if vocab is None else "syntax" if syntax_only else "parsing"
        crashed: set[str] = set()
        fresh = self._parse(misses, vocab, vocab_json, aliases, crashed, phase, read=read)
        self._done += len(misses)
        if not syntax_only:
            self.parsed += len(fresh)
        stored = {p: blob for p, blob in fresh.items() if p not in crashed}
        aliases.learn(stored, sources.hashes)
        self.cache.put_many({keys[p]: blob for p, blob in (stored | aliases.found).items()})
        self._unstored |= crashed
        out.update(fresh)
        out.update(aliases.found)
        return {p: out[p] for p, _ in items}  # input order, whatever was cached

    def _parse(
        self,
        misses: list[tuple[str, str, bytes]],
        vocab: Vocabulary | str | None,
        vocab_json: str | None,
        aliases: CodeAliases,
        crashed: set[str],
        phase: str,
        *,
        read: bool,
    ) -> dict[str, bytes]:
        """The misses' entries, parsed on the pool (or here, for one file with
        nothing to do meanwhile); the paths of workers that died go to `crashed`."""
        syntax_only = vocab == SYNTAX_ONLY
        # The parent decodes meanwhile only on a core the workers leave idle (fewer
        # misses than jobs: an edit): with every core parsing it would only slow
        # them, and hold the decoded facts while the workers hold their trees
        # (a cold fix's peak: 1,143 -> 1,388 MiB). Never inside a re-extraction.
        meanwhile = self._meanwhile if read and len(misses) < self.jobs else None
        decode = meanwhile.step if meanwhile is not None and meanwhile.pending() else None
        digest = aliases.wanted and isinstance(vocab, Vocabulary)  # (schema misses: one by one)
        target = self.config.target_version
        results: Iterable[Result]
        if self.kept is not None and read and len(misses) == 1 and isinstance(vocab, Vocabulary):
            results = self._kept_parse(misses[0], vocab_json, aliases)
        elif misses and self.jobs > 1 and (len(misses) > 1 or decode or digest):
            from ctxlint.core import pool  # here: multiprocessing is 1/10 of a warm run

            def died(item: tuple[str, str, bytes], how: str) -> Result:
                # A dead worker may be transient (the OOM killer, a kill): its error is
                # reported, but neither it nor this run's outcome is stored.
                crashed.add(item[0])
                self.memo = False
                return _died(item, how, syntax_only)

            # one miss too, when the parent has work meanwhile (a digest, decoding)
            results = pool.run(
                _work,
                sorted(misses, key=lambda m: -len(m[2])),  # largest first: no long tail
                jobs=self.jobs,
                initializer=_init_pool_worker,
                initargs=(vocab_json, target, self.time_rules),
                died=died,
                idle=aliases.idle(decode, pool.STOP) if aliases.wanted or decode else None,
            )
        else:  # (none: all cached, and LibCST is not even imported)
            todo = [m for m in misses if m[0] not in aliases.find()] if misses else []
            results = self._in_process(todo, vocab_json)
        fresh: dict[str, bytes] = {}
        for n, (path, blob, clock, parts) in enumerate(results, 1):
            fresh[path] = blob
            self._learnt_parts(blob, parts)
            self._charge(clock)
            if self.progress:
                self.progress(self._done + n, self._done + len(misses), phase)
        return fresh

    def _in_process(
        self, todo: list[tuple[str, str, bytes]], vocab_json: str | None
    ) -> Iterator[Result]:
        """The files parsed here, one after another (one job, or one file)."""
        if not todo:
            return
        _init_worker(vocab_json, self.config.target_version, self.time_rules)
        with deepstack.running():  # stopped before any later fork
            for item in todo:
                yield _work(item)
        heap.give_back()  # the trees' pages, which glibc would keep

    def _kept_parse(
        self, miss: tuple[str, str, bytes], vocab_json: str | None, aliases: CodeAliases
    ) -> Iterator[Result]:
        """An edit's one miss, here: its code digest and parse, each of the
        changed statement only where the kept module allows (engine.kept_tree)."""
        kept = self.kept
        assert kept is not None
        if miss[0] in aliases.find(kept.digest if aliases.wanted else None):
            return
        _init_worker(vocab_json, self.config.target_version, self.time_rules)
        from ctxlint.facts.extract import parse  # LibCST: only when parsing

        with deepstack.running():
            before = self.check_memo.text_before(miss[0]) if self.check_memo is not None else None
            result = _work(miss, kept.parser(miss[0], parse, content_hash(miss[2]), before))
        entry = used_entry()
        if entry is not None and entry.children is not None:  # (its parts' texts: moves)
            parts = entry.children["facts"].children
            note_part_texts(result[1], {k: piece_text(p, "placed") for k, p in parts.items()})
        yield result

    def _edited_texts(self) -> dict[str, str]:
        """The texts whose edits the check memo moves outcomes for: the editor's
        buffers, and a resident's files changed on disk since its last run (a
        few: an edit, not a checkout), as this run read them; the next edit of
        such a file is moved from this text (a daemon's disk edit, the facts of
        its text extracted or found in the cache alike)."""
        if self.read is None or (self.kept is None and self.start is None):
            return self.texts
        sources = self.read[1]
        texts = self.kept.current(sources.hashes) if self.kept is not None else {}
        changed = self.start.changed if self.start is not None else frozenset()
        if 0 < len(changed) <= MOVED_FILES:
            for path in sorted(changed):
                if path in sources and path not in texts:
                    try:
                        texts[path] = sources[path].decode("utf-8")
                    except (UnicodeDecodeError, CtxlintError):
                        pass  # (not moved: its rules derive again)
        return {**texts, **self.texts}

    def _learnt_parts(self, blob: bytes, parts: PartDigests | None) -> None:
        if parts is not None:  # for the rounds (RoundMemo.known), by the entry's digest
            self._parts[digest_of(blob).hex()] = parts

    def _tag(self, vocab: Vocabulary | str | None) -> tuple[str, str | None]:
        """The fact keys' tag for a vocabulary (or None, SYNTAX_ONLY), and what workers get."""
        if isinstance(vocab, Vocabulary):  # asked for by every extraction: worked out once
            if self._vocab[0] is not vocab:
                key, vocab_json = (
                    self.tree.vocabulary(vocab)[1:3]
                    if self.tree is not None
                    else (vocab.key(), vocab.to_json())
                )
                self._vocab = (vocab, f"{CODE_VERSION}:{key}", vocab_json)
            tag, vocab_json = self._vocab[1], self._vocab[2]
        else:
            tag, vocab_json = f"{CODE_VERSION}:{vocab or 'schema'}", vocab
        return f"{tag}:{self.config.target_version}:{_PYTHON}", vocab_json  # grammar, parser

    def _gather(
        self, todo: list[tuple[str, str]], sources: Sources, vocab: Vocabulary, blobs: Blobs
    ) -> None:
        """A round's files into `blobs` (engine.blobs: a replayed round reads no entry)."""
        tag = self._tag(vocab)[0]
        keys = {p: fact_key(sources.hashes[p], tag, (p, m)) for p, m in todo}
        gather(
            self.cache,
            [(p, m, keys[p]) for p, m in todo],
            blobs,
            lambda items: self._extract(items, sources, vocab),
            self._unstored,
            self.tree.digests if self.tree is not None and blobs.learnt is not None else None,
        )

    def _decoded(
        self, item: tuple[str, str], blob: bytes, sources: Sources, vocab: Vocabulary | str | None
    ) -> tuple[dict[str, Any], bytes]:
        """A file's facts from its entry, and the entry. One that is not of the
        shape this code writes is a miss (issue 11 D18): the file is extracted
        again and its entry replaced."""
        path, module = item
        facts = facts_entry(blob, None if vocab == SYNTAX_ONLY else module, schema=vocab is None)
        if facts is None:
            blob = self._extract([item], sources, vocab, read=False)[path]
            facts = json.loads(blob)
        return facts, blob

    def facts(
        self, items: list[tuple[str, str]], sources: Sources, vocab: Vocabulary
    ) -> dict[str, dict[str, Any]]:
        """Each (path, module)'s facts for the vocabulary, cached or extracted:
        the run's extraction step on its own (session.runs: the bench, a server)."""
        blobs = self._extract(items, sources, vocab)
        return {p: self._decoded((p, m), blobs[p], sources, vocab)[0] for p, m in items}

    def vocabulary(self, files: list[SourceFile], sources: Sources) -> Vocabulary:
        t = time.perf_counter()

        def schema_of(f: SourceFile) -> dict[str, Any]:
            blob = self._extract([(f.rel, f.module)], sources, None)[f.rel]
            return self._decoded((f.rel, f.module), blob, sources, None)[0]

        memo = self.tree.reads if self.tree is not None else None
        vocab = run_vocabulary(self.config, files, sources, schema_of, self.schemas, memo)
        if self.tree is not None:  # (the one kept when equal: its keys are made)
            vocab = self.tree.vocabulary(vocab)[0]
        self._timed("vocabulary", t)
        return vocab

    def _inputs(self, *, checks: bool = True, start: bool = True) -> dict[str, Any]:
        """The run's inputs besides the tree; without what only the checks read
        (the baseline's pins, each rule's environment: the ruff CTX401's check
        runs) for the rounds and the derivations (see _derive_and_check): a
        `baseline update`, or the same ctxlint installed elsewhere (a pre-commit
        hook's own ruff), replays them."""
        pinned = self.pinned if checks else {}
        inputs = run_inputs(RUN_VERSION, self.config, self.rules, self.selected, pinned)
        if not checks:
            inputs["environment"] = {}
        # a run with more files let in may derive larger sets (a process entry no
        # rule needed): its outcome is stored apart from a plain check's
        # (`start`: the rules' outcomes depend on the files let in, not on why)
        if self.start and start:
            return inputs | {"start": sorted(self.start.rounds.tokens)}
        return inputs

    def run(self) -> RunOutput:
        # The cyclic GC is paused for the run (the pool's workers inherit that):
        # facts and LibCST trees are millions of acyclic objects that it would
        # traverse again and again (40% of an edited run's time), and each file's
        # tree is freed by reference counting once its facts are out.
        paused = gc.isenabled()
        gc.disable()
        try:
            try:
                return self._run_once()
            except _SHAPE_ERRORS as exc:
                if not self.cache.served:
                    raise  # nothing came from the cache: a bug, reported as one
                # The entries checked by cache_entries were sound, but a rule
                # tripped over what its own facts held (issue 11 D18): the cache
                # is never a source of truth, so the run is done again without
                # reading it (its writes replace the entries). A bug raises
                # again, and is reported as a bug. What a resident's cache
                # holds unwritten is not trusted either (cache.pending).
                if isinstance(self.cache, PendingCache):
                    self.cache.discard()
                self.cache.close()
                self.cache = FactCache(self.config.cache_dir, read=False)
                if self.tree is not None:  # (its digests were the cache's)
                    self.tree.digests = {}
                if self.check_memo is not None:  # (the rules' answers it read)
                    self.check_memo.rounds.answers.clear()
                self.parsed, self.timings, self._done = 0, {}, 0
                out = self._run_once()
                print(
                    f"ctxlint: the cache held an entry this version cannot use "
                    f"({type(exc).__name__}: {exc}); ran again without reading it",
                    file=sys.stderr,
                )
                return out
        finally:
            if self.check_memo is not None:
                # a resident front end's run: what it made (the program it keeps)
                # is frozen, not traversed by the collections its answer would set
                # off; the front end collects when idle (server.checking, daemon)
                gc.freeze()
            if paused:
                gc.enable()

    def _run_once(self) -> RunOutput:
        files, sources, errors = self.read_sources()
        memo_key = run_key(self._inputs(), sources.hashes, errors) if self.memo else None
        if memo_key is not None:
            data = outcome_entry(self.cache.get_many([memo_key]).get(memo_key))
            if data is not None:
                out = replay(data, self.config, self.pinned, len(files), 0, self.timings)
                out.memo_key = memo_key
                self.cache.close()
                return out
        out = self._run(files, sources, errors)
        if memo_key is not None and self.memo:
            self.cache.put_many({memo_key: record(out)})
            out.memo_key = memo_key
        self.cache.close()
        return out

    def _read_ahead(self, entry: dict[str, Any]) -> None:
        """What the model reads of one file entry, read as it is decoded: its
        call summary and, where this run reads every file's entry (no earlier
        run's to start from), its typed parts too, each then standing for its
        JSON: all files' JSON at once was such a run's peak. An edit's few
        entries are left to the rules that ask (most of their outcomes move
        or replay, never asking the edited file's parts)."""
        read_ahead(entry)
        if self.start is None or not self.start.decoded:
            decode_parts(entry, self._fact_decoders)

    @functools.cached_property
    def _fact_decoders(self) -> dict[str, Decoder]:
        """Each facts key's decoder (program.fact_kinds), once per run."""
        return fact_decoders(tuple(self.rules))

    def _run(self, files: list[SourceFile], sources: Sources, errors: list[FileError]) -> RunOutput:
        vocab = self.vocabulary(files, sources)
        unreadable = list(errors)  # and broken files no rule needed; the others' are in facts
        t = time.perf_counter()
        # No pins until the checks: the rounds and the derivations never see the
        # baseline, so their stored answers outlive a `baseline update` (a new pin
        # reruns the checks, not the fixed point that costs most of a cold run)
        program = Program(self.config, vocab, {}, paths=tuple(sorted(sources)))
        tokens: set[str] = {"ctxlint:", *(self.start.rounds.tokens if self.start else ())}
        everything = False
        for rule in self._runnable(vocab):
            more = rule.tokens(vocab)
            if more is None:
                everything = True
            else:
                tokens |= more
        module_of = {f.rel: f.module for f in files}
        learnt = {} if self.tree is not None and self.cache.reads_back else None
        blobs = Blobs(
            self.cache, lambda items: self._extract(items, sources, vocab, read=False), learnt
        )
        decoder = FactsDecoder(
            blobs,
            program,
            errors,
            module_of,
            lambda path, blob: self._decoded((path, module_of[path]), blob, sources, vocab),
            self.start.decoded if self.start else {},
            self._read_ahead,
        )

        self._rounds(vocab, sources, module_of, program, blobs, decoder, tokens, everything)
        self._syntax_errors(sources, module_of, blobs, unreadable, errors)
        self._timed("facts", t)

        key = self.memo and facts_key(
            "derived",
            self._head(vocab, checks=True),
            blobs.digests,
            tokens,
            unreadable,
            program.paths,
        )
        outcome = outcome_entry(self.cache.get_many([key]).get(key)) if key else None
        if outcome is not None:
            out = replay(outcome, self.config, self.pinned, len(files), self.parsed, self.timings)
        else:
            decoder.decode_all()
            self.decoded = {p: (blobs.digests[p], f) for p, f in program.files.items()}
            out = self._derive_and_check(program, errors, len(files), blobs, module_of)
        out.rounds = RoundsEnd(tuple(sorted(tokens)), frozenset(blobs))
        if self.tree is not None and blobs.learnt:  # (this run's files' only)
            self.tree.digests = blobs.learnt
        if key and outcome is None:
            self.cache.put_many({key: record(out)})
        return out

    def _rounds(
        self,
        vocab: Vocabulary,
        sources: Sources,
        module_of: dict[str, str],
        program: Program,
        blobs: Blobs,
        decoder: FactsDecoder,
        tokens: set[str],
        everything: bool,
    ) -> None:
        """The prefilter's fixed point: gather the files holding a token, learn
        the rules' next tokens, until a round learns none (`tokens` grows)."""
        round_tokens = set(tokens)  # each round scans only for tokens it has not seen
        # a resident front end's run (which keeps the program: memo False) replays
        # each rule's answer by its facts too, as it replays its outcome (check_memo)
        replay = self.memo or self.check_memo is not None
        kept = self.check_memo.rounds if self.check_memo is not None else None
        rounds = RoundMemo(
            self.cache, self._head(vocab), replay=replay, known=self._parts, kept=kept
        )
        self._round_memo = rounds  # (its part digests serve the check memo too)
        self._meanwhile = decoder
        try:
            while True:
                waiting = [p for p in sorted(sources) if p not in blobs]
                # a started run's first round (no file gathered yet) decides as it ended
                kept, scan = (
                    self.start.split(waiting) if self.start and not blobs else (set(), waiting)
                )
                matched = (
                    set(waiting)
                    if everything
                    else kept | prefilter(self.cache, scan, sources, module_of, round_tokens)
                )
                todo = [(p, module_of[p]) for p in waiting if p in matched]
                if not todo:
                    break
                self._gather(todo, sources, vocab, blobs)
                # an edit that leaves every file's facts as they were replays it (early cutoff)
                head = self._head(vocab)
                key = facts_key("round", head, blobs.digests, tokens) if self.memo else None
                learnt = learnt_entry(self.cache.get_many([key]).get(key)) if key else None
                if learnt is not None:
                    round_tokens = learnt - tokens
                else:  # some file changed: each rule by the facts it reads (engine.rounds)
                    digests = {p: blobs.digests[p].hex() for p in blobs}
                    learnt = rounds.learn(
                        self._runnable(vocab),
                        program,
                        decoder.decode_all,
                        module_of,
                        blobs,
                        digests,
                        tokens,
                    )
                    round_tokens = learnt - tokens
                    if key:
                        self.cache.put_many({key: json.dumps(sorted(round_tokens)).encode()})
                if not round_tokens:
                    break
                tokens |= round_tokens
        finally:
            self._meanwhile = None

    def _syntax_errors(
        self,
        sources: Sources,
        module_of: dict[str, str],
        blobs: Blobs,
        unreadable: list[FileError],
        errors: list[FileError],
    ) -> None:
        """Files no rule needed are still checked for parse errors (cheaply, with
        ast): a broken file is reported whether or not it can matter."""
        rest = [(p, module_of[p]) for p in sorted(sources) if p not in blobs]
        kept = self.tree.verdicts if self.tree is not None else {}
        tag = self._tag(SYNTAX_ONLY)[0]
        keys = {p: fact_key(sources.hashes[p], tag, None) for p, _ in rest}
        verdicts = {p: kept[keys[p]] for p, _ in rest if keys[p] in kept}  # (a resident's)
        todo = [item for item in rest if item[0] not in verdicts]
        for path, blob in self._extract(todo, sources, SYNTAX_ONLY).items():
            facts, _ = self._decoded((path, module_of[path]), blob, sources, SYNTAX_ONLY)
            verdicts[path] = facts["error"] if "error" in facts else None
        for path, _ in rest:
            if verdicts[path] is not None:
                unreadable.append(FileError(path, verdicts[path]))
                errors.append(unreadable[-1])
        if self.tree is not None:  # (this run's files' verdicts only)
            self.tree.verdicts = {keys[p]: verdicts[p] for p, _ in rest}

    def _head(self, vocab: Vocabulary, *, checks: bool = False) -> str:
        """The round keys' head (the run's inputs and vocabulary); with what the
        checks read too for the derived outcome. A round's answer depends on the
        files it gathered and the tokens, which its keys hold, not on why they
        were let in: a started run's rounds (a server's edit) replay a plain
        run's, the derived outcome stays apart (Engine._inputs)."""
        if self._heads[0] is not vocab:
            heads = tuple(
                json.dumps(
                    [self._inputs(checks=c, start=c), self._full_key(vocab)],
                    sort_keys=True,
                    default=list,
                )
                for c in (False, True)
            )
            self._heads = (vocab, heads)
        return self._heads[1][checks]

    def _full_key(self, vocab: Vocabulary) -> str:
        return self.tree.vocabulary(vocab)[3] if self.tree is not None else vocab.full_key()

    def _runnable(self, vocab: Vocabulary) -> list[Rule]:
        """The rules whose vocabulary sets this codebase has (see Rule.needs)."""
        return [r for r in self.rules if r.disabled_because(vocab) is None]

    def _derive_and_check(
        self,
        program: Program,
        errors: list[FileError],
        files: int,
        blobs: Blobs | None = None,
        modules: dict[str, str] | None = None,
    ) -> RunOutput:
        if self.progress:
            self.progress(self._done, self._done, "checking")
        runnable = self._runnable(program.vocab)
        if self.check_memo is not None and blobs is not None and modules is not None:
            head = json.dumps(
                [
                    self._inputs(checks=True, start=False),
                    self._full_key(program.vocab),
                    repr(self.config),
                ],
                sort_keys=True,
                default=list,
            )
            rounds = self._round_memo
            assert rounds is not None  # (the rounds ran before)
            findings, pins = self.check_memo.run(
                program,
                runnable,
                self.selected,
                self.pinned,
                head,
                blobs.digests,
                modules,
                lambda entries: rounds.digests(entries, blobs),
                self._timed,
                texts=self._edited_texts(),  # old lines moved (engine.moved_outcomes)
                entry=blobs.__getitem__,
            )
        else:
            checks.derive(program, runnable, self._timed)
            program.pinned = self.pinned  # the checks compare with the baseline's pins
            findings = checks.check(program, runnable, self.selected, self.config, self._timed)
            pins = checks.pins(program, runnable, self.selected)
        errors.sort(key=lambda e: e.path)
        return RunOutput(
            program,
            findings,
            errors,
            files,
            self.parsed,
            dict(self.timings),
            pins,
            checks.disabled(self.rules, self.selected, program.vocab),
        )


# Names other modules and tests import from here (the run's public surface).
__all__ = [
    "CODE_VERSION",
    "MODULE_TOKEN",
    "RUN_VERSION",
    "SYNTAX_ONLY",
    "Engine",
    "RunOutput",
    "discover_files",
    "fact_key",
    "fingerprint",
    "to_findings",
    "token_matcher",
]
