"""Writing the files ctxlint produces (a report, the baseline) without losing one.

A regular file is replaced atomically: the text goes to a temporary file
beside it, which then takes its name, so a full disk or a kill mid-write
leaves the old file whole. Anything else that can be opened for writing (a
terminal, a pipe, /dev/stdout) is written in place. Every failure is a
CtxlintError naming the path, checked up front where that is possible, so a
long run is not spent on a report that cannot be written.
"""

from __future__ import annotations

import glob
import os
import stat
import tempfile
import time
from pathlib import Path

from ctxlint.core.errors import CtxlintError


def _fail(what: str, path: Path, reason: str) -> CtxlintError:
    return CtxlintError(f"cannot write {what} {path}: {reason}")


def check_writable(path: str | os.PathLike[str], what: str, *, make_folders: bool = False) -> None:
    """Raise now if `path` obviously cannot be written (a folder, a missing or
    read-only folder); a full disk only shows when writing. With `make_folders`
    a missing folder is fine if the nearest existing one is writable."""
    target = Path(path)
    if target.is_dir():
        raise _fail(what, target, "it is a folder")
    folder = target.parent
    if not folder.is_dir():
        if not make_folders:
            raise _fail(what, target, f"folder {folder} does not exist")
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise _fail(what, target, f"{folder} is not a folder")
    if target.exists() and not os.access(target, os.W_OK):
        raise _fail(what, target, "permission denied")
    # a regular file is replaced, not rewritten: its folder takes the new one
    if (not target.exists() or target.is_file()) and not os.access(folder, os.W_OK | os.X_OK):
        raise _fail(what, target, f"folder {folder} is not writable")


def write_text(path: str | os.PathLike[str], text: str, what: str) -> None:
    """Write `text` (UTF-8, \\n line ends) to `path`: atomically when it is, or
    will be, a regular file."""
    target = Path(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _fail(what, target, exc.strerror or str(exc)) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise _fail(what, target, "it is a folder")
        try:  # a device or a pipe: there is nothing to replace
            with open(target, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        except OSError as exc:
            raise _fail(what, target, exc.strerror or str(exc)) from None
        return
    _clear_leftovers(target)
    try:
        prefix = f".{target.name}.{os.getpid()}."
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _fail(what, target, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private; keep the old file's mode, else the usual one
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _fail(what, target, exc.strerror or str(exc)) from None
        raise


STALE_SECONDS = 3600  # a temporary file of no known writer this old is a leftover


def _clear_leftovers(target: Path) -> None:
    """Remove the temporary files a killed write of `target` left beside it
    (`.NAME.PID.XXXX.tmp`): its writer's process is gone, or, for a name with no
    process in it, it is older than any write takes."""
    try:
        leftovers = list(target.parent.glob(f".{glob.escape(target.name)}.*.tmp"))
    except OSError:
        return
    for tmp in leftovers:
        pid = tmp.name[len(target.name) + 2 :].split(".", 1)[0]
        try:
            if pid.isdigit() and int(pid) != os.getpid():
                if _alive(int(pid)):
                    continue
            elif time.time() - tmp.lstat().st_mtime < STALE_SECONDS:
                continue
            if tmp.is_file() and not tmp.is_symlink():
                tmp.unlink()
        except OSError:
            continue  # another run cleared it first, or it is not ours to remove


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: leave its file
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
