"""Which files are checked, and the module name each one has.

In a git checkout the file list comes from git itself (tracked plus untracked,
minus what `.gitignore` excludes), so ignored build trees never leak in.
Elsewhere (an unpacked wheel) the tree is walked.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pathspec

from ctxlint.core.errors import CtxlintError
from ctxlint.core.findings import FileError
from ctxlint.core.gitcmd import run_git
from ctxlint.discover.sources import RACY_NS
from ctxlint.discover.watched import Changes, Cursor, Watch, watch_of

SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".ctxlint_cache",
}


@dataclass(frozen=True, slots=True)
class SourceFile:
    rel: str  # posix path relative to the project root
    module: str  # dotted module name derived from the deepest src root holding it


def _git_files(root: Path) -> list[str] | None:
    # ls-files run from `root` prints paths relative to it; outside a work tree
    # (or without git) it fails and the caller walks the tree instead.
    outside = (str(root), _git_environment())
    if outside in _NO_CHECKOUT and not _git_above(root):
        return None
    try:
        ignored = run_git(root, "check-ignore", "-q", ".")
        if ignored.returncode == 0:  # an ignored tree inside a checkout (a cache): walk it
            return None
        out = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    except OSError:
        return None
    if out.returncode != 0:
        if not _git_above(root):
            _NO_CHECKOUT.add(outside)
        return None
    return [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


# The trees git found no work tree for (root, git's environment): a resident
# front end discovers before every check, and asked git twice each time only to
# hear "not a git repository" (an unpacked wheel). git finds a work tree by a
# `.git` in the root or a folder above it (or by its environment): while none
# of those exists, which a few lstats tell, the answer is the same.
_NO_CHECKOUT: set[tuple[str, tuple[tuple[str, str], ...]]] = set()


def _git_environment() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_")))


def _git_above(root: Path) -> bool:
    """Whether a `.git` may be in `root` or a folder above it (one that cannot
    be looked at counts)."""
    for folder in (root, *root.parents):
        if folder.name == ".git":
            return True
        try:
            os.lstat(os.path.join(folder, ".git"))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return True
        return True
    return False


def _walk_files(
    root: Path,
    checked: Callable[[str], bool],
    errors: list[FileError] | None,
    folders: dict[str, tuple[int, ...] | None] | None = None,
) -> list[str]:
    """The files under `root`. A folder that cannot be read, when `checked(its path)`
    says it could hold checked files (os.walk skips it silently), goes to `errors`
    as a file that cannot be checked, as an unreadable file does; with no `errors`
    it ends the run. `folders` gets each folder walked (or not readable): its
    signature (`_signature`)."""
    found: list[str] = []

    def unreadable(exc: OSError) -> None:
        if folders is not None:
            folders[exc.filename or str(root)] = _signature(exc.filename or str(root))
        where = os.path.relpath(exc.filename or root, root).replace(os.sep, "/")
        if not checked(where):
            return
        why = f"cannot read folder: {exc.strerror or exc}"
        if errors is None:
            raise CtxlintError(f"{where}: {why}")
        errors.append(FileError(where + "/", why))

    for folder, dirs, files in os.walk(root, onerror=unreadable):
        if folders is not None:
            folders[folder] = _signature(folder)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        rel_folder = os.path.relpath(folder, root)
        for name in files:
            found.append(name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/"))
    return found


def module_name(rel: str, roots: list[str]) -> str:
    """Dotted module name of `rel` under the deepest root that holds it."""
    best = ""
    for r in roots:
        prefix = "" if r in (".", "") else r.rstrip("/") + "/"
        if rel.startswith(prefix) and len(prefix) >= len(best):
            best = prefix
    parts = rel[len(best) :].removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover(
    root: Path,
    src: tuple[str, ...],
    exclude: tuple[str, ...],
    errors: list[FileError] | None = None,
) -> list[SourceFile]:
    """All Python files under the src roots, minus excludes, sorted by path; the
    folders that cannot be read go to `errors` (see _walk_files)."""
    roots = _roots(src)
    for r in roots:
        if os.path.isabs(r) or r == ".." or r.startswith("../"):
            # git lists the project's files: a folder outside it is never listed
            raise FileNotFoundError(
                f"src root {r!r} is outside the project root {root}: a src root is a "
                "folder of the project (copy code from elsewhere under it)"
            )
        if not (root / r).is_dir():
            raise FileNotFoundError(f"src root {r!r} is not a folder under {root}")
    spec = pathspec.GitIgnoreSpec.from_lines(exclude)

    def checked_folder(rel: str) -> bool:
        inside = _under_root(rel, roots) or any(r.startswith(rel + "/") for r in roots)
        return inside and not spec.match_file(rel + "/")

    listed = _git_files(root)
    key = (str(root), tuple(roots), tuple(exclude))
    base = str(root)  # os.path on strings: pathlib costs more than the stat on a large tree
    watch = watch_of(base)
    cursor = None
    if listed is None:
        walked = _WALKS.get(key)
        if walked is not None and walked.cursor is not None and walked.cursor.watch is watch:
            cursor = walked.cursor
        changes = cursor.take() if cursor is not None else None
        if walked is not None and (errors is not None or not walked.errors):
            if changes is not None and cursor is not None:
                files = walked.applied(changes, base, roots, spec)
                if files is not None:
                    cursor.done()
                    return list(files)
            if walked.settled and walked.unchanged():
                if cursor is not None:
                    cursor.done()
                if errors is not None:
                    errors.extend(walked.errors)
                return list(walked.files)
        if watch is not None and cursor is None:
            cursor = watch.cursor()
            cursor.take()  # (before the walk: what changes after is an event)
    folders: dict[str, tuple[int, ...] | None] = {}
    since = time.time_ns() - RACY_NS
    found_errors: list[FileError] = []
    files = (
        listed
        if listed is not None
        else _walk_files(
            root, checked_folder, found_errors if errors is not None else None, folders
        )
    )
    if errors is not None:
        errors.extend(found_errors)
    if listed is not None and watch is not None:
        return list(_chosen_listed(key, listed, base, roots, spec, watch))
    chosen: dict[str, SourceFile] = {}
    links: dict[str, bool] = {}  # each symbolic link to a Python file -> whether it was listed
    for rel in files:
        _choose(rel, base, roots, spec, chosen, links)
    out = [chosen[k] for k in sorted(chosen)]
    _WALKS.pop(key, None)
    settled = all(s is not None and max(s[:2]) < since for s in folders.values())
    if listed is None and (settled or cursor is not None):
        _WALKS[key] = _Walked(folders, links, out, found_errors, settled, cursor)  # type: ignore[arg-type]
        while len(_WALKS) > 4:
            del _WALKS[next(iter(_WALKS))]
        if cursor is not None:
            cursor.done()
    return list(out)


@dataclass
class _Chosen:
    """git's last listing of a watched checkout, and the files chosen of it."""

    listed: frozenset[str]
    chosen: dict[str, SourceFile]
    links: dict[str, bool]
    out: list[SourceFile]
    cursor: Cursor


# A watched checkout's last choice (discover's key -> _Chosen): git lists the
# files each time (its index and ignore files decide), but whether each one is
# there to check (a file deleted is still in the index) changes only with an
# event on its name: the others are not looked at again.
_CHOSEN: dict[tuple[str, tuple[str, ...], tuple[str, ...]], _Chosen] = {}


def _chosen_listed(
    key: tuple[str, tuple[str, ...], tuple[str, ...]],
    listed: list[str],
    base: str,
    roots: list[str],
    spec: pathspec.PathSpec,
    watch: Watch,
) -> list[SourceFile]:
    """The checked files of git's listing `listed`, looked at again only where
    the watch saw a name change since the last listing (or cannot say)."""
    memo = _CHOSEN.pop(key, None)
    changes = None
    if memo is not None and memo.cursor.watch is watch:
        cursor = memo.cursor
        changes = cursor.take()
    else:
        cursor = watch.cursor()
        cursor.take()  # (before any look: what changes after is an event)
    now = frozenset(listed)
    if memo is None or changes is None or memo.links:
        chosen: dict[str, SourceFile] = {}
        links: dict[str, bool] = {}
        for rel in listed:
            _choose(rel, base, roots, spec, chosen, links)
        out = [chosen[k] for k in sorted(chosen)]
    else:
        named = Changes(changes.names, changes.names, changes.folders)
        covered: dict[str, bool] = {}

        def again(rel: str) -> bool:
            folder = rel[: max(rel.rfind("/"), 0)]
            seen = covered.get(folder)
            if seen is None:
                seen = covered[folder] = watch.covers(folder)
            return not seen or named.touches(rel)

        looked = (now ^ memo.listed) | {rel for rel in now if again(rel)}
        chosen, links, out = memo.chosen, memo.links, memo.out
        if looked:
            chosen, links = dict(chosen), {}
            for rel in looked:
                chosen.pop(rel, None)
                if rel in now:
                    _choose(rel, base, roots, spec, chosen, links)
            out = [chosen[k] for k in sorted(chosen)]
    _CHOSEN[key] = _Chosen(now, chosen, links, out, cursor)
    while len(_CHOSEN) > 4:
        del _CHOSEN[next(iter(_CHOSEN))]
    cursor.done()
    return out


def _choose(
    rel: str,
    base: str,
    roots: list[str],
    spec: pathspec.PathSpec,
    chosen: dict[str, SourceFile],
    links: dict[str, bool],
) -> None:
    """`rel` into `chosen` when it is a checked file; each link to a Python
    file into `links` (its full path -> whether it is listed)."""
    if not rel.endswith(".py") or spec.match_file(rel):
        return
    if any(part in SKIP_DIRS for part in rel.split("/")[:-1]):
        return
    if not any(r in (".", "") or rel.startswith(r.rstrip("/") + "/") for r in roots):
        return
    full = os.path.join(base, rel)
    there, link = _file_kind(full)
    if link:  # (what it points at may change with no folder changing)
        links[full] = there
    if not there:  # deleted, still in the index
        return
    chosen[rel] = SourceFile(rel, module_name(rel, roots))


# A walked tree's last discovery (root, src roots, excludes -> _Walked): a
# resident front end (the server, the daemon) discovers before every check,
# and a tree that gained, lost or renamed no file (or folder) since lists the
# same files. Any such change changes the modification time of the folder it
# is in, and every folder walked is looked at again (a stat each, not a walk
# and a match of every file). A folder changed less than RACY_NS before the
# walk is not trusted (a change in the same timestamp tick would look like
# none, as discover.sources says): no memo is kept then. In a git checkout,
# git's listing decides (the index and .gitignore files too): not kept.
_WALKS: dict[tuple[str, tuple[str, ...], tuple[str, ...]], _Walked] = {}


def _signature(folder: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


@dataclass
class _Walked:
    folders: dict[str, tuple[int, ...]]  # each folder walked -> its signature then
    links: dict[str, bool]  # each link to a Python file -> whether it was listed
    files: list[SourceFile]
    errors: list[FileError]
    # whether every folder had settled at the walk (else its signatures do not
    # tell a change: only a watch's events do)
    settled: bool = True
    cursor: Cursor | None = None  # the tree's watch's (discover.watched), when watched

    def unchanged(self) -> bool:
        return all(_signature(f) == s for f, s in self.folders.items()) and all(
            _listed_file(f) == was for f, was in self.links.items()
        )

    def applied(
        self, changes: Changes, base: str, roots: list[str], spec: pathspec.PathSpec
    ) -> list[SourceFile] | None:
        """The files now, by the watch's events since the walk: each path made,
        deleted or moved (a folder's: everything under it) looked at again,
        a folder listed (the watch watches it already). None when the walk
        must be done again: a folder that could not be read, a link changed."""
        if self.errors or any(_listed_file(f) != was for f, was in self.links.items()):
            return None
        names = changes.names | changes.folders
        if not names:
            return self.files
        if "" in names:
            return None
        chosen = {f.rel: f for f in self.files}
        links = dict(self.links)
        for name in sorted(names):
            under = name + "/"
            for rel in [r for r in chosen if r == name or r.startswith(under)]:
                del chosen[rel]
            for full in [
                f
                for f in links
                if f == os.path.join(base, name) or f.startswith(os.path.join(base, under))
            ]:
                del links[full]
            parts = name.split("/")
            if any(p in SKIP_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
                continue
            full = os.path.join(base, name)
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                return None
            if not stat.S_ISDIR(st.st_mode):
                _choose(name, base, roots, spec, chosen, links)
                continue
            if parts[-1] in SKIP_DIRS or parts[-1].endswith(".egg-info"):
                continue
            failed: list[OSError] = []
            for folder, dirs, files in os.walk(full, onerror=failed.append):
                dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
                rel_folder = os.path.relpath(folder, base).replace(os.sep, "/")
                for file in files:
                    _choose(f"{rel_folder}/{file}", base, roots, spec, chosen, links)
            if failed:
                return None
        self.files = [chosen[k] for k in sorted(chosen)]
        self.links = links
        self.settled = False  # (its folders' signatures are the walk's)
        return self.files


def buffer_file(
    root: Path, src: tuple[str, ...], exclude: tuple[str, ...], rel: str
) -> SourceFile | None:
    """The file an editor's buffer at `rel` would be, were it saved, when
    `discover` did not list it (a new file not on disk yet, or one it leaves
    out): None when discovery would leave it out once saved (not Python,
    excluded, in a skipped folder, outside the src roots, ignored by git)."""
    roots = _roots(src)
    if not rel.endswith(".py") or pathspec.GitIgnoreSpec.from_lines(exclude).match_file(rel):
        return None
    if any(part in SKIP_DIRS for part in rel.split("/")[:-1]) or not _under_root(rel, roots):
        return None
    try:  # in a checkout (not an ignored tree inside one) git decides, as _git_files
        walked = run_git(root, "check-ignore", "-q", ".").returncode == 0
        if not walked and run_git(root, "check-ignore", "-q", "--", rel).returncode == 0:
            return None
    except OSError:
        pass
    return SourceFile(rel, module_name(rel, roots))


def _file_kind(path: str) -> tuple[bool, bool]:
    """`_listed_file`, and whether the path is a symbolic link (one lstat for
    a file that is not)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False, False
    except OSError:
        return True, False
    if stat.S_ISLNK(st.st_mode):
        return _listed_file(path), True
    return stat.S_ISREG(st.st_mode), False


def _listed_file(path: str) -> bool:
    """Whether a file git lists is there to check. One that cannot even be looked
    at (in a folder the user may not read), or a link to nothing, is kept: reading
    it reports why."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return os.path.islink(path)
    except OSError:
        return True


def path_matcher(globs: tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(globs)


def _roots(src: tuple[str, ...]) -> list[str]:
    return [os.path.normpath(s).replace(os.sep, "/") for s in src]


def _under_root(rel: str, roots: list[str]) -> bool:
    return any(r in (".", "") or rel == r or rel.startswith(r.rstrip("/") + "/") for r in roots)


def why_unchecked(
    root: Path, src: tuple[str, ...], exclude: tuple[str, ...], rel: str, files: list[SourceFile]
) -> str | None:
    """Why the path `rel` (relative to root, a file or a folder) holds no checked
    file, or None when it holds some. `files` is what `discover` chose."""
    prefix = "" if rel in (".", "") else rel.rstrip("/") + "/"
    if any(f.rel == rel or f.rel.startswith(prefix) for f in files):
        return None
    roots = _roots(src)
    is_dir = (root / rel).is_dir()
    inside = _under_root(rel, roots) or (is_dir and any(r.startswith(prefix) for r in roots))
    if not inside:
        return f"{rel} is outside the src roots ({', '.join(roots)})"
    skipped = [p for p in rel.split("/") if p in SKIP_DIRS or p.endswith(".egg-info")]
    if skipped:
        return f"{rel} is in a {skipped[0]} folder, which ctxlint skips"
    if not is_dir and not rel.endswith(".py"):
        return f"{rel} is not a Python file"
    hit = pathspec.GitIgnoreSpec.from_lines(exclude).check_file(prefix if is_dir else rel)
    if hit.include and hit.index is not None:
        return f"{rel} is excluded by the config (exclude pattern {exclude[hit.index]!r})"
    if is_dir:
        return f"{rel} holds no Python file that is checked"
    if not (root / rel).is_file():
        return f"{rel} is not a regular file"
    link = _linked_folder(root, rel)
    if link is not None:  # git lists a link to a folder, not what is behind it
        return f"{rel} is behind the symbolic link {link}, which discovery does not follow"
    return f"{rel} is ignored by git"


def _linked_folder(root: Path, rel: str) -> str | None:
    """The first folder on `rel`'s way that is a symbolic link, if any."""
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        if (root / "/".join(parts[:i])).is_symlink():
            return "/".join(parts[:i])
    return None


def unchecked_module(
    root: Path,
    src: tuple[str, ...],
    exclude: tuple[str, ...],
    module: str,
    files: list[SourceFile],
    unreadable: dict[str, str],
) -> str | None:
    """Why the named module's file, which exists, is not read (excluded, ignored,
    unreadable), or None when it is read or no such file exists at all."""
    if any(f.module == module and f.rel not in unreadable for f in files):
        return None
    tail = module.replace(".", "/")
    for r in _roots(src):
        prefix = "" if r in (".", "") else r.rstrip("/") + "/"
        for rel in (f"{prefix}{tail}.py", f"{prefix}{tail}/__init__.py"):
            if rel in unreadable:
                return f"its file {rel} is unreadable ({unreadable[rel]})"
            if os.path.lexists(root / rel):
                return f"its file {rel} exists, but " + (
                    why_unchecked(root, src, exclude, rel, files) or "is not checked"
                ).removeprefix(f"{rel} ")
    return None
