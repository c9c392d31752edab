"""A resident front end's fact cache: what its runs put is written when it is idle.

A language server or the daemon answers an edit with one run; that run puts
the edited file's facts, digests and prefilter decisions (and, for the daemon,
its outcomes) into the cache: compressed, signed and committed while the
editor waits for the answer (about 5% of a statement edit on sglang 0.5.23).
Here they are held in memory instead, served from there to the next runs,
and written after the answer: once the front end has been idle for `DELAY_S`
(a run since puts it off), at once when they grow past `HELD_BYTES`, on
`flush`, and always before the process exits or the cache is dropped (its
finalizer). A batch `ctxlint check` never uses one: it writes as it runs.

The connection a run reads through is kept open from run to run (a batch run
opens and closes one, its close a checkpoint of the write-ahead log); the
writes go through a connection of their own, opened for each flush, so that
a run reading meanwhile never waits on one (sqlite's WAL: a reader never
blocks a writer, nor a writer a reader).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from pathlib import Path

from ctxlint.cache.store import FactCache

DELAY_S = 1.0  # idle seconds after a run before its writes are (the servers' QUIET)
# held past this: written at once, idle or not (a server answering edits back
# to back is never idle; what it holds counts in its resident memory, whose
# growth over 200 edits issue 37 bounds at 5%, about 40 MiB on sglang 0.5.23)
HELD_BYTES = 8 << 20


class _Held:
    """The entries held for writing, apart from the cache object (its
    finalizer holds this, not the cache: the cache can then be dropped)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.entries: dict[str, bytes] = {}
        self.size = 0
        self.lock = threading.Lock()  # `entries`
        self.writing = threading.Lock()  # one flush at a time
        self.flushes = 0  # flushes that wrote something (tests)

    def flush(self) -> int:
        """Write what is held (through a connection of its own); the entries
        written. An entry put again meanwhile stays held (written next time)."""
        with self.writing:
            with self.lock:
                todo = dict(self.entries)
            if not todo:
                return 0
            out = FactCache(self.folder)
            try:
                out.put_many(todo)
            finally:
                out.close()
            with self.lock:
                for key, value in todo.items():
                    if self.entries.get(key) is value:
                        del self.entries[key]
                        self.size -= len(value)
            self.flushes += 1
            return len(todo)


class PendingCache(FactCache):
    """A FactCache whose writes are held until `flush` (see the module's doc)."""

    def __init__(self, folder: Path | None, *, delay: float | None = None) -> None:
        super().__init__(folder)
        self.folder = folder
        self.delay = DELAY_S if delay is None else delay
        self._held = _Held(folder) if folder is not None and self.db is not None else None
        self._timer: threading.Timer | None = None
        self._runs = [0]  # runs begun: a timer set before the last one does not write
        self._finalizer = (
            weakref.finalize(self, self._held.flush) if self._held is not None else None
        )

    @property
    def held(self) -> dict[str, bytes]:
        """The entries put and not written yet."""
        return dict(self._held.entries) if self._held is not None else {}

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        held = self._held
        if held is None or not self.reads_back or not held.entries:
            return super().get_many(keys)
        keys = list(keys)
        with held.lock:
            found = {k: held.entries[k] for k in keys if k in held.entries}
        self.served += len(found)
        rest = [k for k in keys if k not in found]
        if rest:
            found.update(super().get_many(rest))
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        held = self._held
        if held is None or not items:
            return super().put_many(items)  # (no cache to write: nothing)
        with held.lock:
            for key, value in items.items():
                old = held.entries.get(key)
                held.size += len(value) - (len(old) if old is not None else 0)
                held.entries[key] = value

    def close(self) -> None:
        """Kept open for the resident's next run (`finish` closes it)."""

    # -- when the writes happen ------------------------------------------------
    def begin(self) -> None:
        """A run begins: an idle write not started yet waits for its end."""
        self._runs[0] += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def idle(self) -> None:
        """A run ended: what it put is written once the front end has been idle
        for `delay` seconds (at once when too much is held), on a thread."""
        held = self._held
        if held is None or not held.entries:
            return
        counter, runs = self._runs, self._runs[0]

        def write() -> None:
            if counter[0] == runs:  # (else a run began since: its end sets another)
                held.flush()

        # (no reference to the cache from the thread's callable: a timer set
        # does not keep a dropped cache alive; its finalizer flushes it)
        self._timer = threading.Timer(0 if held.size > HELD_BYTES else self.delay, write)
        self._timer.daemon = True  # the finalizer writes at exit, not the thread
        self._timer.start()

    def flush(self) -> int:
        """Write what is held now; the entries written."""
        return self._held.flush() if self._held is not None else 0

    def discard(self) -> None:
        """Forget what is held, unwritten (a run that must not trust its cache)."""
        if self._held is not None:
            with self._held.lock:
                self._held.entries.clear()
                self._held.size = 0

    def finish(self) -> None:
        """Write what is held and close the connection."""
        if self._timer is not None:
            self._timer.cancel()
        if self._finalizer is not None:
            self._finalizer()  # (the flush, once: not again at exit)
        super().close()
