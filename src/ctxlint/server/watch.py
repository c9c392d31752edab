"""The server's and the daemon's own watch of their tree: Linux inotify.

Every folder discovery walks (not SKIP_DIRS, not *.egg-info, no symbolic link
followed) is watched, each before it is listed, so that a file made in it
after the listing is an event. The queue is read, never waited on, at the
start of each check's reading of the tree (discover.watched.Cursor.take): the
kernel queues an event in the system call that made the change, so a write
that finished before the check is in it. A folder made (or moved in) is
watched, with every folder in it, when its event is read, before any reader
lists it. What the watch cannot follow exactly makes every reader look at
everything for that check, and the watch starts again (its folders watched
anew): an overflowed queue, a folder moved away or within the tree, the
root moved, a mount made or undone (the mount table's change). A watch that cannot start (not Linux, no inotify_simple, the
kernel's limit of watches or instances, a file system whose changes may come
from elsewhere: NFS, FUSE and the like) is no watch: every check stats all.

Not seen by inotify, as by any watch: a change written through a shared
memory mapping of the file (mmap) without a write call.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxlint.discover.files import SKIP_DIRS
from ctxlint.discover.watched import WATCHES, Watch

# File systems whose every change is made through this kernel (their events
# are exact); elsewhere (nfs, cifs, fuse, 9p, ...) another machine may write.
LOCAL = frozenset(
    "ext2 ext3 ext4 xfs btrfs tmpfs overlay f2fs zfs bcachefs jfs reiserfs ramfs nilfs2".split()
)


def _flags() -> Any:
    try:
        import inotify_simple
    except ImportError:
        return None
    return inotify_simple


def skipped(name: str) -> bool:
    """A folder discovery never walks into."""
    return name in SKIP_DIRS or name.endswith(".egg-info")


def mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of every mount this process sees."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split()
            if "-" not in fields:
                continue
            point = fields[4].encode("latin-1", "surrogateescape").decode("unicode_escape")
            found.append((point, fields[fields.index("-") + 1]))
    return found


def local_tree(root: str) -> bool:
    """Whether the file system holding `root`, and every one mounted inside
    it, is local (its changes come with events)."""
    try:
        points = mounts()
    except (OSError, ValueError, UnicodeError):
        return False
    holding = max(
        (p for p in points if root == p[0] or root.startswith(p[0].rstrip("/") + "/")),
        key=lambda p: len(p[0]),
        default=None,
    )
    if holding is None or holding[1] not in LOCAL:
        return False
    inside = [t for point, t in points if point.startswith(root.rstrip("/") + "/")]
    return all(t in LOCAL for t in inside)


class _MountWatch:
    """The mount table's changes: the kernel marks /proc/self/mountinfo
    (POLLPRI) when a mount is made or undone anywhere this process sees, and
    no inotify event says that a folder now shows another file system."""

    def __init__(self) -> None:
        self._file = open("/proc/self/mountinfo", "rb")  # (held open: polled)
        self._file.read()
        self._poll = select.poll()
        self._poll.register(self._file, select.POLLPRI | select.POLLERR)

    def changed(self) -> bool:
        return bool(self._poll.poll(0))

    def close(self) -> None:
        self._file.close()


class TreeWatch(Watch):
    """inotify on every walked folder of `root` (see the module's docstring)."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.users = 0
        self._lock = threading.RLock()
        self._lib = _flags()
        self._fd: Any = None
        self._folders: dict[int, str] = {}  # watch descriptor -> its folder (relative)
        self._files: dict[int, set[str]] = {}  # a Python file's watch -> its names (relative)
        self._file_wd: dict[str, int] = {}  # a Python file's name -> its watch now
        self._new: set[str] = set()  # Python files named in this drain: watched at its end
        self._mounts: Any = None  # /proc/self/mountinfo, polled: a mount made or undone
        if self._lib is None or not sys.platform.startswith("linux"):
            self.ok = False
            return
        self._start()

    # -- the kernel's side ----------------------------------------------------------
    def _start(self) -> None:
        """A new inotify instance with every folder watched; not ok when that fails."""
        self._close()
        self.watched.clear()
        self.watched_files.clear()
        self._folders.clear()
        self._files.clear()
        self._file_wd.clear()
        self._new.clear()
        try:
            # (first: a mount made while the folders are watched is seen)
            self._mounts = _MountWatch()
            if not local_tree(self.root):
                raise OSError("not a local file system")
            self._fd = self._lib.INotify(nonblocking=True)
            self._add_tree("")
        except OSError:
            self._close()
            self.ok = False
            return
        self.ok = True

    def _close(self) -> None:
        for held in (self._fd, self._mounts):
            if held is not None:
                with contextlib.suppress(OSError):
                    held.close()
        self._fd = self._mounts = None

    def _mask(self, folder: str) -> int:
        f = self._lib.flags
        return int(
            f.MODIFY
            | f.ATTRIB
            | f.CLOSE_WRITE
            | f.MOVED_FROM
            | f.MOVED_TO
            | f.CREATE
            | f.DELETE
            | f.DELETE_SELF
            | f.MOVE_SELF
            | f.ONLYDIR
            | (f.DONT_FOLLOW if folder else 0)  # (the root is resolved: followed)
        )

    def _file_mask(self) -> int:
        f = self._lib.flags
        return int(
            f.MODIFY | f.ATTRIB | f.CLOSE_WRITE | f.MOVE_SELF | f.DELETE_SELF | f.DONT_FOLLOW
        )

    def _watch_file(self, rel: str) -> None:
        """Watch a Python file's inode: its writes through any name (a hard
        link out of the tree) and a new name (link count: IN_ATTRIB) are its
        events, not only those through its folder. Gone or not readable: left
        unwatched (stat'd by every reader)."""
        try:
            wd = self._fd.add_watch(os.path.join(self.root, rel), self._file_mask())
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP):
                return
            raise
        self._files.setdefault(wd, set()).add(rel)
        self._file_wd[rel] = wd
        self.watched_files.add(rel)

    def _add_tree(self, rel: str) -> None:
        """Watch `rel` and every folder under it, each before it is listed, and
        each Python file in them. A folder gone meanwhile or not readable is
        left unwatched (its files are then stat'd by every reader); the
        kernel's limit raises OSError."""
        pending = [rel]
        while pending:
            folder = pending.pop()
            full = os.path.join(self.root, folder) if folder else self.root
            try:
                wd = self._fd.add_watch(full, self._mask(folder))
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP):
                    continue
                raise
            self._folders[wd] = folder
            self.watched.add(folder)
            try:
                with os.scandir(full) as entries:
                    for entry in entries:
                        name = f"{folder}/{entry.name}" if folder else entry.name
                        if entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                            self._watch_file(name)
                        elif not skipped(entry.name) and entry.is_dir(follow_symlinks=False):
                            pending.append(name)
            except OSError:
                continue

    def drain(self) -> None:
        with self._lock:  # (checks run one at a time; a second reader would wait here)
            self._drain()

    def _drain(self) -> None:
        if not self.ok:
            return
        if self._mounts.changed():  # a folder of the tree may show another file system
            self._restart()
            return
        f = self._lib.flags
        named = f.CREATE | f.DELETE | f.MOVED_FROM | f.MOVED_TO
        while True:
            try:
                events = self._fd.read(timeout=0)
            except OSError:
                self._restart()
                return
            if not events:
                break
            for event in events:
                if not self._one(event, f, named):
                    self._restart()
                    return
        new, self._new = self._new, set()
        try:
            for rel in new:  # (after the batch: a rename's own events are all in it)
                self._watch_file(rel)
        except OSError:
            self._restart()

    def _one(self, event: Any, f: Any, named: int) -> bool:
        """Note one event; False when the watch must start again."""
        mask = event.mask
        if mask & f.Q_OVERFLOW:
            return False
        names = self._files.get(event.wd)
        if names is not None:  # a Python file's own watch
            if mask & (f.IGNORED | f.MOVE_SELF | f.DELETE_SELF):
                # gone, or its names changed: its names unwatched (those a newer
                # watch holds now excepted: a late event of a file replaced)
                del self._files[event.wd]
                for rel in names:
                    if self._file_wd.get(rel) == event.wd:
                        del self._file_wd[rel]
                        self.watched_files.discard(rel)
                if not mask & f.IGNORED:
                    with contextlib.suppress(OSError):
                        self._fd.rm_watch(event.wd)
                    self._new.update(names)  # what holds each name now, at the drain's end
            for rel in names:
                self.note(rel, named=False, folder=False)
            return True
        folder = self._folders.get(event.wd)
        if mask & f.IGNORED:  # the folder was deleted (or unmounted): its watch is gone
            if folder is not None:
                del self._folders[event.wd]
                self.watched.discard(folder)
                # (its files' names are not watched now: Watch.watched_files)
                under = folder + "/" if folder else ""
                gone = [r for r in self.watched_files if r.startswith(under)]
                self.watched_files.difference_update(gone)
                self.note(folder, named=True, folder=True)
            return True
        if folder is None:  # (an event of a watch removed since)
            return True
        if mask & f.MOVE_SELF:  # a watched folder moved: its watches name old paths
            return False
        if mask & f.DELETE_SELF:
            self.note(folder, named=True, folder=True)
            return True
        rel = f"{folder}/{event.name}" if folder and event.name else (event.name or folder)
        is_dir = bool(mask & f.ISDIR)
        if is_dir and mask & f.MOVED_FROM:  # a folder moved away or renamed
            return False
        if is_dir and mask & (f.CREATE | f.MOVED_TO) and not skipped(event.name):
            try:
                self._add_tree(rel)  # watched before any reader lists it
            except OSError:
                return False
        if not is_dir and mask & (f.CREATE | f.MOVED_TO) and event.name.endswith(".py"):
            self._new.add(rel)
        # a folder's own change (its mode: whether its files can be read) counts
        # as its name's: its readers look at all of it again
        self.note(rel, named=bool(mask & named) or is_dir, folder=is_dir)
        return True

    def _restart(self) -> None:
        self.lost()
        self._start()

    def close(self) -> None:
        self._close()
        self.ok = False
        self.lost()


def start(root: Path | str) -> TreeWatch:
    """The watch of `root` (one per root in a process, shared by its users):
    registered for discovery until as many `stop`s as starts."""
    key = str(root)
    found = WATCHES.get(key)
    if not isinstance(found, TreeWatch):
        found = WATCHES[key] = TreeWatch(key)
    found.users += 1
    return found


def stop(root: Path | str) -> None:
    key = str(root)
    found = WATCHES.get(key)
    if isinstance(found, TreeWatch):
        found.users -= 1
        if found.users <= 0:
            del WATCHES[key]
            found.close()


@contextlib.contextmanager
def watching(root: Path | str) -> Iterator[TreeWatch]:
    """The watch of `root`, while the block runs."""
    found = start(root)
    try:
        yield found
    finally:
        stop(root)
