"""The real `pre-commit` running this repository's `ctxlint` hook on a temporary repo.

pre-commit clones the hook repository at `rev`, so the hook runs ctxlint as
committed at this checkout's HEAD (uncommitted edits are not seen). Building
the hook's virtualenv installs libcst, rich and pathspec from PyPI: one
PRE_COMMIT_HOME is shared by the module so that happens once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "specrt"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

APP = """\
from specrt.context import get_parallel


def tensor_parallel_size() -> int:
    return get_parallel().tp_size
"""

BAD = """\
from specrt.context import get_server_args


def tensor_parallel_size() -> int:
    return get_server_args().tp_size
"""


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    for key in ("PYTHONPATH", "VIRTUAL_ENV"):  # the hook must use its own environment
        env.pop(key, None)
    return env


def _pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        env=_env(home),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _make_repo(root: Path) -> Path:
    """A git repo in the design's shape: the specrt runtime plus an app package."""
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "service.py").write_text(APP)
    rev = _git(REPO, "rev-parse", "HEAD")
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {REPO.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: ctxlint\n"
    )
    _git(root, "init", "--quiet")
    _git(root, "add", ".")
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PRE_COMMIT_HOME with the hook environment built once (skip only if the build fails)."""
    if subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True
    ).returncode:
        pytest.skip("not a git checkout: pre-commit needs a committed hook repository")
    if not (REPO / ".pre-commit-hooks.yaml").is_file():
        pytest.fail(".pre-commit-hooks.yaml is missing")
    home = tmp_path_factory.mktemp("pre-commit-home")
    repo = _make_repo(tmp_path_factory.mktemp("install") / "repo")
    start = time.perf_counter()
    out = _pre_commit(repo, home, "install-hooks")
    if out.returncode != 0:
        text = out.stdout + out.stderr
        if "Installing environment" in text or "CalledProcessError" in text:
            log = home / "pre-commit.log"
            detail = log.read_text()[-1500:] if log.is_file() else text[-1500:]
            pytest.skip(f"pre-commit could not build the hook environment:\n{detail}")
        pytest.fail(f"pre-commit install-hooks failed:\n{text}")
    print(f"\npre-commit hook environment built in {time.perf_counter() - start:.1f} s")
    return home


@pytest.mark.slow  # builds the hook's virtualenv from PyPI: about a minute
def test_hook_passes_clean_then_fails_on_a_seed_read(home: Path, tmp_path: Path) -> None:
    repo = _make_repo(tmp_path / "repo")

    clean = _pre_commit(repo, home, "run", "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "ctxlint" in clean.stdout and "Passed" in clean.stdout

    # the cache lives in the checked repository and keeps itself out of git
    cache = repo / ".ctxlint_cache"
    assert cache.is_dir()
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert ".ctxlint_cache" not in _git(repo, "status", "--porcelain", "--untracked-files=all")

    start = time.perf_counter()
    warm = _pre_commit(repo, home, "run", "--all-files")
    took = time.perf_counter() - start
    assert warm.returncode == 0, warm.stdout + warm.stderr
    print(f"\nwarm `pre-commit run --all-files` (ctxlint hook): {took:.2f} s")

    (repo / "app" / "bad.py").write_text(BAD)
    _git(repo, "add", "app/bad.py")
    bad = _pre_commit(repo, home, "run", "--all-files")
    text = bad.stdout + bad.stderr
    assert bad.returncode == 1, text
    assert "CTX101" in text and "app/bad.py" in text, text
    assert "Failed" in text


def test_hook_definition_is_whole_program() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = (h for h in hooks if h["id"] == "ctxlint")
    assert hook["entry"].split()[:2] == ["ctxlint", "check"] and "--strict" in hook["entry"]
    # what the commit holds is reported, not an untracked file beside it
    assert "--staged" in hook["entry"].split()
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False
    assert hook["require_serial"] is True
    # every commit: one that only deletes a module, or only edits the baseline or
    # the config, changes what passes (pre-commit hands a hook no deleted files)
    assert hook["always_run"] is True
    assert set(hook["types_or"]) == {"python", "pyi", "toml", "json"}
    assert "types" not in hook


def _commit_all(repo: Path) -> None:
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")


def _ctxlint(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_staged_reports_what_the_index_holds_not_untracked_files(tmp_path: Path) -> None:
    repo = _make_repo(tmp_path / "repo")
    (repo / "app" / "pinned.py").write_text(BAD)
    pinned = _ctxlint(repo, "baseline", "update", "--allow-growth", "--reason=legacy")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    _commit_all(repo)

    # an untracked module with a new finding: the whole tree fails, the index passes,
    # and the untracked file still took part in the run (it is checked, not reported)
    (repo / "app" / "scratch.py").write_text(BAD)
    whole = _ctxlint(repo, "check", "--strict")
    assert whole.returncode == 1 and "app/scratch.py" in whole.stdout, whole.stdout
    staged = _ctxlint(repo, "check", "--strict", "--staged")
    assert staged.returncode == 0, staged.stdout + staged.stderr
    assert "scratch.py" not in staged.stdout
    files = len([p for p in repo.rglob("*.py") if ".ctxlint_cache" not in p.parts])
    assert f"checked {files} files under . (reporting on {files - 1})" in staged.stdout, (
        staged.stdout
    )

    # staged, it is part of the commit: reported
    _git(repo, "add", "app/scratch.py")
    added = _ctxlint(repo, "check", "--strict", "--staged")
    assert added.returncode == 1 and "app/scratch.py" in added.stdout, added.stdout
    _git(repo, "rm", "-q", "--cached", "app/scratch.py")

    # a module deleted from the index leaves its baseline entry stale: the baseline
    # is part of the commit, so the stale entry fails it although the path is gone
    _git(repo, "rm", "-q", "app/pinned.py")
    gone = _ctxlint(repo, "check", "--strict", "--staged", "--format", "json")
    assert gone.returncode == 1, gone.stdout + gone.stderr
    assert [s["path"] for s in json.loads(gone.stdout)["stale"]] == ["app/pinned.py"]


def test_staged_outside_git_is_a_config_error(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("__pycache__"))
    out = _ctxlint(project, "check", "--staged")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "--staged needs a git work tree" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow  # real `pre-commit install` and `git commit`
def test_untracked_file_does_not_fail_an_unrelated_commit(home: Path, tmp_path: Path) -> None:
    repo = _make_repo(tmp_path / "repo")
    env = _env(home)
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.com")
    installed = _pre_commit(repo, home, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *identity, "commit", "-m", message],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )

    first = commit("base")
    assert first.returncode == 0, first.stdout + first.stderr

    # a docs-only commit beside an untracked module with a seed read
    (repo / "app" / "scratch.py").write_text(BAD)
    (repo / "NOTES.md").write_text("notes\n")
    _git(repo, "add", "NOTES.md")
    docs = commit("docs")
    text = docs.stdout + docs.stderr
    assert docs.returncode == 0, text
    assert "ctxlint" in text and "Passed" in text, text

    # the same module, staged, is what the commit holds: it fails
    _git(repo, "add", "app/scratch.py")
    bad = commit("scratch")
    text = bad.stdout + bad.stderr
    assert bad.returncode != 0, text
    assert "CTX101" in text and "app/scratch.py" in text, text


@pytest.mark.slow  # real pre-commit on staged files only, as at `git commit`
def test_hook_runs_when_only_the_baseline_or_the_config_is_staged(
    home: Path, tmp_path: Path
) -> None:
    repo = _make_repo(tmp_path / "repo")
    (repo / "app" / "bad.py").write_text(BAD)
    pin = ("baseline", "update", "--allow-growth", "--reason=legacy")
    pinned = subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *pin],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    _commit_all(repo)
    assert _pre_commit(repo, home, "run", "--all-files").returncode == 0

    # a commit that only drops the baseline's entries: the seed read becomes new
    baseline = repo / "ctxlint-baseline.json"
    doc = json.loads(baseline.read_text())
    assert [e["rule"] for e in doc["entries"]] == ["CTX101"]
    doc["entries"] = []
    baseline.write_text(json.dumps(doc, indent=2) + "\n")
    _git(repo, "add", "ctxlint-baseline.json")
    out = _pre_commit(repo, home, "run")  # staged files only
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Skipped" not in text and "CTX101" in text and "app/bad.py" in text, text

    # a commit that only deletes the module with the baselined finding: its entry is
    # stale, and this commit (not the next, unrelated one) is the one that fails
    _git(repo, "checkout", "--", "ctxlint-baseline.json")
    _git(repo, "reset", "-q")
    _git(repo, "rm", "-q", "app/bad.py")
    out = _pre_commit(repo, home, "run")
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Skipped" not in text and "stale" in text, text
    _git(repo, "reset", "-q")
    _git(repo, "checkout", "--", "app/bad.py")

    # a commit that only edits [tool.ctxlint]: pointing at a baseline that pins nothing
    config = repo / "pyproject.toml"
    config.write_text(config.read_text() + 'baseline = "empty-baseline.json"\n')
    _git(repo, "add", "pyproject.toml")
    out = _pre_commit(repo, home, "run")
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Skipped" not in text and "CTX101" in text, text


@pytest.mark.slow  # real pre-commit from the repository's root, the project in a subfolder
def test_hook_on_a_project_in_a_subfolder_says_which_args_then_checks_it(
    home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    project = _make_repo(repo / "services" / "server")  # its own .pre-commit-config.yaml goes
    shutil.rmtree(project / ".git")
    hook = (project / ".pre-commit-config.yaml").read_text()
    (project / ".pre-commit-config.yaml").unlink()
    (repo / ".pre-commit-config.yaml").write_text(hook)
    _git(repo, "init", "--quiet")
    _git(repo, "add", ".")

    lost = _pre_commit(repo, home, "run")
    text = lost.stdout + lost.stderr
    assert lost.returncode == 1, text
    assert "services/server/pyproject.toml has one" in text, text
    assert "`args: [services/server]`" in text, text

    (repo / ".pre-commit-config.yaml").write_text(hook + "        args: [services/server]\n")
    _git(repo, "add", ".pre-commit-config.yaml")
    clean = _pre_commit(repo, home, "run", "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    (project / "app" / "bad.py").write_text(BAD)
    _git(repo, "add", "services/server/app/bad.py")
    bad = _pre_commit(repo, home, "run")
    text = bad.stdout + bad.stderr
    assert bad.returncode == 1, text
    # the path opens from where pre-commit ran: the repository's root
    assert "  services/server/app/bad.py:5:12  CTX101 seed-read  NEW" in text, text
