"""The checked files' content hashes, and their bytes read only when needed.

A warm run needs every file's content hash (the stored outcome is keyed by
them) but none of the bytes. So each hash is kept with the file's stat
signature (mtime, ctime, size, inode), and a file whose signature has not
changed is not read again. A signature is recorded only when the file last
changed at least `RACY_NS` before the run: a write in the same timestamp tick
as the recording would otherwise look unchanged (git's "racily clean" rule).
Outputs do not depend on any of this: the hashes are the same either way.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ctxlint.cache.entries import signatures_entry
from ctxlint.cache.store import FactCache
from ctxlint.core.errors import CtxlintError
from ctxlint.core.findings import FileError
from ctxlint.discover.watched import Cursor, watch_of

RACY_NS = 2_000_000_000
# The layout of the signature entry (cache_entries.signatures_entry): in its key,
# so another version's entry is never read as this one's.
STAT_LAYOUT = 2


LINKED_OUT = "not read: a symbolic link out of the project"


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _cannot_read(rel: str, exc: OSError, path: str | None = None) -> FileError:
    if path is not None and isinstance(exc, FileNotFoundError) and os.path.islink(path):
        return FileError(rel, "cannot read: a symbolic link to nothing")
    return FileError(rel, f"cannot read: {exc.strerror or exc}")


class Signatures:
    """The signatures a resident front end's last run recorded, in memory: its
    next run compares with them instead of reading and decoding the cache's
    entry again (and writes the entry only when they changed)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.recorded: dict[str, list[Any]] = {}
        # the tree's watch (discover.watched), when a resident front end keeps
        # one: a run stats only the paths it names since the last run
        self.cursor: Cursor | None = None
        # the symbolic links: what one points at may change with no event
        self.unwatched: set[str] = set()
        self.stats = 0  # the files the last run stat'd


class _Watched(NamedTuple):
    """A watch's changes since the last run, and the files it covers."""

    paths: frozenset[str]
    folders: frozenset[str]
    touches: Callable[[str], bool]
    watched: set[str]  # Watch.watched_files


def _taken(kept: Signatures, base: str) -> _Watched | None:
    """What the tree's watch saw since `kept`'s last run (its cursor made or
    replaced for the watch of now); None: no watch, or it cannot say."""
    watch = watch_of(base)
    if watch is None or kept.cursor is None or kept.cursor.watch is not watch:
        kept.cursor = watch.cursor() if watch is not None else None
    if kept.cursor is None:
        return None
    changes = kept.cursor.take()  # (before any stat: what changes after is an event)
    if changes is None:
        return None
    files = kept.cursor.watch.watched_files
    return _Watched(changes.paths, changes.folders, changes.touches, files)


class Sources(Mapping[str, bytes]):
    """Path (relative to the root) -> bytes, for every readable file; `hashes`
    holds each one's content hash, `errors` the files that cannot be read."""

    def __init__(
        self, root: Path, paths: list[str], cache: FactCache, kept: Signatures | None = None
    ) -> None:
        self.root = root
        self.hashes: dict[str, str] = {}
        self.errors: list[FileError] = []
        self._bytes: dict[str, bytes] = {}
        key = f"stat:{STAT_LAYOUT}:{root}"
        base = str(root)
        changes = _taken(kept, base) if kept is not None else None
        if kept is not None and kept.key == key:
            known = kept.recorded
        else:
            known = signatures_entry(cache.get_many([key]).get(key))
            changes = None  # (the signatures the watch's events follow are the kept ones)
        settled = time.time_ns() - RACY_NS
        recorded: dict[str, list[Any]] = {}
        inside = os.path.realpath(base) + os.sep
        prefix = os.path.join(base, "")
        unwatched = kept.unwatched if kept is not None else set()
        # A path's kept signature (and hash) holds without a stat when it was
        # recorded by the last run, every change of it is an event (its inode
        # watched, in a folder watched: Watch.watched_files), none came since
        # (nor on a folder above it), and it is no symbolic link.
        watched, changed = (changes.watched, changes.paths) if changes else (set(), set())
        touches = changes.touches if changes and changes.folders else None
        hashes = self.hashes
        stats = 0
        for rel in paths:
            old = known.get(rel)
            if (
                old is not None
                and rel in watched
                and rel not in changed
                and rel not in unwatched
                and (touches is None or not touches(rel))
            ):
                hashes[rel] = old[4]  # the same file since its signature was taken
                recorded[rel] = old
                continue
            stats += 1
            full = prefix + rel  # (os.path.join: rel is relative)
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    if not os.path.realpath(full).startswith(inside):
                        # never read: its lines would reach the report (a CI log)
                        self.errors.append(FileError(rel, LINKED_OUT))
                        continue
                    st = os.stat(full)
                    unwatched.add(rel)
                else:
                    unwatched.discard(rel)
            except OSError as exc:
                self.errors.append(_cannot_read(rel, exc, full))
                continue
            signature: list[int | str] = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]
            old = known.get(rel)
            if old is not None and old[:4] == signature:
                digest = str(old[4])
            else:
                try:
                    data = (root / rel).read_bytes()
                except OSError as exc:
                    self.errors.append(_cannot_read(rel, exc))
                    continue
                self._bytes[rel] = data
                digest = content_hash(data)
            self.hashes[rel] = digest
            if max(st.st_mtime_ns, st.st_ctime_ns) < settled:
                recorded[rel] = [*signature, digest]
        if recorded != known:
            cache.put_many({key: json.dumps(recorded, sort_keys=True).encode()})
        if kept is not None:
            kept.key, kept.recorded, kept.stats = key, recorded, stats
            if kept.cursor is not None:
                kept.cursor.done()

    def edit(self, rel: str, text: str) -> None:
        """`rel` as an edit holds it (a fix's rewrite, an editor's buffer), in place
        of the disk's bytes: its hash is that text's, so its facts are too."""
        data = text.encode("utf-8")
        self._bytes[rel] = data
        self.hashes[rel] = content_hash(data)

    def __getitem__(self, rel: str) -> bytes:
        data = self._bytes.get(rel)
        if data is None:
            if rel not in self.hashes:
                raise KeyError(rel)
            try:
                data = (self.root / rel).read_bytes()
            except OSError as exc:
                raise CtxlintError(f"{rel}: {_cannot_read(rel, exc).message}") from None
            if content_hash(data) != self.hashes[rel]:
                raise CtxlintError(f"{rel} changed while ctxlint was running; run it again")
            self._bytes[rel] = data
        return data

    def __contains__(self, rel: object) -> bool:
        return rel in self.hashes

    def __iter__(self) -> Iterator[str]:
        return iter(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)
