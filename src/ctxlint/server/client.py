"""Talking to a project's daemon (`ctxlint server --daemon`) over its Unix socket.

The socket lives in the project's cache folder (`server.sock`), beside the lock
its daemon holds while it lives (`server.lock`). A message is a 4-byte
big-endian length and that many bytes of UTF-8 JSON; each connection carries
one request and its answer. Nothing here imports more than the standard
library: `ctxlint check` asks before it does any work of its own.

A socket is used only when it is this user's and no one else may open it
(mode 0600): a socket another user made could answer anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SOCKET = "server.sock"
LOCK = "server.lock"
LOG = "server.log"
# sun_path holds 108 bytes on Linux; a longer path is reached through its folder
_SUN_PATH = 100
_HEADER = struct.Struct(">I")
_MAX_MESSAGE = 1 << 30


class NotOurs(Exception):
    """The socket is there but must not be used (another user's, or open to others)."""


def socket_path(cache_dir: Path) -> Path:
    return cache_dir / SOCKET


def why_not_ours(path: Path) -> str | None:
    """Why the socket at `path` must not be trusted, None when it may be
    (OSError when there is none to look at)."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        return "it is not a socket"
    if st.st_uid != os.getuid():
        return f"it belongs to user id {st.st_uid}, not to you ({os.getuid()})"
    if st.st_mode & 0o077:
        return f"other users may open it (mode {stat.S_IMODE(st.st_mode):04o}, not 0600)"
    return None


@contextlib.contextmanager
def address(path: Path) -> Iterator[str]:
    """A name `bind` and `connect` take for `path`: itself, or, when it is too
    long for a socket address, the same file reached through an open
    descriptor of its folder (/proc/self/fd/N/NAME)."""
    if len(os.fsencode(str(path))) < _SUN_PATH:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode("utf-8")
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The next message, None when the peer closed the connection first."""
    head = _read(sock, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > _MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes")
    body = _read(sock, size)
    if body is None:
        return None
    message = json.loads(body.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("a message that is not a JSON object")
    return message


def _read(sock: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def ask(
    cache_dir: Path, message: dict[str, Any], *, timeout: float | None = None
) -> dict[str, Any] | None:
    """The daemon's answer to `message`; None when no daemon answers (no
    socket, a stale one, or the daemon gone mid-answer). NotOurs when the
    socket is there but not to be trusted."""
    path = socket_path(cache_dir)
    try:
        why = why_not_ours(path)
    except OSError:  # no socket there (or no folder, or one that cannot be read)
        return None
    if why is not None:
        raise NotOurs(f"{path}: {why}")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            with address(path) as name:
                sock.connect(name)
            send(sock, message)
            return receive(sock)
    except (OSError, ValueError):  # refused (stale), reset (killed), or garbled
        return None
