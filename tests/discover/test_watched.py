"""Discovery with a resident front end's watch of the tree (discover.watched,
server.watch): after any change on disk, the files listed and their hashes
are those a fresh discovery and a full stat give, while a check stats only
what changed; a reader that did not finish sees its changes again, and one
whose watch lost events looks at everything."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ctxlint.cache.store import FactCache
from ctxlint.discover import files, sources
from ctxlint.discover.sources import Signatures, Sources
from ctxlint.server import watch


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    # trusted once 10 ms old, not 2 s: the steps wait that long
    monkeypatch.setattr(sources, "RACY_NS", 10_000_000)
    monkeypatch.setattr(files, "RACY_NS", 10_000_000)
    monkeypatch.setattr(files, "_WALKS", {})
    monkeypatch.setattr(files, "_CHOSEN", {})
    monkeypatch.setattr(files, "_NO_CHECKOUT", set())


def _settle() -> None:
    time.sleep(0.015)


def _tree(tmp_path: Path) -> Path:
    root = (tmp_path / "tree").resolve()
    for rel in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py", "pkg/sub/c.py", "top.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    return root


class Resident:
    """A resident front end's reading of the tree: discovery, then the hashes
    with the signatures kept; and the same read afresh, with no watch."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.kept = Signatures()
        self.cache = FactCache(None)

    @classmethod
    def settled(cls, root: Path) -> Resident:
        """One that has read the tree with the watch on and in step (the first
        read sets the watch up; the second reads after its events settled)."""
        resident = cls(root)
        resident.read()
        _settle()
        resident.read()
        return resident

    def read(self) -> tuple[list[str], dict[str, str]]:
        found = [f.rel for f in files.discover(self.root, (".",), ())]
        return found, dict(Sources(self.root, found, self.cache, self.kept).hashes)

    def fresh(self) -> tuple[list[str], dict[str, str]]:
        saved = (files.watch_of, dict(files._WALKS), dict(files._CHOSEN))
        files.watch_of = lambda _root: None  # type: ignore[assignment]
        files._WALKS.clear()
        files._CHOSEN.clear()
        try:
            found = [f.rel for f in files.discover(self.root, (".",), ())]
            return found, dict(Sources(self.root, found, self.cache).hashes)
        finally:
            files.watch_of = saved[0]  # type: ignore[assignment]
            files._WALKS.clear()
            files._WALKS.update(saved[1])
            files._CHOSEN.clear()
            files._CHOSEN.update(saved[2])


def _ops(root: Path, rng: random.Random, n: int) -> str:
    present = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    folders = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())
    kind = rng.choice(["write", "write", "new", "delete", "rename", "save", "folder", "rmtree"])
    if kind in ("write", "delete", "rename", "save") and not present:
        kind = "new"
    if kind == "write":
        with open(root / rng.choice(present), "a", encoding="utf-8") as fh:
            fh.write(f"x_{n} = {n}\n")
    elif kind == "new":
        where = rng.choice(["", *folders])
        (root / where / f"n{n}.py").write_text(f"y = {n}\n")
    elif kind == "delete":
        (root / rng.choice(present)).unlink()
    elif kind == "rename":
        os.rename(root / rng.choice(present), root / rng.choice(["", *folders]) / f"r{n}.py")
    elif kind == "save":  # an editor's: a new file renamed over the old one
        target = root / rng.choice(present)
        (target.parent / f".{target.name}.swp").write_text(target.read_text() + f"# {n}\n")
        os.replace(target.parent / f".{target.name}.swp", target)
    elif kind == "folder":
        new = root / rng.choice(["", *folders]) / f"d{n}" / "inner"
        new.mkdir(parents=True)
        (new / "m.py").write_text(f"z = {n}\n")
        (new.parent / "__init__.py").write_text("")
    elif kind == "rmtree" and folders:
        shutil.rmtree(root / rng.choice(folders))
    return kind


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("checkout", [False, True])
def test_random_changes_read_as_a_fresh_discovery_and_stat_does(
    tmp_path: Path, seed: int, checkout: bool
) -> None:
    root = _tree(tmp_path)
    if checkout:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    rng = random.Random(seed)
    with watch.watching(root) as tree:
        assert tree.ok
        resident = Resident(root)
        assert resident.read() == resident.fresh()
        for n in range(25):
            if not any(root.rglob("*.py")):
                break
            kind = _ops(root, rng, n)
            _settle()
            assert resident.read() == resident.fresh(), (n, kind)


def test_a_check_stats_only_the_changed_files(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with watch.watching(root):
        resident = Resident(root)
        resident.read()
        assert resident.kept.stats == 5  # the first: every file
        _settle()
        resident.read()
        resident.read()
        assert resident.kept.stats == 0
        (root / "pkg" / "a.py").write_text("changed = 1\n")
        resident.read()
        assert resident.kept.stats == 1
    resident.read()  # no watch: every file again
    assert resident.kept.stats == 5


def test_a_reader_that_did_not_finish_sees_its_changes_again(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with watch.watching(root) as tree:
        cursor = tree.cursor()
        assert cursor.take() is None  # (first: everything)
        cursor.done()
        (root / "top.py").write_text("1\n")
        taken = cursor.take()
        assert taken is not None and "top.py" in taken.paths
        (root / "pkg" / "a.py").write_text("2\n")  # its reader failed: no done()
        again = cursor.take()
        assert again is not None and {"top.py", "pkg/a.py"} <= again.paths
        cursor.done()
        after = cursor.take()
        assert after is not None and not after.paths


def test_events_lost_make_every_reader_look_at_everything(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with watch.watching(root) as tree:
        first, second = tree.cursor(), tree.cursor()
        for c in (first, second):
            c.take()
            c.done()
        assert first.take() is not None
        tree.lost()  # (an overflowed queue, a folder moved: another reader's drain)
        first.done()  # finished a take made before the loss: not in step
        assert first.take() is None and second.take() is None
        first.done()
        assert first.take() is not None


def test_a_folder_moved_starts_the_watch_again(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with watch.watching(root) as tree:
        resident = Resident.settled(root)
        before = tree.generation
        os.rename(root / "pkg" / "sub", root / "moved")
        _settle()
        assert resident.read() == resident.fresh()
        assert tree.generation == before + 1
        assert resident.kept.stats == 5  # the full stat, once
        assert "moved" in tree.watched and "pkg/sub" not in tree.watched


def test_outside_a_checkout_git_is_asked_once_until_a_git_folder_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    asked: list[tuple[Any, ...]] = []
    run_git = files.run_git

    def counted(cwd: Any, *args: str) -> Any:
        asked.append(args)
        return run_git(cwd, *args)

    monkeypatch.setattr(files, "run_git", counted)
    if files._git_above(root):
        pytest.skip("the temporary folder is inside a git work tree")
    for _ in range(3):
        assert [f.rel for f in files.discover(root, (".",), ())][-1] == "top.py"
    assert len(asked) == 2  # check-ignore, ls-files: once
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    found = [f.rel for f in files.discover(root, (".",), ())]
    assert len(asked) == 4 and "top.py" in found  # a checkout now: git lists


def test_a_file_renamed_or_saved_by_rename_is_watched_again(tmp_path: Path) -> None:
    """Its new inode (a save's) or its new name (a rename's) is watched: the
    check after it stats that file, the next one nothing; a write through a
    second name out of the tree is its own inode's event."""
    root = _tree(tmp_path)
    with watch.watching(root) as tree:
        resident = Resident.settled(root)
        target = root / "pkg" / "a.py"
        (root / "pkg" / ".a.py.swp").write_text("saved = 1\n")
        os.replace(root / "pkg" / ".a.py.swp", target)
        os.rename(root / "pkg" / "sub" / "b.py", root / "pkg" / "sub" / "renamed.py")
        _settle()
        assert resident.read() == resident.fresh()
        assert resident.kept.stats == 2
        _settle()
        resident.read()
        assert resident.kept.stats == 0
        assert {"pkg/a.py", "pkg/sub/renamed.py"} <= tree.watched_files
        outside = tmp_path / "outside.py"
        os.link(target, outside)
        _settle()
        resident.read()  # (the link count's change: an event on its inode)
        with open(outside, "a", encoding="utf-8") as fh:
            fh.write("through = 2\n")
        _settle()
        assert resident.read() == resident.fresh()
        assert resident.kept.stats == 1
        assert "through = 2" in (root / "pkg" / "a.py").read_text()


def test_a_mount_made_anywhere_starts_the_watch_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No inotify event says that a folder now shows another file system: a
    change of the mount table (seen as the kernel marks it) is a loss."""
    root = _tree(tmp_path)
    with watch.watching(root) as tree:
        resident = Resident.settled(root)
        before = tree.generation
        changed = watch._MountWatch.changed
        monkeypatch.setattr(watch._MountWatch, "changed", lambda _self: True)
        resident.read()
        assert resident.kept.stats == 5 and tree.generation > before
        monkeypatch.setattr(watch._MountWatch, "changed", changed)
        resident.read()
        assert resident.kept.stats == 0
