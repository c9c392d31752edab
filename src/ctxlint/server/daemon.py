"""The daemon: a project held resident for the command line (`ctxlint server
--daemon start|status|stop|run`, docs/daemon.md).

While it lives it holds an exclusive lock on `server.lock` in the project's
cache folder (the kernel lets go of it when the process dies, however it
dies), and listens on `server.sock` there, mode 0600. A socket found without
its lock held was left by a daemon that was killed: it is stale, and the next
daemon replaces it. Connections from another user are closed unanswered
(SO_PEERCRED). Requests are answered one at a time, in the order they come:
`check` by the `answer` callable it was given (the command line's check, run
in this process with the project resident), `status` and `stop` here. The
lock and the log are never opened through a symbolic link: a checked tree may
ship its cache folder (an unpacked archive), and `server.lock -> ~/.bashrc`
would have the daemon truncate that file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ctxlint.server import client

Answer = Callable[[dict[str, Any]], dict[str, Any]]


class AlreadyRunning(Exception):
    """Another daemon holds the project's lock."""


class Stopped(Exception):
    """SIGTERM or SIGINT: close the socket and exit."""


def open_own(path: Path, flags: int) -> int:
    """A descriptor of the daemon's file `path` in the cache folder (created
    0600), never through a symbolic link: ctxlint makes none there, so one came
    with the tree and may lead anywhere (OSError saying so)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, f"{path} is a symbolic link (ctxlint makes none there: remove it)"
            ) from None
        raise


_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND  # open(..., "a+")


def _open_lock(cache_dir: Path) -> IO[str]:
    return os.fdopen(open_own(cache_dir / client.LOCK, _LOCK_FLAGS), "a+", encoding="utf-8")


@contextlib.contextmanager
def held_lock(cache_dir: Path) -> Iterator[IO[str]]:
    """The project's daemon lock, held until the block ends (AlreadyRunning if
    another process holds it)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    lock = _open_lock(cache_dir)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyRunning(str(cache_dir / client.LOCK)) from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        yield lock
    finally:
        lock.close()  # lets go of the lock


def lock_is_held(cache_dir: Path) -> bool:
    """Whether a live process holds the project's daemon lock (OSError when
    the lock is a symbolic link: no daemon can run there until it is gone)."""
    try:
        with _open_lock(cache_dir) as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(lock, fcntl.LOCK_UN)
            return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise
        return False


def listening(path: Path) -> socket.socket:
    """A new socket at `path`, mode 0600 from its creation (whatever the umask),
    replacing a stale one (the caller holds the lock: no daemon uses it)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        with client.address(path) as name:
            server.bind(name)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    server.listen(16)
    return server


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class Daemon:
    """One project's daemon: `answer` answers each check; `root` and the
    socket's folder (the project's cache folder) say which project it is."""

    def __init__(self, cache_dir: Path, root: Path, answer: Answer) -> None:
        self.cache_dir = cache_dir
        self.root = root
        self.answer = answer
        self.started = time.time()
        self.checks = 0

    @property
    def path(self) -> Path:
        return client.socket_path(self.cache_dir)

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "socket": str(self.path),
            "up": round(time.time() - self.started, 1),
            "checks": self.checks,
        }

    def serve(self, ready: Callable[[], None] = lambda: None) -> None:
        """Listen until `stop`, SIGTERM or SIGINT; the caller holds the lock."""

        def stop(_signum: int, _frame: Any) -> None:
            raise Stopped

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, stop)
        # the check's pool workers die as a plain process does when terminated
        os.register_at_fork(after_in_child=_default_signals)
        server = listening(self.path)
        inode = os.stat(self.path).st_ino
        # as the language server collects when quiet (imported by the serving
        # process only: `--daemon status|stop` need none of it)
        from ctxlint.server.checking import collect_idle

        collected = self.checks  # the checks answered when the GC last collected
        ready()
        try:
            while True:
                if self.checks > collected and not select.select([server], [], [], QUIET)[0]:
                    collected = self.checks
                    collect_idle()  # quiet: the cycles the checks since left
                conn, _ = server.accept()
                with conn:
                    if not self._one(conn):
                        return
        except Stopped:
            return
        finally:
            server.close()
            with contextlib.suppress(OSError):  # only our own socket, not a successor's
                if os.stat(self.path).st_ino == inode:
                    os.unlink(self.path)

    def _check(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to a check; a fault answers "run it yourself" (the batch
        run then says what went wrong) and the daemon goes on."""
        try:
            answer = self.answer(request)
        except Exception:
            traceback.print_exc()
            sys.stderr.flush()
            return {"fallback": "the daemon failed on this request (see its log)"}
        self.checks += "code" in answer  # answered, not handed back
        return answer

    def _one(self, conn: socket.socket) -> bool:
        """Answer one connection; False when it asked the daemon to stop."""
        try:
            if peer_uid(conn) != os.getuid():
                return True  # another user's: closed unanswered
            request = client.receive(conn)
            if request is None:
                return True
            op = request.get("op")
            if op == "stop":
                client.send(conn, {"stopping": True, **self.status()})
                return False
            if op == "status":
                client.send(conn, self.status())
            elif op == "check":
                client.send(conn, self._check(request))
            else:
                client.send(conn, {"error": f"unknown request {op!r}"})
        except (OSError, ValueError) as exc:  # the client went away, or sent garbage
            print(f"ctxlint server: a request failed: {exc}", file=sys.stderr, flush=True)
        return True


# seconds with no request after a check before the cyclic GC collects: a
# check leaves its objects frozen (engine.run), so that no collection in the
# answer traverses the program it holds (0.8 s of a check after a disk edit
# on sglang 0.5.23, profiled); the cycles among them are collected here, when
# no one waits
QUIET = 1.0


def _default_signals() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)


def detach(log: Path) -> int:
    """Fork the daemon's process: 0 in the child (its own session, its output
    to `log`, no terminal), the child's pid in the parent."""
    out = open_own(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # here: its error is said
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid:
        os.close(out)
        return pid
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)
    return 0


def wait_ready(cache_dir: Path, pid: int, timeout: float) -> dict[str, Any] | None:
    """The status of the daemon just forked (`pid`), once it answers; None when
    it exited first or did not answer within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return None
        status = client.ask(cache_dir, {"op": "status"}, timeout=5)
        if status is not None and status.get("pid") == pid:
            return status
        time.sleep(0.05)
    return None


def gone(pid: int, timeout: float) -> bool:
    """Whether process `pid` has ended within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        if _zombie(pid):  # ended, not yet reaped by its parent
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[-1].split()[:1] == ["Z"]
