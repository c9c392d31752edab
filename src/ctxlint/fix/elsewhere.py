""" "Is this name used in another file?": the question a fixer asks before it
renames or removes a name another module may import (CTX401, CTX101).

The answer is a function of the checked files' paths and contents, so it is
kept in the fact cache under a digest of both (every checked path with its
content hash) with the question: a fix run over an unchanged tree asks no file
again, and any edit, copy, rename or deletion changes the digest. Where it is
not kept, the tree is searched: every file's bytes joined once (NUL apart),
the longest word of the patterns found in them (a C-speed scan, not a Python
loop over the files), and the regexes run only on the files that hold it.
"""

from __future__ import annotations

import bisect
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

    `paths` are the checked files, `data` reads one (b"" for a file that cannot
    be read; texts are decoded as UTF-8 with replacement characters); `cache`,
    when given, keeps the answers for `tree` (tree_digest).
    """

    def __init__(
        self,
        paths: list[str],
        data: Callable[[str], bytes],
        *,
        tree: str = "",
        cache: FactCache | None = None,
    ) -> None:
        self.paths = paths
        self.data = data
        self.tree = tree
        self.cache = cache if tree else None
        self.memo: dict[tuple[str, str], bool] = {}
        self.new: dict[str, bytes] = {}  # answers worked out here, to keep
        self.searches = 0  # searches of the tree run (the tests read it)
        self._joined = b""
        self._starts: list[int] = []  # where each file's bytes begin in _joined
        self._texts: dict[int, str] = {}

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

    def prepare(self) -> None:
        """Read every file's bytes, once (before a fork, so the workers share them)."""
        if self._starts or not self.paths:
            return
        parts: list[bytes] = []
        at = 0
        for rel in self.paths:
            data = self.data(rel)
            self._starts.append(at)
            parts.append(data)
            at += len(data) + 1
        self._joined = b"\0".join(parts)

    def _text(self, i: int) -> str:
        if i not in self._texts:
            starts = self._starts
            end = starts[i + 1] - 1 if i + 1 < len(starts) else len(self._joined)
            self._texts[i] = self._joined[starts[i] : end].decode("utf-8", "replace")
        return self._texts[i]

    def _search(self, patterns: list[str], path: str) -> bool:
        self.prepare()
        self.searches += 1
        compiled = [re.compile(p) for p in patterns]
        words = [_required_word(p) for p in patterns]

        def holds(i: int) -> bool:
            if self.paths[i] == path:
                return False
            text = self._text(i)
            return all(w in text for w in words) and all(c.search(text) for c in compiled)

        longest = max(words, key=len)
        if not longest.isascii():  # a byte match may then differ from a text match
            return any(holds(i) for i in range(len(self.paths)))
        # an ASCII word is in a file's text exactly when it is in its bytes (a
        # replacement character stands only for bytes that are not ASCII)
        needle, joined, starts, at = longest.encode(), self._joined, self._starts, 0
        while True:
            hit = joined.find(needle, at)
            if hit < 0:
                return False
            i = bisect.bisect_right(starts, hit) - 1
            if holds(i):
                return True
            at = starts[i + 1] if i + 1 < len(starts) else len(joined)


def _required_word(pattern: str) -> str:
    """The longest word every match of `pattern` holds: inline flags, negative
    lookarounds (which hold nothing in a match) and escapes (`\\b`, `\\t`) are
    no words of it."""
    literal = re.sub(r"\(\?[aiLmsux]+\)", "", pattern)
    literal = re.sub(r"\(\?<?!(?:[^()\\]|\\.)*\)", "", literal)
    literal = re.sub(r"\\.", " ", literal)
    return max(re.findall(r"\w+", literal), key=len)
