"""What a checked tree cannot make ctxlint do (issue 34 N2, N5): write above the
tree through its config's `root`, or read a file outside it through a link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURE, run_cli
from helpers import run_engine, write

SEED_READ = (
    "from specrt.context import get_server_args\n\n\ndef tp() -> int:\n"
    "    return get_server_args().tp_size\n"
)


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _tree(where: Path, root_line: str) -> Path:
    """The specrt project one folder down, its config naming `root`."""
    shutil.copytree(FIXTURE, where)
    config = where / "pyproject.toml"
    config.write_text(
        config.read_text().replace("[tool.ctxlint]\n", f"[tool.ctxlint]\n{root_line}\n")
    )
    return where


def _written_outside(tmp_path: Path, tree: Path) -> list[str]:
    return sorted(
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if not p.is_relative_to(tree) and p.name not in (tree.name,)
    )


@pytest.mark.parametrize(
    "root_line",
    ['root = ".."', 'root = "../../../../.."\ncache-dir = "c"\nbaseline = "b.json"'],
)
@pytest.mark.parametrize("command", [("check",), ("baseline", "update")])
def test_a_root_above_the_tree_is_refused(
    tmp_path: Path, root_line: str, command: tuple[str, ...]
) -> None:
    tree = _tree(tmp_path / "tree", root_line)
    res = run_cli(*command, cwd=tree)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "config key 'root'" in res.stderr and "leads outside" in res.stderr
    assert "Traceback" not in res.stderr
    assert _written_outside(tmp_path, tree) == []
    assert not (tree / ".ctxlint_cache").exists()


def test_a_root_above_the_top_of_a_checkout_is_refused(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", 'root = ".."')
    _git_init(tree)
    res = run_cli("check", cwd=tree)
    assert res.returncode == 2 and f"its git work tree {tree.resolve()}" in res.stderr
    assert _written_outside(tmp_path, tree) == []


def test_a_config_in_a_subfolder_may_name_its_repository_as_root(tmp_path: Path) -> None:
    """examples/legacy_app's layout: the config below the repository it checks."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    config = repo / "pyproject.toml"
    (repo / "tools" / "lint").mkdir(parents=True)
    (repo / "tools" / "lint" / "ctxlint.toml").write_text(
        config.read_text().replace("[tool.ctxlint]\n", '[tool.ctxlint]\nroot = "../.."\n')
    )
    config.unlink()
    write(repo, {"app/seed.py": SEED_READ})
    _git_init(repo)
    res = run_cli("check", "--format", "json", "--config", "tools/lint/ctxlint.toml", cwd=repo)
    assert res.returncode == 1, res.stderr
    assert [f["path"] for f in json.loads(res.stdout)["findings"]] == ["app/seed.py"]
    assert (repo / ".ctxlint_cache").is_dir()
    # the same layout unpacked from an archive (no git): the folder ctxlint runs in
    # bounds it, so it works from the top of the tree and not from below the root
    shutil.rmtree(repo / ".git")
    shutil.rmtree(repo / ".ctxlint_cache")
    assert run_cli("check", "--config", "tools/lint/ctxlint.toml", cwd=repo).returncode == 1
    refused = run_cli("check", "--config", "ctxlint.toml", cwd=repo / "tools" / "lint")
    assert refused.returncode == 2 and "no git work tree holds it" in refused.stderr


def test_the_command_line_names_any_root(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", "")
    config = tmp_path / "elsewhere" / "ctxlint.toml"
    config.parent.mkdir()
    shutil.move(tree / "pyproject.toml", config)
    res = run_cli("check", "--config", str(config), str(tree), cwd=tmp_path)
    assert res.returncode == 0, res.stderr


# -- links out of the tree (N5) -------------------------------------------------------


@pytest.mark.parametrize("git", [False, True], ids=["walked", "git"])
def test_a_py_link_out_of_the_tree_is_not_read(tmp_path: Path, git: bool) -> None:
    tree = _tree(tmp_path / "tree", "")
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'hunter2'\n" + SEED_READ)
    write(tree, {"app/inside.py": SEED_READ})
    os.symlink(secret, tree / "app" / "leak.py")
    os.symlink(tree / "app" / "inside.py", tree / "app" / "alias.py")  # inside: read
    if git:
        _git_init(tree)
    for fmt in ("text", "json", "concise", "sarif"):
        res = run_cli("check", "--format", fmt, "--no-cache", cwd=tree)
        assert "hunter2" not in res.stdout + res.stderr
        assert res.returncode == 2  # a file that cannot be checked, as an unreadable one
    out = json.loads(run_cli("check", "--format", "json", "--no-cache", cwd=tree).stdout)
    assert sorted(f["path"] for f in out["findings"]) == ["app/alias.py", "app/inside.py"]
    (error,) = out["errors"]
    assert error["path"] == "app/leak.py"
    assert "symbolic link out of the project" in error["message"]
    assert str(secret) not in error["message"]  # where it leads is not printed either


def _lock(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """`folder` cannot be listed, as a chmod 000 folder for a user who is not root
    (the suite runs as root in CI, where chmod would not stop the walk)."""
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(folder):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(folder))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unreadable_folder_is_a_per_file_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {"app/locked/mod.py": SEED_READ, "app/seed.py": SEED_READ})
    _lock(monkeypatch, project / "app" / "locked")
    out = run_engine(project)
    assert [(e.path, e.message) for e in out.errors] == [
        ("app/locked/", "cannot read folder: Permission denied")
    ]
    assert [f.path for f in out.findings] == ["app/seed.py"]  # the rest is checked


def test_an_unreadable_folder_outside_the_src_roots_is_no_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = project / "pyproject.toml"
    config.write_text(
        config.read_text().replace(
            "[tool.ctxlint]\n", '[tool.ctxlint]\nsrc = ["app", "."]\nexclude = ["notes/**"]\n'
        )
    )
    write(project, {"app/seed.py": SEED_READ, "notes/x.py": ""})
    _lock(monkeypatch, project / "notes")
    out = run_engine(project)
    assert out.errors == [] and [f.path for f in out.findings] == ["app/seed.py"]
