"""The byte-level prefilter: which files hold any token a rule needs (Rule.tokens)."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable

from ctxlint.cache.entries import prefilter_entry
from ctxlint.cache.store import FactCache
from ctxlint.discover.sources import Sources

MODULE_TOKEN = "module:"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _trie(words: list[bytes]) -> bytes:
    """One regex for any of `words`, shared prefixes factored out (`get_(?:exec|model)`):
    a flat alternation is tried word by word at every position of the text,
    which on the hundreds of names a later round adds cost seconds per tree."""
    root: dict[int | None, dict] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[None] = {}

    def build(node: dict[int | None, dict]) -> bytes:
        branches = [
            re.escape(bytes([ch])) + build(node[ch])
            for ch in sorted(k for k in node if k is not None)
        ]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return build(root)


@functools.lru_cache(maxsize=8)
def _word_pattern(words: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """The whole-word pattern of `words`, kept: a resident front end's every
    edit scans its file for the same tokens (the trie of sglang's thousands of
    names costs about a second to build)."""
    return re.compile(rb"\b(?:" + _trie(list(words)) + rb")\b")


def token_matcher(tokens: set[str] | frozenset[str]) -> Callable[[bytes], bool]:
    """A test for "these bytes hold one of the tokens": identifiers as whole
    words through one pattern (one pass, whatever the number of names: a
    substring scan per name costs minutes on a large tree), others as substrings."""
    return _matcher(frozenset(tokens))


@functools.lru_cache(maxsize=8)
def _matcher(tokens: frozenset[str]) -> Callable[[bytes], bool]:
    """token_matcher's, kept: a resident front end's every edit asks it for the
    same tokens (sorting sglang's thousands took a few ms an edit)."""
    words = tuple(sorted(t.encode() for t in tokens if _IDENTIFIER.fullmatch(t)))
    others = [t.encode() for t in sorted(tokens) if not _IDENTIFIER.fullmatch(t)]
    pattern = _word_pattern(words) if words else None

    def match(source: bytes) -> bool:
        # the words first: a file that holds one mostly names it early, where a
        # scan for each other token reads the whole file (11 ms an edit of
        # sglang's 282 KB scheduler.py)
        if pattern is not None and pattern.search(source) is not None:
            return True
        return any(o in source for o in others)

    return match


def prefilter(
    cache: FactCache,
    paths: list[str],
    sources: Sources,
    module_of: dict[str, str],
    tokens: set[str],
) -> set[str]:
    """Paths that hold any token (see Rule.tokens). Byte decisions are
    cached per content hash and token set, so a warm run scans nothing; a
    module token names a file, not bytes, so it is decided by path."""
    modules = {t[len(MODULE_TOKEN) :] for t in tokens if t.startswith(MODULE_TOKEN)}
    matcher: Callable[[bytes], bool] | None = None  # compiled only if some file is not cached
    tag = hashlib.blake2b("\0".join(sorted(tokens)).encode(), digest_size=8).hexdigest()
    keys = {p: f"pf:{sources.hashes[p]}:{tag}" for p in paths}
    cached = cache.get_many(keys.values())
    matched: set[str] = set()
    fresh: dict[str, bytes] = {}
    for p in paths:
        hit = prefilter_entry(cached.get(keys[p]))
        if hit is None:
            if matcher is None:
                matcher = token_matcher({t for t in tokens if not t.startswith(MODULE_TOKEN)})
            hit = matcher(sources[p])
            fresh[keys[p]] = b"1" if hit else b"0"
        if hit or module_of[p] in modules:
            matched.add(p)
    cache.put_many(fresh)
    return matched
