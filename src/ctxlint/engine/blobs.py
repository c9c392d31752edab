"""The round files' facts entries, read from the cache only when something needs them.

A round's memo keys are made of each file's facts digest, not of the facts:
when a file's entry is found, the cache also holds its digest (a `fd:` entry
under the same key, written in the same run as the entry), so a round or a
derivation that is replayed reads 16 bytes per file instead of decompressing
every entry (on sglang 0.5.23, 1,876 entries: most of a one-file edit's time).
An entry is read when the program decodes it or a rule's parts digest misses;
one whose bytes do not match the digest raises ValueError, and the engine
runs again without reading the cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping

from ctxlint.cache.entries import DIGEST_LENGTH
from ctxlint.cache.store import FactCache

DIGEST_PREFIX = "fd:"  # + the fact key: the digest of that entry's bytes

# (path, module) pairs -> path -> entry: extracted (read=False: without reading the cache)
Extract = Callable[..., dict[str, bytes]]


def digest_of(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=16).digest()


def digest_entry(raw: bytes | None) -> bytes | None:
    """A stored digest, or None for a missing or malformed one."""
    if raw is None or len(raw) != DIGEST_LENGTH:
        return None
    try:
        return bytes.fromhex(raw.decode("ascii"))
    except ValueError:
        return None


class Blobs(Mapping[str, bytes]):
    """Path -> facts entry (bytes) and its digest, some left in the cache until asked for."""

    def __init__(
        self, cache: FactCache, extract_again: Extract, learnt: dict[str, bytes] | None = None
    ) -> None:
        self.digests: dict[str, bytes] = {}
        # fact key -> the digest of its entry as this run has it (a resident's
        # runs: gather's `known` at the next run), kept up to date by `replace`
        self.learnt = learnt
        self._blobs: dict[str, bytes] = {}
        self._deferred: dict[str, tuple[str, str]] = {}  # path -> (module, fact key)
        self._keys: dict[str, str] = {}  # path -> its fact key
        self._cache = cache
        self._extract_again = extract_again  # an entry gone from the cache since

    def __contains__(self, path: object) -> bool:
        return path in self.digests

    def __iter__(self) -> Iterator[str]:
        return iter(self.digests)

    def __len__(self) -> int:
        return len(self.digests)

    def in_hand(self, path: str) -> bool:
        """Whether the entry is read (not deferred)."""
        return path in self._blobs

    def __getitem__(self, path: str) -> bytes:
        if path in self._deferred:
            self.load([path])
        return self._blobs[path]

    def put(self, path: str, blob: bytes, key: str) -> bytes:
        """An entry in hand (extracted now, or read): stored with its digest, returned."""
        self._deferred.pop(path, None)
        self._blobs[path], self._keys[path] = blob, key
        self.digests[path] = digest = digest_of(blob)
        return digest

    def replace(self, path: str, blob: bytes) -> None:
        """An entry extracted again (the cached one was not of our shape): its
        new digest replaces the stored one, as the entry itself was replaced."""
        key = self._keys[path]
        digest = self.put(path, blob, key)
        self._cache.put_many({DIGEST_PREFIX + key: digest.hex().encode()})
        if self.learnt is not None and key in self.learnt:
            self.learnt[key] = digest

    def release(self, path: str, module: str) -> None:
        """Let an entry in hand go once the program holds its facts (a cold run
        held every entry's bytes to its end: 64 MB on sglang 0.5.23); it is read
        again from the cache if asked for. Kept when the cache cannot give it
        back (--no-cache, a read-only tree): it would be extracted again."""
        if path in self._blobs and self._cache.reads_back:
            del self._blobs[path]
            self._deferred[path] = (module, self._keys[path])

    def defer(self, path: str, module: str, key: str, digest: bytes) -> None:
        """An entry the cache holds, known by its digest until read."""
        self._deferred[path], self._keys[path] = (module, key), key
        self.digests[path] = digest

    def load(self, paths: Iterable[str] | None = None, *, extract: bool = True) -> None:
        """Read the deferred entries among `paths` (None: all), in one batch;
        one gone from the cache is extracted again, unless `extract` is False
        (it stays deferred)."""
        wanted = self._deferred if paths is None else {p: None for p in paths}
        todo = {p: self._deferred[p] for p in list(wanted) if p in self._deferred}
        if not todo:
            return
        found = self._cache.get_many([key for _, key in todo.values()])
        got = {p: found[key] for p, (_, key) in todo.items() if key in found}
        if extract:
            got |= self._extract_again([(p, m) for p, (m, _) in todo.items() if p not in got])
        for path, blob in got.items():
            if digest_of(blob) != self.digests[path]:
                raise ValueError(f"the cached digest of {path}'s facts does not match them")
            self._blobs[path] = blob
            del self._deferred[path]


def gather(
    cache: FactCache,
    items: list[tuple[str, str, str]],
    blobs: Blobs,
    extract: Extract,
    unstored: set[str],
    known: Mapping[str, bytes] | None = None,
) -> None:
    """(path, module, fact key) items into `blobs`: deferred when the cache holds
    the entry's digest; otherwise read or extracted (`extract`), and the digest
    stored beside an entry that was stored (not one in `unstored`: a dead worker's).

    `known`: a resident's last run's digests by fact key (`Blobs.learnt`), not
    asked of the cache again: a fact key names its entry's content (the file's
    bytes, the code, the vocabulary), so the digest stored under it is the same
    while the cache keeps it; an entry gone from the cache since is extracted
    again when read (`Blobs.load`), and one whose bytes differ from the digest
    makes the engine run again without the cache, and without `known`."""
    known = known or {}
    stored = cache.get_many([DIGEST_PREFIX + key for _, _, key in items if key not in known])
    rest, keys = [], {}
    learnt = blobs.learnt
    for path, module, key in items:
        digest = known.get(key) or digest_entry(stored.get(DIGEST_PREFIX + key))
        if digest is None:
            rest.append((path, module))
            keys[path] = key
        else:
            blobs.defer(path, module, key, digest)
            if learnt is not None:
                learnt[key] = digest
    fresh: dict[str, bytes] = {}
    for path, blob in extract(rest).items():
        digest = blobs.put(path, blob, keys[path])
        if path not in unstored:
            fresh[DIGEST_PREFIX + keys[path]] = digest.hex().encode()
            if learnt is not None:
                learnt[keys[path]] = digest
    cache.put_many(fresh)
