"""A walked tree's discovery is kept while no folder of it changed (a
resident front end discovers before every check): the files listed are
those a walk lists, whatever was added, deleted or renamed since."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctxlint.discover import files


def _settled(_root: Path) -> None:
    """Past the (shortened, see `walks`) racy window: a tree not changed lately."""
    time.sleep(0.05)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "a.py").write_text("x = 1\n")
    return root


def _rels(found: list[files.SourceFile]) -> list[str]:
    return [f.rel for f in found]


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders os.walk was asked to walk (each discovery that walked)."""
    seen: list[str] = []
    walk = files._walk_files

    def counted(root: Path, *args: object, **kwargs: object) -> list[str]:
        seen.append(str(root))
        return walk(root, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "_walk_files", counted)
    # a change is seen once its folder's times are 10 ms old, not 2 s: the
    # tests wait that long (a timestamp tick is a few milliseconds at most)
    monkeypatch.setattr(files, "RACY_NS", 10_000_000)
    monkeypatch.setattr(files, "_git_files", lambda _root: None)  # (walked, as a wheel)
    monkeypatch.setattr(files, "_WALKS", {})
    return seen


def test_an_unchanged_settled_tree_is_not_walked_again(tmp_path: Path, walks: list[str]) -> None:
    root = _tree(tmp_path)
    _settled(root)
    first = files.discover(root, (".",), ())
    assert _rels(first) == ["pkg/__init__.py", "pkg/sub/a.py"]
    assert files.discover(root, (".",), ()) == first
    assert len(walks) == 1


@pytest.mark.parametrize("change", ["add", "delete", "rename", "folder", "type"])
def test_a_change_in_any_folder_walks_again(tmp_path: Path, walks: list[str], change: str) -> None:
    root = _tree(tmp_path)
    _settled(root)
    files.discover(root, (".",), ())
    sub = root / "pkg" / "sub"
    if change == "add":
        (sub / "b.py").write_text("")
    elif change == "delete":
        (sub / "a.py").unlink()
    elif change == "rename":
        (sub / "a.py").rename(sub / "c.py")
    elif change == "folder":
        (root / "pkg" / "new").mkdir()
        (root / "pkg" / "new" / "d.py").write_text("")
    else:  # a file replaced by a folder of the same name
        (sub / "a.py").unlink()
        (sub / "a.py").mkdir()
    again = files.discover(root, (".",), ())
    files._WALKS.clear()
    assert _rels(again) == _rels(files.discover(root, (".",), ()))
    assert len(walks) == 3


def test_a_tree_changed_lately_is_walked_every_time(
    tmp_path: Path, walks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder changed within RACY_NS may change again in the same tick unseen."""
    root = _tree(tmp_path)
    # "lately" for both discoveries, however long a busy machine takes between the
    # tree's change and the second one (10 ms was not always enough under load)
    monkeypatch.setattr(files, "RACY_NS", 60 * 10**9)
    files.discover(root, (".",), ())
    files.discover(root, (".",), ())
    assert len(walks) == 2
    monkeypatch.setattr(files, "RACY_NS", 10_000_000)  # the window `walks` set
    _settled(root)
    files.discover(root, (".",), ())
    files.discover(root, (".",), ())
    assert len(walks) == 3


def test_a_link_whose_target_changes_kind_is_listed_as_a_walk_lists_it(
    tmp_path: Path, walks: list[str]
) -> None:
    root = _tree(tmp_path)
    target = tmp_path / "target"
    target.write_text("")
    os.symlink(target, root / "pkg" / "link.py")
    _settled(root)
    assert "pkg/link.py" in _rels(files.discover(root, (".",), ()))
    target.unlink()
    target.mkdir()  # the link's folder is unchanged; what it points at is a folder now
    assert "pkg/link.py" not in _rels(files.discover(root, (".",), ()))
