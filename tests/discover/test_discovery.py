"""Which files are checked, and their module names: .gitignore in a git
checkout, exclude globs, skipped folders, src roots."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import run_engine, write

from ctxlint.discover.files import discover, module_name

READ = "from specrt.context import get_server_args\n\nX = get_server_args().tp_size\n"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _paths(root: Path) -> list[str]:
    return sorted({f.path for f in run_engine(root).findings})


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignored_files_are_not_checked(project: Path) -> None:
    """In a git checkout, ignored files are skipped; untracked ones are checked;
    a tracked file deleted from the work tree is not an error."""
    write(
        project,
        {
            "app/real.py": READ,
            "app/untracked.py": READ,
            "app/generated/out.py": READ,
            "app/schema_pb2.py": READ,
            "app/gone.py": READ,
        },
    )
    (project / ".gitignore").write_text("app/generated/\n*_pb2.py\n")
    _git(project, "init", "-q")
    _git(project, "add", "app/real.py", "app/gone.py", "specrt", "pyproject.toml")
    (project / "app" / "gone.py").unlink()
    out = run_engine(project)
    assert out.errors == []
    assert sorted({f.path for f in out.findings}) == ["app/real.py", "app/untracked.py"]


def test_without_git_the_tree_is_walked_minus_tool_folders(project: Path) -> None:
    """Outside git every .py is found, except virtualenvs, caches and egg-info."""
    write(
        project,
        {
            "app/a.py": READ,
            ".venv/lib/site.py": READ,
            "app/__pycache__/x.py": READ,
            "pkg.egg-info/y.py": READ,
            "app/notes.txt": READ,
        },
    )
    assert _paths(project) == ["app/a.py"]


def test_exclude_globs(project: Path) -> None:
    """`exclude` globs (gitignore syntax) drop files from every rule."""
    write(project, {"app/a.py": READ, "app/vendored/b.py": READ, "app/c_test.py": READ})
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'exclude = ["app/vendored/**", "*_test.py"]\n')
    assert _paths(project) == ["app/a.py"]


def test_src_layout_module_names(tmp_path: Path, project: Path) -> None:
    """With `src = ["src"]`, modules are named from below src/: the runtime module
    is found there and relative imports resolve; paths stay project-relative."""
    root = tmp_path / "srclayout"
    (root / "src").mkdir(parents=True)
    shutil.copytree(project / "specrt", root / "src" / "specrt")
    (root / "pyproject.toml").write_text(
        (project / "pyproject.toml")
        .read_text()
        .replace('"specrt/record.py"', '"src/specrt/record.py"')
        .replace("[tool.ctxlint]\n", '[tool.ctxlint]\nsrc = ["src"]\n')
    )
    write(
        root,
        {
            "src/app/a.py": READ,
            "src/specrt/user.py": "from .context import get_server_args\nY = get_server_args().dp_size\n",
            "scripts/outside.py": READ,  # not under a src root
        },
    )
    modules = {f.rel: f.module for f in discover(root, ("src",), ())}
    assert modules["src/specrt/context.py"] == "specrt.context"
    assert modules["src/app/__init__.py"] == "app"
    assert "scripts/outside.py" not in modules
    assert _paths(root) == ["src/app/a.py", "src/specrt/user.py"]


@pytest.mark.parametrize(
    ("rel", "roots", "module"),
    [
        ("a/b.py", ["."], "a.b"),
        ("a/__init__.py", ["."], "a"),
        ("src/a/b.py", ["src", "."], "a.b"),
        ("src/a/b.py", [".", "src"], "a.b"),
        ("lib/a.py", ["src", "."], "lib.a"),
        ("src/pkg/sub/m.py", ["src", "src/pkg"], "sub.m"),
    ],
)
def test_module_name_uses_the_deepest_root(rel: str, roots: list[str], module: str) -> None:
    """The deepest src root holding a file decides its module name."""
    assert module_name(rel, roots) == module


def test_an_ignored_tree_inside_a_checkout_is_walked_not_skipped(tmp_path: Path) -> None:
    """An unpacked wheel under a gitignored cache folder is still a tree to check."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("cache/\n")
    (tmp_path / "cache" / "pkg").mkdir(parents=True)
    (tmp_path / "cache" / "pkg" / "mod.py").write_text("x = 1\n")
    assert [f.rel for f in discover(tmp_path / "cache", (".",), ())] == ["pkg/mod.py"]
    assert discover(tmp_path, (".",), ()) == []  # from the checkout, git's view stands
