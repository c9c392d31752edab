"""A resident front end's exact watch of its tree, as discovery reads it.

The language server and the daemon check the same tree again and again; each
check used to stat every file (its content hash is kept by its stat signature,
discover.sources) and every folder (the walk's memo, discover.files), because
a file changed outside the editor is seen no other way. A watch (server.watch:
Linux inotify, started by the server or the daemon for its project root) is
told of every change by the kernel, which queues the event in the write, the
create, the rename or the unlink itself: a change that finished before a check
began is in the queue when the check reads it. So a check that first reads
every queued event (`Cursor.take`) may stat only the paths named by one.

Each reader of the watch (the listing's memo, the stat signatures) holds its
own `Cursor`: the paths with events since it last finished (`done`). A cursor
answers None, and its reader does today's full stat, whenever the watch may
have missed something: its first use (nothing read before the watch began),
an overflowed queue, a folder moved, a watch that failed (the kernel's limit),
or a reader that did not finish (its paths are kept for the next take). Paths
that can change with no event in a watched folder (a symbolic link's target, a
file with another name elsewhere) are its readers' to stat every time.

Nothing here reads the kernel: a watch (`Watch.drain`) does, and adds what it
read with `note` and `lost`. Without a watch (a batch run, another system) no
reader asks one, and every check stats everything as before.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple


class Changes(NamedTuple):
    """What a cursor's reader must look at again: `paths` (relative to the
    root) with any event since it last finished, of which `names` were made,
    deleted or moved (the listing changed) and `folders` are folders (every
    path under one is to look at again)."""

    paths: frozenset[str]
    names: frozenset[str]
    folders: frozenset[str]

    def touches(self, rel: str) -> bool:
        """Whether `rel` (a file) or a folder above it had an event."""
        if rel in self.paths:
            return True
        if self.folders:
            cut = rel.rfind("/")
            while cut > 0:
                if rel[:cut] in self.folders:
                    return True
                cut = rel.rfind("/", 0, cut)
            return "" in self.folders
        return False


class Watch:
    """One root's watch: the folders watched now (relative to the root, "" the
    root itself) and each cursor's pending paths. `drain` (a subclass's) reads
    the queued events into them; `ok` is False once the watch cannot be
    trusted at all (every cursor then answers None)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.ok = True
        self.watched: set[str] = set()
        # the files whose every change comes with an event: a Python file whose
        # inode is watched (its writes through any name: a hard link out of the
        # tree) in a folder watched (its name); a file not here is stat'd
        self.watched_files: set[str] = set()
        self.generation = 0  # one more each time events may have been missed
        self._cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()

    def drain(self) -> None:
        """Read every queued event (non-blocking) into the cursors."""

    def cursor(self) -> Cursor:
        found = Cursor(self)
        self._cursors.add(found)
        return found

    def covers(self, folder: str) -> bool:
        """Whether changes of names in `folder` (relative) come with events."""
        return self.ok and folder in self.watched

    def covers_file(self, rel: str) -> bool:
        """Whether every change of the file `rel` comes with an event."""
        return self.ok and rel in self.watched_files

    def note(self, rel: str, *, named: bool, folder: bool) -> None:
        """An event on `rel`: its name (`named`) or its content changed."""
        for c in self._cursors:
            c.pending.add(rel)
            if named:
                c.pending_names.add(rel)
            if folder:
                c.pending_folders.add(rel)

    def lost(self) -> None:
        """Events may have been missed: every cursor's next take is None."""
        self.generation += 1
        for c in self._cursors:
            c.synced = False
            c.clear()


class Cursor:
    """One reader's place in a watch's events (see the module's docstring)."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self.synced = False  # its reader finished a check since the watch last lost events
        self.generation = -1  # the watch's, at the reader's take
        self.pending: set[str] = set()
        self.pending_names: set[str] = set()
        self.pending_folders: set[str] = set()
        self._taken: tuple[set[str], set[str], set[str]] = (set(), set(), set())

    def clear(self) -> None:
        self.pending, self.pending_names, self.pending_folders = set(), set(), set()
        self._taken = (set(), set(), set())

    def take(self) -> Changes | None:
        """The paths to look at again since the reader last finished; None:
        look at everything (the watch cannot say)."""
        watch = self.watch
        watch.drain()
        synced = self.synced and self.generation == watch.generation and watch.ok
        self.generation = watch.generation
        if not synced:
            self.clear()
            return None
        # (a take whose reader did not finish: its paths again, with the new ones)
        paths, names, folders = self._taken
        paths |= self.pending
        names |= self.pending_names
        folders |= self.pending_folders
        self.pending, self.pending_names, self.pending_folders = set(), set(), set()
        return Changes(frozenset(paths), frozenset(names), frozenset(folders))

    def done(self) -> None:
        """The reader finished what its take asked: what it looked at is
        known, and, unless the watch lost events since, so is the rest."""
        self._taken = (set(), set(), set())
        self.synced = self.generation == self.watch.generation and self.watch.ok


# The watches a resident front end started in this process, by root (str(Path)).
WATCHES: dict[str, Watch] = {}


def watch_of(root: str) -> Watch | None:
    return WATCHES.get(root)
