"""The server's own watch of its tree (server.watch): a check stats only the
files changed on disk since the last one, and the findings after any change
made outside the editor (an edit, a copy, a rename, an editor's save by
rename, a deletion, a new folder, a folder moved, a write through a second
name out of the tree) equal `ctxlint check --no-cache`; an overflowed queue
falls back to the full stat for one check."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from lspclient import APP, CONFIG, batch, copy_legacy_app

from ctxlint import session
from ctxlint.discover import files as discovery
from ctxlint.discover import sources
from ctxlint.server import watch
from ctxlint.server.checking import load
from ctxlint.server.project import Project

# the stat calls a check makes whatever the tree: its src roots, the baseline,
# the root's realpath, a `.git` in the root
FEW = 6
HEADER = "from ctxrt.context import get_server_args\n"
READ = "\n\ndef tp_now_{n}() -> int:\n    return get_server_args().tp_size\n"


def _tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> Path:
    """The example's tree, a git work tree (git lists its files) or not (an
    unpacked wheel's: walked)."""
    # a signature is kept once its file is 10 ms old, not 2 s (the steps wait
    # that long): each check after the first then has signatures to keep
    monkeypatch.setattr(sources, "RACY_NS", 10_000_000)
    monkeypatch.setattr(discovery, "RACY_NS", 10_000_000)
    monkeypatch.setattr(discovery, "_WALKS", {})
    monkeypatch.setattr(discovery, "_CHOSEN", {})
    found = copy_legacy_app(tmp_path / "repo").resolve()
    if kind == "walked":
        shutil.rmtree(found / ".git")
    return found


# (the checkout's run in the slow suite: tests/discover/test_watched.py reads a
# checkout's changes in the quick one)
@pytest.fixture(params=[pytest.param("checkout", marks=pytest.mark.slow), "walked"])
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    return _tree(tmp_path, monkeypatch, request.param)


@pytest.fixture
def walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _tree(tmp_path, monkeypatch, "walked")


class Stats:
    """The stat calls (os.stat, os.lstat) on paths under the tree."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.prefix = str(root) + os.sep
        self.count = 0
        self.on = True
        for name in ("stat", "lstat"):
            monkeypatch.setattr(os, name, self._counted(getattr(os, name)))

    def _counted(self, call: Any) -> Any:
        def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
            if (
                self.on
                and isinstance(path, (str, os.PathLike))
                and os.fspath(path).startswith(self.prefix)
            ):
                self.count += 1
            return call(path, *args, **kwargs)

        return counted


def _project(root: Path) -> Project:
    request = session.Request(paths=(str(root),), config=str(root / CONFIG))
    return Project(load(request), use_cache=False, jobs=1)


def _keys(findings: list[Any]) -> list[tuple[str, str, int, str, str]]:
    return sorted(
        (f["path"], f["rule"], f["line"], f["status"], f["fingerprint"]) for f in findings
    )


def _same_as_batch(project: Project, root: Path, stats: Stats | None = None) -> None:
    """A check now equals `ctxlint check --no-cache` on the tree as it is
    (`stats` counts the check's, not the batch run's)."""
    project.refresh(full=True)
    assert project.checked is not None
    result = project.checked.result
    if stats is not None:
        stats.on = False
    report = batch(root)
    if stats is not None:
        stats.on = True
    assert _keys([f.to_json() for f in result.findings]) == _keys(report["findings"])
    assert sorted(e.path for e in result.errors) == sorted(e["path"] for e in report["errors"])


def _settle() -> None:
    time.sleep(0.03)  # (past the shortened racy window)


def _checked_files(project: Project) -> int:
    assert project.checked is not None
    return len(project.checker.resident.hashes)


def test_changes_outside_the_editor_equal_the_batch_check_and_stat_only_themselves(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = root / APP
    project = _project(root)
    tree = watch.WATCHES[str(root)]
    assert tree.ok
    project.refresh(full=True)  # the first check: every file stat'd
    _settle()
    project.refresh(full=True)  # its signatures kept now (they had settled)
    stats = Stats(root, monkeypatch)
    _settle()
    _same_as_batch(project, root, stats)
    assert stats.count <= FEW  # nothing changed: no file stat'd
    files = _checked_files(project)
    assert files > 20
    outside = tmp_path / "outside.py"  # a second name of a tree's file, out of the tree

    def edit() -> None:
        readback = app / "readback.py"
        readback.write_text(HEADER + readback.read_text() + READ.format(n=1))

    def copy() -> None:
        shutil.copy2(app / "readback.py", app / "copied.py")

    def save_by_rename() -> None:  # as editors save: a new file renamed over the old
        text = (app / "scheduler.py").read_text()
        (app / ".scheduler.py.tmp").write_text(HEADER + text + READ.format(n=2))
        os.replace(app / ".scheduler.py.tmp", app / "scheduler.py")

    def rename() -> None:
        os.rename(app / "copied.py", app / "renamed.py")

    def delete() -> None:
        (app / "renamed.py").unlink()

    def new_folder() -> None:
        (app / "fresh" / "deeper").mkdir(parents=True)
        (app / "fresh" / "__init__.py").write_text("")
        (app / "fresh" / "deeper" / "reads.py").write_text(HEADER + READ.format(n=3))

    def hard_link() -> None:
        os.link(app / "launcher.py", outside)

    def write_through_it() -> None:  # no event in its folder: its own watch sees it
        with open(outside, "a", encoding="utf-8") as fh:
            fh.write(HEADER + READ.format(n=4))

    def move_folder() -> None:  # the watch's own doubt: a full stat, then watched again
        os.rename(app / "fresh", app / "moved")

    steps = [edit, copy, save_by_rename, rename, delete, new_folder, hard_link, write_through_it]
    for step in [*steps, move_folder]:
        step()
        _settle()
        stats.count = 0
        _same_as_batch(project, root, stats)
        full = step is move_folder
        assert (stats.count >= files) == full, step.__name__
        if not full:
            assert stats.count <= FEW + 8, step.__name__
    stats.count = 0
    _settle()
    _same_as_batch(project, root, stats)
    assert stats.count <= FEW + 1  # watched again after the move (the hard link stat'd)


def test_an_overflowed_queue_falls_back_to_the_full_stat(
    walked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = walked
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"a queue of {limit} events: too long to overflow here")
    project = _project(root)
    assert watch.WATCHES[str(root)].ok
    project.refresh(full=True)
    _settle()
    project.refresh(full=True)
    stats = Stats(root, monkeypatch)
    app = root / APP
    a, b = app / "launcher.py", app / "overlap.py"
    for n in range(limit // 2 + 100):  # (alternating: the kernel merges repeats)
        os.utime(a, ns=(n, n))
        os.utime(b, ns=(n, n))
    (app / "readback.py").write_text((app / "readback.py").read_text() + "\n# changed\n")
    _settle()
    _same_as_batch(project, root, stats)
    assert stats.count >= _checked_files(project)  # every file, and the folders again
    generation = watch.WATCHES[str(root)].generation
    assert generation >= 1
    stats.count = 0
    _settle()
    _same_as_batch(project, root, stats)
    assert stats.count <= FEW  # watched again: nothing changed since
    assert watch.WATCHES[str(root)].generation == generation


def test_without_a_watch_every_file_is_stat_d(
    walked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut above is the watch's: with it off (not Linux, the kernel's
    limit), each check stats every file, as before."""
    root = walked
    monkeypatch.setattr(watch, "_flags", lambda: None)
    project = _project(root)
    assert not watch.WATCHES[str(root)].ok
    project.refresh(full=True)
    _settle()
    stats = Stats(root, monkeypatch)
    _same_as_batch(project, root, stats)
    assert stats.count >= _checked_files(project)
    (root / APP / "readback.py").write_text("x = 1\n")
    _settle()
    _same_as_batch(project, root)


def test_a_watch_lives_as_long_as_its_users(tmp_path: Path) -> None:
    folder = tmp_path / "tree"
    (folder / "a").mkdir(parents=True)
    first = watch.start(folder)
    assert watch.start(folder) is first and first.ok
    assert first.watched == {"", "a"}
    watch.stop(folder)
    assert str(folder) in watch.WATCHES
    watch.stop(folder)
    assert str(folder) not in watch.WATCHES and not first.ok
