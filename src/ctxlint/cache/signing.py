"""The cache's private key: every row is signed, so a cache that came with the
checked tree (force-added to a pull request, unpacked with an archive) cannot
answer a run. Rows hold finished findings keyed by content, so without this a
forged row would be replayed in any copy or clone and hide a finding.

The key lives outside every tree: `$CTXLINT_CACHE_KEY` (a CI secret, for a cache
that travels between machines), else a random key made once per user under
`$XDG_STATE_HOME/ctxlint/cache-key` (mode 0600). A row whose signature does not
match is a miss, and the run overwrites it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

MAC_SIZE = 16
_KEY_BYTES = 32


class NoKey(Exception):
    """No private key can be had (an unwritable home, a key others may read)."""


def key_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "ctxlint" / "cache-key"


def load_key() -> bytes:
    """This user's cache key (made on first use); NoKey with the reason."""
    given = os.environ.get("CTXLINT_CACHE_KEY")
    if given:
        return hashlib.blake2b(given.encode(), digest_size=32).digest()
    path = key_file()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise NoKey(f"cannot read the cache key {path}: {exc.strerror or exc}") from None
    try:
        _create(path)
        return _read(path)
    except OSError as exc:
        raise NoKey(f"cannot make the cache key {path}: {exc.strerror or exc}") from None


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            # another user could read it, and so sign rows of their own
            raise NoKey(f"the cache key {path} must be yours alone (chmod 600 {path})")
        data = os.read(fd, 4 * _KEY_BYTES).strip()
    finally:
        os.close(fd)
    if len(data) < 2 * _KEY_BYTES:
        raise NoKey(f"the cache key {path} is damaged: delete it and run again")
    try:
        return bytes.fromhex(data[: 2 * _KEY_BYTES].decode("ascii"))
    except ValueError:
        raise NoKey(f"the cache key {path} is damaged: delete it and run again") from None


def _create(path: Path) -> None:
    """Write a new key atomically; a concurrent run that wins the race keeps its own."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(_KEY_BYTES) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another run made one first: theirs stands
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def sign(key: bytes, row_key: str, data: bytes) -> bytes:
    """`data` prefixed with its MAC, bound to the row's key (no row can be moved)."""
    return _mac(key, row_key, data) + data


def verified(key: bytes, row_key: str, stored: bytes) -> bytes | None:
    """The data of a signed row, or None when its signature does not match."""
    mac, data = stored[:MAC_SIZE], stored[MAC_SIZE:]
    if len(mac) != MAC_SIZE or not hmac.compare_digest(mac, _mac(key, row_key, data)):
        return None
    return data


def _mac(key: bytes, row_key: str, data: bytes) -> bytes:
    h = hashlib.blake2b(key=key, digest_size=MAC_SIZE)
    h.update(row_key.encode("utf-8", "surrogateescape"))
    h.update(b"\0")
    h.update(data)
    return h.digest()
