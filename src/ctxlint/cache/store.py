"""The fact cache: sqlite, keyed by content hash and everything facts depend on.

sqlite gives atomic commits (a crash mid-write loses at most that run's new
rows, never corrupts old ones) and safe concurrent runs (WAL, busy timeout).
A cache that cannot be opened or written is skipped, never fatal; one that
sqlite finds damaged (garbage, truncated, a corrupt page) is deleted and
rebuilt, saying so once, or every later run would stay cold without a word.
A row that does not decompress is a miss; what a row holds is checked by the
code that reads it (an unexpected entry is a miss there too).

Rows are signed with a key outside the tree (cache.signing): a row the run
cannot verify, such as one that came with the checked tree, is a miss. A cache
folder that git tracks is not used at all: a cache is never part of the tree.
Nor is one whose database (or its -wal, -shm, -journal) is a symbolic link:
sqlite would write through it, into any database the link names.
"""

from __future__ import annotations

import functools
import sqlite3
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path

from ctxlint.cache.signing import NoKey, load_key, sign, verified
from ctxlint.core.gitcmd import run_git

SCHEMA = "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, data BLOB NOT NULL)"
_CHUNK = 500
# sqlite's words for "this file is not (or no longer) a sound database"
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}
_DAMAGED_TEXT = ("malformed", "not a database")  # Python 3.10 has no sqlite_errorname


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


def is_damaged(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", None)
    if name is not None:
        return name in _DAMAGED
    return any(text in str(exc) for text in _DAMAGED_TEXT)


_WARNED: set[str] = set()  # one warning per cache folder and process (a run opens several)


def _warn_once(folder: object, message: str) -> None:
    """A cache that cannot be used makes every run cold: said once, on stderr."""
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        print(f"ctxlint: warning: {message}", file=sys.stderr)


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(
        exc
    ).__name__


_DB = "facts.sqlite"
_DB_FILES = (_DB, f"{_DB}-wal", f"{_DB}-shm", f"{_DB}-journal")  # what sqlite opens


def _unusable(folder: Path) -> str | None:
    """Why a cache folder must not be used: git tracks files in it, or its
    database is reached through a symbolic link (ctxlint makes none: one that
    came with the tree, an unpacked archive's, may lead to any file)."""
    if not folder.is_dir():
        return None  # a new folder holds nothing
    for name in _DB_FILES:
        if (folder / name).is_symlink():
            return f"holds {name} as a symbolic link (ctxlint makes none: remove it)"
    return _tracked(str(folder))


@functools.lru_cache(maxsize=8)  # a run opens its cache several times
def _tracked(folder: str) -> str | None:
    try:
        listed = run_git(folder, "ls-files", "-z", "--", ".")
    except OSError:
        return None  # no git: nothing tracks it
    if listed.returncode == 0 and listed.stdout.strip(b"\0"):
        return "is tracked by git (a cache is never part of the tree: git rm -r --cached it)"
    return None


class FactCache:
    def __init__(self, folder: Path | None, *, read: bool = True) -> None:
        self.db: sqlite3.Connection | None = None
        self.path: Path | None = None
        self.rebuilt = False
        self.read = read  # False: every read is a miss, writes replace what was there
        self.served = 0  # entries read back, so a run knows whether the cache was used
        self._key = b""
        if folder is None:
            return
        why_not = _unusable(folder)
        if why_not is not None:
            _warn_once(folder, f"the cache {folder} {why_not}; running without it")
            return
        try:
            self._key = load_key()
        except NoKey as exc:
            _warn_once(folder, f"{exc}; running without the cache")
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
            self.path = folder / _DB
            try:
                self.db = _connect(self.path)
            except sqlite3.DatabaseError as exc:
                if not is_damaged(exc):
                    raise
                self._rebuild(exc)
        except (OSError, sqlite3.Error) as exc:
            self.db = None  # read-only tree or a file sqlite cannot use: run uncached
            _warn_once(
                folder,
                f"the cache {folder} cannot be used ({_why(exc)}); running without it "
                "(--cache-dir DIR puts it in a folder that can be written)",
            )

    def _rebuild(self, exc: sqlite3.Error) -> bool:
        """Delete a damaged database and start an empty one (once per run)."""
        if self.db is not None:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            self.db = None
        if self.rebuilt or self.path is None:
            return False  # damaged again right after a rebuild: run uncached
        self.rebuilt = True
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self.db = _connect(self.path)
        except (OSError, sqlite3.Error):
            self.db = None
            return False
        print(f"ctxlint: the cache {self.path} was damaged ({exc}); rebuilt it", file=sys.stderr)
        return True

    @property
    def reads_back(self) -> bool:
        """Whether what is put can be got again (not: --no-cache, a tree sqlite
        cannot use, a run that must not read)."""
        return self.db is not None and self.read

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        if not self.reads_back:
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
                    signed = verified(self._key, key, data) if isinstance(data, bytes) else None
                    if signed is None:  # not this user's (shipped with the tree): a miss
                        continue
                    try:
                        found[key] = zlib.decompress(signed)
                    except zlib.error:  # a damaged row: a miss
                        continue
        except sqlite3.Error as exc:
            if is_damaged(exc):
                self._rebuild(exc)
        self.served += len(found)
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        if self.db is None or not items:
            return
        rows = [(k, sign(self._key, k, zlib.compress(v, 1))) for k, v in items.items()]
        for _ in range(2):  # a second time into a rebuilt database
            if self.db is None:
                return
            try:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("INSERT OR REPLACE INTO facts (key, data) VALUES (?, ?)", rows)
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as exc:
                try:
                    self.db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if not (is_damaged(exc) and self._rebuild(exc)):
                    where = self.path.parent if self.path else "?"
                    _warn_once(
                        where,
                        f"the cache {where} cannot be written ({_why(exc)}); "
                        "this run's results are not kept",
                    )
                    return

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
