"""The fact cache: sqlite, keyed by content hash and everything facts depend on.

sqlite gives atomic commits (a crash mid-write loses at most that run's new
rows, never corrupts old ones) and safe concurrent runs (WAL, busy timeout).
A cache that cannot be opened or written is skipped, never fatal.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path

SCHEMA = "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, data BLOB NOT NULL)"
_CHUNK = 500


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(SCHEMA)
    except sqlite3.Error:
        db.close()
        raise
    return db


class FactCache:
    def __init__(self, folder: Path | None) -> None:
        self.db: sqlite3.Connection | None = None
        self.path: Path | None = None
        if folder is None:
            return
        try:
            # The `*` .gitignore goes only into a folder ctxlint creates: in a
            # folder of the project it would hide new source files from git.
            try:
                folder.mkdir(parents=True)
            except FileExistsError:  # ours from an earlier run, or the project's own
                pass
            else:
                (folder / ".gitignore").write_text("# created by ctxlint\n*\n")
            self.path = folder / "facts.sqlite"
            try:
                self.db = _connect(self.path)
            except sqlite3.DatabaseError as exc:
                if getattr(exc, "sqlite_errorname", "") != "SQLITE_NOTADB":
                    raise
                # garbage where the cache belongs: start afresh, or every run stays cold
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                self.db = _connect(self.path)
        except (OSError, sqlite3.Error):
            self.db = None  # read-only tree or broken file: run uncached

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        if self.db is None:
            return {}
        keys = list(keys)
        found: dict[str, bytes] = {}
        try:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, data in self.db.execute(
                    f"SELECT key, data FROM facts WHERE key IN ({marks})", chunk
                ):
                    found[key] = zlib.decompress(data)
        except (sqlite3.Error, zlib.error):
            return found
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        if self.db is None or not items:
            return
        rows = [(k, zlib.compress(v, 1)) for k, v in items.items()]
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO facts (key, data) VALUES (?, ?)", rows)
            self.db.execute("COMMIT")
        except sqlite3.Error:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
