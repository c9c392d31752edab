"""Each rule's derived sets and findings, remembered by exactly what they read.

A resident front end (the language server, the daemon) checks the same tree
again after every edit. A rule's derivation and check read the program, but
only some of it: the rule's own facts, the facts of the program parts it
requires (and of the parts those are built from), the file list, the
vocabulary, the config and the baseline's pins. So each rule's outcome (its derived sets, its raw
findings less its per-rule excludes, its pins) is remembered in memory by the
digests of just those facts, WITH their positions (findings and sets carry
spans): an edit that leaves them as they were replays it, and a program part
is built (Program.memo) only when a rule that needs it runs again.

An edited buffer whose facts are its old ones with lines moved (a statement
added above them) replays a rule reading them with its outcome moved to the
new lines (engine.moved_outcomes), not derived again.

What a rule reads besides its facts cannot be keyed by them: a rule with an
environment always runs, unless it names the files whose text it read
(`memo_texts`) and a digest of those texts as it reads them (`texts_key`):
CTX401 runs ruff over the texts of its candidates (files that bind an
accessor name twice, a set its facts decide), and ruff's reports depend on
those texts alone (and on ruff, in the environment: the head). It is then
replayed, or moved, while its facts' key is its last run's and the texts of
its last run's candidates are those it read (a `# noqa` added: derived). No rule reads
another rule's derived sets (program.sets); tests/engine/test_check_memo.py checks,
rule by rule, that a rule's outcome depends on nothing but `check_reads`.
"""

from __future__ import annotations

import bisect
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.findings import Finding
from ctxlint.engine import checks
from ctxlint.engine.moved_outcomes import LineMap, Move, back_digests
from ctxlint.engine.part_digests import ERROR, PLACED, PartDigests, placed
from ctxlint.engine.rounds import RoundCache
from ctxlint.program.core import Carried, Program
from ctxlint.program.parts import DEPENDS, required
from ctxlint.program.rule import RawFinding, Rule

Timed = Callable[[str, float], None]
# entries (path -> entry digest, hex) -> their part digests by entry digest (the
# workers', the fact cache's, or worked out: engine.rounds.RoundMemo.digests)
LoadDigests = Callable[[dict[str, str]], dict[str, PartDigests]]
Entry = Callable[[str], bytes]  # path -> its facts entry (encoded) in this run

# The parts each part's whole-program side is built from, past the walk's own
# dependencies (parts.DEPENDS): the call graph asks the class index and the
# record convention; the resolution model asks the call graph.
BUILT_FROM: dict[str, tuple[str, ...]] = {
    "calls": ("classes", "records"),
    "resolution": ("calls",),
}


def check_reads(rule: Rule) -> tuple[str, ...]:
    """The facts keys a rule's derivation, check and pins may read: its own, its
    parts' and those their models are built from or query (no side part:
    parts.SIDE, read by the fixes and the server's navigation)."""
    return (ERROR, *sorted({rule.id, *rule.reads_facts, *built_from(required([rule]))}))


def built_from(parts: set[str]) -> set[str]:
    """`parts` and every part they are walked with or built from (DEPENDS,
    BUILT_FROM), transitively: the facts keys their answers read."""
    parts, todo = set(parts), list(parts)
    while todo:
        part = todo.pop()
        for more in (*DEPENDS.get(part, ()), *BUILT_FROM.get(part, ())):
            if more not in parts:
                parts.add(more)
                todo.append(more)
    return parts


def replayable(rule: Rule) -> bool:
    """Whether a rule's outcome can be keyed: it reads nothing but the program,
    or what its environment (a helper tool it runs) reads past the facts is
    the text of files it names (`memo_texts`, `texts_key`)."""
    return not rule.environment() or _reads_texts(rule)


def _reads_texts(rule: Rule) -> bool:
    return callable(getattr(rule, "memo_texts", None))


@dataclass(frozen=True)
class Outcome:
    """One rule's outcome: its sets (after its check), its raw findings and
    pins (None: it was not selected, so not checked)."""

    sets: dict[str, Any]
    found: tuple[RawFinding, ...] | None
    pins: dict[str, Any] | None


class CheckMemo:
    """The outcome of each rule's last run, by its key; the part digests of the
    entries the last run held. Lives in memory, with a resident front end."""

    def __init__(self) -> None:
        self._placed: dict[bytes, PartDigests] = {}  # entry digest -> digests, positions kept
        self._loose: dict[bytes, PartDigests] = {}  # and without them (this run's and gone)
        self._blobs: dict[str, bytes] = {}  # path -> the last run's entry, of each edited text
        self._last: dict[str, tuple[str, Outcome]] = {}  # rule -> (key, outcome)
        # the rules derived (not replayed) by the last run, in order
        self.derived: tuple[str, ...] = ()
        self.moved: tuple[str, ...] = ()  # those replayed with an edit's lines moved
        self.rounds = RoundCache()  # what the rounds work out per file, kept between runs
        self._texts: dict[str, str] = {}  # the last run's buffers (path -> text)
        self._entries: dict[str, bytes] = {}  # path -> its entry digest in the last run
        self._made_columns: _Columns | None = None  # the last run's (see _columns)
        # the model's parts built by the last runs (Program.memo), by what they read
        self._carried: dict[str, tuple[str, Any]] = {}
        # rule -> the files whose text its last derived outcome read past the
        # facts (`memo_texts`), and the digest of those texts then (`texts_key`)
        self._read: dict[str, tuple[list[str], str | None]] = {}

    def forget(self) -> None:
        self._read = {}
        self._placed, self._last, self.derived, self.moved = {}, {}, (), ()
        self.rounds = RoundCache()
        self._texts, self._entries, self._made_columns = {}, {}, None
        self._carried, self._loose, self._blobs = {}, {}, {}

    def text_before(self, path: str) -> str | None:
        """`path`'s text in the last run, when it was an edited one (a buffer,
        a file changed on disk): where an edit's whole parse keeps the walk's
        state (engine.kept_tree)."""
        return self._texts.get(path)

    def _place(self, digests: Mapping[str, bytes], load: LoadDigests) -> dict[bytes, PartDigests]:
        """The part digests (positions kept) of this run's entries; the last
        run's of the entries gone since are returned."""
        wanted = {p: d.hex() for p, d in digests.items() if d not in self._placed}
        if wanted:
            found = load(wanted)
            for path, d in wanted.items():
                self._placed[digests[path]] = placed(found[d])
                self._loose[digests[path]] = {
                    k: v for k, v in found[d].items() if not k.startswith(PLACED)
                }
        now = set(digests.values())
        gone = {d: v for d, v in self._placed.items() if d not in now}
        self._placed = {d: self._placed[d] for d in now}
        self._loose = {d: v for d, v in self._loose.items() if d in now or d in gone}
        return gone

    def _columns(
        self,
        digests: Mapping[str, bytes],
        modules: Mapping[str, str],
        instead: Mapping[str, PartDigests] | None = None,
        keys: set[str] | None = None,
    ) -> tuple[bytes, dict[str, bytes]]:
        """Every file's path and module (or error), and per facts key (all,
        or `keys`) the digest of the (path, digest with positions) of each
        file that has it, in path order; `instead`: some files' digests of
        some keys.
        Made from the last run's columns (`_Columns`) where the files are the
        same: only the changed files' lines again."""
        made = self._made_columns
        if made is None or not made.patch(digests, modules, self._placed):
            made = self._made_columns = _Columns.of(digests, modules, self._placed)
        if not instead:
            return made.files, made.digests(keys)
        return made.files, made.instead(instead, keys)

    def _keys(
        self,
        program: Program,
        rules: list[Rule],
        selected: set[str],
        head: str,
        files: bytes,
        columns: Mapping[str, bytes],
    ) -> dict[str, str]:
        """Each replayable rule's key: the run's head, the files, and the
        digests of every facts key it reads (`columns`: each column's digest,
        made once per run and column, not hashed again per rule)."""
        common = _common(program, head, files)
        keys: dict[str, str] = {}
        for rule in rules:
            if replayable(rule):
                h = common.copy()
                h.update(f"\0{rule.id}\0{rule.id in selected}".encode())
                for key in check_reads(rule):
                    h.update(f"\0{key}".encode())
                    h.update(columns.get(key, b""))
                keys[rule.id] = h.hexdigest()
        return keys

    def _texts_same(self, rule: Any, program: Program) -> bool:
        """Whether the files whose text the rule's last outcome read hold that
        text still (a rule that reads none: True)."""
        if not _reads_texts(rule):
            return True
        read = self._read.get(rule.id)
        if read is None or read[1] is None:
            return False
        return bool(rule.texts_key(program.config.root, read[0]) == read[1])

    def _moves(
        self,
        digests: Mapping[str, bytes],
        gone: Mapping[bytes, PartDigests],
        texts: Mapping[str, str],
        entry: Entry,
    ) -> tuple[dict[str, LineMap], dict[str, PartDigests]]:
        """The buffers edited since the last run, each its LineMap, and the
        digests of its new entry's changed parts moved back to its old lines."""
        maps: dict[str, LineMap] = {}
        back: dict[str, PartDigests] = {}
        for path, text in texts.items():
            old_text, was = self._texts.get(path), self._entries.get(path)
            now = digests.get(path)
            if old_text is None or old_text == text or was is None or was == now or now is None:
                continue
            old, new = gone.get(was, self._placed.get(was)), self._placed[now]
            if old is None or ERROR in old or ERROR in new or path not in self._blobs:
                continue
            changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
            if changed <= old.keys() & new.keys():  # (a part added or gone: derived)
                maps[path] = LineMap.of(old_text, text)
                # the parts equal but for positions (a part whose facts changed
                # cannot be its old one moved)
                loose_old, loose_new = self._loose.get(was, {}), self._loose.get(now, {})
                same = {k for k in changed if k in loose_old and loose_old[k] == loose_new.get(k)}
                back[path] = back_digests(
                    self._blobs[path], entry(path), same, old, new, maps[path]
                )
        return maps, back

    def _moved(self, rule: Rule, done: Outcome, maps: Mapping[str, LineMap]) -> Outcome | None:
        """A rule's last outcome with each edited file's lines moved (None:
        a place that cannot be moved exactly)."""
        sets, found = done.sets, done.found
        for path, lines in maps.items():
            moved = Move(path, lines).outcome(sets, found, done.pins)
            if moved is None:
                return None
            sets, found = moved
        return Outcome(sets, found, done.pins)

    def run(
        self,
        program: Program,
        runnable: list[Rule],
        selected: set[str],
        pinned: dict[str, dict[str, Any]],
        head: str,
        digests: Mapping[str, bytes],
        modules: Mapping[str, str],
        load: LoadDigests,
        timed: Timed,
        *,
        texts: Mapping[str, str] | None = None,
        entry: Entry | None = None,
    ) -> tuple[list[Finding], dict[str, dict[str, Any]]]:
        """checks.derive, checks.check and checks.pins of the program, each
        rule replayed whose key is its last run's, or whose key with the
        edited buffers' (`texts`) facts moved back to their old lines is: its
        outcome moved to the new lines. The findings and pins."""
        t = time.perf_counter()
        gone = self._place(digests, load)
        files, columns = self._columns(digests, modules)
        keys = self._keys(program, runnable, selected, head, files, columns)
        rules = {r.id: r for r in runnable}
        same: dict[str, bool] = {}  # rule -> whether the texts it read are as they were

        def texts_same(rid: str) -> bool:
            if rid not in same:
                same[rid] = self._texts_same(rules[rid], program)
            return same[rid]

        replayed = {
            rid: hit[1]
            for rid, key in keys.items()
            if (hit := self._last.get(rid)) is not None and hit[0] == key and texts_same(rid)
        }
        moved: dict[str, Outcome] = {}
        missed = [
            r for r in runnable if r.id in keys and r.id not in replayed and r.id in self._last
        ]
        if missed and texts and entry is not None:
            maps, back = self._moves(digests, gone, texts, entry)
            if maps:
                reads = {k for r in missed for k in check_reads(r)}
                _, shifted = self._columns(digests, modules, back, reads)
                again = self._keys(program, missed, selected, head, files, {**columns, **shifted})
                for rule in missed:
                    last_key, done = self._last[rule.id]
                    if (
                        again[rule.id] == last_key
                        and texts_same(rule.id)
                        and (out := self._moved(rule, done, maps))
                    ):
                        moved[rule.id] = out
        self._texts = dict(texts or {})
        self._entries = dict(digests)
        # the edited texts' entries, for their next edit's moves (the entry
        # held, not its facts decoded: json is faster to decode again)
        self._blobs = {p: entry(p) for p in self._texts if p in digests} if entry else {}
        timed("check memo", t)
        replayed |= moved
        carried = program.carried = _carry(program, head, files, columns, self._carried)
        try:
            return self._derive_and_check(
                program, runnable, selected, pinned, keys, replayed, moved, timed
            )
        finally:
            program.carried = None  # (later questions of the program build afresh)
            self._carried = {k: carried.values[k] for k in carried.asked}

    def _derive_and_check(
        self,
        program: Program,
        runnable: list[Rule],
        selected: set[str],
        pinned: dict[str, dict[str, Any]],
        keys: dict[str, str],
        replayed: dict[str, Outcome],
        moved: dict[str, Outcome],
        timed: Timed,
    ) -> tuple[list[Finding], dict[str, dict[str, Any]]]:
        """The rules not replayed derived and checked; every rule's outcome kept."""
        t = time.perf_counter()
        for rule in runnable:  # checks.derive, less the replayed
            if rule.id in replayed:
                program.sets[rule.id] = replayed[rule.id].sets
            else:
                one = time.perf_counter()
                program.sets[rule.id] = rule.derive(program)
                timed(f"rule {rule.id} derive", one)
        timed("derive", t)
        program.pinned = pinned  # the checks compare with the baseline's pins
        raw: list[RawFinding] = []
        pins: dict[str, dict[str, Any]] = {}
        for rule in runnable:
            done = replayed.get(rule.id)
            if done is None:
                found = pinning = None
                if rule.id in selected:
                    found = tuple(checks.rule_findings(program, rule, program.config, timed))
                    pinning = rule.pins(program)
                done = Outcome(program.sets[rule.id], found, pinning)
            if rule.id in keys and (rule.id not in replayed or rule.id in moved):
                self._last[rule.id] = (keys[rule.id], done)
                if rule.id not in replayed and _reads_texts(rule):
                    self._read[rule.id] = _texts_read(rule, program)
            if done.found is not None:
                raw.extend(done.found)
            if done.pins:
                pins[rule.id] = done.pins
        self._last = {rid: v for rid, v in self._last.items() if rid in keys}
        self._read = {rid: v for rid, v in self._read.items() if rid in self._last}
        self.derived = tuple(r.id for r in runnable if r.id not in replayed)
        self.moved = tuple(r.id for r in runnable if r.id in moved)
        return checks.judged(program, raw, runnable, selected), pins


def _texts_read(rule: Any, program: Program) -> tuple[list[str], str | None]:
    """The files whose text a rule's outcome read past the facts, and their digest."""
    paths = list(rule.memo_texts(program))
    return paths, rule.texts_key(program.config.root, paths)


def _common(program: Program, head: str, files: bytes) -> Any:
    """The hash of what every key holds: the run's head, the paths, the files."""
    common = hashlib.blake2b(head.encode(), digest_size=16)
    common.update("\0".join(program.paths).encode("utf-8", "surrogateescape"))
    common.update(files)
    return common


def _carry(
    program: Program, head: str, files: bytes, columns: Mapping[str, bytes], kept: dict
) -> Carried:
    """The model's parts kept from the last runs (`kept`), each reused by the
    program while the columns of the facts keys it reads are the same: a
    token of the head, the files and those columns' digests."""
    common = _common(program, head, files)

    def token(reads: tuple[str, ...]) -> str:
        h = common.copy()
        for key in sorted(set(reads)):
            h.update(f"\0{key}\0".encode())
            h.update(columns.get(key, b""))
        return h.hexdigest()

    return Carried(token, kept)


def _line(path: str, digest: str) -> str:
    return f"\0{path}\0{digest}"


def _file_line(path: str, module: str, parts: PartDigests) -> str:
    """A file's line: its path, module and error (if it has one)."""
    return f"\0{path}\0{module}\0{parts.get(ERROR, '')}"


def _encoded(lines: list[str]) -> bytes:
    return "".join(lines).encode("utf-8", "surrogateescape")


def _column_digest(encoded: bytes) -> bytes:
    return hashlib.blake2b(encoded, digest_size=16).digest()


# A column's digest is that of its chunks' digests, each of CHUNK lines in path
# order: a file's changed part hashes its chunk again, not the whole column
# (about 1,900 lines on sglang, twice an edit: the digests and the `instead`).
CHUNK = 64


def _chunks_of(lines: list[str]) -> list[bytes | None]:
    return [_column_digest(_encoded(lines[i : i + CHUNK])) for i in range(0, len(lines), CHUNK)]


def _joined_chunks(chunks: list[bytes | None]) -> bytes:
    return _column_digest(b"".join(c for c in chunks if c is not None))


@dataclass
class _Columns:
    """The columns of a run (CheckMemo._columns): each file's line, and per
    facts key the lines of the files that have it, in path order, as lists
    (patched by the next run for the files whose entry changed) and encoded."""

    order: list[str]  # the files in path order
    at: dict[str, int]  # path -> its place in `order`
    entries: dict[str, tuple[bytes, str, PartDigests]]  # path -> entry digest, module, digests
    file_lines: list[str]
    files: bytes
    columns: dict[str, list[tuple[str, str]]]  # key -> [(path, line)], in path order
    _digests: dict[str, bytes] = field(default_factory=dict)  # key -> its column's digest
    # key -> its chunks' digests (None: that chunk changed since)
    _chunks: dict[str, list[bytes | None]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        digests: Mapping[str, bytes],
        modules: Mapping[str, str],
        placed: Mapping[bytes, PartDigests],
    ) -> _Columns:
        order = sorted(digests)
        file_lines: list[str] = []
        columns: dict[str, list[tuple[str, str]]] = {}
        for path in order:
            parts = placed[digests[path]]
            file_lines.append(_file_line(path, modules[path], parts))
            for key, digest in parts.items():
                columns.setdefault(key, []).append((path, _line(path, digest)))
        return cls(
            order,
            {p: i for i, p in enumerate(order)},
            {p: (digests[p], modules[p], placed[digests[p]]) for p in order},
            file_lines,
            _encoded(file_lines),
            columns,
        )

    def patch(
        self,
        digests: Mapping[str, bytes],
        modules: Mapping[str, str],
        placed: Mapping[bytes, PartDigests],
    ) -> bool:
        """Brought to these files' entries, when they are the same files (False: not)."""
        if len(digests) != len(self.order) or digests.keys() != self.at.keys():
            return False
        entries = self.entries
        changed = [p for p in self.order if entries[p][:2] != (digests[p], modules[p])]
        for path in changed:
            old, new = entries[path][2], placed[digests[path]]
            self.file_lines[self.at[path]] = _file_line(path, modules[path], new)
            for key in old.keys() | new.keys():
                if old.get(key) != new.get(key):
                    self._set(key, path, new.get(key))
            entries[path] = (digests[path], modules[path], new)
        if changed:
            self.files = _encoded(self.file_lines)
        return True

    def _set(self, key: str, path: str, digest: str | None) -> None:
        """One file's line of one key's column replaced (or added, or dropped)."""
        column = self.columns.setdefault(key, [])
        self._digests.pop(key, None)
        chunks = self._chunks.get(key)
        i = bisect.bisect_left(column, (path,))
        if i < len(column) and column[i][0] == path:
            if digest is None:
                del column[i]
                if chunks is not None:
                    del chunks[i // CHUNK :]  # (the lines after it moved)
            else:
                column[i] = (path, _line(path, digest))
                if chunks is not None and i // CHUNK < len(chunks):
                    chunks[i // CHUNK] = None  # (past the end: dropped already)
        elif digest is not None:
            column.insert(i, (path, _line(path, digest)))
            if chunks is not None:
                del chunks[i // CHUNK :]
        if not column:
            del self.columns[key]
            self._chunks.pop(key, None)

    def _column_chunks(self, key: str) -> list[bytes | None]:
        """The key's chunk digests, those changed since made again."""
        column = self.columns[key]
        chunks = self._chunks.get(key)
        if chunks is None:
            chunks = self._chunks[key] = _chunks_of([line for _, line in column])
            return chunks
        chunks += [None] * ((len(column) + CHUNK - 1) // CHUNK - len(chunks))
        for c, known in enumerate(chunks):
            if known is None:
                lines = [line for _, line in column[c * CHUNK : (c + 1) * CHUNK]]
                chunks[c] = _column_digest(_encoded(lines))
        return chunks

    def encoded(self, keys: set[str] | None) -> dict[str, bytes]:
        return {
            key: _encoded([line for _, line in column])
            for key, column in self.columns.items()
            if keys is None or key in keys
        }

    def digests(self, keys: set[str] | None) -> dict[str, bytes]:
        """Each column's digest (all, or `keys`): what a rule's key holds of it."""
        out = {}
        for key in self.columns:
            if keys is None or key in keys:
                found = self._digests.get(key)
                if found is None:
                    found = self._digests[key] = _joined_chunks(self._column_chunks(key))
                out[key] = found
        return out

    def instead(
        self, instead: Mapping[str, PartDigests], keys: set[str] | None
    ) -> dict[str, bytes]:
        """The columns' digests with some files' digests of some keys replaced."""
        out = self.digests(keys)
        touched: dict[str, dict[str, str]] = {}
        for path, parts in instead.items():
            for key, digest in parts.items():
                if keys is None or key in keys:
                    touched.setdefault(key, {})[path] = digest
        for key, paths in touched.items():
            column = self.columns.get(key, [])
            at = {p: bisect.bisect_left(column, (p,)) for p in paths}
            if all(i < len(column) and column[i][0] == p for p, i in at.items()):
                # each a line of the column: only its chunk is hashed again
                chunks = list(self._column_chunks(key))
                lines: dict[int, list[str]] = {}
                for p, i in at.items():
                    c = i // CHUNK
                    if c not in lines:
                        lines[c] = [line for _, line in column[c * CHUNK : (c + 1) * CHUNK]]
                    lines[c][i - c * CHUNK] = _line(p, paths[p])
                for c, chunk in lines.items():
                    chunks[c] = _column_digest(_encoded(chunk))
                out[key] = _joined_chunks(chunks)
                continue
            whole = dict(column)
            for path, digest in paths.items():
                whole[path] = _line(path, digest)
            out[key] = _joined_chunks(_chunks_of([whole[p] for p in sorted(whole)]))
        return out
