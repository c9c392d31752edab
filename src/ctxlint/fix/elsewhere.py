""" "Is this name used in another file?": the question a fixer asks before it
renames or removes a name another module may import (CTX401, CTX101).

The answer is a function of the checked files' paths and contents, so it is
kept in the fact cache under a digest of both (every checked path with its
content hash) with the question: a fix run over an unchanged tree asks no file
again, and any edit, copy, rename or deletion changes the digest. Where it is
not kept, every other file is searched: a substring test of the pattern's
longest word first, the regexes only on the few files that hold it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable

from ctxlint.cache.store import FactCache

LAYOUT = "e1"  # the layout of the keys and entries below, and the search they keep


def tree_digest(paths: Iterable[str], hashes: dict[str, str]) -> str:
    """Every checked path with its content hash ("" for a file that cannot be read)."""
    digest = hashlib.blake2b(LAYOUT.encode(), digest_size=16)
    for rel in sorted(paths):
        digest.update(f"{rel}\0{hashes.get(rel, '')}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _key(tree: str, patterns: list[str], path: str) -> str:
    raw = json.dumps([tree, patterns, path]).encode("utf-8", "surrogateescape")
    return "elsewhere:" + hashlib.blake2b(raw, digest_size=16).hexdigest()


class NamedElsewhere:
    """Does a checked file other than `path` match every one of `patterns`?

    `paths` are the checked files, `text` reads one (a file that cannot be read
    is ""), `before_search` runs before the first search (reading every file
    at once); `cache`, when given, keeps the answers for `tree` (tree_digest).
    """

    def __init__(
        self,
        paths: list[str],
        text: Callable[[str], str],
        *,
        tree: str = "",
        cache: FactCache | None = None,
        before_search: Callable[[], None] = lambda: None,
    ) -> None:
        self.paths = paths
        self.text = text
        self.tree = tree
        self.cache = cache if tree else None
        self.before_search = before_search
        self.memo: dict[tuple[str, str], bool] = {}
        self.new: dict[str, bytes] = {}  # answers worked out here, to keep
        self.searches = 0  # searches of the tree run (the tests read it)

    def _memo_key(self, patterns: list[str], path: str) -> tuple[str, str]:
        return (json.dumps(patterns), path)

    def __call__(self, patterns: list[str], path: str) -> bool:
        key = self._memo_key(patterns, path)
        if key not in self.memo:
            self.memo[key] = found = self._search(patterns, path)
            if self.cache is not None:
                self.new[_key(self.tree, patterns, path)] = b"1" if found else b"0"
        return self.memo[key]

    def load(self, questions: Iterable[tuple[list[str], str]]) -> None:
        """Read the kept answers to `questions` (one query for all)."""
        if self.cache is None:
            return
        wanted = {
            _key(self.tree, p, path): self._memo_key(p, path)
            for p, path in questions
            if self._memo_key(p, path) not in self.memo
        }
        for key, blob in self.cache.get_many(wanted).items():
            if blob in (b"0", b"1"):  # anything else: a miss
                self.memo[wanted[key]] = blob == b"1"

    def learn(self, patterns: list[str], path: str, found: bool) -> None:
        """An answer worked out elsewhere (a pool worker), to keep."""
        key = self._memo_key(patterns, path)
        if key not in self.memo:
            self.memo[key] = found
            if self.cache is not None:
                self.new[_key(self.tree, patterns, path)] = b"1" if found else b"0"

    def save(self) -> None:
        if self.cache is not None and self.new:
            self.cache.put_many(self.new)
        self.new = {}

    def _search(self, patterns: list[str], path: str) -> bool:
        if not self.searches:
            self.before_search()
        self.searches += 1
        compiled = [re.compile(p) for p in patterns]
        # a plain substring test first: the regexes run on the few files holding the words
        words = [max(re.findall(r"\w+", p.replace("\\b", "")), key=len) for p in patterns]
        for rel in self.paths:
            if rel == path:
                continue
            text = self.text(rel)
            if all(w in text for w in words) and all(c.search(text) for c in compiled):
                return True
        return False
