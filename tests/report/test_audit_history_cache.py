"""`audit --history` keeps each commit's counts (report/audit/history_memo.py)
and unpacks only what a check reads: run again, or after a new commit, it
checks only the commits it has not counted, and its points are those of a
--no-cache run."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_audit import STEPS, audit_json, git, make_codebase, scripted_history

from ctxlint.report.audit import history


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The trees the history checks (one per commit not counted from the cache)."""
    trees: list[Path] = []
    real = history._count

    def counting(setup, root, *args):  # type: ignore[no-untyped-def]
        trees.append(root)
        files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        assert files and all(f.endswith(".py") for f in files), files  # nothing else unpacked
        return real(setup, root, *args)

    monkeypatch.setattr(history, "_count", counting)
    return trees


def points(project: Path, n: int, *args: str, cache: bool) -> list[tuple[str, int, dict]]:
    doc = audit_json("--history", str(n), *args, cwd=project, cache=cache)
    return [(p["subject"], p["total"], p["counts"]) for p in doc["history"]]


def test_history_again_and_after_a_new_commit_checks_only_the_new_one(
    tmp_path: Path, checked: list[Path]
) -> None:
    project = scripted_history(tmp_path / "repo", fixes=2)
    first = points(project, 3, cache=True)
    assert len(checked) == 3 and [t for _, t, _ in first] == [len(STEPS) - k for k in (0, 1, 2)]
    checked.clear()
    assert points(project, 3, cache=True) == first and checked == []
    make_codebase(project, fixed=3)
    git(project.parent, "add", "-A")
    git(project.parent, "commit", "-q", "-m", "fix step 3", day=2)
    after = points(project, 3, cache=True)
    assert len(checked) == 1  # the new commit only
    assert after == [*first[1:], ("fix step 3", len(STEPS) - 3, after[-1][2])]
    checked.clear()
    assert after == points(project, 3, cache=False)
    # another selection is another key: counted afresh, as --no-cache counts it
    checked.clear()
    rule = STEPS[0][1]
    assert points(project, 2, "--select", rule, cache=True) == points(
        project, 2, "--select", rule, cache=False
    )


def test_a_python_link_or_no_python_file_unpacks_the_whole_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "no python")
    assert history.checked_paths(repo, "HEAD", "", (".",), None) is None
    (repo / "a.py").write_text("A = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "python", day=2)
    specs, folders = history.checked_paths(repo, "HEAD", "", (".",), None)  # type: ignore[misc]
    assert specs == [":(glob)**/*.py"] and folders == []
    (repo / "b.py").symlink_to("notes.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link", day=3)
    assert history.checked_paths(repo, "HEAD", "", (".",), None) is None
