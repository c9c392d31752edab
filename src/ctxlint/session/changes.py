"""What git says of the tree: the files a commit holds (--staged) and the
files changed since a ref (--changed-since), relative to the root."""

from __future__ import annotations

from pathlib import Path

from ctxlint.core.errors import ConfigError
from ctxlint.core.gitcmd import run_git


def tracked_files(root: Path) -> set[str]:
    """The files git's index holds under `root` (tracked or staged: what a commit
    holds; pre-commit sets unstaged edits aside), relative to root."""
    try:
        done = run_git(root, "ls-files", "-z", "--cached")
    except OSError as exc:
        raise ConfigError(f"--staged needs git: {exc}") from None
    if done.returncode != 0:
        raise ConfigError(f"--staged needs a git work tree: {root} is not inside one")
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def changed_files(root: Path, ref: str) -> set[str]:
    """Files changed since `ref` (committed or not) plus untracked ones, relative to root."""

    def git(*argv: str) -> list[str] | None:
        try:
            done = run_git(root, *argv)
        except OSError as exc:
            raise ConfigError(f"--changed-since needs git: {exc}") from None
        if done.returncode != 0:
            return None
        return [
            line for line in done.stdout.decode("utf-8", "surrogateescape").splitlines() if line
        ]

    if git("rev-parse", "--is-inside-work-tree") != ["true"]:
        raise ConfigError(f"--changed-since needs a git work tree: {root} is not inside one")
    # a ref that looks like an option would be read as one (`--output=FILE` writes a file)
    commit = (
        None
        if ref.startswith("-")
        else git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    )
    if not commit:
        top = git("rev-parse", "--show-toplevel")  # the repository, not the project's folder
        raise ConfigError(
            f"--changed-since {ref}: not a commit in the repository at {top[0] if top else root}"
        )
    changed = git(
        "diff", "--no-ext-diff", "--no-textconv", "--name-only", "--relative", commit[0], "--"
    )
    untracked = git("ls-files", "--others", "--exclude-standard")
    if changed is None or untracked is None:
        raise ConfigError(f"--changed-since {ref}: git could not list the changed files")
    return set(changed) | set(untracked)
