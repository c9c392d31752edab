"""Findings per rule over the last N commits: the burn-down.

Each commit's tree is unpacked (`git archive`, read-only for the repository:
no worktree bookkeeping, no checkout) into a temporary folder and checked with
the current rules and config re-rooted there. Only what a check reads is
unpacked: the Python files and the tree's baseline (sglang's wheel holds three
other files for each Python one). Every run shares one fact cache, keyed by
content hash, so a file unchanged between commits is parsed once: twenty
commits cost little more than one run plus the unpacking. With a cache folder,
each commit's counts are kept too (history_memo): an audit run again, or
after a new commit, checks only the commits it has not counted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from ctxlint import session
from ctxlint.baseline.ratchet import BaselineError
from ctxlint.core.errors import ConfigError, CtxlintError
from ctxlint.core.gitcmd import git_argv, git_env, run_git
from ctxlint.report.audit.history_memo import HistoryMemo
from ctxlint.report.audit.model import HistoryPoint
from ctxlint.session import Setup

_SEP = "\x1f"


def _git(cwd: Path, *argv: str) -> bytes:
    try:
        done = run_git(cwd, *argv)
    except OSError as exc:
        raise ConfigError(f"--history needs git: {exc}") from None
    if done.returncode != 0:
        detail = (done.stderr.decode(errors="replace").strip().splitlines() or ["git failed"])[-1]
        raise ConfigError(f"--history: git {argv[0]}: {detail}")
    return done.stdout


def commits(root: Path, n: int) -> tuple[Path, str, list[tuple[str, str, str, str]]]:
    """(repository top, root's path in it, [(sha, short, date, subject)] oldest first).

    Only commits that touch the checked tree count (first-parent, so a merged
    branch is one step), since the others cannot change its findings.
    """
    top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix
    fmt = _SEP.join(("%H", "%h", "%cI", "%s"))
    argv = ["log", "--first-parent", f"-n{n}", f"--format={fmt}", "HEAD"]
    if prefix:
        argv += ["--", prefix]
    lines = _git(top, *argv).decode("utf-8", "replace").splitlines()
    found = [tuple(line.split(_SEP, 3)) for line in lines if line]
    return top, prefix, [(c[0], c[1], c[2], c[3]) for c in reversed(found) if len(c) == 4]


def checked_paths(
    top: Path, sha: str, prefix: str, src: tuple[str, ...], baseline: str | None
) -> tuple[list[str], list[str]] | None:
    """What of the tree of `sha` under `prefix` a check reads, as pathspecs for
    `git archive` (its Python files, and the baseline `baseline`, relative to
    the project, if there is one), and the src roots (relative to the project)
    that hold other files only: they are made empty, as a full archive makes
    them. None when only the whole tree will do: a `.py` link, which may point
    at a file of any name, or no Python file at all (the archive would fail)."""
    argv = ["ls-tree", "-r", "-z", sha]
    if prefix:
        argv += ["--", prefix]
    head = f"{prefix}/" if prefix else ""
    names, links = [], False
    for item in _git(top, *argv).decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = item.partition("\t")
        if not name:
            continue
        names.append(name[len(head) :])
        links |= meta.startswith("120000") and name.endswith(".py")
    if links or not any(n.endswith(".py") for n in names):
        return None
    specs = [f":(glob){head}**/*.py"]
    if baseline is not None and baseline in names:
        specs.append(f":(literal){head}{baseline}")
    roots = {os.path.normpath(r).replace(os.sep, "/") for r in src}
    folders = [
        r
        for r in sorted(roots - {"."})
        if any(n.startswith(f"{r}/") for n in names)
        and not any(n.startswith(f"{r}/") and n.endswith(".py") for n in names)
    ]
    return specs, folders


def unpack(
    top: Path, sha: str, prefix: str, into: Path, pathspecs: list[str] | None = None
) -> Path:
    """Write the tree of `sha` (under `prefix`; only `pathspecs` of it, when
    given) into `into`; returns the re-rooted root.

    The archive is streamed, so a large repository never sits in memory whole.
    """
    argv = git_argv(top, "archive", "--format=tar", sha)
    if pathspecs:
        argv += ["--", *pathspecs]
    elif prefix:
        argv += ["--", prefix]
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_env())
    except OSError as exc:
        raise ConfigError(f"--history needs git: {exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    failure: tarfile.TarError | None = None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            if hasattr(tarfile, "data_filter"):  # refuse links and paths leaving `into`
                tar.extractall(into, filter="data")
            else:  # pragma: no cover - Python without the extraction filters
                tar.extractall(into)
    except tarfile.TarError as exc:
        failure = exc
    finally:
        # tarfile stops at the end-of-archive marker; git may still be writing
        # the record's zero padding: drained, so git never dies of SIGPIPE
        # (an exit with nothing on stderr: "git archive ...: failed")
        while proc.stdout.read(1 << 16):
            pass
        proc.stdout.close()
        detail = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
        code = proc.wait()
    if code != 0:
        raise CtxlintError(f"git archive {sha[:12]}: {(detail.splitlines() or ['failed'])[-1]}")
    if failure is not None:
        raise failure
    return into / PurePosixPath(prefix) if prefix else into


Progress = Callable[[int, int, str], None]


def history(
    setup: Setup,
    n: int,
    *,
    pins: dict[str, dict[str, Any]] | None = None,
    progress: Progress | None = None,
    checked: list[str] | None = None,
) -> list[HistoryPoint]:
    """Findings per selected rule (under the setup's path filters) at each of
    the last `n` commits touching the tree. `checked` gets the commits that
    were checked (not counted from the cache)."""
    config = setup.config
    top, prefix, found = commits(config.root, n)
    ids = [r.id for r in setup.selected]
    baseline = _baseline_rel(setup)
    use_cache = setup.request.run.use_cache
    memo = None
    if use_cache and config.cache_dir and found:
        memo = HistoryMemo(setup, top, prefix, baseline, pins)
    kept = memo.get([c[0] for c in found]) if memo is not None else {}
    points: list[HistoryPoint] = []
    try:
        with tempfile.TemporaryDirectory(prefix="ctxlint-history-") as tmp:
            # a shared cache even under --no-cache: the point is that unchanged files are free
            cache = config.cache_dir if use_cache and config.cache_dir else Path(tmp) / "cache"
            for i, (sha, short, date, subject) in enumerate(found, 1):
                if progress:
                    progress(i, len(found), short)
                if sha in kept:
                    points.append(HistoryPoint(sha, short, date, subject, kept[sha]))
                    continue
                if checked is not None:
                    checked.append(sha)
                work = Path(tmp) / short
                try:
                    wanted = checked_paths(top, sha, prefix, config.src, baseline)
                    root = unpack(top, sha, prefix, work, wanted[0] if wanted else None)
                    if root.is_dir() and wanted:
                        for folder in wanted[1]:
                            (root / folder).mkdir(parents=True, exist_ok=True)
                    counts = _count(setup, root, cache, pins)
                    error = None
                except (CtxlintError, BaselineError, OSError, tarfile.TarError) as exc:
                    counts, error = dict.fromkeys(ids, 0), str(exc)
                if memo is not None and error is None:
                    memo.put(sha, counts)
                points.append(HistoryPoint(sha, short, date, subject, counts, error))
                shutil.rmtree(work, ignore_errors=True)
    finally:
        if memo is not None:
            memo.close()
    return points


def _baseline_rel(setup: Setup) -> str | None:
    """The baseline's path relative to the project (None: none, or outside it)."""
    config = setup.config
    if config.baseline is None:
        return None
    try:
        return config.baseline.relative_to(config.root).as_posix()
    except ValueError:
        return None


def _count(
    setup: Setup,
    root: Path,
    cache: Path,
    pins: dict[str, dict[str, Any]] | None,
) -> dict[str, int]:
    if not root.is_dir():
        raise CtxlintError(f"{root.name} does not exist at this commit")
    # The baseline of that commit, if the tree has one, so its pins are the ones
    # the code was written against (else today's pins).
    config = setup.config
    baseline = None
    if config.baseline is not None:
        try:
            rel = config.baseline.relative_to(config.root)
        except ValueError:
            rel = None
        if rel is not None and (root / rel).is_file():
            baseline = root / rel
    there = setup.other_tree(
        root,
        cache_dir=cache,
        baseline=baseline,
        pins=None if baseline is not None else pins,
        use_cache=True,  # a shared cache even under --no-cache (see history)
    )
    checked = session.check(there)
    counts = dict.fromkeys((r.id for r in setup.selected), 0)
    for f in checked.result.findings:  # new and baselined alike: the burn-down counts all
        if f.rule in counts:
            counts[f.rule] += 1
    return counts
