"""git, run on a tree ctxlint checks without letting that tree run commands.

A checked tree can bring its own `.git/config` and `.gitattributes` (an unpacked
archive, a pull request's checkout), and git obeys them. Several settings name
programs git starts: `core.fsmonitor` on every index read, filter drivers
(`clean` when work-tree files are compared, `smudge` when `git archive` writes
them), textconv and external diff drivers, gpg for `log.showSignature`, hooks.
ctxlint promises never to execute what it checks, so every git call it makes
goes through `git_argv`/`run_git`: command-line `-c` settings outrank every
config file, and each of those programs is switched off there. The user's own
global and system config stay in force (`safe.directory`, a global excludes
file); only what the tree can carry is overridden.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

# Settings a repository's config could use to start a program, switched off.
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.useBuiltinFSMonitor=false",
    f"core.hooksPath={os.devnull}",
    "log.showSignature=false",
)
_DRIVER_KEYS = ("clean", "smudge", "process")


def git_env() -> dict[str, str]:
    """The environment for git: no pager, no prompt, and no optional index
    writes (a linter leaves the checked repository's index as it found it)."""
    env = dict(os.environ)
    env.update(GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    env.pop("GIT_EXTERNAL_DIFF", None)
    return env


def _safe_options() -> list[str]:
    return ["--no-pager", *(arg for item in SAFE_CONFIG for arg in ("-c", item))]


@functools.lru_cache(maxsize=64)
def _filter_overrides(cwd: str) -> tuple[str, ...]:
    """`-c filter.NAME.clean=` (and smudge, process) for every filter driver the
    config seen from `cwd` defines: a driver with no command is no filter.
    Reading config runs nothing, so this look-up is itself safe."""
    try:
        done = subprocess.run(
            ["git", *_safe_options(), "-C", cwd, "config", "-z", "--get-regexp", r"^filter\."],
            capture_output=True,
            env=git_env(),
            check=False,
        )
    except OSError:
        return ()
    names = set()
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key = item.split("\n", 1)[0]
        name, _, setting = key.rpartition(".")
        if name.startswith("filter.") and setting in (*_DRIVER_KEYS, "required"):
            names.add(name)
    overrides: list[str] = []
    for name in sorted(names):
        for setting in _DRIVER_KEYS:
            overrides += ["-c", f"{name}.{setting}="]
        overrides += ["-c", f"{name}.required=false"]
    return tuple(overrides)


def git_argv(cwd: Path | str, *args: str) -> list[str]:
    """The command line for `git ARGS` run in `cwd`, hardened as described above."""
    return ["git", *_safe_options(), *_filter_overrides(str(cwd)), "-C", str(cwd), *args]


def run_git(cwd: Path | str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run hardened git in `cwd`, output captured; OSError if git cannot start."""
    return subprocess.run(git_argv(cwd, *args), capture_output=True, env=git_env(), check=False)
