"""What each rule learns in a fixed-point round, remembered per rule.

A round asks every rule which more prefilter tokens the facts so far call for
(`Rule.more_tokens`). The whole round is remembered by the facts of every file
gathered, so one edited file makes every rule answer again, and the call graph
rule's answer costs a graph build per round. A rule reads only some of a file's
facts: its own, and those of the program parts it requires (`Rule.requires`,
with the parts every run has). So each rule's answer is also remembered by the
digests of just those facts, without their positions: an edit that leaves them
as they were (a new line above them, a local constant, another rule's facts)
replays it. tests/engine/test_rounds.py checks that every rule's answer depends on
nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlint.cache.entries import learnt_entry
from ctxlint.cache.store import FactCache
from ctxlint.engine.blobs import Blobs
from ctxlint.engine.part_digests import ERROR, PartDigests, complete, of_blob
from ctxlint.program.core import Program
from ctxlint.program.parts import required
from ctxlint.program.rule import Rule


def reads(rule: Rule) -> tuple[str, ...]:
    """The facts keys a rule's answer may depend on: its own and its parts'."""
    return (ERROR, *sorted({rule.id, *required([rule])}))


@dataclass
class RoundCache:
    """What the rounds work out per file, kept from one run to the next by a
    resident front end (it lives on its CheckMemo): an edit's run then reads and
    formats only the edited files' share, not every file's for every rule
    (on sglang 0.5.23, 26 rules x 1,900 files). Both are content-keyed."""

    parts: dict[str, PartDigests] = field(default_factory=dict)  # entry digest -> part digests
    # rule -> path -> (entry digest, module, the file's share of the rule's key)
    made: dict[str, dict[str, tuple[str, str, bytes]]] = field(default_factory=dict)
    paths: frozenset[str] = frozenset()  # the files of the run that last kept `made`
    # each rule's shares in path order as its last key joined them (the order,
    # the shares, and the keys made of them by (head, tokens)), and what each
    # file's were made of then (path -> entry digest, module): a key after an
    # edit replaces the edited files' shares only, and is not hashed again
    # when none of their shares changed (an edit of facts the rule does not
    # read, or only of their positions)
    joined: dict[str, tuple[tuple[str, ...], list[bytes], dict[tuple[str, str], str]]] = field(
        default_factory=dict
    )
    order: tuple[str, ...] = ()
    made_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the rules' answers by their keys (what the cache holds under them, as the
    # last runs read or wrote it): an edit's rounds ask the cache for none
    answers: dict[str, frozenset[str]] = field(default_factory=dict)
    modules: object = None  # the files' modules `paths` was last checked against
    tokens: tuple[set[str], str] = (set(), "")  # the last tokens, joined as a key holds them


def file_share(path: str, module: str, parts: PartDigests, keys: Iterable[str]) -> bytes:
    """A file's share of a key made over the digests of its parts `keys`."""
    text = f"\0{path}\0{module}" + "".join(f"\0{k}={parts.get(k, '')}" for k in keys)
    return text.encode("utf-8", "surrogateescape")


class RoundMemo:
    """Per-rule answers of a run's rounds, read from and written to the cache."""

    def __init__(
        self,
        cache: FactCache,
        head: str,
        *,
        replay: bool = True,
        known: dict[str, PartDigests] | None = None,
        kept: RoundCache | None = None,
    ) -> None:
        self.cache = cache
        # blob digest -> part digests the workers worked out with the facts
        # (stored in the cache here, as if computed here)
        self.known = known if known is not None else {}
        self.replay = replay  # False: every rule answers (a run that must not replay)
        self.head = head  # the run's inputs and vocabulary, as the round keys hold them
        kept = kept if kept is not None else RoundCache()
        self._kept = kept
        self._parts = kept.parts  # blob digest -> its part digests
        self._made = kept.made  # see _segments
        # this learn's files in path order, and those whose entry or module
        # changed since the last one (None: the files are not the same)
        self._order: tuple[str, ...] = ()
        self._changed: list[str] | None = None

    def digests(
        self, blob_digests: dict[str, str], blobs: Mapping[str, bytes]
    ) -> dict[str, PartDigests]:
        """The part digests of these entries (path -> entry digest), by entry
        digest: the workers', else the cache's, else worked out from the entry."""
        self._digests(blob_digests, blobs)
        return {d: self._parts[d] for d in blob_digests.values()}

    def _digests(self, blob_digests: dict[str, str], blobs: Mapping[str, bytes]) -> None:
        missing = sorted({d for d in blob_digests.values() if d not in self._parts})
        fresh: dict[str, bytes] = {}
        for d in missing:  # worked out by the workers, with the facts
            if d in self.known:
                self._parts[d] = self.known[d]
                fresh[f"parts:{d}"] = json.dumps(self.known[d], sort_keys=True).encode()
        missing = [d for d in missing if d not in self.known]
        keys = {d: f"parts:{d}" for d in missing}
        stored = self.cache.get_many(list(keys.values())) if missing else {}
        by_digest = {d: p for p, d in blob_digests.items()}
        if isinstance(blobs, Blobs):  # the entries to digest, read in one batch
            blobs.load(by_digest[d] for d in missing if keys[d] not in stored)
        for d in missing:
            raw = stored.get(keys[d])
            try:
                value = json.loads(raw) if raw is not None else None
            except ValueError:
                value = None
            if not complete(value):
                value = of_blob(blobs[by_digest[d]])
                fresh[keys[d]] = json.dumps(value, sort_keys=True).encode()
            self._parts[d] = value
        if fresh:
            self.cache.put_many(fresh)

    def _key(
        self, rule: Rule, modules: dict[str, str], blob_digests: dict[str, str], tokens: str
    ) -> str:
        shares, known = self._segments(rule, modules, blob_digests)
        key = known.get((self.head, tokens))
        if key is None:  # (else the same shares, head and tokens: not hashed again)
            if len(known) > 8:
                known.clear()
            h = hashlib.blake2b(f"{self.head}\0{rule.id}".encode(), digest_size=16)
            h.update(b"".join(shares))
            h.update(tokens.encode())
            key = known[(self.head, tokens)] = f"learnt:{rule.id}:{h.hexdigest()}"
        return key

    def _segments(
        self, rule: Rule, modules: dict[str, str], blob_digests: dict[str, str]
    ) -> tuple[list[bytes], dict[tuple[str, str], str]]:
        """Each file's share of a rule's key, by path: its path, module and the
        digests of the parts the rule reads. Made once per file and run (a later
        round keys the same files again: 18 rules x 4 rounds x ~1,900 files on
        sglang 0.5.23), and again only for an entry extracted anew. And the
        keys made of these very shares (by head and tokens), kept while no
        file's share changes."""
        made = self._made.setdefault(rule.id, {})
        keys = reads(rule)

        def share(path: str) -> bytes:
            digest, module = blob_digests[path], modules[path]
            hit = made.get(path)
            if hit is None or hit[0] != digest or hit[1] != module:
                text = file_share(path, module, self._parts[digest], keys)
                hit = made[path] = (digest, module, text)
            return hit[2]

        order = self._order or tuple(sorted(blob_digests))
        last = self._kept.joined.get(rule.id)
        if last is not None and last[0] is order and self._changed is not None:
            out, known = last[1], last[2]  # (the same files: only the changed ones' shares again)
            if self._changed:
                where = {p: i for i, p in enumerate(order)} if len(self._changed) > 8 else None
                for path in self._changed:
                    i = where[path] if where is not None else order.index(path)
                    now = share(path)
                    if now != out[i]:
                        out[i], known = now, {}
        else:
            out, known = [share(path) for path in order], {}
        self._kept.joined[rule.id] = (order, out, known)
        return out, known

    def _order_files(self, modules: dict[str, str], blob_digests: dict[str, str]) -> None:
        """This learn's files in order, and those changed since the last learn
        kept in `joined` (their shares are made again)."""
        kept = self._kept
        order = tuple(sorted(blob_digests))
        made_of = {p: (blob_digests[p], modules[p]) for p in order}
        if order == kept.order:
            self._order = kept.order  # (the same object: `joined` is by it)
            self._changed = [p for p in order if kept.made_of.get(p) != made_of[p]]
        else:
            self._order, self._changed = order, None
            kept.joined = {}
        kept.order, kept.made_of = self._order, made_of

    def learn(
        self,
        rules: Iterable[Rule],
        program: Program,
        decode: Callable[[], Any],
        modules: dict[str, str],
        blobs: Mapping[str, bytes],
        blob_digests: dict[str, str],
        tokens: set[str],
    ) -> set[str]:
        """Every rule's more tokens for the facts in `blobs` (`decode()` fills the
        program with them, called only when some rule must answer again)."""
        rules = list(rules)
        if not self.replay:
            decode()
            return set().union(*(rule.more_tokens(program) for rule in rules))
        self._digests(blob_digests, blobs)
        # the digests of entries no file holds now (an edit's earlier content) go
        current = set(blob_digests.values())
        if len(self._parts) > len(current):
            self._kept.parts = self._parts = {d: self._parts[d] for d in current}
        kept = self._kept
        # the shares of files gone since go (a later round's files: the same object)
        if kept.modules is not modules and kept.paths != modules.keys():
            kept.paths = frozenset(modules)
            for rid, made in self._made.items():
                self._made[rid] = {p: hit for p, hit in made.items() if p in modules}
        kept.modules = modules
        self._order_files(modules, blob_digests)
        if kept.tokens[0] != tokens:
            kept.tokens = (set(tokens), "\0".join(sorted(tokens)))
        joined = kept.tokens[1]
        keys = {r.id: self._key(r, modules, blob_digests, joined) for r in rules}
        # (a rule this learn did not key missed its files' changes since)
        kept.joined = {rid: v for rid, v in kept.joined.items() if rid in keys}
        answers = kept.answers
        if len(answers) > 16 * len(keys):  # (the answers of many runs ago go)
            answers.clear()
        asked = [k for k in keys.values() if k not in answers]
        stored = self.cache.get_many(asked) if asked else {}
        out: set[str] = set()
        fresh: dict[str, bytes] = {}
        for rule in rules:
            key = keys[rule.id]
            known = answers.get(key)
            if known is None:
                found = learnt_entry(stored.get(key))
                if found is None:
                    decode()
                    found = set(rule.more_tokens(program))
                    fresh[key] = json.dumps(sorted(found)).encode()
                known = answers[key] = frozenset(found)
            out |= known
        if fresh:
            self.cache.put_many(fresh)
        return out
