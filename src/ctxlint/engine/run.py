"""The run: discover, hash, vocabulary, facts (cached, pooled), derive, check.

Facts for a file depend only on its bytes, its path and module, the ctxlint
version and the vocabulary, so they are cached under exactly that key. Files
are chosen by a byte-level prefilter built from derived names, iterated to a
fixed point as rules learn new names from facts (record parameter names, say).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxlint import __version__
from ctxlint.cache.entries import facts_entry, learnt_entry, outcome_entry, prefilter_entry
from ctxlint.cache.store import FactCache
from ctxlint.config.settings import Config
from ctxlint.core import deepstack, pool, pysource
from ctxlint.core.errors import CtxlintError, DerivationError
from ctxlint.core.findings import FileError, Finding, Span
from ctxlint.discover.files import SourceFile, discover, path_matcher, unchecked_module
from ctxlint.discover.sources import Sources
from ctxlint.engine.registry import load_rules
from ctxlint.engine.suppress import apply_suppressions
from ctxlint.facts.vocab import Vocabulary, derive_vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

# (done, total, phase): one count over every phase of the run, so a progress
# bar never restarts; `total` grows as later rounds find more files to parse.
Progress = Callable[[int, int, str], None]
# What code that reads well-formed cache entries of an unexpected content raises.
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


@dataclass
class RunOutput:
    program: Program
    findings: list[Finding]  # all statuses "new"; the baseline decides later
    errors: list[FileError]
    files_checked: int
    files_parsed: int
    timings: dict[str, float] = field(default_factory=dict)
    pins: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> current pins
    # rule -> why it could not run on this codebase (a vocabulary set it needs is missing)
    disabled: dict[str, str] = field(default_factory=dict)


def _code_version(*parts: str) -> str:
    """The version plus a hash of the ctxlint sources an output depends on:
    facts made by other code (an edited checkout, an upgrade) are never read
    back, while editing a reporter or the audit keeps the cache warm."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=8)
    package = Path(__file__).resolve().parents[1]
    for part in parts:
        for path in sorted(package.glob(part)):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


# What per-file facts depend on: the extractor, its helpers and every rule.
FACT_SOURCES = ("core/pysource.py", "facts/*.py", "program/*.py", "rules/*.py")
CODE_VERSION = _code_version(*FACT_SOURCES)
# A whole run's outcome also depends on discovery, configuration and the engine.
RUN_VERSION = _code_version(*FACT_SOURCES, "engine/*.py", "config/*.py", "discover/*.py")


def _plain_sorted(value: Any) -> list[Any]:
    """JSON for sets (sorted: their iteration order varies between processes)."""
    return sorted(value) if isinstance(value, (set, frozenset)) else list(value)


def fingerprint(rule: str, path: str, scope: str, snippet: str, index: int) -> str:
    raw = "\0".join((rule, path, scope, snippet, str(index))).encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()[:20]


FACT_LAYOUT = "f2"  # the layout of fact keys and blobs: bump when either changes


def fact_key(digest: str, tag: str, binding: tuple[str, str] | None) -> str:
    """The cache key of one file's facts: its content hash, the code version and
    vocabulary (`tag`) and, for rule and schema facts, its (path, module). Those
    facts are made of names the module gives (qualified names, relative imports
    resolved against its package, "is this the runtime module" decided during
    the walk), so byte-identical files at two paths (every empty __init__.py)
    cannot share an entry. Both are relative to the project root, so a cache
    restored into another clone or folder is still warm. The syntax check
    (binding None) depends on the bytes alone and is shared by every copy."""
    where = "" if binding is None else ":" + json.dumps(binding, separators=(",", ":"))
    return f"{FACT_LAYOUT}:{digest}:{tag}{where}"


# -- pool workers -------------------------------------------------------------
_WORKER: dict[str, Any] = {}


SYNTAX_ONLY = "syntax"  # the mode for files no rule needs: only "does it parse"
# CPython's parser gives each file's verdict: a newer one may judge a target differently.
_PYTHON = "py{}{}".format(*sys.version_info[:2])


def _init_worker(vocab_json: dict[str, Any] | str | None, target: str, timed: bool = False) -> None:
    from ctxlint.engine.registry import file_visitors, load_rules

    _WORKER["vocab"] = vocab_json
    _WORKER["target"] = target
    # Every rule's visitor, and the program parts any rule requires: facts do
    # not depend on the selection (the cache is shared by every selection).
    _WORKER["visitors"] = file_visitors(load_rules())
    _WORKER["timed"] = timed


def _init_pool_worker(
    vocab_json: dict[str, Any] | str | None, target: str, timed: bool = False
) -> None:
    _init_worker(vocab_json, target, timed)
    deepstack.start()  # one deep thread for the worker's life


def _encode(
    path: str, facts: dict[str, Any], clock: dict[str, float]
) -> tuple[str, bytes, dict[str, float]]:
    return path, json.dumps(facts, sort_keys=True, separators=(",", ":")).encode(), clock


def _work(item: tuple[str, str, bytes]) -> tuple[str, bytes, dict[str, float]]:
    """(path, encoded facts, seconds per visitor and "parse" when timed, else {})."""
    path, module, source = item
    target = _WORKER["target"]
    clock: dict[str, float] = {}
    syntax_only = _WORKER["vocab"] == SYNTAX_ONLY
    try:
        if syntax_only:  # path-free: keyed by content alone (see fact_key)
            try:
                pysource.read(source, target)
                facts: dict[str, Any] = {}
            except pysource.SourceError as exc:
                facts = {"error": str(exc)}
        else:
            from ctxlint.facts.extract import extract_file  # LibCST: only when parsing

            facts = extract_file(
                path,
                module,
                source,
                _WORKER["vocab"],
                _WORKER["visitors"],
                target,
                clock if _WORKER["timed"] else None,
            )
    except Exception as exc:  # a bug, or code deeper than a rule's recursion: this file only
        facts = _error(module, f"cannot check: {type(exc).__name__}: {exc}", syntax_only)
    return _encode(path, facts, clock)


def _error(module: str, message: str, syntax_only: bool) -> dict[str, Any]:
    return {"error": message} if syntax_only else {"module": module, "error": message}


def _died(
    item: tuple[str, str, bytes], how: str, syntax_only: bool
) -> tuple[str, bytes, dict[str, float]]:
    path, module, _ = item
    return _encode(path, _error(module, f"checking it killed the worker ({how})", syntax_only), {})


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
    ) -> None:
        self.config = config
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
        self.cache = FactCache(config.cache_dir if use_cache else None)
        self.progress = progress
        self.pinned = pinned or {}
        self.timings: dict[str, float] = {}
        self.parsed = 0
        self._done = 0  # files through the pool so far, all phases together (progress)
        self._blob_digests: dict[str, bytes] = {}

    # -- phases -------------------------------------------------------------
    def _timed(self, name: str, start: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start

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
        try:
            files = discover(self.config.root, self.config.src, self.config.exclude)
        except FileNotFoundError as exc:
            raise CtxlintError(str(exc)) from None
        sources = Sources(self.config.root, [f.rel for f in files], self.cache)
        self._timed("discover+read", t)
        return files, sources, list(sources.errors)

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
        if isinstance(vocab, Vocabulary):
            tag, vocab_json = f"{CODE_VERSION}:{vocab.key()}", vocab.to_json()
        else:
            tag, vocab_json = f"{CODE_VERSION}:{vocab or 'schema'}", vocab
        tag += f":{self.config.target_version}:{_PYTHON}"  # the verdict's grammar and parser
        syntax_only = vocab == SYNTAX_ONLY
        keys = {
            p: fact_key(sources.hashes[p], tag, None if syntax_only else (p, m)) for p, m in items
        }
        cached = self.cache.get_many(keys.values()) if read else {}
        out: dict[str, bytes] = {}
        misses = []
        for path, module in items:
            blob = cached.get(keys[path])
            if blob is not None:
                out[path] = blob
            else:
                misses.append((path, module, sources[path]))
        fresh: dict[str, bytes] = {}
        phase = "declarations" if vocab is None else "syntax" if vocab == SYNTAX_ONLY else "parsing"

        def tick(n: int) -> None:
            if self.progress:
                self.progress(self._done + n, self._done + len(misses), phase)

        target = self.config.target_version
        crashed: set[str] = set()

        def died(item: tuple[str, str, bytes], how: str) -> tuple[str, bytes, dict[str, float]]:
            # A dead worker may be transient (the OOM killer, a kill): its error is
            # reported, but neither it nor this run's outcome is stored.
            crashed.add(item[0])
            self.memo = False
            return _died(item, how, syntax_only)

        if len(misses) > 1 and self.jobs > 1:
            results = pool.run(
                _work,
                misses,
                jobs=self.jobs,
                initializer=_init_pool_worker,
                initargs=(vocab_json, target, self.time_rules),
                died=died,
            )
            for n, (path, blob, clock) in enumerate(results, 1):
                fresh[path] = blob
                self._charge(clock)
                tick(n)
        else:
            _init_worker(vocab_json, target, self.time_rules)
            with deepstack.running():  # stopped before any later fork
                for n, item in enumerate(misses, 1):
                    path, blob, clock = _work(item)
                    fresh[path] = blob
                    self._charge(clock)
                    tick(n)
        self._done += len(misses)
        if vocab != SYNTAX_ONLY:
            self.parsed += len(misses)
        self.cache.put_many({keys[p]: blob for p, blob in fresh.items() if p not in crashed})
        out.update(fresh)
        return {p: out[p] for p, _ in items}  # input order, whatever was cached

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

    def _prefilter(
        self,
        paths: list[str],
        sources: Sources,
        module_of: dict[str, str],
        tokens: set[str],
    ) -> set[str]:
        """Paths that hold any token (see Rule.tokens). Byte decisions are
        cached per content hash and token set, so a warm run scans nothing; a
        module token names a file, not bytes, so it is decided by path."""
        modules = {t[len(MODULE_TOKEN) :] for t in tokens if t.startswith(MODULE_TOKEN)}
        matcher = token_matcher({t for t in tokens if not t.startswith(MODULE_TOKEN)})
        tag = hashlib.blake2b("\0".join(sorted(tokens)).encode(), digest_size=8).hexdigest()
        keys = {p: f"pf:{sources.hashes[p]}:{tag}" for p in paths}
        cached = self.cache.get_many(keys.values())
        matched: set[str] = set()
        fresh: dict[str, bytes] = {}
        for p in paths:
            hit = prefilter_entry(cached.get(keys[p]))
            if hit is None:
                hit = matcher(sources[p])
                fresh[keys[p]] = b"1" if hit else b"0"
            if hit or module_of[p] in modules:
                matched.add(p)
        self.cache.put_many(fresh)
        return matched

    def vocabulary(self, files: list[SourceFile], sources: Sources) -> Vocabulary:
        t = time.perf_counter()
        by_module = {f.module: f for f in files}
        schemas: dict[str, dict[str, Any] | None] = {}

        def load(module: str) -> dict[str, Any] | None:
            if module not in schemas:
                f = by_module.get(module)
                if f is None or f.rel not in sources:
                    schemas[module] = None
                else:
                    blob = self._extract([(f.rel, f.module)], sources, None)[f.rel]
                    facts, _ = self._decoded((f.rel, f.module), blob, sources, None)
                    if "error" in facts:
                        raise DerivationError(f"{f.rel}: {facts['error']}")
                    schemas[module] = facts["schema"] | {"path": f.rel}
            return schemas[module]

        def may_hold_field_class(qualname: str) -> bool:
            module = qualname
            while module:
                f = by_module.get(module)
                if f is not None:
                    return b"_NS_PATH" in sources.get(f.rel, b"")
                module = module.rpartition(".")[0]
            return False

        c = self.config
        unreadable = {e.path: e.message for e in sources.errors}
        for key, name, module in (
            ("runtime-module", c.runtime_module, c.runtime_module),
            ("record-class", c.record_class, c.record_module),
        ):
            reason = unchecked_module(c.root, c.src, c.exclude, module, files, unreadable)
            if reason is not None:  # say why, not just "not a module under the src roots"
                raise DerivationError(f"{key} {name!r}: {reason}")
        vocab = derive_vocabulary(
            self.config.runtime_module, self.config.record_class, load, may_hold_field_class
        )
        self._timed("vocabulary", t)
        return vocab

    def _inputs(self) -> dict[str, Any]:
        """What an outcome depends on besides the tree: code, config, selection, pins."""
        c = self.config
        return {
            "code": RUN_VERSION,
            "config": [
                c.runtime_module,
                c.record_class,
                c.src,
                c.exclude,
                c.per_rule_exclude,
                c.options,
                c.target_version,
            ],
            "selected": sorted(self.selected),
            "pinned": self.pinned,
            "environment": {r.id: r.environment() for r in self.rules if r.id in self.selected},
        }

    def _memo_key(self, sources: Sources, errors: list[FileError]) -> str:
        inputs = self._inputs()
        inputs["files"] = sorted(sources.hashes.items())
        inputs["unreadable"] = [[e.path, e.message] for e in errors]
        raw = json.dumps(inputs, sort_keys=True, default=list).encode()
        return "run:" + hashlib.blake2b(raw, digest_size=16).hexdigest()

    def _replay(self, data: dict[str, Any], files: int, parsed: int = 0) -> RunOutput:
        """The run's output from a stored outcome (checked by outcome_entry)."""
        vocab = Vocabulary.from_json(data["vocab"])
        program = Program(self.config, vocab, {}, sets=data["sets"], pinned=self.pinned)
        findings = [
            Finding(
                f["rule"],
                f["path"],
                Span(*f["span"]),
                f["scope"],
                f["message"],
                f["snippet"],
                f["fingerprint"],
                details=f.get("details", ""),
            )
            for f in data["findings"]
        ]
        errors = [FileError(e["path"], e["message"]) for e in data["errors"]]
        return RunOutput(
            program,
            findings,
            errors,
            files,
            parsed,
            dict(self.timings),
            data["pins"],
            data.get("disabled", {}),
        )

    @staticmethod
    def _record(out: RunOutput) -> bytes:
        return json.dumps(
            {
                "vocab": out.program.vocab.to_json(),
                "sets": out.program.sets,
                "findings": [
                    {
                        "rule": f.rule,
                        "path": f.path,
                        "scope": f.scope,
                        "message": f.message,
                        "snippet": f.snippet,
                        "fingerprint": f.fingerprint,
                        "details": f.details,
                        "span": [f.span.line, f.span.column, f.span.end_line, f.span.end_column],
                    }
                    for f in out.findings
                ],
                "errors": [e.to_json() for e in out.errors],
                "pins": out.pins,
                "disabled": out.disabled,
            },
            sort_keys=True,
            default=_plain_sorted,
        ).encode()

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
                # again, and is reported as a bug.
                self.cache.close()
                self.cache = FactCache(self.config.cache_dir, read=False)
                self.parsed, self.timings, self._done = 0, {}, 0
                out = self._run_once()
                print(
                    f"ctxlint: the cache held an entry this version cannot use "
                    f"({type(exc).__name__}: {exc}); ran again without reading it",
                    file=sys.stderr,
                )
                return out
        finally:
            if paused:
                gc.enable()

    def _run_once(self) -> RunOutput:
        files, sources, errors = self.read_sources()
        memo_key = self._memo_key(sources, errors) if self.memo else None
        if memo_key is not None:
            data = outcome_entry(self.cache.get_many([memo_key]).get(memo_key))
            if data is not None:
                out = self._replay(data, len(files))
                self.cache.close()
                return out
        out = self._run(files, sources, errors)
        if memo_key is not None and self.memo:
            self.cache.put_many({memo_key: self._record(out)})
        self.cache.close()
        return out

    def _run(self, files: list[SourceFile], sources: Sources, errors: list[FileError]) -> RunOutput:
        self._blob_digests = {}
        vocab = self.vocabulary(files, sources)
        unreadable = list(errors)  # and broken files no rule needed; the others' are in facts
        t = time.perf_counter()
        program = Program(self.config, vocab, {}, pinned=self.pinned)
        tokens: set[str] = {"ctxlint:"}
        everything = False
        for rule in self._runnable(vocab):
            more = rule.tokens(vocab)
            if more is None:
                everything = True
            else:
                tokens |= more
        module_of = {f.rel: f.module for f in files}
        blobs: dict[str, bytes] = {}
        decoded: set[str] = set()

        def decode() -> None:
            """Facts into the program, for the paths not decoded yet."""
            for path in sorted(set(blobs) - decoded):
                facts, blob = self._decoded((path, module_of[path]), blobs[path], sources, vocab)
                if blob is not blobs[path]:  # a bad entry, extracted again
                    blobs[path] = blob
                    self._blob_digests.pop(path, None)
                decoded.add(path)
                if "error" in facts:
                    errors.append(FileError(path, facts["error"]))
                else:
                    program.files[path] = facts

        round_tokens = set(tokens)  # each round scans only for tokens it has not seen
        while True:
            waiting = [p for p in sorted(sources) if p not in blobs]
            matched = (
                set(waiting)
                if everything
                else self._prefilter(waiting, sources, module_of, round_tokens)
            )
            todo = [(p, module_of[p]) for p in waiting if p in matched]
            if not todo:
                break
            blobs.update(self._extract(todo, sources, vocab))
            # What a round learns depends only on the facts so far: an edit that
            # leaves every file's facts as they were replays it (early cutoff).
            key = self._facts_key("round", vocab, blobs, tokens) if self.memo else None
            learnt = learnt_entry(self.cache.get_many([key]).get(key)) if key else None
            if learnt is not None:
                round_tokens = learnt - tokens
            else:
                decode()
                round_tokens = (
                    set().union(*(r.more_tokens(program) for r in self._runnable(vocab))) - tokens
                )
                if key:
                    self.cache.put_many({key: json.dumps(sorted(round_tokens)).encode()})
            if not round_tokens:
                break
            tokens |= round_tokens
        # Files no rule needed are still checked for parse errors (cheaply, with
        # ast): a broken file is reported whether or not it can matter.
        rest = [(p, module_of[p]) for p in sorted(sources) if p not in blobs]
        for path, blob in self._extract(rest, sources, SYNTAX_ONLY).items():
            facts, _ = self._decoded((path, module_of[path]), blob, sources, SYNTAX_ONLY)
            if "error" in facts:
                unreadable.append(FileError(path, facts["error"]))
                errors.append(unreadable[-1])
        self._timed("facts", t)

        key = self._facts_key("derived", vocab, blobs, tokens, unreadable) if self.memo else None
        outcome = outcome_entry(self.cache.get_many([key]).get(key)) if key else None
        if outcome is not None:
            return self._replay(outcome, len(files), self.parsed)
        decode()
        out = self._derive_and_check(program, errors, len(files))
        if key:
            self.cache.put_many({key: self._record(out)})
        return out

    def _facts_key(
        self,
        kind: str,
        vocab: Vocabulary,
        blobs: dict[str, bytes],
        tokens: set[str],
        errors: list[FileError] | None = None,
    ) -> str:
        """A key for what whole-program work does with these facts: the run's
        inputs other than sources (code, config, selection, pins), the
        vocabulary, the facts of every file gathered, the prefilter tokens, and
        the unreadable files."""
        head = json.dumps([self._inputs(), vocab.full_key()], sort_keys=True, default=list)
        digest = hashlib.blake2b(head.encode(), digest_size=16)
        for path in sorted(blobs):
            one = self._blob_digests.get(path)
            if one is None:  # a path's facts are fixed within a run: digest them once
                one = self._blob_digests[path] = hashlib.blake2b(
                    blobs[path], digest_size=16
                ).digest()
            digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + one)
        digest.update("\0".join(sorted(tokens)).encode())
        digest.update(json.dumps([[e.path, e.message] for e in errors or ()]).encode())
        return f"{kind}:{digest.hexdigest()}"

    def _runnable(self, vocab: Vocabulary) -> list[Rule]:
        """The rules whose vocabulary sets this codebase has (see Rule.needs)."""
        return [r for r in self.rules if r.disabled_because(vocab) is None]

    def _derive_and_check(self, program: Program, errors: list[FileError], files: int) -> RunOutput:
        if self.progress:
            self.progress(self._done, self._done, "checking")
        t = time.perf_counter()
        runnable = self._runnable(program.vocab)
        for rule in runnable:
            one = time.perf_counter()
            program.sets[rule.id] = rule.derive(program)
            self._timed(f"rule {rule.id} derive", one)
        self._timed("derive", t)
        raw: list[RawFinding] = []
        for rule in runnable:
            if rule.id not in self.selected:
                continue
            t = time.perf_counter()
            found = list(rule.check(program))
            excluded = self.config.per_rule_exclude.get(rule.id)
            if excluded:
                spec = path_matcher(excluded)
                found = [f for f in found if not spec.match_file(f.path)]
            raw.extend(found)
            self._timed(f"rule {rule.id} check", t)
        ran = {r.id for r in runnable} & self.selected
        raw = apply_suppressions(raw, program, ran, {r.id for r in load_rules()})
        findings = to_findings(raw)
        errors.sort(key=lambda e: e.path)
        pins = {r.id: r.pins(program) for r in runnable if r.id in self.selected}
        disabled = {
            r.id: why
            for r in self.rules
            if r.id in self.selected and (why := r.disabled_because(program.vocab))
        }
        return RunOutput(
            program,
            findings,
            errors,
            files,
            self.parsed,
            dict(self.timings),
            {k: v for k, v in pins.items() if v},
            disabled,
        )


MODULE_TOKEN = "module:"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def token_matcher(tokens: set[str]) -> Callable[[bytes], bool]:
    """A test for "these bytes hold one of the tokens": identifiers as whole
    words through one alternation (one pass, whatever the number of names: a
    substring scan per name costs minutes on a large tree), others as substrings."""
    words = sorted((t for t in tokens if _IDENTIFIER.fullmatch(t)), key=lambda t: (-len(t), t))
    others = [t.encode() for t in sorted(tokens) if not _IDENTIFIER.fullmatch(t)]
    pattern = (
        re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b")
        if words
        else None
    )

    def match(source: bytes) -> bool:
        if any(o in source for o in others):
            return True
        return pattern is not None and pattern.search(source) is not None

    return match


def to_findings(raw: list[RawFinding]) -> list[Finding]:
    """Fingerprint each finding by its occurrence among identical ones in a scope."""
    groups: dict[tuple[str, str, str, str], list[RawFinding]] = defaultdict(list)
    for r in raw:
        groups[(r.rule, r.path, r.scope, r.snippet)].append(r)
    out: list[Finding] = []
    for (rule, path, scope, snippet), members in groups.items():
        members.sort(key=lambda r: tuple(r.span))
        for i, r in enumerate(members):
            out.append(
                Finding(
                    rule=rule,
                    path=path,
                    span=Span(*r.span),
                    scope=scope,
                    message=r.message,
                    snippet=snippet,
                    fingerprint=fingerprint(rule, path, scope, snippet, i),
                    details=r.details,
                )
            )
    out.sort(key=Finding.sort_key)
    return out
